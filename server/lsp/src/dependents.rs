//! Documents that import other files: when a file changes (an edit of an
//! open document, a file changed, created or deleted on disk), every open
//! document whose last analysis imported it is analysed again, and its
//! diagnostics and inlay hints are refreshed.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::ls_types::Uri;

use crate::diagnostics;
use crate::inlay_hints;
use crate::session::Session;

/// The file behind a `file:` URI.
pub(crate) fn path_of(uri: &Uri) -> Option<PathBuf> {
    if !uri.as_str().starts_with("file:") {
        return None;
    }
    uri.to_file_path().map(|p| p.into_owned())
}

/// Analyses again the open documents that import one of `files` (other
/// than `except`, the document that changed), after `delay` when given.
pub(crate) fn refresh_importers(
    session: &Arc<Session>,
    files: &[PathBuf],
    except: Option<&Uri>,
    delay: Option<Duration>,
) {
    let importers: Vec<Uri> = session
        .importers_of(files)
        .into_iter()
        .filter(|uri| Some(uri) != except)
        .collect();
    refresh(session, &importers, delay);
}

/// Analyses these documents again (same text, new snapshot).
pub(crate) fn refresh(session: &Arc<Session>, uris: &[Uri], delay: Option<Duration>) {
    if uris.is_empty() {
        return;
    }
    tracing::debug!("re-analysing {} importing documents", uris.len());
    let snapshots = session.documents().refresh(uris);
    for snapshot in snapshots {
        diagnostics::schedule(session, snapshot, delay);
    }
    inlay_hints::request_refresh(session);
}
