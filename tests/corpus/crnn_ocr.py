from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class CRNNConfig:
    img_h: int = 32
    nc: int = 1
    nclass: int = 37
    nh: int = 64
    leaky_relu: bool = False


class BidirectionalLSTM(nn.Module):
    def __init__(self, nIn, nHidden, nOut):
        super(BidirectionalLSTM, self).__init__()
        self.rnn = nn.LSTM(nIn, nHidden, bidirectional=True)
        self.embedding = nn.Linear(nHidden * 2, nOut)

    def forward(self, input):
        recurrent, _ = self.rnn(input)
        T, b, h = recurrent.size()
        t_rec = recurrent.view(T * b, h)
        output = self.embedding(t_rec)  # [T * b, nOut]
        output = output.view(T, b, -1)
        return output


class CRNN(nn.Module):
    def __init__(self, cfg: CRNNConfig):
        super(CRNN, self).__init__()
        assert cfg.img_h % 16 == 0, "imgH has to be a multiple of 16"
        ks = [3, 3, 3, 3, 3, 3, 2]
        ps = [1, 1, 1, 1, 1, 1, 0]
        ss = [1, 1, 1, 1, 1, 1, 1]
        nm = [32, 64, 128, 128, 256, 256, 256]
        cnn = nn.Sequential()

        def convRelu(i, batchNormalization=False):
            nIn = cfg.nc if i == 0 else nm[i - 1]
            nOut = nm[i]
            cnn.add_module("conv{0}".format(i), nn.Conv2d(nIn, nOut, ks[i], ss[i], ps[i]))
            if batchNormalization:
                cnn.add_module("batchnorm{0}".format(i), nn.BatchNorm2d(nOut))
            if cfg.leaky_relu:
                cnn.add_module("relu{0}".format(i), nn.LeakyReLU(0.2, inplace=True))
            else:
                cnn.add_module("relu{0}".format(i), nn.ReLU(True))

        convRelu(0)
        cnn.add_module("pooling{0}".format(0), nn.MaxPool2d(2, 2))  # 32x16x64
        convRelu(1)
        cnn.add_module("pooling{0}".format(1), nn.MaxPool2d(2, 2))  # 64x8x32
        convRelu(2, True)
        convRelu(3)
        cnn.add_module("pooling{0}".format(2), nn.MaxPool2d((2, 2), (2, 1), (0, 1)))  # 128x4x33
        convRelu(4, True)
        convRelu(5)
        cnn.add_module("pooling{0}".format(3), nn.MaxPool2d((2, 2), (2, 1), (0, 1)))  # 256x2x34
        convRelu(6, True)  # 256x1x33
        self.cnn = cnn
        self.rnn = nn.Sequential(
            BidirectionalLSTM(nm[-1], cfg.nh, cfg.nh),
            BidirectionalLSTM(cfg.nh, cfg.nh, cfg.nclass))

    def forward(self, input):
        conv = self.cnn(input)
        b, c, h, w = conv.size()
        assert h == 1, "the height of conv must be 1"
        conv = conv.squeeze(2)
        conv = conv.permute(2, 0, 1)  # [w, b, c]
        output = self.rnn(conv)
        output = F.log_softmax(output, dim=2)
        return output


def greedy_decode(log_probs):
    # [T, B, C] -> best path per batch element, [B, T]
    best = log_probs.argmax(dim=2)
    return best.transpose(0, 1).contiguous()


if __name__ == "__main__":
    cfg = CRNNConfig(img_h=32, nc=1, nclass=37, nh=64)
    crnn = CRNN(cfg)
    images = torch.randn(4, 1, 32, 128)
    preds = crnn(images)
    T, B, C = preds.shape
    preds_size = torch.full((B,), T, dtype=torch.long)
    best_path = greedy_decode(preds)
    blank_mask = best_path.eq(0)
    conf = preds.max(dim=2)[0].sum(0)
    print(preds.shape, preds_size.shape, best_path.shape, blank_mask.shape, conf.shape)
