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


if __name__ == "__main__":
    model = GRULanguageModel(vocab_size=1000, emb_dim=64, hidden_dim=128, num_layers=2)
    batch = torch.randint(1, 1000, (6, 25))
    inputs = batch[:, :-1]
    targets = batch[:, 1:]
    hidden = model.init_hidden(6)
    logits, hidden, mask = model(inputs, hidden)
    loss = masked_lm_loss(logits, targets, mask)

    hidden = hidden.detach()
    chunk = torch.randint(1, 1000, (6, 9))
    logits2, hidden2, mask2 = model(chunk, hidden)
    lengths = mask2.sum(dim=1)
    last_idx = (lengths - 1).clamp(min=0)
    last_logits = logits2[torch.arange(6), last_idx]
    print(logits.shape, loss, last_logits.shape, hidden2.shape)
