//! The three report formats of `shapels check`: text, JSON, GitHub annotations.
//!
//! Lines and columns are 1-based and columns count Unicode code points, in
//! every format; end positions point just past the range, as in ruff's JSON.

use std::collections::HashSet;
use std::io::{self, Write};

use ropey::Rope;
use serde::Serialize;
use serde_json::Value;
use shapels_analysis::{Code, DimView, Origin, Severity};
use shapels_lsp::position::{self, PositionEncoding};

use crate::args::Format;
use crate::check::CheckedFile;

/// Writes the report to stdout. `complete` is false when some paths could
/// not be checked, which the text summary must not hide.
pub(crate) fn write(format: Format, files: &[CheckedFile], complete: bool) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match format {
        Format::Text => write_text(&mut out, files, complete)?,
        Format::Json => write_json(&mut out, files)?,
        Format::Github => write_github(&mut out, files)?,
    }
    out.flush()
}

/// A 1-based line and code-point column.
#[derive(Debug, Clone, Copy)]
struct Location {
    line: u32,
    column: u32,
}

fn locate(text: &Rope, offset: usize) -> Location {
    let pos = position::offset_to_position(text, offset, PositionEncoding::Utf32);
    Location {
        line: pos.line + 1,
        column: pos.col + 1,
    }
}

/// `path` with forward slashes on every platform, so reports are portable.
/// A name that is not UTF-8 keeps its other bytes as `\xNN` (and `check`
/// warns that it does), rather than losing them to U+FFFD.
fn display_path(file: &CheckedFile) -> String {
    lossless(&file.path)
}

#[cfg(unix)]
fn lossless(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(&chunk.valid().replace('\\', "/"));
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02X}"));
        }
    }
    out
}

#[cfg(not(unix))]
fn lossless(path: &std::path::Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

fn write_text(out: &mut impl Write, files: &[CheckedFile], complete: bool) -> io::Result<()> {
    let mut counts = [0usize; 4];
    for file in files {
        let path = display_path(file);
        let text = Rope::from_str(&file.source);
        for d in sorted_diagnostics(file) {
            counts[match d.severity {
                Severity::Error => 0,
                Severity::Warning => 1,
                Severity::Information => 2,
                Severity::Hint => 3,
            }] += 1;
            let at = locate(&text, d.range.start);
            let message = d.message.replace('\n', "\n    ");
            writeln!(
                out,
                "{path}:{}:{}: {}[{}] {message}",
                at.line,
                at.column,
                d.severity.as_str(),
                d.code
            )?;
            for related in &d.related {
                let (place, at) = match &related.file {
                    None => (path.to_string(), locate(&text, related.range.start)),
                    Some(file) => (
                        file.path.display().to_string(),
                        locate(&Rope::from_str(&file.text), related.range.start),
                    ),
                };
                writeln!(
                    out,
                    "    {place}:{}:{}: note: {}",
                    at.line,
                    at.column,
                    related.message.replace('\n', " ")
                )?;
            }
        }
    }
    let [errors, warnings, infos, hints] = counts;
    let checked = format!(
        "{} {}{}",
        files.len(),
        plural(files.len(), "file"),
        syntax_errors(files)
    );
    if !complete {
        writeln!(
            out,
            "Found {} in {checked}; some paths could not be checked (see above).",
            diagnostics(counts)
        )?;
    } else if errors + warnings + infos + hints == 0 {
        writeln!(out, "All checks passed! ({checked})")?;
    } else {
        writeln!(out, "Found {} in {checked}.", diagnostics(counts))?;
    }
    Ok(())
}

/// ` (3 syntax errors in 2 files: ...)`, or nothing when every file parsed:
/// the shapes of a file that did not are incomplete, which the summary
/// must not hide among other notes.
fn syntax_errors(files: &[CheckedFile]) -> String {
    let per_file: Vec<usize> = files
        .iter()
        .map(|file| {
            file.analysis
                .diagnostics
                .iter()
                .filter(|d| d.code == Code::SyntaxError)
                .count()
        })
        .filter(|&n| n > 0)
        .collect();
    let total: usize = per_file.iter().sum();
    if total == 0 {
        return String::new();
    }
    format!(
        " ({total} syntax {} in {} {}: the shapes after them may be incomplete)",
        plural(total, "error"),
        per_file.len(),
        plural(per_file.len(), "file")
    )
}

/// `2 errors, 1 warning`, or `no problems`.
fn diagnostics([errors, warnings, infos, hints]: [usize; 4]) -> String {
    let mut parts = vec![];
    for (n, what) in [
        (errors, "error"),
        (warnings, "warning"),
        (infos, "note"),
        (hints, "hint"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {}", plural(n, what)));
        }
    }
    if parts.is_empty() {
        "no problems".to_string()
    } else {
        parts.join(", ")
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

fn sorted_diagnostics(file: &CheckedFile) -> Vec<&shapels_analysis::Diagnostic> {
    let mut diagnostics: Vec<_> = file.analysis.diagnostics.iter().collect();
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end));
    diagnostics
}

#[derive(Serialize)]
struct JsonReport {
    version: u32,
    files: Vec<JsonFile>,
}

#[derive(Serialize)]
struct JsonFile {
    path: String,
    bindings: Vec<JsonBinding>,
    diagnostics: Vec<JsonDiagnostic>,
}

#[derive(Serialize)]
struct JsonBinding {
    line: u32,
    column: u32,
    name: String,
    /// `null` when even the rank is unknown.
    shape: Option<Vec<Value>>,
    dtype: Option<String>,
    device: Option<String>,
    origin: &'static str,
}

#[derive(Serialize)]
struct JsonDiagnostic {
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    severity: &'static str,
    code: &'static str,
    message: String,
}

/// One dim of the contract: an integer where known, the Python expression
/// where symbolic, `"?"` where unknown.
fn json_dim(dim: &DimView) -> Value {
    match dim {
        DimView::Known(n) => Value::from(*n),
        DimView::Symbol(s) | DimView::Variadic(s) => Value::from(s.as_str()),
        DimView::Unknown => Value::from("?"),
    }
}

fn json_file(file: &CheckedFile) -> JsonFile {
    let text = Rope::from_str(&file.source);
    let mut seen = HashSet::new();
    let bindings = file
        .analysis
        .bindings
        .iter()
        .filter_map(|b| {
            let at = locate(&text, b.range.start);
            // One entry per (line, name), the first one winning, as the
            // contract says: `x = f(x); x = g(x)` on one line binds `x` twice.
            if !seen.insert((at.line, b.name.as_str())) {
                return None;
            }
            Some(JsonBinding {
                line: at.line,
                column: at.column,
                name: b.name.clone(),
                shape: b
                    .tensor
                    .shape
                    .as_ref()
                    .map(|dims| dims.iter().map(json_dim).collect()),
                dtype: b.tensor.dtype.clone(),
                device: b.tensor.device.clone(),
                origin: match b.tensor.origin {
                    Origin::Fake => "fake",
                    Origin::Real => "real",
                },
            })
        })
        .collect();
    let diagnostics = sorted_diagnostics(file)
        .into_iter()
        .map(|d| {
            let start = locate(&text, d.range.start);
            let end = locate(&text, d.range.end);
            JsonDiagnostic {
                line: start.line,
                column: start.column,
                end_line: end.line,
                end_column: end.column,
                severity: d.severity.as_str(),
                code: d.code.name(),
                message: d.message.clone(),
            }
        })
        .collect();
    JsonFile {
        path: display_path(file),
        bindings,
        diagnostics,
    }
}

fn write_json(out: &mut impl Write, files: &[CheckedFile]) -> io::Result<()> {
    let report = JsonReport {
        version: 1,
        files: files.iter().map(json_file).collect(),
    };
    serde_json::to_writer(&mut *out, &report)?;
    writeln!(out)
}

/// Workflow commands: `::error file=…,line=…,col=…,title=shapels(code)::message`.
fn write_github(out: &mut impl Write, files: &[CheckedFile]) -> io::Result<()> {
    for file in files {
        let path = display_path(file);
        let text = Rope::from_str(&file.source);
        for d in sorted_diagnostics(file) {
            let at = locate(&text, d.range.start);
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Information | Severity::Hint => "notice",
            };
            writeln!(
                out,
                "::{level} file={},line={},col={},title={}::{}",
                escape_property(&path),
                at.line,
                at.column,
                escape_property(&format!("shapels({})", d.code)),
                escape_data(&d.message)
            )?;
        }
    }
    Ok(())
}

/// The escaping GitHub's runner applies to a command's message.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// The escaping of a command's property values, which also may not hold `:` or `,`.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escaping() {
        assert_eq!(escape_data("50%\nnext"), "50%25%0Anext");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn columns_count_code_points() {
        let text = Rope::from_str("s = \"🎉\"; x = 1\r\ny");
        let loc = locate(&text, "s = \"🎉\"; ".len());
        assert_eq!((loc.line, loc.column), (1, 10));
        let loc = locate(&text, text.len_bytes() - 1);
        assert_eq!((loc.line, loc.column), (2, 1));
    }
}
