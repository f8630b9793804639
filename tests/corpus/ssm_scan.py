# A simplified selective state-space layer (Mamba-style) with a sequential
# scan written as a Python loop: in_proj splits into x and gate z, a causal
# depthwise Conv1d, input-dependent dt (softplus), B and C, discretised
# A_bar = exp(dt * A) with A = -exp(A_log), a per-step hidden state update with
# einsum, torch.stack over time, and a SiLU-gated output projection.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SelectiveSSM(nn.Module):
    def __init__(self, d_model, d_state=16, d_conv=4, expand=2, dt_rank=None):
        super().__init__()
        self.d_inner = expand * d_model
        self.d_state = d_state
        self.dt_rank = dt_rank or math.ceil(d_model / 16)
        self.in_proj = nn.Linear(d_model, 2 * self.d_inner, bias=False)
        self.conv1d = nn.Conv1d(self.d_inner, self.d_inner, d_conv, groups=self.d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(self.d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, self.d_inner)
        A = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(self.d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(self.d_inner))
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, hidden):
        batch, seqlen, _ = hidden.shape
        xz = self.in_proj(hidden)
        x, z = xz.chunk(2, dim=-1)  # B, L, D_in each
        x = self.conv1d(x.transpose(1, 2))[..., :seqlen].transpose(1, 2)
        x = F.silu(x)

        x_dbl = self.x_proj(x)
        dt, B, C = torch.split(x_dbl, [self.dt_rank, self.d_state, self.d_state], dim=-1)
        dt = F.softplus(self.dt_proj(dt))  # B, L, D_in
        A = -torch.exp(self.A_log.float())  # D_in, N

        y = self.selective_scan(x, dt, A, B, C)
        y = y + x * self.D
        y = y * F.silu(z)
        return self.out_proj(y)

    def selective_scan(self, u, delta, A, B, C):
        b, l, d_in = u.shape
        n = A.shape[1]
        deltaA = torch.exp(torch.einsum("bld,dn->bldn", delta, A))
        deltaB_u = torch.einsum("bld,bln,bld->bldn", delta, B, u)
        h = torch.zeros(b, d_in, n, device=u.device, dtype=u.dtype)
        ys = []
        for i in range(l):
            h = deltaA[:, i] * h + deltaB_u[:, i]
            y_t = torch.einsum("bdn,bn->bd", h, C[:, i, :])
            ys.append(y_t)
        y = torch.stack(ys, dim=1)  # B, L, D_in
        return y


class ResidualBlock(nn.Module):
    def __init__(self, d_model, **kw):
        super().__init__()
        self.norm = RMSNorm(d_model)
        self.mixer = SelectiveSSM(d_model, **kw)

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class TinyMambaLM(nn.Module):
    def __init__(self, vocab, d_model, n_layers, d_state=8):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([ResidualBlock(d_model, d_state=d_state) for _ in range(n_layers)])
        self.norm_f = RMSNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, input_ids):
        x = self.embedding(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm_f(x))


if __name__ == "__main__":
    ssm = SelectiveSSM(d_model=32, d_state=8, d_conv=4, expand=2)
    seq = torch.randn(2, 10, 32)
    ssm_out = ssm(seq)

    lm = TinyMambaLM(vocab=100, d_model=48, n_layers=2, d_state=8)
    ids = torch.randint(0, 100, (3, 16))
    logits = lm(ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 100), ids[:, 1:].reshape(-1))
    next_token = logits[:, -1].argmax(dim=-1, keepdim=True)
    ids = torch.cat([ids, next_token], dim=1)
