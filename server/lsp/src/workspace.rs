//! Workspace settings: the roots, their `pyproject.toml` files, the editor's
//! settings, and what happens when any of them changes.
//!
//! The `pyproject.toml` that applies to a document is the nearest one with a
//! `[tool.shapels]` section at or above the document, not above the
//! workspace root that holds it: the same file `shapels check` would use, so
//! the editor and CI agree. The editor's settings take precedence over it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::ls_types::{
    ConfigurationItem, DidChangeConfigurationParams, DidChangeWatchedFilesParams,
    DidChangeWatchedFilesRegistrationOptions, FileChangeType, FileSystemWatcher, GlobPattern,
    InitializeParams, Registration, Uri,
};

use crate::config::{self, Settings, SettingsPatch};
use crate::diagnostics;
use crate::inlay_hints;
use crate::session::Session;

/// The settings layers of the session, from lowest to highest precedence:
/// defaults, pyproject, `initializationOptions`, `workspace/configuration`.
#[derive(Debug, Default)]
pub(crate) struct SettingsLayers {
    roots: Vec<PathBuf>,
    initialization: SettingsPatch,
    editor: SettingsPatch,
    /// The pyproject patch that applies to each directory holding an open
    /// document, read on first use and forgotten when a pyproject changes.
    pyprojects: HashMap<PathBuf, SettingsPatch>,
    /// Problems already shown, so that a bad pyproject above many
    /// directories is reported once; forgotten with `pyprojects`.
    reported: HashSet<String>,
}

impl SettingsLayers {
    /// The settings for a document, and any problems met while reading a
    /// pyproject for it that were not reported before.
    pub(crate) fn settings_for(&mut self, uri: &Uri) -> (Settings, Vec<String>) {
        let mut settings = Settings::default();
        let mut errors = Vec::new();
        if let Some(dir) = document_dir(uri) {
            let patch = match self.pyprojects.get(&dir) {
                Some(patch) => patch.clone(),
                None => {
                    let ceiling = self.root_of(&dir).map(Path::to_path_buf);
                    let patch = match config::discover(&dir, ceiling.as_deref()) {
                        Ok(Some(file)) => {
                            tracing::info!("using settings from {}", file.path.display());
                            errors.extend(
                                file.errors
                                    .iter()
                                    .map(|e| format!("{} (in {})", e, file.path.display())),
                            );
                            file.patch
                        }
                        Ok(None) => SettingsPatch::default(),
                        Err(err) => {
                            errors.push(err.to_string());
                            SettingsPatch::default()
                        }
                    };
                    errors.retain(|error| self.reported.insert(error.clone()));
                    self.pyprojects.insert(dir, patch.clone());
                    patch
                }
            };
            patch.apply(&mut settings);
        }
        self.initialization.apply(&mut settings);
        self.editor.apply(&mut settings);
        (settings, errors)
    }

    /// The workspace folders the client sent.
    pub(crate) fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The innermost workspace root holding `dir`.
    fn root_of(&self, dir: &Path) -> Option<&Path> {
        self.roots
            .iter()
            .filter(|root| dir.starts_with(root))
            .max_by_key(|root| root.as_os_str().len())
            .map(|p| &**p)
    }
}

/// The directory of a `file:` document; other schemes (`untitled:`) have none.
fn document_dir(uri: &Uri) -> Option<PathBuf> {
    if !uri.as_str().starts_with("file:") {
        return None;
    }
    uri.to_file_path()?.parent().map(Path::to_path_buf)
}

/// Records the workspace roots and `initializationOptions`.
pub(crate) fn initialize(session: &Session, params: &InitializeParams) {
    #[allow(deprecated, reason = "rootUri is all that older clients send")]
    let root_uri = params.root_uri.clone();
    let roots: Vec<PathBuf> = match &params.workspace_folders {
        Some(folders) if !folders.is_empty() => folders
            .iter()
            .filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned()))
            .collect(),
        _ => root_uri
            .iter()
            .filter_map(|uri| uri.to_file_path().map(|p| p.into_owned()))
            .collect(),
    };
    tracing::info!("workspace roots: {roots:?}");
    let (patch, errors) = config::parse_editor_settings(
        params
            .initialization_options
            .as_ref()
            .unwrap_or(&Value::Null),
    );
    {
        let mut layers = session.settings_layers();
        layers.roots = roots;
        layers.initialization = patch;
    }
    session.report_setting_errors(errors.iter().map(ToString::to_string).collect());
}

/// After `initialized`: registers for the notifications that need dynamic
/// registration and pulls the editor's settings. This runs in a task of its
/// own because it waits for the client's answers, and a handler that waits
/// for the client would hold up `exit` if the client never answers.
pub(crate) fn initialized(session: &Arc<Session>) {
    let session = session.clone();
    tokio::spawn(async move {
        register_capabilities(&session).await;
        pull_configuration(&session).await;
    });
}

async fn register_capabilities(session: &Session) {
    let flags = session.flags();
    let mut registrations = Vec::new();
    if flags.dynamic_configuration {
        registrations.push(Registration {
            id: "shapels/didChangeConfiguration".into(),
            method: "workspace/didChangeConfiguration".into(),
            register_options: None,
        });
    }
    if flags.dynamic_watched_files {
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: vec![
                FileSystemWatcher {
                    glob_pattern: GlobPattern::String(format!("**/{}", config::PYPROJECT)),
                    kind: None,
                },
                // Python files changed outside the editor: documents that
                // import them are analysed again.
                FileSystemWatcher {
                    glob_pattern: GlobPattern::String("**/*.py".into()),
                    kind: None,
                },
            ],
        };
        registrations.push(Registration {
            id: "shapels/watched-files".into(),
            method: "workspace/didChangeWatchedFiles".into(),
            register_options: serde_json::to_value(options).ok(),
        });
    }
    if registrations.is_empty() {
        return;
    }
    if let Err(err) = session.client.register_capability(registrations).await {
        tracing::warn!("client/registerCapability failed: {err}");
    }
}

/// Asks the client for the `shapels` section, when it can answer.
async fn pull_configuration(session: &Arc<Session>) {
    if !session.flags().configuration {
        return;
    }
    let item = ConfigurationItem {
        scope_uri: None,
        section: Some("shapels".into()),
    };
    match session.client.configuration(vec![item]).await {
        Ok(values) => {
            let value = values.into_iter().next().unwrap_or(Value::Null);
            set_editor_settings(session, &value);
        }
        Err(err) => tracing::warn!("workspace/configuration failed: {err}"),
    }
}

/// Replaces the editor layer and applies the result to the open documents.
fn set_editor_settings(session: &Arc<Session>, value: &Value) {
    let (patch, errors) = config::parse_editor_settings(value);
    session.report_setting_errors(errors.iter().map(ToString::to_string).collect());
    let changed = {
        let mut layers = session.settings_layers();
        let changed = layers.editor != patch;
        layers.editor = patch;
        changed
    };
    if changed {
        tracing::info!("editor settings changed");
        apply_settings_change(session);
    }
}

/// `workspace/didChangeConfiguration`: a client that can answer
/// `workspace/configuration` is asked again (the notification's payload is
/// unreliable in that "pull" model: often `null`); otherwise the payload is
/// the settings.
pub(crate) fn did_change_configuration(
    session: &Arc<Session>,
    params: DidChangeConfigurationParams,
) {
    if session.flags().configuration {
        let session = session.clone();
        tokio::spawn(async move { pull_configuration(&session).await });
    } else {
        set_editor_settings(session, &params.settings);
    }
}

/// Files changed on disk: a `pyproject.toml` (forget what was read and
/// re-apply), or Python files that open documents import.
pub(crate) fn did_change_watched_files(
    session: &Arc<Session>,
    params: DidChangeWatchedFilesParams,
) {
    python_files_changed(session, &params);
    let pyproject_changed = params.changes.iter().any(|change| {
        change.uri.to_file_path().is_some_and(|path| {
            path.file_name()
                .is_some_and(|name| name == config::PYPROJECT)
        })
    });
    if pyproject_changed {
        tracing::info!("a pyproject.toml changed; reloading settings");
        {
            let mut layers = session.settings_layers();
            layers.pyprojects.clear();
            layers.reported.clear();
        }
        apply_settings_change(session);
    }
}

/// Re-analyses the documents whose analysis settings changed and asks the
/// client to re-request inlay hints, whose own settings may have changed too.
fn apply_settings_change(session: &Arc<Session>) {
    // Lock order: documents, then settings (inside `settings_for`). Nothing
    // takes them in the other order.
    let changed = session.documents().reconfigure(|uri| {
        let settings = session.settings_for(uri);
        let import_paths = Arc::new(settings.import_paths());
        (settings.analysis, import_paths)
    });
    for snapshot in changed {
        diagnostics::schedule(session, snapshot, None);
    }
    inlay_hints::request_refresh(session);
}

/// Python files changed outside the editor: the documents that import one
/// (not open itself: the editor's text wins) are analysed again; a file
/// created or deleted can change what any import names, so then every open
/// document is.
fn python_files_changed(session: &Arc<Session>, params: &DidChangeWatchedFilesParams) {
    let mut changed = Vec::new();
    let mut created_or_deleted = false;
    for event in &params.changes {
        let Some(path) = crate::dependents::path_of(&event.uri) else {
            continue;
        };
        if path.extension().is_none_or(|ext| ext != "py") {
            continue;
        }
        if event.typ != FileChangeType::CHANGED {
            created_or_deleted = true;
        }
        if !session.documents().contains(&event.uri) {
            changed.push(path);
        }
    }
    if created_or_deleted {
        session.files_created_or_deleted();
        let all = session.documents().uris();
        crate::dependents::refresh(session, &all, None);
    } else if !changed.is_empty() {
        crate::dependents::refresh_importers(session, &changed, None, None);
    }
}
