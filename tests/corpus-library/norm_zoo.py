# Normalisation layers on sequence data (B, T, C): LayerNorm, a hand-written
# RMSNorm, BatchNorm1d (which wants channels in dim 1, hence the transposes),
# InstanceNorm1d, GroupNorm on channels-first, and a functional layer_norm.
import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-8):
        super().__init__()
        self.scale = dim ** 0.5
        self.eps = eps
        self.g = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        norm = torch.norm(x, dim=-1, keepdim=True) / self.scale
        return x / norm.clamp(min=self.eps) * self.g


class SeqBatchNorm(nn.Module):
    """BatchNorm1d over the channel dim of a (B, T, C) tensor."""

    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        return self.bn(x.transpose(1, 2)).transpose(1, 2)


class ScaleNorm(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.g = nn.Parameter(torch.tensor(1.0))
        self.eps = eps

    def forward(self, x):
        n = x.norm(dim=-1, keepdim=True).clamp(min=self.eps)
        return x * (self.g / n)


class NormZoo(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.ln = nn.LayerNorm(channels)
        self.rms = RMSNorm(channels)
        self.bn = SeqBatchNorm(channels)
        self.inorm = nn.InstanceNorm1d(channels, affine=True)
        self.gn = nn.GroupNorm(4, channels)
        self.sn = ScaleNorm()
        self.flat_bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        a = self.ln(x)
        b = self.rms(x)
        c = self.bn(x)
        d = self.inorm(x.transpose(1, 2)).transpose(1, 2)
        e = self.gn(x.permute(0, 2, 1)).permute(0, 2, 1)
        f = self.sn(x)
        g = F.layer_norm(x, x.shape[-1:])
        h = self.flat_bn(x.reshape(-1, x.size(-1))).view_as(x)
        stacked = torch.stack([a, b, c, d, e, f, g, h], dim=0)
        return stacked
