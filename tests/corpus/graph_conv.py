# Message-passing graph layers in plain PyTorch (no torch_geometric): an edge
# list, messages gathered with index_select, aggregated with index_add_ /
# scatter_add, degree normalisation, and mean-pooling per graph.
import torch
import torch.nn as nn
import torch.nn.functional as F


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.linear = nn.Linear(in_dim, out_dim)

    def forward(self, x, edge_index):
        num_nodes = x.size(0)
        src, dst = edge_index[0], edge_index[1]
        h = self.linear(x)
        deg = torch.zeros(num_nodes, dtype=h.dtype, device=h.device)
        deg.index_add_(0, dst, torch.ones_like(dst, dtype=h.dtype))
        deg = deg.clamp(min=1)
        norm = deg.index_select(0, src).rsqrt() * deg.index_select(0, dst).rsqrt()
        messages = h.index_select(0, src) * norm.unsqueeze(-1)
        out = torch.zeros_like(h)
        out.index_add_(0, dst, messages)
        return out + h


class EdgeConv(nn.Module):
    """Messages depend on both endpoints: mlp([x_i, x_j - x_i])."""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(2 * in_dim, out_dim), nn.ReLU(), nn.Linear(out_dim, out_dim))

    def forward(self, x, edge_index):
        src, dst = edge_index
        x_i = x[dst]
        x_j = x[src]
        msg = self.mlp(torch.cat([x_i, x_j - x_i], dim=-1))
        index = dst.unsqueeze(-1).expand_as(msg)
        agg = torch.zeros(x.size(0), msg.size(1), device=x.device).scatter_add(0, index, msg)
        return agg


def global_mean_pool(x, batch, num_graphs):
    sums = x.new_zeros(num_graphs, x.size(1)).index_add(0, batch, x)
    counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).to(x.dtype)
    return sums / counts.unsqueeze(1)


class GraphClassifier(nn.Module):
    def __init__(self, in_dim, hidden, num_classes):
        super().__init__()
        self.conv1 = GCNLayer(in_dim, hidden)
        self.conv2 = EdgeConv(hidden, hidden)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x, edge_index, batch, num_graphs):
        h = F.relu(self.conv1(x, edge_index))
        h = F.relu(self.conv2(h, edge_index))
        g = global_mean_pool(h, batch, num_graphs)
        return self.head(g)


if __name__ == "__main__":
    num_nodes, num_edges = 30, 90
    x = torch.randn(num_nodes, 16)
    edge_index = torch.randint(0, num_nodes, (2, num_edges))
    batch = torch.cat([torch.zeros(12, dtype=torch.long), torch.ones(18, dtype=torch.long)])
    model = GraphClassifier(in_dim=16, hidden=32, num_classes=3)
    logits = model(x, edge_index, batch, num_graphs=2)
    node_emb = model.conv1(x, edge_index)
    print(logits.shape, node_emb.shape)
