# YOLO/RetinaNet-style dense detection heads on a small FPN: per-level conv
# towers, outputs permuted to channels-last and reshaped to (B, H*W*A, K),
# levels concatenated, plus anchor-grid generation with meshgrid.
import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU())
        self.c3 = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU())
        self.c4 = nn.Sequential(nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU())
        self.c5 = nn.Sequential(nn.Conv2d(128, 256, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x):
        x = self.stem(x)
        c3 = self.c3(x)
        c4 = self.c4(c3)
        c5 = self.c5(c4)
        return c3, c4, c5


class FPN(nn.Module):
    def __init__(self, in_channels_list, out_channels):
        super().__init__()
        self.lateral = nn.ModuleList([nn.Conv2d(c, out_channels, 1) for c in in_channels_list])
        self.smooth = nn.ModuleList([nn.Conv2d(out_channels, out_channels, 3, padding=1) for _ in in_channels_list])

    def forward(self, feats):
        c3, c4, c5 = feats
        p5 = self.lateral[2](c5)
        p4 = self.lateral[1](c4) + nn.functional.interpolate(p5, size=c4.shape[-2:], mode="nearest")
        p3 = self.lateral[0](c3) + nn.functional.interpolate(p4, size=c3.shape[-2:], mode="nearest")
        return [self.smooth[0](p3), self.smooth[1](p4), self.smooth[2](p5)]


class DetectionHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes):
        super().__init__()
        self.num_anchors = num_anchors
        self.num_classes = num_classes
        self.cls_tower = nn.Sequential(nn.Conv2d(in_channels, in_channels, 3, padding=1), nn.ReLU())
        self.box_tower = nn.Sequential(nn.Conv2d(in_channels, in_channels, 3, padding=1), nn.ReLU())
        self.cls_logits = nn.Conv2d(in_channels, num_anchors * num_classes, 3, padding=1)
        self.bbox_pred = nn.Conv2d(in_channels, num_anchors * 4, 3, padding=1)

    def forward(self, features):
        all_cls, all_box = [], []
        for feat in features:
            N, _, H, W = feat.shape
            cls = self.cls_logits(self.cls_tower(feat))
            cls = cls.view(N, self.num_anchors, self.num_classes, H, W)
            cls = cls.permute(0, 3, 4, 1, 2).reshape(N, -1, self.num_classes)
            box = self.bbox_pred(self.box_tower(feat))
            box = box.permute(0, 2, 3, 1).reshape(N, H * W * self.num_anchors, 4)
            all_cls.append(cls)
            all_box.append(box)
        return torch.cat(all_cls, dim=1), torch.cat(all_box, dim=1)


def make_grid(h, w, stride):
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    centers = torch.stack((xs, ys), dim=-1).reshape(-1, 2).float()
    centers = (centers + 0.5) * stride
    return centers


class Detector(nn.Module):
    def __init__(self, num_classes=20, num_anchors=3):
        super().__init__()
        self.backbone = Backbone()
        self.fpn = FPN([64, 128, 256], 64)
        self.head = DetectionHead(64, num_anchors, num_classes)

    def forward(self, images):
        feats = self.fpn(self.backbone(images))
        cls_logits, box_deltas = self.head(feats)
        return cls_logits, box_deltas
