import torch
import torch.nn as nn
import torch.nn.functional as F

cfg = {
    "VGG11": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "VGG16": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
}


class VGG(nn.Module):
    def __init__(self, vgg_name, num_classes=10, width_div=1):
        super(VGG, self).__init__()
        self.width_div = width_div
        self.features = self._make_layers(cfg[vgg_name])
        last = 512 // width_div
        self.classifier = nn.Sequential(
            nn.Linear(last, last),
            nn.ReLU(True),
            nn.Dropout(0.5),
            nn.Linear(last, num_classes),
        )

    def forward(self, x):
        out = self.features(x)
        out = out.view(out.size(0), -1)
        out = self.classifier(out)
        return out

    def _make_layers(self, cfg):
        layers = []
        in_channels = 3
        for x in cfg:
            if x == "M":
                layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
            else:
                v = x // self.width_div
                layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1),
                           nn.BatchNorm2d(v),
                           nn.ReLU(inplace=True)]
                in_channels = v
        layers += [nn.AvgPool2d(kernel_size=1, stride=1)]
        return nn.Sequential(*layers)


def feature_maps(model, x):
    """Collect the output of every pooling stage."""
    maps = []
    for layer in model.features:
        x = layer(x)
        if isinstance(layer, nn.MaxPool2d):
            maps.append(x)
    return maps


if __name__ == "__main__":
    net = VGG("VGG16", num_classes=10, width_div=4)
    images = torch.randn(4, 3, 32, 32)
    labels = torch.randint(0, 10, (4,))
    logits = net(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    _, predicted = logits.max(1)
    correct = predicted.eq(labels).sum()
    stages = feature_maps(net, images)
    last_stage = stages[-1]
    pooled = torch.flatten(F.adaptive_avg_pool2d(stages[2], 1), 1)

    small = VGG("VGG11", num_classes=100, width_div=8)
    out_small = small(torch.randn(2, 3, 32, 32))
    probs = F.softmax(out_small, dim=1)
    print(logits.shape, loss.shape, predicted.shape, last_stage.shape, pooled.shape, probs.shape)
