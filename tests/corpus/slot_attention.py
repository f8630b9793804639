# Slot Attention (Locatello et al. 2020) for object-centric learning: a CNN
# encoder with a soft position embedding built from a meshgrid, slots sampled
# from a learned Gaussian, iterative attention where the softmax runs over the
# slots (not the inputs), a GRUCell update on flattened slots, and a spatial
# broadcast decoder that splits RGB and alpha masks per slot.
import torch
import torch.nn as nn
import torch.nn.functional as F


def build_grid(height, width):
    ys = torch.linspace(0.0, 1.0, height)
    xs = torch.linspace(0.0, 1.0, width)
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    grid = torch.stack([gy, gx], dim=-1)  # H, W, 2
    grid = torch.cat([grid, 1.0 - grid], dim=-1)  # H, W, 4
    return grid.unsqueeze(0)


class SoftPositionEmbed(nn.Module):
    def __init__(self, hidden, resolution):
        super().__init__()
        self.proj = nn.Linear(4, hidden)
        self.resolution = resolution

    def forward(self, x):
        # x: B, H, W, C (channels last)
        grid = build_grid(*self.resolution).to(x.device)
        return x + self.proj(grid)


class SlotAttention(nn.Module):
    def __init__(self, num_slots, dim, iters=3, hidden_dim=128, eps=1e-8):
        super().__init__()
        self.num_slots = num_slots
        self.iters = iters
        self.eps = eps
        self.scale = dim ** -0.5
        self.slots_mu = nn.Parameter(torch.randn(1, 1, dim))
        self.slots_logsigma = nn.Parameter(torch.zeros(1, 1, dim))
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.gru = nn.GRUCell(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden_dim), nn.ReLU(inplace=True), nn.Linear(hidden_dim, dim))
        self.norm_input = nn.LayerNorm(dim)
        self.norm_slots = nn.LayerNorm(dim)
        self.norm_pre_ff = nn.LayerNorm(dim)

    def forward(self, inputs):
        b, n, d = inputs.shape
        mu = self.slots_mu.expand(b, self.num_slots, -1)
        sigma = self.slots_logsigma.exp().expand(b, self.num_slots, -1)
        slots = mu + sigma * torch.randn(mu.shape, device=inputs.device)

        inputs = self.norm_input(inputs)
        k, v = self.to_k(inputs), self.to_v(inputs)
        for _ in range(self.iters):
            slots_prev = slots
            slots = self.norm_slots(slots)
            q = self.to_q(slots)
            dots = torch.einsum("bid,bjd->bij", q, k) * self.scale  # B, S, N
            attn = dots.softmax(dim=1) + self.eps
            attn = attn / attn.sum(dim=-1, keepdim=True)
            updates = torch.einsum("bjd,bij->bid", v, attn)
            slots = self.gru(updates.reshape(-1, d), slots_prev.reshape(-1, d))
            slots = slots.reshape(b, -1, d)
            slots = slots + self.mlp(self.norm_pre_ff(slots))
        return slots, attn


class SlotAutoEncoder(nn.Module):
    def __init__(self, resolution=(32, 32), num_slots=5, hid=32, iters=3):
        super().__init__()
        self.resolution = resolution
        self.num_slots = num_slots
        self.encoder = nn.Sequential(
            nn.Conv2d(3, hid, 5, padding=2), nn.ReLU(),
            nn.Conv2d(hid, hid, 5, padding=2), nn.ReLU(),
            nn.Conv2d(hid, hid, 5, padding=2), nn.ReLU(),
        )
        self.enc_pos = SoftPositionEmbed(hid, resolution)
        self.mlp = nn.Sequential(nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, hid))
        self.slot_attn = SlotAttention(num_slots, hid, iters, hidden_dim=64)
        self.dec_pos = SoftPositionEmbed(hid, resolution)
        self.decoder = nn.Sequential(
            nn.Conv2d(hid, hid, 3, padding=1), nn.ReLU(),
            nn.Conv2d(hid, 4, 3, padding=1),
        )

    def forward(self, image):
        B = image.size(0)
        H, W = self.resolution
        x = self.encoder(image).permute(0, 2, 3, 1)  # B, H, W, C
        x = self.enc_pos(x)
        x = torch.flatten(x, 1, 2)
        x = self.mlp(F.layer_norm(x, x.shape[-1:]))
        slots, attn = self.slot_attn(x)
        # spatial broadcast
        z = slots.reshape(-1, slots.shape[-1])[:, None, None, :].repeat(1, H, W, 1)
        z = self.dec_pos(z).permute(0, 3, 1, 2)
        out = self.decoder(z)
        out = out.reshape(B, self.num_slots, 4, H, W)
        recons, masks = out.split([3, 1], dim=2)
        masks = masks.softmax(dim=1)
        recon = (recons * masks).sum(dim=1)
        return recon, recons, masks, attn


if __name__ == "__main__":
    grid = build_grid(6, 8)
    sa = SlotAttention(num_slots=4, dim=16, iters=2, hidden_dim=32)
    feats = torch.randn(2, 48, 16)
    slots, attn = sa(feats)

    model = SlotAutoEncoder(resolution=(16, 16), num_slots=5, hid=32, iters=3)
    image = torch.randn(2, 3, 16, 16)
    recon, recons, masks, attn_maps = model(image)
    loss = F.mse_loss(recon, image)
