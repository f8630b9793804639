//! The shapels language server: tensor shapes as inlay hints and hovers, and
//! shape and device problems as diagnostics, over the Language Server Protocol.
//!
//! This is the only crate that knows LSP. It keeps the open documents,
//! converts between byte offsets and the client's positions, and calls
//! `shapels_analysis` on worker threads that reparse each document
//! incrementally and skip versions already replaced by newer ones.
//! [`config`] and [`position`] are public because `shapels check` shares them;
//! [`framing`], the reading of the client's byte stream, for the fuzz target.
//!
//! Logging goes through `tracing` to wherever the binary sends it (stderr):
//! stdout carries the protocol and nothing else.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod config;
pub mod files;
pub mod guarded;
pub mod position;
#[doc(hidden)]
pub mod testing;

mod capabilities;
mod code_actions;
mod dependents;
mod diagnostics;
mod documents;
mod file_status;
pub mod framing;
mod hover;
mod inlay_hints;
mod proto;
mod server;
mod session;
mod snapshot;
mod text_sync;
mod transport;
mod worker;
mod workspace;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::{ClientSocket, LspService, Server};

/// Serves one client over `input`/`output` until it sends `exit` or closes
/// `input`. Returns the process exit code the protocol asks for: 0 when
/// `shutdown` came first, 1 otherwise.
///
/// When `input` is stdin, the caller must not wait for the tokio runtime to
/// wind down after this returns: tokio reads stdin on a blocking thread that
/// cannot be interrupted, so a client that keeps stdin open after `exit`
/// would hold the process forever. Shut the runtime down in the background
/// and exit.
pub async fn serve<I, O>(input: I, output: O) -> i32
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let shutdown_requested = Arc::new(AtomicBool::new(false));
    let (service, socket) = service(shutdown_requested.clone(), worker::Analyzer::Reusing);
    // The framework reads only frames that `framing` checked: its own codec
    // would end the session at the first one it cannot decode.
    transport::serve_through(input, output, |input, output| {
        Server::new(input, output, socket).serve(service)
    })
    .await;
    if shutdown_requested.load(Ordering::SeqCst) {
        tracing::info!("exiting after shutdown");
        0
    } else {
        tracing::warn!("exiting without a shutdown request");
        1
    }
}

/// The service: the standard LSP methods of [`server::Backend`] plus the
/// custom requests shapels adds (`shapels/fileStatus`).
fn service(
    shutdown_requested: Arc<AtomicBool>,
    analyzer: worker::Analyzer,
) -> (LspService<server::Backend>, ClientSocket) {
    LspService::build(|client| server::Backend::new(client, shutdown_requested, analyzer))
        .custom_method(file_status::METHOD, server::Backend::file_status)
        .finish()
}
