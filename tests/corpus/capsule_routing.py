# CapsNet (Sabour et al., 2017) on small images: conv stem, primary
# capsules from a strided conv reshaped into [B, N_in, D_in], squash, the
# prediction vectors u_hat = W_ij u_i with a per-pair weight tensor, and
# dynamic routing by agreement for 3 iterations (softmax over the output
# capsules). Class lengths give the margin loss; a masked reconstruction
# decoder uses the winning capsule.
import torch
import torch.nn as nn
import torch.nn.functional as F


def squash(s: torch.Tensor, dim: int = -1, eps: float = 1e-8) -> torch.Tensor:
    squared_norm = (s ** 2).sum(dim=dim, keepdim=True)
    scale = squared_norm / (1.0 + squared_norm)
    return scale * s / torch.sqrt(squared_norm + eps)


class PrimaryCaps(nn.Module):
    def __init__(self, in_channels: int, num_capsules: int, capsule_dim: int, kernel_size: int = 9, stride: int = 2):
        super().__init__()
        self.num_capsules = num_capsules
        self.capsule_dim = capsule_dim
        self.conv = nn.Conv2d(in_channels, num_capsules * capsule_dim, kernel_size=kernel_size, stride=stride)

    def forward(self, x):
        out = self.conv(x)
        B, _, H, W = out.shape
        out = out.view(B, self.num_capsules, self.capsule_dim, H, W)
        out = out.permute(0, 1, 3, 4, 2).contiguous()
        out = out.view(B, -1, self.capsule_dim)
        return squash(out)


class DigitCaps(nn.Module):
    def __init__(self, num_in_caps: int, in_dim: int, num_out_caps: int, out_dim: int, routing_iters: int = 3):
        super().__init__()
        self.num_in_caps = num_in_caps
        self.num_out_caps = num_out_caps
        self.routing_iters = routing_iters
        self.W = nn.Parameter(0.01 * torch.randn(1, num_in_caps, num_out_caps, out_dim, in_dim))

    def forward(self, u):
        batch_size = u.size(0)
        u = u[:, :, None, :, None]
        u_hat = torch.matmul(self.W, u).squeeze(-1)
        u_hat_detached = u_hat.detach()
        b_ij = torch.zeros(batch_size, self.num_in_caps, self.num_out_caps, device=u.device)
        for iteration in range(self.routing_iters):
            c_ij = F.softmax(b_ij, dim=2)
            if iteration == self.routing_iters - 1:
                s_j = (c_ij.unsqueeze(-1) * u_hat).sum(dim=1)
                v_j = squash(s_j)
            else:
                s_j = (c_ij.unsqueeze(-1) * u_hat_detached).sum(dim=1)
                v_j = squash(s_j)
                agreement = torch.einsum("bijd,bjd->bij", u_hat_detached, v_j)
                b_ij = b_ij + agreement
        return v_j, c_ij


class CapsuleNet(nn.Module):
    def __init__(self, in_channels=1, image_size=20, num_classes=5, stem_channels=32, primary_caps=8,
                 primary_dim=8, digit_dim=16):
        super().__init__()
        self.image_size = image_size
        self.in_channels = in_channels
        self.stem = nn.Conv2d(in_channels, stem_channels, kernel_size=5, stride=1)
        self.primary = PrimaryCaps(stem_channels, primary_caps, primary_dim, kernel_size=5, stride=2)
        grid = ((image_size - 4) - 5) // 2 + 1
        self.digits = DigitCaps(primary_caps * grid * grid, primary_dim, num_classes, digit_dim)
        self.decoder = nn.Sequential(
            nn.Linear(digit_dim * num_classes, 128), nn.ReLU(inplace=True),
            nn.Linear(128, in_channels * image_size * image_size), nn.Sigmoid(),
        )

    def forward(self, x, y=None):
        h = F.relu(self.stem(x))
        primary = self.primary(h)
        v, c = self.digits(primary)
        lengths = v.norm(dim=-1)
        if y is None:
            y = F.one_hot(lengths.argmax(dim=1), num_classes=lengths.size(1)).float()
        masked = (v * y[:, :, None]).flatten(start_dim=1)
        recon = self.decoder(masked).view(-1, self.in_channels, self.image_size, self.image_size)
        return lengths, recon, c


def margin_loss(lengths, targets_onehot, m_pos=0.9, m_neg=0.1, lam=0.5):
    left = F.relu(m_pos - lengths) ** 2
    right = F.relu(lengths - m_neg) ** 2
    loss = targets_onehot * left + lam * (1.0 - targets_onehot) * right
    return loss.sum(dim=1).mean()


if __name__ == "__main__":
    model = CapsuleNet(in_channels=1, image_size=20, num_classes=5)
    images = torch.rand(3, 1, 20, 20)
    labels = torch.randint(0, 5, (3,))
    y = F.one_hot(labels, num_classes=5).float()
    lengths, recon, coupling = model(images, y)
    m_loss = margin_loss(lengths, y)
    r_loss = F.mse_loss(recon, images)
    loss = m_loss + 0.0005 * r_loss
    loss.backward()
    with torch.no_grad():
        pred_lengths, pred_recon, _ = model(images)
    preds = pred_lengths.argmax(dim=1)
    caps = PrimaryCaps(32, 8, 8, kernel_size=5, stride=2)(torch.randn(2, 32, 16, 16))
