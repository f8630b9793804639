//! Document synchronisation: `didOpen`, `didChange`, `didSave`, `didClose`.
//!
//! These handlers are synchronous on purpose: they update the document
//! store before returning (before any `.await`), which is what keeps edits in
//! arrival order, and they leave analysis and publishing to background tasks.

use std::sync::Arc;

use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, MessageType,
};

use crate::dependents::{self, path_of};
use crate::diagnostics::{self, DEBOUNCE};
use crate::guarded;
use crate::session::Session;

pub(crate) fn did_open(session: &Arc<Session>, params: DidOpenTextDocumentParams) {
    let document = params.text_document;
    if let Some(message) = guarded::too_large(document.uri.as_str(), &document.text) {
        tracing::warn!("{message}");
        let client = session.client.clone();
        let message = format!("shapels: {message}");
        tokio::spawn(async move { client.show_message(MessageType::WARNING, message).await });
    }
    let settings = session.settings_for(&document.uri);
    let import_paths = Arc::new(settings.import_paths());
    let snapshot = session.documents().open(
        document.uri,
        document.version,
        &document.text,
        settings.analysis,
        import_paths,
    );
    // Documents that import this file read it from the editor from now on.
    if let Some(path) = path_of(&snapshot.uri) {
        dependents::refresh_importers(session, &[path], Some(&snapshot.uri), None);
    }
    diagnostics::schedule(session, snapshot, None);
}

pub(crate) fn did_change(session: &Arc<Session>, params: DidChangeTextDocumentParams) {
    let encoding = session.flags().encoding;
    let document = params.text_document;
    let snapshot = session.documents().change(
        &document.uri,
        document.version,
        &params.content_changes,
        encoding,
    );
    match snapshot {
        Some(snapshot) => {
            if let Some(path) = path_of(&snapshot.uri) {
                dependents::refresh_importers(
                    session,
                    &[path],
                    Some(&snapshot.uri),
                    Some(DEBOUNCE),
                );
            }
            diagnostics::schedule(session, snapshot, Some(DEBOUNCE))
        }
        None => tracing::warn!(
            "didChange for {}, which is not open; ignoring it",
            document.uri.as_str()
        ),
    }
}

/// Saving publishes at once, without waiting for the debounce.
pub(crate) fn did_save(session: &Arc<Session>, params: DidSaveTextDocumentParams) {
    if let Some(snapshot) = session.snapshot(&params.text_document.uri) {
        diagnostics::schedule(session, snapshot, None);
    }
}

pub(crate) fn did_close(session: &Arc<Session>, params: DidCloseTextDocumentParams) {
    let uri = params.text_document.uri;
    if session.documents().close(&uri) {
        session.workers.forget(uri.clone());
        session.forget_imports(&uri);
        // Its importers read the file from disk again, which may differ
        // from what the editor held.
        if let Some(path) = path_of(&uri) {
            dependents::refresh_importers(session, &[path], Some(&uri), None);
        }
    } else {
        tracing::warn!("didClose for {}, which is not open", uri.as_str());
    }
    diagnostics::clear(session, uri);
}
