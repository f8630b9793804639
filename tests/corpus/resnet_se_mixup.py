import torch
import torch.nn as nn
import torch.nn.functional as F


class SqueezeExcite(nn.Module):
    def __init__(self, ch, r=4):
        super().__init__()
        self.fc1 = nn.Conv2d(ch, ch // r, 1)
        self.fc2 = nn.Conv2d(ch // r, ch, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
        return x * s


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_ch, ch, stride=1):
        super().__init__()
        out = ch * self.expansion
        self.conv1 = nn.Conv2d(in_ch, ch, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)
        self.conv3 = nn.Conv2d(ch, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.se = SqueezeExcite(out)
        self.down = None
        if stride != 1 or in_ch != out:
            self.down = nn.Sequential(nn.Conv2d(in_ch, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.se(self.bn3(self.conv3(y)))
        return F.relu(y + idt)


class Net(nn.Module):
    def __init__(self, num_classes=100):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True))
        layers = []
        in_ch = 32
        for ch, stride in [(16, 1), (32, 2), (64, 2)]:
            layers.append(Bottleneck(in_ch, ch, stride))
            in_ch = ch * Bottleneck.expansion
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(in_ch, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.layers(x)
        feat = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.head(feat)


def mixup(x, y, num_classes, alpha=0.4):
    lam = 0.7
    perm = torch.randperm(x.size(0))
    mixed = lam * x + (1 - lam) * x[perm]
    y1 = F.one_hot(y, num_classes).float()
    y_mix = lam * y1 + (1 - lam) * y1[perm]
    return mixed, y_mix


if __name__ == "__main__":
    net = Net()
    images = torch.randn(4, 3, 32, 32)
    labels = torch.randint(0, 100, (4,))
    mixed, soft = mixup(images, labels, 100)
    logits = net(mixed)
    loss = torch.sum(-soft * F.log_softmax(logits, dim=-1), dim=-1).mean()
    preds = logits.argmax(1)
    acc = (preds == labels).float().mean()
