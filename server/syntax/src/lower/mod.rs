//! Lowering of tree-sitter's concrete syntax tree into the owned `ast`.
//!
//! The walk is recursive but depth-limited: past `MAX_DEPTH` nested
//! statements or expressions the rest of a subtree becomes `Other` /
//! `Unknown`. That keeps lowering (and every later recursive pass over the
//! `ast`, whose depth is bounded the same way) safe on a 2 MiB thread stack
//! whatever the input, such as thousands of nested brackets.
//!
//! Broken input never panics: tree-sitter's `ERROR` nodes are recovered where
//! that is easy (see `recover.rs`) and `MISSING` nodes lower to `Unknown`.

mod expr;
mod literal;
mod recover;
mod stmt;

use tree_sitter::Node;

use crate::ast::{Expr, ExprKind, Module, Name, Stmt, TextRange};

/// How deeply statements and expressions may nest in the lowered tree.
///
/// Real code stays far below this; generated or adversarial code beyond it
/// is summarised as `Other` / `Unknown` rather than risking the stack.
pub const MAX_DEPTH: usize = 200;

/// Lowers a whole file, given the root `module` node and the text it was parsed from.
pub(crate) fn lower_module(root: Node<'_>, source: &str) -> Module {
    let mut lowerer = Lowerer { source, depth: 0 };
    if root.is_error() {
        // When nothing fits, the root itself is the `ERROR` node.
        let mut body = Vec::new();
        lowerer.recover(root, &mut body);
        return Module { body };
    }
    Module {
        body: lowerer.statements(root),
    }
}

/// Lower a module whose top-level statements before byte `span.start` are
/// `before` and from `span.end` on are `after` (lowered earlier from the
/// same text, moved to its offsets): only the statements in `span` are
/// walked. The caller makes sure the text and tree outside `span` are those
/// the kept statements came from.
pub(crate) fn lower_module_between(
    root: Node<'_>,
    source: &str,
    before: Vec<Stmt>,
    span: TextRange,
    after: Vec<Stmt>,
) -> Module {
    let mut lowerer = Lowerer { source, depth: 0 };
    let mut body = before;
    for child in named_children(root) {
        if span.contains(&child.start_byte()) {
            lowerer.statement(child, &mut body);
        }
    }
    body.extend(after);
    Module { body }
}

/// The state of one lowering walk: the text (for identifiers and literals)
/// and how deeply the walk has nested so far.
struct Lowerer<'s> {
    source: &'s str,
    depth: usize,
}

impl Lowerer<'_> {
    /// The source text of a node; empty if tree-sitter's range does not fit
    /// the text, which would mean the tree and text disagree.
    fn text(&self, node: Node<'_>) -> &str {
        self.source.get(node.byte_range()).unwrap_or("")
    }

    fn name(&self, node: Node<'_>) -> Name {
        Name {
            id: self.text(node).to_string(),
            range: node.byte_range().into(),
        }
    }

    /// Lowers an optional child, standing in an empty `Unknown` at `at` when
    /// the parser found nothing there (broken code).
    fn expr_or_unknown(&mut self, node: Option<Node<'_>>, at: usize) -> Expr {
        match node {
            Some(node) => self.expr(node),
            None => unknown(TextRange::new(at, at)),
        }
    }

    fn field_expr(&mut self, node: Node<'_>, field: &str) -> Expr {
        let child = node.child_by_field_name(field);
        self.expr_or_unknown(child, node.end_byte())
    }
}

fn unknown(range: TextRange) -> Expr {
    Expr {
        range,
        kind: ExprKind::Unknown,
    }
}

/// Comments and line continuations, which may appear between any two
/// tokens. (`Node::is_extra` would also match `ERROR` nodes, which
/// tree-sitter marks as extras when its recovery skips tokens.)
fn is_trivia(node: Node<'_>) -> bool {
    matches!(node.kind(), "comment" | "line_continuation")
}

/// The named children of a node, without comments and line continuations.
pub(crate) fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|child| !is_trivia(*child))
        .collect()
}

/// All children of a node, tokens included, without comments and line continuations.
fn all_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .filter(|child| !is_trivia(*child))
        .collect()
}

/// The named children stored under a field that may repeat (`right` of a
/// `for_in_clause`, `value` of an `except_clause`).
fn field_children<'t>(node: Node<'t>, field: &str) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children_by_field_name(field, &mut cursor)
        .filter(|child| child.is_named() && !is_trivia(*child))
        .collect()
}

/// The first `ERROR` node directly under `node`: where tree-sitter skipped
/// tokens to make the node fit, so the node's own structure is suspect.
fn error_child(node: Node<'_>) -> Option<Node<'_>> {
    if !node.has_error() {
        return None;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).find(|child| child.is_error())
}

/// The first named child of a node, for wrappers with a single child such as
/// `decorator` or `type`.
fn first_named_child(node: Node<'_>) -> Option<Node<'_>> {
    named_children(node).into_iter().next()
}
