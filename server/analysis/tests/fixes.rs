//! Quick fixes (issue 18, item 2): each rule's proposal, applied to the
//! text, makes its diagnostic go away on re-analysis and breaks nothing.

use shapels_analysis::quick_fix::{apply, resolves};
use shapels_analysis::{Config, Diagnostic, FileAnalysis, Fix, analyze};

/// The diagnostic of `code` in `source`, its fixes, and the analysis.
fn fixes_of(source: &str, code: &str) -> (FileAnalysis, Diagnostic) {
    let analysis = analyze(source, &Config::default());
    let diagnostic = analysis
        .diagnostics
        .iter()
        .find(|d| d.code == code)
        .unwrap_or_else(|| panic!("no {code} in {:#?}", analysis.diagnostics))
        .clone();
    (analysis, diagnostic)
}

/// Applies `fix` and checks on a fresh analysis that it resolves `diagnostic`.
fn applied(source: &str, before: &FileAnalysis, diagnostic: &Diagnostic, fix: &Fix) -> String {
    let edited = apply(source, fix).expect("the edits apply");
    let after = analyze(&edited, &Config::default());
    assert!(
        resolves(diagnostic, fix, before, &after),
        "`{}` does not resolve {diagnostic:#?}:\n{edited}\n{:#?}",
        fix.title,
        after.diagnostics
    );
    edited
}

/// The one fix the diagnostic proposes, applied; the edited text.
fn only_fix(source: &str, code: &str) -> String {
    let (before, diagnostic) = fixes_of(source, code);
    assert_eq!(diagnostic.fixes.len(), 1, "{diagnostic:#?}");
    applied(source, &before, &diagnostic, &diagnostic.fixes[0])
}

const MNIST: &str = "\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)

    def forward(self, x):
        x = self.conv2(self.conv1(x))
        x = torch.flatten(x, 1)
        return self.fc1(x)


y = Net()(torch.randn(8, 1, 18, 18))
";

#[test]
fn linear_in_features_takes_the_flattened_size() {
    let edited = only_fix(MNIST, "linear-shape");
    assert!(edited.contains("nn.Linear(12544, 128)"), "{edited}");
}

#[test]
fn linear_in_features_in_the_constructors_names() {
    let source = "\
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, 10)

    def forward(self, x, flag):
        return self.proj(torch.cat([x, flag], -1))


def run(dim: int):
    return Head(dim)(torch.randn(2, dim), torch.randn(2, 1))
";
    let edited = only_fix(source, "linear-shape");
    assert!(
        edited.contains("self.proj = nn.Linear(dim + 1, 10)"),
        "{edited}"
    );
}

#[test]
fn conv_norm_and_recurrent_sizes() {
    for (source, code, expected) in [
        (
            "import torch\nimport torch.nn as nn\ncv = nn.Conv2d(3, 8, 3)\ncv(torch.randn(1, 4, 10, 10))\n",
            "conv-input",
            "nn.Conv2d(4, 8, 3)",
        ),
        (
            "import torch\nimport torch.nn as nn\nbn = nn.BatchNorm2d(num_features=16)\nbn(torch.randn(2, 8, 4, 4))\n",
            "layer-input",
            "nn.BatchNorm2d(num_features=8)",
        ),
        (
            "import torch\nimport torch.nn as nn\nln = nn.LayerNorm(64)\nln(torch.randn(2, 32))\n",
            "layer-input",
            "nn.LayerNorm(32)",
        ),
        (
            "import torch\nimport torch.nn as nn\nrnn = nn.LSTM(10, 20)\nrnn(torch.randn(5, 3, 12))\n",
            "layer-input",
            "nn.LSTM(12, 20)",
        ),
    ] {
        let edited = only_fix(source, code);
        assert!(edited.contains(expected), "{edited}");
    }
}

#[test]
fn view_after_transpose_reshapes_or_makes_contiguous() {
    let source = "\
import torch
a = torch.randn(4, 8, 16)
b = a.transpose(1, 2).view(4, 128)
";
    let (before, diagnostic) = fixes_of(source, "view-stride");
    let edited: Vec<String> = diagnostic
        .fixes
        .iter()
        .map(|fix| applied(source, &before, &diagnostic, fix))
        .collect();
    assert_eq!(edited.len(), 2);
    assert!(edited[0].contains("a.transpose(1, 2).reshape(4, 128)"));
    assert!(edited[1].contains("a.transpose(1, 2).contiguous().view(4, 128)"));
}

#[test]
fn a_cpu_operand_moves_to_the_other_device() {
    let source = "\
import torch
c = torch.randn(3, device=\"cuda\")
d = torch.randn(3)
e = c + d
";
    let edited = only_fix(source, "device-mismatch");
    assert!(edited.contains("e = c + d.to(c.device)"), "{edited}");
}

#[test]
fn an_input_moves_to_the_device_of_the_layer() {
    let source = "\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4).cuda()

    def forward(self, x):
        return self.fc(x)


y = Net()(torch.randn(2, 8))
";
    let edited = only_fix(source, "device-mismatch");
    assert!(
        edited.contains("return self.fc(x.to(self.fc.weight.device))"),
        "{edited}"
    );
}

#[test]
fn cross_entropy_over_a_sequence_flattens_both() {
    let source = "\
import torch
import torch.nn.functional as F
logits = torch.randn(4, 16, 100)
targets = torch.randint(0, 100, (4, 16))
loss = F.cross_entropy(logits, targets)
";
    let edited = only_fix(source, "loss-shape");
    assert!(
        edited.contains("F.cross_entropy(logits.view(-1, 100), targets.view(-1))"),
        "{edited}"
    );
}

/// A fix whose names are not where the layer is built is not proposed:
/// `B` is the batch of the forward's input, unknown in `__init__`.
#[test]
fn no_fix_in_names_the_constructor_does_not_have() {
    let source = "\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x):
        return self.fc(x.view(x.shape[0], -1).t())
";
    let analysis = analyze(source, &Config::default());
    for d in &analysis.diagnostics {
        for fix in &d.fixes {
            for (_, text) in &fix.edits {
                assert!(!text.contains('B') && !text.contains('?'), "{fix:?}");
            }
        }
    }
}

mod common;

/// Over every fixture and corpus model: each proposed fix applies (its
/// edits in bounds, on character boundaries, not overlapping), and the
/// edited text analyses without a panic. Most must also resolve their
/// diagnostic; the language server offers only those that do.
#[test]
fn every_fix_in_the_fixtures_and_corpus_applies() {
    let (mut proposed, mut resolved) = (0, 0);
    for path in common::python_files() {
        let source = std::fs::read_to_string(&path).unwrap();
        let before = analyze(&source, &Config::default());
        for diagnostic in &before.diagnostics {
            for fix in &diagnostic.fixes {
                proposed += 1;
                let edited = apply(&source, fix)
                    .unwrap_or_else(|| panic!("{}: {fix:?} does not apply", path.display()));
                let after = analyze(&edited, &Config::default());
                if resolves(diagnostic, fix, &before, &after) {
                    resolved += 1;
                }
            }
        }
    }
    eprintln!("{resolved} of {proposed} proposed fixes resolve their diagnostic");
    assert!(proposed >= 10, "only {proposed} fixes proposed");
    assert!(
        resolved * 10 >= proposed * 8,
        "{resolved} of {proposed} resolve"
    );
}
