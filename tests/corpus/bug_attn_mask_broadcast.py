# Padding mask applied to attention scores of shape (B, H, T, T). The mask is
# (B, T) and only unsqueezed once, giving (B, 1, T), which lines up B with H.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.scale = (dim // heads) ** -0.5

    def split_heads(self, t):
        b, n, d = t.shape
        return t.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, pad_mask):
        q, k, v = map(self.split_heads, self.to_qkv(x).chunk(3, dim=-1))
        dots = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        mask = pad_mask.unsqueeze(1)
        dots = dots.masked_fill(~mask, float("-inf"))  # BUG: mask (B, 1, T) does not broadcast against (B, H, T, T)
        attn = F.softmax(dots, dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        out = out.transpose(1, 2).reshape(x.shape)
        return self.to_out(out)


if __name__ == "__main__":
    layer = MaskedAttention(dim=64, heads=8)
    x = torch.randn(3, 12, 64)
    lengths = torch.tensor([12, 9, 5])
    pad_mask = torch.arange(12)[None, :] < lengths[:, None]
    y = layer(x, pad_mask)
    print(y.shape)
