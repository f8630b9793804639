//! `textDocument/inlayHint`, and asking the client to refresh its hints.

use std::sync::Arc;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    InlayHint, InlayHintKind, InlayHintLabel, InlayHintParams, InlayHintTooltip,
};

use crate::proto;
use crate::session::Session;

/// The hints of the bindings in the requested range: `: [8, 128]` right
/// after each name, with dtype, device and origin as the tooltip.
pub(crate) async fn inlay_hint(
    session: &Session,
    params: InlayHintParams,
) -> Result<Option<Vec<InlayHint>>> {
    let uri = params.text_document.uri;
    // The snapshot is taken before the first `.await`, so it is the text the
    // client had when it sent the request, whatever arrives meanwhile.
    let Some(snapshot) = session.snapshot(&uri) else {
        return Ok(None);
    };
    let settings = session.settings_for(&uri);
    if !settings.inlay_hints_enable {
        return Ok(Some(Vec::new()));
    }
    let encoding = session.flags().encoding;
    // The document changed before the analysis began: the answer would be
    // about a text the client no longer has (see `snapshot::Cancelled`).
    let Some(analysis) = snapshot.analysis(session).await? else {
        return Ok(None);
    };
    let range = proto::offsets(&snapshot.text, params.range, encoding);
    let options = shapels_analysis::HintOptions {
        detail: settings.inlay_hints_detail,
        mode: settings.inlay_hints_show,
        hide_repeats: settings.inlay_hints_hide_repeats,
        max_length: settings.inlay_hints_max_length,
    };
    let hints = shapels_analysis::inlay_hints_with(&analysis, Some(range), &options);
    snapshot.mark_hints_served();
    Ok(Some(
        hints
            .into_iter()
            .map(|hint| InlayHint {
                position: proto::lsp_position(&snapshot.text, hint.offset, encoding),
                label: InlayHintLabel::String(hint.label),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: Some(InlayHintTooltip::String(hint.tooltip)),
                // The label starts with `: `, so it reads as an annotation
                // glued to the name, like a type hint.
                padding_left: Some(false),
                padding_right: None,
                data: None,
            })
            .collect(),
    ))
}

/// Sends `workspace/inlayHint/refresh` when the client supports it. The
/// request waits for the client's answer, so it goes out from its own task.
pub(crate) fn request_refresh(session: &Arc<Session>) {
    if !session.flags().inlay_hint_refresh {
        return;
    }
    let client = session.client.clone();
    tokio::spawn(async move {
        if let Err(err) = client.inlay_hint_refresh().await {
            tracing::debug!("workspace/inlayHint/refresh failed: {err}");
        }
    });
}
