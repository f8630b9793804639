# GPT-2 style decoder with a key/value cache, in the layout of the
# HuggingFace implementation: each attention layer returns `present`, a
# (key, value) tuple of shape [B, n_head, T_total, head_dim], which is fed
# back as `layer_past` on the next call and concatenated along the time dim.
# Position ids start at the cached length.
import math
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class GPT2Attention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, n_positions: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        bias = torch.tril(torch.ones(n_positions, n_positions, dtype=torch.bool))
        self.register_buffer("bias", bias.view(1, 1, n_positions, n_positions), persistent=False)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        new_shape = x.size()[:-1] + (self.n_head, self.head_dim)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 1, 3).contiguous()
        new_shape = x.size()[:-2] + (self.n_head * self.head_dim,)
        return x.view(new_shape)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(value.size(-1))
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        attn_weights = torch.where(causal_mask, attn_weights, torch.full_like(attn_weights, mask_value))
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def forward(self, hidden_states, layer_past=None, use_cache=False):
        query, key, value = self.c_attn(hidden_states).split(self.n_head * self.head_dim, dim=2)
        query = self._split_heads(query)
        key = self._split_heads(key)
        value = self._split_heads(value)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        present = (key, value) if use_cache else None
        attn_output, attn_weights = self._attn(query, key, value)
        attn_output = self._merge_heads(attn_output)
        attn_output = self.c_proj(attn_output)
        return attn_output, present


class GPT2Block(nn.Module):
    def __init__(self, n_embd, n_head, n_positions):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = GPT2Attention(n_embd, n_head, n_positions)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * n_embd, n_embd))

    def forward(self, hidden_states, layer_past=None, use_cache=False):
        attn_output, present = self.attn(self.ln_1(hidden_states), layer_past=layer_past, use_cache=use_cache)
        hidden_states = hidden_states + attn_output
        hidden_states = hidden_states + self.mlp(self.ln_2(hidden_states))
        return hidden_states, present


class GPT2LMHeadModel(nn.Module):
    def __init__(self, vocab_size=128, n_positions=64, n_embd=48, n_layer=2, n_head=4):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(n_positions, n_embd)
        self.h = nn.ModuleList([GPT2Block(n_embd, n_head, n_positions) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, input_ids, past_key_values: Optional[List[Tuple[torch.Tensor, torch.Tensor]]] = None,
                use_cache: bool = True):
        batch_size, seq_len = input_ids.shape
        if past_key_values is None:
            past_length = 0
            past_key_values = [None] * len(self.h)
        else:
            past_length = past_key_values[0][0].size(-2)
        position_ids = torch.arange(past_length, seq_len + past_length, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).expand(batch_size, -1)
        hidden_states = self.wte(input_ids) + self.wpe(position_ids)
        presents = []
        for block, layer_past in zip(self.h, past_key_values):
            hidden_states, present = block(hidden_states, layer_past=layer_past, use_cache=use_cache)
            presents.append(present)
        hidden_states = self.ln_f(hidden_states)
        logits = self.lm_head(hidden_states)
        return logits, presents


@torch.no_grad()
def generate(model, input_ids, max_new_tokens=5, temperature=0.8, top_k=10):
    logits, past = model(input_ids, use_cache=True)
    generated = input_ids
    for _ in range(max_new_tokens):
        next_logits = logits[:, -1, :] / temperature
        v, _ = torch.topk(next_logits, top_k)
        next_logits = next_logits.masked_fill(next_logits < v[:, [-1]], float("-inf"))
        probs = F.softmax(next_logits, dim=-1)
        next_token = torch.multinomial(probs, num_samples=1)
        generated = torch.cat([generated, next_token], dim=1)
        logits, past = model(next_token, past_key_values=past, use_cache=True)
    return generated, past


if __name__ == "__main__":
    model = GPT2LMHeadModel(vocab_size=128, n_positions=64, n_embd=48, n_layer=2, n_head=4).eval()
    prompt = torch.randint(0, 128, (2, 7))
    logits, past = model(prompt)
    k0, v0 = past[0]
    out_ids, final_past = generate(model, prompt, max_new_tokens=5)
    k_last, v_last = final_past[-1]
    cache_len = k_last.size(-2)
    full_logits, _ = model(out_ids, use_cache=False)
    last_step = full_logits[:, -1]
