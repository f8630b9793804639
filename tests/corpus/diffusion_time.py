import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    return emb


class ResBlock(nn.Module):
    def __init__(self, ch, emb_dim, out_ch=None):
        super().__init__()
        out_ch = out_ch or ch
        self.norm1 = nn.GroupNorm(8, ch)
        self.conv1 = nn.Conv2d(ch, out_ch, 3, padding=1)
        self.emb = nn.Linear(emb_dim, out_ch)
        self.norm2 = nn.GroupNorm(8, out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.skip = nn.Conv2d(ch, out_ch, 1) if out_ch != ch else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(F.silu(emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class TinyUNet(nn.Module):
    def __init__(self, ch=32, emb_dim=64):
        super().__init__()
        self.emb_dim = emb_dim
        self.time_mlp = nn.Sequential(nn.Linear(emb_dim, emb_dim * 4), nn.SiLU(), nn.Linear(emb_dim * 4, emb_dim))
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.down = ResBlock(ch, emb_dim, ch * 2)
        self.pool = nn.AvgPool2d(2)
        self.mid = ResBlock(ch * 2, emb_dim)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec = ResBlock(ch * 4, emb_dim, ch)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t):
        emb = self.time_mlp(timestep_embedding(t, self.emb_dim))
        h0 = self.inp(x)
        h1 = self.down(h0, emb)
        h2 = self.mid(self.pool(h1), emb)
        h3 = self.up(h2)
        h = self.dec(torch.cat([h3, h1], dim=1), emb)
        return self.out(h)


if __name__ == "__main__":
    net = TinyUNet()
    x = torch.randn(2, 3, 32, 32)
    t = torch.randint(0, 1000, (2,))
    noise_pred = net(x, t)
    loss = F.mse_loss(noise_pred, torch.randn_like(x))
