import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(128, 64)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        h = torch.relu(self.proj(x))
        return self.head(h)


x = torch.randn(8, 128)
model = Classifier()
logits = model(x)
w = torch.randn(32, 10)
scores = logits @ w  # the seeded bug: inner sizes 10 and 32 differ
features = torch.load("features.pt")
