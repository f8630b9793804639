# Llama-style attention with rotary position embeddings implemented by hand
# (no complex numbers): cos/sin caches, rotate_half via torch.cat, an
# interleaved variant via torch.stack, and RMSNorm.
import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        norm = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return norm * self.weight


def build_rope_cache(seq_len, head_dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    t = torch.arange(seq_len).float()
    freqs = torch.outer(t, inv_freq)  # T, D/2
    emb = torch.cat((freqs, freqs), dim=-1)  # T, D
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    cos = cos[None, None, :, :]
    sin = sin[None, None, :, :]
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def apply_rotary_interleaved(x, cos, sin):
    # x: B, H, T, D -> treat pairs (x0, x1), (x2, x3), ...
    x_even = x[..., 0::2]
    x_odd = x[..., 1::2]
    c = cos[..., 0::2]
    s = sin[..., 0::2]
    out = torch.stack((x_even * c - x_odd * s, x_even * s + x_odd * c), dim=-1)
    return out.flatten(-2)


class RotaryAttention(nn.Module):
    def __init__(self, dim, n_heads, max_seq_len=256):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        cos, sin = build_rope_cache(max_seq_len, self.head_dim)
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)

    def forward(self, x, interleaved=False):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        cos = self.cos_cached[:seqlen]
        sin = self.sin_cached[:seqlen]
        if interleaved:
            xq = apply_rotary_interleaved(xq, cos, sin)
            xk = apply_rotary_interleaved(xk, cos, sin)
        else:
            xq, xk = apply_rotary(xq, xk, cos, sin)
        scores = torch.matmul(xq, xk.transpose(2, 3)) / (self.head_dim ** 0.5)
        causal = torch.full((seqlen, seqlen), float("-inf"), device=x.device).triu(1)
        scores = scores + causal
        probs = F.softmax(scores.float(), dim=-1).type_as(xq)
        out = torch.matmul(probs, xv)
        out = out.transpose(1, 2).reshape(bsz, seqlen, -1)
        return self.wo(out)


class LlamaBlock(nn.Module):
    def __init__(self, dim, n_heads, hidden):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = RotaryAttention(dim, n_heads)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x, interleaved=False):
        h = x + self.attention(self.attention_norm(x), interleaved=interleaved)
        y = self.ffn_norm(h)
        out = h + self.w2(F.silu(self.w1(y)) * self.w3(y))
        return out
