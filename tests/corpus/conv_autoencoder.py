# Convolutional autoencoder for 64x64 images: strided conv encoder, a linear
# bottleneck, ConvTranspose2d decoder, and a "resize-conv" decoder variant that
# uses F.interpolate instead of transposed convolutions.
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_block(in_c, out_c):
    return nn.Sequential(
        nn.Conv2d(in_c, out_c, kernel_size=4, stride=2, padding=1),
        nn.BatchNorm2d(out_c),
        nn.LeakyReLU(0.2, inplace=True),
    )


def deconv_block(in_c, out_c):
    return nn.Sequential(
        nn.ConvTranspose2d(in_c, out_c, kernel_size=4, stride=2, padding=1),
        nn.BatchNorm2d(out_c),
        nn.ReLU(inplace=True),
    )


class Encoder(nn.Module):
    def __init__(self, in_channels=3, latent_dim=128):
        super().__init__()
        self.features = nn.Sequential(
            conv_block(in_channels, 32),   # 32x32
            conv_block(32, 64),            # 16x16
            conv_block(64, 128),           # 8x8
            conv_block(128, 256),          # 4x4
        )
        self.fc = nn.Linear(256 * 4 * 4, latent_dim)

    def forward(self, x):
        h = self.features(x)
        h = torch.flatten(h, start_dim=1)
        return self.fc(h)


class Decoder(nn.Module):
    def __init__(self, out_channels=3, latent_dim=128):
        super().__init__()
        self.fc = nn.Linear(latent_dim, 256 * 4 * 4)
        self.deconvs = nn.Sequential(
            deconv_block(256, 128),
            deconv_block(128, 64),
            deconv_block(64, 32),
        )
        self.final = nn.ConvTranspose2d(32, out_channels, kernel_size=4, stride=2, padding=1)

    def forward(self, z):
        h = self.fc(z).view(-1, 256, 4, 4)
        h = self.deconvs(h)
        return torch.sigmoid(self.final(h))


class ResizeConvDecoder(nn.Module):
    def __init__(self, out_channels=3, latent_dim=128):
        super().__init__()
        self.fc = nn.Linear(latent_dim, 256 * 4 * 4)
        self.conv1 = nn.Conv2d(256, 128, 3, padding=1)
        self.conv2 = nn.Conv2d(128, 64, 3, padding=1)
        self.conv3 = nn.Conv2d(64, out_channels, 3, padding=1)

    def forward(self, z):
        h = self.fc(z).reshape(z.size(0), 256, 4, 4)
        h = F.interpolate(h, scale_factor=4, mode="nearest")           # 16x16
        h = F.relu(self.conv1(h))
        h = F.interpolate(h, size=(32, 32), mode="bilinear", align_corners=False)
        h = F.relu(self.conv2(h))
        h = F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=False)  # 64x64
        return torch.sigmoid(self.conv3(h))


class AutoEncoder(nn.Module):
    def __init__(self, channels=3, latent_dim=128, resize_conv=False):
        super().__init__()
        self.encoder = Encoder(channels, latent_dim)
        self.decoder = ResizeConvDecoder(channels, latent_dim) if resize_conv else Decoder(channels, latent_dim)

    def forward(self, x):
        z = self.encoder(x)
        recon = self.decoder(z)
        return recon, z


if __name__ == "__main__":
    ae = AutoEncoder(channels=3, latent_dim=64)
    x = torch.rand(8, 3, 64, 64)
    recon, z = ae(x)
    loss = F.binary_cross_entropy(recon, x)

    ae2 = AutoEncoder(channels=1, latent_dim=32, resize_conv=True)
    g = torch.rand(5, 1, 64, 64)
    recon2, z2 = ae2(g)
    err = (recon2 - g).pow(2).mean(dim=(1, 2, 3))
    print(recon.shape, z.shape, recon2.shape, err.shape)
