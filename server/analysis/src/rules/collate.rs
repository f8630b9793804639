//! `torch.utils.data.default_collate`: a batch made of samples, as a `DataLoader` makes it.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use super::args::Args;
use super::meta::Meta;
use crate::mutation::Shared;
use crate::value::Value;

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
