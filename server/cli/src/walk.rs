//! Finding the files to check: given files as they are, directories walked
//! for `*.py` files the way `git` sees them (`.gitignore`, `.ignore`, hidden
//! files skipped).

use std::collections::BTreeSet;
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
            // A file named on the command line is checked whatever its name:
            // the user asked for it explicitly.
            Ok(meta) if !meta.is_dir() => {
                files.insert(clean(path));
            }
            Ok(_) => walk_dir(path, &mut files, &mut problems),
        }
    }
    (files.into_iter().collect(), problems)
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
