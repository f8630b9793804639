# MobileNetV2/EfficientNet-style inverted residual blocks with depthwise
# convolutions (groups=channels), squeeze-and-excitation computed with
# mean over (2, 3) and keepdim, hard-swish, and a classifier with dropout.
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class SqueezeExcite(nn.Module):
    def __init__(self, channels, rd_ratio=0.25):
        super().__init__()
        rd = make_divisible(channels * rd_ratio)
        self.fc1 = nn.Conv2d(channels, rd, 1)
        self.fc2 = nn.Conv2d(rd, channels, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        s = F.relu(self.fc1(s))
        s = torch.sigmoid(self.fc2(s))
        return x * s


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio, use_se=True):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers += [nn.Conv2d(inp, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.Hardswish()]
        layers += [
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.Hardswish(),
        ]
        if use_se:
            layers.append(SqueezeExcite(hidden))
        layers += [nn.Conv2d(hidden, oup, 1, bias=False), nn.BatchNorm2d(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNet(nn.Module):
    # t, c, n, s
    settings = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 2, 2),
        (6, 64, 1, 2),
    ]

    def __init__(self, num_classes=100, width_mult=1.0):
        super().__init__()
        input_channel = make_divisible(32 * width_mult)
        self.last_channel = make_divisible(256 * max(1.0, width_mult))
        features = [nn.Sequential(nn.Conv2d(3, input_channel, 3, 2, 1, bias=False),
                                  nn.BatchNorm2d(input_channel), nn.Hardswish())]
        for t, c, n, s in self.settings:
            output_channel = make_divisible(c * width_mult)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, t))
                input_channel = output_channel
        features.append(nn.Sequential(nn.Conv2d(input_channel, self.last_channel, 1, bias=False),
                                      nn.BatchNorm2d(self.last_channel), nn.Hardswish()))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 1)
        x = torch.flatten(x, 1)
        return self.classifier(x)
