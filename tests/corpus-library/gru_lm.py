# Word-level GRU language model over right-padded batches (no packing): the
# padding mask zeroes padded outputs and is used with masked_fill for the
# loss; hidden state is carried between chunks with detach().
import torch
import torch.nn as nn
import torch.nn.functional as F


class GRULanguageModel(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, num_layers=2, dropout=0.2, pad_idx=0):
        super().__init__()
        self.pad_idx = pad_idx
        self.num_layers = num_layers
        self.hidden_dim = hidden_dim
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_idx)
        self.drop = nn.Dropout(dropout)
        self.rnn = nn.GRU(emb_dim, hidden_dim, num_layers=num_layers, dropout=dropout, batch_first=True)
        self.decoder = nn.Linear(hidden_dim, vocab_size)

    def init_hidden(self, batch_size):
        weight = next(self.parameters())
        return weight.new_zeros(self.num_layers, batch_size, self.hidden_dim)

    def forward(self, tokens, hidden=None):
        mask = tokens.ne(self.pad_idx)  # B, T
        emb = self.drop(self.embed(tokens))
        output, hidden = self.rnn(emb, hidden)
        output = output.masked_fill(~mask.unsqueeze(-1), 0.0)
        logits = self.decoder(self.drop(output))
        return logits, hidden, mask


def masked_lm_loss(logits, targets, mask):
    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # B, T
    nll = nll.masked_fill(~mask, 0.0)
    return nll.sum() / mask.sum().clamp(min=1)
