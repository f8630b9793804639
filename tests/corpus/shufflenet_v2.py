# ShuffleNet V2 (Ma et al. 2018): stride-1 units split channels in half with
# chunk, only one half goes through the 1x1 / depthwise 3x3 / 1x1 branch, the
# halves are concatenated and mixed by a view/transpose channel shuffle;
# stride-2 units run two branches on the full input and double the width.
import torch
import torch.nn as nn
import torch.nn.functional as F


def channel_shuffle(x, groups):
    batchsize, num_channels, height, width = x.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    x = x.view(batchsize, -1, height, width)
    return x


def conv_bn_relu(inp, oup, k, stride=1, groups=1, relu=True):
    layers = [nn.Conv2d(inp, oup, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(oup)]
    if relu:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class ShuffleUnit(nn.Module):
    def __init__(self, inp, oup, stride):
        super().__init__()
        if not (1 <= stride <= 3):
            raise ValueError("illegal stride value")
        self.stride = stride
        branch_features = oup // 2
        assert (self.stride != 1) or (inp == branch_features << 1)

        if self.stride > 1:
            self.branch1 = nn.Sequential(
                conv_bn_relu(inp, inp, 3, self.stride, groups=inp, relu=False),
                conv_bn_relu(inp, branch_features, 1),
            )
        else:
            self.branch1 = nn.Sequential()

        self.branch2 = nn.Sequential(
            conv_bn_relu(inp if self.stride > 1 else branch_features, branch_features, 1),
            conv_bn_relu(branch_features, branch_features, 3, self.stride, groups=branch_features, relu=False),
            conv_bn_relu(branch_features, branch_features, 1),
        )

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        out = channel_shuffle(out, 2)
        return out


class ShuffleNetV2(nn.Module):
    def __init__(self, stages_repeats, stages_out_channels, num_classes=1000):
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        input_channels = 3
        output_channels = stages_out_channels[0]
        self.conv1 = conv_bn_relu(input_channels, output_channels, 3, 2)
        input_channels = output_channels
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

        stage_names = [f"stage{i}" for i in [2, 3, 4]]
        for name, repeats, output_channels in zip(stage_names, stages_repeats, stages_out_channels[1:]):
            seq = [ShuffleUnit(input_channels, output_channels, 2)]
            for _ in range(repeats - 1):
                seq.append(ShuffleUnit(output_channels, output_channels, 1))
            setattr(self, name, nn.Sequential(*seq))
            input_channels = output_channels

        output_channels = stages_out_channels[-1]
        self.conv5 = conv_bn_relu(input_channels, output_channels, 1)
        self.fc = nn.Linear(output_channels, num_classes)

    def forward(self, x):
        x = self.conv1(x)
        x = self.maxpool(x)
        c2 = self.stage2(x)
        c3 = self.stage3(c2)
        c4 = self.stage4(c3)
        x = self.conv5(c4)
        x = x.mean([2, 3])  # global pool
        logits = self.fc(x)
        return logits, (c2, c3, c4)


if __name__ == "__main__":
    feat = torch.randn(2, 24, 14, 14)
    shuffled = channel_shuffle(feat, 3)
    unit = ShuffleUnit(24, 24, 1)
    unit_out = unit(feat)
    down = ShuffleUnit(24, 48, 2)
    down_out = down(feat)

    model = ShuffleNetV2([2, 3, 2], [16, 32, 64, 128, 256], num_classes=10)
    images = torch.randn(2, 3, 96, 96)
    logits, pyramid = model(images)
    c2, c3, c4 = pyramid
    labels = torch.randint(0, 10, (2,))
    loss = F.cross_entropy(logits, labels)
    probs = F.softmax(logits, dim=1)
    top_p, top_i = probs.topk(3, dim=1)
