//! The analysis workers: threads that keep each open document's last parse,
//! reparse it incrementally for every new version, and skip the versions
//! that a newer one replaced before their turn came.
//!
//! A `ParsedFile` holds `Rc`s and cannot cross threads, so a document's
//! parse lives in the worker that last analysed it, its *owner*. Jobs wait
//! in one queue that every worker takes from, so that no document waits on
//! another's analysis:
//!
//! - a document is analysed by one worker at a time, its versions in order;
//! - its job goes to its owner when that worker is free; when the owner is
//!   busy with another document, any free worker takes the job and becomes
//!   the owner (parsing afresh: the old owner drops its copy);
//! - when every worker is busy with other documents, one more worker is
//!   started, up to [`MAX_WORKERS`]; a 4 MiB file analysed for seconds
//!   holds one worker, not the documents behind it.
//!
//! Handlers reach the workers by submitting a [`Job`], with the text as a
//! `Rope` (an O(1) clone), and get plain data back. Work is never
//! interrupted half-way (the analysis is bounded by its own step budget);
//! what is cancelled is work that has not started.

use shapels_analysis::workspace::ImportPaths;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Instant;

use ropey::Rope;
use shapels_analysis::workspace::{self, MainFile, ModuleCache, ModuleGraph, SearchPath};
use shapels_analysis::{CallCache, Config, Coverage, FileAnalysis};
use shapels_syntax::ast::Module;
use shapels_syntax::{ByteEdit, ParsedFile, edit_between, parse, reparse};
use tokio::sync::oneshot;
use tower_lsp_server::ls_types::Uri;

use crate::files::{DiskCache, OverlayFiles, WorkerFiles};
use crate::guarded;

/// An analysis entry point over an already parsed module:
/// `shapels_analysis::analyze_module`, or a stand-in in tests.
pub type ModuleAnalyzer = fn(&str, &Module, &Config, Coverage) -> FileAnalysis;

/// How the workers analyse a version of a document.
#[derive(Debug, Clone, Copy)]
pub enum Analyzer {
    /// The analysis, taking from the last version's the calls an edit
    /// cannot have changed (`shapels_analysis::analyze_module_reusing`).
    Reusing,
    /// One analysis of each version, nothing kept between them (stand-ins
    /// in tests).
    Plain(ModuleAnalyzer),
}

/// The most documents analysed at once. Workers are started only when
/// every one is busy with another document, so there are as many as
/// documents were analysed at the same time, rarely more than two or three
/// in an editor; past this, jobs wait for the first worker free.
const MAX_WORKERS: usize = 8;

/// What became of one request for an analysis.
#[derive(Debug)]
pub(crate) enum Outcome {
    Done(FileAnalysis),
    /// The model summary a job with `summary` asked for (`None`: no module there).
    Summary(Option<Box<shapels_analysis::ModelSummary>>),
    /// The parse or the analysis panicked; the panic was logged.
    Failed,
    /// Its snapshot was replaced before the work began, or nobody was
    /// waiting for the result any more.
    Cancelled,
}

/// A flag shared by a snapshot and the work queued for it, set once the
/// snapshot is no longer its document's current one.
#[derive(Debug, Clone, Default)]
pub(crate) struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub(crate) fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// The flag itself, for an analysis to stop at soon after it is set.
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.0
    }
}

/// One request: analyse this version of this document.
pub(crate) struct Job {
    pub(crate) uri: Uri,
    pub(crate) version: i32,
    pub(crate) text: Rope,
    pub(crate) config: Config,
    pub(crate) coverage: Coverage,
    pub(crate) imports: ImportInputs,
    /// Not an analysis but the model summary of this module (see `shapels_analysis::summarize`).
    pub(crate) summary: Option<shapels_analysis::SummaryTarget>,
    pub(crate) token: CancelToken,
    pub(crate) reply: oneshot::Sender<Outcome>,
}

/// Where a document's imports of the user's own modules are found: its
/// path, the open documents' texts as they were when the analysis was
/// asked for, and the folders to search.
#[derive(Debug, Clone, Default)]
pub struct ImportInputs {
    /// `None` for a document that is not a file (`untitled:`).
    pub path: Option<PathBuf>,
    pub open: Arc<OverlayFiles>,
    pub roots: Arc<Vec<PathBuf>>,
    pub import_paths: Arc<ImportPaths>,
    /// Moves when files were created or deleted: what a worker knows of
    /// which paths exist is then out of date.
    pub files_generation: u64,
}

/// What one worker keeps of the user's modules between analyses.
#[derive(Debug, Default)]
pub(crate) struct ImportState {
    modules: ModuleCache,
    disk: RefCell<DiskCache>,
    files_generation: u64,
}

impl ImportState {
    /// The modules `module` (the text of `inputs.path`) imports, as found now.
    fn load(&mut self, inputs: &ImportInputs, module: &Module) -> ModuleGraph {
        if inputs.files_generation != self.files_generation {
            self.files_generation = inputs.files_generation;
            self.disk.borrow_mut().forget_kinds();
            self.modules.forget_resolutions();
        }
        let files = WorkerFiles {
            open: &inputs.open,
            disk: &self.disk,
        };
        let search = SearchPath::with_settings(
            inputs.path.as_deref(),
            &inputs.roots,
            &inputs.import_paths,
            &files,
        );
        let main = MainFile {
            path: inputs.path.as_deref(),
            module,
        };
        workspace::load(main, &search, &files, &mut self.modules)
    }
}

impl Job {
    /// Whether the result is wanted no more.
    fn is_stale(&self) -> bool {
        self.token.is_cancelled() || self.reply.is_closed()
    }
}

/// The worker threads. They end when this is dropped, each after the job
/// it is running.
#[derive(Debug)]
pub(crate) struct Workers {
    pool: Arc<Pool>,
}

#[derive(Debug)]
struct Pool {
    analyzer: Analyzer,
    state: Mutex<PoolState>,
    /// Signalled when a job is queued, a document is free again, a parse
    /// is to be dropped, or the pool shuts down.
    changed: Condvar,
}

#[derive(Debug, Default)]
struct PoolState {
    jobs: VecDeque<Job>,
    /// The worker that holds each document's parse.
    owners: HashMap<Uri, usize>,
    /// The documents being analysed now.
    running: HashSet<Uri>,
    /// Per worker (by index): whether it waits for work.
    idle: Vec<bool>,
    /// Per worker: the parses it must drop (documents closed, or moved to
    /// another worker).
    to_forget: Vec<Vec<Uri>>,
    shut_down: bool,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Job({} version {})", self.uri.as_str(), self.version)
    }
}

impl PoolState {
    /// The next job worker `me` may run: the oldest whose document no
    /// worker is analysing and whose owner, if another worker, is busy (a
    /// free owner takes its own document's job, keeping the parse where it
    /// is). Taking it makes `me` the owner. Jobs no longer wanted are
    /// answered on the way.
    fn take(&mut self, me: usize) -> Option<Job> {
        let mut i = 0;
        while i < self.jobs.len() {
            if self.jobs[i].is_stale() {
                if let Some(job) = self.jobs.remove(i) {
                    tracing::debug!(
                        "skipping {} version {}: superseded",
                        job.uri.as_str(),
                        job.version
                    );
                    let _ = job.reply.send(Outcome::Cancelled);
                }
                continue;
            }
            let job = &self.jobs[i];
            let owner = self.owners.get(&job.uri).copied();
            let owner_takes_it = owner.is_some_and(|owner| owner != me && self.idle[owner]);
            if self.running.contains(&job.uri) || owner_takes_it {
                i += 1;
                continue;
            }
            let job = self.jobs.remove(i)?;
            if let Some(old) = self.owners.insert(job.uri.clone(), me)
                && old != me
            {
                tracing::debug!(
                    "{} moves to analysis worker {me}: worker {old} is busy",
                    job.uri.as_str()
                );
                self.to_forget[old].push(job.uri.clone());
            }
            self.running.insert(job.uri.clone());
            return Some(job);
        }
        None
    }
}

impl Workers {
    pub(crate) fn new(analyzer: Analyzer) -> Self {
        Workers {
            pool: Arc::new(Pool {
                analyzer,
                state: Mutex::new(PoolState::default()),
                changed: Condvar::new(),
            }),
        }
    }

    pub(crate) fn submit(&self, job: Job) {
        let mut state = self.pool.lock();
        state.jobs.push_back(job);
        grow(&self.pool, &mut state);
        drop(state);
        self.pool.changed.notify_all();
    }

    /// The document was closed: its parse can go.
    pub(crate) fn forget(&self, uri: Uri) {
        let mut state = self.pool.lock();
        if let Some(owner) = state.owners.remove(&uri) {
            state.to_forget[owner].push(uri);
            drop(state);
            self.pool.changed.notify_all();
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.pool.lock().shut_down = true;
        self.pool.changed.notify_all();
    }
}

/// Starts workers while documents that could be analysed now outnumber the
/// workers not analysing anything (up to [`MAX_WORKERS`]). Called whenever
/// that can change: a job queued, a job taken.
fn grow(pool: &Arc<Pool>, state: &mut PoolState) {
    let waiting: HashSet<&Uri> = state
        .jobs
        .iter()
        .filter(|job| !state.running.contains(&job.uri) && !job.is_stale())
        .map(|job| &job.uri)
        .collect();
    let free = state.idle.len().saturating_sub(state.running.len());
    for _ in free..waiting.len() {
        let me = state.idle.len();
        if me >= MAX_WORKERS {
            return;
        }
        let worker = pool.clone();
        let spawned = thread::Builder::new()
            .name(format!("shapels-analysis-{me}"))
            .stack_size(guarded::ANALYSIS_STACK)
            .spawn(move || run(&worker, me));
        match spawned {
            Ok(_) => {
                state.idle.push(false);
                state.to_forget.push(Vec::new());
            }
            Err(err) => {
                tracing::error!("cannot start analysis worker {me}: {err}");
                if me == 0 {
                    // Nobody will ever run them: dropping the jobs drops
                    // their replies, which their callers take as failures.
                    state.jobs.clear();
                }
                return;
            }
        }
    }
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        // Nothing panics while holding the lock: analyses run outside it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The life of worker `me`: drop the parses it was told to, run the jobs
/// it may take, wait when there are none.
fn run(pool: &Arc<Pool>, me: usize) {
    let mut cache = ParseCache::default();
    let mut imports = ImportState::default();
    let mut state = pool.lock();
    loop {
        if !state.to_forget[me].is_empty() {
            let uris = std::mem::take(&mut state.to_forget[me]);
            drop(state);
            for uri in &uris {
                cache.forget(uri);
            }
            state = pool.lock();
            continue;
        }
        if let Some(job) = state.take(me) {
            // Jobs of other documents may have been waiting for this one,
            // and a job another worker left to this one (its owner, now
            // busy) is free for the taking.
            grow(pool, &mut state);
            drop(state);
            pool.changed.notify_all();
            let (outcome, (uri, reply)) = analyze_job(&mut cache, &mut imports, job, pool.analyzer);
            state = pool.lock();
            state.running.remove(&uri);
            // The document's next job may run now, here or elsewhere; and
            // the caller, answered only now, finds this worker free.
            pool.changed.notify_all();
            // The caller may have gone meanwhile (a cancelled request).
            let _ = reply.send(outcome);
            continue;
        }
        if state.shut_down {
            return;
        }
        state.idle[me] = true;
        state = pool
            .changed
            .wait(state)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        state.idle[me] = false;
    }
}

/// Runs `job`; returns its outcome and where to send it.
fn analyze_job(
    cache: &mut ParseCache,
    imports: &mut ImportState,
    job: Job,
    analyzer: Analyzer,
) -> (Outcome, (Uri, oneshot::Sender<Outcome>)) {
    tracing::debug!(
        "analysing {} version {} ({:?})",
        job.uri.as_str(),
        job.version,
        job.coverage
    );
    let started = Instant::now();
    if let Some(target) = &job.summary {
        let outcome = cache.summarize(
            &job.uri,
            job.text.to_string(),
            &job.config,
            target,
            (&job.imports, imports),
        );
        tracing::debug!(
            "summarised {} version {} in {:?}",
            job.uri.as_str(),
            job.version,
            started.elapsed()
        );
        return (outcome, (job.uri, job.reply));
    }
    let outcome = cache.analyze(
        &job.uri,
        job.text.to_string(),
        (&job.config, job.coverage),
        (analyzer, job.token.flag()),
        (&job.imports, imports),
    );
    tracing::debug!(
        "analysed {} version {} ({:?}) in {:?}",
        job.uri.as_str(),
        job.version,
        job.coverage,
        started.elapsed()
    );
    (outcome, (job.uri, job.reply))
}

/// The text and parse of one version of a document, and the analyses made
/// of it (one per configuration and coverage asked for).
#[derive(Debug)]
pub struct Parsed {
    pub text: String,
    pub file: ParsedFile,
    /// By configuration, coverage and the versions of the imported files
    /// (`ModuleGraph::fingerprint`).
    analyses: Vec<(Config, Coverage, u64, FileAnalysis)>,
    /// The calls of the last analysis made for each configuration and
    /// coverage, of this version or an earlier one (see `CallCache`), with
    /// the versions of the imported files it ran with.
    calls: Vec<(Config, Coverage, u64, CallCache)>,
}

impl Parsed {
    fn new(text: String, file: ParsedFile) -> Parsed {
        Parsed {
            text,
            file,
            analyses: Vec::new(),
            calls: Vec::new(),
        }
    }

    fn analysis(&self, config: &Config, coverage: Coverage, imports: u64) -> Option<&FileAnalysis> {
        self.analyses
            .iter()
            .find(|(c, k, i, _)| c == config && *k == coverage && *i == imports)
            .map(|(_, _, _, analysis)| analysis)
    }

    /// The analyses of `old` that hold for this version too: those an edit
    /// that changed nothing they read carries over (`carry_over`).
    fn carry_from(&mut self, old: &Parsed, edit: ByteEdit) {
        self.analyses = old
            .analyses
            .iter()
            .filter_map(|(config, coverage, imports, analysis)| {
                let carried = shapels_analysis::carry_over(
                    analysis,
                    (&old.text, &old.file),
                    (&self.text, &self.file),
                    edit,
                )?;
                Some((config.clone(), *coverage, *imports, carried))
            })
            .collect();
    }
}

/// Each document's most recent parse, from which the next version is
/// reparsed. Used by the workers, and directly by `testing`.
#[derive(Debug, Default)]
pub(crate) struct ParseCache {
    files: HashMap<Uri, Parsed>,
}

impl ParseCache {
    /// Parses `text` as the new version of `uri` (incrementally when an
    /// earlier version is known) and analyses it. A panic in either step
    /// costs this result and the document's cached parse, nothing more.
    /// `cancel` set while the analysis runs stops it: the outcome is then
    /// `Cancelled`, and nothing of the run is kept.
    pub(crate) fn analyze(
        &mut self,
        uri: &Uri,
        text: String,
        (config, coverage): (&Config, Coverage),
        (analyzer, cancel): (Analyzer, &AtomicBool),
        (inputs, state): (&ImportInputs, &mut ImportState),
    ) -> Outcome {
        let name = uri.as_str();
        if guarded::too_large(name, &text).is_some() {
            // Nothing to show for it; `did_open` told the user why, once
            // (this runs for every version and every kind of analysis).
            tracing::debug!("{name}: not analysed, over the size limit");
            self.forget(uri);
            return Outcome::Done(FileAnalysis::default());
        }
        let Some((parsed, graph)) = self.parse_and_load(uri, text, (inputs, state)) else {
            return Outcome::Failed;
        };
        let fingerprint = graph.fingerprint();
        if let Some(analysis) = parsed.analysis(config, coverage, fingerprint) {
            tracing::debug!("{name}: the edit changed nothing the analysis read; carried over");
            return Outcome::Done(with_syntax_errors(analysis.clone(), &parsed.file));
        }
        // Calls made with other versions of the imported files may have
        // run their code: only those made with these are taken.
        let previous = parsed
            .calls
            .iter()
            .position(|(c, k, _, _)| c == config && *k == coverage)
            .map(|i| parsed.calls.swap_remove(i))
            .filter(|(_, _, imports, _)| *imports == fingerprint)
            .map(|(_, _, _, calls)| calls);
        let analysed = guarded::guard(name, "analysis", || match analyzer {
            Analyzer::Reusing => {
                let (analysis, calls) = shapels_analysis::analyze_module_cancellable(
                    &parsed.text,
                    &parsed.file.module,
                    config,
                    coverage,
                    previous.as_ref(),
                    &graph,
                    cancel,
                )?;
                tracing::debug!(
                    "{name}: {} calls taken from the last version",
                    calls.taken()
                );
                Some((analysis, Some(calls)))
            }
            Analyzer::Plain(analyze) => Some((
                analyze(&parsed.text, &parsed.file.module, config, coverage),
                None,
            )),
        });
        let analysed = match analysed {
            Some(Some(analysed)) => Some(analysed),
            Some(None) => {
                tracing::debug!("{name}: superseded while analysed; stopped");
                return Outcome::Cancelled;
            }
            None => None,
        };
        // After a panic the calls are dropped with it: the next version
        // runs every call.
        let analysis = analysed.map(|(analysis, calls)| {
            if let Some(calls) = calls {
                parsed
                    .calls
                    .push((config.clone(), coverage, fingerprint, calls));
            }
            analysis
        });
        match analysis {
            Some(analysis) => {
                // Only an analysis that says what it read can be carried
                // over to later versions (stand-ins in tests do not).
                if analysis.reads.is_some() {
                    parsed
                        .analyses
                        .retain(|(c, k, _, _)| !(c == config && *k == coverage));
                    parsed
                        .analyses
                        .push((config.clone(), coverage, fingerprint, analysis.clone()));
                }
                Outcome::Done(with_syntax_errors(analysis, &parsed.file))
            }
            None => Outcome::Failed,
        }
    }

    /// `text` parsed as the new version of `uri` and the modules it
    /// imports loaded, each step guarded; `None` when one panicked (`parse`
    /// takes the old entry out before parsing, so nothing half made stays
    /// behind and the next version is parsed from scratch).
    fn parse_and_load(
        &mut self,
        uri: &Uri,
        text: String,
        (inputs, state): (&ImportInputs, &mut ImportState),
    ) -> Option<(&mut Parsed, shapels_analysis::ModuleGraph)> {
        let name = uri.as_str();
        guarded::guard(name, "parse", || {
            self.parse(uri, text);
        })?;
        let parsed = self.files.get_mut(uri)?;
        let graph = guarded::guard(name, "import", || state.load(inputs, &parsed.file.module))?;
        Some((parsed, graph))
    }

    /// The model summary of `target` in this version of `uri`, computed
    /// afresh (a hover asks for it; nothing of it is kept).
    pub(crate) fn summarize(
        &mut self,
        uri: &Uri,
        text: String,
        config: &Config,
        target: &shapels_analysis::SummaryTarget,
        (inputs, state): (&ImportInputs, &mut ImportState),
    ) -> Outcome {
        let name = uri.as_str();
        if guarded::too_large(name, &text).is_some() {
            return Outcome::Summary(None);
        }
        let Some((parsed, graph)) = self.parse_and_load(uri, text, (inputs, state)) else {
            return Outcome::Failed;
        };
        match guarded::guard(name, "summary", || {
            shapels_analysis::summarize(
                &parsed.text,
                &parsed.file.module,
                config,
                &graph,
                target,
                None,
            )
        }) {
            Some(summary) => Outcome::Summary(summary.map(Box::new)),
            None => Outcome::Failed,
        }
    }

    /// The parse of `text` as the new version of `uri`, made from the
    /// previous version's parse when there is one.
    pub(crate) fn parse(&mut self, uri: &Uri, text: String) -> &Parsed {
        let parsed = match self.files.remove(uri) {
            // A new configuration, or a save: same text, same parse.
            Some(old) if old.text == text => old,
            Some(old) => {
                // One edit for the reparse and for carrying the analyses
                // over: the two must agree on what changed.
                let edit = edit_between(&old.text, &text);
                let file = reparse_over(&old.file, &old.text, &text, edit);
                let mut parsed = Parsed::new(text, file);
                parsed.carry_from(&old, edit);
                // Calls are kept by what they are, not where: they hold for
                // any later version whose code they still match.
                parsed.calls = old.calls;
                parsed
            }
            None => {
                let file = parse(&text);
                Parsed::new(text, file)
            }
        };
        self.files
            .entry(uri.clone())
            .insert_entry(parsed)
            .into_mut()
    }

    pub(crate) fn forget(&mut self, uri: &Uri) {
        self.files.remove(uri);
    }
}

/// `analysis` with the syntax errors of this version's parse as diagnostics,
/// as `shapels check` shows them. They are added to what is published, not
/// to the analyses kept for carrying over, which hold the analysis alone.
fn with_syntax_errors(mut analysis: FileAnalysis, file: &ParsedFile) -> FileAnalysis {
    shapels_analysis::add_syntax_errors(&mut analysis, file);
    analysis
}

/// The parse of `new_text`, reusing the tree of `old` (parsed from
/// `old_text`) where that gives the same result as a fresh parse.
///
/// tree-sitter's error recovery depends on which old subtrees it reuses, so
/// an incremental parse of a *broken* text can differ from a fresh parse of
/// it (random edit chains find such texts). A text with syntax errors is
/// therefore parsed afresh: what the editor shows must not depend on the
/// editing history, and must match `shapels check`. The price is a second
/// parse while the file is broken, typically a keystroke or two.
pub fn reparse_or_parse(old: &ParsedFile, old_text: &str, new_text: &str) -> ParsedFile {
    reparse_over(old, old_text, new_text, edit_between(old_text, new_text))
}

/// `reparse_or_parse` with the edit already worked out.
fn reparse_over(old: &ParsedFile, old_text: &str, new_text: &str, edit: ByteEdit) -> ParsedFile {
    let file = reparse(old, old_text, new_text, edit);
    if file.syntax_errors.is_empty() {
        file
    } else {
        parse(new_text)
    }
}

#[cfg(test)]
mod tests;
