# Building blocks of a diffusers UNet2DModel: ResnetBlock2D (GroupNorm ->
# SiLU -> conv, time embedding projected and added as [:, :, None, None],
# 1x1 conv shortcut when channel counts differ), Downsample2D (strided conv)
# and Upsample2D (nearest interpolation x2 + conv), wired into a tiny
# two-level UNet with a timestep MLP.
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


def get_timestep_embedding(timesteps: torch.Tensor, embedding_dim: int, max_period: int = 10000) -> torch.Tensor:
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(0, half_dim, dtype=torch.float32, device=timesteps.device)
    exponent = exponent / half_dim
    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
    return emb


class TimestepEmbedding(nn.Module):
    def __init__(self, in_channels: int, time_embed_dim: int):
        super().__init__()
        self.linear_1 = nn.Linear(in_channels, time_embed_dim)
        self.act = nn.SiLU()
        self.linear_2 = nn.Linear(time_embed_dim, time_embed_dim)

    def forward(self, sample):
        return self.linear_2(self.act(self.linear_1(sample)))


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels: int, out_channels: Optional[int] = None, temb_channels: int = 128,
                 groups: int = 8, eps: float = 1e-6, dropout: float = 0.0, output_scale_factor: float = 1.0):
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        self.output_scale_factor = output_scale_factor
        self.norm1 = nn.GroupNorm(num_groups=groups, num_channels=in_channels, eps=eps, affine=True)
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(num_groups=groups, num_channels=out_channels, eps=eps, affine=True)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.nonlinearity = nn.SiLU()
        self.use_in_shortcut = in_channels != out_channels
        self.conv_shortcut = None
        if self.use_in_shortcut:
            self.conv_shortcut = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, input_tensor: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        hidden_states = input_tensor
        hidden_states = self.norm1(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.conv1(hidden_states)
        temb = self.nonlinearity(temb)
        temb = self.time_emb_proj(temb)[:, :, None, None]
        hidden_states = hidden_states + temb
        hidden_states = self.norm2(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.conv2(hidden_states)
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        output_tensor = (input_tensor + hidden_states) / self.output_scale_factor
        return output_tensor


class Downsample2D(nn.Module):
    def __init__(self, channels: int, use_conv: bool = True, out_channels: Optional[int] = None):
        super().__init__()
        out_channels = out_channels or channels
        if use_conv:
            self.conv = nn.Conv2d(channels, out_channels, kernel_size=3, stride=2, padding=1)
        else:
            assert channels == out_channels
            self.conv = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, hidden_states):
        return self.conv(hidden_states)


class Upsample2D(nn.Module):
    def __init__(self, channels: int, out_channels: Optional[int] = None):
        super().__init__()
        out_channels = out_channels or channels
        self.conv = nn.Conv2d(channels, out_channels, kernel_size=3, padding=1)

    def forward(self, hidden_states, output_size=None):
        if output_size is None:
            hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
        else:
            hidden_states = F.interpolate(hidden_states, size=output_size, mode="nearest")
        return self.conv(hidden_states)


class TinyUNet(nn.Module):
    def __init__(self, in_channels=3, block_out_channels=(32, 64), temb_dim=128, groups=8):
        super().__init__()
        c0, c1 = block_out_channels
        self.base_dim = c0
        self.time_embedding = TimestepEmbedding(c0, temb_dim)
        self.conv_in = nn.Conv2d(in_channels, c0, kernel_size=3, padding=1)
        self.down_res = ResnetBlock2D(c0, c0, temb_dim, groups)
        self.down = Downsample2D(c0)
        self.mid_res = ResnetBlock2D(c0, c1, temb_dim, groups)
        self.up = Upsample2D(c1)
        self.up_res = ResnetBlock2D(c1 + c0, c0, temb_dim, groups)
        self.conv_norm_out = nn.GroupNorm(groups, c0)
        self.conv_out = nn.Conv2d(c0, in_channels, kernel_size=3, padding=1)

    def forward(self, sample, timesteps):
        t_emb = get_timestep_embedding(timesteps, self.base_dim)
        emb = self.time_embedding(t_emb)
        sample = self.conv_in(sample)
        skip = self.down_res(sample, emb)
        h = self.down(skip)
        h = self.mid_res(h, emb)
        h = self.up(h, output_size=skip.shape[-2:])
        h = torch.cat([h, skip], dim=1)
        h = self.up_res(h, emb)
        h = F.silu(self.conv_norm_out(h))
        return self.conv_out(h)


if __name__ == "__main__":
    block = ResnetBlock2D(16, 32, temb_channels=64, groups=8)
    x = torch.randn(2, 16, 12, 12)
    temb = torch.randn(2, 64)
    y = block(x, temb)
    down = Downsample2D(32, use_conv=False)
    y_down = down(y)
    up = Upsample2D(32, out_channels=16)
    y_up = up(y_down)

    unet = TinyUNet(in_channels=3, block_out_channels=(32, 64), temb_dim=128, groups=8)
    noisy = torch.randn(4, 3, 16, 16)
    timesteps = torch.randint(0, 1000, (4,))
    noise_pred = unet(noisy, timesteps)
    noise = torch.randn_like(noisy)
    loss = F.mse_loss(noise_pred, noise)
    odd = torch.randn(1, 3, 15, 15)
    odd_pred = unet(odd, torch.tensor([10]))
