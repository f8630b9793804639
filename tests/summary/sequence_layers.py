"""Recurrent and attention layers: parameters torch keeps inside them."""

import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(32, 48, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(96, 24, batch_first=True)
        self.cross = nn.MultiheadAttention(24, 4, kdim=16, vdim=16, batch_first=True)
        self.encoder = nn.TransformerEncoderLayer(24, 4, dim_feedforward=64, batch_first=True)
        self.proj = nn.Linear(24, 7)

    def forward(self, x, memory):
        h, _ = self.lstm(x)
        h, _ = self.gru(h)
        h, _ = self.cross(h, memory, memory)
        h = self.encoder(h)
        return self.proj(h)


if __name__ == "__main__":
    tagger = Tagger()
    tags = tagger(torch.randn(4, 10, 32), torch.randn(4, 6, 16))
