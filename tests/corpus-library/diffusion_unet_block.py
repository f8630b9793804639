# Building blocks of a DDPM-style UNet: sinusoidal timestep embedding, a
# residual block with GroupNorm and a time-conditioned bias, self-attention
# over the spatial grid, and down/up sampling.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(timesteps, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(
        -math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32, device=timesteps.device) / half
    )
    args = timesteps[:, None].float() * freqs[None]
    embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    return embedding


class ResBlock(nn.Module):
    def __init__(self, in_ch, out_ch, temb_ch, groups=8, dropout=0.1):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_ch)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.temb_proj = nn.Linear(temb_ch, out_ch)
        self.norm2 = nn.GroupNorm(groups, out_ch)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        if in_ch != out_ch:
            self.skip = nn.Conv2d(in_ch, out_ch, 1)
        else:
            self.skip = nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.dropout(F.silu(self.norm2(h))))
        return self.skip(x) + h


class AttnBlock(nn.Module):
    def __init__(self, channels, groups=8):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        self.qkv = nn.Conv2d(channels, channels * 3, 1)
        self.proj_out = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=1)
        q = q.reshape(b, c, h * w).permute(0, 2, 1)
        k = k.reshape(b, c, h * w)
        w_ = torch.bmm(q, k) * (int(c) ** (-0.5))
        w_ = F.softmax(w_, dim=2)
        v = v.reshape(b, c, h * w)
        out = torch.bmm(v, w_.permute(0, 2, 1))
        out = out.reshape(b, c, h, w)
        return x + self.proj_out(out)


class Downsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.op = nn.Conv2d(channels, channels, 3, stride=2, padding=1)

    def forward(self, x):
        return self.op(x)


class Upsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        x = F.interpolate(x, scale_factor=2.0, mode="nearest")
        return self.conv(x)


class TinyUNet(nn.Module):
    def __init__(self, in_ch=3, base=32, temb_dim=128):
        super().__init__()
        self.base = base
        self.time_mlp = nn.Sequential(nn.Linear(base, temb_dim), nn.SiLU(), nn.Linear(temb_dim, temb_dim))
        self.conv_in = nn.Conv2d(in_ch, base, 3, padding=1)
        self.down1 = ResBlock(base, base, temb_dim)
        self.ds1 = Downsample(base)
        self.down2 = ResBlock(base, base * 2, temb_dim)
        self.mid_attn = AttnBlock(base * 2)
        self.mid = ResBlock(base * 2, base * 2, temb_dim)
        self.us1 = Upsample(base * 2)
        self.up1 = ResBlock(base * 3, base, temb_dim)
        self.out_norm = nn.GroupNorm(8, base)
        self.conv_out = nn.Conv2d(base, in_ch, 3, padding=1)

    def forward(self, x, t):
        temb = timestep_embedding(t, self.base)
        temb = self.time_mlp(temb)
        h0 = self.conv_in(x)
        h1 = self.down1(h0, temb)
        h = self.ds1(h1)
        h = self.down2(h, temb)
        h = self.mid_attn(h)
        h = self.mid(h, temb)
        h = self.us1(h)
        h = torch.cat([h, h1], dim=1)
        h = self.up1(h, temb)
        out = self.conv_out(F.silu(self.out_norm(h)))
        return out
