//! Views and reshapes: `view`, `reshape`, `flatten`, `squeeze`, `permute`, `expand`, `repeat`.

use std::rc::Rc;

use shapels_shapes::Dim;

use super::OpCall;
use super::output::{out_known, out_var, unknown_rank_rule};
use crate::code::Code;
use crate::rules::check::{RuleResult, Stop, check, raise};
use crate::rules::meta::Meta;
use crate::rules::shape::{numel, wrap_dim};
use crate::value::{DType, Device, Tensor, Value};

/// `view`, `reshape`.
pub(super) fn view_or_reshape(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let items = args.varargs(1);
    if let [Value::DType(d)] = items.as_slice() {
        // view(dtype) rescales the last dim by the ratio of element sizes
        let size = DType::itemsize;
        let Some(from) = x.dtype else {
            return Ok(Value::Unknown);
        };
        let (old, new) = (size(from), size(*d));
        let mut dims = dims.clone();
        if old != new {
            let Some(last) = dims.last().and_then(|l| meta.env().value(l)) else {
                return Ok(Value::Unknown);
            };
            if (last * old) % new != 0 {
                return Ok(Value::Unknown);
            }
            if let Some(l) = dims.last_mut() {
                *l = Dim::konst(last * old / new);
            }
        }
        return Ok(call.output(meta, dims, Some(*d)));
    }
    let result = reshape(meta, name, x, dims, &items, call.device);
    if matches!(&result, Err(Stop::Raise(e)) if e.code == Code::ViewStride) {
        crate::rules::fixes::offer_view_fixes(meta, &call.range);
    }
    result
}

/// `view_as`, `reshape_as`, `expand_as`, `broadcast_as`.
pub(super) fn view_as(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let Some(other) = args.tensor(1, "other") else {
        return Ok(unknown_rank_rule(meta, name, x, args, call.device));
    };
    let Some(target) = meta.dims(&other) else {
        return Ok(unknown_rank_rule(meta, name, x, args, call.device));
    };
    let items: Vec<Value> = target.iter().map(|d| Value::Int(d.clone())).collect();
    if name == "expand_as" {
        return expand(meta, x, dims, &items, call.device);
    }
    reshape(meta, name, x, dims, &items, call.device)
}

/// `flatten`.
pub(super) fn flatten(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    let rank = dims.len();
    if rank == 0 {
        return Ok(call.output(meta, vec![Dim::konst(1)], x.dtype));
    }
    let s = call.dim_arg(meta, 1, "start_dim", Some(0))?;
    let e = call.dim_arg(meta, 2, "end_dim", Some(-1))?;
    check!(
        s <= e,
        Code::DimOutOfRange,
        "flatten() has invalid args: start_dim cannot come after end_dim"
    );
    let mut shape = dims[..s].to_vec();
    shape.push(numel(&dims[s..=e]));
    shape.extend(dims[e + 1..].iter().cloned());
    Ok(call.output(meta, shape, x.dtype))
}

/// `unflatten`.
pub(super) fn unflatten(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let d = call.dim_arg(meta, 1, "dim", None)?;
    // Sizes of unknown count (`sizes=timestep.shape` of a tensor of
    // unknown rank) make a tensor of unknown rank, not one without dim `d`.
    let Some(sizes) = args.get(2, "sizes").and_then(|v| v.items()) else {
        return Ok(unknown_rank_rule(meta, call.name, x, args, call.device));
    };
    let mut new = meta.size_dims(&sizes);
    let inferred: Vec<usize> = (0..new.len())
        .filter(|i| meta.env().value(&new[*i]) == Some(-1))
        .collect();
    let mismatch = |meta: &mut dyn Meta, new: &[Dim]| {
        format!(
            "unflatten: Provided sizes {} don't multiply up to the size of dim {d} ({}) in the input tensor",
            meta.fmt_dims(new),
            meta.fmt_dim(&dims[d])
        )
    };
    if inferred.len() > 1 {
        // torch's own message is cut short here: its view inference
        // raises inside unflatten, which reports only that.
        return raise(Code::ViewSize, "unflatten got an unexpected error:".into());
    }
    if let [pos] = inferred[..] {
        let known: Vec<Dim> = new
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != pos)
            .map(|(_, n)| n.clone())
            .collect();
        let known = numel(&known);
        if let (Some(total), Some(part)) = (meta.env().value(&dims[d]), meta.env().value(&known))
            && total.checked_rem(part) != Some(0)
        {
            let message = mismatch(meta, &new);
            return raise(Code::ViewSize, message);
        }
        new[pos] = dims[d]
            .floordiv(&known)
            .unwrap_or_else(|| meta.env_mut().anonymous());
    } else if meta.env().known_different(&numel(&new), &dims[d]) {
        let message = mismatch(meta, &new);
        return raise(Code::ViewSize, message);
    }
    let mut shape = dims[..d].to_vec();
    shape.extend(new);
    shape.extend(dims[d + 1..].iter().cloned());
    Ok(call.output(meta, shape, x.dtype))
}

/// `squeeze`.
pub(super) fn squeeze(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    let targets: Vec<usize> = match args.get(1, "dim") {
        None | Some(Value::None) => (0..rank).collect(),
        Some(v) => {
            let items = v.items().unwrap_or_else(|| vec![v.clone()]);
            let mut out = Vec::new();
            for item in items {
                match &item {
                    Value::Int(d) if d.as_const().is_some() => {
                        match wrap_dim(d.as_const().unwrap_or(0), rank) {
                            Ok(i) => out.push(i),
                            Err(message) => {
                                return raise(Code::DimOutOfRange, message);
                            }
                        }
                    }
                    _ => return Ok(unknown_rank_rule(meta, name, x, args, call.device)),
                }
            }
            out
        }
    };
    let mut shape = Vec::new();
    for (i, d) in dims.iter().enumerate() {
        if targets.contains(&i) {
            match meta.env().value(d) {
                Some(1) => continue,
                Some(_) => {}
                // Whether a symbolic size is 1 decides the rank:
                // unknown. Code squeezes a dim it expects to be 1, so
                // keeping a size nothing says is not 1 would guess.
                None if !meta.env().known_different(d, &Dim::konst(1)) => {
                    return Ok(unknown_rank_rule(meta, name, x, args, call.device));
                }
                None => {}
            }
        }
        shape.push(d.clone());
    }
    Ok(call.output(meta, shape, x.dtype))
}

/// `unsqueeze`.
pub(super) fn unsqueeze(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    let d = match args.int(1, "dim") {
        Some(d) => match wrap_dim(d, rank + 1) {
            Ok(d) => d,
            Err(message) => {
                return raise(Code::DimOutOfRange, message);
            }
        },
        None => return Ok(unknown_rank_rule(meta, name, x, args, call.device)),
    };
    let mut shape = dims.clone();
    shape.insert(d, Dim::konst(1));
    Ok(call.output(meta, shape, x.dtype))
}

/// `permute`.
pub(super) fn permute(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    let order = args.varargs(1);
    check!(
        order.len() == rank,
        Code::PermuteDims,
        "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {rank} is not equal to len(dims) = {}",
        order.len()
    );
    let mut shape = Vec::new();
    let mut seen = Vec::new();
    for v in &order {
        let Some(i) = (match v {
            Value::Int(d) => d.as_const(),
            _ => None,
        }) else {
            return Ok(unknown_rank_rule(meta, name, x, args, call.device));
        };
        match wrap_dim(i, rank) {
            Ok(i) if !seen.contains(&i) => {
                seen.push(i);
                shape.push(dims[i].clone());
            }
            Ok(_) => {
                return raise(
                    Code::PermuteDims,
                    "permute(): duplicate dims are not allowed.".into(),
                );
            }
            Err(message) => {
                return raise(Code::DimOutOfRange, message);
            }
        }
    }
    Ok(call.output(meta, shape, x.dtype))
}

/// `transpose`, `swapaxes`, `swapdims`.
pub(super) fn transpose(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    let a = call.dim_arg(meta, 1, "dim0", None)?;
    let b = call.dim_arg(meta, 2, "dim1", None)?;
    let mut shape = dims.clone();
    shape.swap(a, b);
    Ok(call.output(meta, shape, x.dtype))
}

/// `t`, `__attr_T`, `__attr_mT`, `__attr_H`, `__attr_mH`, `adjoint`.
pub(super) fn matrix_transpose(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, x, dims) = (call.name, &call.x, &call.dims);
    let rank = dims.len();
    let mut shape = dims.clone();
    match name {
        "t" if rank > 2 => {
            return raise(
                Code::DimOutOfRange,
                format!(
                    "{}() expects a tensor with <= 2 dimensions, but self is {rank}D",
                    if call.inplace { "t_" } else { "t" }
                ),
            );
        }
        "t" | "__attr_T" | "__attr_H" => shape.reverse(),
        _ => {
            check!(
                rank >= 2,
                Code::DimOutOfRange,
                "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
            );
            shape.swap(rank - 1, rank - 2);
        }
    }
    Ok(call.output(meta, shape, x.dtype))
}

/// `movedim`, `moveaxis`.
pub(super) fn movedim(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    let srcs = args
        .get(1, "source")
        .map(|v| v.items().unwrap_or_else(|| vec![v.clone()]))
        .unwrap_or_default();
    let dsts = args
        .get(2, "destination")
        .map(|v| v.items().unwrap_or_else(|| vec![v.clone()]))
        .unwrap_or_default();
    for v in srcs.iter().chain(&dsts) {
        if let Value::Int(d) = v
            && let Some(i) = d.as_const()
            && let Err(message) = wrap_dim(i, rank)
        {
            return raise(Code::DimOutOfRange, message);
        }
    }
    let to_idx = |v: &Value| match v {
        Value::Int(d) => d.as_const().and_then(|i| wrap_dim(i, rank).ok()),
        _ => None,
    };
    let (Some(src), Some(dst)) = (
        srcs.iter().map(to_idx).collect::<Option<Vec<_>>>(),
        dsts.iter().map(to_idx).collect::<Option<Vec<_>>>(),
    ) else {
        return Ok(unknown_rank_rule(meta, name, x, args, call.device));
    };
    if src.len() != dst.len() {
        return Ok(Value::Unknown);
    }
    let mut order: Vec<Option<usize>> = vec![None; rank];
    for (s, d) in src.iter().zip(&dst) {
        order[*d] = Some(*s);
    }
    let mut rest = (0..rank).filter(|i| !src.contains(i));
    let shape: Vec<Dim> = order
        .iter()
        .map(|o| dims[o.unwrap_or_else(|| rest.next().unwrap_or(0))].clone())
        .collect();
    Ok(call.output(meta, shape, x.dtype))
}

/// `expand`, `broadcast_to`.
pub(super) fn expand_to(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let items = args.varargs(1);
    expand(meta, x, dims, &items, call.device)
}

/// `repeat`, `tile`.
pub(super) fn repeat(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    let reps = meta.size_dims(&args.varargs(1));
    check!(
        name != "repeat" || reps.len() >= rank,
        Code::RepeatDims,
        "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
    );
    // `tile` pads the shorter of the two with leading 1s; `repeat` has
    // at least as many repeats as dims (checked above).
    let n = reps.len().max(rank);
    let mut padded = vec![Dim::konst(1); n - rank];
    padded.extend(dims.iter().cloned());
    let mut r = vec![Dim::konst(1); n - reps.len()];
    r.extend(reps);
    let shape: Vec<Dim> = padded.iter().zip(&r).map(|(a, b)| a.mul(b)).collect();
    if r.iter().any(|r| meta.env().value(r).is_some_and(|v| v < 0))
        && let Some(at) = shape
            .iter()
            .position(|d| meta.env().value(d).is_some_and(|v| v < 0))
    {
        let message = crate::rules::creation::negative_size_message(meta, name, &shape, at);
        return raise(Code::NegativeSize, message);
    }
    Ok(call.output(meta, shape, x.dtype))
}

/// `repeat_interleave`.
pub(super) fn repeat_interleave(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let reps = args.get(1, "repeats").cloned().unwrap_or(Value::Unknown);
    // A tensor of repeats: one per slice along `dim` (or per element of
    // the flattened input), or one for all; how many there are in all
    // depends on its values.
    if let Value::Tensor(r) = &reps
        && let Some(rd) = meta.dims(r)
    {
        let flat = matches!(args.get(2, "dim"), None | Some(Value::None));
        let (d, along) = if flat {
            (0, numel(dims))
        } else {
            let d = call.dim_arg(meta, 2, "dim", None)?;
            (d, dims[d].clone())
        };
        match rd.as_slice() {
            [n] if !meta.is_one(n) && meta.env().known_different(n, &along) => {
                let message = format!(
                    "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({d}) = {}",
                    meta.fmt_dim(n),
                    meta.fmt_dim(&along)
                );
                return raise(Code::RepeatDims, message);
            }
            [] | [_] => {}
            _ => {
                return raise(
                    Code::RepeatDims,
                    "repeats must be 0-dim or 1-dim tensor".into(),
                );
            }
        }
        let total = meta.env_mut().anonymous();
        let shape = if flat {
            vec![total]
        } else {
            let mut shape = dims.clone();
            shape[d] = total;
            shape
        };
        return Ok(call.output(meta, shape, x.dtype));
    }
    let Value::Int(k) = reps else {
        return Ok(out_var(meta, x, x.dtype, call.device, name));
    };
    match args.get(2, "dim") {
        None | Some(Value::None) => {
            let shape = vec![numel(dims).mul(&k)];
            Ok(call.output(meta, shape, x.dtype))
        }
        _ => {
            let d = call.dim_arg(meta, 2, "dim", None)?;
            let mut shape = dims.clone();
            shape[d] = shape[d].mul(&k);
            Ok(call.output(meta, shape, x.dtype))
        }
    }
}

/// `rot90`.
pub(super) fn rot90(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let rank = dims.len();
    // `rot90(input, k=1, dims=(0, 1))`: a quarter turn in the plane of
    // two dims swaps their sizes.
    let plane = match args.get(2, "dims") {
        None => vec![0, 1],
        Some(v) => {
            let Some(items) = v.items() else {
                return Ok(Value::Unknown);
            };
            let mut plane = Vec::new();
            for item in items {
                match item {
                    Value::Int(d) if d.as_const().is_some() => {
                        plane.push(d.as_const().unwrap_or(0))
                    }
                    _ => return Ok(Value::Unknown),
                }
            }
            plane
        }
    };
    if plane.len() != 2 {
        let message = format!(
            "expected total rotation dims == 2, but got dims = {}",
            plane.len()
        );
        return raise(Code::PermuteDims, message);
    }
    if rank < 2 {
        let message = format!("expected total dims >= 2, but got total dims = {rank}");
        return raise(Code::DimOutOfRange, message);
    }
    let (a, b) = match (wrap_dim(plane[0], rank), wrap_dim(plane[1], rank)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(message), _) | (_, Err(message)) => return raise(Code::DimOutOfRange, message),
    };
    if a == b {
        let message = format!(
            "expected rotation dims to be different, but got dim0 = {} and dim1 = {}",
            plane[0], plane[1]
        );
        return raise(Code::PermuteDims, message);
    }
    let Some(k) = args.int_or(1, "k", 1) else {
        return Ok(Value::Unknown);
    };
    let mut shape = dims.clone();
    if k.rem_euclid(2) == 1 {
        shape.swap(a, b);
    }
    Ok(call.output(meta, shape, x.dtype))
}

fn reshape(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    dims: &[Dim],
    items: &[Value],
    device: Option<Device>,
) -> RuleResult {
    let mut new = meta.size_dims(items);
    let total = meta.numel_or_unknown(dims);
    let shown = |meta: &dyn Meta, new: &[Dim]| {
        let parts: Vec<String> = new.iter().map(|d| meta.fmt_dim(d)).collect();
        format!("[{}]", parts.join(", "))
    };
    // torch reads the sizes left to right: a second -1, or another
    // negative size, fails before the element count is looked at.
    let mut infer = None;
    for (i, d) in new.iter().enumerate() {
        match meta.env().value(d) {
            Some(-1) if infer.is_some() => {
                return raise(Code::ViewSize, "only one dimension can be inferred".into());
            }
            Some(-1) => infer = Some(i),
            Some(n) if n < 0 => {
                let message = format!(
                    "invalid shape dimension {n} at index {i} of shape {}",
                    shown(meta, &new)
                );
                return raise(Code::ViewSize, message);
            }
            _ => {}
        }
    }
    if let Some(i) = infer {
        let others: Vec<Dim> = new
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, d)| d.clone())
            .collect();
        let rest = meta.numel_or_unknown(&others);
        match (meta.env().value(&total), meta.env().value(&rest)) {
            (Some(0), Some(0)) => {
                let message = format!(
                    "cannot reshape tensor of 0 elements into shape {} because the \
                     unspecified dimension size -1 can be any value and is ambiguous",
                    shown(meta, &new)
                );
                return raise(Code::ViewSize, message);
            }
            (Some(t), Some(r)) => {
                if r == 0 || t % r != 0 {
                    let message = format!(
                        "shape '{}' is invalid for input of size {t}",
                        shown(meta, &new)
                    );
                    return raise(Code::ViewSize, message);
                }
                new[i] = Dim::konst(t / r);
            }
            _ => {
                let total = meta.env().resolve(&total);
                let rest = meta.env().resolve(&rest);
                new[i] = match total.floordiv(&rest) {
                    Some(q) if q.mul(&rest) == total => q,
                    // `x.reshape(B, T, H, -1, 2)` of `[B, T, H, D]`: the other
                    // sizes cancel, and torch guards that 2 divides `D`, as
                    // the view needs; it is `D // 2`.
                    _ if let Some((reduced, c)) = total.cancel_term(&rest)
                        && reduced.as_const().is_none()
                        && let Some(q) = reduced.floordiv(&Dim::konst(c)) =>
                    {
                        meta.env_mut().assume_divisible(&reduced, &Dim::konst(c));
                        meta.env().resolve(&q)
                    }
                    // `q.view(B, T, n_head, -1)` of `[B, T, n_state]`: the
                    // sizes both hold cancel, and torch guards that `n_head`
                    // divides `n_state`; it is `n_state // n_head` (a fresh
                    // size would rename `n_state` to a product of it). Not
                    // when the quotient holds a size nobody named: `?`
                    // says less than the fresh size below.
                    _ if let Some((num, den)) = total.cancel_shared(&rest)
                        && let Some(q) = num.floordiv(&den)
                        && !meta.env().has_anonymous(&q) =>
                    {
                        meta.env_mut().assume_divisible(&num, &den);
                        meta.env().resolve(&q)
                    }
                    _ => {
                        // numel / rest is not a clean expression: a fresh size,
                        // learned later if a use pins it down.
                        let fresh = if i == 0 {
                            meta.env_mut().weak_symbol("N")
                        } else {
                            meta.env_mut().anonymous()
                        };
                        let _ = meta.env_mut().unify(&fresh.mul(&rest), &total);
                        meta.env().resolve(&fresh)
                    }
                };
            }
        }
    } else {
        let want = meta.numel_or_unknown(&new);
        // Sizes are positive: `view(B, 4, H*W)` of what an earlier view
        // showed to hold `3*B*H*W` elements fails for every input.
        if meta.env().differ_for_positive_sizes(&want, &total) {
            let message = format!(
                "shape '{}' is invalid for input of size {}",
                shown(meta, &new),
                meta.fmt_dim(&total)
            );
            return raise(Code::ViewSize, message);
        }
        let _ = meta.require_equal(&want, &total);
    }
    // `view` of a transposed tensor needs its dims consecutive in memory.
    if name == "view"
        && let Some(layout) = &x.layout
    {
        let sizes: Option<Vec<i64>> = dims.iter().map(|d| meta.env().value(d)).collect();
        let wanted: Option<Vec<i64>> = new.iter().map(|d| meta.env().value(d)).collect();
        if let (Some(sizes), Some(wanted)) = (sizes, wanted)
            && crate::rules::layout::view_compatible(&sizes, layout, &wanted) == Some(false)
        {
            return raise(Code::ViewStride, "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.".to_string());
        }
    }
    Ok(out_known(meta, x, new, x.dtype, device, name))
}

fn expand(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    dims: &[Dim],
    items: &[Value],
    device: Option<Device>,
) -> RuleResult {
    let sizes = meta.size_dims(items);
    if sizes.len() < dims.len() {
        let message = too_few_sizes(meta, x, dims, &sizes);
        return raise(Code::ExpandShape, message);
    }
    let lead = sizes.len() - dims.len();
    // torch checks from the last dim back: the clash it names is the last.
    if let Some(i) = (lead..sizes.len()).rev().find(|&i| {
        let (s, d) = (&sizes[i], &dims[i - lead]);
        meta.env().value(s) != Some(-1) && !meta.is_one(d) && meta.env().known_different(s, d)
    }) {
        let message = format!(
            "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
            meta.fmt_dim(&sizes[i]),
            meta.fmt_dim(&dims[i - lead]),
            meta.fmt_dims(&sizes),
            meta.fmt_dims(dims)
        );
        return raise(Code::ExpandShape, message);
    }
    // A new leading dim has no size to keep: `-1` there is an error.
    if let Some(i) = (0..lead)
        .rev()
        .find(|&i| meta.env().value(&sizes[i]).is_some_and(|v| v < 0))
    {
        let message = format!(
            "The expanded size of the tensor ({}) isn't allowed in a leading, non-existing dimension {i}",
            meta.fmt_dim(&sizes[i])
        );
        return raise(Code::ExpandShape, message);
    }
    let mut out = Vec::new();
    for (i, s) in sizes.iter().enumerate() {
        if i < lead {
            out.push(s.clone());
            continue;
        }
        let d = &dims[i - lead];
        if meta.env().value(s) == Some(-1) || meta.env().known_equal(s, d) {
            out.push(d.clone());
        } else if meta.is_one(d) {
            out.push(s.clone());
        } else if meta.env().known_different(s, d) {
            let message = format!(
                "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                meta.fmt_dim(s),
                meta.fmt_dim(d),
                meta.fmt_dims(&sizes),
                meta.fmt_dims(dims)
            );
            return raise(Code::ExpandShape, message);
        } else {
            out.push(s.clone());
        }
    }
    Ok(out_known(meta, x, out, x.dtype, device, "expand"))
}

/// torch's message for an `expand` to fewer sizes than the tensor has dims.
fn too_few_sizes(meta: &dyn Meta, x: &Tensor, dims: &[Dim], sizes: &[Dim]) -> String {
    format!(
        "expand({}{{{}}}, size={}): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
        crate::rules::dtype::legacy_type_name(x.dtype, x.device.as_ref()),
        meta.fmt_dims(dims),
        meta.fmt_dims(sizes),
        sizes.len(),
        dims.len()
    )
}

/// What torch's `expand_size` raises when the operand `x` of a product
/// (`addmm`'s `self`, `addr`'s) is expanded to the product's shape
/// `target`: no more dims than the target, and each either equal or 1.
pub(crate) fn expand_size_error(
    meta: &dyn Meta,
    x: &Tensor,
    dims: &[Dim],
    target: &[Dim],
) -> Option<String> {
    if dims.len() > target.len() {
        return Some(too_few_sizes(meta, x, dims, target));
    }
    expand_error(meta, dims, target)
}

/// What torch raises when a tensor of shape `tensor` is expanded to
/// `target` (a bias to a product's shape, a value to the region it is
/// assigned to): trailing dims aligned, each either equal or 1. Leading
/// 1s beyond the target's rank are dropped, as `copy_` does; a tensor that
/// still has more dims is left to the caller (`None`), as is any size the
/// analysis cannot compare.
pub(crate) fn expand_error(meta: &dyn Meta, tensor: &[Dim], target: &[Dim]) -> Option<String> {
    let extra = tensor.len().saturating_sub(target.len());
    if tensor[..extra].iter().any(|d| d.as_const() != Some(1)) {
        return None;
    }
    let tensor = &tensor[extra..];
    let lead = target.len() - tensor.len();
    for (j, d) in tensor.iter().enumerate().rev() {
        let i = lead + j;
        let s = &target[i];
        if d.as_const() != Some(1) && meta.env().known_different(s, d) {
            return Some(format!(
                "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                meta.fmt_dim(s),
                meta.fmt_dim(d),
                meta.fmt_dims(target),
                meta.fmt_dims(tensor)
            ));
        }
    }
    None
}
