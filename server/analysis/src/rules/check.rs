//! How a rule fails: torch's `torch._check` as a `Result`.
//!
//! A meta kernel in torch checks its inputs with `torch._check(cond, msg)`
//! and raises; a rule here returns `Err(ShapeError)` (through `check!` or
//! `?`), and the interpreter turns the error into the diagnostic at the
//! call, with its code, and makes the op's result unknown (`Meta::settle`).
//! A rule that cannot go on for want of a known size is not an error: it
//! stops with the result the op gives instead (`Stop::Give`).

use crate::code::Code;
use crate::value::Value;

/// What torch raises at the call: a code and torch's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShapeError {
    pub code: Code,
    pub message: String,
}

impl ShapeError {
    pub(crate) fn new(code: Code, message: String) -> Self {
        ShapeError { code, message }
    }
}

/// Why a rule stopped before its result.
#[derive(Debug)]
pub(crate) enum Stop {
    /// Torch raises.
    Raise(ShapeError),
    /// The rule cannot go on with what is known; the op's result is this
    /// (often the unknown-rank result).
    Give(Value),
}

impl From<ShapeError> for Stop {
    fn from(error: ShapeError) -> Self {
        Stop::Raise(error)
    }
}

/// What a rule returns: the op's result, or why it stopped.
pub(crate) type RuleResult = Result<Value, Stop>;

/// Torch raises `message` under `code`: the rule stops here.
pub(crate) fn raise<T>(code: Code, message: String) -> Result<T, Stop> {
    Err(Stop::Raise(ShapeError::new(code, message)))
}

/// `torch._check(cond, lambda: msg)`: returns `Err(ShapeError)` with `code`
/// and the formatted message from the rule unless `cond` holds.
macro_rules! check {
    ($cond:expr, $code:expr, $($message:tt)+) => {
        if !$cond {
            return Err($crate::rules::check::ShapeError::new($code, format!($($message)+)).into());
        }
    };
}
pub(crate) use check;

#[cfg(test)]
mod tests {
    use super::*;

    fn positive(n: i64) -> RuleResult {
        check!(n > 0, Code::NegativeSize, "negative size {n}");
        Ok(Value::Unknown)
    }

    #[test]
    fn check_raises_with_its_code_and_message() {
        assert!(positive(1).is_ok());
        match positive(-2) {
            Err(Stop::Raise(e)) => {
                assert_eq!(
                    e,
                    ShapeError::new(Code::NegativeSize, "negative size -2".into())
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
