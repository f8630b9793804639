import torch
import torch.nn as nn
import torch.nn.functional as F


def scatter_sum(src, index, dim_size):
    out = src.new_zeros(dim_size, src.size(-1))
    return out.index_add_(0, index, src)


def global_add_pool(x, batch, size):
    return scatter_sum(x, batch, size)


def global_mean_pool(x, batch, size):
    summed = scatter_sum(x, batch, size)
    count = torch.bincount(batch, minlength=size).clamp(min=1).to(x.dtype)
    return summed / count.view(-1, 1)


def global_max_pool(x, batch, size):
    index = batch.view(-1, 1).expand(-1, x.size(-1))
    out = x.new_full((size, x.size(-1)), float("-inf"))
    return out.scatter_reduce(0, index, x, reduce="amax", include_self=True)


class GINConv(nn.Module):
    def __init__(self, in_channels, out_channels, eps=0.0, train_eps=True):
        super().__init__()
        self.nn = nn.Sequential(
            nn.Linear(in_channels, out_channels),
            nn.BatchNorm1d(out_channels),
            nn.ReLU(),
            nn.Linear(out_channels, out_channels),
        )
        self.eps = nn.Parameter(torch.tensor([eps])) if train_eps else eps

    def forward(self, x, edge_index):
        row, col = edge_index[0], edge_index[1]
        aggr = scatter_sum(x[row], col, x.size(0))
        out = aggr + (1 + self.eps) * x
        return self.nn(out)


class GraphClassifier(nn.Module):
    def __init__(self, in_channels, hidden_channels=32, num_layers=3, num_classes=4, dropout=0.5):
        super().__init__()
        self.dropout = dropout
        self.convs = nn.ModuleList()
        for i in range(num_layers):
            self.convs.append(GINConv(in_channels if i == 0 else hidden_channels, hidden_channels))
        readout_dim = 3 * hidden_channels * num_layers
        self.readout = nn.Sequential(
            nn.Linear(readout_dim, hidden_channels),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_channels, num_classes),
        )

    def forward(self, x, edge_index, batch, num_graphs):
        xs = []
        for conv in self.convs:
            x = F.relu(conv(x, edge_index))
            xs.append(x)
        h = torch.cat(xs, dim=-1)
        h_mean = global_mean_pool(h, batch, num_graphs)
        h_max = global_max_pool(h, batch, num_graphs)
        h_sum = global_add_pool(h, batch, num_graphs)
        graph_emb = torch.cat([h_mean, h_max, h_sum], dim=-1)
        return self.readout(graph_emb)


def collate(graph_sizes, num_edges_per_graph, num_features):
    xs, edges, batches = [], [], []
    offset = 0
    for g, n in enumerate(graph_sizes):
        xs.append(torch.randn(n, num_features))
        edges.append(torch.randint(0, n, (2, num_edges_per_graph)) + offset)
        batches.append(torch.full((n,), g, dtype=torch.long))
        offset += n
    return torch.cat(xs), torch.cat(edges, dim=1), torch.cat(batches)


def training_step(model, data, labels):
    x, edge_index, batch = data
    logits = model(x, edge_index, batch, labels.size(0))
    loss = F.cross_entropy(logits, labels)
    acc = (logits.argmax(dim=-1) == labels).float().mean()
    return loss, acc


if __name__ == "__main__":
    x, edge_index, batch = collate([5, 7, 4, 6], 12, 8)
    num_graphs = 4
    pooled_mean = global_mean_pool(x, batch, num_graphs)
    pooled_max = global_max_pool(x, batch, num_graphs)
    conv = GINConv(8, 16)
    node_out = conv(x, edge_index)
    model = GraphClassifier(8)
    labels = torch.randint(0, 4, (num_graphs,))
    loss, acc = training_step(model, (x, edge_index, batch), labels)
    loss.backward()
    node_counts = torch.bincount(batch)
