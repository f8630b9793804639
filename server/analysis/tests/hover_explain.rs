//! Hovers that explain: the chain of ops that made a tensor, the
//! assumptions it rests on (simplified, once, with the op that made them),
//! why a size is `?`, what an int size is bound to, and why a name holds
//! nothing the analysis can follow.

use shapels_analysis::{Binding, Config, FileAnalysis, analyze, size_named, unknown_named};

const ATTENTION: &str = "\
import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        picked = torch.unique(y)
        return self.c_proj(y)
";

/// The 1-based line of an offset of `ATTENTION`.
fn line_of(at: usize) -> Option<usize> {
    (at <= ATTENTION.len()).then(|| ATTENTION[..at].matches('\n').count() + 1)
}

fn binding<'a>(analysis: &'a FileAnalysis, name: &str, line: usize) -> &'a Binding {
    let source_line_start = |text: &str| {
        text.split_inclusive('\n')
            .take(line - 1)
            .map(str::len)
            .sum::<usize>()
    };
    let start = source_line_start(ATTENTION);
    analysis
        .bindings
        .iter()
        .find(|b| b.name == name && b.range.start >= start)
        .unwrap_or_else(|| panic!("no binding {name} at line {line}"))
}

#[test]
fn a_tensor_says_the_ops_that_made_it_with_their_lines() {
    let analysis = analyze(ATTENTION, &Config::default());
    let k = binding(&analysis, "k", 17);
    let chain: Vec<String> = k
        .tensor
        .chain
        .iter()
        .map(|s| match s.at {
            Some(at) => format!("{} (line {})", s.op, line_of(at).unwrap()),
            None => s.op.clone(),
        })
        .collect();
    assert_eq!(
        chain,
        [
            "x (line 14)",
            "Linear (line 16)",
            "split (line 16)",
            "view (line 17)",
            "transpose (line 17)"
        ]
    );
    // A long chain is collapsed in the middle.
    let y = binding(&analysis, "y", 21);
    let hover = y.tensor.hover_markdown(Some("y"), &line_of);
    assert!(
        hover.contains("- made by `x` (line 14) → `Linear` (line 16) → … "),
        "{hover}"
    );
    assert!(
        hover.contains("→ `contiguous` (line 21) → `view` (line 21)\n"),
        "{hover}"
    );
}

#[test]
fn assumptions_are_simplified_said_once_and_sourced() {
    let analysis = analyze(ATTENTION, &Config::default());
    let y = binding(&analysis, "y", 21);
    // Not `n_embd == n_head*(n_embd // n_head)` and its mirror image, and
    // by the name the function gives the size (`C`).
    assert_eq!(y.tensor.guards, ["C % n_head == 0"]);
    let site = y.tensor.guard_sites[0].as_ref().expect("the op is known");
    assert_eq!(
        (site.op.as_str(), site.at.and_then(line_of)),
        ("view", Some(17))
    );
    let hover = y.tensor.hover_markdown(Some("y"), &line_of);
    assert!(
        hover.contains("- assumes `C % n_head == 0` — `view` at line 17\n"),
        "{hover}"
    );
    assert_eq!(hover.matches("assumes").count(), 1, "{hover}");
}

#[test]
fn a_data_dependent_size_says_why_it_is_unknown() {
    let analysis = analyze(ATTENTION, &Config::default());
    let picked = binding(&analysis, "picked", 22);
    assert_eq!(picked.tensor.shape_label(), "[?]");
    assert!(
        picked
            .tensor
            .notes
            .iter()
            .any(|n| n == "`?`: `torch.unique`: its size depends on the data"),
        "{:?}",
        picked.tensor.notes
    );
}

#[test]
fn int_sizes_say_what_they_are_bound_to() {
    let source = "\
import torch

def f(x):
    B, D = x.shape
    return x.view(B * D)

f(torch.randn(8, 3))
f(torch.randn(2, 3))
";
    let analysis = analyze(source, &Config::default());
    let use_of_b = source.find("B * D").unwrap();
    let b = size_named(&analysis, "B", use_of_b).expect("B is a size");
    assert_eq!(&source[b.range], "B");
    assert_eq!(b.values, ["8", "2"]);
    let d = size_named(&analysis, "D", use_of_b).expect("D is a size");
    assert_eq!(d.values, ["3"]);
    // Outside the function, `B` names nothing.
    assert!(size_named(&analysis, "B", source.find("f(torch").unwrap()).is_none());
}

#[test]
fn unknown_names_say_why() {
    let source = "\
import torch
import torchvision
from torch.utils.data import DataLoader

backbone = torchvision.models.resnet18()
loader = DataLoader(range(10), batch_size=4)
for xb, yb in loader:
    pass
";
    let analysis = analyze(source, &Config::default());
    let why = |name: &str| {
        unknown_named(&analysis, name, source.len())
            .unwrap_or_else(|| panic!("no reason for {name}: {:?}", analysis.unknowns))
            .why
            .clone()
    };
    assert_eq!(
        why("backbone"),
        "`torchvision.models.resnet18`: from `torchvision`, outside the workspace (not analysed)"
    );
    assert_eq!(
        why("loader"),
        "`torch.utils.data.DataLoader`: its dataset's samples are not followed"
    );
    assert_eq!(
        why("xb"),
        "an item of `loader`: `torch.utils.data.DataLoader`: its dataset's samples are not followed"
    );
}

#[test]
fn the_keystroke_analysis_keeps_no_chains() {
    let parsed = shapels_syntax::parse(ATTENTION);
    let analysis = shapels_analysis::analyze_module(
        ATTENTION,
        &parsed.module,
        &Config::default(),
        shapels_analysis::Coverage::Bindings,
    );
    assert!(analysis.bindings.iter().all(|b| b.tensor.chain.is_empty()));
    assert!(analysis.sizes.is_empty() && analysis.unknowns.is_empty());
}

/// Names inside a function explain themselves too, also when the call is
/// taken from the memo (the second call) rather than run.
#[test]
fn unknown_names_inside_functions_say_why() {
    let source = "\
import torch
import torchvision
from torch.utils.data import DataLoader


def train(loader):
    backbone = torchvision.models.resnet18()
    for xb, yb in loader:
        pass
    return backbone


loader = DataLoader(range(10), batch_size=4)
train(loader)
train(loader)
";
    let analysis = analyze(source, &Config::default());
    let inside = source.find("pass").unwrap();
    let why = |name: &str| {
        unknown_named(&analysis, name, inside)
            .unwrap_or_else(|| panic!("no reason for {name}: {:?}", analysis.unknowns))
            .why
            .clone()
    };
    assert_eq!(
        why("backbone"),
        "`torchvision.models.resnet18`: from `torchvision`, outside the workspace (not analysed)"
    );
    assert!(
        why("xb").contains("its dataset's samples are not followed"),
        "{}",
        why("xb")
    );
}
