//! Stale shape comments: each `shape-comment` warning offers a fix, and the
//! fix applied makes the warning go away when the text is analysed again.
//!
//! The fixture runner can only expect a diagnostic on a code line, so the
//! comments on the line above an assignment and the comments that must not
//! be read as shapes are tested here.

use shapels_analysis::{Code, Config, FileAnalysis, analyze};

mod common;

use common::python_files;

/// The text with one fix's edits applied (they do not overlap).
fn apply(text: &str, edits: &[(shapels_analysis::TextRange, String)]) -> String {
    let mut edits = edits.to_vec();
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for (range, new) in edits {
        out.replace_range(range, &new);
    }
    out
}

fn stale(analysis: &FileAnalysis) -> Vec<&shapels_analysis::Diagnostic> {
    analysis
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::ShapeComment)
        .collect()
}

/// Applies every stale comment's fix to `text` and checks that the warning is
/// gone after; returns how many were fixed.
fn fix_all(name: &str, text: &str) -> usize {
    let config = Config::default();
    let analysis = analyze(text, &config);
    let mut fixed = 0;
    for diagnostic in stale(&analysis) {
        assert_eq!(
            diagnostic.fixes.len(),
            1,
            "{name}: a stale comment offers one fix: {diagnostic:?}"
        );
        let fix = &diagnostic.fixes[0];
        let edited = apply(text, &fix.edits);
        let again = analyze(&edited, &config);
        let at = fix.edits[0].0.start;
        assert!(
            !stale(&again).iter().any(|d| d.range.start == at),
            "{name}: after `{}` the comment is still stale:\n{}",
            fix.title,
            edited
        );
        assert_eq!(
            stale(&again).len() + 1,
            stale(&analysis).len(),
            "{name}: the fix `{}` changed other warnings",
            fix.title
        );
        fixed += 1;
    }
    fixed
}

#[test]
fn every_fix_makes_its_warning_go_away() {
    let mut fixed = 0;
    for path in python_files() {
        let text = std::fs::read_to_string(&path).expect("read a fixture");
        fixed += fix_all(&path.display().to_string(), &text);
    }
    assert!(fixed >= 3, "only {fixed} stale comments in the fixtures");
}

#[test]
fn comment_on_the_line_above() {
    let text =
        "import torch\n\nx = torch.randn(2, 3)\n# (B, T, C)\ny = x.t()\n# [3, 2]\nz = x.t()\n";
    let analysis = analyze(text, &Config::default());
    let stale = stale(&analysis);
    assert_eq!(stale.len(), 1, "{:?}", analysis.diagnostics);
    let at = text.find("(B, T, C)").unwrap();
    assert_eq!(stale[0].range, at..at + "(B, T, C)".len());
    assert_eq!(stale[0].fixes[0].edits[0].1, "(3, 2)");
    assert_eq!(fix_all("above", text), 1);
}

#[test]
fn a_sphinx_docstring_is_rewritten_between_its_brackets() {
    let text = "\
import torch


def f(x):
    \"\"\"
    :param x: an [N x C] Tensor of features.
    \"\"\"
    return x.sum(-1)


y = f(torch.randn(2, 3, 4))
";
    let analysis = analyze(text, &Config::default());
    let stale = stale(&analysis);
    assert_eq!(stale.len(), 1, "{:?}", analysis.diagnostics);
    assert_eq!(stale[0].fixes[0].edits[0].1, "2 x 3 x 4");
    assert_eq!(fix_all("sphinx", text), 1);
    // `a 1-D batch` is words: the warning stands, with no rewrite of them.
    let words = text.replace("an [N x C] Tensor of features", "a 1-D batch of features");
    let analysis = analyze(&words, &Config::default());
    let stale = self::stale(&analysis);
    assert_eq!(stale.len(), 1, "{:?}", analysis.diagnostics);
    assert!(stale[0].fixes.is_empty());
}

#[test]
fn each_notation_is_rewritten_in_its_own() {
    let cases = [
        ("y = x.t()  # (B, T)\n", "(T, B)"),
        ("y = x.t()  # [B, T]\n", "[T, B]"),
        ("y = x.t()  # B x T\n", "T x B"),
        ("y = x.t()  # shape: (B, T)\n", "(T, B)"),
        ("y = x.t()  # y: [B, T]\n", "[T, B]"),
        ("y = x.sum(0)  # (B, T)\n", "(T,)"),
        ("y = x[None]  # (B, 4)\n", "(1, B, T)"),
    ];
    for (line, expected) in cases {
        let text =
            format!("import torch\n\n\ndef f(x):\n    B, T = x.shape\n    {line}    return y\n");
        let analysis = analyze(&text, &Config::default());
        let stale = stale(&analysis);
        assert_eq!(stale.len(), 1, "{line}: {:?}", analysis.diagnostics);
        assert_eq!(stale[0].fixes[0].edits[0].1, expected, "{line}");
        assert!(
            !stale[0].related.is_empty(),
            "{line}: where the shape comes from"
        );
        assert_eq!(fix_all(line, &text), 1);
    }
}

#[test]
fn prose_and_agreeing_comments_are_not_flagged() {
    let comments = [
        "# 3x3 conv",
        "# (see above, and below)",
        "# (optional)",
        "# keep (B, T) for now",
        "# noqa: E501",
        "# type: ignore",
        "# x: (bchw)",
        "# (B, T, C) embeddings",
        "# (B, nh, T, hs)",
        "# (batch, heads, seq, dim)",
        "# [8, 4, 16, 2]",
        "# 8 x 4 x 16 x 2",
        "# (B, T, C) -> (B, nh, T, hs)",
        "# (..., hs)",
        "# other: (1, 2)",
    ];
    for comment in comments {
        let text = format!(
            "import torch\n\nx = torch.randn(8, 4, 32)\ny = x.view(8, 4, 16, 2)  {comment}\n"
        );
        let analysis = analyze(&text, &Config::default());
        assert!(
            stale(&analysis).is_empty(),
            "{comment}: {:?}",
            analysis.diagnostics
        );
    }
}

#[test]
fn a_call_contradicting_a_docstring() {
    let text = "import torch\n\n\ndef center(x):\n    \"\"\"Center rows.\n\n    Parameters\n    ----------\n    x : Tensor, shape (N, D)\n        The rows.\n    \"\"\"\n    return x - x.mean(0)\n\n\ncenter(torch.randn(4, 5, 6))\ncenter(torch.randn(4, 5))\n";
    let analysis = analyze(text, &Config::default());
    let stale = stale(&analysis);
    assert_eq!(stale.len(), 1, "{:?}", analysis.diagnostics);
    let at = text.find("(N, D)").unwrap();
    assert_eq!(stale[0].range, at..at + "(N, D)".len());
    assert!(
        stale[0].message.contains("[4, 5, 6]"),
        "{}",
        stale[0].message
    );
    assert_eq!(stale[0].fixes[0].edits[0].1, "(4, 5, 6)");
    // No error: a docstring is documentation.
    assert!(
        analysis
            .diagnostics
            .iter()
            .all(|d| d.severity != shapels_analysis::Severity::Error),
        "{:?}",
        analysis.diagnostics
    );
}

#[test]
fn a_return_contradicting_its_docstring() {
    let text = "import torch\n\n\ndef pool(x):\n    \"\"\"Pool.\n\n    Args:\n        x (Tensor): (N, C, L) input.\n\n    Returns:\n        Tensor: (N, L) pooled.\n    \"\"\"\n    return x.mean(-1)\n\n\npool(torch.randn(2, 3, 4))\n";
    let analysis = analyze(text, &Config::default());
    let found = stale(&analysis);
    assert_eq!(found.len(), 1, "{:?}", analysis.diagnostics);
    let at = text.find("(N, L)").unwrap();
    assert_eq!(found[0].range, at..at + "(N, L)".len());
    assert_eq!(
        found[0].message,
        "the docstring says the return is (N, L), but [2, 3] is returned: dim 1: `L` is 3 here but 4 before"
    );
    assert_eq!(found[0].severity, shapels_analysis::Severity::Warning);
    // The fix rewrites the docstring in the names its parameters gave the
    // sizes, and the warning goes.
    assert_eq!(found[0].fixes[0].edits[0].1, "(N, C)");
    assert_eq!(fix_all("pool", text), 1);
    // A docstring that agrees, and one whose `Returns:` is prose, say nothing.
    for returns in ["Tensor: (N, C) pooled.", "the pooled rows (a tensor)."] {
        let agreeing = text.replace("Tensor: (N, L) pooled.", returns);
        let analysis = analyze(&agreeing, &Config::default());
        assert!(
            stale(&analysis).is_empty(),
            "{returns}: {:?}",
            analysis.diagnostics
        );
    }
}

#[test]
fn an_agreeing_comment_names_derived_sizes_on_hover() {
    let text = "import torch\n\n\ndef heads(x, n_head: int):\n    B, T, C = x.size()\n    q = x.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, nh, T, hs)\n    return q\n";
    let analysis = analyze(text, &Config::default());
    assert!(stale(&analysis).is_empty(), "{:?}", analysis.diagnostics);
    let q = analysis
        .bindings
        .iter()
        .find(|b| b.name == "q")
        .expect("q is bound");
    assert_eq!(q.tensor.shape_label(), "[B, n_head, T, C // n_head]");
    for note in [
        "the comment calls n_head `nh`",
        "the comment calls C // n_head `hs`",
    ] {
        assert!(
            q.tensor.notes.iter().any(|n| n == note),
            "{note}: {:?}",
            q.tensor.notes
        );
    }
}
