//! Hints that stay readable (issue 18, item 4): repeats hidden, the modes
//! that show only parameters or only changes, and long shapes abbreviated
//! with the full shape kept in the tooltip.

use shapels_analysis::{
    Config, HintDetail, HintMode, HintOptions, InlayHint, analyze, inlay_hints_with,
};

const MODEL: &str = "\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, n_embd: int, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.ln = nn.LayerNorm(n_embd)

    def forward(self, x):
        B, T, C = x.shape
        x = self.ln(x)
        x = F.gelu(x)
        h = F.dropout(x)
        qkv = self.qkv(h)
        q, k, v = qkv.split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        return q
";

/// `(line, label)` of each hint, lines counted from 1.
fn hints(options: HintOptions) -> Vec<(usize, String)> {
    let analysis = analyze(MODEL, &Config::default());
    inlay_hints_with(&analysis, None, &options)
        .into_iter()
        .map(|h: InlayHint| (MODEL[..h.offset].matches('\n').count() + 1, h.label))
        .collect()
}

fn lines(hints: &[(usize, String)]) -> Vec<usize> {
    hints.iter().map(|(line, _)| *line).collect()
}

#[test]
fn everything_by_default() {
    let all = hints(HintOptions::default());
    assert_eq!(
        lines(&all),
        [13, 15, 16, 17, 18, 19, 19, 19, 20],
        "{all:#?}"
    );
}

#[test]
fn repeats_of_a_name_are_hidden() {
    let shown = hints(HintOptions {
        hide_repeats: true,
        ..HintOptions::default()
    });
    // `x = self.ln(x)` and `x = F.gelu(x)` repeat `x`'s shape; `h` is a new
    // name, and the parameter `x` is always shown.
    assert_eq!(lines(&shown), [13, 17, 18, 19, 19, 19, 20], "{shown:#?}");
}

#[test]
fn only_parameters() {
    let shown = hints(HintOptions {
        mode: HintMode::Parameters,
        ..HintOptions::default()
    });
    assert_eq!(lines(&shown), [13], "{shown:#?}");
}

#[test]
fn only_changes() {
    let shown = hints(HintOptions {
        mode: HintMode::Changes,
        ..HintOptions::default()
    });
    // `h` has the shape of the `x` just before; `qkv` is three times as
    // wide, `q` a third of it, `k` and `v` follow `q`; the view changes `q`.
    assert_eq!(lines(&shown), [13, 18, 19, 20], "{shown:#?}");
}

#[test]
fn long_shapes_are_abbreviated_and_whole_in_the_tooltip() {
    let analysis = analyze(MODEL, &Config::default());
    let options = HintOptions {
        max_length: 16,
        detail: HintDetail::Full,
        ..HintOptions::default()
    };
    let all = inlay_hints_with(&analysis, None, &HintOptions::default());
    let short = inlay_hints_with(&analysis, None, &options);
    assert_eq!(all.len(), short.len());
    let mut cut = 0;
    for (whole, hint) in all.iter().zip(&short) {
        assert!(hint.label.chars().count() <= 16, "{hint:?}");
        if hint.label != whole.label {
            cut += 1;
            assert!(hint.label.contains('…'), "{hint:?}");
            let shape = whole.label.trim_start_matches(": ");
            assert!(
                hint.tooltip.starts_with(shape),
                "{hint:?} does not keep {shape}"
            );
        }
    }
    assert!(cut > 0, "{short:#?}");
}
