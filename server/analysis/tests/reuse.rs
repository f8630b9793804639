//! Analysing a version of a file with the calls of the last version's
//! analysis (`analyze_module_reusing`) gives exactly what analysing it
//! afresh gives — hints, hover, diagnostics, names of sizes and what the
//! analysis read — over every fixture and test-corpus model and chains of
//! code edits of several kinds (a number changed, a name changed, a line
//! repeated, a line removed) in classes, functions and main blocks.

use std::path::Path;

use shapels_analysis::ModuleGraph;
use shapels_analysis::{
    CallCache, Config, Coverage, FileAnalysis, analyze_module, analyze_module_reusing,
};
use shapels_syntax::parse;

mod common;

use common::{edit_chain, first_difference, python_files, shown};

/// Analyses each version with the calls of the one before, comparing with
/// a fresh analysis; returns how many calls were taken.
fn check_chain(path: &Path, text: &str, versions: &[String], coverage: Coverage) -> usize {
    let config = Config::default();
    let first = parse(text);
    let (_, mut calls): (FileAnalysis, CallCache) = analyze_module_reusing(
        text,
        &first.module,
        &config,
        coverage,
        None,
        &ModuleGraph::empty(),
    );
    let mut taken = 0;
    let mut before = text;
    for (i, version) in versions.iter().enumerate() {
        let file = parse(version);
        let (reused, next) = analyze_module_reusing(
            version,
            &file.module,
            &config,
            coverage,
            Some(&calls),
            &ModuleGraph::empty(),
        );
        let fresh = analyze_module(version, &file.module, &config, coverage);
        if shown(&reused) != shown(&fresh) {
            let (a, b) = (format!("{reused:#?}"), format!("{fresh:#?}"));
            let _ = std::fs::write(std::env::temp_dir().join("reuse-taken.txt"), &a);
            let _ = std::fs::write(std::env::temp_dir().join("reuse-fresh.txt"), &b);
            let _ = std::fs::write(std::env::temp_dir().join("reuse-before.py"), before);
            let _ = std::fs::write(std::env::temp_dir().join("reuse-after.py"), version);
            let edited: Vec<String> = before
                .lines()
                .zip(version.lines())
                .filter(|(x, y)| x != y)
                .take(2)
                .map(|(x, y)| format!("{x:?} -> {y:?}"))
                .collect();
            panic!(
                "{}: edit {} of the chain ({}): the analysis that took {} calls from the last version differs from a fresh one:\n{}",
                path.display(),
                i + 1,
                edited.join("; "),
                next.taken(),
                first_difference(&reused, &fresh)
            );
        }
        before = version;
        taken += next.taken();
        calls = next;
    }
    taken
}

#[test]
fn analyses_that_take_calls_equal_fresh_ones() {
    let (mut chains, mut taken) = (0, 0);
    for (k, path) in python_files().iter().enumerate() {
        let text = std::fs::read_to_string(path).expect("read a fixture");
        // Three chains per file, each starting at other lines with another
        // kind of edit; both coverages, alternately.
        for seed in k..k + 3 {
            let versions = edit_chain(&text, seed);
            let coverage = if seed % 2 == 0 {
                Coverage::Bindings
            } else {
                Coverage::Expressions
            };
            taken += check_chain(path, &text, &versions, coverage);
            chains += 1;
        }
    }
    eprintln!("{chains} chains of edits; {taken} calls taken from the last version");
    // A check under which nothing was ever taken would prove nothing.
    assert!(taken > 2000, "only {taken} calls were taken");
}

/// An edit in the main block leaves the model's calls as they were: they
/// are taken, not run; an edit in a helper function runs its calls again.
#[test]
fn what_an_edit_cannot_change_is_taken() {
    let text = "\
import torch
import torch.nn as nn


def widen(x):
    return torch.cat([x, x], dim=-1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(widen(x))


if __name__ == \"__main__\":
    net = Net()
    x = torch.zeros(2, 4)
    y = net(x)
    z = y.sum()
";
    let config = Config::default();
    let analysed = |text: &str, calls: Option<&CallCache>| {
        let file = parse(text);
        let (analysis, next) = analyze_module_reusing(
            text,
            &file.module,
            &config,
            Coverage::Bindings,
            calls,
            &ModuleGraph::empty(),
        );
        let fresh = analyze_module(text, &file.module, &config, Coverage::Bindings);
        assert_eq!(shown(&analysis), shown(&fresh));
        (analysis, next)
    };
    let (_, calls) = analysed(text, None);
    assert!(calls.len() >= 2, "forward and widen are kept: {calls:?}");
    let main_edit = text.replace("z = y.sum()", "z = y.mean()");
    let (_, next) = analysed(&main_edit, Some(&calls));
    assert_eq!(next.taken(), 1, "net(x) is taken whole");
    // `widen` doubles no more: `Net.forward` reads it as a global, so its
    // call is not taken, and the linear layer now sees 4 features.
    let helper_edit = text.replace("[x, x]", "[x]");
    let (analysis, next) = analysed(&helper_edit, Some(&calls));
    assert_eq!(next.taken(), 0);
    assert!(
        analysis
            .diagnostics
            .iter()
            .any(|d| d.code == "linear-shape"),
        "{:?}",
        analysis.diagnostics
    );
}

/// A run whose cancel flag is set stops at its next check and gives no
/// result; unset, it gives exactly what `analyze_module_reusing` gives.
#[test]
fn a_cancelled_analysis_stops_and_gives_nothing() {
    use std::sync::atomic::AtomicBool;
    // More steps than the analysis takes between two looks at the flag.
    let text = format!(
        "import torch\nx = torch.zeros(2, 3)\n{}y = x.sum(0)\n",
        "x = x + 1\n".repeat(600)
    );
    let text = text.as_str();
    let file = parse(text);
    let config = Config::default();
    let run = |cancel: &AtomicBool| {
        shapels_analysis::analyze_module_cancellable(
            text,
            &file.module,
            &config,
            Coverage::Bindings,
            None,
            &ModuleGraph::empty(),
            cancel,
        )
    };
    assert!(run(&AtomicBool::new(true)).is_none());
    let (analysis, _) = run(&AtomicBool::new(false)).expect("not cancelled");
    let (plain, _) = analyze_module_reusing(
        text,
        &file.module,
        &config,
        Coverage::Bindings,
        None,
        &ModuleGraph::empty(),
    );
    assert_eq!(shown(&analysis), shown(&plain));
    assert!(analysis.bindings.iter().any(|b| b.name == "y"));
}
