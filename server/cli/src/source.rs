//! Reading what `check` and `hints` are asked to analyse: regular files
//! only (a named pipe would block the read, a device would never end it),
//! and never more bytes than shapels analyses plus one.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use shapels_lsp::guarded::{self, MAX_SOURCE_BYTES};

/// What was read.
pub(crate) enum Source {
    /// The text, without a byte order mark.
    Text(String),
    /// Over the size shapels analyses; the message says so.
    TooLarge(String),
}

/// Reads a Python source file as UTF-8. The size is checked on the file's
/// metadata before reading, so a large file is declined without being
/// read; a file that is not UTF-8 is not guessed at: its message says
/// where it went wrong.
pub(crate) fn read_source(path: &Path) -> Result<Source, String> {
    let name = path.display().to_string();
    // `stat`, not `open`: opening a named pipe blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(|err| format!("{name}: {err}"))?;
    regular(&name, &meta)?;
    if let Some(message) = guarded::too_large_len(&name, meta.len()) {
        return Ok(Source::TooLarge(message));
    }
    let file = File::open(path).map_err(|err| format!("{name}: {err}"))?;
    // The path may have been replaced since the `stat`.
    regular(
        &name,
        &file.metadata().map_err(|err| format!("{name}: {err}"))?,
    )?;
    read_limited(&name, file, meta.len())
}

/// Reads a source from stdin, as [`read_source`] does a file.
pub(crate) fn read_stdin() -> Result<Source, String> {
    read_limited("stdin", io::stdin().lock(), 0)
}

/// Refuses anything but a regular file, naming what it is.
fn regular(name: &str, meta: &std::fs::Metadata) -> Result<(), String> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = if meta.is_dir() {
        "a directory"
    } else {
        special_kind(meta)
    };
    Err(format!("{name}: not a regular file ({kind}); skipped"))
}

#[cfg(unix)]
fn special_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::Metadata) -> &'static str {
    "not a file"
}

/// Reads at most one byte more than shapels analyses (a file can grow
/// after its size was read, and stdin has none), then decodes.
fn read_limited(name: &str, reader: impl Read, expected: u64) -> Result<Source, String> {
    let limit = MAX_SOURCE_BYTES as u64 + 1;
    let mut bytes = Vec::with_capacity(expected.min(limit) as usize);
    reader
        .take(limit)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("{name}: {err}"))?;
    if bytes.len() > MAX_SOURCE_BYTES {
        return Ok(Source::TooLarge(format!(
            "{name}: more than the {} MiB shapels analyses; skipped",
            MAX_SOURCE_BYTES / (1024 * 1024)
        )));
    }
    decode(name, bytes).map(Source::Text)
}

/// `bytes` as UTF-8 text without its byte order mark, or where it breaks.
fn decode(name: &str, bytes: Vec<u8>) -> Result<String, String> {
    shapels_syntax::source_text(bytes).map_err(|at| {
        format!(
            "{name}: not UTF-8 (invalid byte on line {}, at byte offset {}); skipped",
            at.line, at.offset
        )
    })
}
