//! Generated PyTorch model files for the benchmarks: deterministic, any length.
//!
//! The large inputs are made by code at bench time rather than checked in, so
//! the repository stays small and the size is a parameter. Each unit is a
//! small module class, or a function, that the analysis really has to follow
//! (layers built from sizes, `forward` with views, matmuls and reductions),
//! and the main block at the end calls every class with concrete tensors, as
//! a real model file's smoke test would.

#![allow(
    dead_code,
    reason = "each bench binary uses a different part of this module"
)]

use std::fmt::Write as _;

/// The header every generated file starts with.
const HEADER: &str = "\
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

";

/// A model file of about `lines` lines; `seed` varies the sizes and names so
/// that files of a generated tree differ from each other.
pub fn model_file(lines: usize, seed: u64) -> String {
    let mut out = String::from(HEADER);
    let mut main = String::from("\n\nif __name__ == \"__main__\":\n");
    let mut unit = 0u64;
    while out.lines().count() + main.lines().count() < lines {
        let k = seed.wrapping_mul(31).wrapping_add(unit);
        let width = 32 * (1 + k % 8);
        let heads = [1, 2, 4, 8][(k % 4) as usize];
        let batch = 2 + k % 6;
        let seq = 8 * (1 + k % 5);
        let name = format!("U{unit}");
        match unit % 4 {
            0 => attention(&mut out, &mut main, &name, width, heads, batch, seq),
            1 => mlp(&mut out, &mut main, &name, width, batch, seq),
            2 => conv(&mut out, &mut main, &name, k, batch),
            _ => function(&mut out, &mut main, &name, width, batch, seq),
        }
        unit += 1;
    }
    out.push_str(&main);
    out
}

fn attention(
    out: &mut String,
    main: &mut String,
    name: &str,
    width: u64,
    heads: u64,
    batch: u64,
    seq: u64,
) {
    let _ = write!(
        out,
        "
@dataclass
class {name}Config:
    n_embd: int = {width}
    n_head: int = {heads}
    block_size: int = {seq}
    dropout: float = 0.1


class {name}Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer(\"bias\", mask.view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float(\"-inf\"))
        att = F.softmax(att, dim=-1)
        y = self.drop(att) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)

"
    );
    let _ = write!(
        main,
        "    {lower}_cfg = {name}Config()
    {lower}_x = torch.randn({batch}, {seq}, {width})
    {lower}_y = {name}Attention({lower}_cfg)({lower}_x)
",
        lower = name.to_lowercase()
    );
}

fn mlp(out: &mut String, main: &mut String, name: &str, width: u64, batch: u64, seq: u64) {
    let _ = write!(
        out,
        "
class {name}MLP(nn.Module):
    def __init__(self, n_embd, ratio=4, dropout=0.0):
        super().__init__()
        hidden = ratio * n_embd
        self.c_fc = nn.Linear(n_embd, hidden)
        self.act = nn.GELU()
        self.c_proj = nn.Linear(hidden, n_embd)
        self.norm = nn.LayerNorm(n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        h = self.c_fc(self.norm(x))
        h = self.act(h)
        h = self.c_proj(h)
        return x + self.dropout(h)

"
    );
    let _ = write!(
        main,
        "    {lower}_x = torch.randn({batch}, {seq}, {width})
    {lower}_y = {name}MLP({width})({lower}_x)
    {lower}_pooled = {lower}_y.mean(dim=1)
",
        lower = name.to_lowercase()
    );
}

fn conv(out: &mut String, main: &mut String, name: &str, k: u64, batch: u64) {
    let channels = 8 * (1 + k % 4);
    let size = 16 * (1 + k % 3);
    let _ = write!(
        out,
        "
class {name}ConvBlock(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, kernel_size=3, stride=2, padding=1)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(out_ch, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = self.pool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)

"
    );
    let _ = write!(
        main,
        "    {lower}_img = torch.randn({batch}, 3, {size}, {size})
    {lower}_logits = {name}ConvBlock(3, {channels})({lower}_img)
",
        lower = name.to_lowercase()
    );
}

fn function(out: &mut String, main: &mut String, name: &str, width: u64, batch: u64, seq: u64) {
    let lower = name.to_lowercase();
    let _ = write!(
        out,
        "
def {lower}_mix(x, w, scale=1.0):
    b, t, c = x.shape
    flat = x.reshape(b * t, c)
    mixed = flat @ w
    mixed = mixed.view(b, t, -1) * scale
    summary = torch.cat([mixed.mean(dim=1), mixed.amax(dim=1)], dim=-1)
    return mixed, summary

"
    );
    let _ = write!(
        main,
        "    {lower}_x = torch.randn({batch}, {seq}, {width})
    {lower}_w = torch.randn({width}, {half})
    {lower}_mixed, {lower}_summary = {lower}_mix({lower}_x, {lower}_w)
",
        half = width / 2
    );
}

/// A Python file with no torch in it, such as most of a project's files.
pub fn plain_file(seed: u64) -> String {
    let mut out = String::from("import os\nimport sys\n\n");
    for i in 0..20 {
        let _ = write!(
            out,
            "
def helper_{seed}_{i}(items, key=None):
    \"\"\"Sorts and groups items.\"\"\"
    groups = {{}}
    for item in sorted(items, key=key):
        groups.setdefault(item % {m}, []).append(item)
    return [len(v) for v in groups.values()]
",
            m = 2 + (seed + i) % 7
        );
    }
    out
}
