# A small U-Net decoder step that concatenates the upsampled features with the
# encoder skip connection. With an odd-sized input the pooled/upsampled map is
# one pixel smaller than the skip, and torch.cat fails (no crop / pad).
import torch
import torch.nn as nn


def double_conv(in_ch, out_ch):
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(out_ch, out_ch, 3, padding=1), nn.ReLU(inplace=True),
    )


class MiniUNet(nn.Module):
    def __init__(self, in_ch=1, base=16, n_classes=2):
        super().__init__()
        self.enc1 = double_conv(in_ch, base)
        self.enc2 = double_conv(base, base * 2)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ConvTranspose2d(base * 2, base, kernel_size=2, stride=2)
        self.dec1 = double_conv(base * 2, base)
        self.head = nn.Conv2d(base, n_classes, 1)

    def forward(self, x):
        s1 = self.enc1(x)                 # H, W
        b = self.enc2(self.pool(s1))      # H//2, W//2
        u = self.up(b)                    # 2*(H//2)
        merged = torch.cat([u, s1], dim=1)  # BUG: u is 2*(H//2) high, s1 is H high (odd H)
        return self.head(self.dec1(merged))


if __name__ == "__main__":
    model = MiniUNet()
    scan = torch.randn(2, 1, 65, 64)
    mask = model(scan)
    print(mask.shape)
