# Conformer encoder block (Gulati et al. 2020): macaron feed-forward halves,
# relative-free multi-head self-attention, and a convolution module that goes
# [B, T, C] -> [B, C, T] for pointwise conv + GLU + depthwise Conv1d +
# BatchNorm1d + Swish, then back. A conv subsampling front end feeds it.
import torch
import torch.nn as nn
import torch.nn.functional as F


class FeedForwardModule(nn.Module):
    def __init__(self, d_model, expansion=4, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_model * expansion)
        self.fc2 = nn.Linear(d_model * expansion, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = self.norm(x)
        h = F.silu(self.fc1(h))
        h = self.dropout(h)
        h = self.fc2(h)
        return self.dropout(h)


class ConvModule(nn.Module):
    def __init__(self, d_model, kernel_size=31, dropout=0.1):
        super().__init__()
        assert (kernel_size - 1) % 2 == 0
        self.norm = nn.LayerNorm(d_model)
        self.pointwise1 = nn.Conv1d(d_model, 2 * d_model, kernel_size=1)
        self.depthwise = nn.Conv1d(d_model, d_model, kernel_size, padding=(kernel_size - 1) // 2, groups=d_model)
        self.bn = nn.BatchNorm1d(d_model)
        self.pointwise2 = nn.Conv1d(d_model, d_model, kernel_size=1)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = self.norm(x).transpose(1, 2)  # B, C, T
        h = self.pointwise1(h)
        h = F.glu(h, dim=1)
        h = self.depthwise(h)
        h = self.bn(h)
        h = h * torch.sigmoid(h)
        h = self.pointwise2(h)
        h = self.dropout(h)
        return h.transpose(1, 2)


class MHSAModule(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.norm = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, pad_mask=None):
        B, T, C = x.size()
        h = self.norm(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q = q.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / (self.head_dim ** 0.5)
        if pad_mask is not None:
            scores = scores.masked_fill(pad_mask[:, None, None, :], float("-inf"))
        attn = scores.softmax(dim=-1)
        ctx = (attn @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.dropout(self.out(ctx))


class ConformerBlock(nn.Module):
    def __init__(self, d_model=144, n_heads=4, kernel_size=31):
        super().__init__()
        self.ff1 = FeedForwardModule(d_model)
        self.mhsa = MHSAModule(d_model, n_heads)
        self.conv = ConvModule(d_model, kernel_size)
        self.ff2 = FeedForwardModule(d_model)
        self.final_norm = nn.LayerNorm(d_model)

    def forward(self, x, pad_mask=None):
        x = x + 0.5 * self.ff1(x)
        x = x + self.mhsa(x, pad_mask)
        x = x + self.conv(x)
        x = x + 0.5 * self.ff2(x)
        return self.final_norm(x)


class Conv2dSubsampling(nn.Module):
    def __init__(self, n_mels, d_model):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, d_model, 3, stride=2),
            nn.ReLU(),
            nn.Conv2d(d_model, d_model, 3, stride=2),
            nn.ReLU(),
        )
        freq = ((n_mels - 1) // 2 - 1) // 2
        self.proj = nn.Linear(d_model * freq, d_model)

    def forward(self, feats):
        x = self.conv(feats.unsqueeze(1))  # B, C, T', F'
        b, c, t, f = x.shape
        x = x.permute(0, 2, 1, 3).reshape(b, t, c * f)
        return self.proj(x)


class ConformerEncoder(nn.Module):
    def __init__(self, n_mels=80, d_model=64, n_heads=4, n_layers=2, kernel_size=15, vocab=32):
        super().__init__()
        self.subsample = Conv2dSubsampling(n_mels, d_model)
        self.blocks = nn.ModuleList([ConformerBlock(d_model, n_heads, kernel_size) for _ in range(n_layers)])
        self.ctc_head = nn.Linear(d_model, vocab)

    def forward(self, feats, feat_lens):
        x = self.subsample(feats)
        out_lens = ((feat_lens - 1) // 2 - 1) // 2
        steps = torch.arange(x.shape[1], device=x.device)
        pad_mask = steps[None, :] >= out_lens[:, None]
        for block in self.blocks:
            x = block(x, pad_mask)
        log_probs = F.log_softmax(self.ctc_head(x), dim=-1)
        return log_probs, out_lens


if __name__ == "__main__":
    block = ConformerBlock(d_model=48, n_heads=4, kernel_size=7)
    seq = torch.randn(2, 25, 48)
    seq_out = block(seq)

    encoder = ConformerEncoder(n_mels=40, d_model=64, n_heads=4, n_layers=2, kernel_size=15, vocab=29)
    feats = torch.randn(3, 120, 40)
    feat_lens = torch.tensor([120, 100, 87])
    log_probs, out_lens = encoder(feats, feat_lens)
    frame_targets = torch.randint(0, 29, (3, 29))
    valid = torch.arange(log_probs.size(1))[None, :] < out_lens[:, None]
    nll = F.nll_loss(log_probs.transpose(1, 2), frame_targets, reduction="none")
    loss = (nll * valid).sum() / valid.sum()
