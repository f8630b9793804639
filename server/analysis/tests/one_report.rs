//! One bug, one report (issue 20, item 3): what a failed op would have
//! assumed shows on no hover, and what a function meets after torch raised
//! in it is not reported again.

use shapels_analysis::{Config, Severity, analyze};

/// A sum of a `3*n` and a `4*n` wide tensor would assume `3*n == 4*n`,
/// but the statement fails (a negative size): the equality is no
/// assumption of the code's other values.
const FAILED_ASSUMPTION: &str = "\
import torch
import torch.nn as nn


class Mix(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.up = nn.Linear(n, 3 * n)
        self.wide = nn.Linear(n, 4 * n)

    def forward(self, x):
        h = self.up(x)
        y = (h + self.wide(x)) * torch.zeros(-1)
        return h
";

#[test]
fn a_failed_op_assumes_nothing() {
    let analysis = analyze(FAILED_ASSUMPTION, &Config::default());
    assert!(
        analysis
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && d.code == "negative-size"),
        "{:#?}",
        analysis.diagnostics
    );
    for e in &analysis.expressions {
        assert!(
            e.tensor.guards.iter().all(|g| !g.contains("4*n")),
            "{:?} shows {:?}",
            e.range,
            e.tensor.guards
        );
    }
}

/// The first layer norm fails on the device; the second would too, but
/// torch never gets there: one report, where torch raises.
const CASCADE: &str = "\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 24)
        self.ln2 = nn.LayerNorm(8)

    def forward(self, x):
        h = self.ln1(x)
        q, k, v = self.fc(h).split(8, dim=-1)
        return self.ln2(q + k + x)


if __name__ == \"__main__\":
    out = Block()(torch.randn(2, 4, 8).cuda())
";

#[test]
fn a_bug_is_reported_once() {
    let analysis = analyze(CASCADE, &Config::default());
    let errors: Vec<_> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let error = errors[0];
    // Where torch raises (the first layer norm, line 13), with the call
    // as related information.
    let line = CASCADE[..error.range.start].matches('\n').count() + 1;
    assert_eq!(line, 13, "{}", error.message);
    assert!(
        error
            .related
            .iter()
            .any(|r| r.message == "raised in the call made here"),
        "{:?}",
        error.related
    );
}

/// A device clash says which operand is on which device.
#[test]
fn a_device_clash_names_each_operand() {
    let source = "import torch\n\nif __name__ == \"__main__\":\n    d = torch.randn(2, 3).cuda() + torch.randn(2, 3)\n";
    let analysis = analyze(source, &Config::default());
    let error = analysis
        .diagnostics
        .iter()
        .find(|d| d.code == "device-mismatch")
        .unwrap_or_else(|| panic!("{:#?}", analysis.diagnostics));
    let notes: Vec<&str> = error.related.iter().map(|r| r.message.as_str()).collect();
    assert_eq!(
        notes,
        ["this operand is on cuda:0", "this operand is on cpu"],
        "{error:#?}"
    );
}
