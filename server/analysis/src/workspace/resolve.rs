//! Which file or folder a module name names, found as Python's path-based
//! finder finds it: in each folder of the search path in turn, a package
//! (`name/__init__.py`) or a module (`name.py`) wins at once, and folders
//! without `__init__.py` are the portions of a namespace package, used
//! only when no folder holds a package or module of that name.

use std::borrow::Cow;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::scan::{ImportKind, ImportSpec};
use super::{FileSystem, PathKind, SearchPath};

/// Packages the analysis models itself (the rule table knows their
/// functions by path): never the user's, even from a checkout of one on
/// the search path, or `torch.nn.Linear` would stop being a layer.
const MODELLED: &[&str] = &[
    "torch",
    "numpy",
    "einops",
    "math",
    "copy",
    "dataclasses",
    "functools",
    "typing",
    "typing_extensions",
    "builtins",
    "jaxtyping",
    "torchtyping",
];

/// What a dotted name was found to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Found {
    /// A module file, or a package's `__init__.py`.
    File(PathBuf),
    /// A namespace package: its folders.
    Namespace(Vec<PathBuf>),
}

/// Finds the modules the imports of one file name.
pub(super) struct Finder<'a> {
    pub(super) fs: &'a dyn FileSystem,
    pub(super) search: &'a SearchPath,
    /// The importing file; `None` for an unsaved buffer.
    pub(super) importer: Option<&'a Path>,
    /// What absolute names were found to be along `search`, shared by the
    /// finders of one `load`: the modules of a large package import the
    /// same few names (`os`, `packaging.version`) over and over.
    pub(super) chains: &'a Chains,
}

/// Absolute dotted names and what each prefix of them is (see `chain`),
/// along one search path, as the files are at one `load`.
pub(super) type Chains = RefCell<FxHashMap<String, Vec<Found>>>;

/// What a module's imports name: (level, dotted name) and what was found,
/// each name once, in the order the imports first need them.
pub(super) type Resolutions = Vec<((u32, Rc<str>), Found)>;

/// What each import of a module names, one list per import in order (see
/// [`Finder::resolve`]).
pub(super) type PerImport = Rc<[Vec<((u32, Rc<str>), Found)>]>;

/// The names of several imports (see [`Finder::resolve`]), in order, each
/// once.
pub(super) fn merge<'a>(
    each: impl Iterator<Item = Cow<'a, [((u32, Rc<str>), Found)]>>,
) -> Resolutions {
    let mut seen: FxHashSet<(u32, Rc<str>)> = FxHashSet::default();
    let mut out = Vec::new();
    for names in each {
        for (key, found) in names.iter() {
            if seen.insert(key.clone()) {
                out.push((key.clone(), found.clone()));
            }
        }
    }
    out
}

impl Finder<'_> {
    /// Every (level, dotted name) the imports need, with what it names;
    /// names that are not the user's are left out.
    pub(super) fn resolve_all(&self, imports: &[ImportSpec]) -> Resolutions {
        merge(imports.iter().map(|spec| Cow::Owned(self.resolve(spec))))
    }

    /// What one import needs, in the order [`resolve_all`] lists it (a
    /// name may repeat one of an earlier import: `merge` drops it).
    pub(super) fn resolve(&self, spec: &ImportSpec) -> Vec<((u32, Rc<str>), Found)> {
        let mut out: Vec<((u32, Rc<str>), Found)> = Vec::new();
        let add = |out: &mut Vec<((u32, Rc<str>), Found)>, key: (u32, String), found| {
            out.push(((key.0, Rc::from(key.1)), found));
        };
        match &spec.kind {
            ImportKind::Import => {
                // `import a.b.c` binds `a`, and imports `a.b` and `a.b.c`
                // on the way: each prefix is a module. A chain is the
                // user's when it ends at a file of the user's (a namespace
                // package alone could be any folder).
                let chain = self.chain(&spec.module);
                if chain.last().is_some_and(|f| matches!(f, Found::File(_))) {
                    let parts: Vec<&str> = spec.module.split('.').collect();
                    for (i, found) in chain.into_iter().enumerate() {
                        add(&mut out, (0, parts[..=i].join(".")), found);
                    }
                } else {
                    // A regular package at the top still counts: its
                    // `__init__.py` runs, whatever its submodules are.
                    for (i, found) in chain.into_iter().enumerate() {
                        if let Found::File(_) = found {
                            let parts: Vec<&str> = spec.module.split('.').collect();
                            add(&mut out, (0, parts[..=i].join(".")), found);
                        } else {
                            break;
                        }
                    }
                }
            }
            ImportKind::From(names) => {
                let Some(found) = self.find(spec.level, &spec.module) else {
                    return out;
                };
                // `from package import name`: a name the package does not
                // define is its submodule of that name.
                let mut submodules = Vec::new();
                let is_package = match &found {
                    Found::Namespace(_) => true,
                    Found::File(path) => is_init(path),
                };
                if is_package {
                    for name in names.iter().filter(|n| *n != "*") {
                        let dotted = join(&spec.module, name);
                        if let Some(sub @ Found::File(_)) = self.find(spec.level, &dotted) {
                            submodules.push(((spec.level, dotted), sub));
                        }
                    }
                }
                // A namespace package is the user's only when what is
                // imported from it is (see `Import` above), or when it is
                // named relative to the importing file.
                let keep = match &found {
                    Found::File(_) => true,
                    Found::Namespace(_) => spec.level > 0 || !submodules.is_empty(),
                };
                if keep {
                    // `from a.b import c` runs `a` and `a.b` first, as
                    // `import a.b` does: each prefix is a module.
                    if spec.level == 0 && matches!(found, Found::File(_)) {
                        let parts: Vec<&str> = spec.module.split('.').collect();
                        let chain = self.chain(&spec.module);
                        for (i, prefix) in chain.into_iter().enumerate().take(parts.len() - 1) {
                            add(&mut out, (0, parts[..=i].join(".")), prefix);
                        }
                    }
                    add(&mut out, (spec.level, spec.module.clone()), found);
                    for (key, sub) in submodules {
                        add(&mut out, key, sub);
                    }
                }
            }
        }
        out
    }

    /// What each prefix of an absolute dotted name is, as far as it is found.
    fn chain(&self, dotted: &str) -> Vec<Found> {
        if MODELLED.contains(&dotted.split('.').next().unwrap_or("")) {
            return Vec::new();
        }
        if let Some(known) = self.chains.borrow().get(dotted) {
            return known.clone();
        }
        let out = self.chain_searched(dotted);
        self.chains
            .borrow_mut()
            .insert(dotted.to_string(), out.clone());
        out
    }

    fn chain_searched(&self, dotted: &str) -> Vec<Found> {
        let mut out = Vec::new();
        let mut dirs: Vec<PathBuf> = self.search.import_dirs();
        for part in dotted.split('.') {
            match self.find_in(&dirs, part) {
                Some(found) => {
                    dirs = match &found {
                        Found::File(path) if is_init(path) => {
                            path.parent().map(Path::to_path_buf).into_iter().collect()
                        }
                        Found::File(_) => Vec::new(),
                        Found::Namespace(portions) => portions.clone(),
                    };
                    out.push(found);
                }
                None => break,
            }
        }
        out
    }

    /// The module a (level, dotted) name of an import names, if it is the
    /// user's.
    pub(super) fn find(&self, level: u32, dotted: &str) -> Option<Found> {
        if level == 0 {
            let chain = self.chain(dotted);
            return (chain.len() == dotted.split('.').count())
                .then(|| chain.into_iter().last())
                .flatten();
        }
        let base = self.relative_base(level)?;
        if dotted.is_empty() {
            let init = base.join("__init__.py");
            return Some(if self.fs.kind(&init) == PathKind::File {
                Found::File(init)
            } else {
                Found::Namespace(vec![base])
            });
        }
        let mut dirs = vec![base];
        let mut last = None;
        for part in dotted.split('.') {
            let found = self.find_in(&dirs, part)?;
            dirs = match &found {
                Found::File(path) if is_init(path) => {
                    path.parent().map(Path::to_path_buf).into_iter().collect()
                }
                Found::File(_) => Vec::new(),
                Found::Namespace(portions) => portions.clone(),
            };
            last = Some(found);
        }
        last
    }

    /// The folder `level` dots name: the importing file's package, then
    /// its parents.
    fn relative_base(&self, level: u32) -> Option<PathBuf> {
        // A package's `__init__.py` is in its package's folder, as is any
        // other module: `.` is that folder either way.
        let importer = self.importer?;
        let mut dir = importer.parent()?;
        for _ in 1..level {
            dir = dir.parent()?;
        }
        Some(dir.to_path_buf())
    }

    /// One name in some folders: the first package or module wins; the
    /// folders of that name without `__init__.py` make a namespace package
    /// when none does.
    fn find_in(&self, dirs: &[PathBuf], name: &str) -> Option<Found> {
        if name.is_empty() || !is_identifier(name) {
            return None;
        }
        let mut portions = Vec::new();
        for dir in dirs {
            // One path, changed in place from candidate to candidate: a
            // package's folder, its `__init__`, the module's file. Every
            // file of a large library asks for every name its imports use.
            let mut path = dir.join(name);
            let is_dir = self.fs.kind(&path) == PathKind::Dir;
            // A module's code first; its stub (`.pyi`) where there is no
            // code (a stub folder holds only stubs).
            for (init, ext) in [("__init__.py", "py"), ("__init__.pyi", "pyi")] {
                if is_dir {
                    path.push(init);
                    if self.fs.kind(&path) == PathKind::File {
                        return Some(Found::File(path));
                    }
                    path.pop();
                }
                // `name` has no dot: the extension is the one given here.
                path.set_extension(ext);
                if self.fs.kind(&path) == PathKind::File {
                    return Some(Found::File(path));
                }
                path.set_extension("");
            }
            if is_dir {
                portions.push(path);
            }
        }
        (!portions.is_empty()).then_some(Found::Namespace(portions))
    }
}

fn is_init(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == "__init__.py" || n == "__init__.pyi")
}

fn join(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}.{name}")
    }
}

/// A name Python could import (no paths, no dots, no `..`).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}
