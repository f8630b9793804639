# Two-tower retrieval model. Each tower pools a variable-length bag of
# sparse ids with nn.EmbeddingBag(mode="mean") driven by flat ids + offsets,
# concatenates dense features and an id embedding, and maps to a shared
# L2-normalised space. Training uses in-batch negatives (scores = U @ I^T,
# labels = arange); serving scores a precomputed item matrix with topk.
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TowerConfig:
    num_ids: int
    num_bag_tokens: int
    dense_dim: int
    id_dim: int = 16
    bag_dim: int = 16
    hidden: List[int] = field(default_factory=lambda: [64, 32])
    out_dim: int = 24


class Tower(nn.Module):
    def __init__(self, cfg: TowerConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.id_emb = nn.Embedding(cfg.num_ids, cfg.id_dim)
        self.bag = nn.EmbeddingBag(cfg.num_bag_tokens, cfg.bag_dim, mode="mean")
        layers: List[nn.Module] = []
        in_dim = cfg.id_dim + cfg.bag_dim + cfg.dense_dim
        for width in cfg.hidden:
            layers += [nn.Linear(in_dim, width), nn.ReLU()]
            in_dim = width
        layers.append(nn.Linear(in_dim, cfg.out_dim))
        self.mlp = nn.Sequential(*layers)

    def forward(self, ids: torch.Tensor, bag_ids: torch.Tensor, offsets: torch.Tensor,
                dense: torch.Tensor, **unused) -> torch.Tensor:
        pooled = self.bag(bag_ids, offsets)
        feats = torch.cat([self.id_emb(ids), pooled, dense], dim=-1)
        return F.normalize(self.mlp(feats), dim=-1)


class TwoTowerModel(nn.Module):
    def __init__(self, user_cfg: TowerConfig, item_cfg: TowerConfig, temperature: float = 0.05) -> None:
        super().__init__()
        assert user_cfg.out_dim == item_cfg.out_dim
        self.user_tower = Tower(user_cfg)
        self.item_tower = Tower(item_cfg)
        self.temperature = temperature

    def encode_users(self, *args, **kwargs) -> torch.Tensor:
        return self.user_tower(*args, **kwargs)

    def encode_items(self, *args, **kwargs) -> torch.Tensor:
        return self.item_tower(*args, **kwargs)

    def forward(self, user: Dict[str, torch.Tensor], item: Dict[str, torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
        u = self.encode_users(**user)
        v = self.encode_items(**item)
        scores = u @ v.t() / self.temperature
        labels = torch.arange(scores.size(0), device=scores.device)
        loss = F.cross_entropy(scores, labels)
        return loss, scores


def make_bags(batch: int, vocab: int, lengths: List[int]) -> Tuple[torch.Tensor, torch.Tensor]:
    total = sum(lengths)
    flat = torch.randint(0, vocab, (total,))
    offsets = torch.tensor([0] + lengths[:-1]).cumsum(0)
    return flat, offsets


@torch.no_grad()
def retrieve(model: TwoTowerModel, user: Dict[str, torch.Tensor], item_matrix: torch.Tensor,
             k: int = 5) -> Tuple[torch.Tensor, torch.Tensor]:
    u = model.encode_users(**user)
    scores = u @ item_matrix.t()
    top_scores, top_idx = torch.topk(scores, k, dim=-1)
    return top_scores, top_idx


if __name__ == "__main__":
    user_cfg = TowerConfig(num_ids=500, num_bag_tokens=200, dense_dim=8)
    item_cfg = TowerConfig(num_ids=1000, num_bag_tokens=300, dense_dim=5, hidden=[48])
    model = TwoTowerModel(user_cfg, item_cfg)
    B = 6
    u_bag, u_off = make_bags(B, 200, [3, 1, 4, 2, 5, 2])
    i_bag, i_off = make_bags(B, 300, [2, 2, 2, 3, 1, 6])
    user = {"ids": torch.randint(0, 500, (B,)), "bag_ids": u_bag, "offsets": u_off,
            "dense": torch.randn(B, 8)}
    item = {"ids": torch.randint(0, 1000, (B,)), "bag_ids": i_bag, "offsets": i_off,
            "dense": torch.randn(B, 5), "extra": torch.zeros(B)}
    loss, scores = model(user, item)
    n_items = 40
    cat_bag, cat_off = make_bags(n_items, 300, [3] * n_items)
    item_matrix = model.encode_items(torch.arange(n_items), cat_bag, cat_off, torch.randn(n_items, 5))
    top_scores, top_idx = retrieve(model, user, item_matrix, k=5)
    recall_hits = (top_idx == item["ids"][:, None] % n_items).any(dim=-1).float()
