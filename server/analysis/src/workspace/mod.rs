//! The user's own modules: which file an import names, found the way
//! Python's import system finds it; the files one analysis needs, loaded
//! through the host's view of them; and who imports whom.
//!
//! The analysis never reads a file itself. The host (the language server,
//! `shapels check`) implements [`FileSystem`] (open documents over the
//! disk, or the disk alone) and calls [`load`] before analysing a file:
//! it follows the file's imports, and those of the files they name,
//! through that view, and gives a [`ModuleGraph`]. The interpreter then
//! runs an imported module's top level where the code imports it, as
//! Python does, from the syntax the graph holds.
//!
//! Only the user's code is followed: modules found under the search path
//! (the script's folder, the workspace roots and their `src/`, the
//! `extra-paths` of the settings). Anything else (`torch`, `numpy`, what
//! is installed in site-packages) stays what it was before: a path the
//! rule table knows, or `Unknown`. Nothing is ever executed or read
//! outside the search path.
//!
//! Code of another file joins the analysis with its byte offsets moved by
//! its id times [`FILE_SPAN`] (`shapels_syntax::parse_at`), so a range
//! says by itself which file it belongs to and everything that keeps
//! ranges (records, diagnostics, memo keys) needs no file field: offsets
//! below `FILE_SPAN` are the analysed file's own.

mod cache;
pub(crate) mod executed;
mod resolve;
mod scan;
mod snapshot;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use shapels_syntax::ast;

pub use cache::ModuleCache;
pub(crate) use scan::{ImportSpec, split_level as scan_level};

/// Offsets of another file's code start at its id times this; a file is
/// at most 4 MiB, far below it.
pub const FILE_SPAN: usize = 1 << 32;

const _: () = assert!(usize::BITS == 64, "module offsets need 64-bit offsets");

/// How many modules one analysis follows at most: the closure of a file's
/// imports in a large library can be thousands of files, and past this the
/// names imported stay `Unknown` rather than slowing every keystroke.
pub const MAX_MODULES: usize = 512;

/// How many imports away from the analysed file modules are followed. A
/// module's top level runs once per thread and is shared by every later
/// analysis that imports it (see `executed`), so following a file's whole
/// closure costs little after the first; the bound only keeps a chain of
/// imports finite. Following the whole closure also keeps a module's
/// imports the same in every graph, which is what lets it be shared.
pub const MAX_IMPORT_DEPTH: u32 = 64;

/// The file an offset belongs to: 0 for the analysed file, otherwise the
/// id of a module of the graph.
pub(crate) fn file_of(offset: usize) -> u32 {
    (offset / FILE_SPAN) as u32
}

/// Whether a range lies in the analysed file (not in an imported one).
pub(crate) fn is_local(range: &ast::TextRange) -> bool {
    range.start < FILE_SPAN
}

/// What a path is, as the host sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    File,
    Dir,
    Missing,
}

/// The host's view of the files: the only way the analysis learns what is
/// on disk (or in the editor's unsaved buffers).
pub trait FileSystem {
    /// What is at `path`; `Missing` also for what cannot be looked at.
    fn kind(&self, path: &Path) -> PathKind;
    /// A Python file's text, or why it cannot be had (too large, not
    /// UTF-8, unreadable), in words for the user.
    fn read(&self, path: &Path) -> Result<Arc<str>, String>;
}

/// Where absolute imports are looked for, in order: Python's `sys.path`
/// restricted to the user's own code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
    /// Folders of `.pyi` stubs (the `stubs` of the settings), searched
    /// before `dirs`: a stub describes code the analysis cannot see.
    stubs: Vec<PathBuf>,
}

/// The folders a file's settings add to where its imports are looked
/// for: stubs, searched before anything else (a stub describes code the
/// analysis cannot see, and wins over a module of the same name, as in
/// Pyright's `stubPath`), and extra paths, searched after the roots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportPaths {
    pub stubs: Vec<PathBuf>,
    pub extra: Vec<PathBuf>,
}

impl SearchPath {
    /// The search path of a file: its own folder first (Python puts the
    /// script's folder first on `sys.path`: this is how `train.py` finds
    /// `model.py`), then each root and its `src/` folder (the `src` layout),
    /// then the extra paths of the settings. Folders that do not exist and
    /// repeats are left out.
    pub fn new(
        file: Option<&Path>,
        roots: &[PathBuf],
        extra: &[PathBuf],
        fs: &dyn FileSystem,
    ) -> SearchPath {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut add = |dir: PathBuf| {
            if fs.kind(&dir) == PathKind::Dir && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        };
        if let Some(dir) = file.and_then(Path::parent) {
            add(dir.to_path_buf());
        }
        for root in roots {
            add(root.clone());
            add(root.join("src"));
        }
        for dir in extra {
            add(dir.clone());
        }
        SearchPath {
            dirs,
            stubs: Vec::new(),
        }
    }

    /// The search path of a file with the folders its settings add:
    /// stubs ahead of everything, extra paths after the roots.
    pub fn with_settings(
        file: Option<&Path>,
        roots: &[PathBuf],
        paths: &ImportPaths,
        fs: &dyn FileSystem,
    ) -> SearchPath {
        SearchPath::new(file, roots, &paths.extra, fs).with_stubs(&paths.stubs, fs)
    }

    /// The search path with folders of stubs (`stubs` in `[tool.shapels]`):
    /// `name.pyi` there describes module `name` (a third-party library's
    /// functions and layers), ahead of anything of that name elsewhere.
    pub fn with_stubs(mut self, stubs: &[PathBuf], fs: &dyn FileSystem) -> SearchPath {
        for dir in stubs {
            if fs.kind(dir) == PathKind::Dir && !self.stubs.contains(dir) {
                self.stubs.push(dir.clone());
            }
        }
        self
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Where absolute imports are looked for: the stub folders, then `dirs`.
    pub fn import_dirs(&self) -> Vec<PathBuf> {
        self.stubs.iter().chain(&self.dirs).cloned().collect()
    }
}

/// One version of one imported file: its text and its syntax, with
/// offsets moved to its place (see the module comment).
#[derive(Debug)]
pub struct LoadedModule {
    pub(crate) id: u32,
    pub path: PathBuf,
    pub text: Arc<str>,
    /// A hash of `text`: the version.
    pub hash: u64,
    pub(crate) module: ast::Module,
    pub(crate) imports: Vec<ImportSpec>,
}

impl LoadedModule {
    /// The first offset of this file's code.
    pub(crate) fn base(&self) -> usize {
        self.id as usize * FILE_SPAN
    }

    /// Where the module's top level binds `name` last: a class or function
    /// definition, an assignment, an import.
    pub(crate) fn definition_of(&self, name: &str) -> Option<ast::TextRange> {
        use ast::{ExprKind, StmtKind};
        self.module
            .body
            .iter()
            .rev()
            .find_map(|stmt| match &stmt.kind {
                StmtKind::FunctionDef(f) if f.name.id == name => Some(f.name.range),
                StmtKind::ClassDef(c) if c.name.id == name => Some(c.name.range),
                StmtKind::Assign { targets, .. } => targets.iter().find_map(|t| match &t.kind {
                    ExprKind::Name(n) if n == name => Some(t.range),
                    ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().find_map(|i| {
                        matches!(&i.kind, ExprKind::Name(n) if n == name).then(|| i.range)
                    }),
                    _ => None,
                }),
                StmtKind::Import(aliases) | StmtKind::ImportFrom { names: aliases, .. } => {
                    aliases.iter().find_map(|a| {
                        let bound = a
                            .asname
                            .as_ref()
                            .map(|n| n.id.as_str())
                            .unwrap_or_else(|| a.name.split('.').next().unwrap_or(""));
                        (bound == name).then_some(a.range)
                    })
                }
                _ => None,
            })
    }

    /// The 1-based line of an offset of this file.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        crate::carry::line_of(&self.text, offset.saturating_sub(self.base()))
    }
}

/// An import of one file: the importing file, the level of dots, the
/// dotted name.
pub(crate) type TargetKey = (u32, u32, Rc<str>);

/// What an import names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A file of the user's: a module, or a package's `__init__.py`.
    Module(u32),
    /// A folder without `__init__.py` (a namespace package), known by its
    /// folders; it holds the submodules imported from it.
    Namespace(Rc<[PathBuf]>),
    /// A file of the user's that cannot be analysed (too large, not
    /// UTF-8, over the module limit): what it defines is unknown.
    Unreadable(Rc<str>),
}

/// The modules one analysis can import, and what each import names.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    modules: FxHashMap<u32, Rc<LoadedModule>>,
    /// By importing file (0 for the analysed one), level of dots and
    /// dotted name; a name not here is not the user's.
    targets: FxHashMap<TargetKey, Target>,
    /// The keys of `targets`, by importing file.
    by_importer: FxHashMap<u32, Vec<TargetKey>>,
    /// The analysed file's folder: messages name a module's file from it.
    main_dir: Option<PathBuf>,
    /// Each module's closure key (see `executed`), made when first asked.
    closure_keys: std::cell::RefCell<FxHashMap<u32, u64>>,
    /// A hash of each module's own imports and what they name (see
    /// `executed::closure_key`), found once per graph: in a package whose
    /// modules import one another, every module's closure is most of them.
    own_keys: std::cell::RefCell<FxHashMap<u32, executed::OwnKey>>,
    /// Top levels already run, shared with the cache this graph was
    /// loaded from.
    executed: Option<executed::Executed>,
}

impl ModuleGraph {
    /// The graph of a file that imports nothing of the user's.
    pub fn empty() -> ModuleGraph {
        ModuleGraph::default()
    }

    /// The files the analysis may read, each with the hash of its text: a
    /// change to any of them can change the analysis.
    pub fn dependencies(&self) -> Vec<(&Path, u64)> {
        let mut deps: Vec<(&Path, u64)> = self
            .modules
            .values()
            .map(|m| (m.path.as_path(), m.hash))
            .collect();
        deps.sort();
        deps
    }

    /// One number for all of `dependencies`: equal for two graphs when
    /// every file they read is the same.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = cache::text_hasher();
        self.dependencies().hash(&mut hasher);
        hasher.finish()
    }

    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// Every module of the graph.
    pub(crate) fn loaded(&self) -> impl Iterator<Item = &Rc<LoadedModule>> {
        self.modules.values()
    }

    pub(crate) fn module(&self, id: u32) -> Option<&Rc<LoadedModule>> {
        self.modules.get(&id)
    }

    pub(crate) fn target(&self, importer: u32, level: u32, name: &str) -> Option<&Target> {
        self.targets.get(&(importer, level, Rc::from(name)))
    }

    /// What module `importer`'s imports name, as (key, target).
    pub(crate) fn targets_of(&self, importer: u32) -> impl Iterator<Item = (&TargetKey, &Target)> {
        self.by_importer
            .get(&importer)
            .into_iter()
            .flatten()
            .filter_map(|key| self.targets.get_key_value(key))
    }

    /// How messages name a module's file: its path from the analysed
    /// file's folder when under it, else its file name.
    pub(crate) fn shown(&self, id: u32) -> String {
        let Some(module) = self.module(id) else {
            return "<unknown file>".to_string();
        };
        let file = &module.path;
        self.main_dir
            .as_deref()
            .and_then(|dir| file.strip_prefix(dir).ok())
            .unwrap_or_else(|| file.file_name().map_or(&**file, Path::new))
            .display()
            .to_string()
    }

    /// The namespace an earlier analysis got from running module `id`'s
    /// top level with the same imports, if kept.
    pub(crate) fn executed(
        &self,
        id: u32,
    ) -> Option<(
        Rc<crate::value::ModuleNs>,
        executed::ImportCost,
        executed::Imported,
    )> {
        let key = (id, self.closure_key(id));
        self.executed.as_ref()?.borrow().get(&key)
    }

    fn closure_key(&self, id: u32) -> u64 {
        if let Some(key) = self.closure_keys.borrow().get(&id) {
            return *key;
        }
        let key = executed::closure_key(self, id);
        self.closure_keys.borrow_mut().insert(id, key);
        key
    }

    /// Keeps the namespace this analysis got from running module `id`'s top
    /// level, for later ones (it must be `executed::shareable`).
    pub(crate) fn keep_executed(
        &self,
        id: u32,
        ns: Rc<crate::value::ModuleNs>,
        cost: executed::ImportCost,
        imported: executed::Imported,
        shareable: executed::Shareable,
        written: &[usize],
    ) {
        if let Some(executed) = &self.executed {
            executed::keep(
                executed,
                (id, self.closure_key(id)),
                ns,
                cost,
                imported,
                shareable.0,
                written,
            );
        }
    }

    /// Puts back what this analysis wrote into the objects of kept
    /// namespaces, for the next one (see `snapshot`).
    pub(crate) fn put_back_kept(&self) {
        if let Some(executed) = &self.executed {
            executed::put_back(executed);
        }
    }

    /// `layers.py:12` for an offset of an imported file.
    pub(crate) fn place(&self, offset: usize) -> Option<String> {
        let module = self.module(file_of(offset))?;
        Some(format!(
            "{}:{}",
            self.shown(module.id),
            module.line_of(offset)
        ))
    }
}

/// The file being analysed, as `load` needs it.
#[derive(Debug, Clone, Copy)]
pub struct MainFile<'a> {
    /// Its path; `None` for an unsaved buffer (`untitled:`), which has no
    /// folder, so relative imports name nothing.
    pub path: Option<&'a Path>,
    pub module: &'a ast::Module,
}

/// Follows the imports of `main`, and of every user module they name,
/// through `fs`, and gives the graph the analysis of `main` runs with.
/// Modules already in `cache` at the same text are not parsed again.
pub fn load(
    main: MainFile<'_>,
    search: &SearchPath,
    fs: &dyn FileSystem,
    cache: &mut ModuleCache,
) -> ModuleGraph {
    cache.begin_use();
    let mut graph = ModuleGraph {
        main_dir: main.path.and_then(Path::parent).map(Path::to_path_buf),
        ..ModuleGraph::default()
    };
    let mut by_path: FxHashMap<PathBuf, u32> = FxHashMap::default();
    let search_key = {
        use std::hash::{Hash, Hasher};
        let mut hasher = cache::text_hasher();
        search.hash(&mut hasher);
        hasher.finish()
    };
    // Modules waiting for their imports to be followed, with how many
    // imports away from the analysed file they are (None: the file).
    let main_imports = scan::imports(main.module);
    // Absolute names found in this load, shared by the finders of all its
    // modules (not kept between loads: a load sees the files as they are).
    let chains = resolve::Chains::default();
    let mut queue: std::collections::VecDeque<(Option<Rc<LoadedModule>>, u32)> =
        std::collections::VecDeque::new();
    queue.push_back((None, 0));
    while let Some((module, depth)) = queue.pop_front() {
        let (importer, path, imports) = match &module {
            Some(m) => (m.id, Some(m.path.as_path()), m.imports.as_slice()),
            None => (0, main.path, main_imports.as_slice()),
        };
        // An imported module's imports name the same files for every file
        // that imports it along the same search path: found once. Its
        // relative imports name the same files along any search path (the
        // files of a large package, each in a folder of its own, import
        // the same modules): found once for all. The analysed file's own
        // are found again when its imports change (what most edits leave
        // alone).
        let finder = resolve::Finder {
            fs,
            search,
            importer: path,
            chains: &chains,
        };
        let found = match (importer, cache.resolutions(importer, search_key)) {
            (0, _) => {
                let key = {
                    use std::hash::{Hash, Hasher};
                    let mut hasher = cache::text_hasher();
                    (main.path, imports, search_key).hash(&mut hasher);
                    hasher.finish()
                };
                cache.main_resolutions(key).unwrap_or_else(|| {
                    let found = Rc::new(finder.resolve_all(imports));
                    cache.keep_main_resolutions(key, found.clone());
                    found
                })
            }
            (_, None) => {
                let relative = cache.relative(importer).unwrap_or_else(|| {
                    let relative: resolve::PerImport = imports
                        .iter()
                        .map(|spec| match spec.level {
                            0 => Vec::new(),
                            _ => finder.resolve(spec),
                        })
                        .collect();
                    cache.keep_relative(importer, relative.clone());
                    relative
                });
                let found = Rc::new(resolve::merge(imports.iter().zip(relative.iter()).map(
                    |(spec, relative)| match spec.level {
                        0 => Cow::Owned(finder.resolve(spec)),
                        _ => Cow::Borrowed(relative.as_slice()),
                    },
                )));
                cache.keep_resolutions(importer, search_key, found.clone());
                found
            }
            (_, Some(found)) => found,
        };
        let mut keys = Vec::with_capacity(found.len());
        for ((level, name), found) in found.iter() {
            let target = match found {
                resolve::Found::File(file) => match by_path.get(file) {
                    Some(id) => Target::Module(*id),
                    None if depth >= MAX_IMPORT_DEPTH => Target::Unreadable(Rc::from(format!(
                        "imported more than {MAX_IMPORT_DEPTH} imports away from this file"
                    ))),
                    None if graph.modules.len() >= MAX_MODULES => Target::Unreadable(Rc::from(
                        format!("more than {MAX_MODULES} modules are imported"),
                    )),
                    None => match cache.get(file, fs) {
                        Ok(module) => {
                            let id = module.id;
                            by_path.insert(file.clone(), id);
                            graph.modules.insert(id, module.clone());
                            queue.push_back((Some(module), depth + 1));
                            Target::Module(id)
                        }
                        Err(why) => Target::Unreadable(Rc::from(why)),
                    },
                },
                resolve::Found::Namespace(dirs) => Target::Namespace(dirs.clone().into()),
            };
            let key = (importer, *level, name.clone());
            keys.push(key.clone());
            graph.targets.insert(key, target);
        }
        graph.by_importer.insert(importer, keys);
    }
    cache.end_use();
    graph.executed = Some(cache.executed());
    graph
}

#[cfg(test)]
mod tests;
