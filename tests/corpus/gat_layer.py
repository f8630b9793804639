# Graph attention network (GAT) written without torch_geometric: per-head
# projection, edge logits from (Wh_i || Wh_j) gathered with index_select,
# LeakyReLU, softmax over each node's incoming edges via scatter max / exp /
# index_add, and concat vs mean head merging.
import torch
import torch.nn as nn
import torch.nn.functional as F


def add_self_loops(edge_index, n):
    loops = torch.arange(n, device=edge_index.device)
    loops = loops.unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loops], dim=1)


def edge_softmax(logits, dst, n):
    # logits: [E, H]; normalise over edges that share a destination node
    H = logits.size(1)
    idx = dst.unsqueeze(-1).expand(-1, H)
    m = torch.full((n, H), float("-inf"), dtype=logits.dtype)
    m = m.scatter_reduce(0, idx, logits, reduce="amax", include_self=True)
    e = torch.exp(logits - m.index_select(0, dst))
    denom = torch.zeros(n, H, dtype=logits.dtype).index_add_(0, dst, e)
    return e / (denom.index_select(0, dst) + 1e-16)


class GATLayer(nn.Module):
    def __init__(self, in_f, out_f, heads=4, concat=True, slope=0.2, p=0.1):
        super().__init__()
        self.h, self.f, self.concat = heads, out_f, concat
        self.W = nn.Linear(in_f, heads * out_f, bias=False)
        self.a_src = nn.Parameter(torch.empty(1, heads, out_f))
        self.a_dst = nn.Parameter(torch.empty(1, heads, out_f))
        self.bias = nn.Parameter(torch.zeros(heads * out_f if concat else out_f))
        self.slope, self.p = slope, p
        nn.init.xavier_uniform_(self.a_src)
        nn.init.xavier_uniform_(self.a_dst)

    def forward(self, x, edge_index):
        N = x.size(0)
        src, dst = edge_index[0], edge_index[1]
        Wh = self.W(x).view(N, self.h, self.f)                     # [N, H, F]
        Wh_i = Wh.index_select(0, dst)                             # [E, H, F]
        Wh_j = Wh.index_select(0, src)
        pair = torch.cat([Wh_i, Wh_j], dim=-1)                     # [E, H, 2F]
        a = torch.cat([self.a_dst, self.a_src], dim=-1)            # [1, H, 2F]
        logits = F.leaky_relu((pair * a).sum(-1), self.slope)      # [E, H]
        alpha = edge_softmax(logits, dst, N)
        alpha = F.dropout(alpha, self.p, self.training)
        msg = Wh_j * alpha.unsqueeze(-1)
        out = torch.zeros(N, self.h, self.f, dtype=x.dtype).index_add_(0, dst, msg)
        if self.concat:
            out = out.reshape(N, self.h * self.f)
        else:
            out = out.mean(dim=1)
        return out + self.bias, alpha


class GAT(nn.Module):
    def __init__(self, in_f, hid, n_cls, heads=8):
        super().__init__()
        self.l1 = GATLayer(in_f, hid, heads=heads, concat=True)
        self.l2 = GATLayer(hid * heads, n_cls, heads=1, concat=False)

    def forward(self, x, ei):
        ei = add_self_loops(ei, x.size(0))
        h, att1 = self.l1(F.dropout(x, 0.5, self.training), ei)
        h = F.elu(h)
        out, att2 = self.l2(F.dropout(h, 0.5, self.training), ei)
        return F.log_softmax(out, dim=-1), att1, att2


if __name__ == "__main__":
    N, E, F_in = 12, 40, 20
    x = torch.randn(N, F_in)
    edge_index = torch.randint(0, N, (2, E))
    model = GAT(F_in, 8, 3, heads=4)
    logp, att1, att2 = model(x, edge_index)
    y = torch.randint(0, 3, (N,))
    loss = F.nll_loss(logp, y)
    mean_layer = GATLayer(F_in, 16, heads=3, concat=False)
    h_mean, alpha = mean_layer(x, edge_index)
    loops = add_self_loops(edge_index, N)
    raw = torch.randn(E + N, 2)
    sm = edge_softmax(raw, loops[1], N)
    pred = logp.argmax(dim=-1)
    acc = (pred == y).float().mean()
