# Whisper-style audio encoder front end (openai/whisper model.py): log-mel
# input [B, n_mels, T] -> two Conv1d + GELU (the second with stride 2) ->
# [B, T/2, d] plus fixed sinusoidal positions, then pre-norm residual
# attention blocks. The text decoder step uses causal self-attention and
# cross-attention over the audio features.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def sinusoids(length: int, channels: int, max_timescale: float = 10000.0) -> torch.Tensor:
    assert channels % 2 == 0
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, None] * inv_timescales[None, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class ResidualAttentionBlock(nn.Module):
    def __init__(self, n_state: int, n_head: int, cross_attention: bool = False):
        super().__init__()
        self.attn = nn.MultiheadAttention(n_state, n_head, batch_first=True)
        self.attn_ln = nn.LayerNorm(n_state)
        self.cross_attn = nn.MultiheadAttention(n_state, n_head, batch_first=True) if cross_attention else None
        self.cross_attn_ln = nn.LayerNorm(n_state) if cross_attention else None
        n_mlp = n_state * 4
        self.mlp = nn.Sequential(nn.Linear(n_state, n_mlp), nn.GELU(), nn.Linear(n_mlp, n_state))
        self.mlp_ln = nn.LayerNorm(n_state)

    def forward(self, x, xa=None, mask=None):
        h = self.attn_ln(x)
        attn_out = self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        x = x + attn_out
        if self.cross_attn is not None:
            h = self.cross_attn_ln(x)
            cross_out, cross_w = self.cross_attn(h, xa, xa)
            x = x + cross_out
        x = x + self.mlp(self.mlp_ln(x))
        return x


class AudioEncoder(nn.Module):
    def __init__(self, n_mels: int, n_ctx: int, n_state: int, n_head: int, n_layer: int):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, n_state, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(n_state, n_state, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(n_ctx, n_state))
        self.blocks = nn.ModuleList([ResidualAttentionBlock(n_state, n_head) for _ in range(n_layer)])
        self.ln_post = nn.LayerNorm(n_state)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.permute(0, 2, 1)
        n_frames = x.shape[1]
        x = (x + self.positional_embedding[:n_frames]).to(x.dtype)
        for block in self.blocks:
            x = block(x)
        return self.ln_post(x)


class TextDecoder(nn.Module):
    def __init__(self, n_vocab: int, n_ctx: int, n_state: int, n_head: int, n_layer: int):
        super().__init__()
        self.token_embedding = nn.Embedding(n_vocab, n_state)
        self.positional_embedding = nn.Parameter(torch.empty(n_ctx, n_state).normal_(std=0.01))
        self.blocks = nn.ModuleList(
            [ResidualAttentionBlock(n_state, n_head, cross_attention=True) for _ in range(n_layer)]
        )
        self.ln = nn.LayerNorm(n_state)
        mask = torch.empty(n_ctx, n_ctx).fill_(-math.inf).triu_(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, tokens: torch.Tensor, xa: torch.Tensor) -> torch.Tensor:
        n_tok = tokens.shape[-1]
        x = self.token_embedding(tokens) + self.positional_embedding[:n_tok]
        x = x.to(xa.dtype)
        for block in self.blocks:
            x = block(x, xa, mask=self.mask[:n_tok, :n_tok])
        x = self.ln(x)
        logits = (x @ torch.transpose(self.token_embedding.weight.to(x.dtype), 0, 1)).float()
        return logits


class Whisper(nn.Module):
    def __init__(self, n_mels=40, n_audio_ctx=50, n_text_ctx=16, n_vocab=200, n_state=64, n_head=4, n_layer=2):
        super().__init__()
        self.encoder = AudioEncoder(n_mels, n_audio_ctx, n_state, n_head, n_layer)
        self.decoder = TextDecoder(n_vocab, n_text_ctx, n_state, n_head, n_layer)

    def forward(self, mel, tokens):
        audio_features = self.encoder(mel)
        return self.decoder(tokens, audio_features)


if __name__ == "__main__":
    model = Whisper(n_mels=40, n_audio_ctx=50, n_text_ctx=16, n_vocab=200, n_state=64, n_head=4, n_layer=2).eval()
    mel = torch.randn(2, 40, 100)
    tokens = torch.randint(0, 200, (2, 6))
    with torch.no_grad():
        audio_features = model.encoder(mel)
        logits = model.decoder(tokens, audio_features)
        next_tok = logits[:, -1].argmax(dim=-1, keepdim=True)
        tokens = torch.cat([tokens, next_tok], dim=-1)
        logits2 = model(mel, tokens)
    short_mel = torch.randn(1, 40, 37)
    short_feats = model.encoder(short_mel)
