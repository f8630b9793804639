//! The analysis settings of each checked file: `--config-file` or the
//! nearest `pyproject.toml` with a `[tool.shapels]` section, then the flags.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use shapels_analysis::Config;
use shapels_lsp::config::{self, FileSettings, Settings, SettingsPatch};

use crate::args::ConfigArgs;

/// Problems a command met without stopping, reported on stderr as they
/// happen; any error among them makes the exit code 2. The same message is
/// reported once, however many files run into it (a broken pyproject above
/// a whole tree, say).
#[derive(Debug, Default)]
pub(crate) struct Problems {
    count: usize,
    seen: HashSet<String>,
}

impl Problems {
    /// Reports something that kept shapels from doing all it was asked.
    pub(crate) fn error(&mut self, message: impl std::fmt::Display) {
        self.count += 1;
        let message = format!("error: {message}");
        if self.seen.insert(message.clone()) {
            eprintln!("{message}");
        }
    }

    /// Reports something the user should fix but that did not stop the work.
    pub(crate) fn warning(&mut self, message: impl std::fmt::Display) {
        let message = format!("warning: {message}");
        if self.seen.insert(message.clone()) {
            eprintln!("{message}");
        }
    }

    pub(crate) fn any(&self) -> bool {
        self.count > 0
    }
}

pub(crate) struct Resolver {
    /// The `--config-file`, which replaces discovery for every file.
    explicit: Option<SettingsPatch>,
    flags: SettingsPatch,
    /// The discovered pyproject patch per directory, with the folder of
    /// the pyproject it came from.
    by_dir: HashMap<PathBuf, (SettingsPatch, Option<PathBuf>)>,
}

/// What one checked file is analysed with.
#[derive(Debug, Clone)]
pub(crate) struct FileConfig {
    pub(crate) analysis: Config,
    /// `stubs` and `extra-paths`, made absolute.
    pub(crate) import_paths: shapels_analysis::workspace::ImportPaths,
    /// The folder of the `pyproject.toml` the settings came from: the
    /// project's root, where its own modules are found.
    pub(crate) project_root: Option<PathBuf>,
}

impl Resolver {
    /// Reads `--config-file` if given; `None` when it cannot be used, which
    /// has then been reported.
    pub(crate) fn new(args: &ConfigArgs, problems: &mut Problems) -> Option<Self> {
        let explicit = match &args.config_file {
            None => None,
            Some(path) => match config::read_config_file(path) {
                Ok(file) => {
                    if !file.has_section {
                        problems
                            .warning(format!("{} has no [tool.shapels] section", path.display()));
                    }
                    Some(report(file, problems))
                }
                Err(err) => {
                    problems.error(err);
                    return None;
                }
            },
        };
        let flags = SettingsPatch {
            allow_non_fake_inputs: args.allow_non_fake_inputs,
            allow_fallback_kernels: args.no_fallback_kernels.then_some(false),
            static_shapes: args.static_shapes.then_some(true),
            ..SettingsPatch::default()
        };
        Some(Resolver {
            explicit,
            flags,
            by_dir: HashMap::new(),
        })
    }

    pub(crate) fn config_for(&mut self, file: &Path, problems: &mut Problems) -> FileConfig {
        let mut settings = Settings::default();
        let mut project_root = None;
        match &self.explicit {
            Some(patch) => patch.apply(&mut settings),
            None => {
                let dir = file.parent().unwrap_or(Path::new("."));
                let dir = if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                };
                if !self.by_dir.contains_key(dir) {
                    let found = match config::discover(dir, None) {
                        Ok(Some(file)) => {
                            tracing::info!("using settings from {}", file.path.display());
                            let root = file.path.parent().map(Path::to_path_buf);
                            (report(file, problems), root)
                        }
                        Ok(None) => (SettingsPatch::default(), None),
                        Err(err) => {
                            problems.error(err);
                            (SettingsPatch::default(), None)
                        }
                    };
                    self.by_dir.insert(dir.to_path_buf(), found);
                }
                let (patch, root) = &self.by_dir[dir];
                patch.apply(&mut settings);
                project_root = root.clone();
            }
        }
        self.flags.apply(&mut settings);
        let project_root =
            project_root.or_else(|| marked_root(file.parent().unwrap_or(Path::new("."))));
        FileConfig {
            import_paths: settings.import_paths(),
            analysis: settings.analysis,
            project_root,
        }
    }
}

/// The project a file without shapels settings belongs to: the nearest
/// folder at or above `dir` that a project's own files mark
/// (`pyproject.toml`, `setup.py`, `setup.cfg`, `.git`), where its absolute
/// imports (`from pkg.utils import f`) start, wherever `check` runs from.
fn marked_root(dir: &Path) -> Option<PathBuf> {
    const MARKERS: &[&str] = &["pyproject.toml", "setup.py", "setup.cfg", ".git"];
    let dir = std::path::absolute(dir).ok()?;
    dir.ancestors()
        .find(|d| MARKERS.iter().any(|m| d.join(m).exists()))
        .map(Path::to_path_buf)
}

/// Warns about each unusable key of a configuration file and keeps the rest.
fn report(file: FileSettings, problems: &mut Problems) -> SettingsPatch {
    for error in &file.errors {
        problems.warning(format!("{error} (in {})", file.path.display()));
    }
    file.patch
}
