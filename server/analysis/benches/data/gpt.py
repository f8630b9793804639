"""A GPT-2 style language model, written the way such files are in the wild.

This file is benchmark input for shapels: a realistic, self-contained model
file of about 400 lines (a config dataclass, attention with and without a
flash path, an MLP, transformer blocks, embeddings, weight tying, loss,
sampling and a main block), so that parse and analysis timings reflect what
an editor actually sees. It is never run by the benchmarks.
"""

import inspect
import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304  # GPT-2's 50257, padded up to a multiple of 64
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True  # biases in Linears and LayerNorms, like GPT-2
    rotary: bool = False
    mlp_ratio: int = 4


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias; PyTorch's own cannot turn it off."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


def precompute_freqs(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end)
    freqs = torch.outer(t, freqs).float()
    cos = torch.cos(freqs)
    sin = torch.sin(freqs)
    return cos, sin


def apply_rotary(x, cos, sin):
    # x: (B, n_head, T, head_dim); rotate pairs of channels.
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    rotated_1 = x1 * cos - x2 * sin
    rotated_2 = x1 * sin + x2 * cos
    out = torch.stack([rotated_1, rotated_2], dim=-1)
    return out.flatten(-2)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        # key, query, value projections for all heads, in one batch
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        # output projection
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.head_dim = config.n_embd // config.n_head
        self.dropout = config.dropout
        self.rotary = config.rotary
        # flash attention is much faster, but only in PyTorch >= 2.0
        self.flash = hasattr(F, "scaled_dot_product_attention")
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("bias", mask.view(1, 1, config.block_size, config.block_size))

    def forward(self, x, cos=None, sin=None):
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)

        # queries, keys and values for all heads, then the head dim next to the batch
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

        if self.rotary and cos is not None:
            q = apply_rotary(q, cos[:T], sin[:T])
            k = apply_rotary(k, cos[:T], sin[:T])

        # causal self-attention; (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        if self.flash:
            y = F.scaled_dot_product_attention(
                q,
                k,
                v,
                attn_mask=None,
                dropout_p=self.dropout if self.training else 0,
                is_causal=True,
            )
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs

        # output projection
        y = self.resid_dropout(self.c_proj(y))
        return y


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden = config.mlp_ratio * config.n_embd
        self.c_fc = nn.Linear(config.n_embd, hidden, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(hidden, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


class SwiGLU(nn.Module):
    """The gated MLP of LLaMA-style models, kept as an alternative block body."""

    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x, cos=None, sin=None):
        x = x + self.attn(self.ln_1(x), cos, sin)
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.vocab_size is not None
        assert config.block_size is not None
        self.config = config

        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, bias=config.bias),
            )
        )
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # Weight tying: the token embedding and the output projection share
        # one matrix (https://paperswithcode.com/method/weight-tying).
        self.transformer.wte.weight = self.lm_head.weight

        head_dim = config.n_embd // config.n_head
        cos, sin = precompute_freqs(head_dim, config.block_size)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

        # init all weights
        self.apply(self._init_weights)
        # scaled init of the residual projections, per the GPT-2 paper
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        print("number of parameters: %.2fM" % (self.get_num_params() / 1e6,))

    def get_num_params(self, non_embedding=True):
        """The number of parameters; position embeddings are not counted
        by default, token embeddings are (they are tied to lm_head)."""
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, (
            f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        )
        pos = torch.arange(0, t, dtype=torch.long, device=device)  # shape (t)

        # forward the GPT model itself
        tok_emb = self.transformer.wte(idx)  # token embeddings of shape (b, t, n_embd)
        pos_emb = self.transformer.wpe(pos)  # position embeddings of shape (t, n_embd)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x, self.rope_cos, self.rope_sin)
        x = self.transformer.ln_f(x)

        if targets is not None:
            # training: the logits of every position, and the loss
            logits = self.lm_head(x)
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        else:
            # inference: only the last position is needed
            logits = self.lm_head(x[:, [-1], :])  # list index keeps the time dim
            loss = None

        return logits, loss

    def crop_block_size(self, block_size):
        # model surgery to decrease the block size if necessary, e.g. to
        # load a pretrained model with a smaller context
        assert block_size <= self.config.block_size
        self.config.block_size = block_size
        self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
        for block in self.transformer.h:
            if hasattr(block.attn, "bias"):
                block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        # every parameter that requires grad
        param_dict = {pn: p for pn, p in self.named_parameters()}
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        # 2D parameters (matmuls, embeddings) decay; biases and norms do not
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        num_decay_params = sum(p.numel() for p in decay_params)
        num_nodecay_params = sum(p.numel() for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {num_nodecay_params:,} parameters")
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused}")
        return optimizer

    def estimate_mfu(self, fwdbwd_per_iter, dt):
        """Model flops utilisation in units of A100 bfloat16 peak FLOPS."""
        N = self.get_num_params()
        cfg = self.config
        L, H, Q, T = cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.block_size
        flops_per_token = 6 * N + 12 * L * H * Q * T
        flops_per_fwdbwd = flops_per_token * T
        flops_per_iter = flops_per_fwdbwd * fwdbwd_per_iter
        flops_achieved = flops_per_iter * (1.0 / dt)  # per second
        flops_promised = 312e12  # A100 GPU bfloat16 peak flops is 312 TFLOPS
        mfu = flops_achieved / flops_promised
        return mfu

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """Complete the sequence of indices idx (b, t) max_new_tokens times,
        feeding each prediction back in. Use in eval mode."""
        for _ in range(max_new_tokens):
            # crop the context to block_size if it grew too long
            if idx.size(1) <= self.config.block_size:
                idx_cond = idx
            else:
                idx_cond = idx[:, -self.config.block_size :]
            logits, _ = self(idx_cond)
            # the logits at the last step, scaled by the temperature
            logits = logits[:, -1, :] / temperature
            # optionally keep only the top k options
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


class KVCache:
    """Keys and values of earlier steps, for incremental decoding."""

    def __init__(self, batch_size, n_layer, n_head, max_len, head_dim):
        shape = (batch_size, n_head, max_len, head_dim)
        self.k = [torch.zeros(shape) for _ in range(n_layer)]
        self.v = [torch.zeros(shape) for _ in range(n_layer)]
        self.pos = 0

    def update(self, layer, k_new, v_new):
        t = k_new.size(2)
        self.k[layer][:, :, self.pos : self.pos + t] = k_new
        self.v[layer][:, :, self.pos : self.pos + t] = v_new
        return self.k[layer][:, :, : self.pos + t], self.v[layer][:, :, : self.pos + t]


def get_batch(data, block_size: int, batch_size: int, device: str = "cpu"):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + 1 + block_size] for i in ix])
    return x.to(device), y.to(device)


@torch.no_grad()
def estimate_loss(model, data, eval_iters: int, block_size: int, batch_size: int):
    model.eval()
    losses = torch.zeros(eval_iters)
    for k in range(eval_iters):
        X, Y = get_batch(data, block_size, batch_size)
        logits, loss = model(X, Y)
        losses[k] = loss.item()
    model.train()
    return losses.mean()


def get_lr(it, warmup_iters, lr_decay_iters, learning_rate, min_lr):
    # 1) linear warmup for warmup_iters steps
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    # 2) after lr_decay_iters, the minimum learning rate
    if it > lr_decay_iters:
        return min_lr
    # 3) in between, cosine decay down to the minimum
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def count_tokens(batch: torch.Tensor, pad_id: int = 0) -> int:
    mask = batch != pad_id
    return int(mask.sum().item())


def top_p_filter(logits, top_p: float = 0.9):
    sorted_logits, sorted_indices = torch.sort(logits, descending=True, dim=-1)
    cumulative = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
    remove = cumulative > top_p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    sorted_logits = sorted_logits.masked_fill(remove, float("-inf"))
    return torch.gather(sorted_logits, -1, sorted_indices.argsort(dim=-1))


if __name__ == "__main__":
    torch.manual_seed(1337)
    config = GPTConfig(
        block_size=64,
        vocab_size=512,
        n_layer=4,
        n_head=4,
        n_embd=128,
        dropout=0.1,
        bias=False,
    )
    model = GPT(config)
    batch_size = 8

    # one training step on random tokens
    data = torch.randint(0, config.vocab_size, (10000,))
    xb, yb = get_batch(data, config.block_size, batch_size)
    logits, loss = model(xb, yb)
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), "cpu")
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()

    # the pieces on their own
    attn = CausalSelfAttention(config)
    h = torch.randn(batch_size, config.block_size, config.n_embd)
    h_attn = attn(h)
    mlp = MLP(config)
    h_mlp = mlp(h_attn)
    block = Block(config)
    h_block = block(h)
    norm = RMSNorm(config.n_embd)
    h_norm = norm(h_block)
    swiglu = SwiGLU(config.n_embd, 4 * config.n_embd)
    h_swiglu = swiglu(h_norm)

    # inference: the last position only
    prompt = torch.zeros((1, 1), dtype=torch.long)
    last_logits, _ = model(prompt)
    probs = F.softmax(last_logits[:, -1, :], dim=-1)
    filtered = top_p_filter(last_logits[:, -1, :])
    generated = model.generate(prompt, max_new_tokens=16, top_k=40)
    n_tokens = count_tokens(generated)

    # a KV cache for a one-layer decode step
    cache = KVCache(batch_size, config.n_layer, config.n_head, config.block_size, 32)
    k_step = torch.randn(batch_size, config.n_head, 1, 32)
    v_step = torch.randn(batch_size, config.n_head, 1, 32)
    k_all, v_all = cache.update(0, k_step, v_step)

    # a learning rate schedule and the flops estimate
    lrs = [get_lr(it, 100, 5000, 6e-4, 6e-5) for it in range(0, 5000, 500)]
    mfu = model.estimate_mfu(batch_size, 0.5)
    print(f"loss {loss.item():.4f}, mfu {mfu * 100:.2f}%, generated {n_tokens} tokens")
