# A small FCN / SegNet-style semantic segmentation network: a VGG-ish encoder
# with max pooling and a decoder that upsamples with F.interpolate and adds
# the encoder skip features (FCN-8s style), trained with per-pixel CE.
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_stage(in_ch, out_ch, n_convs=2):
    layers = []
    for i in range(n_convs):
        layers += [
            nn.Conv2d(in_ch if i == 0 else out_ch, out_ch, 3, padding=1),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
        ]
    return nn.Sequential(*layers)


class FCN(nn.Module):
    def __init__(self, in_channels=3, num_classes=21, widths=(16, 32, 64, 128)):
        super().__init__()
        self.stages = nn.ModuleList()
        prev = in_channels
        for w in widths:
            self.stages.append(make_stage(prev, w))
            prev = w
        self.pool = nn.MaxPool2d(2, 2)
        # 1x1 score layers on the last three stages
        self.score_deep = nn.Conv2d(widths[3], num_classes, 1)
        self.score_mid = nn.Conv2d(widths[2], num_classes, 1)
        self.score_shallow = nn.Conv2d(widths[1], num_classes, 1)

    def forward(self, x):
        input_size = x.shape[-2:]
        feats = []
        for stage in self.stages:
            x = self.pool(stage(x))
            feats.append(x)
        f2, f3, f4 = feats[1], feats[2], feats[3]

        score = self.score_deep(f4)                                   # 1/16
        score = F.interpolate(score, scale_factor=2, mode="bilinear", align_corners=False)
        score = score + self.score_mid(f3)                            # 1/8
        score = F.interpolate(score, size=f2.shape[-2:], mode="bilinear", align_corners=False)
        score = score + self.score_shallow(f2)                        # 1/4
        out = F.interpolate(score, size=input_size, mode="bilinear", align_corners=False)
        return out


class SegNetDecoderBlock(nn.Module):
    """Nearest-neighbour upsampling + conv, used as an alternative decoder."""

    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.conv = make_stage(in_ch, out_ch, n_convs=1)

    def forward(self, x, skip):
        x = F.interpolate(x, size=skip.shape[-2:], mode="nearest")
        x = self.conv(x)
        return x + skip


def pixel_accuracy(logits, target):
    pred = logits.argmax(dim=1)
    correct = (pred == target).float()
    return correct.mean()


if __name__ == "__main__":
    num_classes = 21
    model = FCN(in_channels=3, num_classes=num_classes)
    images = torch.randn(2, 3, 96, 128)
    masks = torch.randint(0, num_classes, (2, 96, 128))

    logits = model(images)
    loss = F.cross_entropy(logits, masks, ignore_index=255)
    loss.backward()
    acc = pixel_accuracy(logits, masks)

    # flatten-then-CE formulation some repos use
    flat_logits = logits.permute(0, 2, 3, 1).reshape(-1, num_classes)
    flat_target = masks.view(-1)
    loss2 = nn.CrossEntropyLoss()(flat_logits, flat_target)

    dec = SegNetDecoderBlock(64, 32)
    deep = torch.randn(2, 64, 12, 16)
    skip = torch.randn(2, 32, 24, 32)
    up = dec(deep, skip)
    print(logits.shape, loss, acc, loss2, up.shape)
