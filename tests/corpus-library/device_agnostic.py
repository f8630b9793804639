# oracle: pretend-cuda
# The usual device-agnostic training-step boilerplate: pick cuda when
# available, move the model and every batch with .to(device), create helper
# tensors inside forward on the input's device, and run a mixed-dtype eval.
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SmallConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 8 * 8, num_classes)
        self.register_buffer("class_weights", torch.ones(num_classes))

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(x.size(0), -1)
        return self.fc(x)


class PositionalLinear(nn.Module):
    def __init__(self, dim, max_len=64):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.pos = nn.Embedding(max_len, dim)

    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device)
        noise = torch.randn(x.shape, device=x.device) * 0.01
        return self.proj(x) + self.pos(positions) + noise


def train_step(model, images, labels):
    images, labels = images.to(device), labels.to(device)
    logits = model(images)
    loss = F.cross_entropy(logits, labels, weight=model.class_weights)
    return logits, loss
