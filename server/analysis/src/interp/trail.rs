//! The chain of ops that made a tensor, for hover: `randn` (line 3) →
//! `Linear` (line 9) → `view` (line 10). Only an analysis that records
//! expressions (the one hover asks for) keeps it: the analysis run on
//! every keystroke makes no chains.

use std::rc::Rc;

use super::Interp;
use crate::value::{Tensor, Trail, Value};

/// Steps a chain keeps at most: a loop that adds to a tensor on each turn
/// stops growing its chain there.
const MAX_TRAIL: u32 = 256;

impl Interp<'_> {
    /// A tensor passed to a function, as the function sees it: its chain
    /// starts at the parameter (`x`). What a function gives then depends on
    /// its own code alone, never on who called it first (its result may be
    /// taken for another call, see `memo`); the caller's chain goes on with
    /// the function's name.
    ///
    /// So do the tensors of a tuple passed (`layer_past = (k, v)`), which
    /// cannot change under the callee; a list's stay as they are, since
    /// the callee may add to the caller's list.
    pub(crate) fn parameter_trail(&self, value: Value, name: &str, at: usize) -> Value {
        if !self.recorder.expressions {
            return value;
        }
        parameter_trail_of(value, &Rc::from(name), at, 0)
    }

    /// `result` of the op `op` called at `at` on `input` (its receiver, or
    /// its first tensor argument), with the op added to the input's chain.
    pub(crate) fn extend_trail(
        &self,
        result: Value,
        input: Option<&Value>,
        op: &Rc<str>,
        at: usize,
    ) -> Value {
        if !self.recorder.expressions {
            return result;
        }
        let t = match &result {
            Value::Tensor(t) => t.clone(),
            // `split`, `chunk`, `unbind`: each part was made by the op.
            Value::Tuple(items) if items.iter().any(|i| matches!(i, Value::Tensor(_))) => {
                let parts = items
                    .iter()
                    .map(|i| self.extend_trail(i.clone(), input, op, at))
                    .collect();
                return Value::tuple(parts);
            }
            _ => return result,
        };
        let input = match input {
            Some(Value::Tensor(i)) => Some(i.clone()),
            Some(v @ (Value::Tuple(_) | Value::List(_))) => v
                .items()
                .unwrap_or_default()
                .into_iter()
                .find_map(|i| i.as_tensor().cloned()),
            _ => None,
        };
        let prev = input.map(|i| match &i.trail {
            Some(trail) => trail.clone(),
            // The input's own beginning, named by what made it (`x` for
            // an argument, `randn`): no place when none is known.
            None => Rc::new(Trail {
                op: i.op.clone(),
                at: i.made_at.as_ref().map_or(usize::MAX, |r| r.start),
                prev: None,
                len: 1,
            }),
        });
        let len = prev.as_ref().map_or(0, |p| p.len) + 1;
        if len > MAX_TRAIL {
            return result;
        }
        Value::Tensor(Rc::new(Tensor {
            trail: Some(Rc::new(Trail {
                op: op.clone(),
                at,
                prev,
                len,
            })),
            ..(*t).clone()
        }))
    }
}

/// Tuples nested deeper than this keep their tensors' chains.
const MAX_TUPLE_DEPTH: u32 = 8;

fn parameter_trail_of(value: Value, name: &Rc<str>, at: usize, depth: u32) -> Value {
    match value {
        Value::Tensor(t) => Value::Tensor(Rc::new(Tensor {
            trail: Some(Rc::new(Trail {
                op: name.clone(),
                at,
                prev: None,
                len: 1,
            })),
            ..(*t).clone()
        })),
        Value::Tuple(items)
            if depth < MAX_TUPLE_DEPTH
                && items
                    .iter()
                    .any(|i| matches!(i, Value::Tensor(_) | Value::Tuple(_))) =>
        {
            Value::tuple(
                items
                    .iter()
                    .map(|i| parameter_trail_of(i.clone(), name, at, depth + 1))
                    .collect(),
            )
        }
        other => other,
    }
}
