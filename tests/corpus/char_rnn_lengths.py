# Character-level name classifier and generator over variable-length batches:
# embeddings -> bidirectional LSTM over the padded batch with an explicit
# (h0, c0), padded positions zeroed with a length mask, the last valid output
# of each sequence picked with gather on lengths - 1, the backward direction
# read at t = 0, and h_n viewed as (layers, dirs, B, H). A GRUCell decoder is
# unrolled by hand.
import torch
import torch.nn as nn
import torch.nn.functional as F


class CharEncoder(nn.Module):
    def __init__(self, n_chars, emb_dim, hidden, num_layers=2, pad_idx=0):
        super().__init__()
        self.embedding = nn.Embedding(n_chars, emb_dim, padding_idx=pad_idx)
        self.lstm = nn.LSTM(emb_dim, hidden, num_layers=num_layers, batch_first=True, bidirectional=True)
        self.hidden = hidden
        self.num_layers = num_layers

    def forward(self, chars, lengths):
        emb = self.embedding(chars)  # B, T, E
        h0 = emb.new_zeros(self.num_layers * 2, chars.size(0), self.hidden)
        c0 = torch.zeros_like(h0)
        outputs, (h_n, c_n) = self.lstm(emb, (h0, c0))
        valid = mask_from_lengths(lengths, chars.size(1))
        outputs = outputs * valid.unsqueeze(-1).to(outputs.dtype)
        fwd, bwd = outputs.split(self.hidden, dim=-1)
        # last valid time step of the forward direction, first step of the backward one
        idx = (lengths - 1).view(-1, 1, 1).expand(-1, 1, fwd.size(2))
        last = torch.cat([fwd.gather(1, idx).squeeze(1), bwd[:, 0]], dim=-1)
        # final layer hidden states: h_n is (num_layers * 2, B, H)
        h_n = h_n.view(self.num_layers, 2, chars.size(0), self.hidden)
        final = torch.cat([h_n[-1, 0], h_n[-1, 1]], dim=-1)
        return outputs, last, final


class NameClassifier(nn.Module):
    def __init__(self, n_chars, n_langs, emb_dim=32, hidden=64):
        super().__init__()
        self.encoder = CharEncoder(n_chars, emb_dim, hidden)
        self.classifier = nn.Sequential(nn.Linear(4 * hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_langs))

    def forward(self, chars, lengths):
        outputs, last, final = self.encoder(chars, lengths)
        feats = torch.cat([last, final], dim=1)
        return self.classifier(feats), outputs


class CharDecoder(nn.Module):
    def __init__(self, n_chars, emb_dim, hidden, cond_dim):
        super().__init__()
        self.embedding = nn.Embedding(n_chars, emb_dim)
        self.init_h = nn.Linear(cond_dim, hidden)
        self.cell = nn.GRUCell(emb_dim + cond_dim, hidden)
        self.out = nn.Linear(hidden, n_chars)

    def forward(self, cond, targets):
        batch, steps = targets.shape
        h = torch.tanh(self.init_h(cond))
        logits = []
        for t in range(steps):
            inp = torch.cat([self.embedding(targets[:, t]), cond], dim=1)
            h = self.cell(inp, h)
            step_logits = self.out(h)
            logits.append(step_logits)
        return torch.stack(logits, dim=1)


def mask_from_lengths(lengths, max_len):
    positions = torch.arange(max_len, device=lengths.device).unsqueeze(0)
    return positions < lengths.unsqueeze(1)


if __name__ == "__main__":
    n_chars, n_langs = 60, 18
    chars = torch.randint(1, n_chars, (5, 12))
    lengths = torch.tensor([12, 7, 9, 3, 10])
    mask = mask_from_lengths(lengths, chars.size(1))
    chars = chars.masked_fill(~mask, 0)

    model = NameClassifier(n_chars, n_langs, emb_dim=24, hidden=40)
    lang_logits, enc_outputs = model(chars, lengths)
    langs = torch.randint(0, n_langs, (5,))
    cls_loss = F.cross_entropy(lang_logits, langs)

    decoder = CharDecoder(n_chars, emb_dim=16, hidden=48, cond_dim=n_langs)
    cond = F.one_hot(langs, n_langs).float()
    dec_logits = decoder(cond, chars)
    token_loss = F.cross_entropy(dec_logits[:, :-1].reshape(-1, n_chars), chars[:, 1:].reshape(-1), reduction="none")
    token_loss = token_loss.view(5, -1) * mask[:, 1:]
    gen_loss = token_loss.sum() / mask[:, 1:].sum()
