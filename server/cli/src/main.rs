//! `shapels`: tensor shapes inline for PyTorch code, as a language server
//! (`shapels lsp`) and on the command line (`shapels check`, `shapels hints`).
//!
//! Exit codes: 0 when all is well, 1 when `check` found an error
//! diagnostic, 2 when shapels could not do what was asked (bad usage, a file
//! it could not read, a broken configuration file).

mod args;
mod check;
mod heap_pages;
mod hints;
mod logging;
mod main_stack;
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
    let arena = heap_pages::HeapArena::on_huge_pages();
    let cli = Cli::parse();
    if matches!(cli.command, Command::Lsp) {
        arena.back_to_small_pages();
    }
    let default_level = match cli.command {
        Command::Lsp => "info",
        Command::Check(_) | Command::Hints(_) | Command::Summary(_) => "warn",
    };
    logging::init(cli.log_level.as_deref(), default_level);
    match cli.command {
        Command::Lsp => lsp(),
        Command::Check(args) => end_process(check::run(&args)),
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

/// Ends a one-shot command's process with `code` once its output is out,
/// without the work of an orderly exit: the allocator's collection of every
/// thread's heap and its return of the pages to the system (`mi_process_done`),
/// which the kernel does anyway when the process ends. For `shapels check`
/// of one file from a pre-commit hook or an on-save command that was about
/// a twentieth of the run.
fn end_process(code: u8) -> ExitCode {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(unix)]
    #[allow(unsafe_code)]
    // SAFETY: `_exit` only ends the process. Its output is flushed above;
    // nothing else it made outlives it (reports go to stdout, logs to
    // stderr, no file is written).
    unsafe {
        libc::_exit(i32::from(code))
    }
    #[cfg(not(unix))]
    ExitCode::from(code)
}
