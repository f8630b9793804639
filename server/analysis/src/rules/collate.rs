//! `torch.utils.data.default_collate`: a batch made of samples, as a `DataLoader` makes it.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use shapels_shapes::Dim;

use super::args::Args;
use super::meta::Meta;
use crate::mutation::Shared;
use crate::value::{DType, Shape, Value};

/// `default_collate(samples)`: tensors of one shape are stacked into a new
/// first dim; dicts (pixelsplat collates projections kept as dicts) and
/// tuples are collated key by key and place by place, as torch does. What
/// torch does with other samples (numbers become a tensor of them, strings
/// stay a list) is not followed: unknown.
pub(super) fn default_collate(
    meta: &mut dyn Meta,
    batch: Option<&Value>,
    range: TextRange,
) -> Value {
    match batch.and_then(Value::items) {
        Some(samples) => collate(meta, &samples, range),
        None => Value::Unknown,
    }
}

fn collate(meta: &mut dyn Meta, samples: &[Value], range: TextRange) -> Value {
    let Some(first) = samples.first() else {
        return Value::Unknown;
    };
    match first {
        Value::Tensor(_) if samples.iter().all(|s| matches!(s, Value::Tensor(_))) => {
            let list = Value::list(samples.to_vec());
            super::ops::op(meta, "stack", Args::new(vec![list], Vec::new()), range)
        }
        Value::Dict(entries) => {
            let keys: Vec<Value> = entries.borrow().iter().map(|(k, _)| k.clone()).collect();
            let mut out = Vec::new();
            for key in keys {
                let Value::Str(name) = &key else {
                    return Value::Unknown;
                };
                let column: Option<Vec<Value>> = samples
                    .iter()
                    .map(|s| match s {
                        Value::Dict(d) => d.borrow().iter().find_map(|(k, v)| match k {
                            Value::Str(k) if k == name => Some(v.clone()),
                            _ => None,
                        }),
                        _ => None,
                    })
                    .collect();
                let Some(column) = column else {
                    return Value::Unknown;
                };
                let value = collate(meta, &column, range);
                out.push((key, value));
            }
            Value::Dict(Rc::new(Shared::new(out)))
        }
        // A batch of tuples is a list of the batches of their places.
        Value::Tuple(first) => {
            let width = first.len();
            let rows: Option<Vec<Vec<Value>>> = samples
                .iter()
                .map(|s| s.items().filter(|items| items.len() == width))
                .collect();
            let Some(rows) = rows else {
                return Value::Unknown;
            };
            let columns = (0..width)
                .map(|i| {
                    let column: Vec<Value> = rows.iter().map(|r| r[i].clone()).collect();
                    collate(meta, &column, range)
                })
                .collect();
            Value::list(columns)
        }
        _ => Value::Unknown,
    }
}

/// The batch a `DataLoader` makes of `batch` samples alike to `sample`
/// with `default_collate`: a tensor gains a first dim of that size,
/// numbers become a tensor of them (int64, float64, bool as torch makes
/// them), tuples and lists a list of their places' batches, dicts a dict.
/// What torch does not collate (`None`) or the analysis cannot follow is
/// unknown.
pub(crate) fn collate_alike(meta: &mut dyn Meta, sample: &Value, batch: &Dim) -> Value {
    let numbers = |meta: &mut dyn Meta, dtype| {
        let t = meta.new_tensor(
            Shape::known(vec![batch.clone()]),
            Some(dtype),
            None,
            "collate",
        );
        Value::Tensor(Rc::new(t))
    };
    match sample {
        Value::Tensor(t) => match meta.dims(t) {
            Some(dims) => {
                let mut shape = vec![batch.clone()];
                shape.extend(dims);
                let made =
                    meta.new_tensor(Shape::known(shape), t.dtype, t.device.clone(), "collate");
                Value::Tensor(Rc::new(made))
            }
            None => Value::Unknown,
        },
        Value::Bool(_) => numbers(meta, DType::Bool),
        Value::Int(_) => numbers(meta, DType::Int64),
        Value::Float(_) => numbers(meta, DType::Float64),
        Value::Tuple(_) | Value::List(_) => match sample.items() {
            Some(places) => Value::list(
                places
                    .iter()
                    .map(|p| collate_alike(meta, p, batch))
                    .collect(),
            ),
            None => Value::Unknown,
        },
        Value::Dict(entries) => {
            let entries: Vec<(Value, Value)> = entries.borrow().clone();
            let out = entries
                .iter()
                .map(|(k, v)| (k.clone(), collate_alike(meta, v, batch)))
                .collect();
            Value::Dict(Rc::new(Shared::new(out)))
        }
        _ => Value::Unknown,
    }
}
