//! Python source text to a small typed syntax tree, through tree-sitter.
//!
//! This layer knows nothing of tensors or of LSP: it parses (and reparses
//! incrementally after edits), lowers tree-sitter's concrete tree into the
//! owned `ast`, and owns the tree-sitter queries in `queries/python`.
//!
//! Nothing here panics on any input text: broken code lowers to what can be
//! understood plus `Other` / `Unknown` nodes, and its syntax errors are
//! listed in `ParsedFile::syntax_errors`.

pub mod ast;
mod edit;
mod lower;
pub mod queries;

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

pub use edit::{ByteEdit, edit_between};
pub use lower::MAX_DEPTH;

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
    imports_torch: bool,
}

thread_local! {
    /// Parsers keep internal buffers between parses, so one is kept per
    /// thread rather than built for every keystroke.
    static PARSER: RefCell<Option<Parser>> = RefCell::new(new_parser());
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
    parse_with(new_text, Some(&tree))
}

/// Whether the file imports `torch`, `einops` or a module under them
/// (anywhere, including inside functions), so that analysis can skip
/// unrelated files quickly.
pub fn imports_torch(file: &ParsedFile) -> bool {
    file.imports_torch
}

fn parse_with(text: &str, old_tree: Option<&Tree>) -> ParsedFile {
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
            imports_torch: false,
        };
    };
    let module = lower::lower_module(tree.root_node(), text);
    let syntax_errors = queries::syntax_errors(&tree, text);
    let comments = queries::comments(&tree, text);
    let imports_torch = queries::imports_torch(&tree, text);
    ParsedFile {
        tree: Some(tree),
        module,
        source_len: text.len(),
        syntax_errors,
        comments,
        imports_torch,
    }
}

fn run_parser(parser: Option<&mut Parser>, text: &str, old_tree: Option<&Tree>) -> Option<Tree> {
    let parser = parser?;
    let tree = parser.parse(text, old_tree);
    if tree.is_none() {
        // A parse that stopped part-way leaves state behind that would be
        // resumed by the next call; start clean instead.
        parser.reset();
    }
    tree
}
