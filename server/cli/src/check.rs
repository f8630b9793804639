//! `shapels check`: analyse files in parallel and report what was found.

use std::path::PathBuf;

use rayon::prelude::*;
use shapels_analysis::workspace::SearchPath;
use shapels_analysis::{FileAnalysis, Severity};
use shapels_lsp::files::{DiskFiles, RunFiles};
use shapels_lsp::guarded;

use crate::args::CheckArgs;
use crate::output;
use crate::settings::{FileConfig, Problems, Resolver};
use crate::source::{Source, read_source};
use crate::walk;

/// A file that was read and analysed.
pub(crate) struct CheckedFile {
    /// The path as shown to the user.
    pub(crate) path: PathBuf,
    pub(crate) source: String,
    pub(crate) analysis: FileAnalysis,
}

/// Checks the files `args` names and reports on them; the process's exit
/// code (0: nothing wrong, 1: errors found, 2: a file or setting could not
/// be read), which `main` ends the process with.
pub(crate) fn run(args: &CheckArgs) -> u8 {
    let mut problems = Problems::default();
    let Some(mut resolver) = Resolver::new(&args.config, &mut problems) else {
        return 2;
    };
    let (files, walk_problems) = walk::collect(&args.paths);
    // Whether a path named or found could not be checked, which the text
    // summary must say; a broken configuration file alone is no such path.
    let mut paths_failed = !walk_problems.is_empty();
    for problem in walk_problems {
        problems.error(problem);
    }
    for file in &files {
        if file.to_str().is_none() {
            problems.warning(format!(
                "{}: the file name is not UTF-8; reports write its other bytes as \\xNN",
                file.display()
            ));
        }
    }
    // Settings are resolved up front, in order, so that each problem with a
    // configuration file is reported once and before any output.
    let roots = search_roots(&args.paths);
    let jobs: Vec<(PathBuf, FileConfig)> = files
        .into_iter()
        .map(|path| {
            let config = resolver.config_for(&path, &mut problems);
            (path, config)
        })
        .collect();
    tracing::info!("checking {} files", jobs.len());

    let outcomes = check_all(jobs, &roots);
    let mut checked = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        match outcome {
            Outcome::Checked(file) => checked.push(*file),
            Outcome::Skipped(message) => problems.warning(message),
            Outcome::Failed(message) => {
                paths_failed = true;
                problems.error(message);
            }
        }
    }

    if let Err(err) = output::write(args.format, &checked, !paths_failed) {
        // A closed pipe (`shapels check . | head`) is the reader's choice, not a failure.
        if err.kind() != std::io::ErrorKind::BrokenPipe {
            problems.error(format!("cannot write the report: {err}"));
        }
    }

    let has_errors = checked
        .iter()
        .flat_map(|file| &file.analysis.diagnostics)
        .any(|d| d.severity == Severity::Error);
    // The process ends next (`main`): freeing every file's text and
    // analysis one value at a time would only delay its exit.
    std::mem::forget(checked);
    if problems.any() {
        2
    } else if has_errors {
        1
    } else {
        0
    }
}

enum Outcome {
    /// Boxed: a file's analysis is large beside the other variants.
    Checked(Box<CheckedFile>),
    /// Valid Python that shapels declines to analyse (too large): a warning,
    /// since nothing is wrong with the file or the run.
    Skipped(String),
    /// A file that could not be read, or an analysis that failed: an error.
    Failed(String),
}

/// Checks every job, in parallel when there are several; the outcomes in
/// the jobs' order.
fn check_all(jobs: Vec<(PathBuf, FileConfig)>, roots: &[PathBuf]) -> Vec<Outcome> {
    // The analysis recurses over expressions and values; threads get the
    // stack the language server's workers have (`guarded::ANALYSIS_STACK`),
    // not rayon's default 2 MiB, so that a file checks the same in both.
    if jobs.len() <= 1 {
        // One file (a pre-commit hook, an editor's on-save command) needs
        // no pool: starting one costs more than its share of the run, even
        // a pool of one thread (an empty file: 3.8 ms on a plain thread,
        // 5.2-6.4 ms through a one-thread rayon pool, on a 2-core host).
        // Its parse may take the second core, idle otherwise.
        let check = || -> Vec<Outcome> {
            jobs.iter()
                .map(|(path, config)| {
                    check_file(
                        path.clone(),
                        config,
                        roots,
                        shapels_syntax::parse_on_two_threads,
                    )
                })
                .collect()
        };
        // On the main thread when its stack can grow as far as an analysis
        // thread's: a thread of its own cost a twelfth of a model file's
        // run (see `main_stack`).
        if crate::main_stack::main_thread_fits_analysis() {
            return check();
        }
        let checked = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(guarded::ANALYSIS_STACK)
                .spawn_scoped(scope, check)
                .map(|thread| thread.join())
        });
        return match checked {
            Ok(Ok(outcomes)) => outcomes,
            // `check_file` catches the analysis' panics; any other is a bug
            // of this command and goes on as rayon's would.
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(err) => {
                tracing::warn!("cannot start the analysis thread ({err}); checking on this one");
                check()
            }
        };
    }
    // `collect` on an indexed parallel iterator keeps the input order, so
    // the output is sorted by path however the work was scheduled.
    let check = |jobs: Vec<(PathBuf, FileConfig)>| -> Vec<Outcome> {
        jobs.into_par_iter()
            .map(|(path, config)| check_file(path, &config, roots, shapels_syntax::parse))
            .collect()
    };
    match rayon::ThreadPoolBuilder::new()
        .stack_size(guarded::ANALYSIS_STACK)
        .build()
    {
        Ok(pool) => pool.install(|| check(jobs)),
        Err(err) => {
            tracing::warn!("cannot start the analysis threads ({err}); using the default pool");
            check(jobs)
        }
    }
}

fn check_file(
    path: PathBuf,
    config: &FileConfig,
    roots: &[PathBuf],
    parse: fn(&str) -> shapels_syntax::ParsedFile,
) -> Outcome {
    let source = match read_source(&path) {
        Ok(Source::Text(source)) => source,
        Ok(Source::TooLarge(message)) => return Outcome::Skipped(message),
        Err(message) => return Outcome::Failed(message),
    };
    let name = path.display().to_string();
    let search = search_path(&path, config, roots);
    let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
    let analysis = RUN_FILES.with(|files| {
        guarded::analyze_in_workspace(&absolute, &source, &config.analysis, &search, files, parse)
    });
    match analysis {
        Some(analysis) => Outcome::Checked(Box::new(CheckedFile {
            path,
            source,
            analysis,
        })),
        None => Outcome::Failed(format!(
            "{name}: internal error: the analysis failed on this file (please report it); skipped"
        )),
    }
}

thread_local! {
    /// The files this thread's checks import, read once per run.
    static RUN_FILES: RunFiles = RunFiles::default();
}

/// The folders where a run's imports of the user's own modules are found,
/// besides each file's own: the folders named on the command line and the
/// current one, as `python -m` would have it. A file named on the command
/// line adds nothing: its folder comes first on its own search path (as
/// Python puts a script's folder first on `sys.path`) and on no other
/// file's. Pre-commit hooks name hundreds of files; with each one's folder
/// a root of every other file, every import was looked for in each of
/// them (2,000 of transformers' model files from 330 folders took twice
/// as long as the whole folder named once).
pub(crate) fn search_roots(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    let named = paths
        .iter()
        .filter(|path| path.is_dir())
        .filter_map(|dir| std::path::absolute(dir).ok());
    for root in named.chain(std::env::current_dir().ok()) {
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    roots
}

/// The search path of one file: its folder, the run's roots, its project's
/// root, then the `extra-paths` of its settings.
pub(crate) fn search_path(
    file: &std::path::Path,
    config: &FileConfig,
    roots: &[PathBuf],
) -> SearchPath {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let mut all: Vec<PathBuf> = roots.to_vec();
    if let Some(root) = &config.project_root
        && let Ok(root) = std::path::absolute(root)
    {
        all.push(root);
    }
    SearchPath::with_settings(Some(&absolute), &all, &config.import_paths, &DiskFiles)
}
