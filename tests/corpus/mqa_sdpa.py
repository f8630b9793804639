# Grouped-query / multi-query attention with a KV cache, written against
# F.scaled_dot_product_attention. K/V heads are shared across query heads via
# expand + reshape (repeat_kv), as in Llama-2/Mistral.
import torch
import torch.nn as nn
import torch.nn.functional as F


def repeat_kv(x, n_rep):
    bs, n_kv_heads, slen, head_dim = x.shape
    if n_rep == 1:
        return x
    return (
        x[:, :, None, :, :]
        .expand(bs, n_kv_heads, n_rep, slen, head_dim)
        .reshape(bs, n_kv_heads * n_rep, slen, head_dim)
    )


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, dropout=0.0):
        super().__init__()
        assert n_heads % n_kv_heads == 0
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.n_rep = n_heads // n_kv_heads
        self.head_dim = d_model // n_heads
        self.q_proj = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.kv_proj = nn.Linear(d_model, 2 * n_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * self.head_dim, d_model, bias=False)
        self.dropout = dropout

    def forward(self, x, past_kv=None, is_causal=True):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        kv = self.kv_proj(x).view(B, T, 2, self.n_kv_heads, self.head_dim)
        k, v = kv.unbind(dim=2)
        k = k.transpose(1, 2)
        v = v.transpose(1, 2)
        if past_kv is not None:
            past_k, past_v = past_kv
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        present = (k, v)
        k_rep = repeat_kv(k, self.n_rep)
        v_rep = repeat_kv(v, self.n_rep)
        y = F.scaled_dot_product_attention(
            q, k_rep, v_rep,
            dropout_p=self.dropout if self.training else 0.0,
            is_causal=is_causal and past_kv is None,
        )
        y = y.transpose(1, 2).contiguous().view(B, T, -1)
        return self.o_proj(y), present


class MultiQueryAttention(GroupedQueryAttention):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads, n_kv_heads=1)


def padding_attention(q, k, v, lengths):
    # boolean mask: True = attend. (B, 1, 1, S) broadcasts over heads and queries
    S = k.shape[-2]
    key_mask = torch.arange(S, device=q.device)[None, :] < lengths[:, None]
    attn_mask = key_mask[:, None, None, :]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)


if __name__ == "__main__":
    gqa = GroupedQueryAttention(d_model=256, n_heads=8, n_kv_heads=2)
    gqa.eval()
    prompt = torch.randn(2, 16, 256)
    out, (k_cache, v_cache) = gqa(prompt)
    step = torch.randn(2, 1, 256)
    step_out, (k_cache, v_cache) = gqa(step, past_kv=(k_cache, v_cache))

    mqa = MultiQueryAttention(d_model=128, n_heads=4)
    y, _ = mqa(torch.randn(3, 9, 128))

    q = torch.randn(4, 2, 5, 32)
    k = torch.randn(4, 2, 11, 32)
    v = torch.randn(4, 2, 11, 48)
    lengths = torch.tensor([11, 7, 3, 9])
    ctx = padding_attention(q, k, v, lengths)
    print(out.shape, step_out.shape, k_cache.shape, y.shape, ctx.shape)
