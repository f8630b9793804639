//! The files the analysis may import, as the host sees them: the disk for
//! `shapels check`, and in the editor the open documents' unsaved text
//! over the disk. Both implement the analysis' `FileSystem`, the only way
//! it learns what is on disk.

use std::collections::HashMap;
use std::ffi::OsString;

use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shapels_analysis::workspace::{FileSystem, PathKind};

use crate::guarded::MAX_SOURCE_BYTES;

/// The disk: files read as UTF-8 (without a byte order mark), refused
/// above the size the analysis takes, never read past it.
#[derive(Debug, Default, Clone, Copy)]
pub struct DiskFiles;

impl FileSystem for DiskFiles {
    fn kind(&self, path: &Path) -> PathKind {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => PathKind::Dir,
            Ok(meta) if meta.is_file() => PathKind::File,
            _ => PathKind::Missing,
        }
    }

    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        read_python(path).map(Arc::from)
    }
}

/// Reads a Python source file as UTF-8, without its byte order mark. A file
/// above [`MAX_SOURCE_BYTES`] or that is not a regular file is refused
/// before it is read; one that is not UTF-8 is not guessed at.
pub fn read_python(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|err| format!("{shown}: {err}"))?;
    if !meta.is_file() {
        return Err(format!("{shown}: not a regular file"));
    }
    if meta.len() > MAX_SOURCE_BYTES as u64 {
        return Err(format!(
            "{shown}: {:.1} MiB, more than the {} MiB shapels analyses",
            meta.len() as f64 / (1024.0 * 1024.0),
            MAX_SOURCE_BYTES / (1024 * 1024)
        ));
    }
    let file = std::fs::File::open(path).map_err(|err| format!("{shown}: {err}"))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may have grown since: never read more than the limit and a byte.
    file.take(MAX_SOURCE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("{shown}: {err}"))?;
    if bytes.len() > MAX_SOURCE_BYTES {
        return Err(format!(
            "{shown}: more than the {} MiB shapels analyses",
            MAX_SOURCE_BYTES / (1024 * 1024)
        ));
    }
    shapels_syntax::source_text(bytes).map_err(|at| {
        format!(
            "{shown}: not UTF-8 (invalid byte on line {}, at byte offset {})",
            at.line, at.offset
        )
    })
}

/// The editor's view: an open document's text wins over the file on disk,
/// saved or not, and an open document exists even where no file does yet.
#[derive(Debug, Default, Clone)]
pub struct OverlayFiles {
    pub open: HashMap<PathBuf, Arc<str>>,
}

impl FileSystem for OverlayFiles {
    fn kind(&self, path: &Path) -> PathKind {
        if self.open.contains_key(path) {
            return PathKind::File;
        }
        match DiskFiles.kind(path) {
            // A folder that holds only unsaved documents exists for them.
            PathKind::Missing if self.open.keys().any(|p| p.starts_with(path)) => PathKind::Dir,
            kind => kind,
        }
    }

    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        match self.open.get(path) {
            Some(text) if text.len() > MAX_SOURCE_BYTES => Err(format!(
                "{}: more than the {} MiB shapels analyses",
                path.display(),
                MAX_SOURCE_BYTES / (1024 * 1024)
            )),
            Some(text) => Ok(text.clone()),
            None => DiskFiles.read(path),
        }
    }
}

/// What a worker learned of the disk, kept between analyses so that a
/// keystroke does not read every imported file again: a file's text is
/// kept with its modification time and length and read again when either
/// moves; what a path is (file, folder, nothing) is kept until
/// [`DiskCache::forget_kinds`] (the server calls it when files are created
/// or deleted).
#[derive(Debug, Default)]
pub struct DiskCache {
    texts: HashMap<PathBuf, (Option<std::time::SystemTime>, u64, Arc<str>)>,
    kinds: HashMap<PathBuf, PathKind>,
}

/// More entries than this and a cache starts over.
const DISK_CACHE_CAPACITY: usize = 8192;

impl DiskCache {
    pub fn forget_kinds(&mut self) {
        self.kinds.clear();
    }

    fn kind(&mut self, path: &Path) -> PathKind {
        if let Some(kind) = self.kinds.get(path) {
            return *kind;
        }
        if self.kinds.len() > DISK_CACHE_CAPACITY {
            self.kinds.clear();
        }
        let kind = DiskFiles.kind(path);
        self.kinds.insert(path.to_path_buf(), kind);
        kind
    }

    fn read(&mut self, path: &Path) -> Result<Arc<str>, String> {
        let meta = std::fs::metadata(path).map_err(|err| format!("{}: {err}", path.display()))?;
        let stamp = (meta.modified().ok(), meta.len());
        if let Some((modified, len, text)) = self.texts.get(path)
            && (*modified, *len) == stamp
        {
            return Ok(text.clone());
        }
        let text: Arc<str> = Arc::from(read_python(path)?);
        if self.texts.len() > DISK_CACHE_CAPACITY {
            self.texts.clear();
        }
        self.texts
            .insert(path.to_path_buf(), (stamp.0, stamp.1, text.clone()));
        Ok(text)
    }
}

/// What a worker reads imports through: the open documents (as they were
/// when the analysis was asked for), then the disk, through its cache.
pub struct WorkerFiles<'a> {
    pub open: &'a OverlayFiles,
    pub disk: &'a std::cell::RefCell<DiskCache>,
}

impl FileSystem for WorkerFiles<'_> {
    fn kind(&self, path: &Path) -> PathKind {
        if self.open.open.contains_key(path) {
            return PathKind::File;
        }
        match self.disk.borrow_mut().kind(path) {
            PathKind::Missing if self.open.open.keys().any(|p| p.starts_with(path)) => {
                PathKind::Dir
            }
            kind => kind,
        }
    }

    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        match self.open.open.get(path) {
            Some(_) => self.open.read(path),
            None => self.disk.borrow_mut().read(path),
        }
    }
}

/// The disk as one run of `shapels check` sees it: each path looked at and
/// each file read once, however many of the checked files import it (the
/// files of a library are imported by hundreds of its own). Files changed
/// during the run are not seen again.
///
/// Paths are kept by their bytes: `Path`'s own hash splits the path into
/// components, which made these look-ups a quarter of a run over a large
/// package. Two spellings of one path are two entries, each asked of the
/// disk once.
#[derive(Debug, Default)]
pub struct RunFiles {
    kinds: std::cell::RefCell<FxHashMap<OsString, PathKind>>,
    texts: std::cell::RefCell<FxHashMap<OsString, Result<Arc<str>, String>>>,
}

impl FileSystem for RunFiles {
    fn kind(&self, path: &Path) -> PathKind {
        if let Some(kind) = self.kinds.borrow().get(path.as_os_str()) {
            return *kind;
        }
        let kind = DiskFiles.kind(path);
        self.kinds
            .borrow_mut()
            .insert(path.as_os_str().to_os_string(), kind);
        kind
    }

    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        if let Some(text) = self.texts.borrow().get(path.as_os_str()) {
            return text.clone();
        }
        let text = DiskFiles.read(path);
        self.texts
            .borrow_mut()
            .insert(path.as_os_str().to_os_string(), text.clone());
        text
    }
}
