//! Where a rule's `ShapeError` becomes a diagnostic: the interpreter side of `torch._check`.

use shapels_syntax::ast::TextRange;

use super::Interp;
use crate::rules::check::{RuleResult, Stop};
use crate::value::Value;

impl Interp<'_> {
    /// The value of a rule's result at the call `range`: an error is
    /// reported there, with its code's severity, and the result is
    /// unknown, as torch raises and nothing after the call runs with it.
    pub(crate) fn settle(&mut self, range: TextRange, result: RuleResult) -> Value {
        match result {
            Ok(value) | Err(Stop::Give(value)) => value,
            Err(Stop::Raise(error)) => {
                self.report(range, error.code, error.message);
                Value::Unknown
            }
        }
    }
}
