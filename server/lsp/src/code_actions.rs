//! `textDocument/codeAction`: the quick fixes of the diagnostics in the
//! requested range, each offered only after trying it.
//!
//! A rule proposes fixes from what one analysis saw (`Diagnostic::fixes`);
//! whatever the fix, this module applies its edits to the snapshot's text,
//! has the workers analyse the result as they analyse the document, and
//! offers it only when `shapels_analysis::quick_fix::resolves` says the
//! diagnostic is gone and nothing broke. It knows no kind of fix: any fix a
//! diagnostic carries is served the same way.

use std::collections::HashMap;

use ropey::Rope;
use shapels_analysis::{Diagnostic, FileAnalysis, Fix, quick_fix};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
    DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, TextDocumentEdit, TextEdit,
    Uri, WorkspaceEdit,
};

use crate::proto;
use crate::session::Session;
use crate::snapshot::{Cancelled, Snapshot};

/// The fixes of the diagnostics that touch the requested range, tried.
pub(crate) async fn code_action(
    session: &Session,
    params: CodeActionParams,
) -> Result<Option<CodeActionResponse>> {
    let uri = params.text_document.uri;
    // Taken before the first `.await`: see `inlay_hints::inlay_hint`.
    let Some(snapshot) = session.snapshot(&uri) else {
        return Ok(None);
    };
    if let Some(only) = &params.context.only
        && !only
            .iter()
            .any(|kind| CodeActionKind::QUICKFIX.as_str().starts_with(kind.as_str()))
    {
        return Ok(None);
    }
    let Some(analysis) = snapshot.analysis(session).await? else {
        return Ok(None);
    };
    let flags = session.flags();
    let range = proto::offsets(&snapshot.text, params.range, flags.encoding);
    let wanted: Vec<usize> = analysis
        .diagnostics
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.fixes.is_empty())
        .filter(|(_, d)| d.range.start <= range.end && range.start <= d.range.end)
        .map(|(i, _)| i)
        .collect();
    if wanted.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let text = snapshot.text.to_string();
    let trial = Trial::new(session, &snapshot);
    let mut actions = Vec::new();
    for i in wanted {
        let diagnostic = &analysis.diagnostics[i];
        let mut preferred = true;
        for (j, fix) in diagnostic.fixes.iter().enumerate() {
            let works = trial.works(&analysis, (i, j), &text).await?;
            if !works {
                continue;
            }
            // The first fix a rule proposes is its best; the first that
            // works is the one to apply without asking.
            actions.push(CodeActionOrCommand::CodeAction(action(
                &snapshot, diagnostic, fix, preferred, session,
            )));
            preferred = false;
        }
    }
    Ok(Some(actions))
}

/// Trying fixes of one snapshot, under a name of the document's own so the
/// document's parse stays as it is; that name's parse is dropped at the end
/// (also when the request is cancelled half-way).
struct Trial<'a> {
    session: &'a Session,
    snapshot: &'a Snapshot,
    as_uri: Option<Uri>,
}

impl<'a> Trial<'a> {
    fn new(session: &'a Session, snapshot: &'a Snapshot) -> Self {
        let as_uri = format!("{}#shapels-quick-fix", snapshot.uri.as_str())
            .parse::<Uri>()
            .ok();
        Trial {
            session,
            snapshot,
            as_uri,
        }
    }

    /// Whether fix `j` of diagnostic `i` resolves it, tried once per snapshot.
    async fn works(
        &self,
        analysis: &FileAnalysis,
        (i, j): (usize, usize),
        text: &str,
    ) -> std::result::Result<bool, Cancelled> {
        if let Some(known) = self.known(i, j) {
            return Ok(known);
        }
        let diagnostic = &analysis.diagnostics[i];
        let fix = &diagnostic.fixes[j];
        let works = match (quick_fix::apply(text, fix), &self.as_uri) {
            (Some(edited), Some(as_uri)) => {
                let after = self
                    .snapshot
                    .analysis_of_edit(self.session, as_uri, Rope::from_str(&edited))
                    .await?;
                after.is_some_and(|after| quick_fix::resolves(diagnostic, fix, analysis, &after))
            }
            _ => false,
        };
        tracing::debug!(
            "quick fix {:?} for {} at {:?}: {}",
            fix.title,
            diagnostic.code,
            diagnostic.range,
            if works { "works" } else { "does not work" }
        );
        self.tried().insert((i, j), works);
        Ok(works)
    }

    fn known(&self, i: usize, j: usize) -> Option<bool> {
        self.tried().get(&(i, j)).copied()
    }

    fn tried(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, usize), bool>> {
        self.snapshot
            .fixes_tried
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for Trial<'_> {
    fn drop(&mut self) {
        if let Some(uri) = self.as_uri.take() {
            self.session.workers.forget(uri);
        }
    }
}

/// The code action of one fix that works: its edits, in the client's
/// positions, for the version they were made against.
fn action(
    snapshot: &Snapshot,
    diagnostic: &Diagnostic,
    fix: &Fix,
    preferred: bool,
    session: &Session,
) -> CodeAction {
    let flags = session.flags();
    let edits: Vec<TextEdit> = fix
        .edits
        .iter()
        .map(|(range, text)| TextEdit {
            range: proto::lsp_range(&snapshot.text, range, flags.encoding),
            new_text: text.clone(),
        })
        .collect();
    let edit = if flags.document_changes {
        // With the version, a client that has moved on refuses the edit
        // rather than applying it to another text.
        WorkspaceEdit {
            document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: snapshot.uri.clone(),
                    version: Some(snapshot.version),
                },
                edits: edits.into_iter().map(OneOf::Left).collect(),
            }])),
            ..WorkspaceEdit::default()
        }
    } else {
        WorkspaceEdit {
            changes: Some(HashMap::from([(snapshot.uri.clone(), edits)])),
            ..WorkspaceEdit::default()
        }
    };
    CodeAction {
        title: fix.title.clone(),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![crate::diagnostics::one_to_lsp(
            snapshot, diagnostic, &flags,
        )]),
        edit: Some(edit),
        is_preferred: Some(preferred),
        ..CodeAction::default()
    }
}
