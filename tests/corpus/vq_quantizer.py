import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizer(nn.Module):
    def __init__(self, num_codes=128, code_dim=32, beta=0.25):
        super().__init__()
        self.codebook = nn.Embedding(num_codes, code_dim)
        self.beta = beta

    def forward(self, z):
        b, c, h, w = z.shape
        z_perm = z.permute(0, 2, 3, 1).contiguous()
        flat = z_perm.view(-1, c)
        dist = torch.cdist(flat, self.codebook.weight)
        idx = dist.argmin(dim=1)
        quant = self.codebook(idx).view(b, h, w, c)
        commit = F.mse_loss(quant.detach(), z_perm)
        codebook_loss = F.mse_loss(quant, z_perm.detach())
        loss = codebook_loss + self.beta * commit
        quant = z_perm + (quant - z_perm).detach()
        quant = quant.permute(0, 3, 1, 2)
        return quant, loss, idx.view(b, h, w)


class Encoder(nn.Module):
    def __init__(self, code_dim=32):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 32, 4, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, code_dim, 4, stride=2, padding=1),
        )

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    enc = Encoder()
    vq = VectorQuantizer()
    x = torch.randn(2, 3, 64, 64)
    z = enc(x)
    quant, loss, codes = vq(z)
    one_hot = F.one_hot(codes, num_classes=128)
    usage = one_hot.float().mean(dim=(0, 1, 2))
