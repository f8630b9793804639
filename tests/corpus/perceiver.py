# Perceiver-style encoder: a small learned latent array cross-attends to a long
# input sequence with nn.MultiheadAttention (batch_first), then latent
# self-attention blocks; a query-based decoder reads the latents back out.
import torch
import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim * mult), nn.GELU(), nn.Linear(dim * mult, dim))

    def forward(self, x):
        return self.net(x)


class CrossAttention(nn.Module):
    def __init__(self, q_dim, kv_dim, heads):
        super().__init__()
        self.norm_q = nn.LayerNorm(q_dim)
        self.norm_kv = nn.LayerNorm(kv_dim)
        self.attn = nn.MultiheadAttention(q_dim, heads, kdim=kv_dim, vdim=kv_dim, batch_first=True)

    def forward(self, latents, inputs, key_padding_mask=None):
        q = self.norm_q(latents)
        kv = self.norm_kv(inputs)
        out, weights = self.attn(q, kv, kv, key_padding_mask=key_padding_mask)
        return out, weights


class LatentSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = FeedForward(dim)

    def forward(self, x):
        h = self.norm(x)
        attn_out, _ = self.attn(h, h, h, need_weights=False)
        x = x + attn_out
        x = x + self.ff(x)
        return x


class Perceiver(nn.Module):
    def __init__(self, input_dim, num_latents=32, latent_dim=128, heads=4, depth=2, num_classes=10):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(num_latents, latent_dim))
        self.cross = CrossAttention(latent_dim, input_dim, heads=1)
        self.cross_ff = FeedForward(latent_dim)
        self.layers = nn.ModuleList([LatentSelfAttention(latent_dim, heads) for _ in range(depth)])
        self.to_logits = nn.Sequential(nn.LayerNorm(latent_dim), nn.Linear(latent_dim, num_classes))

    def forward(self, data, mask=None):
        b = data.shape[0]
        x = self.latents.unsqueeze(0).repeat(b, 1, 1)
        attended, cross_weights = self.cross(x, data, key_padding_mask=mask)
        x = x + attended
        x = x + self.cross_ff(x)
        for layer in self.layers:
            x = layer(x)
        pooled = x.mean(dim=1)
        return self.to_logits(pooled), cross_weights


class QueryDecoder(nn.Module):
    def __init__(self, query_dim, latent_dim, out_dim):
        super().__init__()
        self.cross = CrossAttention(query_dim, latent_dim, heads=2)
        self.proj = nn.Linear(query_dim, out_dim)

    def forward(self, queries, latents):
        out, _ = self.cross(queries, latents)
        return self.proj(out)


if __name__ == "__main__":
    model = Perceiver(input_dim=48, num_latents=16, latent_dim=64, heads=4, depth=2, num_classes=7)
    data = torch.randn(3, 500, 48)
    mask = torch.zeros(3, 500, dtype=torch.bool)
    mask[:, 450:] = True
    logits, cross_weights = model(data, mask)

    decoder = QueryDecoder(query_dim=32, latent_dim=64, out_dim=3)
    queries = torch.randn(3, 100, 32)
    latents = torch.randn(3, 16, 64)
    preds = decoder(queries, latents)
    print(logits.shape, cross_weights.shape, preds.shape)
