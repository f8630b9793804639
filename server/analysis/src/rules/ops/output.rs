//! The results of ops: tensors of known shape or unknown rank, and the memory order they keep.

use std::rc::Rc;

use shapels_shapes::Dim;

use super::registry::{Family, OpDef};
use crate::rules::Args;
use crate::rules::meta::Meta;
use crate::rules::tail::TailResult;
use crate::value::{DType, Device, Shape, Tensor, Value};

/// The memory order of an op's result: reordering ops permute it, ops that
/// keep the shape keep it (pointwise ops preserve the input's stride order),
/// `contiguous` and everything else make a plain tensor.
pub(super) fn track_layout(meta: &dyn Meta, name: &str, args: &Args, result: Value) -> Value {
    let Value::Tensor(out) = &result else {
        return result;
    };
    let Some(Value::Tensor(input)) = args.pos.first() else {
        return crate::rules::layout::with_layout(result, None);
    };
    let (Some(in_rank), Some(_)) = (meta.rank(input), meta.rank(out)) else {
        return crate::rules::layout::with_layout(result, None);
    };
    if let Some(p) = crate::rules::layout::permutation(name, args, in_rank) {
        let layout = crate::rules::layout::permuted(input.layout.as_deref(), &p);
        return crate::rules::layout::with_layout(result, layout);
    }
    // `expand` views its input's memory, repeating it along grown dims.
    if matches!(name, "expand" | "expand_as") {
        let sizes = |t: &Tensor| -> Option<Vec<i64>> {
            meta.dims(t)?.iter().map(|d| meta.env().value(d)).collect()
        };
        let layout = match (sizes(input), sizes(out)) {
            (Some(a), Some(b)) => crate::rules::layout::expanded(&a, input.layout.as_deref(), &b),
            _ => None,
        };
        return crate::rules::layout::with_layout(result, layout);
    }
    // A contiguous input leaves nothing to keep: only a permutation (above)
    // makes a layout, and the dims need not be compared.
    if input.layout.is_none() {
        return crate::rules::layout::with_layout(result, None);
    }
    let (Some(in_dims), Some(out_dims)) = (meta.dims(input), meta.dims(out)) else {
        return crate::rules::layout::with_layout(result, None);
    };
    // Pointwise ops keep a dense order; the strides of an expanded or
    // sliced view stay with that view, not with what is computed from it.
    let dense_order = matches!(
        input.layout.as_deref(),
        Some(crate::rules::layout::Layout::Order(_))
    );
    let keeps = name != "contiguous"
        && dense_order
        && in_dims.len() == out_dims.len()
        && in_dims
            .iter()
            .zip(&out_dims)
            .all(|(a, b)| meta.env().known_equal(a, b));
    crate::rules::layout::with_layout(result, if keeps { input.layout.clone() } else { None })
}

/// What an op with no rule (or a rank not known) returns: a tensor of
/// unknown shape on the input's device.
pub(super) fn unknown_rank_rule(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> Value {
    let result = crate::rules::tail::unknown_rank_op(meta, name, x, args)
        .or_else(|| pieces_of_unknown_shape(meta, name, args));
    if let Some(shape) = result {
        // bucket indices are int64 (int32 with out_int32=True)
        let dtype = match name {
            "bucketize" | "searchsorted" if args.flag(99, "out_int32", false) == Some(true) => {
                Some(DType::Int32)
            }
            "bucketize" | "searchsorted" | "argmax" | "argmin" => Some(DType::Int64),
            // Sums of bools and integers are int64; a mean or a spread of
            // them is refused, and `logsumexp` gives the default float.
            "sum" | "prod" | "cumsum" | "cumprod" => {
                crate::rules::creation::dtype_or(args, crate::rules::dtype::sum_dtype(x.dtype))
            }
            "mean" | "logsumexp" => crate::rules::creation::dtype_or(
                args,
                x.dtype.filter(|d| d.is_floating() || d.is_complex()),
            ),
            "std" | "var" | "norm" => x
                .dtype
                .filter(|d| d.is_floating() || d.is_complex())
                .map(DType::to_real),
            _ => x.dtype,
        };
        return match shape {
            TailResult::One(shape) => out_shape(meta, x, shape, dtype, device, name),
            TailResult::Pair(shape) => {
                let v = out_shape(meta, x, shape.clone(), x.dtype, device.clone(), name);
                let i = out_shape(meta, x, shape, Some(DType::Int64), device, name);
                Value::tuple(vec![v, i])
            }
            TailResult::Alike(shape) => Value::Many(
                Rc::new(out_shape(meta, x, shape, x.dtype, device, name)),
                None,
            ),
            TailResult::Many(shapes) => Value::tuple(
                shapes
                    .into_iter()
                    .map(|s| out_shape(meta, x, s, x.dtype, device.clone(), name))
                    .collect(),
            ),
        };
    }
    // Pieces nobody can count (`x.split(k, dim=1)` with `k` unread) are
    // unknown, each of its own: one tensor here would be unpacked into rows
    // that share one shape, and a layer after the first piece would give
    // that shape to the others.
    if OpDef::of(name).is_some_and(|def| def.family == Family::Split) {
        return Value::Many(Rc::new(Value::Unknown), None);
    }
    let known = OpDef::of(name).is_some_and(|def| def.unranked_keeps_dtype);
    let shape = meta.fresh_rank_var();
    Value::Tensor(Rc::new(Tensor {
        shape,
        // an op without a rule may change the dtype too (angle, view_as_real, bucketize)
        dtype: if known { x.dtype } else { None },
        device,
        op: Rc::from(name),
        made_at: None,
        is_param: false,
        ..(**x).clone()
    }))
}

/// What an op with several results gives on a tensor whose shape nothing
/// fixes, where `tail::unknown_rank_op` could say nothing: values and int64
/// indices of one unknown shape (`_, idx = torch.topk(x, k)` with `k`
/// unread, `x.max(dim)`), as many pieces as `split` lists, each of its own
/// unknown shape, and `unbind`'s pieces, which share one shape however
/// many there are. `None` for other ops, and for pieces nobody can count.
fn pieces_of_unknown_shape(meta: &mut dyn Meta, name: &str, args: &Args) -> Option<TailResult> {
    let pair = match name {
        "topk" | "sort" | "kthvalue" | "mode" | "cummax" | "cummin" => true,
        "max" | "min" | "median" | "nanmedian" => {
            matches!(args.get(1, "dim"), Some(v) if !matches!(v, Value::Tensor(_)))
        }
        _ => false,
    };
    if pair {
        return Some(TailResult::Pair(meta.fresh_rank_var()));
    }
    if !OpDef::of(name).is_some_and(|def| def.family == Family::Split) {
        return None;
    }
    let count = match args.get(1, "split_size_or_sections") {
        Some(sections @ (Value::List(_) | Value::Tuple(_))) => sections.items().map(|s| s.len()),
        _ => None,
    };
    match count {
        Some(n) if n <= 64 => Some(TailResult::Many(
            (0..n).map(|_| meta.fresh_rank_var()).collect(),
        )),
        _ if name == "unbind" => Some(TailResult::Alike(meta.fresh_rank_var())),
        _ => None,
    }
}

/// The output tensor of an op on `x`: fake or real as the mode makes it.
pub(crate) fn out_shape(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    shape: Shape,
    dtype: Option<DType>,
    device: Option<Device>,
    op: &str,
) -> Value {
    let shape = meta.resolve_shape(&shape);
    let mut t = meta.new_tensor(shape, dtype, device, op);
    if !meta.mode().fake {
        t.origin = x.origin;
    }
    Value::Tensor(Rc::new(t))
}

pub(crate) fn out_known(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    dims: Vec<Dim>,
    dtype: Option<DType>,
    device: Option<Device>,
    op: &str,
) -> Value {
    let dims = dims.into_iter().map(|d| meta.bounded(d)).collect();
    out_shape(meta, x, Shape::known(dims), dtype, device, op)
}

/// A result tensor whose rank is not known.
pub(crate) fn out_var(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    dtype: Option<DType>,
    device: Option<Device>,
    op: &str,
) -> Value {
    let shape = meta.fresh_rank_var();
    out_shape(meta, x, shape, dtype, device, op)
}
