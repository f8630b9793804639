//! Ops that pick, count or encode elements: `narrow`, `gather`, `where`, `nonzero`, `one_hot`.

use shapels_shapes::Dim;

use super::OpCall;
use super::output::out_shape;
use crate::code::Code;
use crate::rules::check::{RuleResult, raise};
use crate::rules::dtype::promote;
use crate::rules::meta::Meta;
use crate::rules::shape::broadcast_all;
use crate::value::{DType, Value};

/// `narrow`.
pub(super) fn narrow(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let d = call.dim_arg(meta, 1, "dim", None)?;
    let len = args.get(3, "length").cloned().unwrap_or(Value::Unknown);
    if let (Some(size), Some(start), Some(l)) = (
        meta.env().value(&dims[d]),
        args.int(2, "start"),
        match &len {
            Value::Int(l) => l.as_const(),
            _ => None,
        },
    ) {
        let message = if start < -size || start > size {
            Some(format!(
                "start out of range (expected to be in range of [{}, {size}], but got {start})",
                -size
            ))
        } else if l < 0 {
            Some("narrow(): length must be non-negative.".to_string())
        } else {
            let st = if start < 0 { start + size } else { start };
            (st + l > size)
                .then(|| format!("start ({st}) + length ({l}) exceeds dimension size ({size})."))
        };
        if let Some(message) = message {
            return raise(Code::IndexOutOfRange, message);
        }
    }
    let mut shape = dims.clone();
    shape[d] = meta.size_dims(&[len])[0].clone();
    Ok(call.output(meta, shape, x.dtype))
}

/// `select`.
pub(super) fn select(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    let d = call.dim_arg(meta, 1, "dim", None)?;
    if let (Some(i), Some(size)) = (call.args.int(2, "index"), meta.env().value(&dims[d]))
        && (i >= size || i < -size)
    {
        let message = format!(
            "select(): index {i} out of range for tensor of size {} at dimension {d}",
            meta.fmt_dims(dims)
        );
        return raise(Code::IndexOutOfRange, message);
    }
    let mut shape = dims.clone();
    shape.remove(d);
    Ok(call.output(meta, shape, x.dtype))
}

/// `gather`, `take_along_dim`.
pub(super) fn gather(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    let d = call.dim_arg(meta, 1, "dim", Some(0))?;
    let Some(index) = args.tensor(2, "index").or(args.tensor(1, "indices")) else {
        return Ok(Value::Unknown);
    };
    match meta.dims(&index) {
        Some(idims) => {
            if idims.len() != rank {
                return raise(
                    Code::IndexShape,
                    "Index tensor must have the same number of dimensions as input tensor".into(),
                );
            }
            if name == "gather" {
                if let Some(dt) = index.dtype
                    && !matches!(dt, DType::Int64 | DType::Int32)
                {
                    let message = "gather(): Expected dtype int32/int64 for index".to_string();
                    return raise(Code::DtypeMismatch, message);
                }
                let larger = (0..rank).find(|&k| {
                    k != d
                        && matches!(
                            (meta.env().value(&idims[k]), meta.env().value(&dims[k])),
                            (Some(i), Some(s)) if i > s
                        )
                });
                if let Some(k) = larger {
                    let message = format!(
                        "Size does not match at dimension {k} expected index {} to be no larger than self {} apart from dimension {d}",
                        meta.fmt_dims(&idims),
                        meta.fmt_dims(dims)
                    );
                    return raise(Code::IndexShape, message);
                }
            }
            Ok(call.output(meta, idims, x.dtype))
        }
        None => Ok(out_shape(
            meta,
            x,
            index.shape.clone(),
            x.dtype,
            call.device,
            name,
        )),
    }
}

/// `index_select`.
pub(super) fn index_select(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let d = call.dim_arg(meta, 1, "dim", None)?;
    let Some(index) = args.tensor(2, "index") else {
        return Ok(Value::Unknown);
    };
    if let Some(dt) = index.dtype
        && !matches!(dt, DType::Int64 | DType::Int32)
    {
        let message = "index_select(): Expected dtype int32 or int64 for index".to_string();
        return raise(Code::DtypeMismatch, message);
    }
    if meta.dims(&index).is_some_and(|i| i.len() > 1) {
        let message = "index_select(): Index is supposed to be a vector".to_string();
        return raise(Code::IndexShape, message);
    }
    let n = match meta.dims(&index) {
        Some(idims) if idims.len() <= 1 => idims.first().cloned().unwrap_or_else(|| Dim::konst(1)),
        _ => meta.env_mut().anonymous(),
    };
    let mut shape = dims.clone();
    shape[d] = n;
    Ok(call.output(meta, shape, x.dtype))
}

/// `where`.
pub(super) fn where_(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, dims) = (call.args, &call.dims);
    let rank = dims.len();
    // `x` here is the condition. Alone, it is `nonzero(as_tuple=True)`:
    // one index vector per dim, of a length only the data knows.
    if args.get(1, "input").is_none() && args.get(2, "other").is_none() {
        let n = meta.env_mut().anonymous();
        let item = call.output(meta, vec![n], Some(DType::Int64));
        return Ok(Value::tuple(vec![item; rank]));
    }
    let (Some(a), Some(b)) = (args.get(1, "input").cloned(), args.get(2, "other").cloned()) else {
        return Ok(Value::Unknown);
    };
    // The condition is a mask: bool (uint8 only warns). It is `self` of
    // `torch.where(condition, x, y)`, the first argument of `x.where(condition, y)`.
    let condition = if args.method {
        a.clone()
    } else {
        Value::Tensor(call.x.clone())
    };
    if let Value::Tensor(condition) = &condition
        && let Some(dtype) = condition.dtype
        && !matches!(dtype, DType::Bool | DType::UInt8)
    {
        return raise(
            Code::DtypeMismatch,
            format!(
                "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                crate::rules::dtype::torch_name(dtype)
            ),
        );
    }
    // A branch the analysis could not follow may broadcast the
    // result wider and decides its dtype.
    if matches!(a, Value::Unknown) || matches!(b, Value::Unknown) {
        return Ok(Value::Unknown);
    }
    let branches = [&a, &b].into_iter().filter_map(|v| match v {
        Value::Tensor(t) => Some(&**t),
        _ => None,
    });
    let shape = match broadcast_all(meta, dims.clone(), branches) {
        Ok(Some(shape)) => shape,
        Ok(None) => return Ok(Value::Unknown),
        Err(message) => return raise(Code::BroadcastShape, message),
    };
    let ra = if let Value::Tensor(t) = &a {
        meta.dims(t).map(|d| d.len())
    } else {
        None
    };
    let rb = if let Value::Tensor(t) = &b {
        meta.dims(t).map(|d| d.len())
    } else {
        None
    };
    let dtype = promote(&[(&a, ra), (&b, rb)]);
    Ok(call.output(meta, shape, dtype))
}

/// `multinomial`.
pub(super) fn multinomial(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, dims) = (call.args, &call.dims);
    // One row of samples per distribution: [*, num_samples], int64.
    let n = args
        .get(1, "num_samples")
        .cloned()
        .unwrap_or(Value::Unknown);
    let n = meta.size_dims(&[n])[0].clone();
    let mut shape = dims.clone();
    match shape.last_mut() {
        Some(last) => *last = n,
        None => return Ok(Value::Unknown),
    }
    Ok(call.output(meta, shape, Some(DType::Int64)))
}

/// `nonzero`, `argwhere`.
pub(super) fn nonzero(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, dims) = (call.args, &call.dims);
    let rank = dims.len();
    let n = meta.env_mut().anonymous();
    if args.flag(1, "as_tuple", false) == Some(true) {
        let item = call.output(meta, vec![n], Some(DType::Int64));
        return Ok(Value::tuple(vec![item; rank]));
    }
    Ok(call.output(meta, vec![n, Dim::konst(rank as i64)], Some(DType::Int64)))
}

/// `masked_select`.
pub(super) fn masked_select(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let x = &call.x;
    let n = meta.env_mut().anonymous();
    Ok(call.output(meta, vec![n], x.dtype))
}

/// `unique`, `unique_consecutive`.
pub(super) fn unique(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    // `unique(input, sorted, return_inverse, return_counts, dim)`;
    // `unique_consecutive` has no `sorted`.
    let at = usize::from(name == "unique");
    let n = meta.env_mut().anonymous();
    // With `dim`, whole slices along it are compared: only that
    // size is data-dependent.
    let along = match args.int(at + 3, "dim") {
        Some(d) => match crate::rules::shape::wrap_dim(d, rank) {
            // A 0-d tensor has no slices to compare: torch fails reading
            // the size along `dim`.
            Ok(d) if rank == 0 => {
                let message = format!("Dimension specified as {d} but tensor has no dimensions");
                return raise(Code::DimOutOfRange, message);
            }
            Ok(d) => Some(d),
            Err(message) => return raise(Code::DimOutOfRange, message),
        },
        None => None,
    };
    let (shape, inverse) = match along {
        Some(d) => {
            let mut shape = dims.clone();
            shape[d] = n.clone();
            (shape, vec![dims[d].clone()])
        }
        None => (vec![n.clone()], dims.clone()),
    };
    let unique = call.output(meta, shape, x.dtype);
    let mut out = vec![unique];
    if args.flag(at + 1, "return_inverse", false) == Some(true) {
        out.push(call.output(meta, inverse, Some(DType::Int64)));
    }
    if args.flag(at + 2, "return_counts", false) == Some(true) {
        out.push(call.output(meta, vec![n], Some(DType::Int64)));
    }
    Ok(if out.len() == 1 {
        out.remove(0)
    } else {
        Value::tuple(out)
    })
}

/// `bincount`.
pub(super) fn bincount(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let args = call.args;
    let n = meta.env_mut().anonymous();
    // with weights the counts take the weights' dtype
    let dtype = match args.get(1, "weights") {
        Some(Value::Tensor(w)) => w.dtype,
        _ => Some(DType::Int64),
    };
    Ok(call.output(meta, vec![n], dtype))
}

/// `one_hot`.
pub(super) fn one_hot(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let c = match args.get(1, "num_classes") {
        Some(Value::Int(d)) if d.as_const() != Some(-1) => d.clone(),
        _ => meta.env_mut().anonymous(),
    };
    if let Some(dt) = x.dtype
        && dt != DType::Int64
    {
        return raise(
            Code::DtypeMismatch,
            "one_hot is only applicable to index tensor of type LongTensor.".into(),
        );
    }
    // Without a count of classes torch takes the largest index plus one,
    // which an empty tensor does not have.
    let infers_classes = match args.get(1, "num_classes") {
        None => true,
        Some(Value::Int(d)) => d.as_const() == Some(-1),
        Some(_) => false,
    };
    if infers_classes && dims.iter().any(|d| meta.env().value(d) == Some(0)) {
        return raise(
            Code::IndexShape,
            "Can not infer total number of classes from empty tensor.".into(),
        );
    }
    let mut shape = dims.clone();
    shape.push(c);
    Ok(call.output(meta, shape, Some(DType::Int64)))
}
