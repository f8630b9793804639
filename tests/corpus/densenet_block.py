import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    def __init__(self, in_planes, growth_rate):
        super(Bottleneck, self).__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, 4 * growth_rate, kernel_size=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * growth_rate)
        self.conv2 = nn.Conv2d(4 * growth_rate, growth_rate, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        out = self.conv1(F.relu(self.bn1(x)))
        out = self.conv2(F.relu(self.bn2(out)))
        out = torch.cat([out, x], 1)
        return out


class DenseBlock(nn.Module):
    """Explicit version: every layer sees the concatenation of all previous outputs."""

    def __init__(self, num_layers, in_planes, growth_rate):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(num_layers):
            self.layers.append(nn.Sequential(
                nn.BatchNorm2d(in_planes + i * growth_rate),
                nn.ReLU(inplace=True),
                nn.Conv2d(in_planes + i * growth_rate, growth_rate, 3, padding=1, bias=False),
            ))

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            new_feat = layer(torch.cat(features, dim=1))
            features.append(new_feat)
        return torch.cat(features, dim=1)


class Transition(nn.Module):
    def __init__(self, in_planes, out_planes):
        super(Transition, self).__init__()
        self.bn = nn.BatchNorm2d(in_planes)
        self.conv = nn.Conv2d(in_planes, out_planes, kernel_size=1, bias=False)

    def forward(self, x):
        out = self.conv(F.relu(self.bn(x)))
        out = F.avg_pool2d(out, 2)
        return out


class DenseNet(nn.Module):
    def __init__(self, nblocks, growth_rate=12, reduction=0.5, num_classes=10):
        super(DenseNet, self).__init__()
        num_planes = 2 * growth_rate
        self.conv1 = nn.Conv2d(3, num_planes, kernel_size=3, padding=1, bias=False)
        stages = []
        for i, n in enumerate(nblocks):
            stages.append(self._make_dense_layers(num_planes, n, growth_rate))
            num_planes += n * growth_rate
            if i != len(nblocks) - 1:
                out_planes = int(math.floor(num_planes * reduction))
                stages.append(Transition(num_planes, out_planes))
                num_planes = out_planes
        self.stages = nn.Sequential(*stages)
        self.bn = nn.BatchNorm2d(num_planes)
        self.linear = nn.Linear(num_planes, num_classes)

    def _make_dense_layers(self, in_planes, nblock, growth_rate):
        layers = []
        for i in range(nblock):
            layers.append(Bottleneck(in_planes, growth_rate))
            in_planes += growth_rate
        return nn.Sequential(*layers)

    def forward(self, x):
        out = self.conv1(x)
        out = self.stages(out)
        out = F.avg_pool2d(F.relu(self.bn(out)), 8)
        out = out.view(out.size(0), -1)
        out = self.linear(out)
        return out


if __name__ == "__main__":
    block = DenseBlock(num_layers=4, in_planes=16, growth_rate=8)
    trans = Transition(16 + 4 * 8, 24)
    x = torch.randn(2, 16, 32, 32)
    y = block(x)
    z = trans(y)

    net = DenseNet([2, 4, 3], growth_rate=12)
    images = torch.randn(4, 3, 32, 32)
    targets = torch.randint(0, 10, (4,))
    logits = net(images)
    loss = nn.CrossEntropyLoss()(logits, targets)
    loss.backward()
    print(y.shape, z.shape, logits.shape)
