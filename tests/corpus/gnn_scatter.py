import torch
import torch.nn as nn


class MessagePassing(nn.Module):
    def __init__(self, in_dim=16, out_dim=32):
        super().__init__()
        self.msg = nn.Linear(2 * in_dim, out_dim)
        self.upd = nn.Linear(in_dim + out_dim, out_dim)

    def forward(self, x, edge_index):
        src, dst = edge_index
        pair = torch.cat([x[src], x[dst]], dim=-1)
        m = torch.relu(self.msg(pair))
        agg = torch.zeros(x.size(0), m.size(1))
        agg = agg.index_add(0, dst, m)
        deg = torch.bincount(dst, minlength=x.size(0)).clamp(min=1).unsqueeze(-1)
        agg = agg / deg
        out = self.upd(torch.cat([x, agg], dim=-1))
        return out


def global_mean_pool(x, batch, num_graphs):
    sums = torch.zeros(num_graphs, x.size(1)).scatter_add(0, batch.unsqueeze(-1).expand_as(x), x)
    counts = torch.bincount(batch, minlength=num_graphs).unsqueeze(-1)
    return sums / counts


if __name__ == "__main__":
    layer = MessagePassing()
    x = torch.randn(10, 16)
    edge_index = torch.randint(0, 10, (2, 30))
    h = layer(x, edge_index)
    batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 2, 2, 2])
    pooled = global_mean_pool(h, batch, 3)
