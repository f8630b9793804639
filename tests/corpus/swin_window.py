import torch
import torch.nn as nn
import torch.nn.functional as F


def window_partition(x, ws):
    B, H, W, C = x.shape
    x = x.view(B, H // ws, ws, W // ws, ws, C)
    windows = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, C)
    return windows


def window_reverse(windows, ws, H, W):
    B = int(windows.shape[0] / (H * W / ws / ws))
    x = windows.view(B, H // ws, W // ws, ws, ws, -1)
    x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)
    return x


class WindowAttention(nn.Module):
    def __init__(self, dim, ws, heads):
        super().__init__()
        self.ws = ws
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        Bw, N, C = x.shape
        qkv = self.qkv(x).reshape(Bw, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(Bw, N, C)
        return self.proj(out)


class SwinBlock(nn.Module):
    def __init__(self, dim=32, ws=4, heads=4, shift=2):
        super().__init__()
        self.ws = ws
        self.shift = shift
        self.norm = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, ws, heads)

    def forward(self, x):
        B, H, W, C = x.shape
        h = self.norm(x)
        h = torch.roll(h, shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = window_partition(h, self.ws)
        win = win.view(-1, self.ws * self.ws, C)
        win = self.attn(win)
        win = win.view(-1, self.ws, self.ws, C)
        h = window_reverse(win, self.ws, H, W)
        h = torch.roll(h, shifts=(self.shift, self.shift), dims=(1, 2))
        return x + h


if __name__ == "__main__":
    blk = SwinBlock()
    x = torch.randn(2, 16, 16, 32)
    y = blk(x)
    pooled = y.mean(dim=(1, 2))
