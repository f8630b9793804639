# Siamese network for signature / face verification style tasks.
# Two image batches go through the same embedding CNN; a contrastive loss
# pulls matching pairs together and pushes others apart by a margin.
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_block(in_ch, out_ch):
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, kernel_size=3, padding=1),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
    )


class EmbeddingNet(nn.Module):
    def __init__(self, in_channels=1, embed_dim=64):
        super().__init__()
        widths = [in_channels, 16, 32, 64]
        layers = []
        for i in range(len(widths) - 1):
            layers.append(conv_block(widths[i], widths[i + 1]))
        self.features = nn.Sequential(*layers)
        self.fc = nn.Sequential(
            nn.Linear(64 * 4 * 4, 256),
            nn.PReLU(),
            nn.Linear(256, embed_dim),
        )

    def forward(self, x):
        out = self.features(x)
        out = out.view(out.size(0), -1)
        out = self.fc(out)
        return F.normalize(out, p=2, dim=1)


class SiameseNet(nn.Module):
    def __init__(self, embedding_net):
        super().__init__()
        self.embedding_net = embedding_net

    def forward(self, x1, x2):
        output1 = self.embedding_net(x1)
        output2 = self.embedding_net(x2)
        return output1, output2

    def get_embedding(self, x):
        return self.embedding_net(x)


class ContrastiveLoss(nn.Module):
    """label == 1 for similar pairs, 0 for dissimilar ones."""

    def __init__(self, margin=1.0):
        super().__init__()
        self.margin = margin

    def forward(self, out1, out2, label):
        dist = F.pairwise_distance(out1, out2, keepdim=False)
        pos = label * dist.pow(2)
        neg = (1 - label) * torch.clamp(self.margin - dist, min=0.0).pow(2)
        loss = 0.5 * (pos + neg)
        return loss.mean()


def triplet_loss(anchor, positive, negative, margin=0.2):
    d_ap = (anchor - positive).pow(2).sum(1)
    d_an = (anchor - negative).pow(2).sum(1)
    losses = torch.clamp(d_ap - d_an + margin, min=0.0)
    return losses.mean()


if __name__ == "__main__":
    batch_size = 8
    embed_net = EmbeddingNet(in_channels=1, embed_dim=64)
    model = SiameseNet(embed_net)
    criterion = ContrastiveLoss(margin=1.0)

    img1 = torch.randn(batch_size, 1, 32, 32)
    img2 = torch.randn(batch_size, 1, 32, 32)
    label = torch.randint(0, 2, (batch_size,)).float()

    emb1, emb2 = model(img1, img2)
    loss = criterion(emb1, emb2, label)
    loss.backward()

    # all-pairs distance matrix between the two batches
    dmat = torch.cdist(emb1, emb2)
    nearest = dmat.argmin(dim=1)

    anchors = model.get_embedding(torch.randn(batch_size, 1, 32, 32))
    positives = model.get_embedding(torch.randn(batch_size, 1, 32, 32))
    negatives = model.get_embedding(torch.randn(batch_size, 1, 32, 32))
    t_loss = triplet_loss(anchors, positives, negatives, margin=0.3)
    sims = torch.stack([F.cosine_similarity(anchors, positives), F.cosine_similarity(anchors, negatives)], dim=1)
    print(loss, t_loss, dmat.shape, nearest.shape, sims.shape)
