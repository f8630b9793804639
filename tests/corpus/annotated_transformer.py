import copy
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


def clones(module, N):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


def subsequent_mask(size):
    subsequent_mask = torch.triu(torch.ones(1, size, size), diagonal=1).type(torch.uint8)
    return subsequent_mask == 0


def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    p_attn = dropout(p_attn) if dropout is not None else p_attn
    return torch.matmul(p_attn, value), p_attn


class MultiHeadedAttention(nn.Module):
    def __init__(self, h, d_model, dropout=0.1):
        super(MultiHeadedAttention, self).__init__()
        assert d_model % h == 0
        self.h, self.d_k = h, d_model // h
        self.linears = clones(nn.Linear(d_model, d_model), 4)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)  # same mask applied to all h heads
        nbatches = query.size(0)
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip(self.linears, (query, key, value))
        ]
        x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.linears[-1](x)


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super(PositionwiseFeedForward, self).__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w_2(self.w_1(x).relu())


class EncoderLayer(nn.Module):
    def __init__(self, size, self_attn, feed_forward, dropout, n_sub=2):
        super(EncoderLayer, self).__init__()
        self.self_attn = self_attn
        self.feed_forward = feed_forward
        self.norms = clones(nn.LayerNorm(size), n_sub)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        y = self.norms[0](x)
        x = x + self.dropout(self.self_attn(y, y, y, mask))
        return x + self.dropout(self.feed_forward(self.norms[-1](x)))


class DecoderLayer(EncoderLayer):
    def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
        super(DecoderLayer, self).__init__(size, self_attn, feed_forward, dropout, n_sub=3)
        self.src_attn = src_attn

    def forward(self, x, memory, src_mask, tgt_mask):
        y = self.norms[0](x)
        x = x + self.dropout(self.self_attn(y, y, y, tgt_mask))
        y = self.norms[1](x)
        x = x + self.dropout(self.src_attn(y, memory, memory, src_mask))
        return x + self.dropout(self.feed_forward(self.norms[2](x)))


class EncoderDecoder(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, N=2, d_model=64, d_ff=128, h=4, dropout=0.1):
        super(EncoderDecoder, self).__init__()
        c = copy.deepcopy
        attn = MultiHeadedAttention(h, d_model)
        ff = PositionwiseFeedForward(d_model, d_ff)
        self.encoder = clones(EncoderLayer(d_model, c(attn), c(ff), dropout), N)
        self.decoder = clones(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N)
        self.src_embed = nn.Embedding(src_vocab, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_model)
        self.generator = nn.Linear(d_model, tgt_vocab)
        self.scale = math.sqrt(d_model)

    def forward(self, src, tgt, src_mask, tgt_mask):
        memory = self.src_embed(src) * self.scale
        for layer in self.encoder:
            memory = layer(memory, src_mask)
        x = self.tgt_embed(tgt) * self.scale
        for layer in self.decoder:
            x = layer(x, memory, src_mask, tgt_mask)
        return F.log_softmax(self.generator(x), dim=-1)


if __name__ == "__main__":
    model = EncoderDecoder(src_vocab=11, tgt_vocab=11, N=2)
    src = torch.randint(1, 11, (3, 10))
    tgt_full = torch.randint(1, 11, (3, 9))
    tgt, tgt_y = tgt_full[:, :-1], tgt_full[:, 1:]
    src_mask, tgt_mask = (src != 0).unsqueeze(-2), (tgt != 0).unsqueeze(-2)
    tgt_mask = tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask)
    log_probs = model(src, tgt, src_mask, tgt_mask)
    loss = F.nll_loss(log_probs.contiguous().view(-1, log_probs.size(-1)),
                      tgt_y.contiguous().view(-1), reduction="sum") / (tgt_y != 0).sum()
    loss.backward()
    attn_probs = model.decoder[-1].src_attn.attn
    print(log_probs.shape, attn_probs.shape, loss.shape)
