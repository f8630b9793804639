import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvFrontEnd(nn.Module):
    """Two strided 1-D convs over mel-spectrogram frames."""

    def __init__(self, n_mels, channels):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, channels, kernel_size=5, stride=2, padding=2)
        self.bn1 = nn.BatchNorm1d(channels)
        self.conv2 = nn.Conv1d(channels, channels * 2, kernel_size=5, stride=2, padding=2)
        self.bn2 = nn.BatchNorm1d(channels * 2)

    def forward(self, x):
        # x: [B, n_mels, T]
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return x  # [B, 2 * channels, T // 4]


class SpeechCommandNet(nn.Module):
    def __init__(self, n_mels=40, channels=64, hidden=128, num_classes=12):
        super().__init__()
        self.frontend = ConvFrontEnd(n_mels, channels)
        self.lstm = nn.LSTM(input_size=channels, hidden_size=hidden, num_layers=2,  # CAUSE: front end outputs 2 * channels
                            batch_first=True, bidirectional=True)
        self.attn = nn.Linear(2 * hidden, 1)
        self.fc = nn.Linear(2 * hidden, num_classes)

    def forward(self, mels):
        feats = self.frontend(mels)
        feats = feats.transpose(1, 2)  # [B, T', C]
        out, (h_n, c_n) = self.lstm(feats)  # BUG: LSTM expects input_size=64 but features have 128 channels
        weights = torch.softmax(self.attn(out).squeeze(-1), dim=1)
        pooled = torch.bmm(weights.unsqueeze(1), out).squeeze(1)
        return self.fc(pooled)


if __name__ == "__main__":
    model = SpeechCommandNet(n_mels=40, channels=64, hidden=128, num_classes=12)
    mels = torch.randn(8, 40, 101)
    labels = torch.randint(0, 12, (8,))
    logits = model(mels)
    loss = F.cross_entropy(logits, labels)
    print(logits.shape, loss)
