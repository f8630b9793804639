# Multi-head self-attention where the heads are merged back with .view() right
# after .transpose(): the transposed tensor is not contiguous, so view fails.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        weights = F.softmax(scores, dim=-1)
        ctx = weights @ v                        # B, H, T, D
        ctx = ctx.transpose(1, 2).view(B, T, C)  # BUG: view on a non-contiguous tensor; needs .contiguous() or reshape
        return self.out(ctx)


class Encoder(nn.Module):
    def __init__(self, embed_dim=64, num_heads=4):
        super().__init__()
        self.norm = nn.LayerNorm(embed_dim)
        self.attn = SelfAttention(embed_dim, num_heads)

    def forward(self, x):
        return x + self.attn(self.norm(x))


if __name__ == "__main__":
    enc = Encoder(embed_dim=64, num_heads=4)
    x = torch.randn(2, 10, 64)
    y = enc(x)
    print(y.shape)
