import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size=1000, hidden=64, max_pos=128, type_vocab=2):
        super().__init__()
        self.word = nn.Embedding(vocab_size, hidden)
        self.position = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(type_vocab, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)))

    def forward(self, input_ids, token_type_ids=None):
        seq_len = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_len]
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        emb = self.word(input_ids) + self.position(position_ids) + self.token_type(token_type_ids)
        return self.norm(emb)


class SelfAttention(nn.Module):
    def __init__(self, hidden=64, heads=4):
        super().__init__()
        self.heads = heads
        self.head_size = hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)

    def split(self, x):
        new_shape = x.size()[:-1] + (self.heads, self.head_size)
        x = x.view(new_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, h, attention_mask):
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q, k, v = self.split(q), self.split(k), self.split(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        ext = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        scores = scores + ext
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)
        ctx = ctx.permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (self.heads * self.head_size,))
        return self.out(ctx)


class BertPooler(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)

    def forward(self, h):
        first = h[:, 0]
        return torch.tanh(self.dense(first))


if __name__ == "__main__":
    emb = BertEmbeddings()
    attn = SelfAttention()
    pool = BertPooler()
    ids = torch.randint(0, 1000, (3, 20))
    mask = torch.ones(3, 20, dtype=torch.long)
    h = emb(ids)
    h = h + attn(h, mask)
    pooled = pool(h)
    mlm_logits = h @ emb.word.weight.t()
