//! What the client can do, what the server offers, and the position encoding they agree on.

use tower_lsp_server::ls_types::{
    ClientCapabilities, CodeActionKind, CodeActionOptions, CodeActionProviderCapability,
    HoverProviderCapability, InlayHintOptions, InlayHintServerCapabilities, OneOf,
    PositionEncodingKind, SaveOptions, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
};

use crate::position::PositionEncoding;

/// The client capabilities the server acts on, read once at `initialize`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClientFlags {
    pub(crate) encoding: PositionEncoding,
    /// `workspace/configuration` can be asked.
    pub(crate) configuration: bool,
    /// `workspace/didChangeConfiguration` must be registered dynamically to be sent.
    pub(crate) dynamic_configuration: bool,
    /// `workspace/didChangeWatchedFiles` can be registered dynamically.
    pub(crate) dynamic_watched_files: bool,
    /// `workspace/inlayHint/refresh` can be sent.
    pub(crate) inlay_hint_refresh: bool,
    /// Diagnostics may carry `relatedInformation`.
    pub(crate) related_information: bool,
    /// A `WorkspaceEdit` may name the document's version (`documentChanges`).
    pub(crate) document_changes: bool,
}

impl ClientFlags {
    pub(crate) fn from_capabilities(caps: &ClientCapabilities) -> Self {
        let workspace = caps.workspace.as_ref();
        ClientFlags {
            encoding: negotiate_encoding(caps),
            configuration: workspace.and_then(|w| w.configuration).unwrap_or(false),
            dynamic_configuration: workspace
                .and_then(|w| w.did_change_configuration.as_ref())
                .and_then(|c| c.dynamic_registration)
                .unwrap_or(false),
            dynamic_watched_files: workspace
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|c| c.dynamic_registration)
                .unwrap_or(false),
            inlay_hint_refresh: workspace
                .and_then(|w| w.inlay_hint.as_ref())
                .and_then(|c| c.refresh_support)
                .unwrap_or(false),
            related_information: caps
                .text_document
                .as_ref()
                .and_then(|t| t.publish_diagnostics.as_ref())
                .and_then(|p| p.related_information)
                .unwrap_or(false),
            document_changes: workspace
                .and_then(|w| w.workspace_edit.as_ref())
                .and_then(|e| e.document_changes)
                .unwrap_or(false),
        }
    }
}

/// UTF-8 when the client offers it (no conversion cost, and no ambiguity for
/// the client either), otherwise UTF-16, which every client must support.
fn negotiate_encoding(caps: &ClientCapabilities) -> PositionEncoding {
    let offered = caps
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_deref())
        .unwrap_or_default();
    if offered.contains(&PositionEncodingKind::UTF8) {
        PositionEncoding::Utf8
    } else {
        PositionEncoding::Utf16
    }
}

pub(crate) fn server_capabilities(flags: &ClientFlags) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match flags.encoding {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            // UTF-32 is never negotiated; it exists for the CLI's columns.
            PositionEncoding::Utf16 | PositionEncoding::Utf32 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                will_save: None,
                will_save_wait_until: None,
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            work_done_progress_options: Default::default(),
            resolve_provider: Some(false),
        })),
        inlay_hint_provider: Some(OneOf::Right(InlayHintServerCapabilities::Options(
            InlayHintOptions {
                work_done_progress_options: Default::default(),
                resolve_provider: Some(false),
            },
        ))),
        // Custom requests, for clients that know them (editors/vscode).
        experimental: Some(serde_json::json!({"fileStatusProvider": true})),
        ..ServerCapabilities::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(value: serde_json::Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn utf8_when_offered_anywhere_in_the_list() {
        let c = caps(json!({"general": {"positionEncodings": ["utf-16", "utf-8"]}}));
        assert_eq!(
            ClientFlags::from_capabilities(&c).encoding,
            PositionEncoding::Utf8
        );
    }

    #[test]
    fn utf16_otherwise() {
        for c in [
            caps(json!({})),
            caps(json!({"general": {"positionEncodings": ["utf-32", "utf-16"]}})),
        ] {
            let flags = ClientFlags::from_capabilities(&c);
            assert_eq!(flags.encoding, PositionEncoding::Utf16);
            assert_eq!(
                server_capabilities(&flags).position_encoding,
                Some(PositionEncodingKind::UTF16)
            );
        }
    }

    #[test]
    fn workspace_flags() {
        let c = caps(json!({
            "workspace": {"configuration": true, "inlayHint": {"refreshSupport": true},
                          "didChangeConfiguration": {"dynamicRegistration": true}},
            "textDocument": {"publishDiagnostics": {"relatedInformation": true}}
        }));
        let flags = ClientFlags::from_capabilities(&c);
        assert!(flags.configuration && flags.inlay_hint_refresh && flags.dynamic_configuration);
        assert!(flags.related_information);
        assert!(!flags.dynamic_watched_files);
    }
}
