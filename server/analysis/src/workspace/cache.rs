//! Imported modules kept between analyses: each version of a file (its
//! path and a hash of its text) is parsed once, and every analysis that
//! imports it shares the parse. An unsaved buffer and the file on disk are
//! two versions. Versions no analysis used for a while are dropped.

use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::resolve::{PerImport, Resolutions};
use super::{FILE_SPAN, FileSystem, LoadedModule, scan};

/// More versions than this and the least recently used go.
const CAPACITY: usize = 4096;

/// The hasher of file texts: the same in every run and on every thread.
pub(super) fn text_hasher() -> impl Hasher {
    foldhash::quality::FixedState::with_seed(0x0f11_e5ed).build_hasher()
}

fn hash_text(text: &str) -> u64 {
    let mut hasher = text_hasher();
    hasher.write(text.as_bytes());
    hasher.finish()
}

/// The parsed modules of one thread (the syntax is not `Send`).
#[derive(Debug, Default)]
pub struct ModuleCache {
    /// By path, each version of it.
    entries: FxHashMap<PathBuf, Vec<Entry>>,
    /// The id the next module version gets; ids are never reused, so a
    /// range of one version is never taken for one of another.
    next_id: u32,
    /// Counts `load`s, to know which versions were used last.
    generation: u64,
    /// What the imports of each module version name, by the search path
    /// they were resolved along: the same for every file that imports the
    /// module, so found once (see `forget_resolutions`).
    resolutions: FxHashMap<(u32, u64), Rc<Resolutions>>,
    /// What an analysed file's imports name, by a hash of its path, its
    /// imports and the search path: most edits of a file leave its imports
    /// as they were.
    main_resolutions: FxHashMap<u64, Rc<Resolutions>>,
    /// What the relative imports of each module version name (the rest of
    /// its imports give nothing here): the same along any search path, so
    /// found once however many folders the analysed files are in.
    relative: FxHashMap<u32, PerImport>,
    /// Top levels run by earlier analyses (see `executed`).
    executed: super::executed::Executed,
    /// The last text read of each path and its hash: a host that hands
    /// out the same text again (an unchanged buffer, a file read once per
    /// run) is not hashed again.
    hashes: FxHashMap<PathBuf, (Arc<str>, u64)>,
}

#[derive(Debug)]
struct Entry {
    module: Rc<LoadedModule>,
    used: u64,
}

impl Drop for ModuleCache {
    fn drop(&mut self) {
        super::executed::clear(&self.executed);
    }
}

impl ModuleCache {
    pub fn new() -> ModuleCache {
        ModuleCache::default()
    }

    /// How many module versions are kept.
    pub fn len(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Files were created or deleted: which file an import names may have
    /// changed.
    pub fn forget_resolutions(&mut self) {
        self.resolutions.clear();
        self.main_resolutions.clear();
        self.relative.clear();
        super::executed::clear(&self.executed);
    }

    pub(super) fn executed(&self) -> super::executed::Executed {
        self.executed.clone()
    }

    pub(super) fn resolutions(&self, module: u32, search: u64) -> Option<Rc<Resolutions>> {
        self.resolutions.get(&(module, search)).cloned()
    }

    pub(super) fn keep_resolutions(&mut self, module: u32, search: u64, found: Rc<Resolutions>) {
        if self.resolutions.len() > CAPACITY {
            self.resolutions.clear();
        }
        self.resolutions.insert((module, search), found);
    }

    pub(super) fn main_resolutions(&self, key: u64) -> Option<Rc<Resolutions>> {
        self.main_resolutions.get(&key).cloned()
    }

    pub(super) fn keep_main_resolutions(&mut self, key: u64, found: Rc<Resolutions>) {
        if self.main_resolutions.len() > CAPACITY {
            self.main_resolutions.clear();
        }
        self.main_resolutions.insert(key, found);
    }

    /// What the relative imports of module `module` name, one list per
    /// import in order (empty for an absolute one).
    pub(super) fn relative(&self, module: u32) -> Option<PerImport> {
        self.relative.get(&module).cloned()
    }

    pub(super) fn keep_relative(&mut self, module: u32, found: PerImport) {
        if self.relative.len() > CAPACITY {
            self.relative.clear();
        }
        self.relative.insert(module, found);
    }

    pub(super) fn begin_use(&mut self) {
        self.generation += 1;
    }

    /// Drops the versions used longest ago once there are too many.
    pub(super) fn end_use(&mut self) {
        let count = self.len();
        if count <= CAPACITY {
            return;
        }
        let mut ages: Vec<u64> = self.entries.values().flatten().map(|e| e.used).collect();
        ages.sort_unstable();
        let cutoff = ages[count - CAPACITY / 2];
        for versions in self.entries.values_mut() {
            versions.retain(|e| e.used >= cutoff);
        }
        self.entries.retain(|_, versions| !versions.is_empty());
        // Namespaces may hold the syntax of versions gone now.
        super::executed::clear(&self.executed);
    }

    /// The module at `path` as `fs` has it now, parsed once per version.
    pub(super) fn get(
        &mut self,
        path: &Path,
        fs: &dyn FileSystem,
    ) -> Result<Rc<LoadedModule>, String> {
        let text = fs.read(path)?;
        let hash = match self.hashes.get(path) {
            Some((known, hash)) if Arc::ptr_eq(known, &text) => *hash,
            _ => {
                let hash = hash_text(&text);
                if self.hashes.len() > CAPACITY {
                    self.hashes.clear();
                }
                self.hashes.insert(path.to_path_buf(), (text.clone(), hash));
                hash
            }
        };
        if let Some(entry) = self
            .entries
            .get_mut(path)
            .and_then(|versions| versions.iter_mut().find(|e| e.module.hash == hash))
        {
            entry.used = self.generation;
            return Ok(entry.module.clone());
        }
        // Ids start at 1: offsets of the analysed file itself are file 0.
        self.next_id = self
            .next_id
            .checked_add(1)
            .ok_or("too many module versions")?;
        if self.next_id as usize >= usize::MAX / FILE_SPAN {
            return Err("too many module versions".to_string());
        }
        let id = self.next_id;
        let module = shapels_syntax::parse_at(&text, id as usize * FILE_SPAN);
        let imports = scan::imports(&module);
        let loaded = Rc::new(LoadedModule {
            id,
            path: path.to_path_buf(),
            text,
            hash,
            module,
            imports,
        });
        self.entries
            .entry(path.to_path_buf())
            .or_default()
            .push(Entry {
                module: loaded.clone(),
                used: self.generation,
            });
        Ok(loaded)
    }
}
