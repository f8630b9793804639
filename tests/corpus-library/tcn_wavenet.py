# WaveNet / TCN style stack of dilated causal Conv1d layers: left padding with
# F.pad, gated activations (tanh * sigmoid), residual and skip connections,
# and an output head predicting 256 mu-law classes per time step.
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalConv1d(nn.Conv1d):
    def __init__(self, in_channels, out_channels, kernel_size, dilation=1):
        super().__init__(in_channels, out_channels, kernel_size, dilation=dilation)
        self.left_padding = (kernel_size - 1) * dilation

    def forward(self, x):
        x = F.pad(x, (self.left_padding, 0))
        return super().forward(x)


class ResidualLayer(nn.Module):
    def __init__(self, residual_channels, skip_channels, dilation, cond_channels=None):
        super().__init__()
        self.filter_conv = CausalConv1d(residual_channels, residual_channels, 2, dilation)
        self.gate_conv = CausalConv1d(residual_channels, residual_channels, 2, dilation)
        self.res_conv = nn.Conv1d(residual_channels, residual_channels, 1)
        self.skip_conv = nn.Conv1d(residual_channels, skip_channels, 1)
        self.cond = nn.Linear(cond_channels, residual_channels) if cond_channels else None

    def forward(self, x, cond=None):
        f = self.filter_conv(x)
        g = self.gate_conv(x)
        if self.cond is not None and cond is not None:
            c = self.cond(cond).unsqueeze(-1)
            f = f + c
            g = g + c
        z = torch.tanh(f) * torch.sigmoid(g)
        skip = self.skip_conv(z)
        residual = self.res_conv(z) + x
        return residual, skip


class WaveNet(nn.Module):
    def __init__(self, n_classes=256, residual_channels=32, skip_channels=64, n_layers=8, n_speakers=None):
        super().__init__()
        self.n_classes = n_classes
        self.embed = nn.Conv1d(n_classes, residual_channels, 1)
        cond_dim = 16 if n_speakers else None
        self.speaker = nn.Embedding(n_speakers, 16) if n_speakers else None
        self.layers = nn.ModuleList(
            [ResidualLayer(residual_channels, skip_channels, 2 ** (i % 4), cond_dim) for i in range(n_layers)]
        )
        self.out1 = nn.Conv1d(skip_channels, skip_channels, 1)
        self.out2 = nn.Conv1d(skip_channels, n_classes, 1)

    @property
    def receptive_field(self):
        return sum(layer.filter_conv.left_padding for layer in self.layers) + 1

    def forward(self, audio_codes, speaker_ids=None):
        x = F.one_hot(audio_codes, self.n_classes).float().transpose(1, 2)  # B, 256, T
        x = self.embed(x)
        cond = self.speaker(speaker_ids) if self.speaker is not None else None
        skips = 0
        for layer in self.layers:
            x, s = layer(x, cond)
            skips = skips + s
        out = self.out2(F.relu(self.out1(F.relu(skips))))
        return out  # B, n_classes, T
