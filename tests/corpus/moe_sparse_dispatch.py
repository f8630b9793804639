# Switch/Mixtral-style sparse MoE with real token dispatch: the router's top-k
# choices become a one-hot expert mask, each expert finds its tokens with
# torch.where, gathers them with index_select, and scatters its weighted
# output back with index_add_. Aux losses: load balancing (one_hot + mean)
# and router z-loss (logsumexp).
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class MoEConfig:
    d_model: int = 64
    d_hidden: int = 128
    n_experts: int = 4
    top_k: int = 2
    jitter: float = 0.0


class ExpertMLP(nn.Module):
    def __init__(self, d_model, d_hidden):
        super().__init__()
        self.fc_in = nn.Linear(d_model, d_hidden)
        self.fc_out = nn.Linear(d_hidden, d_model)

    def forward(self, x):
        return self.fc_out(F.gelu(self.fc_in(x)))


class SparseMoE(nn.Module):
    def __init__(self, cfg: MoEConfig):
        super().__init__()
        self.cfg = cfg
        self.router = nn.Linear(cfg.d_model, cfg.n_experts, bias=False)
        self.experts = nn.ModuleList([ExpertMLP(cfg.d_model, cfg.d_hidden) for _ in range(cfg.n_experts)])

    def forward(self, hidden):
        orig_shape = hidden.shape
        x = hidden.reshape(-1, orig_shape[-1])  # N, D
        logits = self.router(x)  # N, E
        probs = F.softmax(logits, dim=-1)
        top_vals, top_idx = torch.topk(logits, self.cfg.top_k, dim=-1)  # N, k
        top_w = F.softmax(top_vals, dim=-1)

        # E, k, N mask: expert_mask[e, j, n] == 1 if token n picked expert e in slot j
        expert_mask = F.one_hot(top_idx, num_classes=self.cfg.n_experts).permute(2, 1, 0)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            slot, token_idx = torch.where(expert_mask[e])
            tokens = x.index_select(0, token_idx)
            weights = top_w[token_idx, slot].unsqueeze(-1)
            y = expert(tokens) * weights
            out.index_add_(0, token_idx, y.to(out.dtype))

        # load balancing: fraction of tokens routed to each expert (first choice) * mean prob
        first_choice = F.one_hot(top_idx[:, 0], self.cfg.n_experts).float()
        frac_tokens = first_choice.mean(dim=0)
        frac_probs = probs.mean(dim=0)
        balance_loss = self.cfg.n_experts * torch.sum(frac_tokens * frac_probs)
        z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
        return out.view(orig_shape), balance_loss, z_loss


class MoETransformerLayer(nn.Module):
    def __init__(self, cfg: MoEConfig, n_heads=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.attn = nn.MultiheadAttention(cfg.d_model, n_heads, batch_first=True)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.moe = SparseMoE(cfg)

    def forward(self, x, causal=True):
        T = x.shape[1]
        mask = None
        if causal:
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a
        m, bal, z = self.moe(self.norm2(x))
        return x + m, bal + 1e-3 * z


if __name__ == "__main__":
    cfg = MoEConfig(d_model=32, d_hidden=64, n_experts=4, top_k=2)
    moe = SparseMoE(cfg)
    tokens = torch.randn(4, 9, 32)
    moe_out, balance, zloss = moe(tokens)

    layer_cfg = MoEConfig(d_model=48, d_hidden=96, n_experts=8, top_k=1)
    layers = nn.ModuleList([MoETransformerLayer(layer_cfg, n_heads=6) for _ in range(2)])
    x = torch.randn(2, 12, 48)
    aux_total = torch.zeros(())
    for layer in layers:
        x, aux = layer(x)
        aux_total = aux_total + aux
    head = nn.Linear(48, 100)
    logits = head(x)
    targets = torch.randint(0, 100, (2, 12))
    loss = F.cross_entropy(logits.view(-1, 100), targets.view(-1)) + 0.01 * aux_total
