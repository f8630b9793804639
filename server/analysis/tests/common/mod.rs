//! What the tests that compare an analysis with a fresh one share: the
//! files they run over, and how an analysis is compared.

use std::path::{Path, PathBuf};

use shapels_analysis::FileAnalysis;

/// Every fixture and test-corpus model, in a fixed order.
pub fn python_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let mut files = Vec::new();
    for dir in [
        "fixtures/basics",
        "fixtures/diagnostics",
        "fixtures/interpreter",
        "fixtures/library",
        "fixtures/ops",
        "fixtures/stated",
        "corpus",
    ] {
        let mut here: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("read {dir}: {e}"))
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .collect();
        here.sort();
        files.extend(here);
    }
    assert!(files.len() > 100, "the fixtures and test corpus are there");
    files
}

/// Everything an analysis says, ranges and what it read included.
// Not every test file that shares this module compares analyses.
#[allow(dead_code)]
pub fn shown(analysis: &FileAnalysis) -> String {
    format!("{analysis:?}")
}
