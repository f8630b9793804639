//! Finite differences and the trapezoid rule along one dim: `diff`, `trapezoid` (`trapz`) and `cumulative_trapezoid`.

use shapels_shapes::Dim;

use super::OpCall;
use crate::code::Code;
use crate::rules::check::{RuleResult, raise};
use crate::rules::dtype::int_to_float;
use crate::rules::meta::Meta;
use crate::value::{DType, Value};

/// A size less `k`, never below zero: torch's differences of fewer than
/// `k` + 1 values are empty, not negative. A symbolic size keeps the
/// difference (the sizes the user names are taken to be large enough).
fn shorter(meta: &dyn Meta, size: &Dim, k: i64) -> Dim {
    match meta.env().value(size) {
        Some(n) => Dim::konst((n - k).max(0)),
        None => size.sub(&Dim::konst(k)),
    }
}

/// `diff(input, n=1, dim=-1, prepend=None, append=None)`: `n` differences
/// along `dim` of the input with `prepend` and `append` joined to it there.
pub(super) fn diff(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    if dims.is_empty() {
        let message = "diff expects input to be at least one-dimensional".to_string();
        return raise(Code::DimOutOfRange, message);
    }
    let Some(n) = args.int_or(1, "n", 1) else {
        return Ok(Value::Unknown);
    };
    let d = call.dim_arg(meta, 2, "dim", Some(-1))?;
    if n < 0 {
        return raise(
            Code::NegativeSize,
            format!("order must be non-negative but got {n}"),
        );
    }
    let mut along = dims[d].clone();
    for (index, key) in [(3, "prepend"), (4, "append")] {
        let extra = match args.get(index, key) {
            None | Some(Value::None) => continue,
            Some(Value::Tensor(t)) => t.clone(),
            Some(_) => return Ok(Value::Unknown),
        };
        let Some(ed) = meta.dims(&extra) else {
            return Ok(Value::Unknown);
        };
        if ed.len() != dims.len() {
            let message =
                "diff expects prepend or append to be the same dimension as input".to_string();
            return raise(Code::CatShape, message);
        }
        for (k, (a, b)) in dims.iter().zip(&ed).enumerate() {
            if k != d && meta.env().known_different(a, b) {
                let message = format!(
                    "diff expects the shape of tensor to prepend or append to match that of input except along the differencing dimension; input.size({k}) = {}, but got tensor.size({k}) = {}",
                    meta.fmt_dim(a),
                    meta.fmt_dim(b)
                );
                return raise(Code::CatShape, message);
            }
        }
        along = along.add(&ed[d]);
    }
    let mut shape = dims.clone();
    shape[d] = shorter(meta, &along, n);
    Ok(call.output(meta, shape, x.dtype))
}

/// `trapezoid(y, x=None, *, dx=None, dim=-1)` (and `trapz`), which sums
/// `dim` away, and `cumulative_trapezoid`, which keeps one value fewer
/// along it. Integer samples integrate to the default float.
pub(super) fn trapezoid(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let cumulative = name == "cumulative_trapezoid";
    let shown = if name == "trapz" { "trapezoid" } else { name };
    if x.dtype == Some(DType::Bool) {
        let message = format!("{shown}: received a bool input for `y`, but bool is not supported");
        return raise(Code::DtypeUnsupported, message);
    }
    if dims.is_empty() {
        let message = if cumulative {
            "slice() cannot be applied to a 0-dim tensor."
        } else {
            "Dimension specified as -1 but tensor has no dimensions"
        };
        return raise(Code::DimOutOfRange, message.to_string());
    }
    let d = call.dim_arg(meta, 99, "dim", Some(-1))?;
    // Sample points: one per value along `dim` when given as a vector; a
    // tensor of more dims broadcasts against the differences (not followed).
    match args.get(1, "x") {
        None | Some(Value::None) => {}
        Some(Value::Tensor(points)) => {
            let Some(pd) = meta.dims(points) else {
                return Ok(Value::Unknown);
            };
            if pd.len() != 1 {
                if pd.len() != dims.len()
                    || dims
                        .iter()
                        .zip(&pd)
                        .any(|(a, b)| !meta.env().known_equal(a, b))
                {
                    return Ok(Value::Unknown);
                }
            } else if meta.env().known_different(&pd[0], &dims[d]) {
                let message = format!("{shown}: There must be one `x` value for each sample point");
                return raise(Code::BroadcastShape, message);
            }
        }
        Some(_) => return Ok(Value::Unknown),
    }
    let mut shape = dims.clone();
    if cumulative {
        shape[d] = shorter(meta, &dims[d], 1);
    } else {
        shape.remove(d);
    }
    Ok(call.output(meta, shape, int_to_float(x.dtype)))
}

/// `F.gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1)`: the
/// logits' shape; the noise it samples must be floating point.
pub(super) fn gumbel_softmax(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    if let Some(dt) = x.dtype
        && !dt.is_floating()
        && !dt.is_complex()
    {
        let message = format!(
            "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified {}",
            crate::rules::dtype::torch_name(dt)
        );
        return raise(Code::DtypeUnsupported, message);
    }
    // A 0-d tensor takes dim 0 or -1, as torch wraps dims.
    let _ = call.dim_arg(meta, 4, "dim", Some(-1))?;
    Ok(call.output(meta, dims.clone(), x.dtype))
}
