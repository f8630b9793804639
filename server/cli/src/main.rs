//! `shapels`: tensor shapes inline for PyTorch code, as a language server
//! (`shapels lsp`) and on the command line (`shapels check`, `shapels hints`).
//!
//! Exit codes: 0 when all is well, 1 when `check` found an error
//! diagnostic, 2 when shapels could not do what was asked (bad usage, a file
//! it could not read, a broken configuration file).

mod args;
mod check;
mod hints;
mod logging;
mod output;
mod settings;
mod source;
mod summary;
mod walk;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

/// The analysis makes and drops many small values (dims, shapes, scopes);
/// mimalloc serves them faster than the system allocator.
#[global_allocator]
static ALLOCATOR: shapels_syntax::Mimalloc = shapels_syntax::Mimalloc;

#[allow(unsafe_code)]
fn main() -> ExitCode {
    // SAFETY: the first thing the process does; no tree-sitter object
    // exists yet and no other thread runs.
    unsafe { shapels_syntax::allocate_with_mimalloc() };
    let cli = Cli::parse();
    let default_level = match cli.command {
        Command::Lsp => "info",
        Command::Check(_) | Command::Hints(_) | Command::Summary(_) => "warn",
    };
    logging::init(cli.log_level.as_deref(), default_level);
    match cli.command {
        Command::Lsp => lsp(),
        Command::Check(args) => check::run(&args),
        Command::Hints(args) => hints::run(&args),
        Command::Summary(args) => summary::run(&args),
    }
}

/// Serves LSP on stdio, then exits the process without waiting for tokio's
/// stdin reader thread (see `shapels_lsp::serve`).
fn lsp() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!("cannot start the async runtime: {err}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(shapels_lsp::serve(tokio::io::stdin(), tokio::io::stdout()));
    runtime.shutdown_background();
    std::process::exit(code)
}
