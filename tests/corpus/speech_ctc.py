import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvFrontend(nn.Module):
    def __init__(self, n_mels=40, channels=64):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, channels, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(channels, channels, kernel_size=3, stride=2, padding=1)
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, feats):
        x = F.relu(self.conv1(feats))
        x = F.relu(self.bn(self.conv2(x)))
        return x


class CTCModel(nn.Module):
    def __init__(self, n_mels=40, channels=64, hidden=96, vocab=30):
        super().__init__()
        self.frontend = ConvFrontend(n_mels, channels)
        self.rnn = nn.GRU(channels, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, vocab)

    def forward(self, feats):
        x = self.frontend(feats)
        x = x.transpose(1, 2)
        x, _ = self.rnn(x)
        logits = self.out(x)
        log_probs = logits.log_softmax(dim=-1)
        return log_probs


if __name__ == "__main__":
    model = CTCModel()
    feats = torch.randn(4, 40, 100)
    log_probs = model(feats)
    targets = torch.randint(1, 30, (4, 20))
    input_lengths = torch.full((4,), log_probs.size(1), dtype=torch.long)
    target_lengths = torch.randint(10, 20, (4,))
    per_frame = log_probs.transpose(0, 1)
    greedy = log_probs.argmax(dim=-1)
