# Kim (2014) CNN for sentence classification: embeddings transposed to
# (B, E, T), parallel Conv1d filters of several widths, max-over-time pooling
# with .max(dim=2), concatenation, dropout and a linear classifier.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TextCNNConfig:
    vocab_size = 5000
    embed_dim = 100
    num_filters = 64
    filter_sizes = (3, 4, 5)
    num_classes = 4
    dropout = 0.5

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)


class TextCNN(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embed_dim, padding_idx=0)
        self.convs = nn.ModuleList(
            [nn.Conv1d(cfg.embed_dim, cfg.num_filters, kernel_size=k) for k in cfg.filter_sizes]
        )
        self.dropout = nn.Dropout(cfg.dropout)
        self.fc = nn.Linear(cfg.num_filters * len(cfg.filter_sizes), cfg.num_classes)

    @property
    def out_features(self):
        return self.fc.out_features

    def forward(self, tokens):
        emb = self.embedding(tokens)          # B, T, E
        emb = emb.permute(0, 2, 1)            # B, E, T
        pooled = []
        for conv in self.convs:
            feat = F.relu(conv(emb))          # B, F, T-k+1
            feat, _ = feat.max(dim=2)         # B, F
            pooled.append(feat)
        cat = torch.cat(pooled, dim=1)
        cat = self.dropout(cat)
        return self.fc(cat)


class CharCNN(nn.Module):
    """Same idea with stacked convs and adaptive pooling over characters."""

    def __init__(self, n_chars=70, n_classes=2):
        super().__init__()
        self.embed = nn.Embedding(n_chars, 16)
        self.conv1 = nn.Conv1d(16, 64, kernel_size=7, padding=3)
        self.pool1 = nn.MaxPool1d(3)
        self.conv2 = nn.Conv1d(64, 64, kernel_size=5)
        self.gap = nn.AdaptiveMaxPool1d(1)
        self.out = nn.Linear(64, n_classes)

    def forward(self, chars):
        x = self.embed(chars).transpose(1, 2)
        x = self.pool1(F.relu(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = self.gap(x).squeeze(-1)
        return self.out(x)


if __name__ == "__main__":
    cfg = TextCNNConfig(num_classes=5, filter_sizes=(2, 3, 4, 5))
    model = TextCNN(cfg)
    tokens = torch.randint(0, cfg.vocab_size, (16, 50))
    logits = model(tokens)
    labels = torch.randint(0, model.out_features, (16,))
    loss = F.cross_entropy(logits, labels)

    short = torch.randint(0, cfg.vocab_size, (4, 12))
    short_logits = model(short)

    char_model = CharCNN()
    chars = torch.randint(0, 70, (8, 300))
    char_logits = char_model(chars)
    print(logits.shape, short_logits.shape, char_logits.shape)
