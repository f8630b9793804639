//! The `LanguageServer` implementation: one thin method per LSP message,
//! each handing over to the module that owns that part of the protocol.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CodeActionParams, CodeActionResponse, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, Hover, HoverParams, InitializeParams,
    InitializeResult, InitializedParams, InlayHint, InlayHintParams, ServerInfo,
};
use tower_lsp_server::{Client, LanguageServer};

use crate::capabilities::{self, ClientFlags};
use crate::file_status::{self, FileStatus, FileStatusParams};
use crate::session::Session;
use crate::worker::Analyzer;
use crate::{code_actions, hover, inlay_hints, text_sync, workspace};

pub(crate) struct Backend {
    session: Arc<Session>,
}

impl Backend {
    pub(crate) fn new(
        client: Client,
        shutdown_requested: Arc<AtomicBool>,
        analyzer: Analyzer,
    ) -> Self {
        Backend {
            session: Arc::new(Session::new(client, shutdown_requested, analyzer)),
        }
    }

    /// `shapels/fileStatus`, registered in `crate::service`.
    pub(crate) async fn file_status(&self, params: FileStatusParams) -> Result<Option<FileStatus>> {
        file_status::file_status(&self.session, params).await
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let flags = ClientFlags::from_capabilities(&params.capabilities);
        tracing::info!(
            "initialize from {}; position encoding {:?}",
            params
                .client_info
                .as_ref()
                .map_or("an unnamed client", |info| info.name.as_str()),
            flags.encoding
        );
        self.session.set_flags(flags);
        workspace::initialize(&self.session, &params);
        Ok(InitializeResult {
            capabilities: capabilities::server_capabilities(&flags),
            server_info: Some(ServerInfo {
                name: "shapels".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        workspace::initialized(&self.session);
    }

    async fn shutdown(&self) -> Result<()> {
        tracing::info!("shutdown requested");
        self.session.request_shutdown();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        text_sync::did_open(&self.session, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        text_sync::did_change(&self.session, params);
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        text_sync::did_save(&self.session, params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        text_sync::did_close(&self.session, params);
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        inlay_hints::inlay_hint(&self.session, params).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        hover::hover(&self.session, params).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        code_actions::code_action(&self.session, params).await
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        workspace::did_change_configuration(&self.session, params);
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        workspace::did_change_watched_files(&self.session, params);
    }
}
