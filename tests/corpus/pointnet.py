# PointNet (Qi et al. 2017) on point clouds laid out as [B, C, N]: a T-Net
# predicts a k x k alignment matrix (identity added, applied with torch.bmm),
# a shared MLP is a stack of Conv1d(kernel_size=1), max over points gives the
# global feature, and the segmentation head concatenates that feature repeated
# over every point with the per-point features.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TNet(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.conv1 = nn.Conv1d(k, 64, 1)
        self.conv2 = nn.Conv1d(64, 128, 1)
        self.conv3 = nn.Conv1d(128, 256, 1)
        self.fc1 = nn.Linear(256, 128)
        self.fc2 = nn.Linear(128, 64)
        self.fc3 = nn.Linear(64, k * k)
        self.bn1 = nn.BatchNorm1d(64)
        self.bn2 = nn.BatchNorm1d(128)
        self.bn3 = nn.BatchNorm1d(256)
        self.bn4 = nn.BatchNorm1d(128)
        self.bn5 = nn.BatchNorm1d(64)

    def forward(self, x):
        batchsize = x.size()[0]
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.relu(self.bn3(self.conv3(x)))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, 256)
        x = F.relu(self.bn4(self.fc1(x)))
        x = F.relu(self.bn5(self.fc2(x)))
        x = self.fc3(x)
        iden = torch.eye(self.k, dtype=x.dtype, device=x.device).view(1, self.k * self.k).repeat(batchsize, 1)
        x = x + iden
        x = x.view(-1, self.k, self.k)
        return x


class PointNetEncoder(nn.Module):
    def __init__(self, global_feat=True, feature_transform=False, channel=3):
        super().__init__()
        self.stn = TNet(channel)
        self.conv1 = nn.Conv1d(channel, 64, 1)
        self.conv2 = nn.Conv1d(64, 128, 1)
        self.conv3 = nn.Conv1d(128, 512, 1)
        self.bn1 = nn.BatchNorm1d(64)
        self.bn2 = nn.BatchNorm1d(128)
        self.bn3 = nn.BatchNorm1d(512)
        self.global_feat = global_feat
        self.feature_transform = feature_transform
        if self.feature_transform:
            self.fstn = TNet(k=64)

    def forward(self, x):
        B, D, N = x.size()
        trans = self.stn(x)
        x = x.transpose(2, 1)
        x = torch.bmm(x, trans)
        x = x.transpose(2, 1)
        x = F.relu(self.bn1(self.conv1(x)))
        if self.feature_transform:
            trans_feat = self.fstn(x)
            x = torch.bmm(x.transpose(2, 1), trans_feat).transpose(2, 1)
        else:
            trans_feat = None
        pointfeat = x
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.bn3(self.conv3(x))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, 512)
        if self.global_feat:
            return x, trans, trans_feat
        x = x.view(-1, 512, 1).repeat(1, 1, N)
        return torch.cat([x, pointfeat], 1), trans, trans_feat


class PointNetCls(nn.Module):
    def __init__(self, k=40):
        super().__init__()
        self.feat = PointNetEncoder(global_feat=True, feature_transform=True)
        self.head = nn.Sequential(
            nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(p=0.4),
            nn.Linear(256, k),
        )

    def forward(self, x):
        x, trans, trans_feat = self.feat(x)
        return F.log_softmax(self.head(x), dim=1), trans_feat


class PointNetSeg(nn.Module):
    def __init__(self, num_parts=8):
        super().__init__()
        self.k = num_parts
        self.feat = PointNetEncoder(global_feat=False, feature_transform=False)
        self.conv1 = nn.Conv1d(512 + 64, 256, 1)
        self.conv2 = nn.Conv1d(256, 128, 1)
        self.conv3 = nn.Conv1d(128, self.k, 1)

    def forward(self, x):
        batchsize, _, n_pts = x.size()
        x, trans, _ = self.feat(x)
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = self.conv3(x)
        x = x.transpose(2, 1).contiguous()
        x = F.log_softmax(x.view(-1, self.k), dim=-1)
        return x.view(batchsize, n_pts, self.k), trans


def feature_transform_regularizer(trans):
    d = trans.size()[1]
    eye = torch.eye(d, device=trans.device)[None, :, :]
    diff = torch.bmm(trans, trans.transpose(2, 1)) - eye
    return torch.mean(torch.norm(diff, dim=(1, 2)))


if __name__ == "__main__":
    points = torch.randn(4, 3, 256)
    cls_model = PointNetCls(k=10)
    log_probs, trans_feat = cls_model(points)
    reg = feature_transform_regularizer(trans_feat)
    labels = torch.randint(0, 10, (4,))
    cls_loss = F.nll_loss(log_probs, labels) + 0.001 * reg

    seg_model = PointNetSeg(num_parts=6)
    seg_pred, trans = seg_model(points)
    part_labels = torch.randint(0, 6, (4, 256))
    seg_loss = F.nll_loss(seg_pred.view(-1, 6), part_labels.view(-1))
    pred_choice = seg_pred.argmax(dim=2)
