//! `shapels/fileStatus`: a custom request for an editor's status bar, telling
//! how many tensors of a document the analysis could not give a full shape.
//!
//! Request params: `{"textDocument": {"uri": "file:///…/model.py"}}`.
//! Answer: a [`FileStatus`], or `null` when the document is not open. The
//! server announces the request with `experimental.fileStatusProvider: true`
//! in its capabilities, so a client can tell an older server that lacks it.
//! It answers from the document's current snapshot, waiting for its analysis
//! like hover does; clients ask again after each `publishDiagnostics`.

use serde::{Deserialize, Serialize};
use shapels_analysis::{Binding, DimView, FileAnalysis, Severity};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{Range, TextDocumentIdentifier};

use crate::proto;
use crate::session::Session;

/// The method name, which is also the contract with the editor clients.
pub(crate) const METHOD: &str = "shapels/fileStatus";

/// How many unknown-shaped tensors are listed by name; the counts are exact.
const MAX_LISTED: usize = 20;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileStatusParams {
    pub(crate) text_document: TextDocumentIdentifier,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileStatus {
    /// The document version the answer describes.
    pub(crate) version: i32,
    /// False when the analysis failed on this version (the counts are then 0).
    pub(crate) analyzed: bool,
    /// Tensor bindings: one per statement and bound name, as in
    /// `shapels check --format json`.
    pub(crate) tensors: usize,
    /// Those whose rank is unknown or that have an unknown (`?`) dim.
    /// Symbolic sizes (`B`, `C // n_head`) are known, not counted here.
    pub(crate) unknown_shapes: usize,
    /// The first of them in source order, for a tooltip.
    pub(crate) unknown: Vec<UnknownShape>,
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub(crate) struct UnknownShape {
    pub(crate) name: String,
    pub(crate) range: Range,
}

pub(crate) async fn file_status(
    session: &Session,
    params: FileStatusParams,
) -> Result<Option<FileStatus>> {
    // Taken before the first `.await`: see `inlay_hints::inlay_hint`.
    let Some(snapshot) = session.snapshot(&params.text_document.uri) else {
        return Ok(None);
    };
    let encoding = session.flags().encoding;
    // Superseded before its analysis began: see `snapshot::Cancelled`.
    let analysis = match snapshot.analysis(session).await? {
        Some(analysis) => analysis,
        None => {
            return Ok(Some(FileStatus {
                version: snapshot.version,
                analyzed: false,
                tensors: 0,
                unknown_shapes: 0,
                unknown: Vec::new(),
                errors: 0,
                warnings: 0,
            }));
        }
    };
    let unknown: Vec<&Binding> = analysis
        .bindings
        .iter()
        .filter(|b| has_unknown_shape(b))
        .collect();
    let (errors, warnings) = count_severities(&analysis);
    Ok(Some(FileStatus {
        version: snapshot.version,
        analyzed: true,
        tensors: analysis.bindings.len(),
        unknown_shapes: unknown.len(),
        unknown: unknown
            .into_iter()
            .take(MAX_LISTED)
            .map(|b| UnknownShape {
                name: b.name.clone(),
                range: proto::lsp_range(&snapshot.text, &b.range, encoding),
            })
            .collect(),
        errors,
        warnings,
    }))
}

fn has_unknown_shape(binding: &Binding) -> bool {
    match &binding.tensor.shape {
        None => true,
        Some(dims) => dims.iter().any(|d| matches!(d, DimView::Unknown)),
    }
}

fn count_severities(analysis: &FileAnalysis) -> (usize, usize) {
    let count = |severity| {
        analysis
            .diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    };
    (count(Severity::Error), count(Severity::Warning))
}
