//! Publishing diagnostics: when (on open, on save, debounced on change), for
//! which version, and their conversion to LSP.
//!
//! Every publication carries the version of the snapshot it was computed
//! from, and is sent only if that snapshot is still the document's current
//! one at the moment of sending; anything older is dropped.

use std::sync::Arc;
use std::time::Duration;

use shapels_analysis::{FileAnalysis, Severity};
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};

use crate::capabilities::ClientFlags;
use crate::inlay_hints;
use crate::proto;
use crate::session::Session;
use crate::snapshot::Snapshot;

/// How long typing must pause before a changed document is analysed.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(200);

/// Publishes the diagnostics of `snapshot`, after `delay` if given. The work
/// runs in its own task: the caller is a notification handler that must
/// return at once so the next message can be read.
pub(crate) fn schedule(session: &Arc<Session>, snapshot: Arc<Snapshot>, delay: Option<Duration>) {
    let session = session.clone();
    let Some(delay) = delay else {
        tokio::spawn(async move { publish(&session, &snapshot).await });
        return;
    };
    // One task per document waits for a pause in typing and publishes the
    // version current then; edits during the wait only move its end. (A
    // task per version would keep each superseded text alive for the delay:
    // a burst of edits would pile them up.)
    let uri = snapshot.uri.clone();
    drop(snapshot);
    if !session.start_waiting(&uri) {
        return;
    }
    tokio::spawn(async move {
        let mut wait = delay;
        loop {
            tokio::time::sleep(wait).await;
            let Some(current) = session.snapshot(&uri) else {
                session.stop_waiting(&uri);
                return;
            };
            let quiet = current.created.elapsed();
            if quiet < delay {
                wait = delay - quiet;
                continue;
            }
            break;
        }
        // Cleared before the current version is read again: an edit from
        // here on starts a wait of its own, and one that came in between is
        // the version published now.
        session.stop_waiting(&uri);
        if let Some(current) = session.snapshot(&uri) {
            publish(&session, &current).await;
        }
    });
}

async fn publish(session: &Arc<Session>, snapshot: &Arc<Snapshot>) {
    // A cancelled snapshot was replaced: the newer one publishes instead.
    let Ok(Some(analysis)) = snapshot.analysis(session).await else {
        return;
    };
    let flags = session.flags();
    let diagnostics = to_lsp(snapshot, &analysis, &flags);
    {
        let _guard = session.publish_lock.lock().await;
        if !session.is_current(snapshot) {
            tracing::debug!(
                "dropping diagnostics for {} version {}: stale",
                snapshot.uri.as_str(),
                snapshot.version
            );
            return;
        }
        session
            .client
            .publish_diagnostics(snapshot.uri.clone(), diagnostics, Some(snapshot.version))
            .await;
    }
    // Hints already computed from this very snapshot are up to date; only
    // a client still showing older ones needs to be asked to refresh.
    if !snapshot.hints_served() {
        inlay_hints::request_refresh(session);
    }
}

/// Clears the diagnostics of a closed document, unless it was opened again
/// before this task got to run.
pub(crate) fn clear(session: &Arc<Session>, uri: Uri) {
    let session = session.clone();
    tokio::spawn(async move {
        let _guard = session.publish_lock.lock().await;
        if session.documents().contains(&uri) {
            return;
        }
        session
            .client
            .publish_diagnostics(uri, Vec::new(), None)
            .await;
    });
}

fn to_lsp(snapshot: &Snapshot, analysis: &FileAnalysis, flags: &ClientFlags) -> Vec<Diagnostic> {
    analysis
        .diagnostics
        .iter()
        .map(|d| one_to_lsp(snapshot, d, flags))
        .collect()
}

/// One diagnostic as published (and as a code action names it).
pub(crate) fn one_to_lsp(
    snapshot: &Snapshot,
    d: &shapels_analysis::Diagnostic,
    flags: &ClientFlags,
) -> Diagnostic {
    let text = &snapshot.text;
    let encoding = flags.encoding;
    let mut message = d.message.clone();
    let related_information = if flags.related_information {
        Some(
            d.related
                .iter()
                .filter_map(|related| {
                    Some(DiagnosticRelatedInformation {
                        location: location(snapshot, related, encoding)?,
                        message: related.message.clone(),
                    })
                })
                .collect(),
        )
        .filter(|related: &Vec<_>| !related.is_empty())
    } else {
        // Without related information the notes would be lost; keep
        // them in the message, where every client shows them.
        for related in &d.related {
            let note = &related.message;
            match &related.file {
                None => {
                    let line = proto::lsp_position(text, related.range.start, encoding).line + 1;
                    message.push_str(&format!("\nline {line}: {note}"));
                }
                Some(file) => {
                    let line = line_in(&file.text, related.range.start);
                    let name = file.path.file_name().unwrap_or_default().display();
                    message.push_str(&format!("\n{name}:{line}: {note}"));
                }
            }
        }
        None
    };
    Diagnostic {
        range: proto::lsp_range(text, &d.range, encoding),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Information => DiagnosticSeverity::INFORMATION,
            Severity::Hint => DiagnosticSeverity::HINT,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: None,
        source: Some("shapels".into()),
        message,
        related_information,
        tags: None,
        data: None,
    }
}

/// Where a related place is, in the document or in a file it imports.
fn location(
    snapshot: &Snapshot,
    related: &shapels_analysis::Related,
    encoding: crate::position::PositionEncoding,
) -> Option<Location> {
    match &related.file {
        None => Some(Location {
            uri: snapshot.uri.clone(),
            range: proto::lsp_range(&snapshot.text, &related.range, encoding),
        }),
        Some(file) => {
            let text = ropey::Rope::from_str(&file.text);
            Some(Location {
                uri: Uri::from_file_path(&file.path)?,
                range: proto::lsp_range(&text, &related.range, encoding),
            })
        }
    }
}

/// The 1-based line of an offset of a text.
fn line_in(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}
