//! Imported modules kept between analyses: each version of a file (its
//! path and a hash of its text) is parsed once, and every analysis that
//! imports it shares the parse. An unsaved buffer and the file on disk are
//! two versions. Versions no analysis used for a while are dropped.

use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rustc_hash::FxHashMap;

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
    entries: FxHashMap<(PathBuf, u64), Entry>,
    /// The id the next module version gets; ids are never reused, so a
    /// range of one version is never taken for one of another.
    next_id: u32,
    /// Counts `load`s, to know which versions were used last.
    generation: u64,
    /// What the imports of each module version name, by the search path
    /// they were resolved along: the same for every file that imports the
    /// module, so found once (see `forget_resolutions`).
    resolutions: FxHashMap<(u32, u64), Rc<Resolutions>>,
}

/// What a module's imports name: (level, dotted name) and what was found.
pub(super) type Resolutions = Vec<((u32, String), super::resolve::Found)>;

#[derive(Debug)]
struct Entry {
    module: Rc<LoadedModule>,
    used: u64,
}

impl ModuleCache {
    pub fn new() -> ModuleCache {
        ModuleCache::default()
    }

    /// How many module versions are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Files were created or deleted: which file an import names may have
    /// changed.
    pub fn forget_resolutions(&mut self) {
        self.resolutions.clear();
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

    pub(super) fn begin_use(&mut self) {
        self.generation += 1;
    }

    /// Drops the versions used longest ago once there are too many.
    pub(super) fn end_use(&mut self) {
        if self.entries.len() <= CAPACITY {
            return;
        }
        let mut ages: Vec<u64> = self.entries.values().map(|e| e.used).collect();
        ages.sort_unstable();
        let cutoff = ages[self.entries.len() - CAPACITY / 2];
        self.entries.retain(|_, e| e.used >= cutoff);
    }

    /// The module at `path` as `fs` has it now, parsed once per version.
    pub(super) fn get(
        &mut self,
        path: &Path,
        fs: &dyn FileSystem,
    ) -> Result<Rc<LoadedModule>, String> {
        let text = fs.read(path)?;
        let hash = hash_text(&text);
        let key = (path.to_path_buf(), hash);
        if let Some(entry) = self.entries.get_mut(&key) {
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
        self.entries.insert(
            key,
            Entry {
                module: loaded.clone(),
                used: self.generation,
            },
        );
        Ok(loaded)
    }
}
