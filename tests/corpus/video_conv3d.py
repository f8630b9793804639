# Video classification on clips laid out as [B, C, T, H, W]: a Conv3d stem
# with spatial stride only, R(2+1)D blocks that factorise a 3x3x3 conv into a
# (1, 3, 3) spatial conv and a (3, 1, 1) temporal conv with the mid-channel
# count chosen to match parameter budgets, temporal pooling, a frame-wise 2D
# feature path via reshape of [B*T, C, H, W], and late fusion.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2Plus1D(nn.Sequential):
    def __init__(self, in_planes, out_planes, stride=1):
        mid = (in_planes * out_planes * 3 * 3 * 3) // (in_planes * 3 * 3 + 3 * out_planes)
        super().__init__(
            nn.Conv3d(in_planes, mid, kernel_size=(1, 3, 3), stride=(1, stride, stride), padding=(0, 1, 1), bias=False),
            nn.BatchNorm3d(mid),
            nn.ReLU(inplace=True),
            nn.Conv3d(mid, out_planes, kernel_size=(3, 1, 1), stride=(stride, 1, 1), padding=(1, 0, 0), bias=False),
        )


class R2Plus1DBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Sequential(Conv2Plus1D(inplanes, planes, stride), nn.BatchNorm3d(planes), nn.ReLU(inplace=True))
        self.conv2 = nn.Sequential(Conv2Plus1D(planes, planes), nn.BatchNorm3d(planes))
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(
                nn.Conv3d(inplanes, planes, kernel_size=1, stride=stride, bias=False), nn.BatchNorm3d(planes)
            )

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        out = self.conv2(self.conv1(x))
        return F.relu(out + residual)


class VideoNet(nn.Module):
    def __init__(self, num_classes=10, widths=(16, 32, 64)):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv3d(3, widths[0], kernel_size=(3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3), bias=False),
            nn.BatchNorm3d(widths[0]),
            nn.ReLU(inplace=True),
        )
        blocks = [R2Plus1DBlock(widths[0], widths[0])]
        for cin, cout in zip(widths[:-1], widths[1:]):
            blocks.append(R2Plus1DBlock(cin, cout, stride=2))
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward_features(self, clip):
        x = self.stem(clip)
        return self.blocks(x)

    def forward(self, clip):
        x = self.forward_features(clip)
        x = self.pool(x).flatten(1)
        return self.fc(x)


class FrameEncoder(nn.Module):
    """2D CNN applied per frame, then temporal average / max pooling."""

    def __init__(self, out_dim=64):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, out_dim, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )

    def forward(self, clip):
        b, c, t, h, w = clip.shape
        frames = clip.transpose(1, 2).reshape(b * t, c, h, w)
        feats = self.cnn(frames).view(b, t, -1)  # B, T, D
        avg = feats.mean(dim=1)
        mx = feats.amax(dim=1)
        return torch.cat([avg, mx], dim=-1), feats


class LateFusion(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.video = VideoNet(num_classes=num_classes, widths=(16, 32, 64))
        self.frames = FrameEncoder(out_dim=48)
        self.fuse = nn.Linear(64 + 2 * 48, num_classes)

    def forward(self, clip):
        v = self.video.forward_features(clip)  # B, C, T', H', W'
        temporal = v.mean(dim=(3, 4))  # B, C, T'
        t_pooled = F.adaptive_max_pool1d(temporal, 1).squeeze(-1)
        f, per_frame = self.frames(clip)
        logits = self.fuse(torch.cat([t_pooled, f], dim=1))
        return logits, temporal, per_frame


if __name__ == "__main__":
    block = Conv2Plus1D(8, 16, stride=2)
    vol = torch.randn(2, 8, 8, 16, 16)
    block_out = block(vol)

    net = VideoNet(num_classes=5)
    clip = torch.randn(2, 3, 8, 64, 64)
    feats = net.forward_features(clip)
    logits = net(clip)

    fusion = LateFusion(num_classes=7)
    clip2 = torch.randn(3, 3, 6, 48, 48)
    fused_logits, temporal, per_frame = fusion(clip2)
    labels = torch.randint(0, 7, (3,))
    loss = F.cross_entropy(fused_logits, labels, label_smoothing=0.1)
