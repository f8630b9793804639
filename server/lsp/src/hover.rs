//! `textDocument/hover`: what is known of the tensor under the cursor.

use std::sync::Arc;

use shapels_analysis::FileAnalysis;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use crate::proto;
use crate::session::Session;
use crate::snapshot::Cancelled;

/// On a bound name, the binding (with its name); elsewhere, the innermost
/// tensor expression under the cursor, from an analysis that records
/// expressions (made for this version on the first such hover).
pub(crate) async fn hover(session: &Session, params: HoverParams) -> Result<Option<Hover>> {
    let position = params.text_document_position_params;
    // Taken before the first `.await`: see `inlay_hints::inlay_hint`.
    let Some(snapshot) = session.snapshot(&position.text_document.uri) else {
        return Ok(None);
    };
    let encoding = session.flags().encoding;
    let Some(analysis) = answerable(snapshot.analysis(session).await)? else {
        return Ok(None);
    };
    let offset = proto::offset(&snapshot.text, position.position, encoding);
    let (markdown, range) = if let Some(binding) = shapels_analysis::binding_at(&analysis, offset) {
        (
            binding.tensor.hover_markdown(Some(&binding.name)),
            binding.range.clone(),
        )
    } else {
        let Some(analysis) = answerable(snapshot.analysis_with_expressions(session).await)? else {
            return Ok(None);
        };
        let expression = shapels_analysis::expression_at(&analysis, offset);
        let definition = shapels_analysis::definition_at(&analysis, offset);
        match (expression, definition) {
            // The name of something another file defines, inside a larger
            // tensor expression (`Block` of `Block(32)(x)`): the name is
            // what the cursor is on.
            (Some(expr), Some(def))
                if def.range.start > expr.range.start || def.range.end < expr.range.end =>
            {
                (definition_markdown(&snapshot, def), def.range.clone())
            }
            (Some(expr), def) => {
                let mut markdown = expr.tensor.hover_markdown(None);
                if let Some(def) = def {
                    markdown.push_str(&format!("- defined in `{}`\n", def.place()));
                }
                (markdown, expr.range.clone())
            }
            (None, Some(def)) => (definition_markdown(&snapshot, def), def.range.clone()),
            (None, None) => return Ok(None),
        }
    };
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(proto::lsp_range(&snapshot.text, &range, encoding)),
    }))
}

/// An analysis to answer from; `None` when it panicked. When the document
/// changed before the analysis began, the answer would be about a text the
/// client no longer has: LSP's ContentModified tells the client to ask
/// again (or not), without showing an error.
fn answerable(
    analysis: std::result::Result<Option<Arc<FileAnalysis>>, Cancelled>,
) -> Result<Option<Arc<FileAnalysis>>> {
    analysis.map_err(|Cancelled| Error::content_modified())
}

/// A name another file defines: what it is called here and where it is.
fn definition_markdown(
    snapshot: &crate::snapshot::Snapshot,
    definition: &shapels_analysis::Definition,
) -> String {
    let name = snapshot
        .text
        .get_byte_slice(definition.range.clone())
        .map(|s| s.to_string())
        .unwrap_or_default();
    format!("`{name}` — defined in `{}`", definition.place())
}
