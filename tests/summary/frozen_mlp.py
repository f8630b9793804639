"""A text classifier whose embedding is frozen: trainable and frozen counts."""

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, vocab=1000, dim=64, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mlp = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, 4 * dim),
            nn.GELU(),
            nn.Linear(4 * dim, dim, bias=False),
        )
        self.head = nn.Linear(dim, classes)
        for p in self.embed.parameters():
            p.requires_grad = False

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + self.mlp(x)
        return self.head(x.mean(dim=1))


if __name__ == "__main__":
    model = Classifier()
    tokens = torch.randint(0, 1000, (8, 16))
    logits = model(tokens)
