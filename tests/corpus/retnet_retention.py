# RetNet multi-scale retention. Each head has its own decay gamma; the
# parallel form builds a [H, T, T] decay matrix D from torch.arange
# differences, computes (Q K^T * D) V, normalises per head with GroupNorm
# and gates with swish. A recurrent form over time steps is included and
# should give the same shapes.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiScaleRetention(nn.Module):
    def __init__(self, d_model, n_heads, v_factor=2):
        super().__init__()
        assert d_model % n_heads == 0
        self.d_model = d_model
        self.n_heads = n_heads
        self.key_dim = d_model // n_heads
        self.v_dim = d_model * v_factor
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, self.v_dim, bias=False)
        self.g_proj = nn.Linear(d_model, self.v_dim, bias=False)
        self.out_proj = nn.Linear(self.v_dim, d_model, bias=False)
        self.group_norm = nn.GroupNorm(n_heads, self.v_dim, affine=False)
        gammas = 1 - torch.exp2(-5 - torch.arange(n_heads, dtype=torch.float))
        self.register_buffer("gammas", gammas)

    @property
    def head_v_dim(self):
        return self.v_dim // self.n_heads

    @staticmethod
    def decay_mask(gammas, T):
        idx = torch.arange(T, dtype=torch.float)
        diff = idx[:, None] - idx[None, :]                    # [T, T]
        log_g = torch.log(gammas)[:, None, None]              # [H, 1, 1]
        D = torch.exp(diff[None] * log_g)
        D = D.masked_fill(diff[None] < 0, 0.0)
        D = D / D.sum(dim=-1, keepdim=True).sqrt()
        return D

    def _split(self, x, dim):
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, dim).transpose(1, 2)

    def forward_parallel(self, x):
        B, T, _ = x.shape
        q = self._split(self.q_proj(x), self.key_dim)
        k = self._split(self.k_proj(x), self.key_dim) * self.key_dim ** -0.5
        v = self._split(self.v_proj(x), self.head_v_dim)
        D = self.decay_mask(self.gammas, T)
        ret = (q @ k.transpose(-1, -2)) * D.unsqueeze(0)     # [B, H, T, T]
        ret = ret / ret.abs().sum(dim=-1, keepdim=True).clamp(min=1)
        y = ret @ v                                           # [B, H, T, dv]
        return self._finish(x, y)

    def forward_recurrent(self, x):
        B, T, _ = x.shape
        q = self._split(self.q_proj(x), self.key_dim)
        k = self._split(self.k_proj(x), self.key_dim) * self.key_dim ** -0.5
        v = self._split(self.v_proj(x), self.head_v_dim)
        state = torch.zeros(B, self.n_heads, self.key_dim, self.head_v_dim)
        g = self.gammas.view(1, -1, 1, 1)
        outs = []
        for t in range(T):
            kv = k[:, :, t, :, None] * v[:, :, t, None, :]   # [B, H, dk, dv]
            state = g * state + kv
            outs.append(torch.einsum("bhd,bhde->bhe", q[:, :, t], state))
        y = torch.stack(outs, dim=2)
        return self._finish(x, y)

    def _finish(self, x, y):
        B, H, T, dv = y.shape
        y = y.transpose(1, 2).reshape(B * T, H * dv)
        y = self.group_norm(y).view(B, T, H * dv)
        gate = F.silu(self.g_proj(x))
        return self.out_proj(gate * y)


class RetNetBlock(nn.Module):
    def __init__(self, d_model, n_heads, ffn_mult=2):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.msr = MultiScaleRetention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(nn.Linear(d_model, ffn_mult * d_model), nn.GELU(),
                                 nn.Linear(ffn_mult * d_model, d_model))

    def forward(self, x, recurrent=False):
        h = self.ln1(x)
        h = self.msr.forward_recurrent(h) if recurrent else self.msr.forward_parallel(h)
        x = x + h
        return x + self.ffn(self.ln2(x))


if __name__ == "__main__":
    torch.manual_seed(0)
    blocks = nn.ModuleList([RetNetBlock(64, 4) for _ in range(2)])
    emb = nn.Embedding(100, 64)
    ids = torch.randint(0, 100, (2, 12))
    x = emb(ids)
    h = x
    for blk in blocks:
        h = blk(h)
    with torch.no_grad():
        h_rec = x
        for blk in blocks:
            h_rec = blk(h_rec, recurrent=True)
    D = MultiScaleRetention.decay_mask(blocks[0].msr.gammas, 12)
    msr = MultiScaleRetention(48, 3, v_factor=1)
    y = msr.forward_parallel(torch.randn(3, 7, 48))
    scale = math.sqrt(msr.key_dim)
