//! Equalities an op needs between two sizes the code named apart: said as
//! `shape-assumption` warnings, not learned.
//!
//! In a function shown for any input, `scores @ v` where `v` was never
//! split into heads only works if `n_heads == B`, and a `Linear(dim, dim)`
//! applied to `x.transpose(1, 2)` only if `T == dim`. Learning such an
//! equality would rename one size to the other all over the function and
//! hide the bug; the shape environment keeps it as an assumption instead
//! (see `ShapeEnv::set_operands`), and the op that needed it says so.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Interp;
use crate::code::Code;
use crate::value::{Shape, Value};

impl Interp<'_> {
    /// Run an op on `operands` (tensors, or tuples and lists of them) with
    /// their shapes known to the shape environment, and report the
    /// assumptions it made at `range`.
    pub(crate) fn with_operands(
        &mut self,
        operands: &[&Value],
        range: &TextRange,
        op: impl FnOnce(&mut Self) -> Value,
    ) -> Value {
        let mut shapes: Vec<Rc<Vec<Dim>>> = Vec::new();
        for v in operands {
            self.operand_shapes(v, &mut shapes, 0);
        }
        let outer = self.env.set_operands(shapes);
        let result = op(self);
        self.env.set_operands(outer);
        if !self.env.has_assumptions() {
            return result;
        }
        let found = self.env.take_assumptions();
        let mut said: Vec<String> = Vec::new();
        for (a, b) in found {
            let text = format!("{} == {}", self.env.display(&a), self.env.display(&b));
            if text.contains('?') || said.contains(&text) {
                continue;
            }
            said.push(text);
        }
        for text in said {
            self.report(
                *range,
                Code::ShapeAssumption,
                format!(
                    "this works only if {text}: two sizes the code keeps apart are taken to be equal"
                ),
            );
        }
        result
    }

    fn operand_shapes(&self, v: &Value, out: &mut Vec<Rc<Vec<Dim>>>, depth: usize) {
        match v {
            // Most shapes are known already: no need to resolve them.
            Value::Tensor(t) => match &t.shape {
                Shape::Known(d) if d.len() >= 2 => out.push(d.clone()),
                Shape::Known(_) => {}
                _ => match self.resolve_shape(&t.shape) {
                    Shape::Known(d) | Shape::Tail(_, d) if d.len() >= 2 => out.push(d),
                    _ => {}
                },
            },
            Value::Tuple(items) if depth < 2 => {
                for item in items.iter().take(8) {
                    self.operand_shapes(item, out, depth + 1);
                }
            }
            Value::List(items) if depth < 2 => {
                for item in items.borrow().iter().take(8) {
                    self.operand_shapes(item, out, depth + 1);
                }
            }
            _ => {}
        }
    }
}
