//! Running the analysis so that a bug in it costs one result, not the process.
//!
//! The analysis promises never to panic, but it is a large interpreter over
//! arbitrary user code, and an editor session must survive the day it breaks
//! that promise. Both the server and `shapels check` call it through here.

use std::panic::{AssertUnwindSafe, catch_unwind};

use std::cell::RefCell;
use std::path::Path;

use shapels_analysis::workspace::{self, FileSystem, MainFile, ModuleCache, SearchPath};
use shapels_analysis::{Config, Coverage, FileAnalysis};
use shapels_syntax::ParsedFile;

/// The largest source, in bytes, that is parsed and analysed. Above this
/// the cost grows past what an editor or CI can wait for (release build: a
/// 10 MB one-line list took over a minute and 2 GB, mostly in tree-sitter's
/// parse and query cursor; 10 MB of model code about 10 s), and such files
/// are generated code, not models. Larger files are skipped with a message.
pub const MAX_SOURCE_BYTES: usize = 4 * 1024 * 1024;

/// Why `source` is not analysed, when it is too large; `name` names the file.
pub fn too_large(name: &str, source: &str) -> Option<String> {
    too_large_len(name, source.len() as u64)
}

/// [`too_large`] for a source of `len` bytes not read (yet).
pub fn too_large_len(name: &str, len: u64) -> Option<String> {
    (len > MAX_SOURCE_BYTES as u64).then(|| {
        format!(
            "{name}: {:.1} MiB, more than the {} MiB shapels analyses; skipped",
            len as f64 / (1024.0 * 1024.0),
            MAX_SOURCE_BYTES / (1024 * 1024)
        )
    })
}

/// The stack of every thread that runs the analysis, in the server and in
/// `shapels check`, so that a file that checks also works in the editor.
/// The analysis recurses over expressions, calls and the values it joins;
/// the syntax layer and the interpreter cap the first two, not the last,
/// and Python's own `_strptime.py` needs more than the 2 MiB that rayon's
/// and tokio's threads have, even in a release build. Only the pages used
/// are ever touched.
pub const ANALYSIS_STACK: usize = 16 * 1024 * 1024;

/// An analysis entry point: [`bindings_and_diagnostics`], or a stand-in in
/// tests.
pub type Analyzer = fn(&str, &Config) -> FileAnalysis;

/// Analyses `source` for bindings and diagnostics (what `check` and `hints`
/// show), or returns `None` (after logging the panic message) when the
/// analysis panics. `name` identifies the file in the log.
pub fn analyze(name: &str, source: &str, config: &Config) -> Option<FileAnalysis> {
    analyze_with(bindings_and_diagnostics, name, source, config)
}

/// Parses and analyses `source` without recording expressions; its syntax
/// errors are diagnostics too, as the language server publishes them.
fn bindings_and_diagnostics(source: &str, config: &Config) -> FileAnalysis {
    let parsed = shapels_syntax::parse(source);
    let mut analysis =
        shapels_analysis::analyze_module(source, &parsed.module, config, Coverage::Bindings);
    shapels_analysis::add_syntax_errors(&mut analysis, &parsed);
    analysis
}

thread_local! {
    /// The imported modules parsed on this thread, shared by the files it
    /// checks (the syntax cannot cross threads).
    static MODULES: RefCell<ModuleCache> = RefCell::new(ModuleCache::new());
}

/// The modules `main` imports, parsed once per thread and shared by the
/// files it checks.
fn load_imports(
    main: MainFile<'_>,
    search: &SearchPath,
    files: &dyn FileSystem,
) -> shapels_analysis::ModuleGraph {
    MODULES.with(|cache| match cache.try_borrow_mut() {
        Ok(mut cache) => workspace::load(main, search, files, &mut cache),
        // Only if loading re-entered itself; a fresh cache will do.
        Err(_) => workspace::load(main, search, files, &mut ModuleCache::new()),
    })
}

/// Analyses `source`, the text of the file at `path`, following its imports
/// of the user's own modules along `search` through `files` (see
/// `shapels_analysis::workspace`), with a diagnostic for each syntax error;
/// `None` when the analysis panicked. `parse` parses the file:
/// `shapels_syntax::parse`, or `shapels_syntax::parse_on_two_threads` when
/// the caller checks one file and the second core would idle.
pub fn analyze_in_workspace(
    path: &Path,
    source: &str,
    config: &Config,
    search: &SearchPath,
    files: &dyn FileSystem,
    parse: fn(&str) -> ParsedFile,
) -> Option<FileAnalysis> {
    let name = path.display().to_string();
    guard(&name, "analysis", || {
        let start = std::time::Instant::now();
        let mut parsed = parse(source);
        // A one-off analysis never reparses: the concrete tree, the largest
        // thing a parse makes, goes before the analysis starts, which then
        // reuses its memory instead of touching fresh pages.
        parsed.tree = None;
        let main = MainFile {
            path: Some(path),
            module: &parsed.module,
        };
        let graph = load_imports(main, search, files);
        let loaded = start.elapsed();
        let mut analysis = shapels_analysis::analyze_module_in(
            source,
            &parsed.module,
            config,
            Coverage::Bindings,
            &graph,
        );
        shapels_analysis::add_syntax_errors(&mut analysis, &parsed);
        // Where a run's time goes, file by file (`--log-level debug`):
        // parsing the file and loading its imports, then the analysis
        // (which runs the imported modules' top levels not yet shared).
        tracing::debug!(
            "{name}: {:.1} ms ({:.1} ms parse and load, {} modules)",
            start.elapsed().as_secs_f64() * 1e3,
            loaded.as_secs_f64() * 1e3,
            graph.dependencies().len()
        );
        analysis
    })
}

/// [`analyze`] with the given analysis.
pub fn analyze_with(
    analyzer: Analyzer,
    name: &str,
    source: &str,
    config: &Config,
) -> Option<FileAnalysis> {
    guard(name, "analysis", || analyzer(source, config))
}

/// Runs `work`, or returns `None` (after logging the panic message as
/// "the {what} panicked on {name}") when it panics.
pub(crate) fn guard<T>(name: &str, what: &str, work: impl FnOnce() -> T) -> Option<T> {
    // The parse and the analysis hold no state across calls that a caller
    // could observe half updated after the unwind (callers that do keep
    // state, like the parse cache, take it out first): asserting unwind
    // safety is sound.
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(value) => Some(value),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            tracing::error!("the {what} panicked on {name}: {message}");
            None
        }
    }
}

/// [`analyze_in_workspace`] for a model summary of the module `target`
/// names (see `shapels_analysis::summarize`); `None` when the analysis
/// panicked, `Some(None)` when the target names no module.
pub fn summarize_in_workspace(
    path: &Path,
    source: &str,
    config: &Config,
    search: &SearchPath,
    files: &dyn FileSystem,
    target: &shapels_analysis::SummaryTarget,
    input: Option<&[i64]>,
) -> Option<Option<shapels_analysis::ModelSummary>> {
    let name = path.display().to_string();
    guard(&name, "summary", || {
        let parsed = shapels_syntax::parse(source);
        let main = MainFile {
            path: Some(path),
            module: &parsed.module,
        };
        let graph = load_imports(main, search, files);
        shapels_analysis::summarize(source, &parsed.module, config, &graph, target, input)
    })
}
