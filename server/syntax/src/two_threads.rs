//! A large file parsed in two parts at once: cut before a top-level `def`,
//! `class` or decorator, each part parsed by tree-sitter on its own thread,
//! lowered on the calling one, and joined when both parsed without a
//! syntax error.
//!
//! A one-file `shapels check` spends about two fifths of its instructions
//! in tree-sitter and lowering, on one core of two. Parsing the parts with
//! tree-sitter's included ranges keeps every node at its offset in the
//! whole text, so the parts join without moving a range.
//!
//! Why the join equals the whole parse: Python's tokens and statements run
//! left to right, so the first part, parsed alone, is what the whole parse
//! reads up to the cut. If it parsed without an error, the cut is outside
//! every string and bracket, with no decorator waiting for its definition
//! (a line continuation, which tree-sitter lets a part end in, is ruled
//! out on the text); the line after the cut starts at column 0 with a
//! keyword that opens a new statement (not `else`, `except`, ...), so the
//! whole parse starts a new top-level statement there, as the second part
//! alone does. A part with an error (a cut inside a docstring, say) sends
//! the text to the plain parse, so broken code reads as it always did.

use tree_sitter::{Point, Range, Tree};

use crate::ast::{Module, TextRange};
use crate::{PARSER, ParsedFile, lower, parse, queries};

/// Below this many bytes, a second thread costs about what half a parse
/// saves: a thread start with its parser and a heap the allocator builds
/// from fresh pages, against the half of a cold parse (~1.3 ms for 5 KB
/// on a small host). With the analysis on the main thread, whose heap is
/// warm, a 5 KB model checked 0.2-0.4 ms faster on one thread and a 16 KB
/// one 0.3 ms faster on two.
const MIN_BYTES: usize = 8 * 1024;

/// What one part of the text lowered to.
struct Part {
    module: Module,
    comments: Vec<TextRange>,
}

/// Parses and lowers a whole text like [`parse`], a large one in two parts
/// on two threads (see the module's comment). The result has no
/// tree-sitter tree when the parts were joined (there is none of the whole
/// text), so it is for a one-off analysis, not for `reparse`: given such a
/// file, `reparse` parses the new text from scratch.
pub fn parse_on_two_threads(text: &str) -> ParsedFile {
    if text.len() < MIN_BYTES {
        return parse(text);
    }
    parse_in_two_parts(text)
}

/// [`parse_on_two_threads`] whatever the text's size: for the tests, which
/// compare it with [`parse`] on files of every size.
#[doc(hidden)]
pub fn parse_in_two_parts(text: &str) -> ParsedFile {
    let Some(cut) = cut_point(text) else {
        return parse(text);
    };
    // The syntax tree holds `Rc`s and stays on this thread: the second
    // thread only runs tree-sitter (which keeps its stacks on the heap, so
    // a thread's default stack does), and its tree is lowered here after
    // the first part's.
    let joined = std::thread::scope(|scope| {
        let tail = std::thread::Builder::new()
            .spawn_scoped(scope, || parse_part(text, cut, text.len()))
            .ok();
        let head = lower_part(text, 0, parse_part(text, 0, cut)?);
        let tail = lower_part(text, cut, tail?.join().ok()??);
        Some((head, tail))
    });
    let Some((head, tail)) = joined else {
        return parse(text);
    };
    let mut body = head.module.body;
    body.extend(tail.module.body);
    let mut comments = head.comments;
    comments.extend(tail.comments);
    ParsedFile {
        tree: None,
        module: Module { body },
        source_len: text.len(),
        syntax_errors: Vec::new(),
        comments,
        kept: None,
    }
}

/// Where to cut `text`: the start of the line nearest 4/9 of it that opens
/// a top-level `def`, `class` or the first decorator of one; `None` for a
/// text without such a line.
fn cut_point(text: &str) -> Option<usize> {
    // This thread parses and lowers the first part, then lowers the second
    // (lowering costs about a quarter of a parse); the other thread only
    // parses the second. Both are busy for about as long when the first part
    // holds 4/9 of the text.
    let middle = text.len() / 9 * 4;
    let mut best: Option<usize> = None;
    let mut start: usize = 0;
    let mut previous_line = "";
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        let opens = ["def ", "class ", "async def ", "@"]
            .iter()
            .any(|keyword| line.starts_with(keyword));
        // A definition's decorators belong to it: cut before the first. A
        // line after a backslash continues the one before (`y = x \` then
        // `@ w`, a product): tree-sitter reads a part that ends in a
        // continuation without an error, so its parse cannot tell.
        if opens && start > 0 && !previous_line.starts_with('@') && !continued {
            let nearer = best.is_none_or(|b| start.abs_diff(middle) < b.abs_diff(middle));
            if nearer {
                best = Some(start);
            }
        }
        if !line.trim().is_empty() {
            previous_line = line;
        }
        continued = line.trim_end_matches(['\n', '\r']).ends_with('\\');
        start += line.len();
    }
    best
}

/// Parses `text[start..end]` on this thread, with every node at its offset
/// in the whole text; `None` when that part has a syntax error (or the
/// parser could not be had).
fn parse_part(text: &str, start: usize, end: usize) -> Option<Tree> {
    let range = Range {
        start_byte: start,
        end_byte: end,
        start_point: point_at(text, start),
        end_point: point_at(text, end),
    };
    let tree = PARSER.with(|cell| {
        let mut parser = cell.try_borrow_mut().ok()?;
        let parser = parser.as_mut()?;
        parser.set_included_ranges(&[range]).ok()?;
        let tree = parser.parse(text, None);
        // Back to the whole text for the next parse on this thread; an
        // empty list of ranges cannot be refused.
        let _ = parser.set_included_ranges(&[]);
        if tree.is_none() {
            parser.reset();
        }
        tree
    })?;
    (!tree.root_node().has_error()).then_some(tree)
}

/// Lowers a part's tree, with the comments from `start` on.
fn lower_part(text: &str, start: usize, tree: Tree) -> Part {
    let end = tree.root_node().end_byte();
    Part {
        module: lower::lower_module(tree.root_node(), text),
        comments: queries::comments_in(&tree, text, TextRange::new(start, end)),
    }
}

/// The row and column (in bytes) of `offset` in `text`.
fn point_at(text: &str, offset: usize) -> Point {
    let before = &text.as_bytes()[..offset];
    let row = before.iter().filter(|b| **b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    Point {
        row,
        column: offset - line_start,
    }
}
