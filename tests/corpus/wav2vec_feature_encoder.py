# wav2vec 2.0 front end: a stack of strided Conv1d layers (kernel / stride
# lists zipped together, GroupNorm only on the first layer), feature
# projection with LayerNorm, time-step masking with a learned mask embedding
# via torch.where, and a grouped positional conv embedding whose even kernel
# produces one extra frame that is removed.
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvLayer(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, kernel: int, stride: int, group_norm: bool) -> None:
        super().__init__()
        self.conv = nn.Conv1d(in_ch, out_ch, kernel, stride=stride, bias=False)
        self.norm: Optional[nn.GroupNorm] = nn.GroupNorm(out_ch, out_ch) if group_norm else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        return F.gelu(x)


class FeatureEncoder(nn.Module):
    def __init__(self, dims: List[int], kernels: List[int], strides: List[int]) -> None:
        super().__init__()
        layers = []
        in_ch = 1
        for i, (d, k, s) in enumerate(zip(dims, kernels, strides)):
            layers.append(ConvLayer(in_ch, d, k, s, group_norm=(i == 0)))
            in_ch = d
        self.layers = nn.ModuleList(layers)
        self.kernels, self.strides = kernels, strides

    def output_lengths(self, lengths: torch.Tensor) -> torch.Tensor:
        for k, s in zip(self.kernels, self.strides):
            lengths = torch.div(lengths - k, s, rounding_mode="floor") + 1
        return lengths

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        x = wav[:, None, :]
        for layer in self.layers:
            x = layer(x)
        return x


class PositionalConvEmbedding(nn.Module):
    def __init__(self, dim: int, kernel: int = 16, groups: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=groups)
        self.remove = 1 if kernel % 2 == 0 else 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x.transpose(1, 2))
        if self.remove > 0:
            h = h[:, :, :-self.remove]
        return F.gelu(h).transpose(1, 2)


class Wav2Vec2Frontend(nn.Module):
    def __init__(self, conv_dim: int = 64, hidden: int = 96, mask_prob: float = 0.3) -> None:
        super().__init__()
        dims = [conv_dim] * 5
        kernels = [10, 3, 3, 2, 2]
        strides = [5, 2, 2, 2, 2]
        self.feature_extractor = FeatureEncoder(dims, kernels, strides)
        self.layer_norm = nn.LayerNorm(conv_dim)
        self.projection = nn.Linear(conv_dim, hidden)
        self.dropout = nn.Dropout(0.1)
        self.mask_emb = nn.Parameter(torch.zeros(hidden).uniform_())
        self.pos_conv = PositionalConvEmbedding(hidden)
        self.encoder_norm = nn.LayerNorm(hidden)
        self.mask_prob = mask_prob

    def compute_mask(self, batch: int, frames: int) -> torch.Tensor:
        return torch.rand(batch, frames) < self.mask_prob

    def forward(self, wav: torch.Tensor, apply_mask: bool = True) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        feats = self.feature_extractor(wav)            # [B, C, T]
        feats = feats.transpose(1, 2)                  # [B, T, C]
        unprojected = self.layer_norm(feats)
        x = self.dropout(self.projection(unprojected))
        B, T, _ = x.shape
        if apply_mask:
            mask = self.compute_mask(B, T)
            x = torch.where(mask.unsqueeze(-1), self.mask_emb.to(x.dtype), x)
        else:
            mask = torch.zeros(B, T, dtype=torch.bool)
        x = x + self.pos_conv(x)
        x = self.encoder_norm(x)
        return x, unprojected, mask


if __name__ == "__main__":
    model = Wav2Vec2Frontend(conv_dim=64, hidden=96)
    wav = torch.randn(2, 8000)
    hidden, unprojected, mask = model(wav)
    lengths = torch.tensor([8000, 6400])
    frame_lengths = model.feature_extractor.output_lengths(lengths)
    pad_mask = torch.arange(hidden.size(1))[None, :] >= frame_lengths[:, None]
    masked_count = mask.sum(dim=1)
    clean, _, no_mask = model(torch.randn(3, 4321), apply_mask=False)
    raw_feats = model.feature_extractor(wav)
    pos = PositionalConvEmbedding(32, kernel=7, groups=8)
    pos_out = pos(torch.randn(2, 20, 32))
