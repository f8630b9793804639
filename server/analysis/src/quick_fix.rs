//! Judging a quick fix: applying its edits to the text, and deciding from
//! the analysis of the edited text whether it did what it promised.
//!
//! The rules propose fixes (`Diagnostic::fixes`) from what one analysis
//! saw; a fix is worth offering only when the edited text no longer has
//! the problem and has no new one. The language server (and the tests)
//! analyse the edited text and ask [`resolves`].

use crate::report::{Code, Diagnostic, FileAnalysis, Fix, Severity, TextRange};

/// `text` with the edits of `fix` applied; `None` when an edit is out of
/// bounds, splits a character, or overlaps another.
pub fn apply(text: &str, fix: &Fix) -> Option<String> {
    let mut edits: Vec<&(TextRange, String)> = fix.edits.iter().collect();
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (range, replacement) in edits {
        if range.start < at
            || range.start > range.end
            || !text.is_char_boundary(range.start)
            || !text.is_char_boundary(range.end)
        {
            return None;
        }
        out.push_str(text.get(at..range.start)?);
        out.push_str(replacement);
        at = range.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// Where `offset` of the text before `fix` is in the text after it.
fn moved(fix: &Fix, offset: usize) -> usize {
    let mut shift: isize = 0;
    for (range, replacement) in &fix.edits {
        if range.end <= offset {
            shift += replacement.len() as isize - (range.end - range.start) as isize;
        }
    }
    offset.saturating_add_signed(shift)
}

/// Whether `fix`, proposed for `diagnostic` of `before` (the analysis of
/// the original text), did its work in `after` (the analysis of the text
/// with the fix applied): no diagnostic of the same code is left where it
/// was, and no error or syntax error appears that was not there.
pub fn resolves(
    diagnostic: &Diagnostic,
    fix: &Fix,
    before: &FileAnalysis,
    after: &FileAnalysis,
) -> bool {
    let place = moved(fix, diagnostic.range.start)..moved(fix, diagnostic.range.end);
    // The line the diagnostic was on, after the edit: a report of the same
    // code there is the same problem, whatever its message now says.
    let still_there = after.diagnostics.iter().any(|d| {
        d.code == diagnostic.code && d.range.start <= place.end && place.start <= d.range.end
    });
    if still_there {
        return false;
    }
    let counts = |analysis: &FileAnalysis, code: Code| {
        analysis
            .diagnostics
            .iter()
            .filter(|d| d.code == code && is_breaking(d))
            .count()
    };
    after
        .diagnostics
        .iter()
        .filter(|d| is_breaking(d))
        .all(|d| counts(after, d.code) <= counts(before, d.code))
}

/// An error, or a syntax error (reported as information, but a fix that
/// makes one broke the code).
fn is_breaking(d: &Diagnostic) -> bool {
    d.severity == Severity::Error || d.code == Code::SyntaxError
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(edits: &[(std::ops::Range<usize>, &str)]) -> Fix {
        Fix {
            title: String::new(),
            edits: edits
                .iter()
                .map(|(r, s)| (r.clone().into(), s.to_string()))
                .collect(),
        }
    }

    #[test]
    fn edits_apply_in_order_of_place() {
        let text = "logits, targets";
        let f = fix(&[(15..15, ".view(-1)"), (6..6, ".view(-1, 9)")]);
        assert_eq!(
            apply(text, &f).as_deref(),
            Some("logits.view(-1, 9), targets.view(-1)")
        );
        assert_eq!(moved(&f, 8), 8 + 12);
    }

    #[test]
    fn bad_edits_are_refused() {
        assert_eq!(apply("abc", &fix(&[(1..5, "")])), None);
        assert_eq!(apply("abc", &fix(&[(0..2, ""), (1..3, "")])), None);
        assert_eq!(apply("é", &fix(&[(1..1, "x")])), None);
    }
}
