# EfficientNet-style MBConv blocks: 1x1 expansion, depthwise conv, squeeze-
# excitation through adaptive pooling and 1x1 convs, stochastic depth with a
# per-sample drop-path mask, and compound width/depth scaling helpers.
import math
from dataclasses import dataclass
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def round_filters(filters: int, width_mult: float, divisor: int = 8) -> int:
    filters = filters * width_mult
    new_filters = max(divisor, int(filters + divisor / 2) // divisor * divisor)
    if new_filters < 0.9 * filters:
        new_filters += divisor
    return int(new_filters)


def round_repeats(repeats: int, depth_mult: float) -> int:
    return int(math.ceil(depth_mult * repeats))


def drop_path(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    if p == 0.0 or not training:
        return x
    keep = 1.0 - p
    mask = torch.rand(x.shape[0], 1, 1, 1, dtype=x.dtype, device=x.device)
    mask = torch.floor(mask + keep)
    return x / keep * mask


@dataclass
class StageConfig:
    expand_ratio: int
    kernel: int
    stride: int
    in_ch: int
    out_ch: int
    repeats: int


class SqueezeExcitation(nn.Module):
    def __init__(self, channels: int, squeeze_ch: int) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(channels, squeeze_ch, kernel_size=1)
        self.expand = nn.Conv2d(squeeze_ch, channels, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.pool(x)
        scale = F.silu(self.reduce(scale))
        scale = torch.sigmoid(self.expand(scale))
        return x * scale


class MBConv(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, kernel: int, stride: int,
                 expand_ratio: int, se_ratio: float = 0.25, drop_rate: float = 0.0) -> None:
        super().__init__()
        self.use_residual = stride == 1 and in_ch == out_ch
        self.drop_rate = drop_rate
        hidden = in_ch * expand_ratio
        self.expand: Optional[nn.Module] = None
        if expand_ratio != 1:
            self.expand = nn.Sequential(
                nn.Conv2d(in_ch, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.SiLU())
        self.depthwise = nn.Sequential(
            nn.Conv2d(hidden, hidden, kernel, stride, padding=kernel // 2, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden), nn.SiLU())
        self.se = SqueezeExcitation(hidden, max(1, int(in_ch * se_ratio)))
        self.project = nn.Sequential(nn.Conv2d(hidden, out_ch, 1, bias=False), nn.BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x if self.expand is None else self.expand(x)
        h = self.depthwise(h)
        h = self.se(h)
        h = self.project(h)
        if not self.use_residual:
            return h
        h = drop_path(h, self.drop_rate, self.training)
        return h + x


class EfficientNet(nn.Module):
    BASE: List[StageConfig] = [
        StageConfig(1, 3, 1, 32, 16, 1),
        StageConfig(6, 3, 2, 16, 24, 2),
        StageConfig(6, 5, 2, 24, 40, 2),
        StageConfig(6, 3, 2, 40, 80, 3),
    ]

    def __init__(self, width_mult: float = 1.0, depth_mult: float = 1.0,
                 num_classes: int = 10, drop_path_rate: float = 0.2) -> None:
        super().__init__()
        stem_ch = round_filters(32, width_mult)
        self.stem = nn.Sequential(nn.Conv2d(3, stem_ch, 3, 2, 1, bias=False),
                                  nn.BatchNorm2d(stem_ch), nn.SiLU())
        total = sum(round_repeats(s.repeats, depth_mult) for s in self.BASE)
        blocks: List[nn.Module] = []
        idx = 0
        in_ch = stem_ch
        for cfg in self.BASE:
            out_ch = round_filters(cfg.out_ch, width_mult)
            for i in range(round_repeats(cfg.repeats, depth_mult)):
                rate = drop_path_rate * idx / total
                blocks.append(MBConv(in_ch, out_ch, cfg.kernel, cfg.stride if i == 0 else 1,
                                     cfg.expand_ratio, drop_rate=rate))
                in_ch = out_ch
                idx += 1
        self.blocks = nn.Sequential(*blocks)
        self.head_ch = round_filters(320, width_mult)
        self.head = nn.Sequential(nn.Conv2d(in_ch, self.head_ch, 1, bias=False),
                                  nn.BatchNorm2d(self.head_ch), nn.SiLU())
        self.fc = nn.Linear(self.head_ch, num_classes)

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        x = self.blocks(x)
        return self.head(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = self.forward_features(x)
        pooled = F.adaptive_avg_pool2d(feats, 1).flatten(1)
        pooled = F.dropout(pooled, 0.2, self.training)
        return self.fc(pooled)


if __name__ == "__main__":
    b0 = EfficientNet(width_mult=1.0, depth_mult=1.0, num_classes=10)
    images = torch.randn(2, 3, 64, 64)
    logits = b0(images)
    b2 = EfficientNet(width_mult=1.1, depth_mult=1.2, num_classes=5)
    odd = torch.randn(3, 3, 57, 71)
    feats = b2.forward_features(odd)
    logits_b2 = b2(odd)
    block = MBConv(24, 24, 5, 1, 6, drop_rate=0.3)
    x = torch.randn(4, 24, 16, 16)
    y = block(x)
    dp = drop_path(x, 0.5, True)
    b0.eval()
    with torch.no_grad():
        eval_logits = b0(images)
    probs = eval_logits.softmax(dim=-1)
