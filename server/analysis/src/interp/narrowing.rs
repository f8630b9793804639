//! Narrowing by `isinstance`: inside `if isinstance(layer, TimestepBlock):` a name that holds one of several objects holds only those the test admits.
//!
//! A block list the analysis built with an unknown number of blocks
//! iterates as one of its kinds of blocks (`Value::Either`), and the
//! diffusion models' `for layer in self: if isinstance(layer, TimestepBlock):
//! x = layer(x, emb) elif isinstance(layer, SpatialTransformer): x =
//! layer(x, context)` would otherwise call every kind on each path, a
//! transformer with the timestep embedding for its context among them.

use std::rc::Rc;

use shapels_syntax::ast::{Arg, Expr, ExprKind, UnaryOp};

use super::Interp;
use crate::value::Value;

/// A name the test narrows: what it holds on either path, and before.
pub(super) struct Narrowed {
    name: Rc<str>,
    original: Value,
    then: Value,
    otherwise: Value,
}

impl Narrowed {
    pub(super) fn name(&self) -> &str {
        &self.name
    }
}

impl Interp<'_> {
    /// The narrowing `test` makes, when it is `isinstance(name, classes)`
    /// (or its negation) of a local name holding several objects of which
    /// the classes admit some and refuse others.
    pub(super) fn narrowing(&mut self, test: &Expr) -> Option<Narrowed> {
        let (call, negated) = match &test.kind {
            ExprKind::UnaryOp {
                op: UnaryOp::Not,
                operand,
            } => (&**operand, true),
            _ => (test, false),
        };
        let ExprKind::Call { func, args } = &call.kind else {
            return None;
        };
        let (ExprKind::Name(f), [Arg::Positional(subject), Arg::Positional(classes)]) =
            (&func.kind, args.as_slice())
        else {
            return None;
        };
        let ExprKind::Name(name) = &subject.kind else {
            return None;
        };
        if f != "isinstance" || self.lookup("isinstance").is_some() {
            return None;
        }
        let original = self.frame().locals.borrow().get(name.as_str()).cloned()?;
        let Value::Either(members) = &original else {
            return None;
        };
        let classes = self.eval(classes);
        let (mut admitted, mut refused) = (Vec::new(), Vec::new());
        for member in members.iter() {
            match self.isinstance(member, &classes) {
                Value::Bool(Some(true)) => admitted.push(member.clone()),
                Value::Bool(Some(false)) => refused.push(member.clone()),
                _ => {
                    admitted.push(member.clone());
                    refused.push(member.clone());
                }
            }
        }
        if admitted.is_empty() || refused.is_empty() {
            return None;
        }
        let (then, otherwise) = (one_of(admitted), one_of(refused));
        let (then, otherwise) = if negated {
            (otherwise, then)
        } else {
            (then, otherwise)
        };
        Some(Narrowed {
            name: Rc::from(name.as_str()),
            original,
            then,
            otherwise,
        })
    }

    /// Gives the narrowed name its value for one path (`then`: the path
    /// the test holds on).
    pub(super) fn narrow(&mut self, narrowed: Option<&Narrowed>, then: bool) {
        if let Some(n) = narrowed {
            let value = if then { &n.then } else { &n.otherwise };
            self.bind_name(&n.name, value.clone());
        }
    }

    /// After both paths went on: a name neither path rebound holds what
    /// it held before the test, not the join of its two narrowings.
    pub(super) fn widen_narrowed(
        &mut self,
        narrowed: Option<&Narrowed>,
        after_then: Option<&Value>,
        after_otherwise: Option<&Value>,
    ) {
        let Some(n) = narrowed else { return };
        let kept = |after: Option<&Value>, narrowed: &Value| {
            after.is_some_and(|v| same_object(v, narrowed))
        };
        if kept(after_then, &n.then) && kept(after_otherwise, &n.otherwise) {
            self.bind_name(&n.name, n.original.clone());
        }
    }
}

/// The one object, or a choice between several.
fn one_of(mut objects: Vec<Value>) -> Value {
    if objects.len() == 1 {
        objects.pop().unwrap_or(Value::Unknown)
    } else {
        Value::Either(Rc::new(objects))
    }
}

/// Whether two values are the same object (not merely alike).
fn same_object(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Either(x), Value::Either(y)) => Rc::ptr_eq(x, y),
        (Value::Instance(x), Value::Instance(y)) => Rc::ptr_eq(x, y),
        (Value::Layer(x), Value::Layer(y)) => Rc::ptr_eq(x, y),
        (Value::Function(x), Value::Function(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}
