# CLIP-style dual encoder with a symmetric InfoNCE loss: an image tower (tiny
# ResNet-ish CNN with global pooling), a text tower (transformer encoder over
# tokens, pooled at the EOT position via argmax), projections, L2 normalise,
# and a learnable temperature.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ImageTower(nn.Module):
    def __init__(self, width=64, embed_dim=128):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        self.layer = nn.Sequential(
            nn.Conv2d(width, width * 2, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(width * 2),
            nn.ReLU(inplace=True),
        )
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.proj = nn.Linear(width * 2, embed_dim)

    def forward(self, x):
        x = self.layer(self.stem(x))
        x = self.pool(x).flatten(1)
        return self.proj(x)


class TextTower(nn.Module):
    def __init__(self, vocab_size=1000, context_length=32, width=96, heads=4, layers=2, embed_dim=128):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, width)
        self.positional_embedding = nn.Parameter(torch.empty(context_length, width))
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=width * 4, batch_first=True, norm_first=True)
        self.transformer = nn.TransformerEncoder(layer, num_layers=layers)
        self.ln_final = nn.LayerNorm(width)
        self.text_projection = nn.Parameter(torch.empty(width, embed_dim))

    def forward(self, text):
        x = self.token_embedding(text)
        x = x + self.positional_embedding[: text.shape[1]]
        x = self.transformer(x)
        x = self.ln_final(x)
        eot = text.argmax(dim=-1)
        x = x[torch.arange(x.shape[0]), eot] @ self.text_projection
        return x


class CLIP(nn.Module):
    def __init__(self, embed_dim=128):
        super().__init__()
        self.visual = ImageTower(embed_dim=embed_dim)
        self.text = TextTower(embed_dim=embed_dim)
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def forward(self, image, text):
        image_features = F.normalize(self.visual(image), dim=-1)
        text_features = F.normalize(self.text(text), dim=-1)
        logit_scale = self.logit_scale.exp()
        logits_per_image = logit_scale * image_features @ text_features.t()
        logits_per_text = logits_per_image.t()
        return logits_per_image, logits_per_text


def clip_loss(logits_per_image, logits_per_text):
    labels = torch.arange(logits_per_image.shape[0], device=logits_per_image.device)
    return (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
