//! `textDocument/hover`: what is known of the tensor under the cursor.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use crate::proto;
use crate::session::Session;

/// On a bound name, the binding (with its name); elsewhere, the innermost
/// tensor expression under the cursor.
pub(crate) async fn hover(session: &Session, params: HoverParams) -> Result<Option<Hover>> {
    let position = params.text_document_position_params;
    // Taken before the first `.await`: see `inlay_hints::inlay_hint`.
    let Some(snapshot) = session.snapshot(&position.text_document.uri) else {
        return Ok(None);
    };
    let encoding = session.flags().encoding;
    let Some(analysis) = snapshot.analysis().await else {
        return Ok(None);
    };
    let offset = proto::offset(&snapshot.text, position.position, encoding);
    let (markdown, range) = if let Some(binding) = shapels_analysis::binding_at(&analysis, offset) {
        (
            binding.tensor.hover_markdown(Some(&binding.name)),
            &binding.range,
        )
    } else if let Some(expr) = shapels_analysis::expression_at(&analysis, offset) {
        (expr.tensor.hover_markdown(None), &expr.range)
    } else {
        return Ok(None);
    };
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(proto::lsp_range(&snapshot.text, range, encoding)),
    }))
}
