//! Tensor ops: pointwise, reductions, shape manipulation, joins and splits, linear algebra.

use std::fmt::Write as _;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::dtype::{int_to_float, promote, sum_dtype, torch_name};
use super::shape::{broadcast, numel, wrap_dim};
use crate::interp::Interp;
use crate::report::Severity;
use crate::value::{DType, Device, Provenance, Shape, Tensor, Value};

/// Pointwise ops that keep their input's shape and dtype.
const SAME: &[&str] = &[
    "neg",
    "positive",
    "abs",
    "relu",
    "relu6",
    "gelu",
    "silu",
    "mish",
    "hardswish",
    "hardsigmoid",
    "elu",
    "selu",
    "celu",
    "leaky_relu",
    "hardtanh",
    "softplus",
    "softsign",
    "tanhshrink",
    "threshold",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "sign",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "nan_to_num",
    "contiguous",
    "clone",
    "detach",
    "dropout",
    "alpha_dropout",
    "feature_alpha_dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "square",
    "tril",
    "triu",
    "bitwise_not",
    "zero_",
    "fill_",
    "normal_",
    "uniform_",
    "bernoulli_",
    "exponential_",
    "random_",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "rot90_same",
    "cumsum_same",
    "masked_fill",
    "masked_scatter",
    "index_fill",
    "index_add",
    "index_copy",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "index_put",
    "renorm",
    "glu_same",
    "requires_grad_",
    "logit",
    "prelu",
    "rrelu",
    "copy_",
    "lerp",
    "addcmul",
    "addcdiv",
    "hardshrink",
    "softshrink",
    "conj",
    "resolve_conj",
    "resolve_neg",
    "fix",
    "negative",
    "absolute",
    "sgn",
];
/// Pointwise ops whose integer inputs give float results.
const TO_FLOAT: &[&str] = &[
    "sigmoid",
    "tanh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "erfinv",
    "reciprocal",
    "logsigmoid",
    "digamma",
    "lgamma",
    "i0",
    "sinc",
    "deg2rad",
    "rad2deg",
];
/// Pointwise ops with a bool result.
const TO_BOOL: &[&str] = &[
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "logical_not",
    "signbit",
    "isreal",
];
/// Binary pointwise ops (broadcasting, promoting).
const BINARY: &[&str] = &[
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "floor_divide",
    "remainder",
    "fmod",
    "pow",
    "float_power",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "atan2",
    "arctan2",
    "hypot",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "copysign",
    "xlogy",
    "rsub",
    "heaviside",
    "nextafter",
    "ldexp",
];
const BINARY_BOOL: &[&str] = &[
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "less",
    "greater_equal",
    "less_equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "isclose",
];
const REDUCTIONS: &[&str] = &[
    "sum",
    "mean",
    "prod",
    "amax",
    "amin",
    "std",
    "var",
    "logsumexp",
    "all",
    "any",
    "count_nonzero",
    "nansum",
    "nanmean",
    "norm",
    "linalg_vector_norm",
    "linalg_norm",
    "aminmax_",
    "std_mean_",
    "var_mean_",
];

/// Run the rule of `name` on `args` (tensor ops take the input first).
pub(crate) fn op(interp: &mut Interp<'_>, name: &str, args: Args, range: TextRange) -> Value {
    let (base, inplace) = match name.strip_suffix('_') {
        Some(b) if !b.is_empty() && !b.ends_with('_') && !SAME.contains(&name) => (b, true),
        _ => (name, false),
    };
    let result = dispatch(interp, base, &args, range.clone());
    let result = track_layout(interp, base, &args, result);
    // in-place view ops change self's shape: their result is the new view
    if inplace
        && matches!(
            base,
            "unsqueeze"
                | "squeeze"
                | "t"
                | "transpose"
                | "swapaxes"
                | "swapdims"
                | "resize"
                | "as_strided"
        )
    {
        return result;
    }
    if inplace && let (Some(Value::Tensor(this)), Value::Tensor(out)) = (args.pos.first(), &result)
    {
        // An in-place op keeps self's shape and dtype; a broadcast that
        // would grow self is an error.
        if let (Some(a), Some(b)) = (interp.dims(this), interp.dims(out))
            && a.len() == b.len()
            && a.iter()
                .zip(&b)
                .any(|(x, y)| interp.env.known_different(x, y))
        {
            interp.report(
                range,
                Severity::Error,
                "broadcast-shape",
                format!(
                    "output with shape {} doesn't match the broadcast shape {}",
                    interp.fmt_dims(&a),
                    interp.fmt_dims(&b)
                ),
            );
        }
        return Value::Tensor(this.clone());
    }
    result
}

fn dispatch(interp: &mut Interp<'_>, name: &str, args: &Args, range: TextRange) -> Value {
    if name == "meshgrid" {
        return meshgrid(interp, name, args, range);
    }
    let Some(x) = args.tensor(0, "input") else {
        return scalar_fallback(interp, name, args, range);
    };
    let Some(tensors) = check_inputs(interp, args, name, range.clone()) else {
        return Value::Unknown;
    };
    let device = tensors;
    // Sizes given as one value nobody can read: the result's rank is unknown.
    if matches!(
        name,
        "view" | "reshape" | "expand" | "broadcast_to" | "repeat" | "tile" | "permute"
    ) && args.sizes_unknown(1)
    {
        return unknown_rank_rule(interp, name, &x, args, device);
    }
    let dims = interp.dims(&x);
    if SAME.contains(&name) {
        if matches!(name, "tril" | "triu")
            && let Some(d) = &dims
            && d.len() < 2
        {
            let message = format!("{name}: input tensor must have at least 2 dimensions");
            interp.report(range, Severity::Error, "dim-out-of-range", message);
            return Value::Unknown;
        }
        if matches!(name, "masked_fill" | "masked_scatter") {
            check_mask(interp, &x, args, range.clone());
        }
        let mut dtype = x.dtype;
        match name {
            // several tensor operands broadcast together (out of place)
            "lerp" | "addcmul" | "addcdiv" | "masked_fill" => {
                let keys: &[(usize, &str)] = match name {
                    "lerp" => &[(1, "end"), (2, "weight")],
                    "masked_fill" => &[(1, "mask"), (2, "value")],
                    _ => &[(1, "tensor1"), (2, "tensor2")],
                };
                let Some(mut shape) = dims.clone() else {
                    return out_shape(interp, &x, x.shape.clone(), dtype, device, name);
                };
                let mut operands = vec![(Value::Tensor(x.clone()), Some(shape.len()))];
                for &(i, key) in keys {
                    let Some(t) = args.tensor(i, key) else {
                        continue;
                    };
                    let Some(d) = interp.dims(&t) else {
                        return out_shape(interp, &x, x.shape.clone(), dtype, device, name);
                    };
                    operands.push((Value::Tensor(t.clone()), Some(d.len())));
                    match broadcast(interp, &shape, &d) {
                        Ok(b) => shape = b,
                        Err(message) => {
                            if name != "masked_fill" {
                                interp.report(range, Severity::Error, "broadcast-shape", message);
                            }
                            return Value::Unknown;
                        }
                    }
                }
                if name != "masked_fill" {
                    let refs: Vec<(&Value, Option<usize>)> =
                        operands.iter().map(|(v, r)| (v, *r)).collect();
                    dtype = promote(&refs);
                }
                return out_known(interp, &x, shape, dtype, device, name);
            }
            // bounds take part in type promotion: int.clamp(min=0.5) is float
            "clamp" | "clip" | "clamp_min" | "clamp_max" => {
                let mut operands = vec![(Value::Tensor(x.clone()), dims.as_ref().map(Vec::len))];
                for (i, key) in [(1, "min"), (2, "max")] {
                    match args.get(i, key) {
                        Some(Value::Tensor(t)) => {
                            operands
                                .push((Value::Tensor(t.clone()), interp.dims(t).map(|d| d.len())));
                        }
                        Some(v @ (Value::Int(_) | Value::Float(_) | Value::Bool(_))) => {
                            operands.push((v.clone(), None));
                        }
                        _ => {}
                    }
                }
                let refs: Vec<(&Value, Option<usize>)> =
                    operands.iter().map(|(v, r)| (v, *r)).collect();
                dtype = promote(&refs).or(dtype);
            }
            // scatter: dim range, index rank, index no larger than self / src
            "scatter" | "scatter_add" | "scatter_reduce" | "index_fill" | "index_add"
            | "index_copy"
                if dims.is_some() =>
            {
                let xd = dims.clone().unwrap_or_default();
                let d = match args.get(1, "dim") {
                    Some(Value::Int(k)) => k.as_const(),
                    _ => None,
                };
                let Some(d) = d else {
                    return out_shape(interp, &x, x.shape.clone(), dtype, device, name);
                };
                let d = match wrap_dim(d, xd.len()) {
                    Ok(d) => d,
                    Err(message) => {
                        interp.report(range, Severity::Error, "dim-out-of-range", message);
                        return Value::Unknown;
                    }
                };
                if name.starts_with("scatter")
                    && let Some(index) = args.tensor(2, "index")
                    && let Some(idims) = interp.dims(&index)
                {
                    if idims.len() != xd.len() {
                        let message =
                            "Index tensor must have the same number of dimensions as self tensor"
                                .to_string();
                        interp.report(range, Severity::Error, "index-shape", message);
                        return Value::Unknown;
                    }
                    let src = args.tensor(3, "src").and_then(|t| interp.dims(&t));
                    let bigger = |a: &Dim, b: &Dim| matches!((interp.env.value(a), interp.env.value(b)), (Some(i), Some(s)) if i > s);
                    let over_self = (0..xd.len()).any(|k| k != d && bigger(&idims[k], &xd[k]));
                    let over_src = src.as_ref().is_some_and(|sd| {
                        sd.len() == idims.len() && (0..sd.len()).any(|k| bigger(&idims[k], &sd[k]))
                    });
                    if over_self || over_src {
                        let mut message = format!(
                            "Expected index {} to be no larger than self {} apart from dimension {d}",
                            interp.fmt_dims(&idims),
                            interp.fmt_dims(&xd)
                        );
                        if let Some(sd) = &src {
                            let _ = write!(
                                message,
                                " and to be no larger size than src {}",
                                interp.fmt_dims(sd)
                            );
                        }
                        interp.report(range, Severity::Error, "index-shape", message);
                        return Value::Unknown;
                    }
                }
            }
            // pow(x, 2): bool becomes int64
            "square" if dtype == Some(DType::Bool) => dtype = Some(DType::Int64),
            // |z| of a complex tensor is real
            "abs" | "absolute" => {
                dtype = match dtype {
                    Some(DType::Complex64) => Some(DType::Float32),
                    Some(DType::Complex128) => Some(DType::Float64),
                    d => d,
                }
            }
            _ => {}
        }
        return out_shape(interp, &x, x.shape.clone(), dtype, device, name);
    }
    if TO_FLOAT.contains(&name) {
        return out_shape(
            interp,
            &x,
            x.shape.clone(),
            int_to_float(x.dtype),
            device,
            name,
        );
    }
    if TO_BOOL.contains(&name) {
        return out_shape(interp, &x, x.shape.clone(), Some(DType::Bool), device, name);
    }
    if BINARY.contains(&name)
        || BINARY_BOOL.contains(&name)
        || matches!(name, "div" | "true_divide" | "divide")
    {
        let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
        return binary(interp, name, &Value::Tensor(x), &other, args, device, range);
    }
    if REDUCTIONS.contains(&name) {
        return reduce(interp, name, &x, args, device, range);
    }
    let Some(dims) = dims else {
        if matches!(name, "view" | "reshape")
            && let Some(Value::SizeOfVar(var, prefix)) = args.pos.get(1)
        {
            // `x.view(*x.shape[:-1], h, -1)`: the leading dims stay what they
            // are; a `-1` is what the known trailing dims leave.
            let rest = interp.size_dims(&args.pos[2..]);
            let (xvar, xsuffix) = match interp.resolve_shape(&x.shape) {
                Shape::Var(v) => (v, Vec::new()),
                Shape::Tail(v, s) => (v, s.as_ref().clone()),
                Shape::Known(_) => return unknown_rank_rule(interp, name, &x, args, device),
            };
            let mut suffix: Vec<Dim> = prefix.as_ref().clone();
            let infer = rest.iter().position(|d| interp.env.value(d) == Some(-1));
            for (i, d) in rest.iter().enumerate() {
                if Some(i) != infer {
                    suffix.push(d.clone());
                    continue;
                }
                let others: Vec<Dim> = prefix
                    .iter()
                    .chain(
                        rest.iter()
                            .enumerate()
                            .filter(|(j, _)| *j != i)
                            .map(|(_, d)| d),
                    )
                    .cloned()
                    .collect();
                let inferred = if xvar == *var && !xsuffix.is_empty() {
                    let total = interp.env.resolve(&numel(&xsuffix));
                    let known = interp.env.resolve(&numel(&others));
                    // A valid view divides exactly; torch would raise otherwise.
                    interp.env.assume_divisible(&total, &known);
                    total
                        .floordiv(&known)
                        .map(|q| interp.env.resolve(&q))
                        .unwrap_or_else(|| interp.env.anonymous())
                } else {
                    interp.env.anonymous()
                };
                suffix.push(inferred);
            }
            let shape = super::tail::suffix_shape(*var, suffix);
            return out_shape(interp, &x, shape, x.dtype, device, name);
        }
        if matches!(name, "view" | "reshape") {
            // The new shape is spelled out; only a `-1` depends on the input.
            let items = args.varargs(1);
            if !items.is_empty() && !matches!(items.as_slice(), [Value::DType(_)]) {
                let mut sizes = interp.size_dims(&items);
                for (i, d) in sizes.iter_mut().enumerate() {
                    if interp.env.value(d) == Some(-1) {
                        *d = if i == 0 {
                            interp.env.weak_symbol("N")
                        } else {
                            interp.env.anonymous()
                        };
                    }
                }
                return out_known(interp, &x, sizes, x.dtype, device, name);
            }
        }
        return unknown_rank_rule(interp, name, &x, args, device);
    };
    let rank = dims.len();
    // a 0-dim tensor: dim 0 / -1 wrap to a dim that is not there
    if rank == 0 {
        let message = match name {
            "transpose" | "swapaxes" | "swapdims" | "movedim" | "moveaxis" => {
                return out_known(interp, &x, Vec::new(), x.dtype, device, name);
            }
            "narrow" => Some("narrow() cannot be applied to a 0-dim tensor."),
            "select" => Some("select() cannot be applied to a 0-dim tensor."),
            "unflatten" => Some("unflatten got an unexpected error:"),
            "tensor_split" => Some(
                "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
            ),
            "chunk" => Some("chunk expects at least a 1-dimensional tensor"),
            "unbind" => Some("Dimension specified as 0 but tensor has no dimensions"),
            "split" | "split_with_sizes" | "index_select" | "repeat_interleave" | "unfold"
            | "hsplit" | "vsplit" | "dsplit" => return Value::Unknown,
            _ => None,
        };
        if let Some(message) = message {
            interp.report(range, Severity::Error, "dim-out-of-range", message.into());
            return Value::Unknown;
        }
    }
    macro_rules! dim_arg {
        ($i:expr, $n:expr, $default:expr) => {{
            let d = match args.get($i, $n) {
                Some(Value::Int(d)) => d.as_const(),
                None | Some(Value::None) => $default,
                _ => None,
            };
            match d {
                Some(d) => match wrap_dim(d, rank) {
                    Ok(d) => d,
                    Err(message) => {
                        interp.report(range, Severity::Error, "dim-out-of-range", message);
                        return Value::Unknown;
                    }
                },
                None => return unknown_rank_rule(interp, name, &x, args, device),
            }
        }};
    }
    let same = |interp: &mut Interp<'_>, dims: Vec<Dim>, dtype: Option<DType>| {
        out_known(interp, &x, dims, dtype, device.clone(), name)
    };
    match name {
        "softmax" | "log_softmax" | "softmin" | "cumsum" | "cumprod" | "logcumsumexp" => {
            let d = dim_arg!(1, "dim", Some(if rank <= 1 || rank == 3 { 0 } else { 1 }));
            if !name.starts_with("cum")
                && super::creation::dtype_arg(args).is_none()
                && let Some(dt) = x.dtype
                && !dt.is_floating()
                && !dt.is_complex()
            {
                // eager softmax has no integer or bool kernel
                let kernel = if name == "logcumsumexp" {
                    "logcumsumexp_out_cpu".to_string()
                } else {
                    let base = if name == "log_softmax" {
                        "log_softmax"
                    } else {
                        "softmax"
                    };
                    let last = if d + 1 >= rank { "_lastdim" } else { "" };
                    format!("{base}{last}_kernel_impl")
                };
                let message = format!("\"{kernel}\" not implemented for '{}'", torch_name(dt));
                interp.report(range, Severity::Error, "dtype-unsupported", message);
                return Value::Unknown;
            }
            if name == "logcumsumexp"
                && let Some(dt) = x.dtype
                && !dt.is_floating()
                && !dt.is_complex()
            {
                let message = format!(
                    "\"logcumsumexp_out_cpu\" not implemented for '{}'",
                    torch_name(dt)
                );
                interp.report(range, Severity::Error, "dtype-unsupported", message);
                return Value::Unknown;
            }
            let dtype = super::creation::dtype_arg(args).or(if name.starts_with("cum") {
                sum_dtype(x.dtype)
            } else {
                x.dtype
            });
            same(interp, dims, dtype)
        }
        "cummax" | "cummin" => {
            let _ = dim_arg!(1, "dim", None);
            let v = same(interp, dims.clone(), x.dtype);
            let i = same(interp, dims, Some(DType::Int64));
            Value::tuple(vec![v, i])
        }
        "argmax" | "argmin" if x.dtype == Some(DType::Bool) => {
            let message = format!("{name}(): does not support bool input");
            interp.report(range, Severity::Error, "dtype-unsupported", message);
            Value::Unknown
        }
        "topk" | "kthvalue" if x.dtype == Some(DType::Bool) => {
            let message = if name == "topk" {
                "topk does not support bool dtypes on CPU".to_string()
            } else {
                "\"kthvalue_cpu\" not implemented for 'Bool'".to_string()
            };
            interp.report(range, Severity::Error, "dtype-unsupported", message);
            Value::Unknown
        }
        "argmax" | "argmin" => match args.get(1, "dim") {
            None | Some(Value::None) => {
                let keep = args.flag(2, "keepdim", false) == Some(true);
                same(
                    interp,
                    if keep {
                        vec![Dim::konst(1); rank]
                    } else {
                        Vec::new()
                    },
                    Some(DType::Int64),
                )
            }
            _ => {
                let d = dim_arg!(1, "dim", None);
                let keep = args.flag(2, "keepdim", false);
                same(
                    interp,
                    reduced(&dims, &[d], keep == Some(true)),
                    Some(DType::Int64),
                )
            }
        },
        "max" | "min" => match args.get(1, "dim") {
            Some(Value::Tensor(_)) => {
                let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
                binary(
                    interp,
                    if name == "max" { "maximum" } else { "minimum" },
                    &Value::Tensor(x.clone()),
                    &other,
                    args,
                    device,
                    range,
                )
            }
            None | Some(Value::None) => same(interp, Vec::new(), x.dtype),
            _ => {
                let d = dim_arg!(1, "dim", None);
                let keep = args.flag(2, "keepdim", false) == Some(true);
                let shape = reduced(&dims, &[d], keep);
                let v = same(interp, shape.clone(), x.dtype);
                let i = same(interp, shape, Some(DType::Int64));
                Value::tuple(vec![v, i])
            }
        },
        "median" | "mode" | "nanmedian" | "kthvalue" => {
            let (dim_index, default) = if name == "kthvalue" {
                (2, Some(-1))
            } else {
                (1, Some(-1))
            };
            if name != "kthvalue" && args.get(1, "dim").is_none() && name != "mode" {
                return same(interp, Vec::new(), x.dtype);
            }
            let d = dim_arg!(dim_index, "dim", default);
            if name == "kthvalue"
                && let Some(k) = args.int(1, "k")
            {
                let size = if rank == 0 {
                    Some(1)
                } else {
                    interp.env.value(&dims[d])
                };
                if k < 1 || size.is_some_and(|s| k > s) {
                    let message =
                        format!("kthvalue(): selected number k out of range for dimension {d}");
                    interp.report(range, Severity::Error, "index-out-of-range", message);
                    return Value::Unknown;
                }
            }
            let keep = args.flag(dim_index + 1, "keepdim", false) == Some(true);
            let shape = reduced(&dims, &[d], keep);
            let v = same(interp, shape.clone(), x.dtype);
            let i = same(interp, shape, Some(DType::Int64));
            Value::tuple(vec![v, i])
        }
        "topk" => {
            let k = args.get(1, "k").cloned().unwrap_or(Value::Unknown);
            let d = dim_arg!(2, "dim", Some(-1));
            let mut shape = dims.clone();
            // a 0-dim tensor has one element along its wrapped dim 0 and stays 0-dim
            let kd = interp.size_dims(&[k])[0].clone();
            let size = dims.get(d).cloned().unwrap_or_else(|| Dim::from(1));
            if let Some(slot) = shape.get_mut(d) {
                *slot = kd.clone();
            }
            if let (Some(k), Some(s)) = (interp.env.value(&kd), interp.env.value(&size))
                && (k > s || k < 0)
            {
                interp.report(
                    range,
                    Severity::Error,
                    "index-out-of-range",
                    "selected index k out of range".into(),
                );
            }
            let v = same(interp, shape.clone(), x.dtype);
            let i = same(interp, shape, Some(DType::Int64));
            Value::tuple(vec![v, i])
        }
        "sort" => {
            let _ = dim_arg!(1, "dim", Some(-1));
            let v = same(interp, dims.clone(), x.dtype);
            let i = same(interp, dims, Some(DType::Int64));
            Value::tuple(vec![v, i])
        }
        "argsort" => {
            let _ = dim_arg!(1, "dim", Some(-1));
            same(interp, dims, Some(DType::Int64))
        }
        "view" | "reshape" => {
            let items = args.varargs(1);
            if let [Value::DType(d)] = items.as_slice() {
                // view(dtype) rescales the last dim by the ratio of element sizes
                let size = |d: DType| match d {
                    DType::Bool | DType::UInt8 | DType::Int8 => 1,
                    DType::Int16 | DType::Float16 | DType::BFloat16 => 2,
                    DType::Int32 | DType::Float32 => 4,
                    DType::Int64 | DType::Float64 | DType::Complex64 => 8,
                    DType::Complex128 => 16,
                };
                let Some(from) = x.dtype else {
                    return Value::Unknown;
                };
                let (old, new) = (size(from), size(*d));
                let mut dims = dims;
                if old != new {
                    let Some(last) = dims.last().and_then(|l| interp.env.value(l)) else {
                        return Value::Unknown;
                    };
                    if (last * old) % new != 0 {
                        return Value::Unknown;
                    }
                    if let Some(l) = dims.last_mut() {
                        *l = Dim::konst(last * old / new);
                    }
                }
                return same(interp, dims, Some(*d));
            }
            reshape(interp, name, &x, &dims, &items, device, range)
        }
        "view_as" | "reshape_as" | "expand_as" | "broadcast_as" => {
            let Some(other) = args.tensor(1, "other") else {
                return unknown_rank_rule(interp, name, &x, args, device);
            };
            let Some(target) = interp.dims(&other) else {
                return unknown_rank_rule(interp, name, &x, args, device);
            };
            let items: Vec<Value> = target.iter().map(|d| Value::Int(d.clone())).collect();
            if name == "expand_as" {
                return expand(interp, &x, &dims, &items, device, range);
            }
            reshape(interp, name, &x, &dims, &items, device, range)
        }
        "flatten" => {
            if rank == 0 {
                return same(interp, vec![Dim::konst(1)], x.dtype);
            }
            let s = dim_arg!(1, "start_dim", Some(0));
            let e = dim_arg!(2, "end_dim", Some(-1));
            if s > e {
                interp.report(
                    range,
                    Severity::Error,
                    "dim-out-of-range",
                    "flatten() has invalid args: start_dim cannot come after end_dim".into(),
                );
                return Value::Unknown;
            }
            let mut shape = dims[..s].to_vec();
            shape.push(numel(&dims[s..=e]));
            shape.extend(dims[e + 1..].iter().cloned());
            same(interp, shape, x.dtype)
        }
        "unflatten" => {
            let d = dim_arg!(1, "dim", None);
            let sizes = args
                .get(2, "sizes")
                .and_then(|v| v.items())
                .unwrap_or_default();
            let mut new = interp.size_dims(&sizes);
            if let Some(pos) = new.iter().position(|n| interp.env.value(n) == Some(-1)) {
                let known: Vec<Dim> = new
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != pos)
                    .map(|(_, n)| n.clone())
                    .collect();
                new[pos] = dims[d]
                    .floordiv(&numel(&known))
                    .unwrap_or_else(|| interp.env.anonymous());
            } else if interp.env.known_different(&numel(&new), &dims[d]) {
                let message = format!(
                    "unflatten: Provided sizes {} don't multiply up to the size of dim {d} ({}) in the input tensor",
                    interp.fmt_dims(&new),
                    interp.fmt_dim(&dims[d])
                );
                interp.report(range, Severity::Error, "view-size", message);
                return Value::Unknown;
            }
            let mut shape = dims[..d].to_vec();
            shape.extend(new);
            shape.extend(dims[d + 1..].iter().cloned());
            same(interp, shape, x.dtype)
        }
        "squeeze" => {
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
                                        interp.report(
                                            range,
                                            Severity::Error,
                                            "dim-out-of-range",
                                            message,
                                        );
                                        return Value::Unknown;
                                    }
                                }
                            }
                            _ => return unknown_rank_rule(interp, name, &x, args, device),
                        }
                    }
                    out
                }
            };
            let mut shape = Vec::new();
            for (i, d) in dims.iter().enumerate() {
                if targets.contains(&i) {
                    match interp.env.value(d) {
                        Some(1) => continue,
                        Some(_) => {}
                        // Whether a symbolic size is 1 decides the rank: unknown.
                        None if args.get(1, "dim").is_none() => {
                            return unknown_rank_rule(interp, name, &x, args, device);
                        }
                        None => {}
                    }
                }
                shape.push(d.clone());
            }
            same(interp, shape, x.dtype)
        }
        "unsqueeze" => {
            let d = match args.int(1, "dim") {
                Some(d) => match wrap_dim(d, rank + 1) {
                    Ok(d) => d,
                    Err(message) => {
                        interp.report(range, Severity::Error, "dim-out-of-range", message);
                        return Value::Unknown;
                    }
                },
                None => return unknown_rank_rule(interp, name, &x, args, device),
            };
            let mut shape = dims.clone();
            shape.insert(d, Dim::konst(1));
            same(interp, shape, x.dtype)
        }
        "permute" => {
            let order = args.varargs(1);
            if order.len() != rank {
                let message = format!(
                    "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {rank} is not equal to len(dims) = {}",
                    order.len()
                );
                interp.report(range, Severity::Error, "permute-dims", message);
                return Value::Unknown;
            }
            let mut shape = Vec::new();
            let mut seen = Vec::new();
            for v in &order {
                let Some(i) = (match v {
                    Value::Int(d) => d.as_const(),
                    _ => None,
                }) else {
                    return unknown_rank_rule(interp, name, &x, args, device);
                };
                match wrap_dim(i, rank) {
                    Ok(i) if !seen.contains(&i) => {
                        seen.push(i);
                        shape.push(dims[i].clone());
                    }
                    Ok(_) => {
                        interp.report(
                            range,
                            Severity::Error,
                            "permute-dims",
                            "permute(): duplicate dims are not allowed.".into(),
                        );
                        return Value::Unknown;
                    }
                    Err(message) => {
                        interp.report(range, Severity::Error, "dim-out-of-range", message);
                        return Value::Unknown;
                    }
                }
            }
            same(interp, shape, x.dtype)
        }
        "transpose" | "swapaxes" | "swapdims" => {
            let a = dim_arg!(1, "dim0", None);
            let b = dim_arg!(2, "dim1", None);
            let mut shape = dims.clone();
            shape.swap(a, b);
            same(interp, shape, x.dtype)
        }
        "t" | "__attr_T" | "__attr_mT" | "__attr_H" | "__attr_mH" | "adjoint" => {
            let mut shape = dims.clone();
            match name {
                "t" if rank > 2 => {
                    interp.report(
                        range,
                        Severity::Error,
                        "dim-out-of-range",
                        format!("t() expects a tensor with <= 2 dimensions, but self is {rank}D"),
                    );
                    return Value::Unknown;
                }
                "t" | "__attr_T" | "__attr_H" => shape.reverse(),
                _ => {
                    if rank < 2 {
                        interp.report(range, Severity::Error, "dim-out-of-range", "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.".into());
                        return Value::Unknown;
                    }
                    shape.swap(rank - 1, rank - 2);
                }
            }
            same(interp, shape, x.dtype)
        }
        "movedim" | "moveaxis" => {
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
                    interp.report(range, Severity::Error, "dim-out-of-range", message);
                    return Value::Unknown;
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
                return unknown_rank_rule(interp, name, &x, args, device);
            };
            if src.len() != dst.len() {
                return Value::Unknown;
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
            same(interp, shape, x.dtype)
        }
        "expand" | "broadcast_to" => {
            let items = args.varargs(1);
            expand(interp, &x, &dims, &items, device, range)
        }
        "repeat" | "tile" => {
            let reps = interp.size_dims(&args.varargs(1));
            if name == "repeat" && reps.len() < rank {
                interp.report(range, Severity::Error, "repeat-dims", "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor".into());
                return Value::Unknown;
            }
            if name == "repeat"
                && reps
                    .iter()
                    .any(|r| interp.env.value(r).is_some_and(|v| v < 0))
            {
                let n = reps.len();
                let mut padded = vec![Dim::konst(1); n - rank];
                padded.extend(dims.iter().cloned());
                let shape: Vec<Dim> = padded.iter().zip(&reps).map(|(a, b)| a.mul(b)).collect();
                let neg = shape
                    .iter()
                    .find_map(|d| interp.env.value(d).filter(|v| *v < 0));
                let message = format!(
                    "Trying to create tensor with negative dimension {}: {}",
                    neg.unwrap_or(-1),
                    interp.fmt_dims(&shape)
                );
                interp.report(range, Severity::Error, "negative-size", message);
                return Value::Unknown;
            }
            let n = reps.len().max(rank);
            let mut padded = vec![Dim::konst(1); n - rank];
            padded.extend(dims.iter().cloned());
            let mut r = vec![Dim::konst(1); n - reps.len()];
            r.extend(reps);
            let shape = padded.iter().zip(&r).map(|(a, b)| a.mul(b)).collect();
            same(interp, shape, x.dtype)
        }
        "repeat_interleave" => {
            let reps = args.get(1, "repeats").cloned().unwrap_or(Value::Unknown);
            let Value::Int(k) = reps else {
                return out_var(interp, &x, x.dtype, device, name);
            };
            match args.get(2, "dim") {
                None | Some(Value::None) => {
                    let shape = vec![numel(&dims).mul(&k)];
                    same(interp, shape, x.dtype)
                }
                _ => {
                    let d = dim_arg!(2, "dim", None);
                    let mut shape = dims.clone();
                    shape[d] = shape[d].mul(&k);
                    same(interp, shape, x.dtype)
                }
            }
        }
        "narrow" => {
            let d = dim_arg!(1, "dim", None);
            let len = args.get(3, "length").cloned().unwrap_or(Value::Unknown);
            if let (Some(size), Some(start), Some(l)) = (
                interp.env.value(&dims[d]),
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
                    (st + l > size).then(|| {
                        format!("start ({st}) + length ({l}) exceeds dimension size ({size}).")
                    })
                };
                if let Some(message) = message {
                    interp.report(range, Severity::Error, "index-out-of-range", message);
                    return Value::Unknown;
                }
            }
            let mut shape = dims.clone();
            shape[d] = interp.size_dims(&[len])[0].clone();
            same(interp, shape, x.dtype)
        }
        "select" => {
            let d = dim_arg!(1, "dim", None);
            let mut shape = dims.clone();
            shape.remove(d);
            same(interp, shape, x.dtype)
        }
        "unbind" => {
            let d = dim_arg!(1, "dim", Some(0));
            let Some(n) = interp.env.value(&dims[d]) else {
                return Value::Unknown;
            };
            let mut shape = dims.clone();
            shape.remove(d);
            let item = same(interp, shape, x.dtype);
            Value::tuple(vec![item; n.clamp(0, 1024) as usize])
        }
        "split" | "split_with_sizes" => split(interp, &x, &dims, args, device, range),
        "chunk" => {
            let d = dim_arg!(2, "dim", Some(0));
            let (Some(c), Some(s)) = (args.int(1, "chunks"), interp.env.value(&dims[d])) else {
                // A symbolic size split into known chunks: equal pieces when it divides.
                if let Some(c) = args.int(1, "chunks").filter(|c| *c > 0 && *c <= 64) {
                    let mut shape = dims.clone();
                    shape[d] = dims[d]
                        .floordiv(&Dim::konst(c))
                        .unwrap_or_else(|| Dim::konst(0));
                    let piece = same(interp, shape, x.dtype);
                    return Value::tuple(vec![piece; c as usize]);
                }
                return Value::Unknown;
            };
            if c <= 0 {
                return Value::Unknown;
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
                out.push(same(interp, shape, x.dtype));
            }
            Value::tuple(out)
        }
        "tensor_split" => {
            let d = dim_arg!(2, "dim", Some(0));
            let (Some(c), Some(s)) = (args.int(1, "sections"), interp.env.value(&dims[d])) else {
                return Value::Unknown;
            };
            if c <= 0 {
                return Value::Unknown;
            }
            let mut out = Vec::new();
            for i in 0..c.min(1024) {
                let mut shape = dims.clone();
                shape[d] = Dim::konst(s / c + if i < s % c { 1 } else { 0 });
                out.push(same(interp, shape, x.dtype));
            }
            Value::tuple(out)
        }
        "matmul" | "mm" | "bmm" | "mv" | "dot" | "inner_vec" => {
            let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
            matmul(interp, name, &x, &other, args, device, range)
        }
        "outer" | "ger" => {
            let Some(y) = args.tensor(1, "vec2") else {
                return Value::Unknown;
            };
            let Some(dy) = interp.dims(&y) else {
                return Value::Unknown;
            };
            for (what, n) in [("self", dims.len()), ("vec2", dy.len())] {
                if n != 1 {
                    let message = format!("outer: Expected 1-D argument {what}, but got {n}-D");
                    interp.report(range, Severity::Error, "matmul-shape", message);
                    return Value::Unknown;
                }
            }
            let (Some(a), Some(b)) = (dims.first(), dy.first()) else {
                return Value::Unknown;
            };
            let dtype = promote(&[
                (&Value::Tensor(x.clone()), Some(1)),
                (&Value::Tensor(y.clone()), Some(1)),
            ]);
            same(interp, vec![a.clone(), b.clone()], dtype)
        }
        "baddbmm" | "addmm" | "addbmm" | "addmv" => {
            let (Some(a), Some(b)) = (
                args.tensor(1, "batch1").or(args.tensor(1, "mat1")),
                args.tensor(2, "batch2").or(args.tensor(2, "mat2")),
            ) else {
                return Value::Unknown;
            };
            let product = matmul(
                interp,
                match name {
                    "baddbmm" | "addbmm" => "bmm",
                    "addmv" => "mv",
                    _ => "mm",
                },
                &a,
                &Value::Tensor(b),
                args,
                device.clone(),
                range.clone(),
            );
            let Value::Tensor(p) = &product else {
                return product;
            };
            // addbmm sums the batch of products
            let product = match (name, interp.dims(p)) {
                ("addbmm", Some(pd)) if pd.len() == 3 => {
                    let p2 =
                        out_known(interp, p, pd[1..].to_vec(), p.dtype, p.device.clone(), name);
                    p2
                }
                _ => product,
            };
            let Value::Tensor(p) = &product else {
                return product;
            };
            let (Some(pd), Some(bias)) = (interp.dims(p), Some(dims.clone())) else {
                return product;
            };
            match broadcast(interp, &bias, &pd) {
                Ok(_) => product,
                Err(message) => {
                    interp.report(range, Severity::Error, "broadcast-shape", message);
                    Value::Unknown
                }
            }
        }
        "einsum_operand" => Value::Unknown,
        "diag_embed" => {
            let mut shape = dims.clone();
            if let Some(last) = shape.last().cloned() {
                shape.push(last);
            }
            same(interp, shape, x.dtype)
        }
        "diag" => match rank {
            1 => same(interp, vec![dims[0].clone(), dims[0].clone()], x.dtype),
            2 => same(interp, vec![dims[0].minimum(&dims[1])], x.dtype),
            _ => Value::Unknown,
        },
        "diagonal" => {
            if rank < 2 {
                return Value::Unknown;
            }
            let a = dim_arg!(2, "dim1", Some(0));
            let b = dim_arg!(3, "dim2", Some(1));
            let offset = args.int(1, "offset").unwrap_or(0);
            let n = if offset == 0 {
                dims[a].minimum(&dims[b])
            } else {
                match (interp.env.value(&dims[a]), interp.env.value(&dims[b])) {
                    (Some(r), Some(c)) => {
                        let n = if offset > 0 {
                            r.min(c - offset)
                        } else {
                            (r + offset).min(c)
                        };
                        Dim::konst(n.max(0))
                    }
                    _ => interp.env.anonymous(),
                }
            };
            let mut shape: Vec<Dim> = dims
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != a && *i != b)
                .map(|(_, d)| d.clone())
                .collect();
            shape.push(n);
            same(interp, shape, x.dtype)
        }
        "real" | "imag" => match x.dtype {
            Some(d @ (DType::Complex64 | DType::Complex128)) => {
                let real = if d == DType::Complex64 {
                    DType::Float32
                } else {
                    DType::Float64
                };
                same(interp, dims, Some(real))
            }
            Some(_) if name == "imag" => {
                let message =
                    "imag is not implemented for tensors with non-complex dtypes.".to_string();
                interp.report(range, Severity::Error, "dtype-unsupported", message);
                Value::Unknown
            }
            Some(_) => Value::Tensor(x.clone()),
            None => same(interp, dims, None),
        },
        "trace" if rank != 2 => {
            let message = format!("trace: expected a matrix, but got tensor with dim {rank}");
            interp.report(range, Severity::Error, "dim-out-of-range", message);
            Value::Unknown
        }
        "trace" => same(interp, Vec::new(), x.dtype),
        "gather" | "take_along_dim" => {
            let d = dim_arg!(1, "dim", Some(0));
            let Some(index) = args.tensor(2, "index").or(args.tensor(1, "indices")) else {
                return Value::Unknown;
            };
            match interp.dims(&index) {
                Some(idims) => {
                    if idims.len() != rank {
                        interp.report(
                            range,
                            Severity::Error,
                            "index-shape",
                            "Index tensor must have the same number of dimensions as input tensor"
                                .into(),
                        );
                        return Value::Unknown;
                    }
                    if name == "gather" {
                        if let Some(dt) = index.dtype
                            && !matches!(dt, DType::Int64 | DType::Int32)
                        {
                            let message =
                                "gather(): Expected dtype int32/int64 for index".to_string();
                            interp.report(range, Severity::Error, "dtype-mismatch", message);
                            return Value::Unknown;
                        }
                        let larger = (0..rank).find(|&k| {
                            k != d
                                && matches!(
                                    (interp.env.value(&idims[k]), interp.env.value(&dims[k])),
                                    (Some(i), Some(s)) if i > s
                                )
                        });
                        if let Some(k) = larger {
                            let message = format!(
                                "Size does not match at dimension {k} expected index {} to be no larger than self {} apart from dimension {d}",
                                interp.fmt_dims(&idims),
                                interp.fmt_dims(&dims)
                            );
                            interp.report(range, Severity::Error, "index-shape", message);
                            return Value::Unknown;
                        }
                    }
                    same(interp, idims, x.dtype)
                }
                None => out_shape(interp, &x, index.shape.clone(), x.dtype, device, name),
            }
        }
        "index_select" => {
            let d = dim_arg!(1, "dim", None);
            let Some(index) = args.tensor(2, "index") else {
                return Value::Unknown;
            };
            if let Some(dt) = index.dtype
                && !matches!(dt, DType::Int64 | DType::Int32)
            {
                let message = "index_select(): Expected dtype int32 or int64 for index".to_string();
                interp.report(range, Severity::Error, "dtype-mismatch", message);
                return Value::Unknown;
            }
            if interp.dims(&index).is_some_and(|i| i.len() > 1) {
                let message = "index_select(): Index is supposed to be a vector".to_string();
                interp.report(range, Severity::Error, "index-shape", message);
                return Value::Unknown;
            }
            let n = match interp.dims(&index) {
                Some(idims) if idims.len() <= 1 => {
                    idims.first().cloned().unwrap_or_else(|| Dim::konst(1))
                }
                _ => interp.env.anonymous(),
            };
            let mut shape = dims.clone();
            shape[d] = n;
            same(interp, shape, x.dtype)
        }
        "where" => {
            // `x` here is the condition.
            let (Some(a), Some(b)) = (args.get(1, "input").cloned(), args.get(2, "other").cloned())
            else {
                return Value::Unknown;
            };
            let mut shape = dims.clone();
            for v in [&a, &b] {
                if let Value::Tensor(t) = v {
                    let Some(d) = interp.dims(t) else {
                        return Value::Unknown;
                    };
                    match broadcast(interp, &shape, &d) {
                        Ok(s) => shape = s,
                        Err(message) => {
                            interp.report(range, Severity::Error, "broadcast-shape", message);
                            return Value::Unknown;
                        }
                    }
                }
            }
            let ra = if let Value::Tensor(t) = &a {
                interp.dims(t).map(|d| d.len())
            } else {
                None
            };
            let rb = if let Value::Tensor(t) = &b {
                interp.dims(t).map(|d| d.len())
            } else {
                None
            };
            let dtype = promote(&[(&a, ra), (&b, rb)]);
            same(interp, shape, dtype)
        }
        "multinomial" => {
            // One row of samples per distribution: [*, num_samples], int64.
            let n = args
                .get(1, "num_samples")
                .cloned()
                .unwrap_or(Value::Unknown);
            let n = interp.size_dims(&[n])[0].clone();
            let mut shape = dims.clone();
            match shape.last_mut() {
                Some(last) => *last = n,
                None => return Value::Unknown,
            }
            same(interp, shape, Some(DType::Int64))
        }
        "nonzero" | "argwhere" => {
            let n = interp.env.anonymous();
            if args.flag(1, "as_tuple", false) == Some(true) {
                let item = same(interp, vec![n], Some(DType::Int64));
                return Value::tuple(vec![item; rank]);
            }
            same(interp, vec![n, Dim::konst(rank as i64)], Some(DType::Int64))
        }
        "masked_select" | "unique" | "unique_consecutive" => {
            let n = interp.env.anonymous();
            same(interp, vec![n], x.dtype)
        }
        "bincount" => {
            let n = interp.env.anonymous();
            // with weights the counts take the weights' dtype
            let dtype = match args.get(1, "weights") {
                Some(Value::Tensor(w)) => w.dtype,
                _ => Some(DType::Int64),
            };
            same(interp, vec![n], dtype)
        }
        "cdist" => {
            let Some(y) = args.tensor(1, "x2") else {
                return Value::Unknown;
            };
            let Some(dy) = interp.dims(&y) else {
                return Value::Unknown;
            };
            if rank < 2 || dy.len() < 2 {
                return Value::Unknown;
            }
            if interp
                .env
                .known_different(&dims[rank - 1], &dy[dy.len() - 1])
            {
                let message = format!(
                    "X1 and X2 must have the same number of columns. X1: {} X2: {}",
                    interp.fmt_dim(&dims[rank - 1]),
                    interp.fmt_dim(&dy[dy.len() - 1])
                );
                interp.report(range, Severity::Error, "matmul-shape", message);
                return Value::Unknown;
            }
            let Ok(mut batch) = broadcast(interp, &dims[..rank - 2], &dy[..dy.len() - 2]) else {
                return Value::Unknown;
            };
            batch.push(dims[rank - 2].clone());
            batch.push(dy[dy.len() - 2].clone());
            same(interp, batch, x.dtype)
        }
        "cosine_similarity" | "pairwise_distance" => {
            let Some(y) = args.tensor(1, "x2") else {
                return Value::Unknown;
            };
            let Some(dy) = interp.dims(&y) else {
                return Value::Unknown;
            };
            let Ok(b) = broadcast(interp, &dims, &dy) else {
                return Value::Unknown;
            };
            let d = match args.int(2, "dim") {
                Some(d) => wrap_dim(d, b.len()).ok(),
                None => b.len().checked_sub(1),
            };
            let Some(d) = d else { return Value::Unknown };
            let mut shape = b;
            if name == "cosine_similarity"
                || !matches!(args.get(4, "keepdim"), Some(Value::Bool(Some(true))))
            {
                shape.remove(d);
            } else {
                shape[d] = Dim::konst(1);
            }
            same(interp, shape, x.dtype)
        }
        "rot90" => {
            let k = args.int(1, "k").unwrap_or(1).rem_euclid(4);
            let mut shape = dims.clone();
            if k % 2 == 1 && rank >= 2 {
                shape.swap(0, 1);
            }
            same(interp, shape, x.dtype)
        }
        "cross" | "linalg_cross" => same(interp, dims, x.dtype),
        "inverse" | "linalg_inv" | "matrix_exp" | "linalg_matrix_exp" => {
            same(interp, dims, x.dtype)
        }
        "det" | "linalg_det" | "logdet" => {
            same(interp, dims[..rank.saturating_sub(2)].to_vec(), x.dtype)
        }
        "one_hot" => {
            let c = match args.get(1, "num_classes") {
                Some(Value::Int(d)) if d.as_const() != Some(-1) => d.clone(),
                _ => interp.env.anonymous(),
            };
            if let Some(dt) = x.dtype
                && dt != DType::Int64
            {
                interp.report(
                    range,
                    Severity::Error,
                    "dtype-mismatch",
                    "one_hot is only applicable to index tensor of type LongTensor.".into(),
                );
                return Value::Unknown;
            }
            let mut shape = dims.clone();
            shape.push(c);
            same(interp, shape, Some(DType::Int64))
        }
        _ => {
            // No rule for this op: with fallback kernels off, torch's mode
            // would refuse it; either way its result is unknown.
            if !interp.config.allow_fallback_kernels {
                interp.report(
                    range,
                    Severity::Warning,
                    "unsupported-op",
                    format!("no shape rule for `{name}`; its result is unknown"),
                );
            }
            unknown_rank_rule(interp, name, &x, args, device)
        }
    }
}

fn meshgrid(interp: &mut Interp<'_>, name: &str, args: &Args, range: TextRange) -> Value {
    {
        // 1-D inputs of sizes n0, n1, ... give that many tensors of shape
        // [n0, n1, ...] ("ij"), or with the first two swapped ("xy", the default).
        let items = args.varargs(0);
        let ts: Vec<Rc<Tensor>> = items
            .iter()
            .filter_map(|v| v.as_tensor().cloned())
            .collect();
        if ts.len() != items.len() || ts.is_empty() {
            return Value::Unknown;
        }
        let mut sizes = Vec::new();
        for t in &ts {
            match interp.dims(t).as_deref() {
                Some([n]) => sizes.push(n.clone()),
                Some([]) => sizes.push(Dim::konst(1)),
                _ => return Value::Unknown,
            }
        }
        let xy = !matches!(args.kw("indexing"), Some(Value::Str(s)) if &**s == "ij");
        let mut shape = sizes.clone();
        if xy && shape.len() >= 2 {
            shape.swap(0, 1);
        }
        let device = check_inputs(interp, args, name, range.clone()).unwrap_or(None);
        Value::tuple(
            ts.iter()
                .map(|t| out_known(interp, t, shape.clone(), t.dtype, device.clone(), name))
                .collect(),
        )
    }
}

/// The memory order of an op's result: reordering ops permute it, ops that
/// keep the shape keep it (pointwise ops preserve the input's stride order),
/// `contiguous` and everything else make a plain tensor.
fn track_layout(interp: &Interp<'_>, name: &str, args: &Args, result: Value) -> Value {
    let Value::Tensor(out) = &result else {
        return result;
    };
    let Some(Value::Tensor(input)) = args.pos.first() else {
        return super::layout::with_layout(result, None);
    };
    let (Some(in_dims), Some(out_dims)) = (interp.dims(input), interp.dims(out)) else {
        return super::layout::with_layout(result, None);
    };
    if let Some(p) = super::layout::permutation(name, args, in_dims.len()) {
        let layout = super::layout::permuted(input.layout.as_deref().map(|v| v.as_slice()), &p);
        return super::layout::with_layout(result, layout);
    }
    let keeps = name != "contiguous"
        && in_dims.len() == out_dims.len()
        && in_dims
            .iter()
            .zip(&out_dims)
            .all(|(a, b)| interp.env.known_equal(a, b));
    super::layout::with_layout(result, if keeps { input.layout.clone() } else { None })
}

/// Ops without a tensor first argument: `torch.cat([...])`, `torch.stack`, `torch.einsum`, `torch.max(a, b)`.
fn scalar_fallback(interp: &mut Interp<'_>, name: &str, args: &Args, range: TextRange) -> Value {
    match name {
        "cat" | "concat" | "concatenate" | "stack" | "hstack" | "vstack" | "dstack"
        | "row_stack" | "column_stack" => cat(interp, name, args, range),
        "einsum" => super::einops::einsum(interp, args, range),
        "broadcast_tensors" => {
            let ts = args.tensors();
            let mut shape: Vec<Dim> = Vec::new();
            for t in &ts {
                let Some(d) = interp.dims(t) else {
                    return Value::Unknown;
                };
                match broadcast(interp, &shape, &d) {
                    Ok(s) => shape = s,
                    Err(message) => {
                        interp.report(range, Severity::Error, "broadcast-shape", message);
                        return Value::Unknown;
                    }
                }
            }
            Value::tuple(
                ts.iter()
                    .map(|t| out_known(interp, t, shape.clone(), t.dtype, t.device.clone(), name))
                    .collect(),
            )
        }
        "meshgrid" => meshgrid(interp, name, args, range),
        _ => {
            // `torch.add(2, x)`, `torch.where(cond, 1.0, x)`: a tensor elsewhere.
            if let Some(t) = args.tensors().first().cloned()
                && (BINARY.contains(&name)
                    || BINARY_BOOL.contains(&name)
                    || matches!(name, "div" | "true_divide" | "mul" | "add" | "pow" | "rsub"))
            {
                let device = check_inputs(interp, args, name, range.clone()).unwrap_or(None);
                let a = args.pos.first().cloned().unwrap_or(Value::Unknown);
                let b = args.pos.get(1).cloned().unwrap_or(Value::Tensor(t));
                return binary(interp, name, &a, &b, args, device, range);
            }
            if name == "where"
                && let Some(Value::Tensor(_)) = args.pos.first()
            {
                return Value::Unknown;
            }
            if !interp.config.allow_fallback_kernels && !args.tensors().is_empty() {
                interp.report(
                    range,
                    Severity::Warning,
                    "unsupported-op",
                    format!("no shape rule for `{name}`; its result is unknown"),
                );
            }
            Value::Unknown
        }
    }
}

/// What an op with no rule (or a rank not known) returns: a tensor of
/// unknown shape on the input's device.
fn unknown_rank_rule(
    interp: &mut Interp<'_>,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> Value {
    if let Some(shape) = super::tail::unknown_rank_op(interp, name, x, args) {
        // bucket indices are int64 (int32 with out_int32=True)
        let dtype = match name {
            "bucketize" | "searchsorted" if args.flag(99, "out_int32", false) == Some(true) => {
                Some(DType::Int32)
            }
            "bucketize" | "searchsorted" => Some(DType::Int64),
            _ => x.dtype,
        };
        return match shape {
            super::tail::TailResult::One(shape) => out_shape(interp, x, shape, dtype, device, name),
            super::tail::TailResult::Pair(shape) => {
                let v = out_shape(interp, x, shape.clone(), x.dtype, device.clone(), name);
                let i = out_shape(interp, x, shape, Some(DType::Int64), device, name);
                Value::tuple(vec![v, i])
            }
            super::tail::TailResult::Many(shapes) => Value::tuple(
                shapes
                    .into_iter()
                    .map(|s| out_shape(interp, x, s, x.dtype, device.clone(), name))
                    .collect(),
            ),
        };
    }
    let known =
        SAME.contains(&name) || TO_FLOAT.contains(&name) || KNOWN_UNKNOWN_RANK.contains(&name);
    if !known && !interp.config.allow_fallback_kernels {
        let range = x.made_at.clone().unwrap_or(0..0);
        let _ = range;
    }
    let shape = interp.fresh_rank_var();
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

/// Ops with a rule that just could not run on an input of unknown rank.
const KNOWN_UNKNOWN_RANK: &[&str] = &[
    "view",
    "reshape",
    "flatten",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "permute",
    "transpose",
    "expand",
    "repeat",
    "matmul",
    "softmax",
    "log_softmax",
    "argmax",
    "max",
    "min",
    "topk",
    "sort",
    "gather",
    "index_select",
    "narrow",
    "select",
    "split",
    "chunk",
    "movedim",
    "t",
    "__attr_T",
    "__attr_mT",
];

/// The output tensor of an op on `x`: fake or real as the mode makes it.
pub(crate) fn out_shape(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    shape: Shape,
    dtype: Option<DType>,
    device: Option<Device>,
    op: &str,
) -> Value {
    let shape = interp.resolve_shape(&shape);
    let mut t = interp.new_tensor(shape, dtype, device, op);
    if !interp.mode.fake {
        t.origin = x.origin;
    }
    Value::Tensor(Rc::new(t))
}

pub(crate) fn out_known(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    dims: Vec<Dim>,
    dtype: Option<DType>,
    device: Option<Device>,
    op: &str,
) -> Value {
    let dims = dims.into_iter().map(|d| interp.bounded(d)).collect();
    out_shape(interp, x, Shape::known(dims), dtype, device, op)
}

/// Check the fake mode's input rules and the devices of an op's tensors.
/// Returns the output device (`Some(None)` when unknown), `None` when the
/// op raises.
pub(crate) fn check_inputs(
    interp: &mut Interp<'_>,
    args: &Args,
    name: &str,
    range: TextRange,
) -> Option<Option<Device>> {
    let tensors = args.tensors();
    if interp.mode.fake && !interp.mode.allow_non_fake_inputs {
        if let Some(real) = tensors.iter().find(|t| t.origin == Provenance::Real) {
            let shape = interp
                .dims(real)
                .map(|d| interp.fmt_dims(&d))
                .unwrap_or_else(|| "[?]".into());
            let message = format!(
                "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. Found in aten.{name}(tensor([...], size={shape}))"
            );
            let (severity, message) = if interp.mode.user_mode {
                (Severity::Error, message)
            } else {
                (
                    Severity::Warning,
                    format!(
                        "a real tensor (made outside the fake mode, e.g. at module level) meets fake ones: {message}"
                    ),
                )
            };
            let related = real
                .made_at
                .clone()
                .map(|r| vec![(r, "the real tensor is made here".to_string())])
                .unwrap_or_default();
            interp.report_related(range.clone(), severity, "real-fake-mix", message, related);
        }
        let modes: Vec<u32> = tensors
            .iter()
            .filter(|t| t.origin == Provenance::Fake)
            .map(|t| t.mode)
            .collect();
        if let (Some(first), true) = (modes.first(), interp.mode.user_mode)
            && modes.iter().any(|m| m != first)
        {
            interp.report(
                range.clone(),
                Severity::Error,
                "fake-mode-mix",
                "Mixing fake modes NYI: tensors from two different FakeTensorMode scopes meet here"
                    .into(),
            );
        }
    }
    let pointwise = SAME.contains(&name)
        || BINARY.contains(&name)
        || BINARY_BOOL.contains(&name)
        || matches!(name, "div" | "where" | "true_divide");
    let mut common: Option<Device> = None;
    let mut common_is_scalar = false;
    let mut unknown = false;
    for t in &tensors {
        let Some(dev) = &t.device else {
            unknown = true;
            continue;
        };
        let is_scalar_cpu = *dev == Device::Cpu && interp.dims(t).is_some_and(|d| d.is_empty());
        match &common {
            None => {
                common = Some(dev.clone());
                common_is_scalar = is_scalar_cpu;
            }
            Some(c) if c == dev => {}
            Some(c) => {
                if is_scalar_cpu && pointwise {
                    continue;
                }
                if common_is_scalar && pointwise {
                    common = Some(dev.clone());
                    common_is_scalar = false;
                    continue;
                }
                let (a, b) = (c.clone(), dev.clone());
                let either = a == Device::CudaOrCpu || b == Device::CudaOrCpu;
                if either
                    && (a == Device::Cpu
                        || b == Device::Cpu
                        || a == Device::Cuda(0)
                        || b == Device::Cuda(0))
                {
                    // One side is cpu-or-cuda: it fails exactly when CUDA is there.
                    let message = format!(
                        "Expected all tensors to be on the same device, but found at least two devices, {} and {}! (when CUDA is available)",
                        if a == Device::CudaOrCpu {
                            "cuda:0".into()
                        } else {
                            a.name()
                        },
                        if b == Device::CudaOrCpu {
                            "cuda:0".into()
                        } else {
                            b.name()
                        }
                    );
                    interp.report(range.clone(), Severity::Error, "device-mismatch", message);
                    return None;
                }
                if either {
                    unknown = true;
                    continue;
                }
                let message = format!(
                    "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
                    a.name(),
                    b.name()
                );
                interp.report(range.clone(), Severity::Error, "device-mismatch", message);
                return None;
            }
        }
    }
    Some(if unknown && common.is_none() {
        None
    } else {
        common
    })
}

fn check_mask(interp: &mut Interp<'_>, x: &Rc<Tensor>, args: &Args, range: TextRange) {
    let Some(mask) = args.tensor(1, "mask") else {
        return;
    };
    if let Some(dt) = mask.dtype
        && dt != DType::Bool
    {
        let message = format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            dt.name()
        );
        interp.report(range.clone(), Severity::Error, "dtype-mismatch", message);
    }
    if let (Some(xd), Some(md)) = (interp.dims(x), interp.dims(&mask))
        && let Err(message) = broadcast(interp, &xd, &md)
    {
        interp.report(range, Severity::Error, "broadcast-shape", message);
    }
}

fn binary(
    interp: &mut Interp<'_>,
    name: &str,
    a: &Value,
    b: &Value,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let dims_of = |interp: &Interp<'_>, v: &Value| -> Option<Option<Vec<Dim>>> {
        match v {
            Value::Tensor(t) => Some(interp.dims(t)),
            Value::Int(_) | Value::Float(_) | Value::Bool(_) => Some(Some(Vec::new())),
            _ => None,
        }
    };
    let template = match (a, b) {
        (Value::Tensor(t), _) | (_, Value::Tensor(t)) => t.clone(),
        _ => return Value::Unknown,
    };
    let (da, db) = (dims_of(interp, a), dims_of(interp, b));
    let dtype = {
        let ra = da.clone().flatten().map(|d| d.len());
        let rb = db.clone().flatten().map(|d| d.len());
        let d = promote(&[(a, ra), (b, rb)]);
        if BINARY_BOOL.contains(&name) {
            Some(DType::Bool)
        } else if name == "float_power" {
            d.map(|d| {
                if d.is_complex() {
                    DType::Complex128
                } else {
                    DType::Float64
                }
            })
        } else if matches!(name, "atan2" | "arctan2" | "copysign" | "xlogy" | "ldexp") {
            int_to_float(d)
        } else if matches!(name, "div" | "true_divide" | "divide") {
            if args
                .kw("rounding_mode")
                .is_some_and(|v| !matches!(v, Value::None))
            {
                d
            } else {
                int_to_float(d)
            }
        } else if name == "pow" {
            d.map(|d| if d == DType::Bool { DType::Int64 } else { d })
        } else {
            d
        }
    };
    let (Some(Some(xa)), Some(Some(xb))) = (da.clone(), db.clone()) else {
        // A tensor of unknown rank with a scalar keeps its rank variable.
        let shape = match (a, b, &da, &db) {
            (Value::Tensor(t), _, _, Some(Some(s))) | (_, Value::Tensor(t), Some(Some(s)), _)
                if s.is_empty() =>
            {
                t.shape.clone()
            }
            (Value::Tensor(x), Value::Tensor(y), _, _) if x.shape == y.shape => x.shape.clone(),
            (Value::Tensor(x), Value::Tensor(y), _, _) => {
                super::tail::broadcast(interp, x, y).unwrap_or_else(|| interp.fresh_rank_var())
            }
            _ => interp.fresh_rank_var(),
        };
        return out_shape(interp, &template, shape, dtype, device, name);
    };
    match broadcast(interp, &xa, &xb) {
        Ok(shape) => out_known(interp, &template, shape, dtype, device, name),
        Err(message) => {
            let related = args
                .ranges
                .iter()
                .zip(["left operand", "right operand"])
                .zip([&xa, &xb])
                .map(|((r, which), d)| (r.clone(), format!("{which}: {}", interp.fmt_dims(d))))
                .collect();
            interp.report_related(range, Severity::Error, "broadcast-shape", message, related);
            Value::Unknown
        }
    }
}

fn reduced(dims: &[Dim], reduce: &[usize], keepdim: bool) -> Vec<Dim> {
    dims.iter()
        .enumerate()
        .filter_map(|(i, d)| {
            if reduce.contains(&i) {
                keepdim.then(|| Dim::konst(1))
            } else {
                Some(d.clone())
            }
        })
        .collect()
}

fn reduce(
    interp: &mut Interp<'_>,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let dtype = match name {
        "sum" | "prod" | "nansum" | "count_nonzero" => {
            if name == "count_nonzero" {
                Some(DType::Int64)
            } else {
                sum_dtype(x.dtype)
            }
        }
        // all/any keep uint8 (spec §3.3)
        "all" | "any" if x.dtype == Some(DType::UInt8) => Some(DType::UInt8),
        "all" | "any" => Some(DType::Bool),
        "mean" | "nanmean" | "std" | "var" | "norm" | "logsumexp" | "linalg_vector_norm"
        | "linalg_norm" => {
            let float_override =
                super::creation::dtype_arg(args).is_some_and(|d| d.category() >= 2);
            if let Some(d) = x.dtype
                && d.category() <= 1
                && name != "logsumexp"
                && !float_override
            {
                let message = format!(
                    "{name}(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                    torch_name(d)
                );
                interp.report(range.clone(), Severity::Error, "dtype-mismatch", message);
                return Value::Unknown;
            }
            // complex var / std / norm are real (spec §3.3)
            match (name, x.dtype) {
                (
                    "std" | "var" | "norm" | "linalg_vector_norm" | "linalg_norm",
                    Some(DType::Complex64),
                ) => Some(DType::Float32),
                (
                    "std" | "var" | "norm" | "linalg_vector_norm" | "linalg_norm",
                    Some(DType::Complex128),
                ) => Some(DType::Float64),
                _ => x.dtype,
            }
        }
        _ => x.dtype,
    };
    let dtype = super::creation::dtype_arg(args).or(dtype);
    let Some(dims) = interp.dims(x) else {
        if args.get(1, "dim").is_none()
            && !matches!(name, "norm" | "linalg_norm" | "linalg_vector_norm")
        {
            return out_known(interp, x, Vec::new(), dtype, device, name);
        }
        return unknown_rank_rule(interp, name, x, args, device);
    };
    let rank = dims.len();
    let (dim_index, keep_index) = match name {
        "norm" | "linalg_norm" | "linalg_vector_norm" => (2, 3),
        "std" | "var" => (1, 2),
        _ => (1, 2),
    };
    let keepdim = args.flag(keep_index, "keepdim", false) == Some(true);
    let dim_value = args
        .kw("dim")
        .or_else(|| args.pos.get(dim_index))
        .filter(|v| !matches!(v, Value::Bool(_) | Value::Float(_) | Value::Str(_)));
    let targets: Vec<usize> = match dim_value {
        None | Some(Value::None) => (0..rank).collect(),
        Some(v) => {
            let items = v.items().unwrap_or_else(|| vec![v.clone()]);
            if items.is_empty() && matches!(name, "all" | "any") {
                // all/any with an empty dim list reduce nothing, unlike sum(())
                return out_known(interp, x, dims.clone(), dtype, device, name);
            } else if items.is_empty() {
                (0..rank).collect()
            } else {
                let mut out = Vec::new();
                for item in items {
                    let Value::Int(d) = &item else {
                        return unknown_rank_rule(interp, name, x, args, device);
                    };
                    let Some(d) = d.as_const() else {
                        return unknown_rank_rule(interp, name, x, args, device);
                    };
                    match wrap_dim(d, rank) {
                        Ok(i) if out.contains(&i) => {
                            interp.report(
                                range,
                                Severity::Error,
                                "dim-out-of-range",
                                format!("dim {i} appears multiple times in the list of dims"),
                            );
                            return Value::Unknown;
                        }
                        Ok(i) => out.push(i),
                        Err(message) => {
                            interp.report(range, Severity::Error, "dim-out-of-range", message);
                            return Value::Unknown;
                        }
                    }
                }
                out
            }
        }
    };
    out_known(
        interp,
        x,
        reduced(&dims, &targets, keepdim),
        dtype,
        device,
        name,
    )
}

fn reshape(
    interp: &mut Interp<'_>,
    name: &str,
    x: &Rc<Tensor>,
    dims: &[Dim],
    items: &[Value],
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let mut new = interp.size_dims(items);
    let total = numel(dims);
    let infer: Vec<usize> = new
        .iter()
        .enumerate()
        .filter(|(_, d)| interp.env.value(d) == Some(-1))
        .map(|(i, _)| i)
        .collect();
    if infer.len() > 1 {
        interp.report(
            range,
            Severity::Error,
            "view-size",
            "only one dimension can be inferred".into(),
        );
        return Value::Unknown;
    }
    let shown = |interp: &Interp<'_>, new: &[Dim]| {
        let parts: Vec<String> = new.iter().map(|d| interp.fmt_dim(d)).collect();
        format!("[{}]", parts.join(", "))
    };
    if let Some(&i) = infer.first() {
        let others: Vec<Dim> = new
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, d)| d.clone())
            .collect();
        let rest = numel(&others);
        match (interp.env.value(&total), interp.env.value(&rest)) {
            (Some(t), Some(r)) => {
                if r == 0 || t % r != 0 {
                    let message = format!(
                        "shape '{}' is invalid for input of size {t}",
                        shown(interp, &new)
                    );
                    interp.report(range, Severity::Error, "view-size", message);
                    return Value::Unknown;
                }
                new[i] = Dim::konst(t / r);
            }
            _ => {
                let total = interp.env.resolve(&total);
                let rest = interp.env.resolve(&rest);
                new[i] = match total.floordiv(&rest) {
                    Some(q) if q.mul(&rest) == total => q,
                    _ => {
                        // numel / rest is not a clean expression: a fresh size,
                        // learned later if a use pins it down.
                        let fresh = if i == 0 {
                            interp.env.weak_symbol("N")
                        } else {
                            interp.env.anonymous()
                        };
                        let _ = interp.env.unify(&fresh.mul(&rest), &total);
                        interp.env.resolve(&fresh)
                    }
                };
            }
        }
    } else {
        let want = numel(&new);
        if interp.env.known_different(&want, &total) {
            let message = format!(
                "shape '{}' is invalid for input of size {}",
                shown(interp, &new),
                interp.fmt_dim(&total)
            );
            interp.report(range, Severity::Error, "view-size", message);
            return Value::Unknown;
        }
        let _ = interp.require_equal(&want, &total);
    }
    if let Some(bad) = new
        .iter()
        .position(|d| interp.env.value(d).is_some_and(|n| n < -1))
    {
        let message = format!(
            "invalid shape dimension {} at index {bad} of shape {}",
            interp.fmt_dim(&new[bad]),
            shown(interp, &new)
        );
        interp.report(range, Severity::Error, "view-size", message);
        return Value::Unknown;
    }
    // `view` of a transposed tensor needs its dims consecutive in memory.
    if name == "view"
        && let Some(layout) = &x.layout
    {
        let sizes: Option<Vec<i64>> = dims.iter().map(|d| interp.env.value(d)).collect();
        let wanted: Option<Vec<i64>> = new.iter().map(|d| interp.env.value(d)).collect();
        if let (Some(sizes), Some(wanted)) = (sizes, wanted)
            && super::layout::view_compatible(&sizes, layout, &wanted) == Some(false)
        {
            interp.report(
                range,
                Severity::Error,
                "view-stride",
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.".to_string(),
            );
            return Value::Unknown;
        }
    }
    out_known(interp, x, new, x.dtype, device, name)
}

fn expand(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    dims: &[Dim],
    items: &[Value],
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let sizes = interp.size_dims(items);
    if sizes.len() < dims.len() {
        let message = format!(
            "expand(torch.FloatTensor{{{}}}, size={}): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
            interp.fmt_dims(dims),
            interp.fmt_dims(&sizes),
            sizes.len(),
            dims.len()
        );
        interp.report(range, Severity::Error, "expand-shape", message);
        return Value::Unknown;
    }
    let lead = sizes.len() - dims.len();
    let mut out = Vec::new();
    for (i, s) in sizes.iter().enumerate() {
        if i < lead {
            out.push(s.clone());
            continue;
        }
        let d = &dims[i - lead];
        if interp.env.value(s) == Some(-1) || interp.env.known_equal(s, d) {
            out.push(d.clone());
        } else if interp.is_one(d) {
            out.push(s.clone());
        } else if interp.env.known_different(s, d) {
            let message = format!(
                "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                interp.fmt_dim(s),
                interp.fmt_dim(d),
                interp.fmt_dims(&sizes),
                interp.fmt_dims(dims)
            );
            interp.report(range, Severity::Error, "expand-shape", message);
            return Value::Unknown;
        } else {
            out.push(s.clone());
        }
    }
    out_known(interp, x, out, x.dtype, device, "expand")
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
                interp.report(range, Severity::Error, "dim-out-of-range", message);
                return Value::Unknown;
            }
            None => return Value::Unknown,
        },
        _ => return Value::Unknown,
    };
    let size = &dims[d];
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
                        "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {d}), but got split_sizes={}",
                        interp.fmt_dim(size),
                        interp.fmt_dims(&sizes)
                    );
                    interp.report(range, Severity::Error, "split-size", message);
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

fn cat(interp: &mut Interp<'_>, name: &str, args: &Args, range: TextRange) -> Value {
    let Some(list) = args.get(0, "tensors").and_then(|v| v.items()) else {
        return Value::Unknown;
    };
    if list.is_empty() {
        interp.report(
            range,
            Severity::Error,
            "cat-shape",
            format!("torch.{name}(): expected a non-empty list of Tensors"),
        );
        return Value::Unknown;
    }
    let tensors: Vec<Rc<Tensor>> = list.iter().filter_map(|v| v.as_tensor().cloned()).collect();
    if tensors.len() != list.len() {
        return Value::Unknown;
    }
    let Some(device) = check_inputs(interp, args, name, range.clone()) else {
        return Value::Unknown;
    };
    let all: Option<Vec<Vec<Dim>>> = tensors.iter().map(|t| interp.dims(t)).collect();
    let dtype = tensors
        .iter()
        .try_fold(None::<DType>, |acc, t| {
            let d = t.dtype?;
            Some(Some(match acc {
                None => d,
                Some(a) => super::dtype::join(a, d),
            }))
        })
        .flatten();
    let Some(mut all) = all else {
        return out_var(interp, &tensors[0], dtype, device, name);
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
    // torch.concatenate spells the dim `axis`
    let dim_key = if args.kw("axis").is_some() {
        "axis"
    } else {
        "dim"
    };
    let first = all[0].clone();
    if op == "stack" {
        let d = args.int(1, dim_key).unwrap_or(dim_default);
        let d = match wrap_dim(d, first.len() + 1) {
            Ok(d) => d,
            Err(message) => {
                interp.report(range, Severity::Error, "dim-out-of-range", message);
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
                interp.report(range, Severity::Error, "stack-shape", message);
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
            Severity::Error,
            "cat-shape",
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
                interp.report(range, Severity::Error, "dim-out-of-range", message);
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
            interp.report(range, Severity::Error, "cat-shape", message);
            return Value::Unknown;
        }
        for (j, (a, b)) in s.iter().zip(&first).enumerate() {
            if j != d && interp.env.known_different(a, b) {
                let message = format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                    interp.fmt_dim(b),
                    interp.fmt_dim(a)
                );
                interp.report(range, Severity::Error, "cat-shape", message);
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

/// `matmul` and friends, with torch's messages.
pub(crate) fn matmul(
    interp: &mut Interp<'_>,
    name: &str,
    x: &Rc<Tensor>,
    other: &Value,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let Value::Tensor(y) = other else {
        return Value::Unknown;
    };
    let dtype = match (x.dtype, y.dtype) {
        (Some(a), Some(b)) if a != b => {
            let message = format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                a.name(),
                b.name()
            );
            interp.report(range.clone(), Severity::Error, "dtype-mismatch", message);
            Some(a)
        }
        (a, _) => a,
    };
    let (Some(a), Some(b)) = (interp.dims(x), interp.dims(y)) else {
        if let Some(shape) = super::tail::matmul(interp, x, y, range.clone()) {
            return out_shape(interp, x, shape, dtype, device, name);
        }
        return out_var(interp, x, dtype, device, name);
    };
    let related: Vec<(TextRange, String)> = args
        .ranges
        .iter()
        .zip([&a, &b])
        .map(|(r, d)| (r.clone(), format!("this operand is {}", interp.fmt_dims(d))))
        .collect();
    let fail = |interp: &mut Interp<'_>, message: String| {
        interp.report_related(
            range.clone(),
            Severity::Error,
            "matmul-shape",
            message,
            related.clone(),
        );
        Value::Unknown
    };
    if a.is_empty() || b.is_empty() {
        return fail(
            interp,
            format!(
                "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
                a.len(),
                b.len()
            ),
        );
    }
    match name {
        "mm" if a.len() != 2 || b.len() != 2 => {
            return fail(
                interp,
                format!(
                    "mm: self must be a matrix, got {}-D tensor",
                    if a.len() != 2 { a.len() } else { b.len() }
                ),
            );
        }
        "bmm" if a.len() != 3 || b.len() != 3 => {
            return fail(interp, "batch1 must be a 3D tensor".into());
        }
        "bmm"
            if interp.env.known_different(&a[0], &b[0])
                || interp.env.known_different(&a[2], &b[1]) =>
        {
            let message = format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                interp.fmt_dim(&a[0]),
                interp.fmt_dim(&a[2]),
                interp.fmt_dim(&b[0]),
                interp.fmt_dim(&b[1])
            );
            return fail(interp, message);
        }
        "mv" if a.len() != 2 || b.len() != 1 => {
            let message = format!(
                "vector + matrix @ vector expected, got 1, {}, {}",
                a.len(),
                b.len()
            );
            return fail(interp, message);
        }
        "dot" if a.len() != 1 || b.len() != 1 => {
            let message = format!(
                "1D tensors expected, but got {}D and {}D tensors",
                a.len(),
                b.len()
            );
            return fail(interp, message);
        }
        _ => {}
    }
    let (ka, kb) = (
        a[a.len() - 1].clone(),
        if b.len() == 1 {
            b[0].clone()
        } else {
            b[b.len() - 2].clone()
        },
    );
    if interp.env.known_different(&ka, &kb) {
        let message = match (a.len(), b.len()) {
            (1, 1) => format!(
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                interp.fmt_dim(&ka),
                interp.fmt_dim(&kb),
                interp.fmt_dim(&ka),
                interp.fmt_dim(&kb)
            ),
            (2, 1) => format!(
                "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                interp.fmt_dim(&a[0]),
                interp.fmt_dim(&a[0]),
                interp.fmt_dim(&ka),
                interp.fmt_dim(&kb)
            ),
            // A batch of matrices times one matrix is folded into one mm,
            // as torch does: `[4, 20, 128] @ [1000, 128]` is `80x128`.
            (_, 2) => {
                let rows = if a.len() == 1 {
                    "1".to_string()
                } else {
                    interp.fmt_dim(&super::shape::numel(&a[..a.len() - 1]))
                };
                format!(
                    "mm: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                    rows,
                    interp.fmt_dim(&ka),
                    interp.fmt_dim(&kb),
                    interp.fmt_dim(&b[1])
                )
            }
            _ => {
                let batch: Vec<String> = b[..b.len().saturating_sub(2)]
                    .iter()
                    .map(|d| interp.fmt_dim(d))
                    .collect();
                let mut expected = batch.clone();
                expected.push(interp.fmt_dim(&ka));
                let mut got = batch;
                got.push(interp.fmt_dim(&kb));
                format!(
                    "Expected size for first two dimensions of batch2 tensor to be: [{}] but got: [{}].",
                    expected.join(", "),
                    got.join(", ")
                )
            }
        };
        return fail(interp, message);
    }
    let _ = interp.require_equal(&ka, &kb);
    let shape = match (a.len(), b.len()) {
        (1, 1) => Vec::new(),
        (2, 1) => vec![a[0].clone()],
        (1, 2) => vec![b[1].clone()],
        (2, 2) => vec![a[0].clone(), b[1].clone()],
        _ => {
            let (ba, bb) = (
                &a[..a.len().saturating_sub(2)],
                &b[..b.len().saturating_sub(2)],
            );
            let ba = if a.len() == 1 { &[][..] } else { ba };
            let bb = if b.len() == 1 { &[][..] } else { bb };
            let mut batch = match broadcast(interp, ba, bb) {
                Ok(s) => s,
                Err(message) => return fail(interp, message),
            };
            if a.len() >= 2 {
                batch.push(a[a.len() - 2].clone());
            }
            if b.len() >= 2 {
                batch.push(b[b.len() - 1].clone());
            }
            batch
        }
    };
    out_known(interp, x, shape, dtype, device, name)
}

/// A result tensor whose rank is not known.
pub(crate) fn out_var(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    dtype: Option<DType>,
    device: Option<Device>,
    op: &str,
) -> Value {
    let shape = interp.fresh_rank_var();
    out_shape(interp, x, shape, dtype, device, op)
}
