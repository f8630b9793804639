# MLP-Mixer configured by a dataclass: patches via Conv2d, token-mixing MLPs
# applied across the patch axis (transpose in and out), channel-mixing MLPs,
# global average pooling and a classifier head.
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class MixerConfig:
    image_size: int = 32
    patch_size: int = 4
    in_channels: int = 3
    hidden_dim: int = 128
    token_mlp_dim: int = 64
    channel_mlp_dim: int = 256
    num_blocks: int = 4
    num_classes: int = 10
    extra: dict = field(default_factory=dict)

    @property
    def num_patches(self) -> int:
        return (self.image_size // self.patch_size) ** 2


class MlpBlock(nn.Module):
    def __init__(self, dim, mlp_dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, mlp_dim)
        self.fc2 = nn.Linear(mlp_dim, dim)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(x)))


class MixerBlock(nn.Module):
    def __init__(self, cfg: MixerConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.hidden_dim)
        self.token_mixing = MlpBlock(cfg.num_patches, cfg.token_mlp_dim)
        self.norm2 = nn.LayerNorm(cfg.hidden_dim)
        self.channel_mixing = MlpBlock(cfg.hidden_dim, cfg.channel_mlp_dim)

    def forward(self, x):
        y = self.norm1(x)                 # B, N, C
        y = y.transpose(1, 2)             # B, C, N
        y = self.token_mixing(y)
        y = y.transpose(1, 2)             # B, N, C
        x = x + y
        y = self.norm2(x)
        x = x + self.channel_mixing(y)
        return x


class MlpMixer(nn.Module):
    def __init__(self, cfg: MixerConfig):
        super().__init__()
        self.cfg = cfg
        self.stem = nn.Conv2d(cfg.in_channels, cfg.hidden_dim, kernel_size=cfg.patch_size, stride=cfg.patch_size)
        self.blocks = nn.ModuleList([MixerBlock(cfg) for _ in range(cfg.num_blocks)])
        self.pre_head_norm = nn.LayerNorm(cfg.hidden_dim)
        self.head = nn.Linear(cfg.hidden_dim, cfg.num_classes)

    def forward(self, images):
        x = self.stem(images)
        b, c, h, w = x.shape
        x = x.reshape(b, c, h * w).permute(0, 2, 1)
        for blk in self.blocks:
            x = blk(x)
        x = self.pre_head_norm(x)
        x = x.mean(dim=1)
        return self.head(x)
