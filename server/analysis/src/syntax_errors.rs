//! Syntax errors as diagnostics. Where tree-sitter could not parse the text
//! (an ERROR node) or had to assume a token (a MISSING one), the analysis saw
//! less than the file holds, and shapes after that point may be missing:
//! the file says so, in the editor and in `shapels check` alike.

use shapels_syntax::ParsedFile;

use crate::code::Code;
use crate::report::{Diagnostic, FileAnalysis, TextRange};

/// Adds a `syntax-error` diagnostic for each syntax error of `parsed`, the
/// parse `analysis` was made from, keeping the diagnostics in source order.
/// They are information, not errors: the code may well run once finished,
/// and an error exit is for what torch would raise.
pub fn add_syntax_errors(analysis: &mut FileAnalysis, parsed: &ParsedFile) {
    if parsed.syntax_errors.is_empty() {
        return;
    }
    analysis.diagnostics.extend(
        parsed
            .syntax_errors
            .iter()
            .map(|(range, message)| report(*range, Code::SyntaxError, message)),
    );
    analysis
        .diagnostics
        .sort_by_key(|d| (d.range.start, d.range.end));
}

/// One diagnostic; `message` is the syntax layer's ("syntax error",
/// "missing `)`").
fn report(range: TextRange, code: Code, message: &str) -> Diagnostic {
    Diagnostic {
        range,
        severity: code.severity(),
        code,
        message: format!("{message}; shapes after it may be incomplete"),
        related: Vec::new(),
        fixes: Vec::new(),
    }
}
