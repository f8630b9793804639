//! Carrying an analysis over an edit (`carry_over`) gives exactly what
//! analysing the edited text gives, over every fixture and test-corpus
//! model and edits of every kind: comments typed, changed and removed,
//! docstrings, blank lines, spacing, shape comments, and code (which never
//! carries).

use std::path::Path;

use shapels_analysis::{Config, Coverage, analyze_module, carry_over};
use shapels_syntax::{edit_between, parse, reparse};

mod common;

use common::{python_files, shown};

/// Edits of one text that touch no code, each as the new text.
fn trivia_edits(text: &str) -> Vec<String> {
    let line_ends: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
    let pick = |k: usize| line_ends.get(line_ends.len() * k / 7).copied();
    let mut edits = Vec::new();
    for k in 1..6 {
        let Some(at) = pick(k) else { continue };
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[line_start..at];
        // A comment typed at the end of a line (inside a string it would be
        // code; the comparison with a fresh analysis covers that too).
        if !line.contains('#') && !line.trim().is_empty() {
            edits.push(format!("{}  # note{}", &text[..at], &text[at..]));
        }
        // A blank line.
        edits.push(format!("{}\n{}", &text[..at], &text[at..]));
        // Spacing around an operator.
        if let Some(eq) = line.find(" = ") {
            let pos = line_start + eq;
            edits.push(format!("{}  {}", &text[..pos], &text[pos + 1..]));
        }
    }
    // Words typed into a docstring.
    if let Some(quotes) = text.find("\"\"\"") {
        let at = quotes + 3;
        edits.push(format!("{}Note. {}", &text[..at], &text[at..]));
    }
    // An existing comment changed, and one removed.
    if let Some(hash) = text.find("# ") {
        edits.push(format!("{}# edited: {}", &text[..hash], &text[hash + 2..]));
        let end = text[hash..].find('\n').map_or(text.len(), |i| hash + i);
        edits.push(format!("{}{}", &text[..hash], &text[end..]));
    }
    edits
}

/// Edits that change code, each as the new text: a digit and a name on
/// the first lines with code before any comment, outside docstrings.
fn code_edits(text: &str) -> Vec<String> {
    let mut edits = Vec::new();
    let mut line_start = 0;
    let (mut digit, mut name) = (None, None);
    let mut in_docstring = false;
    for line in text.split_inclusive('\n') {
        let quotes = line.matches("\"\"\"").count();
        let in_string = in_docstring || quotes > 0;
        in_docstring ^= quotes % 2 == 1;
        if in_string {
            line_start += line.len();
            continue;
        }
        let code = &line[..line.find('#').unwrap_or(line.len())];
        if digit.is_none() {
            digit = code
                .find(|c: char| c.is_ascii_digit())
                .map(|i| line_start + i);
        }
        if name.is_none() {
            name = code.find(" = ").map(|i| line_start + i);
        }
        line_start += line.len();
    }
    if let Some(at) = digit {
        let next = if &text[at..=at] == "7" { "8" } else { "7" };
        edits.push(format!("{}{next}{}", &text[..at], &text[at + 1..]));
    }
    if let Some(at) = name {
        edits.push(format!("{}_{}", &text[..at], &text[at..]));
    }
    edits
}

/// Carries the analysis of `old` over to `new`; when it carries, the result
/// must be the analysis of `new`. Returns whether it carried.
fn carries(path: &Path, old: &str, new: &str, coverage: Coverage) -> bool {
    let config = Config::default();
    let old_file = parse(old);
    let previous = analyze_module(old, &old_file.module, &config, coverage);
    let edit = edit_between(old, new);
    let new_file = reparse(&old_file, old, new, edit);
    let Some(carried) = carry_over(&previous, (old, &old_file), (new, &new_file), edit) else {
        return false;
    };
    let fresh = analyze_module(new, &parse(new).module, &config, coverage);
    assert_eq!(
        shown(&carried),
        shown(&fresh),
        "{}: the carried analysis differs from a fresh one after {edit:?}",
        path.display()
    );
    true
}

#[test]
fn carried_analyses_equal_fresh_ones() {
    let (mut tried, mut carried) = (0, 0);
    for path in python_files() {
        let text = std::fs::read_to_string(&path).expect("read a fixture");
        for (i, new) in trivia_edits(&text).iter().enumerate() {
            // Both coverages, alternately, to keep the run short.
            let coverage = if i % 2 == 0 {
                Coverage::Bindings
            } else {
                Coverage::Expressions
            };
            tried += 1;
            carried += usize::from(carries(&path, &text, new, coverage));
        }
        for new in code_edits(&text) {
            assert!(
                !carries(&path, &text, &new, Coverage::Bindings),
                "{}: a code edit was carried over",
                path.display()
            );
        }
    }
    eprintln!("{carried} of {tried} edits that touch no code were carried over");
    // Most trivia edits carry (some land in a function's trailing comment,
    // which tree-sitter counts into the function, or in a string): a check
    // that almost never carried would prove nothing.
    assert!(
        carried * 10 >= tried * 6,
        "only {carried} of {tried} edits that touch no code were carried over"
    );
}

/// A comment that states a parameter's shape is read by the analysis:
/// editing it runs the analysis again, editing any other comment does not.
#[test]
fn shape_comments_are_read_other_comments_are_not() {
    let text = "import torch\n\n\ndef f(x):\n    # x: (B, 4)\n    # some note\n    y = x.sum(0)\n    return y\n";
    let path = Path::new("inline");
    let stated = text.replace("# x: (B, 4)", "# x: (B, 5)");
    assert!(!carries(path, text, &stated, Coverage::Bindings));
    let note = text.replace("# some note", "# another note");
    assert!(carries(path, text, &note, Coverage::Bindings));
}

/// A name read from the text (`cfg.width` names a size) is read again.
#[test]
fn names_read_from_the_text_are_checked() {
    let text = "import torch\n\n\nclass C:\n    width = 4\n\n\ndef f(cfg, x):\n    h = torch.zeros(cfg .width)  # spaced\n    return h\n";
    let path = Path::new("inline");
    let respaced = text.replace("cfg .width", "cfg  .width");
    carries(path, text, &respaced, Coverage::Bindings);
    let recommented = text.replace("# spaced", "# spaced out");
    assert!(carries(path, text, &recommented, Coverage::Bindings));
}
