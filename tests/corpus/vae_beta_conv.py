# beta-VAE on 64x64 images: conv encoder to (mu, logvar), reparameterised
# sample via torch.distributions.Normal.rsample, Bernoulli-logit
# reconstruction loss, per-dimension KL to a standard normal, and a
# latent traversal that decodes a batch of interpolated codes.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class View(nn.Module):
    def __init__(self, *shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return x.view(*self.shape)


class BetaVAE(nn.Module):
    def __init__(self, z_dim=10, nc=1, beta=4.0):
        super().__init__()
        self.z_dim = z_dim
        self.beta = beta
        self.encoder = nn.Sequential(
            nn.Conv2d(nc, 32, 4, 2, 1), nn.ReLU(True),   # 32x32
            nn.Conv2d(32, 32, 4, 2, 1), nn.ReLU(True),   # 16x16
            nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(True),   # 8x8
            nn.Conv2d(64, 64, 4, 2, 1), nn.ReLU(True),   # 4x4
            nn.Conv2d(64, 256, 4, 1), nn.ReLU(True),     # 1x1
            View(-1, 256),
            nn.Linear(256, z_dim * 2),
        )
        self.decoder = nn.Sequential(
            nn.Linear(z_dim, 256),
            View(-1, 256, 1, 1), nn.ReLU(True),
            nn.ConvTranspose2d(256, 64, 4), nn.ReLU(True),
            nn.ConvTranspose2d(64, 64, 4, 2, 1), nn.ReLU(True),
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(True),
            nn.ConvTranspose2d(32, 32, 4, 2, 1), nn.ReLU(True),
            nn.ConvTranspose2d(32, nc, 4, 2, 1),
        )

    def encode(self, x):
        stats = self.encoder(x)
        mu = stats[:, :self.z_dim]
        logvar = stats[:, self.z_dim:]
        return mu, logvar

    def forward(self, x):
        mu, logvar = self.encode(x)
        std = torch.exp(0.5 * logvar)
        q = Normal(mu, std, validate_args=False)
        z = q.rsample()
        x_logits = self.decoder(z)
        return x_logits, mu, logvar, z

    def loss(self, x, x_logits, mu, logvar):
        batch = x.size(0)
        recon = F.binary_cross_entropy_with_logits(x_logits, x, reduction="sum") / batch
        kld_per_dim = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())
        dim_kl = kld_per_dim.mean(0)
        total_kl = kld_per_dim.sum(1).mean(0)
        return recon + self.beta * total_kl, recon, dim_kl


def log_likelihood_gap(mu, logvar, z):
    q = Normal(mu, torch.exp(0.5 * logvar), validate_args=False)
    p = Normal(torch.zeros_like(z), torch.ones_like(z), validate_args=False)
    log_q = q.log_prob(z).sum(-1)
    log_p = p.log_prob(z).sum(-1)
    return log_q - log_p


@torch.no_grad()
def traverse(model, x, dim, steps=7, limit=3.0):
    mu, _ = model.encode(x[:1])
    vals = torch.linspace(-limit, limit, steps)
    codes = mu.repeat(steps, 1)
    codes[:, dim] = vals
    imgs = torch.sigmoid(model.decoder(codes))
    return imgs


if __name__ == "__main__":
    model = BetaVAE(z_dim=10, nc=1, beta=4.0)
    x = torch.rand(8, 1, 64, 64)
    x_logits, mu, logvar, z = model(x)
    total, recon, dim_kl = model.loss(x, x_logits, mu, logvar)
    gap = log_likelihood_gap(mu, logvar, z)
    grid = traverse(model, x, dim=3)
    color = BetaVAE(z_dim=6, nc=3, beta=1.0)
    rgb = torch.rand(2, 3, 64, 64)
    rgb_logits, rgb_mu, rgb_logvar, rgb_z = color(rgb)
    z_prior = torch.randn(4, 6)
    samples = torch.sigmoid(color.decoder(z_prior))
