# Anchor generation and box decoding in the style of torchvision's
# AnchorGenerator / BoxCoder (RetinaNet / Faster R-CNN RPN). Cell anchors are
# built per level from sizes x aspect ratios, shifted over a meshgrid of
# feature-map positions with the level stride, then regression deltas are
# decoded with exp() into (x1, y1, x2, y2), clipped to the image and the
# top-k scoring boxes per image are kept.
import math
from typing import List, Tuple

import torch
import torch.nn as nn


class AnchorGenerator(nn.Module):
    def __init__(self, sizes=((32,), (64,), (128,)), aspect_ratios=((0.5, 1.0, 2.0),) * 3):
        super().__init__()
        self.sizes = sizes
        self.aspect_ratios = aspect_ratios
        self.cell_anchors = [self.generate_anchors(s, a) for s, a in zip(sizes, aspect_ratios)]

    @staticmethod
    def generate_anchors(scales, aspect_ratios, dtype=torch.float32):
        scales = torch.as_tensor(scales, dtype=dtype)
        aspect_ratios = torch.as_tensor(aspect_ratios, dtype=dtype)
        h_ratios = torch.sqrt(aspect_ratios)
        w_ratios = 1 / h_ratios
        ws = (w_ratios[:, None] * scales[None, :]).view(-1)
        hs = (h_ratios[:, None] * scales[None, :]).view(-1)
        base_anchors = torch.stack([-ws, -hs, ws, hs], dim=1) / 2
        return base_anchors.round()

    def num_anchors_per_location(self) -> List[int]:
        return [len(s) * len(a) for s, a in zip(self.sizes, self.aspect_ratios)]

    def grid_anchors(self, grid_sizes, strides) -> List[torch.Tensor]:
        anchors = []
        for size, stride, base_anchors in zip(grid_sizes, strides, self.cell_anchors):
            grid_height, grid_width = size
            stride_height, stride_width = stride
            shifts_x = torch.arange(0, grid_width, dtype=torch.int32) * stride_width
            shifts_y = torch.arange(0, grid_height, dtype=torch.int32) * stride_height
            shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
            shift_x = shift_x.reshape(-1)
            shift_y = shift_y.reshape(-1)
            shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
            anchors.append((shifts.view(-1, 1, 4) + base_anchors.view(1, -1, 4)).reshape(-1, 4))
        return anchors

    def forward(self, image_size: Tuple[int, int], feature_maps: List[torch.Tensor]) -> torch.Tensor:
        grid_sizes = [fm.shape[-2:] for fm in feature_maps]
        strides = [(image_size[0] // g[0], image_size[1] // g[1]) for g in grid_sizes]
        self.cell_anchors = [ca.to(feature_maps[0].device) for ca in self.cell_anchors]
        anchors_over_all_feature_maps = self.grid_anchors(grid_sizes, strides)
        return torch.cat(anchors_over_all_feature_maps, dim=0)


def decode_boxes(rel_codes, boxes, weights=(1.0, 1.0, 1.0, 1.0), bbox_xform_clip=math.log(1000.0 / 16)):
    boxes = boxes.to(rel_codes.dtype)
    widths = boxes[:, 2] - boxes[:, 0]
    heights = boxes[:, 3] - boxes[:, 1]
    ctr_x = boxes[:, 0] + 0.5 * widths
    ctr_y = boxes[:, 1] + 0.5 * heights
    wx, wy, ww, wh = weights
    dx = rel_codes[:, 0::4] / wx
    dy = rel_codes[:, 1::4] / wy
    dw = torch.clamp(rel_codes[:, 2::4] / ww, max=bbox_xform_clip)
    dh = torch.clamp(rel_codes[:, 3::4] / wh, max=bbox_xform_clip)
    pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
    pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
    pred_w = torch.exp(dw) * widths[:, None]
    pred_h = torch.exp(dh) * heights[:, None]
    x1 = pred_ctr_x - 0.5 * pred_w
    y1 = pred_ctr_y - 0.5 * pred_h
    x2 = pred_ctr_x + 0.5 * pred_w
    y2 = pred_ctr_y + 0.5 * pred_h
    pred_boxes = torch.stack((x1, y1, x2, y2), dim=2).flatten(1)
    return pred_boxes


def clip_boxes_to_image(boxes: torch.Tensor, size: Tuple[int, int]) -> torch.Tensor:
    dim = boxes.dim()
    boxes_x = boxes[..., 0::2]
    boxes_y = boxes[..., 1::2]
    height, width = size
    boxes_x = boxes_x.clamp(min=0, max=width)
    boxes_y = boxes_y.clamp(min=0, max=height)
    clipped_boxes = torch.stack((boxes_x, boxes_y), dim=dim)
    return clipped_boxes.reshape(boxes.shape)


class RPNHead(nn.Module):
    def __init__(self, in_channels: int, num_anchors: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, kernel_size=3, padding=1)
        self.cls_logits = nn.Conv2d(in_channels, num_anchors, kernel_size=1)
        self.bbox_pred = nn.Conv2d(in_channels, num_anchors * 4, kernel_size=1)

    def forward(self, features: List[torch.Tensor]):
        logits, deltas = [], []
        for feat in features:
            t = torch.relu(self.conv(feat))
            N, _, H, W = t.shape
            logits.append(self.cls_logits(t).permute(0, 2, 3, 1).reshape(N, -1))
            deltas.append(self.bbox_pred(t).view(N, -1, 4, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, 4))
        return torch.cat(logits, dim=1), torch.cat(deltas, dim=1)


if __name__ == "__main__":
    image_size = (128, 160)
    feats = [torch.randn(2, 16, 16, 20), torch.randn(2, 16, 8, 10), torch.randn(2, 16, 4, 5)]
    anchor_gen = AnchorGenerator()
    anchors = anchor_gen(image_size, feats)
    head = RPNHead(16, anchor_gen.num_anchors_per_location()[0])
    objectness, pred_deltas = head(feats)
    num_images = pred_deltas.shape[0]
    proposals = decode_boxes(pred_deltas.reshape(-1, 4), anchors.repeat(num_images, 1).float())
    proposals = proposals.view(num_images, -1, 4)
    proposals = clip_boxes_to_image(proposals, image_size)
    scores = objectness.sigmoid()
    top_scores, top_idx = scores.topk(50, dim=1)
    batch_idx = torch.arange(num_images)[:, None]
    top_boxes = proposals[batch_idx, top_idx]
    widths = top_boxes[..., 2] - top_boxes[..., 0]
