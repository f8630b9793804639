//! Python source text to a small typed syntax tree, through tree-sitter.
//!
//! This layer knows nothing of tensors or of LSP: it parses (and reparses
//! incrementally after edits), lowers tree-sitter's concrete tree into the
//! owned `ast`, and owns the tree-sitter queries in `queries/python`.
//!
//! Nothing here panics on any input text: broken code lowers to what can be
//! understood plus `Other` / `Unknown` nodes, and its syntax errors are
//! listed in `ParsedFile::syntax_errors`.

mod allocator;
pub mod ast;
mod edit;
mod lower;
mod moved;
pub mod queries;
mod shift;
mod source_text;
mod token;
mod two_threads;

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

pub use allocator::{Mimalloc, allocate_with_mimalloc, has_arena, reserve_arena};
pub use edit::{ByteEdit, edit_between};
pub use lower::MAX_DEPTH;
pub use moved::only_moved;
pub use source_text::{NotUtf8, source_text};
pub use two_threads::{parse_in_two_parts, parse_on_two_threads};

use ast::{Module, TextRange};

/// One parse of one text: tree-sitter's tree, the lowered `ast`, and the
/// syntax errors. Keep it with the text it was parsed from, to `reparse`
/// after an edit.
#[derive(Debug, Clone)]
pub struct ParsedFile {
    /// tree-sitter's concrete tree. `None` only if the parser gave up, which
    /// it does not do without a timeout or cancellation; `module` is then empty.
    pub tree: Option<Tree>,
    pub module: Module,
    /// The length in bytes of the parsed text.
    pub source_len: usize,
    /// Syntax errors as (byte range, message), in source order: "syntax
    /// error" for a span the parser skipped, "missing `)`" for a token it
    /// had to assume (an empty range where the token belongs).
    pub syntax_errors: Vec<(TextRange, String)>,
    /// Every comment's range, from its `#` to the end of its line, in
    /// source order (shape comments such as `# (B, T, C)` live there).
    pub comments: Vec<TextRange>,
    /// How many top-level statements at either end an incremental reparse
    /// took over from the previous parse; `None` after a fresh lowering.
    kept: Option<Kept>,
}

impl ParsedFile {
    /// Everything observable about the parse, as text: the lowered tree
    /// with its ranges, the syntax errors, the comments, the text's length
    /// and tree-sitter's own tree. For tests that hold an incremental
    /// parse to a fresh one.
    pub fn observable(&self) -> String {
        format!(
            "{:?}\n{:?}\n{:?}\n{}\n{}",
            self.module,
            self.syntax_errors,
            self.comments,
            self.source_len,
            self.tree
                .as_ref()
                .map(|tree| tree.root_node().to_sexp())
                .unwrap_or_default()
        )
    }
}

/// The top-level statements before and after an edit that a reparse took
/// over (moved) instead of lowering them again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kept {
    before: usize,
    after: usize,
}

thread_local! {
    /// Parsers keep internal buffers between parses, so one is kept per
    /// thread rather than built for every keystroke.
    pub(crate) static PARSER: RefCell<Option<Parser>> = RefCell::new(new_parser());
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser.set_language(&queries::language()).ok()?;
    Some(parser)
}

/// Parses and lowers a whole text.
pub fn parse(text: &str) -> ParsedFile {
    parse_with(text, None)
}

/// The syntax tree of `text` with every range moved `base` bytes on: the
/// form in which another file's code joins an analysis, where the high
/// bits of an offset say which file it belongs to.
pub fn parse_at(text: &str, base: usize) -> Module {
    // Only the syntax: an imported file's comments and syntax errors are
    // its own analysis's business, and reading them costs a second walk.
    let tree = PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut parser) => run_parser(parser.as_mut(), text, None),
        Err(_) => run_parser(new_parser().as_mut(), text, None),
    });
    let module = match tree {
        Some(tree) => lower::lower_module(tree.root_node(), text),
        None => Module::default(),
    };
    match isize::try_from(base) {
        Ok(0) | Err(_) => module,
        Ok(delta) => Module {
            body: module
                .body
                .iter()
                .map(|s| shift::stmt(s, shift::Move::By(delta)))
                .collect(),
        },
    }
}

/// Parses `new_text` reusing the tree of `old`, which was parsed from
/// `old_text`; `edit` says which bytes changed (see `edit_between` for
/// callers that only have the two texts, or several edits to fold into one).
///
/// The result equals `parse(new_text)`. When the edit does not match the two
/// texts, or `old` was not parsed from `old_text`, this falls back to a
/// fresh parse rather than trust a wrong tree.
pub fn reparse(old: &ParsedFile, old_text: &str, new_text: &str, edit: ByteEdit) -> ParsedFile {
    let (Some(old_tree), true) = (&old.tree, old.source_len == old_text.len()) else {
        return parse(new_text);
    };
    let Some(input_edit) = edit.to_input_edit(old_text, new_text) else {
        return parse(new_text);
    };
    let mut tree = old_tree.clone();
    tree.edit(&input_edit);
    if let Some(file) = token::reparse(old, old_tree, &tree, new_text, edit) {
        return file;
    }
    let unchanged = Unchanged {
        old,
        edited_tree: &tree,
        edit,
    };
    parse_with(new_text, Some((&tree, unchanged)))
}

/// What an incremental parse can keep of the old file: what lies outside
/// the span where the edit changed anything.
struct Unchanged<'a> {
    old: &'a ParsedFile,
    /// The old tree with the edit applied (positions already moved).
    edited_tree: &'a Tree,
    edit: ByteEdit,
}

impl Unchanged<'_> {
    /// The span of the new text where the edit changed text or structure,
    /// widened to whole lines.
    fn span(&self, new_tree: &Tree, text: &str) -> TextRange {
        let (mut start, mut end) = (self.edit.start_byte, self.edit.new_end_byte);
        for changed in self.edited_tree.changed_ranges(new_tree) {
            start = start.min(changed.start_byte);
            end = end.max(changed.end_byte);
        }
        let bytes = text.as_bytes();
        let start = bytes[..start.min(bytes.len())]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let end = bytes
            .get(end..)
            .and_then(|rest| rest.iter().position(|b| *b == b'\n'))
            .map_or(bytes.len(), |i| end + i);
        TextRange::new(start, end)
    }

    /// The new module, keeping the old top-level statements before and after
    /// the changed span; `None` when nothing can be kept. Only for trees
    /// without errors: recovery from an error can reach back further.
    fn module(&self, new_tree: &Tree, text: &str, span: &TextRange) -> Option<(Module, Kept)> {
        let (old_root, new_root) = (self.edited_tree.root_node(), new_tree.root_node());
        if old_root.has_error() || new_root.has_error() {
            return None;
        }
        let old_nodes = lower::named_children(old_root);
        let new_nodes = lower::named_children(new_root);
        let same = old_nodes
            .iter()
            .zip(&new_nodes)
            .take_while(|(a, b)| {
                a.end_byte() <= span.start
                    && b.end_byte() <= span.start
                    && a.byte_range() == b.byte_range()
                    && a.kind_id() == b.kind_id()
            })
            .count();
        // Before the span the old and new texts agree byte for byte, so the
        // old statements there have the same ranges in both; from the span
        // on, old statements are in old offsets and must not be compared.
        let cut = [old_nodes.get(same), new_nodes.get(same)]
            .into_iter()
            .flatten()
            .map(|n| n.start_byte())
            .chain([span.start, text.len()])
            .min()
            .unwrap_or(0);
        let kept: Vec<ast::Stmt> = self
            .old
            .module
            .body
            .iter()
            .take_while(|s| s.range.start < cut)
            .cloned()
            .collect();
        if kept.iter().any(|s| s.range.end > cut) {
            return None;
        }
        // The same from the end: top-level statements wholly after the span
        // are the old ones moved by the edit's length. The edited old tree
        // already has them at their new offsets, so nodes compare directly.
        let room = new_nodes.len().min(old_nodes.len()) - same;
        let tail = old_nodes
            .iter()
            .rev()
            .zip(new_nodes.iter().rev())
            .take(room)
            .take_while(|(a, b)| {
                a.start_byte() >= span.end
                    && a.byte_range() == b.byte_range()
                    && a.kind_id() == b.kind_id()
            })
            .count();
        if same == 0 && tail == 0 {
            return None;
        }
        let tail_cut = match tail {
            0 => text.len(),
            n => new_nodes[new_nodes.len() - n].start_byte(),
        };
        let delta = self.edit.new_end_byte as isize - self.edit.old_end_byte as isize;
        let old_tail_cut = tail_cut.saturating_add_signed(-delta);
        let after: Vec<ast::Stmt> = match tail {
            0 => Vec::new(),
            _ => self
                .old
                .module
                .body
                .iter()
                .filter(|s| s.range.start >= old_tail_cut)
                .map(|s| shift::stmt(s, shift::Move::By(delta)))
                .collect(),
        };
        let counts = Kept {
            before: kept.len(),
            after: after.len(),
        };
        Some((
            lower::lower_module_between(new_root, text, kept, TextRange::new(cut, tail_cut), after),
            counts,
        ))
    }

    /// The new file's comments: the old ones before and after the changed
    /// span (moved by the edit), and those read again inside it. Reading
    /// only the span keeps a keystroke from walking the whole tree.
    fn comments(&self, new_tree: &Tree, text: &str, span: &TextRange) -> Vec<TextRange> {
        let ByteEdit {
            old_end_byte,
            new_end_byte,
            ..
        } = self.edit;
        let (start, end) = (span.start, span.end);
        // Where the span ends in the old text (it ends after the edit).
        let old_end = end + old_end_byte - new_end_byte;
        let before = self.old.comments.iter().filter(|c| c.end <= start).cloned();
        let inside = queries::comments_in(new_tree, text, TextRange::new(start, end));
        let after = self
            .old
            .comments
            .iter()
            .filter(|c| c.start >= old_end)
            .map(|c| {
                TextRange::new(
                    c.start + new_end_byte - old_end_byte,
                    c.end + new_end_byte - old_end_byte,
                )
            });
        let mut all: Vec<TextRange> = before.chain(inside).chain(after).collect();
        all.sort_by_key(|c| c.start);
        all.dedup_by_key(|c| c.start);
        all
    }
}

/// Whether the file, parsed from `text`, imports `torch`, `einops` or a
/// module under them (anywhere, including inside functions), so that
/// analysis can skip unrelated files quickly.
///
/// Asked for, not computed with every parse: the query behind it costs a
/// compile per process and a match over the whole tree per parse, which a
/// keystroke or a one-file `shapels check` should not pay when nothing
/// reads the answer.
pub fn imports_torch(file: &ParsedFile, text: &str) -> bool {
    match &file.tree {
        Some(tree) => queries::imports_torch(tree, text),
        None => false,
    }
}

fn parse_with(text: &str, old: Option<(&Tree, Unchanged<'_>)>) -> ParsedFile {
    let old_tree = old.as_ref().map(|(tree, _)| *tree);
    let tree = PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut parser) => run_parser(parser.as_mut(), text, old_tree),
        // Only reachable if parsing re-entered itself; a fresh parser will do.
        Err(_) => run_parser(new_parser().as_mut(), text, old_tree),
    });
    let Some(tree) = tree else {
        return ParsedFile {
            tree: None,
            module: Module::default(),
            source_len: text.len(),
            syntax_errors: Vec::new(),
            comments: Vec::new(),
            kept: None,
        };
    };
    let (module, kept, comments) = match &old {
        Some((_, unchanged)) => {
            let span = unchanged.span(&tree, text);
            let (module, kept) = match unchanged.module(&tree, text, &span) {
                Some((module, kept)) => (module, Some(kept)),
                None => (lower::lower_module(tree.root_node(), text), None),
            };
            (module, kept, unchanged.comments(&tree, text, &span))
        }
        None => (
            lower::lower_module(tree.root_node(), text),
            None,
            queries::comments_in(&tree, text, TextRange::new(0, text.len())),
        ),
    };
    let syntax_errors = queries::syntax_errors(&tree, text);
    ParsedFile {
        tree: Some(tree),
        module,
        source_len: text.len(),
        syntax_errors,
        comments,
        kept,
    }
}

thread_local! {
    static PARSER_RUNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times tree-sitter's parser ran on this thread: for tests and
/// benchmarks that check an edit was reparsed without it (see `token`).
pub fn parser_runs() -> u64 {
    PARSER_RUNS.with(std::cell::Cell::get)
}

fn run_parser(parser: Option<&mut Parser>, text: &str, old_tree: Option<&Tree>) -> Option<Tree> {
    PARSER_RUNS.with(|runs| runs.set(runs.get() + 1));
    let parser = parser?;
    let tree = parser.parse(text, old_tree);
    if tree.is_none() {
        // A parse that stopped part-way leaves state behind that would be
        // resumed by the next call; start clean instead.
        parser.reset();
    }
    tree
}
