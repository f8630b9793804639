//! Calls into the user's other files are carried from one version of a
//! file to the next like calls into the file itself (see
//! `interp::memo::across`), and taking them changes nothing: over every
//! project of `tests/fixtures/workspace`, chains of code edits of each
//! file and of each file it imports give, with the calls of the version
//! before, exactly what a fresh analysis gives.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shapels_analysis::workspace::{self, FileSystem, MainFile, ModuleCache, PathKind, SearchPath};
use shapels_analysis::{CallCache, Config, Coverage, FileAnalysis, analyze_module_reusing};
use shapels_syntax::parse;

mod common;

use common::{edit_chain, first_difference, python_files, shown};

/// The disk with some files' text replaced, as an editor's unsaved
/// buffers replace it.
struct Edited(HashMap<PathBuf, Arc<str>>);

impl FileSystem for Edited {
    fn kind(&self, path: &Path) -> PathKind {
        if self.0.contains_key(path) {
            return PathKind::File;
        }
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => PathKind::Dir,
            Ok(m) if m.is_file() => PathKind::File,
            _ => PathKind::Missing,
        }
    }

    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        if let Some(text) = self.0.get(path) {
            return Ok(text.clone());
        }
        std::fs::read_to_string(path)
            .map(Arc::from)
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// One analysis of `main` (whose text is `text`) in `project`, with the
/// files of `edited` in place of the disk's, taking calls from `previous`.
fn analysed(
    project: &Path,
    main: &Path,
    text: &str,
    files: &Edited,
    cache: &mut ModuleCache,
    previous: Option<&CallCache>,
) -> (FileAnalysis, CallCache) {
    let parsed = parse(text);
    let search = SearchPath::new(Some(main), &[project.to_path_buf()], &[], files);
    let graph = workspace::load(
        MainFile {
            path: Some(main),
            module: &parsed.module,
        },
        &search,
        files,
        cache,
    );
    analyze_module_reusing(
        text,
        &parsed.module,
        &Config::default(),
        Coverage::Expressions,
        previous,
        &graph,
    )
}

/// Analyses `main` after each version of `edited_path` (which may be
/// `main` itself) with the calls of the version before, and afresh;
/// returns how many calls were taken.
fn check_chain(project: &Path, main: &Path, edited_path: &Path, versions: &[String]) -> usize {
    let main_text = std::fs::read_to_string(main).expect("read a fixture");
    // Two caches loaded alike number the files alike; the fresh analyses
    // share no kept top level with the ones that take calls.
    let (mut taking, mut fresh) = (ModuleCache::new(), ModuleCache::new());
    let mut files = Edited(HashMap::new());
    let (_, mut calls) = analysed(project, main, &main_text, &files, &mut taking, None);
    let _ = analysed(project, main, &main_text, &files, &mut fresh, None);
    let mut taken = 0;
    for (i, version) in versions.iter().enumerate() {
        let text = if edited_path == main {
            version.clone()
        } else {
            files
                .0
                .insert(edited_path.to_path_buf(), Arc::from(version.as_str()));
            main_text.clone()
        };
        let (reused, next) = analysed(project, main, &text, &files, &mut taking, Some(&calls));
        let (afresh, _) = analysed(project, main, &text, &files, &mut fresh, None);
        assert!(
            shown(&reused) == shown(&afresh),
            "{}: edit {} of {}: the analysis that took {} calls differs from a fresh one:\n{}",
            main.display(),
            i + 1,
            edited_path.display(),
            next.taken(),
            first_difference(&reused, &afresh),
        );
        taken += next.taken();
        calls = next;
    }
    taken
}

#[test]
fn analyses_of_projects_that_take_calls_equal_fresh_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/workspace");
    let files: Vec<PathBuf> = python_files()
        .into_iter()
        .filter(|f| f.starts_with(&root))
        .collect();
    let project_of = |f: &Path| {
        let rel = f.strip_prefix(&root).expect("under the workspace fixtures");
        root.join(rel.components().next().expect("a project folder"))
    };
    let (mut chains, mut taken) = (0, 0);
    for (k, main) in files.iter().enumerate() {
        let project = project_of(main);
        for other in files.iter().filter(|f| project_of(f) == project) {
            let text = std::fs::read_to_string(other).expect("read a fixture");
            let versions = edit_chain(&text, k);
            taken += check_chain(&project, main, other, &versions);
            chains += 1;
        }
    }
    eprintln!("{chains} chains of edits; {taken} calls taken from the last version");
    assert!(taken > 100, "only {taken} calls were taken");
}

/// A call into another file is taken whole when the edit is in the
/// calling file's main block, and run again when the other file changed.
#[test]
fn a_call_into_another_file_is_taken_until_that_file_changes() {
    let dir = std::env::temp_dir().join(format!("shapels-reuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let parts = "\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        assert width % 2 == 0
        self.fc = nn.Linear(width, width // 2)

    def forward(self, x):
        return self.fc(x)


def smoke():
    block = Block(8)
    y = block(torch.zeros(3, 8))
    return y.sum()
";
    let main_text = "\
import torch
from parts import smoke

if __name__ == \"__main__\":
    total = smoke()
    z = torch.ones(2, 2)
";
    let (parts_path, main) = (dir.join("parts.py"), dir.join("train.py"));
    std::fs::write(&parts_path, parts).expect("write parts.py");
    std::fs::write(&main, main_text).expect("write train.py");
    let mut files = Edited(HashMap::new());
    let mut cache = ModuleCache::new();
    let (_, calls) = analysed(&dir, &main, main_text, &files, &mut cache, None);
    let main_edit = main_text.replace("ones(2, 2)", "ones(2, 3)");
    let (_, next) = analysed(&dir, &main, &main_edit, &files, &mut cache, Some(&calls));
    assert_eq!(next.taken(), 1, "smoke() is taken whole");
    // The block's width is odd now: smoke() runs again and fails.
    files.0.insert(
        parts_path.clone(),
        Arc::from(parts.replace("Block(8)", "Block(7)")),
    );
    let (analysis, next) = analysed(&dir, &main, &main_edit, &files, &mut cache, Some(&next));
    assert_eq!(next.taken(), 0);
    assert!(
        !analysis.diagnostics.is_empty(),
        "the odd width is reported: {:?}",
        analysis.diagnostics
    );
    let _ = std::fs::remove_dir_all(&dir);
}
