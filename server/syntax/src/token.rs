//! Reparsing an edit inside one name or number without running the parser:
//! the commonest keystroke (a letter typed into an identifier, a digit into
//! a number) changes one token's text and nothing of the tree's shape.
//!
//! rust-analyzer does the same (`reparse_token`). Here the edit qualifies
//! when the old file parsed without errors, the edit lies inside one
//! `identifier`, `integer` or `float` leaf (not at its first byte, so that
//! no neighbour can absorb it), and the leaf's new text is a token of the
//! same kind with the same extent: a plain ASCII name that is no keyword
//! (nor one of the grammar's soft ones), plain digits, or digits with one
//! dot. The new syntax tree is then the old one moved (`shift::Move::Token`)
//! with that leaf's text read again, and tree-sitter's tree is the old one
//! with the edit applied (`Tree::edit`): its shape is the new text's, and
//! the next incremental parse takes it as an edited tree, which is what it
//! is. Anything else goes through the parser.

use std::cell::Cell;

use tree_sitter::Tree;

use crate::ast::{Module, TextRange};
use crate::shift::{self, Move, TokenEdit};
use crate::{ByteEdit, Kept, ParsedFile};

/// Words tree-sitter-python reads as something other than a plain name
/// somewhere: Python's keywords and soft keywords, and Python 2's `print`
/// and `exec` statements.
const NOT_PLAIN: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "case", "class",
    "continue", "def", "del", "elif", "else", "except", "exec", "finally", "for", "from", "global",
    "if", "import", "in", "is", "lambda", "match", "nonlocal", "not", "or", "pass", "print",
    "raise", "return", "try", "type", "while", "with", "yield", "_",
];

/// The kinds of token an edit may stay inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Name,
    Integer,
    Float,
}

impl Token {
    fn of_kind(kind: &str) -> Option<Token> {
        match kind {
            "identifier" => Some(Token::Name),
            "integer" => Some(Token::Integer),
            "float" => Some(Token::Float),
            _ => None,
        }
    }

    /// Whether `text` is, on its own, exactly one token of this kind as
    /// the grammar reads it, in a form this module knows.
    fn reads(self, text: &str) -> bool {
        let bytes = text.as_bytes();
        let digits = |b: &[u8]| !b.is_empty() && b.iter().all(u8::is_ascii_digit);
        match self {
            Token::Name => {
                bytes
                    .first()
                    .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
                    && bytes
                        .iter()
                        .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    && !NOT_PLAIN.contains(&text)
            }
            // A leading zero makes another literal (`01` is an error).
            Token::Integer => digits(bytes) && (bytes[0] != b'0' || bytes.len() == 1),
            Token::Float => match text.split_once('.') {
                Some((whole, fraction)) => {
                    (whole.is_empty() || digits(whole.as_bytes()))
                        && (fraction.is_empty() || digits(fraction.as_bytes()))
                        && !(whole.is_empty() && fraction.is_empty())
                }
                None => false,
            },
        }
    }

    /// Whether the byte after a token of this kind could join it (or make
    /// it a string's prefix).
    fn joined_by(self, b: u8) -> bool {
        let word = b.is_ascii_alphanumeric() || b == b'_' || !b.is_ascii();
        match self {
            Token::Name => word || b == b'"' || b == b'\'',
            Token::Integer | Token::Float => word || b == b'.',
        }
    }
}

/// The parse of `new_text` when `edit` (already applied to `edited`, the
/// old tree) stays inside one token of `old` and keeps its kind; `None`
/// when it does not, and the parser must run.
pub(crate) fn reparse(
    old: &ParsedFile,
    old_tree: &Tree,
    edited: &Tree,
    new_text: &str,
    edit: ByteEdit,
) -> Option<ParsedFile> {
    if !old.syntax_errors.is_empty() || old_tree.root_node().has_error() || edit.start_byte == 0 {
        return None;
    }
    // The leaf holding the byte before the edit: the edit must not reach
    // past its end.
    let leaf = old_tree
        .root_node()
        .descendant_for_byte_range(edit.start_byte - 1, edit.start_byte)?;
    let kind = Token::of_kind(leaf.kind())?;
    if leaf.child_count() != 0
        || leaf.start_byte() >= edit.start_byte
        || edit.old_end_byte > leaf.end_byte()
    {
        return None;
    }
    let delta = edit.new_end_byte as isize - edit.old_end_byte as isize;
    let token = TextRange::new(
        leaf.start_byte(),
        leaf.end_byte().checked_add_signed(delta)?,
    );
    let bytes = new_text.as_bytes();
    let text = new_text.get(token.range())?;
    // What lies before the token did not change, nor did its first byte:
    // it starts where it did. It must end where the edit leaves it.
    if !kind.reads(text) || bytes.get(token.end).is_some_and(|b| kind.joined_by(*b)) {
        return None;
    }
    let body = &old.module.body;
    let at = body.partition_point(|s| s.range.end < leaf.start_byte());
    let stmt = body.get(at)?;
    if !(stmt.range.start <= leaf.start_byte() && leaf.end_byte() <= stmt.range.end) {
        return None;
    }
    let read = Cell::new(0);
    let moved = shift::stmt(
        stmt,
        Move::Token(TokenEdit {
            edit,
            text: new_text,
            token,
            read: &read,
        }),
    );
    if read.get() != 1 {
        return None;
    }
    let module = Module {
        body: body[..at]
            .iter()
            .cloned()
            .chain(std::iter::once(moved))
            .chain(
                body[at + 1..]
                    .iter()
                    .map(|s| shift::stmt(s, Move::By(delta))),
            )
            .collect(),
    };
    // Comments lie outside the token: those after it move with the text.
    let comments = old
        .comments
        .iter()
        .map(|c| match c.start >= edit.old_end_byte {
            true => TextRange::new(
                c.start.saturating_add_signed(delta),
                c.end.saturating_add_signed(delta),
            ),
            false => *c,
        })
        .collect();
    Some(ParsedFile {
        tree: Some(edited.clone()),
        module,
        source_len: new_text.len(),
        syntax_errors: Vec::new(),
        comments,
        kept: Some(Kept {
            before: at,
            after: body.len() - at - 1,
        }),
    })
}
