# Single-image super-resolution: ESPCN (sub-pixel convolution with
# nn.PixelShuffle) and the older SRCNN, with MSE loss and a PSNR metric.
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class ESPCN(nn.Module):
    def __init__(self, upscale_factor=3, num_channels=1, feature_dim=64):
        super().__init__()
        self.first_part = nn.Sequential(
            nn.Conv2d(num_channels, feature_dim, kernel_size=5, padding=5 // 2),
            nn.Tanh(),
            nn.Conv2d(feature_dim, feature_dim // 2, kernel_size=3, padding=3 // 2),
            nn.Tanh(),
        )
        self.last_part = nn.Sequential(
            nn.Conv2d(feature_dim // 2, num_channels * (upscale_factor ** 2), kernel_size=3, padding=1),
            nn.PixelShuffle(upscale_factor),
        )

    def forward(self, x):
        x = self.first_part(x)
        x = self.last_part(x)
        return x


class SRCNN(nn.Module):
    """SRCNN works on a bicubically pre-upsampled image (9-1-5 config)."""

    def __init__(self, num_channels=1):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channels, 64, kernel_size=9, padding=9 // 2)
        self.conv2 = nn.Conv2d(64, 32, kernel_size=5, padding=5 // 2)
        self.conv3 = nn.Conv2d(32, num_channels, kernel_size=5, padding=5 // 2)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.conv3(x)
        return x


def psnr(sr, hr, max_val=1.0):
    mse = F.mse_loss(sr, hr, reduction="none").flatten(1).mean(dim=1)
    return 10.0 * torch.log10(max_val ** 2 / mse)


def rgb_to_y(img):
    r, g, b = img.split(1, dim=1)
    return 16.0 / 255.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0


def manual_pixel_shuffle(x, r):
    b, c, h, w = x.shape
    out_c = c // (r * r)
    x = x.reshape(b, out_c, r, r, h, w)
    x = x.permute(0, 1, 4, 2, 5, 3)
    return x.reshape(b, out_c, h * r, w * r)


if __name__ == "__main__":
    scale = 3
    lr_rgb = torch.rand(4, 3, 32, 32)
    hr_rgb = torch.rand(4, 3, 96, 96)
    lr_y = rgb_to_y(lr_rgb)
    hr_y = rgb_to_y(hr_rgb)

    espcn = ESPCN(upscale_factor=scale, num_channels=1)
    sr = espcn(lr_y)
    criterion = nn.MSELoss()
    loss = criterion(sr, hr_y)
    loss.backward()
    scores = psnr(sr.clamp(0.0, 1.0), hr_y)
    mean_psnr = scores.mean()

    feats = espcn.first_part(lr_y)
    sub = espcn.last_part[0](feats)
    sr_manual = manual_pixel_shuffle(sub, scale)

    srcnn = SRCNN(num_channels=1)
    bicubic = F.interpolate(lr_y, scale_factor=scale, mode="bicubic", align_corners=False)
    sr2 = srcnn(bicubic)
    loss2 = criterion(sr2, hr_y)
    print(sr.shape, sr_manual.shape, mean_psnr, sr2.shape, loss2, math.log10(255.0))
