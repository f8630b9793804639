import torch
import torch.nn as nn
import torch.nn.functional as F


class DINOHead(nn.Module):
    def __init__(self, in_dim, out_dim, use_bn=False, norm_last_layer=True, nlayers=3,
                 hidden_dim=128, bottleneck_dim=32):
        super().__init__()
        nlayers = max(nlayers, 1)
        layers = [nn.Linear(in_dim, hidden_dim)]
        if use_bn:
            layers.append(nn.BatchNorm1d(hidden_dim))
        layers.append(nn.GELU())
        for _ in range(nlayers - 2):
            layers.append(nn.Linear(hidden_dim, hidden_dim))
            if use_bn:
                layers.append(nn.BatchNorm1d(hidden_dim))
            layers.append(nn.GELU())
        layers.append(nn.Linear(hidden_dim, bottleneck_dim))
        self.mlp = nn.Sequential(*layers)
        self.last_layer = nn.utils.parametrizations.weight_norm(nn.Linear(bottleneck_dim, out_dim, bias=False))
        weight_g = self.last_layer.parametrizations.weight.original0
        weight_g.data.fill_(1)
        if norm_last_layer:
            weight_g.requires_grad = False

    def forward(self, x):
        x = self.mlp(x)
        x = F.normalize(x, dim=-1, p=2)
        x = self.last_layer(x)
        return x


class Backbone(nn.Module):
    def __init__(self, in_chans=3, embed_dim=48):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_chans, 24, 3, stride=2, padding=1), nn.BatchNorm2d(24), nn.ReLU(),
            nn.Conv2d(24, embed_dim, 3, stride=2, padding=1), nn.BatchNorm2d(embed_dim), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )

    def forward(self, x):
        return self.features(x).flatten(1)


class MultiCropWrapper(nn.Module):
    """Runs the backbone once per resolution group and the head once on everything."""

    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, crops):
        groups = [[crops[0]]]
        for crop in crops[1:]:
            if crop.shape[-1] == groups[-1][-1].shape[-1]:
                groups[-1].append(crop)
            else:
                groups.append([crop])
        feats = [self.backbone(torch.cat(group)) for group in groups]
        output = torch.cat(feats)
        return self.head(output)


class DINOLoss(nn.Module):
    def __init__(self, out_dim, ncrops, student_temp=0.1, teacher_temp=0.04, center_momentum=0.9):
        super().__init__()
        self.student_temp = student_temp
        self.teacher_temp = teacher_temp
        self.center_momentum = center_momentum
        self.ncrops = ncrops
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_output, teacher_output):
        student_out = student_output / self.student_temp
        student_out = student_out.chunk(self.ncrops)
        teacher_out = F.softmax((teacher_output - self.center) / self.teacher_temp, dim=-1)
        teacher_out = teacher_out.detach().chunk(2)
        total_loss = 0
        n_loss_terms = 0
        for iq, q in enumerate(teacher_out):
            for v in range(len(student_out)):
                if v == iq:
                    continue
                loss = torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1)
                total_loss += loss.mean()
                n_loss_terms += 1
        total_loss /= n_loss_terms
        self.update_center(teacher_output)
        return total_loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        batch_center = torch.sum(teacher_output, dim=0, keepdim=True)
        batch_center = batch_center / len(teacher_output)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


@torch.no_grad()
def ema_update(student, teacher, momentum=0.996):
    for param_q, param_k in zip(student.parameters(), teacher.parameters()):
        param_k.data.mul_(momentum).add_((1 - momentum) * param_q.detach().data)


if __name__ == "__main__":
    out_dim, batch = 256, 4
    student = MultiCropWrapper(Backbone(), DINOHead(48, out_dim))
    teacher = MultiCropWrapper(Backbone(), DINOHead(48, out_dim))
    teacher.load_state_dict(student.state_dict())
    for p in teacher.parameters():
        p.requires_grad = False
    global_crops = [torch.randn(batch, 3, 32, 32) for _ in range(2)]
    local_crops = [torch.randn(batch, 3, 16, 16) for _ in range(4)]
    crops = global_crops + local_crops
    criterion = DINOLoss(out_dim, ncrops=len(crops))
    teacher_output = teacher(crops[:2])
    student_output = student(crops)
    loss = criterion(student_output, teacher_output)
    loss.backward()
    ema_update(student, teacher)
    center = criterion.center
