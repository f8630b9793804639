//! What the tests that compare an analysis with a fresh one share: the
//! files they run over, the edits they make, and how an analysis is
//! compared.

use std::path::{Path, PathBuf};

use shapels_analysis::FileAnalysis;

/// Every fixture and test-corpus model, in a fixed order.
pub fn python_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let mut files = Vec::new();
    // Every folder of fixtures, found rather than listed, so that a new
    // one is covered the day it is added.
    for dir in ["fixtures", "corpus"] {
        let mut here = Vec::new();
        collect_python(&root.join(dir), &mut here);
        here.sort();
        files.extend(here);
    }
    assert!(files.len() > 100, "the fixtures and test corpus are there");
    files
}

fn collect_python(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect_python(&path, files);
        } else if path.extension().is_some_and(|e| e == "py") {
            files.push(path);
        }
    }
}

/// The first lines where an analysis that took calls from the last
/// version (`taken`) and a fresh one differ, pretty-printed.
// Not every test file that shares this module compares analyses.
#[allow(dead_code)]
pub fn first_difference(taken: &FileAnalysis, fresh: &FileAnalysis) -> String {
    let (a, b) = (format!("{taken:#?}"), format!("{fresh:#?}"));
    a.lines()
        .zip(b.lines())
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .take(6)
        .map(|(n, (x, y))| format!("line {n}: taken {x} / fresh {y}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Everything an analysis says, ranges and what it read included.
// Not every test file that shares this module compares analyses.
#[allow(dead_code)]
pub fn shown(analysis: &FileAnalysis) -> String {
    format!("{analysis:?}")
}

/// Lines with code (not blank, not a comment, outside docstrings), by the
/// byte range of the line including its newline.
fn code_lines(text: &str) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut in_docstring = false;
    for line in text.split_inclusive('\n') {
        let quotes = line.matches("\"\"\"").count();
        let in_string = in_docstring || quotes > 0;
        in_docstring ^= quotes % 2 == 1;
        let trimmed = line.trim();
        if !in_string && !trimmed.is_empty() && !trimmed.starts_with('#') {
            lines.push((start, start + line.len()));
        }
        start += line.len();
    }
    lines
}

/// A chain of code edits of `text`, each applied to the one before: at
/// lines spread over the file, one of each kind in turn.
#[allow(dead_code)]
pub fn edit_chain(text: &str, seed: usize) -> Vec<String> {
    let mut versions = Vec::new();
    let mut current = text.to_string();
    for step in 0..4 {
        let lines = code_lines(&current);
        if lines.is_empty() {
            break;
        }
        let (start, end) = lines[(lines.len() * (2 * step + 1 + seed % 3) / 9) % lines.len()];
        let line = &current[start..end];
        let code_end = start + line.find('#').unwrap_or(line.len());
        let code = &current[start..code_end];
        let next = match (step + seed) % 4 {
            // A number changed: a size, a count, a dim.
            0 => match code.find(|c: char| c.is_ascii_digit()) {
                Some(i) => {
                    let at = start + i;
                    let digit = if &current[at..=at] == "3" { "5" } else { "3" };
                    format!("{}{digit}{}", &current[..at], &current[at + 1..])
                }
                None => format!("{}{}", &current[..start], &current[end..]),
            },
            // A name changed (it no longer resolves, or means another thing).
            1 => match code.find(" = ") {
                Some(i) => format!("{}_b{}", &current[..start + i], &current[start + i..]),
                None => format!("{}{line}{}", &current[..start], &current[start..]),
            },
            // A line repeated (`x = f(x)` twice).
            2 => format!("{}{line}{}", &current[..start], &current[start..]),
            // A line removed.
            _ => format!("{}{}", &current[..start], &current[end..]),
        };
        versions.push(next.clone());
        current = next;
    }
    versions
}
