# Multi-class segmentation loss where the targets were read as a float mask
# with a channel dimension (B, 1, H, W) instead of class indices (B, H, W).
import torch
import torch.nn as nn
import torch.nn.functional as F


class SegHead(nn.Module):
    def __init__(self, in_ch, num_classes):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_ch, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, num_classes, 1),
        )

    def forward(self, x):
        return self.conv(x)


def segmentation_loss(logits, target):
    return F.cross_entropy(logits, target)  # BUG: target is float (B, 1, H, W); needs long (B, H, W)


if __name__ == "__main__":
    head = SegHead(in_ch=16, num_classes=5)
    feats = torch.randn(2, 16, 24, 24)
    logits = head(feats)
    target = torch.randint(0, 5, (2, 1, 24, 24)).float()
    loss = segmentation_loss(logits, target)
    print(loss)
