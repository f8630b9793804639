"""Convolutions, norms and a transposed convolution, called on images."""

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.gn = nn.GroupNorm(4, 32)
        self.act = nn.PReLU()

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        return self.act(self.gn(self.conv2(x)))


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.up = nn.ConvTranspose2d(32, 8, kernel_size=2, stride=2)
        self.out = nn.Conv2d(8, 3, 1)
        self.up.requires_grad_(False)

    def forward(self, x):
        return self.out(self.up(self.encoder(x)))


if __name__ == "__main__":
    net = AutoEncoder()
    images = torch.randn(2, 3, 32, 32)
    recon = net(images)
