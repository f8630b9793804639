# PixelCNN with masked convolutions: MaskedConv2d subclasses nn.Conv2d and
# keeps its mask as a registered buffer that is multiplied into the weight in
# forward (F.conv2d with self.weight * self.mask). Mask A (first layer)
# hides the centre pixel, mask B keeps it; residual blocks; the head gives
# 256-way logits per sub-pixel reshaped to [B, 256, C, H, W].
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert mask_type in ("A", "B")
        self.register_buffer("mask", torch.ones_like(self.weight))
        _, _, kh, kw = self.weight.shape
        self.mask[:, :, kh // 2, kw // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, kh // 2 + 1:] = 0

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, self.stride,
                        self.padding, self.dilation, self.groups)


class ResidualBlock(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.net = nn.Sequential(
            nn.ReLU(), nn.Conv2d(2 * h, h, 1),
            nn.ReLU(), MaskedConv2d("B", h, h, 3, padding=1),
            nn.ReLU(), nn.Conv2d(h, 2 * h, 1),
        )

    def forward(self, x):
        return x + self.net(x)


class PixelCNN(nn.Module):
    def __init__(self, in_channels=3, h=32, n_blocks=4, n_levels=256):
        super().__init__()
        self.c, self.levels = in_channels, n_levels
        self.inp = MaskedConv2d("A", in_channels, 2 * h, 7, padding=3)
        self.blocks = nn.ModuleList(ResidualBlock(h) for _ in range(n_blocks))
        self.out = nn.Sequential(
            nn.ReLU(), MaskedConv2d("B", 2 * h, 2 * h, 1),
            nn.ReLU(), MaskedConv2d("B", 2 * h, in_channels * n_levels, 1),
        )

    def forward(self, x):
        B, C, H, W = x.shape
        x = x / (self.levels - 1) * 2 - 1
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        logits = self.out(h)
        return logits.view(B, self.levels, C, H, W)

    def nll(self, x_int):
        logits = self(x_int.float())
        return F.cross_entropy(logits, x_int, reduction="none").mean(dim=(1, 2, 3))

    @torch.no_grad()
    def sample(self, n, size):
        x = torch.zeros(n, self.c, size, size)
        for i in range(2):
            for j in range(2):
                logits = self(x)[:, :, :, i, j]               # [n, 256, C]
                probs = logits.permute(0, 2, 1).softmax(dim=-1)
                pix = torch.multinomial(probs.reshape(-1, self.levels), 1)
                x[:, :, i, j] = pix.view(n, self.c).float()
        return x


if __name__ == "__main__":
    model = PixelCNN(in_channels=3, h=16, n_blocks=3)
    imgs = torch.randint(0, 256, (2, 3, 12, 12))
    logits = model(imgs.float())
    loss = F.cross_entropy(logits, imgs)
    per_image = model.nll(imgs)
    bits_per_dim = per_image / (3 * 12 * 12) / torch.log(torch.tensor(2.0))
    gray = PixelCNN(in_channels=1, h=8, n_blocks=1, n_levels=4)
    binary = torch.randint(0, 4, (5, 1, 9, 7))
    gray_logits = gray(binary.float())
    samples = gray.sample(3, 6)
    conv_a = MaskedConv2d("A", 1, 4, 5, padding=2)
    mask_a = conv_a.mask
    feat = conv_a(torch.randn(1, 1, 8, 8))
