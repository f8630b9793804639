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
    let config = session.settings_for(&document.uri).analysis;
    let snapshot = session
        .documents()
        .open(document.uri, document.version, &document.text, config);
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
        Some(snapshot) => diagnostics::schedule(session, snapshot, Some(DEBOUNCE)),
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
    } else {
        tracing::warn!("didClose for {}, which is not open", uri.as_str());
    }
    diagnostics::clear(session, uri);
}
