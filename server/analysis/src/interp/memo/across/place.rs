//! Putting what a call gave and recorded in one run at its places in
//! another; a value or record that cannot be placed is not carried.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use crate::record::Portable;
use crate::value::{Tensor, Value};

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
    if mode == t.mode && made_at == t.made_at {
        return Some(t.clone());
    }
    Some(Rc::new(Tensor {
        made_at,
        mode,
        ..(**t).clone()
    }))
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
    let at = |start: usize| (place.range)(&(start..start)).map(|r| r.start);
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
        Portable::Scalar(name, start, value) => {
            value.as_const()?;
            Portable::Scalar(name.clone(), at(*start)?, value.clone())
        }
        Portable::Annotation(start, end) => {
            let r = (place.range)(&(*start..*end))?;
            Portable::Annotation(r.start, r.end)
        }
    })
}
