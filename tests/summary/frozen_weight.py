"""A frozen weight, by the in-place method with its flag written positionally."""

import torch
import torch.nn as nn


class Adapter(nn.Module):
    def __init__(self, dim=16, hidden=32):
        super().__init__()
        self.down = nn.Linear(dim, hidden)
        self.up = nn.Linear(hidden, dim)
        # Only the projection's weight is frozen; its bias still trains.
        self.down.weight.requires_grad_(False)
        self.up.bias.requires_grad_(requires_grad=False)

    def forward(self, x):
        return x + self.up(torch.relu(self.down(x)))


if __name__ == "__main__":
    model = Adapter()
    y = model(torch.randn(4, 16))
