# LoRA (low-rank adaptation) in the style of loralib / peft: a wrapper
# around a frozen nn.Linear adds `B @ A` scaled by alpha / r. The wrapper can
# be merged into the base weight for inference. `inject_lora` walks the
# model and swaps the q/v projections with setattr.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int = 4, lora_alpha: int = 8, lora_dropout: float = 0.1):
        super().__init__()
        self.base = base
        self.in_features = base.in_features
        self.out_features = base.out_features
        self.r = r
        self.scaling = lora_alpha / r
        self.lora_dropout = nn.Dropout(p=lora_dropout) if lora_dropout > 0 else nn.Identity()
        self.lora_A = nn.Parameter(torch.zeros(r, self.in_features))
        self.lora_B = nn.Parameter(torch.zeros(self.out_features, r))
        self.merged = False
        for p in self.base.parameters():
            p.requires_grad = False
        self.reset_lora_parameters()

    def reset_lora_parameters(self):
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B)

    def delta_weight(self) -> torch.Tensor:
        return (self.lora_B @ self.lora_A) * self.scaling

    def merge(self):
        if not self.merged:
            self.base.weight.data += self.delta_weight()
            self.merged = True

    def unmerge(self):
        if self.merged:
            self.base.weight.data -= self.delta_weight()
            self.merged = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base(x)
        if self.merged:
            return result
        after_a = F.linear(self.lora_dropout(x), self.lora_A)
        after_b = F.linear(after_a, self.lora_B)
        return result + after_b * self.scaling


class SelfAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x, attention_mask=None):
        bsz, tgt_len, embed_dim = x.size()
        q = self.q_proj(x).view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) * self.head_dim ** -0.5
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = scores.softmax(dim=-1)
        ctx = (probs @ v).transpose(1, 2).reshape(bsz, tgt_len, embed_dim)
        return self.out_proj(ctx)


class TinyEncoder(nn.Module):
    def __init__(self, vocab, dim, heads, layers, n_classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([SelfAttention(dim, heads) for _ in range(layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(dim) for _ in range(layers)])
        self.classifier = nn.Linear(dim, n_classes)

    def forward(self, input_ids, attention_mask):
        ext_mask = (1.0 - attention_mask[:, None, None, :].float()) * -1e4
        h = self.embed(input_ids)
        for attn, norm in zip(self.layers, self.norms):
            h = norm(h + attn(h, ext_mask))
        pooled = h.mean(dim=1)
        return self.classifier(pooled)


def inject_lora(model: nn.Module, target_names=("q_proj", "v_proj"), r=4, alpha=8):
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if child_name in target_names and isinstance(child, nn.Linear):
                setattr(module, child_name, LoRALinear(child, r=r, lora_alpha=alpha))
    for n, p in model.named_parameters():
        if "lora_" not in n and not n.startswith("classifier"):
            p.requires_grad = False
    return model


if __name__ == "__main__":
    torch.manual_seed(0)
    base = nn.Linear(32, 64)
    lora = LoRALinear(base, r=4, lora_alpha=16, lora_dropout=0.0)
    nn.init.normal_(lora.lora_B, std=0.02)
    x = torch.randn(3, 10, 32)
    y_unmerged = lora(x)
    dw = lora.delta_weight()
    lora.merge()
    y_merged = lora(x)
    lora.unmerge()
    diff = (y_merged - y_unmerged).abs().max()

    model = TinyEncoder(vocab=100, dim=32, heads=4, layers=2, n_classes=3)
    model = inject_lora(model, r=8, alpha=16)
    trainable = [p for p in model.parameters() if p.requires_grad]
    n_trainable = sum(p.numel() for p in trainable)
    ids = torch.randint(0, 100, (4, 12))
    mask = torch.ones(4, 12, dtype=torch.long)
    logits = model(ids, mask)
    labels = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    grad_a = model.layers[0].q_proj.lora_A.grad
    grad_b = model.layers[1].v_proj.lora_B.grad
