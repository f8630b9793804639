# Neural style transfer (Gatys et al.) with a small VGG-like feature
# extractor: content loss on one layer, style loss on Gram matrices of
# several layers, and a total variation regulariser on the generated image.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Normalization(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1))

    def forward(self, img):
        return (img - self.mean) / self.std


cfg = [32, "M", 64, "M", 128, 128, "M", 256]


class TinyVGG(nn.Module):
    def __init__(self, cfg, capture=(1, 4, 9, 12)):
        super().__init__()
        self.norm = Normalization()
        layers, in_ch = [], 3
        for v in cfg:
            if v == "M":
                layers.append(nn.AvgPool2d(2, 2))
            else:
                layers += [nn.Conv2d(in_ch, v, 3, padding=1), nn.ReLU(inplace=False)]
                in_ch = v
        self.layers = nn.ModuleList(layers)
        self.capture = set(capture)

    def forward(self, x):
        feats = []
        x = self.norm(x)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i in self.capture:
                feats.append(x)
        return feats


def gram_matrix(feat):
    b, c, h, w = feat.size()
    f = feat.view(b, c, h * w)
    gram = torch.bmm(f, f.transpose(1, 2))
    return gram / (c * h * w)


def gram_matrix_single(feat):
    a, b, c, d = feat.size()
    features = feat.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


def content_loss(gen_feat, target_feat):
    return F.mse_loss(gen_feat, target_feat)


def style_loss(gen_feats, style_grams, weights):
    total = 0.0
    for feat, target_gram, w in zip(gen_feats, style_grams, weights):
        G = gram_matrix(feat)
        total = total + w * F.mse_loss(G, target_gram.expand_as(G))
    return total


def total_variation_loss(img):
    dh = img[:, :, 1:, :] - img[:, :, :-1, :]
    dw = img[:, :, :, 1:] - img[:, :, :, :-1]
    return dh.abs().mean() + dw.abs().mean()


if __name__ == "__main__":
    net = TinyVGG(cfg).eval()
    for p in net.parameters():
        p.requires_grad_(False)

    content_img = torch.rand(1, 3, 64, 64)
    style_img = torch.rand(1, 3, 64, 64)
    generated = content_img.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([generated], lr=0.02)

    style_grams = [gram_matrix(f) for f in net(style_img)]
    content_target = net(content_img)[2].detach()
    single = gram_matrix_single(net(style_img)[0])

    for step in range(2):
        optimizer.zero_grad()
        gen_feats = net(generated)
        c_loss = content_loss(gen_feats[2], content_target)
        s_loss = style_loss(gen_feats, style_grams, [1.0, 0.8, 0.5, 0.3])
        tv = total_variation_loss(generated)
        loss = c_loss + 1e4 * s_loss + 1e-3 * tv
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            generated.clamp_(0, 1)
    print(loss, single.shape, len(style_grams))
