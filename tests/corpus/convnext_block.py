import torch
import torch.nn as nn
import torch.nn.functional as F


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channel dim of a (N, C, H, W) tensor, via permute."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        x = x.permute(0, 3, 1, 2)
        return x


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, drop=0.0):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop)
        self.fc2 = nn.Linear(hidden_features, out_features)
        self.drop2 = nn.Dropout(drop)

    def forward(self, x):
        x = self.drop1(self.act(self.fc1(x)))
        x = self.drop2(self.fc2(x))
        return x


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, mlp_ratio=4, drop_path=0.0, ls_init_value=1e-6, norm_layer=nn.LayerNorm):
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = norm_layer(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(mlp_ratio * dim))
        self.gamma = nn.Parameter(ls_init_value * torch.ones(dim)) if ls_init_value > 0 else None
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        x = self.mlp(x)
        if self.gamma is not None:
            x = x.mul(self.gamma)
        x = x.permute(0, 3, 1, 2)
        x = self.drop_path(x) + shortcut
        return x


class ConvNeXtStage(nn.Module):
    def __init__(self, in_chs, out_chs, depth=2, drop_path_rates=None, norm_layer=nn.LayerNorm):
        super().__init__()
        if in_chs != out_chs:
            self.downsample = nn.Sequential(
                LayerNorm2d(in_chs, eps=1e-6),
                nn.Conv2d(in_chs, out_chs, kernel_size=2, stride=2),
            )
        else:
            self.downsample = nn.Identity()
        drop_path_rates = drop_path_rates or [0.0] * depth
        self.blocks = nn.Sequential(
            *[ConvNeXtBlock(out_chs, drop_path=drop_path_rates[j], norm_layer=norm_layer) for j in range(depth)]
        )

    def forward(self, x):
        x = self.downsample(x)
        x = self.blocks(x)
        return x


class TinyConvNeXt(nn.Module):
    def __init__(self, in_chans=3, num_classes=10, depths=(1, 1, 2), dims=(32, 64, 96), drop_path_rate=0.1):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4),
            LayerNorm2d(dims[0], eps=1e-6),
        )
        total = sum(depths)
        rates = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        dp_rates = [rates[sum(depths[:i]) : sum(depths[: i + 1])] for i in range(len(depths))]
        stages = []
        prev_chs = dims[0]
        for i in range(len(depths)):
            stages.append(ConvNeXtStage(prev_chs, dims[i], depth=depths[i], drop_path_rates=dp_rates[i]))
            prev_chs = dims[i]
        self.stages = nn.Sequential(*stages)
        self.norm_pre = nn.LayerNorm(prev_chs, eps=1e-6)
        self.head = nn.Linear(prev_chs, num_classes)

    def forward_features(self, x):
        x = self.stem(x)
        x = self.stages(x)
        return x

    def forward_head(self, x):
        x = x.mean([-2, -1])
        x = self.norm_pre(x)
        return self.head(x)

    def forward(self, x):
        x = self.forward_features(x)
        x = self.forward_head(x)
        return x


if __name__ == "__main__":
    block = ConvNeXtBlock(48, drop_path=0.2)
    feat = torch.randn(2, 48, 14, 14)
    block_out = block(feat)
    down = LayerNorm2d(48)
    normed = down(feat)
    model = TinyConvNeXt()
    images = torch.randn(2, 3, 64, 64)
    features = model.forward_features(images)
    logits = model.forward_head(features)
    labels = torch.randint(0, 10, (2,))
    loss = F.cross_entropy(logits, labels)
