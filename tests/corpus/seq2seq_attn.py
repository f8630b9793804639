import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, vocab, emb, hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hid, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(hid * 2, hid)

    def forward(self, src):
        embedded = self.embedding(src)
        outputs, (h, c) = self.rnn(embedded)
        h = torch.tanh(self.fc(torch.cat((h[-2], h[-1]), dim=1)))
        return outputs, h


class BahdanauAttention(nn.Module):
    def __init__(self, hid):
        super().__init__()
        self.attn = nn.Linear(hid * 3, hid)
        self.v = nn.Linear(hid, 1, bias=False)

    def forward(self, hidden, enc_out):
        src_len = enc_out.shape[1]
        hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)
        energy = torch.tanh(self.attn(torch.cat((hidden, enc_out), dim=2)))
        scores = self.v(energy).squeeze(2)
        return F.softmax(scores, dim=1)


class Decoder(nn.Module):
    def __init__(self, vocab, emb, hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.attention = BahdanauAttention(hid)
        self.rnn = nn.GRU(hid * 2 + emb, hid, batch_first=True)
        self.out = nn.Linear(hid * 3 + emb, vocab)

    def forward(self, token, hidden, enc_out):
        embedded = self.embedding(token.unsqueeze(1))
        a = self.attention(hidden, enc_out).unsqueeze(1)
        context = torch.bmm(a, enc_out)
        rnn_in = torch.cat((embedded, context), dim=2)
        output, h = self.rnn(rnn_in, hidden.unsqueeze(0))
        pred = self.out(torch.cat((output.squeeze(1), context.squeeze(1), embedded.squeeze(1)), dim=1))
        return pred, h.squeeze(0)


if __name__ == "__main__":
    enc = Encoder(500, 32, 64)
    dec = Decoder(600, 32, 64)
    src = torch.randint(0, 500, (4, 12))
    tgt = torch.randint(0, 600, (4, 7))
    enc_out, hidden = enc(src)
    token = tgt[:, 0]
    outputs = []
    for t in range(1, tgt.shape[1]):
        pred, hidden = dec(token, hidden, enc_out)
        outputs.append(pred)
        token = pred.argmax(1)
    logits = torch.stack(outputs, dim=1)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
