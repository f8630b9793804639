"""Stacks torch builds inside one layer: encoders, a whole Transformer, a cell."""

import torch
import torch.nn as nn


class Translator(nn.Module):
    def __init__(self, d_model=32, vocab=50):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, 4, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(d_model))
        self.seq2seq = nn.Transformer(d_model, 4, 1, 1, dim_feedforward=48, batch_first=True)
        self.cell = nn.GRUCell(d_model, 16)
        self.out = nn.Linear(16, vocab)

    def forward(self, src, tgt):
        memory = self.encoder(self.embed(src))
        y = self.seq2seq(memory, self.embed(tgt))
        h = self.cell(y[:, -1])
        return self.out(h)


if __name__ == "__main__":
    model = Translator()
    logits = model(torch.randint(0, 50, (2, 9)), torch.randint(0, 50, (2, 5)))
