//! Joins and splits: `cat`, `stack` and their relatives, `split`, `chunk`, `unbind`.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::OpCall;
use super::inputs::check_inputs;
use super::output::{out_known, out_var};
use crate::code::Code;
use crate::interp::Interp;
use crate::rules::Args;
use crate::rules::check::RuleResult;
use crate::rules::shape::wrap_dim;
use crate::value::{DType, Device, Tensor, Value};

/// `unbind`.
pub(super) fn unbind(interp: &mut Interp<'_>, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    let d = call.dim_arg(interp, 1, "dim", Some(0))?;
    let Some(n) = interp.env.value(&dims[d]) else {
        return Ok(Value::Unknown);
    };
    let mut shape = dims.clone();
    shape.remove(d);
    let item = call.output(interp, shape, x.dtype);
    Ok(Value::tuple(vec![item; n.clamp(0, 1024) as usize]))
}

/// `split`, `split_with_sizes`.
pub(super) fn split_sizes(interp: &mut Interp<'_>, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    Ok(split(interp, x, dims, args, call.device, call.range))
}

/// `chunk`.
pub(super) fn chunk(interp: &mut Interp<'_>, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let d = call.dim_arg(interp, 2, "dim", Some(0))?;
    let (Some(c), Some(s)) = (args.int(1, "chunks"), interp.env.value(&dims[d])) else {
        // A symbolic size split into known chunks: equal pieces when it divides.
        if let Some(c) = args.int(1, "chunks").filter(|c| *c > 0 && *c <= 64) {
            let mut shape = dims.clone();
            shape[d] = dims[d]
                .floordiv(&Dim::konst(c))
                .unwrap_or_else(|| Dim::konst(0));
            let piece = call.output(interp, shape, x.dtype);
            return Ok(Value::tuple(vec![piece; c as usize]));
        }
        return Ok(Value::Unknown);
    };
    if c <= 0 {
        return Ok(Value::Unknown);
    }
    let piece = (s + c - 1) / c;
    let count = if piece == 0 {
        c
    } else {
        (s + piece - 1) / piece
    };
    let mut out = Vec::new();
    for i in 0..count.min(1024) {
        let mut shape = dims.clone();
        shape[d] = Dim::konst(if piece == 0 {
            0
        } else {
            piece.min(s - i * piece)
        });
        out.push(call.output(interp, shape, x.dtype));
    }
    Ok(Value::tuple(out))
}

/// `tensor_split`.
pub(super) fn tensor_split(interp: &mut Interp<'_>, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let d = call.dim_arg(interp, 2, "dim", Some(0))?;
    let (Some(c), Some(s)) = (args.int(1, "sections"), interp.env.value(&dims[d])) else {
        return Ok(Value::Unknown);
    };
    if c <= 0 {
        return Ok(Value::Unknown);
    }
    let mut out = Vec::new();
    for i in 0..c.min(1024) {
        let mut shape = dims.clone();
        shape[d] = Dim::konst(s / c + if i < s % c { 1 } else { 0 });
        out.push(call.output(interp, shape, x.dtype));
    }
    Ok(Value::tuple(out))
}

fn split(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    dims: &[Dim],
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let rank = dims.len();
    let d = match args.get(2, "dim") {
        None => 0,
        Some(Value::Int(d)) => match d.as_const().map(|d| wrap_dim(d, rank)) {
            Some(Ok(d)) => d,
            Some(Err(message)) => {
                interp.report(range, Code::DimOutOfRange, message);
                return Value::Unknown;
            }
            None => return Value::Unknown,
        },
        _ => return Value::Unknown,
    };
    let size = &dims[d];
    // torch's message names the dim as the code wrote it (`-1`).
    let written = match args.get(2, "dim") {
        Some(Value::Int(w)) => w.as_const().unwrap_or(d as i64),
        _ => d as i64,
    };
    let spec = args
        .get(1, "split_size_or_sections")
        .or(args.get(1, "split_size"))
        .cloned()
        .unwrap_or(Value::Unknown);
    let pieces: Vec<Dim> = match &spec {
        Value::Int(k) => match (interp.env.value(k), interp.env.value(size)) {
            (Some(k), Some(s)) if k > 0 => {
                let mut out = Vec::new();
                let mut left = s;
                while left > 0 && out.len() < 1024 {
                    out.push(Dim::konst(k.min(left)));
                    left -= k;
                }
                out
            }
            _ => {
                // A symbolic size split by a symbolic piece: exact when the
                // quotient is a small known number (`split(n_embd)` of `3*n_embd`).
                let q = interp.env.resolve(size).floordiv(&interp.env.resolve(k));
                match q.and_then(|q| q.as_const()) {
                    Some(n)
                        if (1..=64).contains(&n)
                            && interp.env.resolve(k).mul(&Dim::konst(n))
                                == interp.env.resolve(size) =>
                    {
                        vec![k.clone(); n as usize]
                    }
                    _ => return Value::Unknown,
                }
            }
        },
        v => match v.items() {
            Some(items) => {
                let sizes = interp.size_dims(&items);
                let total = numel_sum(&sizes);
                if interp.env.known_different(&total, size) {
                    let message = format!(
                        "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {written}), but got split_sizes={}",
                        interp.fmt_dim(size),
                        interp.fmt_dims(&sizes)
                    );
                    interp.report(range, Code::SplitSize, message);
                    return Value::Unknown;
                }
                sizes
            }
            None => return Value::Unknown,
        },
    };
    let out = pieces
        .into_iter()
        .map(|p| {
            let mut shape = dims.to_vec();
            shape[d] = p;
            out_known(interp, x, shape, x.dtype, device.clone(), "split")
        })
        .collect();
    Value::tuple(out)
}

fn numel_sum(sizes: &[Dim]) -> Dim {
    sizes.iter().fold(Dim::konst(0), |acc, d| acc.add(d))
}

pub(super) fn cat(interp: &mut Interp<'_>, name: &str, args: &Args, range: TextRange) -> Value {
    if let Some(Value::Many(element, len)) = args.get(0, "tensors") {
        return cat_many(interp, name, &element.clone(), len.clone(), args, range);
    }
    let Some(list) = args.get(0, "tensors").and_then(|v| v.items()) else {
        return Value::Unknown;
    };
    if list.is_empty() {
        // Unless it may have been filled through something not followed.
        if !interp.frame().lists_unsure {
            interp.report(
                range,
                Code::CatShape,
                if name == "stack" {
                    "stack expects a non-empty TensorList".to_string()
                } else {
                    format!("torch.{name}(): expected a non-empty list of Tensors")
                },
            );
        }
        return Value::Unknown;
    }
    let tensors: Vec<Rc<Tensor>> = list.iter().filter_map(|v| v.as_tensor().cloned()).collect();
    if tensors.len() != list.len() {
        return Value::Unknown;
    }
    let Some(device) = check_inputs(interp, args, name, range) else {
        return Value::Unknown;
    };
    let all: Option<Vec<Vec<Dim>>> = tensors.iter().map(|t| interp.dims(t)).collect();
    let dtype = tensors
        .iter()
        .try_fold(None::<DType>, |acc, t| {
            let d = t.dtype?;
            Some(Some(match acc {
                None => d,
                Some(a) => crate::rules::dtype::join(a, d),
            }))
        })
        .flatten();
    let Some(mut all) = all else {
        return match partly_known(interp, name, args, &tensors, dtype, device.clone()) {
            Some(v) => v,
            None => out_var(interp, &tensors[0], dtype, device, name),
        };
    };
    // hstack/vstack/dstack promote ranks first.
    let (op, dim_default) = match name {
        "hstack" => ("cat", if all[0].len() == 1 { 0 } else { 1 }),
        "vstack" | "row_stack" => {
            for s in all.iter_mut() {
                if s.len() < 2 {
                    s.insert(0, Dim::konst(1));
                    if s.len() < 2 {
                        s.push(Dim::konst(1));
                    }
                }
            }
            ("cat", 0)
        }
        "dstack" => {
            for s in all.iter_mut() {
                while s.len() < 3 {
                    if s.len() < 2 {
                        s.insert(0, Dim::konst(1));
                    } else {
                        s.push(Dim::konst(1));
                    }
                }
            }
            ("cat", 2)
        }
        "column_stack" => {
            // 0-d and 1-d tensors become columns [n, 1], then hstack
            for s in all.iter_mut() {
                if s.len() < 2 {
                    let n = s.pop().unwrap_or_else(|| Dim::konst(1));
                    *s = vec![n, Dim::konst(1)];
                }
            }
            ("cat", 1)
        }
        "stack" => ("stack", 0),
        _ => ("cat", 0),
    };
    let dim_key = dim_keyword(args);
    let first = all[0].clone();
    if op == "stack" {
        let d = args.int(1, dim_key).unwrap_or(dim_default);
        let d = match wrap_dim(d, first.len() + 1) {
            Ok(d) => d,
            Err(message) => {
                interp.report(range, Code::DimOutOfRange, message);
                return Value::Unknown;
            }
        };
        for (i, s) in all.iter().enumerate().skip(1) {
            if s.len() != first.len()
                || s.iter()
                    .zip(&first)
                    .any(|(a, b)| interp.env.known_different(a, b))
            {
                let message = format!(
                    "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                    interp.fmt_dims(&first),
                    interp.fmt_dims(s)
                );
                interp.report(range, Code::StackShape, message);
                return Value::Unknown;
            }
            for (a, b) in s.iter().zip(&first) {
                let _ = interp.require_equal(a, b);
            }
        }
        let mut shape = first;
        shape.insert(d, Dim::konst(all.len() as i64));
        return out_known(interp, &tensors[0], shape, dtype, device, name);
    }
    // Legacy: 1-D empty tensors are skipped.
    let all: Vec<Vec<Dim>> = all
        .into_iter()
        .filter(|s| !(s.len() == 1 && interp.env.value(&s[0]) == Some(0)))
        .collect();
    let Some(first) = all.first().cloned() else {
        return Value::Unknown;
    };
    if first.is_empty() {
        interp.report(
            range,
            Code::CatShape,
            "zero-dimensional tensor (at position 0) cannot be concatenated".into(),
        );
        return Value::Unknown;
    }
    let d = match args.int(1, dim_key).or(if args.get(1, dim_key).is_none() {
        Some(dim_default)
    } else {
        None
    }) {
        Some(d) => match wrap_dim(d, first.len()) {
            Ok(d) => d,
            Err(message) => {
                interp.report(range, Code::DimOutOfRange, message);
                return Value::Unknown;
            }
        },
        None => return Value::Unknown,
    };
    let mut total = Dim::konst(0);
    for (i, s) in all.iter().enumerate() {
        if s.len() != first.len() {
            let message = format!(
                "Tensors must have same number of dimensions: got {} and {}",
                first.len(),
                s.len()
            );
            interp.report(range, Code::CatShape, message);
            return Value::Unknown;
        }
        for (j, (a, b)) in s.iter().zip(&first).enumerate() {
            if j != d && interp.env.known_different(a, b) {
                let message = format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                    interp.fmt_dim(b),
                    interp.fmt_dim(a)
                );
                interp.report(range, Code::CatShape, message);
                return Value::Unknown;
            }
            if j != d {
                let _ = interp.require_equal(a, b);
            }
        }
        total = total.add(&s[d]);
    }
    let mut shape = first;
    shape[d] = total;
    out_known(interp, &tensors[0], shape, dtype, device, name)
}

/// `cat`/`stack` where some inputs have a rank nobody knows but one is
/// known. `stack` needs every input to have that one's shape, so the result
/// is known. `cat` needs them to agree outside the joined dim, whose total
/// is unknown (an unknown input may even be the legacy empty `[0]`, which
/// `cat` skips): the known input's shape with that dim unknown.
fn partly_known(
    interp: &mut Interp<'_>,
    name: &str,
    args: &Args,
    tensors: &[Rc<Tensor>],
    dtype: Option<DType>,
    device: Option<Device>,
) -> Option<Value> {
    let (known, dims) = tensors
        .iter()
        .find_map(|t| interp.dims(t).map(|d| (t.clone(), d)))?;
    let dim_key = dim_keyword(args);
    let d = args.int(1, dim_key).unwrap_or(0);
    match name {
        "stack" => {
            let d = wrap_dim(d, dims.len() + 1).ok()?;
            let mut out = dims;
            out.insert(d, Dim::konst(tensors.len() as i64));
            Some(out_known(interp, &known, out, dtype, device, name))
        }
        "cat" | "concat" | "concatenate" if !dims.is_empty() => {
            let d = wrap_dim(d, dims.len()).ok()?;
            let mut out = dims;
            out[d] = interp.env.anonymous();
            Some(out_known(interp, &known, out, dtype, device, name))
        }
        _ => None,
    }
}

/// `torch.concatenate` spells the dim `axis`.
/// `torch.stack(ys)` / `torch.cat(ys)` of a list of unknown length (filled
/// in a loop that runs an unknown number of times), whose one element stands
/// for every item: the element's shape with the joined dim's size unknown,
/// or `n` times the item's when the list is known to hold `n` items.
fn cat_many(
    interp: &mut Interp<'_>,
    name: &str,
    element: &Value,
    len: Option<Dim>,
    args: &Args,
    range: TextRange,
) -> Value {
    let (Value::Tensor(t), "stack" | "cat" | "concat" | "concatenate") = (element, name) else {
        return Value::Unknown;
    };
    let Some(mut dims) = interp.dims(t) else {
        return Value::Unknown;
    };
    let rank = dims.len() + usize::from(name == "stack");
    if rank == 0 {
        return Value::Unknown;
    }
    let d = match wrap_dim(args.int(1, dim_keyword(args)).unwrap_or(0), rank) {
        Ok(d) => d,
        Err(message) => {
            interp.report(range, Code::DimOutOfRange, message);
            return Value::Unknown;
        }
    };
    match (name, len) {
        ("stack", Some(n)) => dims.insert(d, n),
        ("stack", None) => dims.insert(d, interp.env.anonymous()),
        (_, Some(n)) => dims[d] = n.mul(&dims[d]),
        (_, None) => dims[d] = interp.env.anonymous(),
    }
    out_known(interp, t, dims, t.dtype, t.device.clone(), name)
}

fn dim_keyword(args: &Args) -> &'static str {
    if args.kw("axis").is_some() {
        "axis"
    } else {
        "dim"
    }
}
