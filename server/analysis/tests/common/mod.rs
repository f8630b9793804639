//! What the tests that compare an analysis with a fresh one share: the
//! files they run over, and how an analysis is compared.

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

/// Everything an analysis says, ranges and what it read included.
// Not every test file that shares this module compares analyses.
#[allow(dead_code)]
pub fn shown(analysis: &FileAnalysis) -> String {
    format!("{analysis:?}")
}
