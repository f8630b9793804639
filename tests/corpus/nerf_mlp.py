# NeRF: positional encoding with frequency bands 2**k (sin / cos of each band
# concatenated with the raw input), an 8-layer MLP that re-injects the
# encoded position at layer 4, separate density and view-dependent colour
# heads, stratified sampling along rays, and volume rendering with an
# exclusive cumprod of (1 - alpha).
import torch
import torch.nn as nn
import torch.nn.functional as F


class PosEnc(nn.Module):
    def __init__(self, n_freqs, include_input=True):
        super().__init__()
        self.include_input = include_input
        self.register_buffer("bands", 2.0 ** torch.arange(n_freqs, dtype=torch.float32))

    def out_dim(self, d):
        return d * (2 * self.bands.numel() + int(self.include_input))

    def forward(self, x):
        xb = x[..., None, :] * self.bands[:, None] * torch.pi      # [..., F, d]
        xb = xb.flatten(-2)
        enc = [torch.sin(xb), torch.cos(xb)]
        if self.include_input:
            enc = [x] + enc
        return torch.cat(enc, dim=-1)


class NeRF(nn.Module):
    def __init__(self, D=8, W=64, pos_freqs=6, dir_freqs=4, skips=(4,)):
        super().__init__()
        self.pe_x = PosEnc(pos_freqs)
        self.pe_d = PosEnc(dir_freqs)
        in_x, in_d = self.pe_x.out_dim(3), self.pe_d.out_dim(3)
        self.skips = skips
        layers = []
        for i in range(D):
            if i == 0:
                layers.append(nn.Linear(in_x, W))
            elif i in skips:
                layers.append(nn.Linear(W + in_x, W))
            else:
                layers.append(nn.Linear(W, W))
        self.pts_linears = nn.ModuleList(layers)
        self.sigma = nn.Linear(W, 1)
        self.feature = nn.Linear(W, W)
        self.views = nn.Linear(W + in_d, W // 2)
        self.rgb = nn.Linear(W // 2, 3)

    def forward(self, pts, dirs):
        ex = self.pe_x(pts)
        ed = self.pe_d(dirs)
        h = ex
        for i, lin in enumerate(self.pts_linears):
            if i in self.skips:
                h = torch.cat([ex, h], dim=-1)
            h = F.relu(lin(h))
        sigma = F.relu(self.sigma(h)).squeeze(-1)
        feat = self.feature(h)
        h = F.relu(self.views(torch.cat([feat, ed], dim=-1)))
        rgb = torch.sigmoid(self.rgb(h))
        return rgb, sigma


def sample_along_rays(rays_o, rays_d, near, far, n_samples, perturb=True):
    R = rays_o.shape[0]
    t = torch.linspace(near, far, n_samples).expand(R, n_samples)
    if perturb:
        mids = 0.5 * (t[:, 1:] + t[:, :-1])
        upper = torch.cat([mids, t[:, -1:]], dim=-1)
        lower = torch.cat([t[:, :1], mids], dim=-1)
        t = lower + (upper - lower) * torch.rand(R, n_samples)
    pts = rays_o[:, None, :] + rays_d[:, None, :] * t[..., None]    # [R, S, 3]
    return pts, t


def volume_render(rgb, sigma, t, rays_d, white_bkgd=False):
    deltas = t[:, 1:] - t[:, :-1]
    deltas = torch.cat([deltas, torch.full_like(deltas[:, :1], 1e10)], dim=-1)
    deltas = deltas * rays_d.norm(dim=-1, keepdim=True)
    alpha = 1.0 - torch.exp(-sigma * deltas)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], dim=-1), dim=-1)
    weights = alpha * trans[:, :-1]                                 # [R, S]
    rgb_map = (weights[..., None] * rgb).sum(dim=-2)
    depth = (weights * t).sum(dim=-1)
    acc = weights.sum(dim=-1)
    if white_bkgd:
        rgb_map = rgb_map + (1.0 - acc[..., None])
    return rgb_map, depth, acc, weights


if __name__ == "__main__":
    model = NeRF(D=8, W=64)
    R, S = 32, 16
    rays_o = torch.randn(R, 3)
    rays_d = F.normalize(torch.randn(R, 3), dim=-1)
    pts, t = sample_along_rays(rays_o, rays_d, 2.0, 6.0, S)
    view = rays_d[:, None, :].expand(R, S, 3)
    rgb, sigma = model(pts, view)
    rgb_map, depth, acc, weights = volume_render(rgb, sigma, t, rays_d, white_bkgd=True)
    target = torch.rand(R, 3)
    loss = F.mse_loss(rgb_map, target)
    psnr = -10.0 * torch.log10(loss)
    with torch.no_grad():
        pts_flat = pts.reshape(-1, 3)
        rgb_flat, sigma_flat = model(pts_flat, view.reshape(-1, 3))
    enc = PosEnc(10, include_input=False)
    code = enc(torch.rand(4, 5, 3))
