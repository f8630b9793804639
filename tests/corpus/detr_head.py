# DETR (Carion et al. 2020) detection head: a small CNN backbone stub, a 1x1
# input projection to d_model, a sine positional encoding over the feature
# map, flatten(2).permute(2, 0, 1) into sequence-first layout for
# nn.Transformer, learned object queries from nn.Embedding weight
# unsqueeze(1).repeat, and class / box heads (box MLP with sigmoid).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class BackboneStub(nn.Module):
    def __init__(self, out_channels=128):
        super().__init__()
        chans = [3, 32, 64, 96, out_channels]
        layers = []
        for cin, cout in zip(chans[:-1], chans[1:]):
            layers += [nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
        self.body = nn.Sequential(*layers)
        self.num_channels = out_channels

    def forward(self, x):
        return self.body(x)


def sine_position_encoding(mask, num_pos_feats=64, temperature=10000):
    not_mask = ~mask
    y_embed = not_mask.cumsum(1, dtype=torch.float32)
    x_embed = not_mask.cumsum(2, dtype=torch.float32)
    eps = 1e-6
    scale = 2 * math.pi
    y_embed = y_embed / (y_embed[:, -1:, :] + eps) * scale
    x_embed = x_embed / (x_embed[:, :, -1:] + eps) * scale
    dim_t = torch.arange(num_pos_feats, dtype=torch.float32, device=mask.device)
    dim_t = temperature ** (2 * (dim_t // 2) / num_pos_feats)
    pos_x = x_embed[:, :, :, None] / dim_t
    pos_y = y_embed[:, :, :, None] / dim_t
    pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
    pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
    pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
    return pos


class DETR(nn.Module):
    def __init__(self, num_classes, num_queries=20, d_model=64, nheads=4, enc_layers=2, dec_layers=2):
        super().__init__()
        self.backbone = BackboneStub(128)
        self.input_proj = nn.Conv2d(self.backbone.num_channels, d_model, kernel_size=1)
        self.query_embed = nn.Embedding(num_queries, d_model)
        self.transformer = nn.Transformer(d_model, nheads, enc_layers, dec_layers, dim_feedforward=128, dropout=0.0)
        self.class_embed = nn.Linear(d_model, num_classes + 1)
        self.bbox_embed = MLP(d_model, d_model, 4, 3)
        self.d_model = d_model

    def forward(self, images, pixel_mask):
        features = self.backbone(images)
        mask = F.interpolate(pixel_mask[None].float(), size=features.shape[-2:]).to(torch.bool)[0]
        pos = sine_position_encoding(mask, self.d_model // 2)
        src = self.input_proj(features)
        bs, c, h, w = src.shape
        src = src.flatten(2).permute(2, 0, 1)  # HW, B, C
        pos_embed = pos.flatten(2).permute(2, 0, 1)
        key_mask = mask.flatten(1)
        query_pos = self.query_embed.weight.unsqueeze(1).repeat(1, bs, 1)  # Q, B, C
        tgt = torch.zeros_like(query_pos)
        hs = self.transformer(src + pos_embed, tgt + query_pos,
                              src_key_padding_mask=key_mask, memory_key_padding_mask=key_mask)
        hs = hs.transpose(0, 1)  # B, Q, C
        outputs_class = self.class_embed(hs)
        outputs_coord = self.bbox_embed(hs).sigmoid()
        return {"pred_logits": outputs_class, "pred_boxes": outputs_coord}


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


if __name__ == "__main__":
    model = DETR(num_classes=11, num_queries=20, d_model=64, nheads=4)
    images = torch.randn(2, 3, 128, 160)
    pixel_mask = torch.zeros(2, 128, 160, dtype=torch.bool)
    out = model(images, pixel_mask)
    logits = out["pred_logits"]
    boxes = out["pred_boxes"]
    xyxy = box_cxcywh_to_xyxy(boxes)
    probs = logits.softmax(-1)[..., :-1]
    scores, labels = probs.max(-1)
    keep = scores > 0.7
    cost_class = -probs[0][:, torch.tensor([1, 4, 7])]
    cost_bbox = torch.cdist(boxes[0], torch.rand(3, 4), p=1)
    cost = cost_bbox + cost_class
