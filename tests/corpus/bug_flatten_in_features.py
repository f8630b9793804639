# A CIFAR CNN whose classifier was sized for 32x32 inputs with two pools, but a
# third conv/pool stage was added later: the flattened size is 64*4*4, not 64*8*8.
import torch
import torch.nn as nn
import torch.nn.functional as F


class CifarNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.conv3 = nn.Conv2d(64, 64, 3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(64 * 8 * 8, 256)  # CAUSE: in_features assumes only two poolings
        self.fc2 = nn.Linear(256, num_classes)
        self.dropout = nn.Dropout(0.25)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))   # 16x16
        x = self.pool(F.relu(self.conv2(x)))   # 8x8
        x = self.pool(F.relu(self.conv3(x)))   # 4x4
        x = torch.flatten(x, 1)
        x = self.dropout(F.relu(self.fc1(x)))  # BUG: mat1 is (B, 1024) but fc1 expects 4096 features
        return self.fc2(x)


if __name__ == "__main__":
    net = CifarNet()
    images = torch.randn(16, 3, 32, 32)
    labels = torch.randint(0, 10, (16,))
    outputs = net(images)
    loss = F.cross_entropy(outputs, labels)
    print(loss)
