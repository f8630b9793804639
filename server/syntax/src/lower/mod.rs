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
pub(crate) mod literal;
mod recover;
mod stmt;

use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use tree_sitter::Node;

use crate::ast::{Expr, ExprKind, Module, Name, Stmt, TextRange};
use crate::queries::language;

/// How deeply statements and expressions may nest in the lowered tree.
///
/// Real code stays far below this; generated or adversarial code beyond it
/// is summarised as `Other` / `Unknown` rather than risking the stack.
pub const MAX_DEPTH: usize = 200;

/// Lowers a whole file, given the root `module` node and the text it was parsed from.
pub(crate) fn lower_module(root: Node<'_>, source: &str) -> Module {
    let mut lowerer = Lowerer {
        source,
        depth: 0,
        yields: 0,
    };
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
    let mut lowerer = Lowerer {
        source,
        depth: 0,
        yields: 0,
    };
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
    /// The `yield`s lowered in the function being lowered: a function
    /// with one is a generator.
    yields: usize,
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

    fn field_expr(&mut self, node: Node<'_>, name: &'static str) -> Expr {
        let child = field(node, name);
        self.expr_or_unknown(child, node.end_byte())
    }
}

/// A node's kind. `Node::kind` measures and checks the grammar's C string
/// on every call, and lowering asks each node's kind several times: the
/// names are read once into a table by kind id.
fn kind<'t>(node: Node<'t>) -> &'t str {
    static KINDS: OnceLock<Vec<Box<str>>> = OnceLock::new();
    let kinds = KINDS.get_or_init(|| {
        let language = language();
        (0..language.node_kind_count())
            .map(|id| {
                let name = u16::try_from(id)
                    .ok()
                    .and_then(|id| language.node_kind_for_id(id));
                name.unwrap_or("").into()
            })
            .collect()
    });
    match kinds.get(usize::from(node.kind_id())) {
        Some(name) if !name.is_empty() => name,
        // `ERROR` has an id past the table's end.
        _ => node.kind(),
    }
}

/// The child of `node` in the field `name`. `Node::child_by_field_name`
/// finds the field's id by comparing `name` with every field name of the
/// grammar, each time; the ids are read once into a table here.
fn field<'t>(node: Node<'t>, name: &'static str) -> Option<Node<'t>> {
    node.child_by_field_id(field_id(name)?.get())
}

fn field_id(name: &str) -> Option<std::num::NonZeroU16> {
    static FIELDS: OnceLock<FxHashMap<Box<str>, std::num::NonZeroU16>> = OnceLock::new();
    let fields = FIELDS.get_or_init(|| {
        let language = language();
        (1..=language.field_count())
            .filter_map(|id| {
                let id = u16::try_from(id).ok()?;
                let name = language.field_name_for_id(id)?;
                Some((name.into(), std::num::NonZeroU16::new(id)?))
            })
            .collect()
    });
    fields.get(name).copied()
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
    matches!(kind(node), "comment" | "line_continuation")
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
fn field_children<'t>(node: Node<'t>, name: &'static str) -> Vec<Node<'t>> {
    let Some(id) = field_id(name) else {
        return Vec::new();
    };
    let mut cursor = node.walk();
    node.children_by_field_id(id, &mut cursor)
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
