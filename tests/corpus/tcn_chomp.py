# Temporal Convolutional Network in the style of Bai et al. (2018): each
# TemporalBlock pads both sides in Conv1d and then chomps the extra right
# padding off with x[:, :, :-pad] to stay causal, adds a 1x1 downsample on the
# residual when channel counts differ, and the stack uses dilations 1,2,4,8.
# Used for sequence classification (last time step) and for copy-memory
# style per-step prediction.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super().__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
        super().__init__()
        self.conv1 = nn.Conv1d(n_inputs, n_outputs, kernel_size, stride=stride, padding=padding, dilation=dilation)
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)
        self.conv2 = nn.Conv1d(n_outputs, n_outputs, kernel_size, stride=stride, padding=padding, dilation=dilation)
        self.chomp2 = Chomp1d(padding)
        self.relu2 = nn.ReLU()
        self.dropout2 = nn.Dropout(dropout)
        self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
                                 self.conv2, self.chomp2, self.relu2, self.dropout2)
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)


class TemporalConvNet(nn.Module):
    def __init__(self, num_inputs, num_channels, kernel_size=2, dropout=0.2):
        super().__init__()
        layers = []
        num_levels = len(num_channels)
        for i in range(num_levels):
            dilation_size = 2 ** i
            in_channels = num_inputs if i == 0 else num_channels[i - 1]
            out_channels = num_channels[i]
            layers += [TemporalBlock(in_channels, out_channels, kernel_size, stride=1, dilation=dilation_size,
                                     padding=(kernel_size - 1) * dilation_size, dropout=dropout)]
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


class TCNClassifier(nn.Module):
    """Sequential MNIST style: input [B, C_in, T], predict from the last step."""

    def __init__(self, input_size, output_size, num_channels, kernel_size, dropout):
        super().__init__()
        self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size, dropout=dropout)
        self.linear = nn.Linear(num_channels[-1], output_size)

    def forward(self, inputs):
        y1 = self.tcn(inputs)  # B, C, T
        o = self.linear(y1[:, :, -1])
        return F.log_softmax(o, dim=1)


class TCNTagger(nn.Module):
    """Per-step prediction over tokens given as [B, T]."""

    def __init__(self, vocab, emb, num_channels, kernel_size=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.tcn = TemporalConvNet(emb, num_channels, kernel_size, dropout=0.1)
        self.decoder = nn.Linear(num_channels[-1], vocab)

    def forward(self, tokens):
        emb = self.embed(tokens).transpose(1, 2)  # B, E, T
        y = self.tcn(emb).transpose(1, 2)  # B, T, C
        return self.decoder(y)


def receptive_field(kernel_size, n_levels):
    return 1 + 2 * (kernel_size - 1) * (2 ** n_levels - 1)


if __name__ == "__main__":
    block = TemporalBlock(1, 16, kernel_size=3, stride=1, dilation=2, padding=4)
    sig = torch.randn(8, 1, 50)
    block_out = block(sig)

    clf = TCNClassifier(input_size=1, output_size=10, num_channels=[25, 25, 25, 25], kernel_size=7, dropout=0.05)
    seq_mnist = torch.randn(4, 1, 196)
    log_probs = clf(seq_mnist)
    digits = torch.randint(0, 10, (4,))
    cls_loss = F.nll_loss(log_probs, digits)

    tagger = TCNTagger(vocab=50, emb=32, num_channels=[32, 48, 48, 64], kernel_size=3)
    tokens = torch.randint(0, 50, (3, 40))
    scores = tagger(tokens)
    rf = receptive_field(3, 4)
    lm_loss = F.cross_entropy(scores[:, :-1].reshape(-1, 50), tokens[:, 1:].reshape(-1))
