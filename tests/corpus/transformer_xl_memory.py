# Transformer-XL style segment recurrence: hidden states of the previous
# segment are cached (detached) and concatenated in front of the current
# segment along time; attention uses sinusoidal relative position embeddings
# with the u/v bias terms and the rel-shift trick; memories are updated by
# keeping the last M steps.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class PositionalEmbedding(nn.Module):
    def __init__(self, d):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0.0, d, 2.0) / d))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, pos_seq):
        sinusoid = torch.outer(pos_seq, self.inv_freq)
        return torch.cat([sinusoid.sin(), sinusoid.cos()], dim=-1)[:, None, :]


def rel_shift(x):
    # x: [qlen, klen, B, H]
    zero_pad = torch.zeros((x.size(0), 1, *x.size()[2:]), dtype=x.dtype)
    x_padded = torch.cat([zero_pad, x], dim=1)
    x_padded = x_padded.view(x.size(1) + 1, x.size(0), *x.size()[2:])
    return x_padded[1:].view_as(x)


class RelMultiHeadAttn(nn.Module):
    def __init__(self, n_head, d_model, d_head, dropout=0.1):
        super().__init__()
        self.n_head, self.d_head = n_head, d_head
        self.qkv = nn.Linear(d_model, 3 * n_head * d_head, bias=False)
        self.r_net = nn.Linear(d_model, n_head * d_head, bias=False)
        self.o = nn.Linear(n_head * d_head, d_model, bias=False)
        self.ln = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.scale = 1 / math.sqrt(d_head)

    def forward(self, w, r, u, v, mask, mems=None):
        qlen, bsz = w.size(0), w.size(1)
        cat = w if mems is None else torch.cat([mems, w], dim=0)
        heads = self.qkv(cat)
        q, k, val = torch.chunk(heads, 3, dim=-1)
        q = q[-qlen:]
        klen = k.size(0)
        q = q.view(qlen, bsz, self.n_head, self.d_head)
        k = k.view(klen, bsz, self.n_head, self.d_head)
        val = val.view(klen, bsz, self.n_head, self.d_head)
        r_k = self.r_net(r).view(r.size(0), self.n_head, self.d_head)
        ac = torch.einsum("ibnd,jbnd->ijbn", q + u, k)
        bd = rel_shift(torch.einsum("ibnd,jnd->ijbn", q + v, r_k))
        score = (ac + bd) * self.scale
        score = score.masked_fill(mask[:, :, None, None], float("-inf"))
        prob = self.drop(F.softmax(score, dim=1))
        vec = torch.einsum("ijbn,jbnd->ibnd", prob, val)
        vec = vec.contiguous().view(qlen, bsz, self.n_head * self.d_head)
        return self.ln(w + self.drop(self.o(vec)))


class MemTransformerLM(nn.Module):
    def __init__(self, n_token, n_layer=2, n_head=4, d_model=64, d_head=16, d_inner=128, mem_len=6):
        super().__init__()
        self.mem_len, self.n_layer = mem_len, n_layer
        self.emb = nn.Embedding(n_token, d_model)
        self.pos = PositionalEmbedding(d_model)
        self.u = nn.Parameter(torch.zeros(n_head, d_head))
        self.v = nn.Parameter(torch.zeros(n_head, d_head))
        self.attn = nn.ModuleList([RelMultiHeadAttn(n_head, d_model, d_head) for _ in range(n_layer)])
        self.ff = nn.ModuleList([
            nn.Sequential(nn.Linear(d_model, d_inner), nn.ReLU(), nn.Linear(d_inner, d_model))
            for _ in range(n_layer)
        ])
        self.out = nn.Linear(d_model, n_token)

    def init_mems(self, bsz):
        return [torch.empty(0, bsz, self.emb.embedding_dim) for _ in range(self.n_layer + 1)]

    def update_mems(self, hids, mems, qlen):
        with torch.no_grad():
            new_mems = []
            for h, m in zip(hids, mems):
                cat = torch.cat([m, h], dim=0)
                new_mems.append(cat[-self.mem_len:].detach())
        return new_mems

    def forward(self, tokens, mems):
        qlen, bsz = tokens.shape
        mlen = mems[0].size(0)
        klen = mlen + qlen
        h = self.emb(tokens)
        mask = torch.triu(torch.ones(qlen, klen, dtype=torch.bool), diagonal=1 + mlen)
        pos_seq = torch.arange(klen - 1, -1, -1.0)
        r = self.pos(pos_seq).squeeze(1)
        hids = [h]
        for attn, ff, m in zip(self.attn, self.ff, mems):
            h = attn(h, r, self.u, self.v, mask, mems=m)
            h = h + ff(h)
            hids.append(h)
        logits = self.out(h)
        return logits, self.update_mems(hids, mems, qlen)


if __name__ == "__main__":
    n_token, bsz, seg_len = 50, 3, 5
    model = MemTransformerLM(n_token, mem_len=6)
    data = torch.randint(0, n_token, (2 * seg_len, bsz))
    mems = model.init_mems(bsz)
    total_loss = 0.0
    for seg in range(2):
        inp = data[seg * seg_len:(seg + 1) * seg_len]
        tgt = torch.roll(inp, shifts=-1, dims=0)
        logits, mems = model(inp, mems)
        loss = F.cross_entropy(logits.view(-1, n_token), tgt.reshape(-1))
        total_loss = total_loss + loss
    last_mem = mems[-1]
    pe = model.pos(torch.arange(7.0))
    shifted = rel_shift(torch.randn(4, 9, 2, 3))
