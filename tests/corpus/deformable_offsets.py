import torch
import torch.nn as nn
import torch.nn.functional as F


def make_base_grid(height, width, device=None, dtype=torch.float32):
    ys = torch.arange(height, device=device, dtype=dtype)
    xs = torch.arange(width, device=device, dtype=dtype)
    grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack((grid_x, grid_y), dim=0)  # (2, H, W), x first like grid_sample


def normalize_grid(coords, height, width):
    # coords: (B, H, W, 2) in pixel units -> [-1, 1]
    x = 2.0 * coords[..., 0] / max(width - 1, 1) - 1.0
    y = 2.0 * coords[..., 1] / max(height - 1, 1) - 1.0
    return torch.stack((x, y), dim=-1)


class OffsetSampler(nn.Module):
    """Predicts a dense (dx, dy) field for n_groups channel groups and resamples the input."""

    def __init__(self, channels, n_groups=4, offset_scale=2.0):
        super().__init__()
        self.n_groups = n_groups
        self.offset_scale = offset_scale
        self.offset_conv = nn.Conv2d(channels, 2 * n_groups, kernel_size=3, padding=1)
        nn.init.zeros_(self.offset_conv.weight)
        nn.init.zeros_(self.offset_conv.bias)

    def forward(self, x):
        b, c, h, w = x.shape
        g = self.n_groups
        offsets = self.offset_conv(x).tanh() * self.offset_scale  # (B, 2g, H, W)
        offsets = offsets.view(b * g, 2, h, w)
        base = make_base_grid(h, w, device=x.device, dtype=x.dtype)
        coords = base.unsqueeze(0) + offsets  # (B*g, 2, H, W)
        coords = coords.permute(0, 2, 3, 1)
        grid = normalize_grid(coords, h, w)
        x_groups = x.reshape(b * g, c // g, h, w)
        sampled = F.grid_sample(x_groups, grid, mode="bilinear", padding_mode="zeros", align_corners=True)
        sampled = sampled.view(b, c, h, w)
        return sampled, offsets


class DeformableBlock(nn.Module):
    def __init__(self, in_channels, out_channels, n_groups=4, stride=1):
        super().__init__()
        self.sampler = OffsetSampler(in_channels, n_groups)
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x):
        sampled, offsets = self.sampler(x)
        out = self.bn(self.conv(sampled))
        out = F.relu(out + self.shortcut(x))
        return out


class DeformNet(nn.Module):
    def __init__(self, in_chans=3, widths=(16, 32, 64), num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_chans, widths[0], 3, padding=1), nn.ReLU(inplace=True))
        layers = []
        prev = widths[0]
        for i, w in enumerate(widths):
            layers.append(DeformableBlock(prev, w, n_groups=4, stride=1 if i == 0 else 2))
            prev = w
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(prev, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.layers(x)
        x = self.pool(x).flatten(1)
        return self.fc(x)


def warp_with_flow(img, flow):
    # classic optical-flow warp: flow (B, 2, H, W) in pixels
    b, _, h, w = img.shape
    base = make_base_grid(h, w, dtype=img.dtype).unsqueeze(0).expand(b, -1, -1, -1)
    vgrid = (base + flow).permute(0, 2, 3, 1)
    vgrid = normalize_grid(vgrid, h, w)
    return F.grid_sample(img, vgrid, align_corners=True)


if __name__ == "__main__":
    x = torch.randn(2, 16, 20, 24)
    sampler = OffsetSampler(16, n_groups=4)
    sampled, offsets = sampler(x)
    base_grid = make_base_grid(20, 24)
    block = DeformableBlock(16, 32, n_groups=4, stride=2)
    y = block(x)
    model = DeformNet()
    images = torch.randn(2, 3, 32, 32)
    logits = model(images)
    flow = torch.randn(2, 2, 32, 32)
    warped = warp_with_flow(images, flow)
