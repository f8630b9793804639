//! Finding the files to check: given files when they are Python, directories
//! walked for `*.py` files the way `git` sees them (`.gitignore`, `.ignore`,
//! hidden files skipped).

use std::collections::BTreeSet;
use std::fs::Metadata;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

/// The files to check, sorted and without duplicates, and one message per
/// path that could not be searched.
pub(crate) fn collect(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let mut files = BTreeSet::new();
    let mut problems = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Err(err) => problems.push(format!("{}: {err}", path.display())),
            // A file named on the command line is checked even where the
            // walk would pass it over (ignored, hidden), but only when it is
            // Python: anything else would "pass" for lack of tensors.
            Ok(meta) if !meta.is_dir() => match not_python(path, &meta) {
                None => {
                    files.insert(clean(path));
                }
                Some(problem) => problems.push(problem),
            },
            Ok(_) => walk_dir(path, &mut files, &mut problems),
        }
    }
    (files.into_iter().collect(), problems)
}

/// The extensions of the files that are Python when named on the command line.
const PYTHON_EXTENSIONS: &[&str] = &["py", "pyi", "pyw"];

/// Why a file named on the command line is not checked as Python, or `None`
/// when it is Python: a `.py`, `.pyi` or `.pyw` file, or a script without an
/// extension whose first line runs Python (`#!/usr/bin/env python3`).
pub(crate) fn not_python(path: &Path, meta: &Metadata) -> Option<String> {
    // What is not a regular file (a pipe, a device) is refused when it is
    // to be read, saying what it is: that says more than its name.
    if !meta.is_file() {
        return None;
    }
    let is_python = match path.extension() {
        Some(ext) => PYTHON_EXTENSIONS.iter().any(|py| ext == *py),
        // Only a regular file is opened to read its first line: opening a
        // pipe would wait for a writer.
        None => meta.is_file() && has_python_shebang(path),
    };
    (!is_python).then(|| {
        format!(
            "{}: not a Python file (shapels checks .py and .pyi files, and scripts whose first \
             line runs python); skipped",
            path.display()
        )
    })
}

fn has_python_shebang(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = Vec::new();
    // A shebang line is short; a binary file without newlines is not read whole.
    if BufReader::new(file)
        .take(256)
        .read_until(b'\n', &mut first)
        .is_err()
    {
        return false;
    }
    first.starts_with(b"#!") && first.windows(6).any(|w| w == b"python")
}

fn walk_dir(dir: &Path, files: &mut BTreeSet<PathBuf>, problems: &mut Vec<String>) {
    let walker = WalkBuilder::new(dir)
        // `.gitignore` applies even outside a git checkout (an unpacked
        // archive, a fresh project): it still says what is not source.
        .require_git(false)
        .build();
    for entry in walker {
        match entry {
            Ok(entry) => {
                let is_file = entry.file_type().is_some_and(|t| t.is_file());
                if is_file && entry.path().extension().is_some_and(|ext| ext == "py") {
                    files.insert(clean(entry.path()));
                }
            }
            Err(err) => problems.push(err.to_string()),
        }
    }
}

/// `./model.py` is shown as `model.py`, like every other tool does.
fn clean(path: &Path) -> PathBuf {
    path.strip_prefix(".")
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}
