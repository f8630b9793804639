//! Benchmarks of one file: cold parse + analysis, re-analysis after a
//! keystroke, and inlay hints for a visible range.
//!
//! The server's analysis on opening a file and on every keystroke records
//! bindings and diagnostics (`Coverage::Bindings`); the analysis that also
//! records every expression runs only for a hover between names, and has
//! its own figure (`with_expressions`).
//!
//! Run with `cargo bench -p shapels-analysis`; the figures and the targets
//! they are held to are in `BENCHMARKS.md` at the top of the repository.

mod common;

/// The allocator the `shapels` binary uses, so that the figures are the
/// server's.
#[global_allocator]
static ALLOCATOR: shapels_syntax::Mimalloc = shapels_syntax::Mimalloc;

use std::hint::black_box;
use std::time::Duration;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use shapels_analysis::ModuleGraph;
use shapels_analysis::workspace::{self, FileSystem, MainFile, ModuleCache, PathKind, SearchPath};
use shapels_analysis::{
    Config, Coverage, HintDetail, analyze, analyze_module, analyze_module_reusing, carry_over,
    inlay_hints,
};
use shapels_syntax::{ByteEdit, parse, reparse};

/// The realistic ~400-line model file (GPT with a config dataclass,
/// attention, MLP, blocks, embeddings and a main block).
const GPT: &str = include_str!("data/gpt.py");

/// The text with one character typed at the first occurrence of `anchor`
/// (right after it), and the edit that describes it.
fn type_after(text: &str, anchor: &str, typed: &str) -> (String, ByteEdit) {
    let at = text.find(anchor).expect("anchor in the text") + anchor.len();
    let new_text = format!("{}{typed}{}", &text[..at], &text[at..]);
    let edit = ByteEdit {
        start_byte: at,
        old_end_byte: at,
        new_end_byte: at + typed.len(),
    };
    (new_text, edit)
}

fn cold(c: &mut Criterion) {
    let config = Config::default();
    let large = common::model_file(5_000, 7);
    let mut group = c.benchmark_group("cold");
    group.bench_function("gpt_400_lines", |b| {
        b.iter(|| {
            let file = parse(black_box(GPT));
            analyze_module(GPT, &file.module, &config, Coverage::Bindings)
        })
    });
    group.bench_function("gpt_400_lines_with_expressions", |b| {
        b.iter(|| analyze(black_box(GPT), &config))
    });
    group.bench_function("gpt_400_lines_parse_only", |b| {
        b.iter(|| parse(black_box(GPT)))
    });
    group.bench_function("generated_5000_lines", |b| {
        b.iter(|| {
            let file = parse(black_box(&large));
            analyze_module(&large, &file.module, &config, Coverage::Bindings)
        })
    });
    group.finish();
}

fn keystroke(c: &mut Criterion) {
    let config = Config::default();
    let old = parse(GPT);
    // A character typed into a name inside `MLP.__init__`: the structure
    // stays valid, as after most keystrokes, and the edit stays inside one
    // token, so the parser need not run (`shapels_syntax`'s `token`).
    let (valid, valid_edit) = type_after(GPT, "hidden = config.mlp_ratio * config.n_embd", "0");
    // An operator typed at the same place (`2 * `): the tree changes shape,
    // and tree-sitter's incremental parse runs.
    let (operator, operator_edit) = type_after(GPT, "hidden = ", "2 * ");
    // An open parenthesis in `Block.forward`: the file is broken until the
    // matching `)` is typed, which the server answers with a fresh parse.
    let (broken, broken_edit) = type_after(GPT, "x = x + self.mlp(", "(");
    let mut group = c.benchmark_group("keystroke");
    group.bench_function("gpt_400_lines_reparse_and_analyze", |b| {
        b.iter(|| {
            let file = reparse(&old, GPT, black_box(&valid), valid_edit);
            analyze_module(&valid, &file.module, &config, Coverage::Bindings)
        })
    });
    // What the server runs: the calls the edit cannot have changed (those
    // that do not reach `MLP`) are taken from the last version's analysis.
    let (_, calls) = analyze_module_reusing(
        GPT,
        &old.module,
        &config,
        Coverage::Bindings,
        None,
        &ModuleGraph::empty(),
    );
    group.bench_function("gpt_400_lines_reparse_and_analyze_reusing", |b| {
        b.iter(|| {
            let file = reparse(&old, GPT, black_box(&valid), valid_edit);
            analyze_module_reusing(
                &valid,
                &file.module,
                &config,
                Coverage::Bindings,
                Some(&calls),
                &ModuleGraph::empty(),
            )
        })
    });
    group.bench_function("gpt_400_lines_operator_reparse_and_analyze_reusing", |b| {
        b.iter(|| {
            let file = reparse(&old, GPT, black_box(&operator), operator_edit);
            analyze_module_reusing(
                &operator,
                &file.module,
                &config,
                Coverage::Bindings,
                Some(&calls),
                &ModuleGraph::empty(),
            )
        })
    });
    // A digit typed into the main block's last lines, where a script's
    // user edits most: the model's calls are all taken.
    let (main_edit, main_edit_at) =
        type_after(GPT, "mfu = model.estimate_mfu(batch_size, 0.5", "0");
    group.bench_function("gpt_400_lines_main_block_reparse_and_analyze", |b| {
        b.iter(|| {
            let file = reparse(&old, GPT, black_box(&main_edit), main_edit_at);
            analyze_module(&main_edit, &file.module, &config, Coverage::Bindings)
        })
    });
    group.bench_function(
        "gpt_400_lines_main_block_reparse_and_analyze_reusing",
        |b| {
            b.iter(|| {
                let file = reparse(&old, GPT, black_box(&main_edit), main_edit_at);
                analyze_module_reusing(
                    &main_edit,
                    &file.module,
                    &config,
                    Coverage::Bindings,
                    Some(&calls),
                    &ModuleGraph::empty(),
                )
            })
        },
    );
    group.bench_function("gpt_400_lines_reparse_only", |b| {
        b.iter(|| reparse(&old, GPT, black_box(&valid), valid_edit))
    });
    group.bench_function("gpt_400_lines_analyze_only", |b| {
        let file = reparse(&old, GPT, &valid, valid_edit);
        b.iter(|| analyze_module(black_box(&valid), &file.module, &config, Coverage::Bindings))
    });
    group.bench_function("gpt_400_lines_analyze_with_expressions", |b| {
        let file = reparse(&old, GPT, &valid, valid_edit);
        b.iter(|| {
            analyze_module(
                black_box(&valid),
                &file.module,
                &config,
                Coverage::Expressions,
            )
        })
    });
    // A letter typed into a comment inside `CausalSelfAttention.forward`:
    // the analysis of the old text is carried over (`carry_over`) instead
    // of run again, after the checks that it still holds.
    let (commented, comment_edit) = type_after(GPT, "# queries, keys and values", "s");
    let previous = analyze_module(GPT, &old.module, &config, Coverage::Bindings);
    group.bench_function("gpt_400_lines_comment_reparse_and_carry_over", |b| {
        b.iter(|| {
            let file = reparse(&old, GPT, black_box(&commented), comment_edit);
            carry_over(&previous, (GPT, &old), (&commented, &file), comment_edit)
                .expect("a comment edit carries over")
        })
    });
    group.bench_function("gpt_400_lines_broken_reparse_and_analyze", |b| {
        b.iter(|| {
            let file = reparse(&old, GPT, black_box(&broken), broken_edit);
            analyze_module(&broken, &file.module, &config, Coverage::Bindings)
        })
    });
    group.finish();
}

/// Files held in memory, for the workspace benchmarks: the host's view of
/// the disk without the disk.
struct MemoryFiles(HashMap<PathBuf, Arc<str>>);

impl FileSystem for MemoryFiles {
    fn kind(&self, path: &Path) -> PathKind {
        if self.0.contains_key(path) {
            PathKind::File
        } else if self.0.keys().any(|p| p.starts_with(path)) {
            PathKind::Dir
        } else {
            PathKind::Missing
        }
    }

    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        self.0
            .get(path)
            .cloned()
            .ok_or_else(|| "missing".to_string())
    }
}

/// The GPT file importing ten modules of the same project (generated
/// model code of ~80 lines each, whose smoke tests the main block runs):
/// the file's text and the project's files.
fn gpt_with_imports() -> (String, MemoryFiles) {
    let mut files = HashMap::new();
    let mut imports = String::new();
    let mut calls = String::new();
    for k in 0..10u64 {
        let module =
            common::model_file(80, 100 + k).replace("if __name__ == \"__main__\":", "def smoke():");
        files.insert(
            PathBuf::from(format!("/proj/parts{k}.py")),
            Arc::from(module),
        );
        imports.push_str(&format!("from parts{k} import smoke as smoke{k}\n"));
        calls.push_str(&format!("    smoke{k}()\n"));
    }
    let text = format!("{imports}{GPT}{calls}");
    files.insert(PathBuf::from("/proj/train.py"), Arc::from(text.as_str()));
    (text, MemoryFiles(files))
}

fn keystroke_with_imports(c: &mut Criterion) {
    let config = Config::default();
    let (text, files) = gpt_with_imports();
    let path = Path::new("/proj/train.py");
    let search = SearchPath::new(Some(path), &[PathBuf::from("/proj")], &[], &files);
    let mut cache = ModuleCache::new();
    let old = parse(&text);
    let load = |cache: &mut ModuleCache, module: &shapels_syntax::ast::Module| {
        workspace::load(
            MainFile {
                path: Some(path),
                module,
            },
            &search,
            &files,
            cache,
        )
    };
    let graph = load(&mut cache, &old.module);
    assert_eq!(graph.dependencies().len(), 10, "the ten modules are found");
    let (valid, valid_edit) = type_after(&text, "hidden = config.mlp_ratio * config.n_embd", "0");
    let (_, calls) = analyze_module_reusing(
        &text,
        &old.module,
        &config,
        Coverage::Bindings,
        None,
        &graph,
    );
    let mut group = c.benchmark_group("keystroke_with_imports");
    // What the server runs on a keystroke: reparse, find the imports again
    // (each module's parse comes from the cache), analyse taking calls.
    group.bench_function(
        "gpt_400_lines_10_modules_reparse_load_and_analyze_reusing",
        |b| {
            b.iter(|| {
                let file = reparse(&old, &text, black_box(&valid), valid_edit);
                let graph = load(&mut cache, &file.module);
                analyze_module_reusing(
                    &valid,
                    &file.module,
                    &config,
                    Coverage::Bindings,
                    Some(&calls),
                    &graph,
                )
            })
        },
    );
    group.bench_function("gpt_400_lines_10_modules_load_only", |b| {
        let file = reparse(&old, &text, &valid, valid_edit);
        b.iter(|| load(&mut cache, black_box(&file.module)))
    });
    group.finish();
}

fn hints(c: &mut Criterion) {
    let config = Config::default();
    let analysis = analyze(GPT, &config);
    // About one screen: 60 lines from `CausalSelfAttention.forward` on.
    let start = GPT
        .find("    def forward(self, x, cos=None, sin=None):")
        .unwrap();
    let end = GPT[start..]
        .match_indices('\n')
        .nth(60)
        .map_or(GPT.len(), |(i, _)| start + i);
    let mut group = c.benchmark_group("inlay_hints");
    group.bench_function("gpt_visible_60_lines", |b| {
        b.iter(|| {
            inlay_hints(
                black_box(&analysis),
                Some(shapels_analysis::TextRange::new(start, end)),
                HintDetail::Shape,
            )
        })
    });
    group.bench_function("gpt_whole_file_full_detail", |b| {
        b.iter(|| inlay_hints(black_box(&analysis), None, HintDetail::Full))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // The machines are small and shared: short runs, enough samples for a
    // stable median.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = cold, keystroke, keystroke_with_imports, hints
}
criterion_main!(benches);
