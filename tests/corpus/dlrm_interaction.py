# DLRM (Naumov et al. 2019), following facebookresearch/dlrm: a bottom MLP
# for dense features, one nn.EmbeddingBag per sparse feature (flat indices +
# offsets), pairwise dot interactions between all feature vectors via bmm,
# and a top MLP on [dense, selected interactions].
from typing import List

import torch
import torch.nn as nn


def create_mlp(ln: List[int], sigmoid_layer: int = -1) -> nn.Sequential:
    layers = nn.ModuleList()
    for i in range(len(ln) - 1):
        n, m = ln[i], ln[i + 1]
        layers.append(nn.Linear(n, m, bias=True))
        if i == sigmoid_layer:
            layers.append(nn.Sigmoid())
        else:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, m_spa: int, ln_emb: List[int], ln_bot: List[int], ln_top_hidden: List[int],
                 interaction_itself: bool = False):
        super().__init__()
        assert ln_bot[-1] == m_spa
        self.interaction_itself = interaction_itself
        self.emb_l = nn.ModuleList([nn.EmbeddingBag(n, m_spa, mode="sum") for n in ln_emb])
        self.bot_l = create_mlp(ln_bot)
        num_fea = len(ln_emb) + 1
        if interaction_itself:
            num_int = (num_fea * (num_fea + 1)) // 2 + m_spa
        else:
            num_int = (num_fea * (num_fea - 1)) // 2 + m_spa
        offset = 0 if interaction_itself else -1
        ln_top = [num_int] + ln_top_hidden + [1]
        self.top_l = create_mlp(ln_top, sigmoid_layer=len(ln_top) - 2)
        li, lj = torch.tril_indices(num_fea, num_fea, offset=offset)
        self.register_buffer("li", li, persistent=False)
        self.register_buffer("lj", lj, persistent=False)

    def apply_emb(self, lS_o, lS_i):
        ly = []
        for k, sparse_index_group_batch in enumerate(lS_i):
            sparse_offset_group_batch = lS_o[k]
            E = self.emb_l[k]
            V = E(sparse_index_group_batch, sparse_offset_group_batch)
            ly.append(V)
        return ly

    def interact_features(self, x, ly):
        batch_size, d = x.shape
        T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        Zflat = Z[:, self.li, self.lj]
        R = torch.cat([x, Zflat], dim=1)
        return R

    def forward(self, dense_x, lS_o, lS_i):
        x = self.bot_l(dense_x)
        ly = self.apply_emb(lS_o, lS_i)
        z = self.interact_features(x, ly)
        p = self.top_l(z)
        return p


def interact_triu(x: torch.Tensor, ly: List[torch.Tensor]) -> torch.Tensor:
    # alternative formulation used by some ports: upper triangle, stacked features
    feats = torch.stack([x] + ly, dim=1)
    n = feats.size(1)
    Z = feats @ feats.transpose(1, 2)
    iu = torch.triu_indices(n, n, offset=1)
    pairs = Z[:, iu[0], iu[1]]
    return torch.cat([x, pairs], dim=1)


def make_sparse_batch(batch_size: int, table_sizes: List[int], lengths: List[int]):
    lS_o, lS_i = [], []
    for n, L in zip(table_sizes, lengths):
        offsets = torch.arange(0, batch_size * L, L)
        indices = torch.randint(0, n, (batch_size * L,))
        lS_o.append(offsets)
        lS_i.append(indices)
    return lS_o, lS_i


if __name__ == "__main__":
    batch_size = 16
    m_spa = 8
    ln_emb = [50, 30, 100, 20]
    ln_bot = [13, 32, 16, m_spa]
    model = DLRM(m_spa, ln_emb, ln_bot, ln_top_hidden=[64, 32])
    dense_x = torch.rand(batch_size, 13)
    lS_o, lS_i = make_sparse_batch(batch_size, ln_emb, lengths=[1, 3, 2, 1])
    p = model(dense_x, lS_o, lS_i)
    target = torch.randint(0, 2, (batch_size, 1)).float()
    loss = nn.functional.binary_cross_entropy(p, target)
    loss.backward()

    x_bot = model.bot_l(dense_x)
    ly = model.apply_emb(lS_o, lS_i)
    R = model.interact_features(x_bot, ly)
    R2 = interact_triu(x_bot, ly)
    max_diff = (R.sort(dim=1).values - R2.sort(dim=1).values).abs().max()

    model_self = DLRM(m_spa, ln_emb, ln_bot, ln_top_hidden=[32], interaction_itself=True)
    p_self = model_self(dense_x, lS_o, lS_i)
    emb_w = model.emb_l[2].weight
