//! einops `pack` and `unpack`: tensors joined along the one axis a `*` of
//! the pattern stands for, and split back by the shapes `pack` gave.
//!
//! `pack([x], 'b *')` of `[b, c, h, w]` is `[b, c*h*w]` with the packed
//! shapes `[(c, h, w)]`; `unpack(y, ps, 'b *')` gives `[b, c, h, w]` back.
//! A tensor of unknown rank packs along a `*` that takes its leading dims
//! (`'* d'`), or the dims after its first ones (`'b * d'`), where the
//! shape it had stays known as the rank variable.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use super::Args;
use super::ops::{out_known, out_shape};
use crate::rules::meta::Meta;
use crate::value::{Shape, Value};

/// `einops.pack` / `einops.unpack`; `None` for any other name.
pub(crate) fn call(
    meta: &mut dyn Meta,
    name: &str,
    args: &Args,
    range: TextRange,
) -> Option<Value> {
    match name {
        "pack" => Some(pack(meta, args, range)),
        "unpack" => Some(unpack(meta, args)),
        _ => None,
    }
}

/// The axes a pattern names before and after its one `*`; `None` for a
/// pattern einops refuses (no `*`, two of them, or nothing but names).
fn star_split(pattern: &str) -> Option<(usize, usize)> {
    let axes: Vec<&str> = pattern.split_whitespace().collect();
    let star = axes.iter().position(|a| *a == "*")?;
    if axes.iter().filter(|a| **a == "*").count() != 1 {
        return None;
    }
    Some((star, axes.len() - star - 1))
}

/// One tensor's packed form and the shape its `*` took.
fn packed_one(
    meta: &mut dyn Meta,
    x: &Rc<crate::value::Tensor>,
    (before, after): (usize, usize),
    names_after: &[&str],
) -> Option<(Value, Value)> {
    let mut shape = meta.resolve_shape(&x.shape);
    // einops needs the dims the pattern names after the `*`: a tensor of
    // unknown rank has them, named as the pattern names them.
    if matches!(shape, Shape::Var(_)) && (before == 0 || after > 0) {
        shape = meta.demand_named_suffix(&shape, names_after);
    }
    match &shape {
        Shape::Known(dims) if dims.len() >= before + after => {
            let middle = &dims[before..dims.len() - after];
            let mut out = dims[..before].to_vec();
            out.push(super::shape::numel(middle));
            out.extend(dims[dims.len() - after..].iter().cloned());
            let packed = out_known(meta, x, out, x.dtype, x.device.clone(), "pack");
            let sizes = Value::tuple(middle.iter().cloned().map(Value::Int).collect());
            Some((packed, sizes))
        }
        // `'* d'` of `[*batch, d]`: the leading dims are the rank variable's,
        // with any known dims before the ones after the `*`.
        Shape::Var(var) if before == 0 && after == 0 => {
            let all = meta.env_mut().anonymous();
            let packed = out_known(meta, x, vec![all], x.dtype, x.device.clone(), "pack");
            Some((packed, Value::SizeOfVar(*var, Rc::new(Vec::new()))))
        }
        Shape::Tail(var, known) if before == 0 && known.len() >= after => {
            let kept = &known[..known.len() - after];
            let leading = meta.env_mut().anonymous();
            let mut out = vec![leading];
            out.extend(known[known.len() - after..].iter().cloned());
            let packed = out_known(meta, x, out, x.dtype, x.device.clone(), "pack");
            Some((packed, Value::SizeOfVar(*var, Rc::new(kept.to_vec()))))
        }
        // `'b * d'` of `[*batch, d]`: the first sizes are the rank
        // variable's own, and the `*` takes the dims after them. Its
        // sizes stand for the variable's dims, those first sizes included
        // (see `unpack`).
        Shape::Var(var) | Shape::Tail(var, _) if before > 0 => {
            let known = match &shape {
                Shape::Tail(_, known) => known.as_ref().clone(),
                _ => Vec::new(),
            };
            if known.len() < after {
                return None;
            }
            let mut out: Vec<_> = (0..before).map(|i| meta.var_dim(*var, i as i64)).collect();
            out.push(meta.env_mut().anonymous());
            out.extend(known[known.len() - after..].iter().cloned());
            let packed = out_known(meta, x, out, x.dtype, x.device.clone(), "pack");
            let kept = known[..known.len() - after].to_vec();
            Some((packed, Value::SizeOfVar(*var, Rc::new(kept))))
        }
        _ => None,
    }
}

fn pack(meta: &mut dyn Meta, args: &Args, range: TextRange) -> Value {
    let (Some(items), Some(pattern)) = (
        args.get(0, "tensors").and_then(|v| v.items()),
        args.str(1, "pattern"),
    ) else {
        return Value::Unknown;
    };
    let Some(split) = star_split(&pattern) else {
        return Value::Unknown;
    };
    let names_after: Vec<&str> = pattern.split_whitespace().skip(split.0 + 1).collect();
    let mut packed = Vec::new();
    let mut shapes = Vec::new();
    for item in &items {
        let Some(x) = item.as_tensor() else {
            return Value::Unknown;
        };
        let Some((p, s)) = packed_one(meta, x, split, &names_after) else {
            return Value::Unknown;
        };
        packed.push(p);
        shapes.push(s);
    }
    let joined = match packed.as_slice() {
        [] => return Value::Unknown,
        [one] => one.clone(),
        // Torch's `cat` along the packed axis checks the other dims.
        _ => super::ops::op(
            meta,
            "cat",
            Args::new(
                vec![Value::list(packed), Value::int(split.0 as i64)],
                Vec::new(),
            ),
            range,
        ),
    };
    Value::tuple(vec![joined, Value::list(shapes)])
}

fn unpack(meta: &mut dyn Meta, args: &Args) -> Value {
    let (Some(x), Some(shapes), Some(pattern)) = (
        args.tensor(0, "tensor"),
        args.get(1, "packed_shapes").and_then(|v| v.items()),
        args.str(2, "pattern"),
    ) else {
        return Value::Unknown;
    };
    let Some((before, after)) = star_split(&pattern) else {
        return Value::Unknown;
    };
    let Some(dims) = meta.dims(&x) else {
        return Value::Unknown;
    };
    if dims.len() != before + 1 + after {
        return Value::Unknown;
    }
    let outer = &dims[..before];
    let inner = &dims[before + 1..];
    let mut out = Vec::new();
    for shape in &shapes {
        let value = match shape {
            // The rank variable's dims, then the dims after the `*`. Packed
            // with first sizes of its own (`'b * d'`), the variable holds
            // those too: the tensor unpacked must keep them.
            Value::SizeOfVar(var, known) => {
                let same_outer = outer.iter().enumerate().all(|(i, d)| {
                    let own = meta.var_dim(*var, i as i64);
                    meta.env().known_equal(&own, d)
                });
                if !same_outer {
                    return Value::Unknown;
                }
                let mut tail = known.as_ref().clone();
                tail.extend(inner.iter().cloned());
                out_shape(
                    meta,
                    &x,
                    Shape::of_sizes(*var, &Rc::new(tail)),
                    x.dtype,
                    x.device.clone(),
                    "unpack",
                )
            }
            shape => {
                let Some(middle) = shape.items() else {
                    return Value::Unknown;
                };
                let mut all = outer.to_vec();
                for d in &middle {
                    match d {
                        Value::Int(d) => all.push(d.clone()),
                        _ => return Value::Unknown,
                    }
                }
                all.extend(inner.iter().cloned());
                out_known(meta, &x, all, x.dtype, x.device.clone(), "unpack")
            }
        };
        out.push(value);
    }
    Value::list(out)
}
