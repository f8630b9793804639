//! Tensor indexing: ints, slices, `None`, `...`, index tensors and boolean masks.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::ops::{check_inputs, out_known};
use super::shape::broadcast;
use crate::code::Code;
use crate::interp::Interp;
use crate::value::{DType, Device, Tensor, Value};

pub(crate) fn index_tensor(
    interp: &mut Interp<'_>,
    t: &Rc<Tensor>,
    index: &[Value],
    range: TextRange,
) -> Value {
    let mut entries: Vec<Value> = Vec::new();
    for v in index {
        match v {
            // A tuple is the whole index (`x[idx]`, `idx = (1, 3)`); one
            // among several (`x[:, (-1,), :]`) is an index sequence, like a list.
            Value::Tuple(items) if index.len() == 1 => entries.extend(items.iter().cloned()),
            // torch (like old numpy) reads a short list holding sequences,
            // tensors or None as a tuple: x[[[0, 1], [2, 3]]] is x[[0, 1], [2, 3]]
            Value::List(items)
                if index.len() == 1 && {
                    let items = items.borrow();
                    items.len() < 32
                        && items.iter().any(|v| {
                            matches!(
                                v,
                                Value::List(_) | Value::Tuple(_) | Value::Tensor(_) | Value::None
                            )
                        })
                } =>
            {
                entries.extend(items.borrow().iter().cloned());
            }
            other => entries.push(other.clone()),
        }
    }
    // Index tensors may live on the CPU whatever device the indexed tensor
    // is on (torch moves them): only an index on another accelerator clashes.
    let mut all = vec![Value::Tensor(t.clone())];
    all.extend(entries.iter().map(|e| match e {
        Value::Tensor(i) if i.device == Some(Device::Cpu) => Value::Tensor(Rc::new(Tensor {
            device: None,
            ..(**i).clone()
        })),
        other => other.clone(),
    }));
    // Basic indexing is `aten.slice`/`aten.select` to torch, advanced `aten.index`.
    let basic = entries.iter().all(|e| {
        matches!(
            e,
            Value::Slice(..) | Value::Int(_) | Value::None | Value::Ellipsis
        )
    });
    let op = if basic {
        "slice.Tensor"
    } else {
        "index.Tensor"
    };
    let Some(device) = check_inputs(interp, &Args::new(all, Vec::new()), op, range) else {
        return Value::Unknown;
    };
    let device = device.or_else(|| t.device.clone());
    let Some(dims) = interp.dims(t) else {
        let shape = interp.fresh_rank_var();
        return Value::Tensor(Rc::new(Tensor {
            shape,
            op: Rc::from("index"),
            made_at: None,
            ..(**t).clone()
        }));
    };
    let consumed = entries
        .iter()
        .map(|e| match e {
            Value::None | Value::Ellipsis => 0,
            Value::Tensor(ix) if ix.dtype == Some(DType::Bool) => {
                interp.dims(ix).map(|d| d.len()).unwrap_or(1)
            }
            _ => 1,
        })
        .sum::<usize>();
    if consumed > dims.len() {
        // A 0-d tensor indexed by one integer has torch's advice on `item`.
        let message = if dims.is_empty() && matches!(index, [Value::Int(_)]) {
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number".to_string()
        } else {
            format!("too many indices for tensor of dimension {}", dims.len())
        };
        interp.report(range, Code::IndexOutOfRange, message);
        return Value::Unknown;
    }
    let mut out: Vec<Dim> = Vec::new();
    let mut pos = 0usize;
    // Advanced indices: (output position, broadcast shape part).
    let mut advanced: Vec<(usize, Vec<Dim>)> = Vec::new();
    let mut adv_separated = false;
    let mut last_adv_end: Option<usize> = None;
    for e in &entries {
        match e {
            Value::None => out.push(Dim::konst(1)),
            Value::Ellipsis => {
                let remaining_after = consumed_after(&entries, e, interp);
                let take = dims.len().saturating_sub(pos + remaining_after);
                out.extend(dims[pos..pos + take].iter().cloned());
                pos += take;
            }
            Value::Int(i) => {
                let size = &dims[pos];
                if let (Some(i), Some(s)) = (i.as_const(), interp.env.value(size))
                    && (i >= s || i < -s)
                {
                    let message =
                        format!("index {i} is out of bounds for dimension {pos} with size {s}");
                    interp.report(range, Code::IndexOutOfRange, message);
                    return Value::Unknown;
                }
                pos += 1;
            }
            Value::Slice(lo, hi, step) => {
                let len = slice_len(interp, &dims[pos], lo, hi, step, range);
                let Some(len) = len else {
                    return Value::Unknown;
                };
                out.push(len);
                pos += 1;
            }
            Value::Tensor(ix) if ix.dtype == Some(DType::Bool) => {
                let k = interp.dims(ix).map(|d| d.len()).unwrap_or(1);
                if let Some(md) = interp.dims(ix) {
                    for (j, (m, d)) in md.iter().zip(&dims[pos..]).enumerate() {
                        if interp.env.known_different(m, d) {
                            let message = format!(
                                "The shape of the mask {} at index {j} does not match the shape of the indexed tensor {} at index {}",
                                interp.fmt_dims(&md),
                                interp.fmt_dims(&dims),
                                pos + j
                            );
                            interp.report(range, Code::IndexShape, message);
                            return Value::Unknown;
                        }
                    }
                }
                let n = interp.env.anonymous();
                note_adv(
                    &mut advanced,
                    &mut adv_separated,
                    &mut last_adv_end,
                    out.len(),
                    vec![n],
                );
                pos += k;
            }
            Value::Tensor(ix) => {
                if let Some(dt) = ix.dtype
                    && dt.is_floating()
                {
                    interp.report(
                        range,
                        Code::DtypeMismatch,
                        "tensors used as indices must be long, int, byte or bool tensors".into(),
                    );
                    return Value::Unknown;
                }
                let Some(idims) = interp.dims(ix) else {
                    return Value::Unknown;
                };
                note_adv(
                    &mut advanced,
                    &mut adv_separated,
                    &mut last_adv_end,
                    out.len(),
                    idims,
                );
                pos += 1;
            }
            Value::List(_) | Value::Tuple(_) => {
                let items = e.items().unwrap_or_default();
                if items.iter().any(|v| matches!(v, Value::Bool(_))) {
                    let n = interp.env.anonymous();
                    note_adv(
                        &mut advanced,
                        &mut adv_separated,
                        &mut last_adv_end,
                        out.len(),
                        vec![n],
                    );
                } else {
                    note_adv(
                        &mut advanced,
                        &mut adv_separated,
                        &mut last_adv_end,
                        out.len(),
                        vec![Dim::konst(items.len() as i64)],
                    );
                }
                pos += 1;
            }
            _ => {
                // An index we cannot read (an unknown int or object): the rank
                // depends on what it is.
                let shape = interp.fresh_rank_var();
                return Value::Tensor(Rc::new(Tensor {
                    shape,
                    op: Rc::from("index"),
                    made_at: None,
                    ..(**t).clone()
                }));
            }
        }
    }
    out.extend(dims[pos..].iter().cloned());
    if !advanced.is_empty() {
        let mut shape: Vec<Dim> = Vec::new();
        for (_, part) in &advanced {
            match broadcast(interp, &shape, part) {
                Ok(s) => shape = s,
                Err(_) => {
                    let shapes: Vec<String> =
                        advanced.iter().map(|(_, p)| interp.fmt_dims(p)).collect();
                    interp.report(
                        range,
                        Code::IndexShape,
                        format!(
                            "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                            shapes.join(", ")
                        ),
                    );
                    return Value::Unknown;
                }
            }
        }
        let at = if adv_separated { 0 } else { advanced[0].0 };
        let at = at.min(out.len());
        let tail = out.split_off(at);
        out.extend(shape);
        out.extend(tail);
    }
    out_known(interp, t, out, t.dtype, device, "index")
}

fn note_adv(
    advanced: &mut Vec<(usize, Vec<Dim>)>,
    separated: &mut bool,
    last_end: &mut Option<usize>,
    at: usize,
    shape: Vec<Dim>,
) {
    if let Some(end) = last_end
        && *end != at
    {
        *separated = true;
    }
    *last_end = Some(at);
    advanced.push((at, shape));
}

/// How many dims the entries after the ellipsis consume.
fn consumed_after(entries: &[Value], ellipsis: &Value, interp: &Interp<'_>) -> usize {
    let start = entries
        .iter()
        .position(|e| std::ptr::eq(e, ellipsis))
        .map(|i| i + 1)
        .unwrap_or(entries.len());
    entries[start..]
        .iter()
        .map(|e| match e {
            Value::None | Value::Ellipsis => 0,
            Value::Tensor(ix) if ix.dtype == Some(DType::Bool) => {
                interp.dims(ix).map(|d| d.len()).unwrap_or(1)
            }
            _ => 1,
        })
        .sum()
}

/// The length of `size[lo:hi:step]`.
fn slice_len(
    interp: &mut Interp<'_>,
    size: &Dim,
    lo: &Value,
    hi: &Value,
    step: &Value,
    range: TextRange,
) -> Option<Dim> {
    let step = match step {
        Value::None => 1,
        Value::Int(d) => d.as_const()?,
        _ => return Some(interp.env.anonymous()),
    };
    if step <= 0 {
        interp.report(
            range,
            Code::IndexOutOfRange,
            "step must be greater than zero".into(),
        );
        return None;
    }
    let bound = |interp: &mut Interp<'_>, v: &Value, default: Dim| -> Option<Dim> {
        match v {
            Value::None => Some(default),
            Value::Int(d) => match d.as_const() {
                Some(n) if n < 0 => Some(size.add(&Dim::konst(n))),
                // `x[:, :-w]` with a size `w`: negative whatever its value,
                // so counted from the end as a constant would be.
                None if d.never_positive() && d.as_const() != Some(0) => Some(size.add(d)),
                _ => Some(d.clone()),
            },
            Value::Opaque(name) => Some(interp.opaque_symbol(name)),
            _ => None,
        }
    };
    let (Some(start), Some(stop)) = (
        bound(interp, lo, Dim::konst(0)),
        bound(interp, hi, size.clone()),
    ) else {
        return Some(interp.env.anonymous());
    };
    // Clamp to [0, size] where the values are known.
    let s = interp.env.value(size);
    let clamp = |d: Dim| match (d.as_const(), s) {
        (Some(n), Some(s)) => Dim::konst(n.clamp(0, s)),
        (Some(n), None) if n < 0 => Dim::konst(0),
        _ => d,
    };
    let (start, stop) = (clamp(start), clamp(stop));
    let len = stop.sub(&start);
    let len = match len.as_const() {
        Some(n) if n <= 0 => Dim::konst(0),
        Some(n) => Dim::konst((n + step - 1) / step),
        None => {
            if step == 1 {
                len
            } else {
                len.add(&Dim::konst(step - 1))
                    .floordiv(&Dim::konst(step))
                    .unwrap_or_else(|| Dim::konst(0))
            }
        }
    };
    Some(len)
}

/// `x[idx] = value`: the value must broadcast to the indexed region.
pub(crate) fn index_put(
    interp: &mut Interp<'_>,
    t: &Rc<Tensor>,
    index: &[Value],
    value: &Value,
    range: TextRange,
) {
    let region = index_tensor(interp, t, index, range);
    if let (Value::Tensor(r), Value::Tensor(v)) = (&region, value)
        && let (Some(rd), Some(vd)) = (interp.dims(r), interp.dims(v))
    {
        // The value is expanded to the region (torch's `copy_`).
        if let Some(message) = crate::rules::ops::expand_error(interp, &vd, &rd) {
            interp.report(range, Code::BroadcastShape, message);
        } else if let Err(message) = broadcast(interp, &rd, &vd) {
            interp.report(range, Code::BroadcastShape, message);
        }
    }
}
