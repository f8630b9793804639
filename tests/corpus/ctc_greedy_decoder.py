import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2dSubsampling(nn.Module):
    """(B, 1, T, F) spectrogram -> (B, T', C * F') with two stride-2 convs (ESPnet style)."""

    def __init__(self, idim, odim):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, odim, 3, 2),
            nn.ReLU(),
            nn.Conv2d(odim, odim, 3, 2),
            nn.ReLU(),
        )
        self.freq_out = ((idim - 1) // 2 - 1) // 2

    def forward(self, x, lengths):
        x = self.conv(x)
        b, c, t, f = x.size()
        x = x.transpose(1, 2).contiguous().view(b, t, c * f)
        lengths = ((lengths - 1) // 2 - 1) // 2
        return x, lengths


class AcousticModel(nn.Module):
    def __init__(self, n_mels=40, conv_channels=16, hidden_size=64, num_layers=2, vocab_size=29, dropout=0.1):
        super().__init__()
        self.subsample = Conv2dSubsampling(n_mels, conv_channels)
        rnn_in = conv_channels * self.subsample.freq_out
        self.input_proj = nn.Linear(rnn_in, hidden_size)
        self.lstm = nn.LSTM(hidden_size, hidden_size, num_layers=num_layers, batch_first=True,
                            bidirectional=True, dropout=dropout)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(2 * hidden_size, vocab_size)

    def forward(self, spectrogram, lengths):
        x, out_lengths = self.subsample(spectrogram, lengths)
        x = self.input_proj(x)
        x, _ = self.lstm(x)
        x = self.dropout(x)
        logits = self.classifier(x)
        log_probs = F.log_softmax(logits, dim=-1)
        return log_probs, out_lengths


def lengths_to_mask(lengths, max_len):
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def greedy_decode(log_probs, lengths, blank=0):
    best_path = log_probs.argmax(dim=-1)  # (B, T)
    valid = lengths_to_mask(lengths, best_path.size(1))
    changed = best_path[:, 1:] != best_path[:, :-1]
    first = torch.ones_like(best_path[:, :1], dtype=torch.bool)
    keep = torch.cat([first, changed], dim=1)
    keep = keep & (best_path != blank) & valid
    decoded = torch.where(keep, best_path, torch.full_like(best_path, -1))
    num_tokens = keep.sum(dim=1)
    return decoded, num_tokens


def best_path_scores(log_probs, lengths):
    max_lp, _ = log_probs.max(dim=-1)
    valid = lengths_to_mask(lengths, log_probs.size(1)).to(max_lp.dtype)
    return (max_lp * valid).sum(dim=1)


def training_step(model, batch):
    # frame-level cross-entropy against a forced alignment (pre-training before CTC)
    spectrogram, spec_lengths, alignments = batch
    log_probs, out_lengths = model(spectrogram, spec_lengths)
    valid = lengths_to_mask(out_lengths, log_probs.size(1))
    nll = F.nll_loss(log_probs.transpose(1, 2), alignments, reduction="none")  # (B, T')
    loss = (nll * valid).sum() / valid.sum()
    return loss


if __name__ == "__main__":
    model = AcousticModel()
    spectrogram = torch.randn(3, 1, 160, 40)
    spec_lengths = torch.tensor([160, 131, 97])
    log_probs, out_lengths = model(spectrogram, spec_lengths)
    decoded, num_tokens = greedy_decode(log_probs, out_lengths)
    scores = best_path_scores(log_probs, out_lengths)
    alignments = torch.randint(0, 29, (3, log_probs.size(1)))
    loss = training_step(model, (spectrogram, spec_lengths, alignments))
    loss.backward()
