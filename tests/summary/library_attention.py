"""No call site: the summary is for any input, with symbolic counts."""

import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        y = (q @ k.transpose(-2, -1)).softmax(dim=-1) @ v
        return self.c_proj(y)
