//! Putting what a call gave and recorded in one run at its places in
//! another; a value or record that cannot be placed is not carried.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use crate::record::Portable;
use crate::value::{Tensor, Trail, Value};

/// Where one run's places and modes are in another.
pub(super) struct Placer<'a> {
    pub(super) range: &'a dyn Fn(&TextRange) -> Option<TextRange>,
    pub(super) mode: &'a dyn Fn(u32) -> Option<u32>,
}

/// A tensor with its place and mode put where `place` says; `None` when its
/// shape holds a symbol or a rank variable (which mean nothing in another
/// run).
fn placed_tensor(t: &Rc<Tensor>, place: &Placer<'_>) -> Option<Rc<Tensor>> {
    match &t.shape {
        crate::value::Shape::Known(dims) if dims.iter().all(|d| d.as_const().is_some()) => {}
        _ => return None,
    }
    let mode = (place.mode)(t.mode)?;
    let made_at = match &t.made_at {
        None => None,
        Some(r) => Some((place.range)(r)?),
    };
    let trail = match &t.trail {
        None => None,
        Some(trail) => Some(placed_trail(trail, place)?),
    };
    let same_trail = match (&trail, &t.trail) {
        (Some(a), Some(b)) => Rc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    };
    if mode == t.mode && made_at == t.made_at && same_trail {
        return Some(t.clone());
    }
    Some(Rc::new(Tensor {
        made_at,
        mode,
        trail,
        ..(**t).clone()
    }))
}

/// The chain of ops that made a tensor (see `interp::trail`), each op at
/// its place in the other run; `None` when one has no place there.
fn placed_trail(trail: &Rc<Trail>, place: &Placer<'_>) -> Option<Rc<Trail>> {
    let mut steps: Vec<&Trail> = Vec::new();
    let mut at = Some(trail);
    while let Some(step) = at {
        steps.push(step);
        at = step.prev.as_ref();
    }
    let mut moved = false;
    let mut placed: Vec<usize> = Vec::with_capacity(steps.len());
    for step in &steps {
        // The start of a chain made outside any call has no place to move.
        let to = if step.at == usize::MAX {
            usize::MAX
        } else {
            (place.range)(&TextRange::new(step.at, step.at + 1))?.start
        };
        moved |= to != step.at;
        placed.push(to);
    }
    if !moved {
        return Some(trail.clone());
    }
    let mut out: Option<Rc<Trail>> = None;
    for (step, at) in steps.iter().zip(placed).rev() {
        out = Some(Rc::new(Trail {
            op: step.op.clone(),
            at,
            prev: out,
            len: step.len,
        }));
    }
    out
}

/// A plain value (see `super::is_plain`) with its tensors placed.
pub(super) fn placed_value(v: &Value, place: &Placer<'_>) -> Option<Value> {
    let konst = |d: &shapels_shapes::Dim| d.as_const().map(|_| d.clone());
    Some(match v {
        Value::Tensor(t) => Value::Tensor(placed_tensor(t, place)?),
        Value::Int(d) => Value::Int(konst(d)?),
        Value::Range(a, b, c) => Value::Range(konst(a)?, konst(b)?, konst(c)?),
        Value::SizeOfVar(..) | Value::Distribution(_) => return None,
        Value::Tuple(items) => Value::tuple(
            items
                .iter()
                .map(|i| placed_value(i, place))
                .collect::<Option<Vec<_>>>()?,
        ),
        Value::OpenTuple(items) => Value::OpenTuple(Rc::new(
            items
                .iter()
                .map(|i| placed_value(i, place))
                .collect::<Option<Vec<_>>>()?,
        )),
        Value::Optional(inner) => Value::Optional(Box::new(placed_value(inner, place)?)),
        Value::Many(element, len) => Value::Many(
            Rc::new(placed_value(element, place)?),
            match len {
                Some(n) => Some(konst(n)?),
                None => None,
            },
        ),
        Value::Slice(a, b, c) => Value::Slice(
            Box::new(placed_value(a, place)?),
            Box::new(placed_value(b, place)?),
            Box::new(placed_value(c, place)?),
        ),
        Value::Unknown
        | Value::None
        | Value::Bool(_)
        | Value::Float(_)
        | Value::Complex
        | Value::Str(_)
        | Value::Text
        | Value::Device(_)
        | Value::DType(_)
        | Value::Path(_)
        | Value::Opaque(_)
        | Value::Ellipsis => v.clone(),
        _ => return None,
    })
}

pub(super) fn placed_record(r: &Portable, place: &Placer<'_>) -> Option<Portable> {
    let at = |start: usize| (place.range)(&TextRange::new(start, start)).map(|r| r.start);
    Some(match r {
        Portable::Binding {
            name,
            range,
            kind,
            call,
            tensor,
        } => Portable::Binding {
            name: name.clone(),
            range: (place.range)(range)?,
            kind: *kind,
            call: *call,
            tensor: placed_tensor(tensor, place)?,
        },
        Portable::Unknown(name, start, read) => Portable::Unknown(name.clone(), at(*start)?, *read),
        Portable::Expression(range, call, tensor) => {
            Portable::Expression((place.range)(range)?, *call, placed_tensor(tensor, place)?)
        }
        Portable::Scalar(name, start, value, param, kind) => {
            value.as_const()?;
            Portable::Scalar(name.clone(), at(*start)?, value.clone(), *param, *kind)
        }
        Portable::Annotation(start, end) => {
            let r = (place.range)(&TextRange::new(*start, *end))?;
            Portable::Annotation(r.start, r.end)
        }
        Portable::UnknownReason(name, range, why) => {
            Portable::UnknownReason(name.clone(), (place.range)(range)?, why.clone())
        }
        Portable::Reached(function, call) => Portable::Reached(at(*function)?, at(*call)?),
        Portable::Pattern(start, name, kind, value) => {
            value.as_const()?;
            Portable::Pattern(at(*start)?, name.clone(), *kind, value.clone())
        }
    })
}
