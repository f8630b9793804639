//! The tree-sitter queries in `queries/python`, compiled into the binary,
//! and what the code reads from them.
//!
//! Each query is compiled once per process on first use. A query that fails
//! to compile (which the tests rule out for the pinned grammar) degrades to
//! "no information" rather than a panic.

use std::sync::OnceLock;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Language, Node, Query, QueryCursor, Tree};

use crate::ast::TextRange;

/// `imports.scm`: imports of `torch`, `einops` and their submodules.
pub const IMPORTS: &str = include_str!("../../../queries/python/imports.scm");
/// `errors.scm`: `ERROR` and `MISSING` nodes.
pub const ERRORS: &str = include_str!("../../../queries/python/errors.scm");
/// `comments.scm`: every comment (what `comments_in` walks the tree for).
pub const COMMENTS: &str = include_str!("../../../queries/python/comments.scm");

/// The imported module of a torch-related import (`torch.nn`).
pub const CAPTURE_IMPORT_MODULE: &str = "import.module";
/// The `as` name of a torch-related import (`nn`), when there is one.
pub const CAPTURE_IMPORT_ALIAS: &str = "import.alias";
/// A span the parser could not fit into the grammar.
pub const CAPTURE_ERROR: &str = "error";
/// A token the parser had to assume.
pub const CAPTURE_MISSING: &str = "missing";
/// A comment, from its `#` to the end of its line.
pub const CAPTURE_COMMENT: &str = "comment";

/// Every query file with the capture names the code reads from it, so a
/// test can check that each one exists in its query.
pub const USED_CAPTURES: &[(&str, &str, &[&str])] = &[
    ("imports.scm", IMPORTS, &[CAPTURE_IMPORT_MODULE]),
    ("errors.scm", ERRORS, &[CAPTURE_ERROR, CAPTURE_MISSING]),
    ("comments.scm", COMMENTS, &[CAPTURE_COMMENT]),
];

/// The pinned Python grammar.
pub fn language() -> Language {
    tree_sitter_python::LANGUAGE.into()
}

fn compiled(cell: &'static OnceLock<Option<Query>>, source: &str) -> Option<&'static Query> {
    cell.get_or_init(|| Query::new(&language(), source).ok())
        .as_ref()
}

/// Whether the file imports `torch`, `einops` or a module under them,
/// anywhere in the file. If the query is unavailable the answer is `true`,
/// so that no file is skipped by mistake.
pub(crate) fn imports_torch(tree: &Tree, text: &str) -> bool {
    static QUERY: OnceLock<Option<Query>> = OnceLock::new();
    let Some(query) = compiled(&QUERY, IMPORTS) else {
        return true;
    };
    let Some(module) = query.capture_index_for_name(CAPTURE_IMPORT_MODULE) else {
        return true;
    };
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), text.as_bytes());
    // The `#match?` predicates have already filtered the matches to torch
    // and einops modules.
    while let Some(found) = matches.next() {
        if found
            .captures()
            .iter()
            .any(|capture| capture.index == module)
        {
            return true;
        }
    }
    false
}

/// The byte ranges of the comments that start in `span`, in source order.
///
/// Every comment starts with a `#`, so only the `#`s of the span are looked
/// up in the tree (one descent each: is the smallest node there a comment
/// starting at it, not a string?), not the `comments.scm` query it matches
/// (the tests compare the two) nor a walk of every node: the query cursor
/// took a sixth of the parse of a large file, a walk of the tree a sixth
/// of lowering a file with few comments.
pub(crate) fn comments_in(tree: &Tree, text: &str, span: TextRange) -> Vec<TextRange> {
    let comment = tree.language().id_for_node_kind("comment", true);
    let root = tree.root_node();
    let Some(inside) = text.get(span.start..span.end.min(text.len())) else {
        return Vec::new();
    };
    let mut ranges: Vec<TextRange> = Vec::new();
    for (offset, _) in inside.match_indices('#') {
        let at = span.start + offset;
        // A `#` inside a comment already listed is part of it.
        if ranges.last().is_some_and(|last| at < last.end) {
            continue;
        }
        let Some(node) = root.descendant_for_byte_range(at, at + 1) else {
            continue;
        };
        if node.kind_id() != comment || node.start_byte() != at {
            continue;
        }
        let range = node.byte_range();
        // The grammar's comment token runs to the `\n`, so in a CRLF file
        // it would end with the `\r`.
        let end = if text.as_bytes().get(range.end.wrapping_sub(1)) == Some(&b'\r') {
            range.end - 1
        } else {
            range.end
        };
        ranges.push(TextRange::new(range.start, end));
    }
    ranges
}

/// The syntax errors of a file as (range, message), in source order. An
/// error inside another one is not reported again.
pub(crate) fn syntax_errors(tree: &Tree, text: &str) -> Vec<(TextRange, String)> {
    static QUERY: OnceLock<Option<Query>> = OnceLock::new();
    let root = tree.root_node();
    if !root.has_error() {
        return Vec::new();
    }
    let Some(query) = compiled(&QUERY, ERRORS) else {
        return Vec::new();
    };
    let missing = query.capture_index_for_name(CAPTURE_MISSING);
    let mut found: Vec<(TextRange, String)> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut captures = cursor.captures(query, root, text.as_bytes());
    while let Some((matched, index)) = captures.next() {
        let capture = matched.captures()[*index];
        let message = if Some(capture.index) == missing {
            missing_message(capture.node)
        } else {
            "syntax error".to_string()
        };
        found.push((capture.node.byte_range().into(), message));
    }
    // Outer errors first, so that the ones nested in them can be dropped:
    // once sorted by start, a range is inside an earlier one exactly when it
    // ends before the furthest end seen so far.
    found.sort_by_key(|(range, _)| (range.start, std::cmp::Reverse(range.end)));
    let mut errors: Vec<(TextRange, String)> = Vec::new();
    let mut covered_until: Option<usize> = None;
    for (range, message) in found {
        if covered_until.is_some_and(|end| range.end <= end) {
            continue;
        }
        covered_until = Some(covered_until.map_or(range.end, |end| end.max(range.end)));
        errors.push((range, message));
    }
    errors
}

/// "missing `)`" for a token, "missing identifier" for a named node.
fn missing_message(node: Node<'_>) -> String {
    let kind = node.kind();
    if node.is_named() {
        format!("missing {}", kind.replace('_', " "))
    } else if kind.starts_with('_') || kind.is_empty() {
        // Hidden tokens of the grammar, such as the end of a line.
        format!("missing {}", kind.trim_start_matches('_').replace('_', " "))
    } else {
        format!("missing `{kind}`")
    }
}
