//! The results of ops: tensors of known shape or unknown rank, and the memory order they keep.

use std::rc::Rc;

use shapels_shapes::Dim;

use super::registry::{Family, OpDef};
use crate::rules::Args;
use crate::rules::meta::Meta;
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
    if let Some(shape) = crate::rules::tail::unknown_rank_op(meta, name, x, args) {
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
            crate::rules::tail::TailResult::One(shape) => {
                out_shape(meta, x, shape, dtype, device, name)
            }
            crate::rules::tail::TailResult::Pair(shape) => {
                let v = out_shape(meta, x, shape.clone(), x.dtype, device.clone(), name);
                let i = out_shape(meta, x, shape, Some(DType::Int64), device, name);
                Value::tuple(vec![v, i])
            }
            crate::rules::tail::TailResult::Alike(shape) => Value::Many(
                Rc::new(out_shape(meta, x, shape, x.dtype, device, name)),
                None,
            ),
            crate::rules::tail::TailResult::Many(shapes) => Value::tuple(
                shapes
                    .into_iter()
                    .map(|s| out_shape(meta, x, s, x.dtype, device.clone(), name))
                    .collect(),
            ),
        };
    }
    // Values and their indices (`_, idx = torch.topk(x, k)` with `k`
    // unread, `x.max(dim)`): two tensors of one unknown shape, the indices
    // int64. One tensor here would be unpacked into two rows of the input's
    // dtype, and the indices taken for floats.
    let pair = match name {
        "topk" | "sort" | "kthvalue" | "mode" | "cummax" | "cummin" => true,
        "max" | "min" | "median" | "nanmedian" => {
            matches!(args.get(1, "dim"), Some(v) if !matches!(v, Value::Tensor(_)))
        }
        _ => false,
    };
    if pair {
        let shape = meta.fresh_rank_var();
        let values = out_shape(meta, x, shape.clone(), x.dtype, device.clone(), name);
        let indices = out_shape(meta, x, shape, Some(DType::Int64), device, name);
        return Value::tuple(vec![values, indices]);
    }
    // The pieces of a tensor of unknown rank (`rgb, alpha = x.split(k,
    // dim=1)`) are tensors each of its own unknown shape, as many as the
    // sections when they are listed; otherwise how many is not known
    // either. One tensor here would be unpacked into rows that share one
    // shape, and a layer after the first piece would give that shape to
    // the others. Only `unbind`'s pieces are alike.
    if OpDef::of(name).is_some_and(|def| def.family == Family::Split) {
        let count = match args.get(1, "split_size_or_sections") {
            Some(sections @ (Value::List(_) | Value::Tuple(_))) => {
                sections.items().map(|s| s.len())
            }
            _ => None,
        };
        return match count {
            Some(n) if n <= 64 => Value::tuple(
                (0..n)
                    .map(|_| {
                        let shape = meta.fresh_rank_var();
                        out_shape(meta, x, shape, x.dtype, device.clone(), name)
                    })
                    .collect(),
            ),
            // Every piece `unbind` gives has the same shape, whichever it is.
            _ if name == "unbind" => {
                let shape = meta.fresh_rank_var();
                let piece = out_shape(meta, x, shape, x.dtype, device, name);
                Value::Many(Rc::new(piece), None)
            }
            _ => Value::Many(Rc::new(Value::Unknown), None),
        };
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
