//! Recovery of statements from tree-sitter's `ERROR` nodes.
//!
//! While the user types, the line being edited is usually broken:
//! `x = torch.randn(8,` leaves an `ERROR` node where the statement should be.
//! Whole statements that tree-sitter still recognised inside the error are
//! lowered as usual; a fragment that starts like an assignment keeps its
//! target (so later lines still see `x` bound) with an `Unknown` value, and
//! anything else becomes `StmtKind::Other`.

use tree_sitter::Node;

use super::expr::is_expression_kind;
use super::stmt::is_statement_kind;
use super::{Lowerer, all_children, kind, unknown};
use crate::ast::TextRange;
use crate::ast::{Stmt, StmtKind};

impl Lowerer<'_> {
    pub(super) fn recover(&mut self, error: Node<'_>, out: &mut Vec<Stmt>) {
        let mut fragment = Vec::new();
        for child in all_children(error) {
            if is_statement_kind(kind(child)) {
                self.fragment(&fragment, out);
                fragment.clear();
                self.statement(child, out);
            } else {
                fragment.push(child);
            }
        }
        self.fragment(&fragment, out);
    }

    /// A run of children of an `ERROR` node that are not statements.
    fn fragment(&mut self, nodes: &[Node<'_>], out: &mut Vec<Stmt>) {
        let (Some(first), Some(last)) = (nodes.first(), nodes.last()) else {
            return;
        };
        let range = first.start_byte()..last.end_byte();
        let kind = self.recover_assignment(nodes).unwrap_or(StmtKind::Other);
        out.push(Stmt {
            range: range.into(),
            kind,
        });
    }

    /// `target = <anything>`: the target is kept; the value too when it is a
    /// single well-formed expression, and `Unknown` otherwise.
    fn recover_assignment(&mut self, nodes: &[Node<'_>]) -> Option<StmtKind> {
        let [target, equals, rest @ ..] = nodes else {
            return None;
        };
        let is_target = matches!(
            kind(*target),
            "identifier"
                | "attribute"
                | "subscript"
                | "pattern_list"
                | "tuple_pattern"
                | "list_pattern"
        );
        if kind(*equals) != "=" || !is_target {
            return None;
        }
        let value = match rest {
            [single] if is_expression_kind(kind(*single)) && !single.has_error() => {
                self.expr(*single)
            }
            [] => unknown(TextRange::new(equals.end_byte(), equals.end_byte())),
            [first, .., last] | [first @ last] => {
                unknown(TextRange::new(first.start_byte(), last.end_byte()))
            }
        };
        Some(StmtKind::Assign {
            targets: vec![self.expr(*target)],
            annotation: None,
            value: Some(value),
        })
    }
}
