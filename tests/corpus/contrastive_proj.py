import torch
import torch.nn as nn
import torch.nn.functional as F


class ProjectionHead(nn.Module):
    def __init__(self, in_dim, out_dim=128, hidden=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, x):
        return F.normalize(self.net(x), dim=-1)


def nt_xent(z1, z2, temperature=0.5):
    n = z1.shape[0]
    z = torch.cat([z1, z2], dim=0)
    sim = z @ z.t() / temperature
    mask = torch.eye(2 * n, dtype=torch.bool)
    sim = sim.masked_fill(mask, float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )

    def forward(self, x):
        return self.conv(x)


if __name__ == "__main__":
    enc = Encoder()
    head = ProjectionHead(32)
    a = torch.randn(8, 3, 32, 32)
    b = torch.randn(8, 3, 32, 32)
    h1, h2 = enc(a), enc(b)
    z1, z2 = head(h1), head(h2)
    loss = nt_xent(z1, z2)
    feats = torch.stack([h1, h2], dim=1)
