//! The server's state, shared by every handler and background task.
//!
//! Locks here are `std::sync::Mutex`es held only for a few instructions and
//! never across an `.await` (the compiler enforces the latter: handler
//! futures must be `Send`). Taking them before a handler's first `.await` is
//! what keeps notifications ordered; see `documents`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use shapels_analysis::workspace::ImportPaths;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{MessageType, Uri};

use crate::capabilities::ClientFlags;
use crate::config::Settings;
use crate::documents::DocumentStore;
use crate::snapshot::Snapshot;
use crate::worker::{Analyzer, ImportInputs, Workers};
use crate::workspace::SettingsLayers;

pub(crate) struct Session {
    pub(crate) client: Client,
    documents: Mutex<DocumentStore>,
    /// The threads that parse and analyse documents; see `worker`.
    pub(crate) workers: Workers,
    settings: Mutex<SettingsLayers>,
    flags: OnceLock<ClientFlags>,
    /// Held while checking that a result is current and sending it, so that a
    /// stale result can never overtake a newer one on its way to the client.
    pub(crate) publish_lock: tokio::sync::Mutex<()>,
    /// Documents with a task waiting for a pause in typing to publish their
    /// diagnostics (`diagnostics::schedule`): one per document, however
    /// many edits arrive meanwhile.
    debouncing: Mutex<HashSet<Uri>>,
    shutdown_requested: Arc<AtomicBool>,
    /// The user's files each open document's last analysis imported: a
    /// change to one of them analyses the document again.
    imports: Mutex<HashMap<Uri, Vec<PathBuf>>>,
    /// Moves when files are created or deleted (see `ImportInputs`).
    files_generation: AtomicU64,
}

/// Locks a mutex, going on with the data if a panic poisoned it: every
/// critical section here leaves the data consistent at each step.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Session {
    pub(crate) fn new(
        client: Client,
        shutdown_requested: Arc<AtomicBool>,
        analyzer: Analyzer,
    ) -> Self {
        Session {
            client,
            documents: Mutex::new(DocumentStore::default()),
            workers: Workers::new(analyzer),
            settings: Mutex::new(SettingsLayers::default()),
            flags: OnceLock::new(),
            publish_lock: tokio::sync::Mutex::new(()),
            debouncing: Mutex::new(HashSet::new()),
            shutdown_requested,
            imports: Mutex::new(HashMap::new()),
            files_generation: AtomicU64::new(0),
        }
    }

    /// Where the analysis of `uri` finds its imports now: the other open
    /// documents' text, the workspace roots, the extra paths.
    pub(crate) fn import_inputs(&self, uri: &Uri, import_paths: &Arc<ImportPaths>) -> ImportInputs {
        let open = Arc::new(self.documents().overlay(uri));
        let roots = Arc::new(self.settings_layers().roots().to_vec());
        let path = uri
            .as_str()
            .starts_with("file:")
            .then(|| uri.to_file_path().map(|p| p.into_owned()))
            .flatten();
        ImportInputs {
            path,
            open,
            roots,
            import_paths: import_paths.clone(),
            files_generation: self.files_generation.load(Ordering::Acquire),
        }
    }

    /// Records what the last analysis of `uri` imported.
    pub(crate) fn note_imports(&self, uri: &Uri, files: &[PathBuf]) {
        let mut imports = lock(&self.imports);
        if files.is_empty() {
            imports.remove(uri);
        } else {
            imports.insert(uri.clone(), files.to_vec());
        }
    }

    pub(crate) fn forget_imports(&self, uri: &Uri) {
        lock(&self.imports).remove(uri);
    }

    /// The open documents whose last analysis imported one of `files`.
    pub(crate) fn importers_of(&self, files: &[PathBuf]) -> Vec<Uri> {
        lock(&self.imports)
            .iter()
            .filter(|(_, imported)| imported.iter().any(|f| files.contains(f)))
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    /// Files were created or deleted: which module an import names may
    /// have changed.
    pub(crate) fn files_created_or_deleted(&self) {
        self.files_generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Marks `uri` as having a task that waits to publish; false when one
    /// already waits (it will publish whatever version is current then).
    pub(crate) fn start_waiting(&self, uri: &Uri) -> bool {
        lock(&self.debouncing).insert(uri.clone())
    }

    pub(crate) fn stop_waiting(&self, uri: &Uri) {
        lock(&self.debouncing).remove(uri);
    }

    pub(crate) fn documents(&self) -> MutexGuard<'_, DocumentStore> {
        lock(&self.documents)
    }

    pub(crate) fn settings_layers(&self) -> MutexGuard<'_, SettingsLayers> {
        lock(&self.settings)
    }

    /// The settings that apply to a document. Problems met while reading a
    /// `pyproject.toml` for the first time are reported to the user.
    pub(crate) fn settings_for(&self, uri: &Uri) -> Settings {
        let (settings, errors) = self.settings_layers().settings_for(uri);
        self.report_setting_errors(errors);
        settings
    }

    pub(crate) fn set_flags(&self, flags: ClientFlags) {
        if self.flags.set(flags).is_err() {
            tracing::warn!("initialize received twice; keeping the first client capabilities");
        }
    }

    pub(crate) fn flags(&self) -> ClientFlags {
        self.flags.get().copied().unwrap_or_default()
    }

    pub(crate) fn snapshot(&self, uri: &Uri) -> Option<Arc<Snapshot>> {
        self.documents().get(uri)
    }

    pub(crate) fn is_current(&self, snapshot: &Arc<Snapshot>) -> bool {
        self.documents().is_current(snapshot)
    }

    pub(crate) fn request_shutdown(&self) {
        self.shutdown_requested.store(true, Ordering::SeqCst);
    }

    /// Logs each problem and shows it to the user, naming the key; the
    /// message goes out from a task so that callers need not be async.
    pub(crate) fn report_setting_errors(&self, errors: Vec<String>) {
        for error in errors {
            let message = format!("shapels: {error}");
            tracing::warn!("{message}");
            let client = self.client.clone();
            tokio::spawn(async move { client.show_message(MessageType::WARNING, message).await });
        }
    }
}
