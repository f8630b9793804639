# A two-tower recommender whose item tower outputs 64 features while the user
# tower outputs 32; the dot-product scoring with matmul then fails.
import torch
import torch.nn as nn


class Tower(nn.Module):
    def __init__(self, num_ids, emb_dim, out_dim):
        super().__init__()
        self.emb = nn.EmbeddingBag(num_ids, emb_dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(emb_dim, 128), nn.ReLU(), nn.Linear(128, out_dim))

    def forward(self, ids, offsets=None):
        return self.mlp(self.emb(ids, offsets))


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items):
        super().__init__()
        self.user = Tower(n_users, 48, 32)
        self.item = Tower(n_items, 48, 64)  # CAUSE: item tower projects to 64, user tower to 32

    def forward(self, user_hist, item_ids):
        u = self.user(user_hist)              # B, 32
        v = self.item(item_ids)               # N, 64
        scores = u @ v.t()  # BUG: (B, 32) @ (64, N)
        return scores


if __name__ == "__main__":
    model = TwoTower(n_users=1000, n_items=5000)
    user_hist = torch.randint(0, 1000, (8, 20))
    items = torch.randint(0, 5000, (50, 3))
    scores = model(user_hist, items)
    print(scores.shape)
