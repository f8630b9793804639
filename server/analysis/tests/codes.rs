//! Every diagnostic code is documented in the README and shown by a fixture.
//!
//! The codes are read from the analysis sources themselves (the first
//! kebab-case string literal of each `report(...)` call), so a new code
//! cannot ship without its README row and an example that is a test.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable source dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn py_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable fixture dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            py_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

fn is_code(s: &str) -> bool {
    s.contains('-')
        && !s.starts_with('-')
        && !s.ends_with('-')
        && s.chars().all(|c| c.is_ascii_lowercase() || c == '-')
}

/// The first kebab-case string literal after each `report(` / `report_related(`.
fn codes_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in text.match_indices("report").map(|(i, _)| i) {
        let rest = &text[start..];
        if !(rest.starts_with("report(") || rest.starts_with("report_related(")) {
            continue;
        }
        let window = &rest[..rest.len().min(600)];
        let mut parts = window.split('"');
        parts.next();
        // Literals alternate with code between them.
        for (i, part) in parts.enumerate() {
            if i % 2 == 0 && is_code(part) {
                out.push(part.to_string());
                break;
            }
        }
    }
    out
}

#[test]
fn every_code_has_a_readme_row_and_a_fixture() {
    let mut sources = Vec::new();
    rust_files(&root().join("server/analysis/src"), &mut sources);
    let mut codes = BTreeSet::new();
    for file in &sources {
        let text = fs::read_to_string(file).expect("readable source");
        codes.extend(codes_in(&text));
    }
    assert!(
        codes.len() >= 20,
        "found only {} codes: {codes:?}",
        codes.len()
    );

    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut fixtures = Vec::new();
    py_files(&root().join("tests/fixtures"), &mut fixtures);
    let fixture_text: String = fixtures
        .iter()
        .map(|f| fs::read_to_string(f).unwrap_or_default())
        .collect();

    let mut problems = Vec::new();
    for code in &codes {
        if !readme.contains(&format!("| `{code}` |")) {
            problems.push(format!(
                "`{code}` has no row in the README's diagnostics table"
            ));
        }
        if !fixture_text.contains(&format!("[{code}]")) {
            problems.push(format!(
                "`{code}` has no fixture under tests/fixtures that expects it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
