# An Inception-lite CIFAR classifier. The mixed block was refactored to
# concatenate three branches instead of two, but the conv that consumes the
# concatenation still assumes the old width (2 * branch_ch).
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(in_ch, out_ch, k=3, stride=1):
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, k, stride=stride, padding=k // 2, bias=False),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
    )


class MixedBlock(nn.Module):
    def __init__(self, in_ch, branch_ch):
        super().__init__()
        self.b1 = conv_bn(in_ch, branch_ch, k=1)
        self.b3 = conv_bn(in_ch, branch_ch, k=3)
        self.b5 = nn.Sequential(conv_bn(in_ch, branch_ch, k=1), conv_bn(branch_ch, branch_ch, k=5))
        self.out_channels = 3 * branch_ch

    def forward(self, x):
        return torch.cat([self.b1(x), self.b3(x), self.b5(x)], dim=1)


class InceptionLite(nn.Module):
    def __init__(self, num_classes=10, branch_ch=32):
        super().__init__()
        self.stem = conv_bn(3, 64)
        self.mixed1 = MixedBlock(64, branch_ch)
        self.reduce = nn.Conv2d(2 * branch_ch, 128, kernel_size=3, stride=2, padding=1)  # CAUSE: stale width, block now outputs 3 * branch_ch
        self.mixed2 = MixedBlock(128, branch_ch * 2)
        self.classifier = nn.Linear(self.mixed2.out_channels, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.mixed1(x)
        x = F.relu(self.reduce(x))  # BUG: reduce expects 64 input channels, mixed1 gives 96
        x = self.mixed2(x)
        x = F.adaptive_avg_pool2d(x, 1)
        x = torch.flatten(x, 1)
        return self.classifier(x)


if __name__ == "__main__":
    model = InceptionLite(num_classes=10, branch_ch=32)
    images = torch.randn(8, 3, 32, 32)
    labels = torch.randint(0, 10, (8,))
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    print(logits.shape, loss)
