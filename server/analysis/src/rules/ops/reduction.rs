//! Reductions (`sum`, `mean`, `std`, ...) and ops that reduce, scan or sort along one dim.

use std::rc::Rc;

use shapels_shapes::Dim;

use super::OpCall;
use super::output::{out_known, unknown_rank_rule};
use super::pointwise::binary;
use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, check, raise};
use crate::rules::dtype::{sum_dtype, torch_name};
use crate::rules::meta::Meta;
use crate::rules::shape::wrap_dim;
use crate::value::{DType, Device, Tensor, Value};

/// `softmax`, `log_softmax`, `softmin` and the scans (`cumsum`, `cumprod`,
/// `logcumsumexp`): the shape stays; a dim is chosen as torch's legacy
/// default when none is given.
pub(super) fn scan(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    let d = call.dim_arg(
        meta,
        1,
        "dim",
        Some(if rank <= 1 || rank == 3 { 0 } else { 1 }),
    )?;
    if !name.starts_with("cum")
        && crate::rules::creation::dtype_arg(args).is_none()
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
        return raise(Code::DtypeUnsupported, message);
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
        return raise(Code::DtypeUnsupported, message);
    }
    let dtype = crate::rules::creation::dtype_or(
        args,
        if name.starts_with("cum") {
            sum_dtype(x.dtype)
        } else {
            x.dtype
        },
    );
    Ok(call.output(meta, dims.clone(), dtype))
}

/// `cummax`, `cummin`: values and indices of the input's shape.
pub(super) fn cumulative_extreme(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let _ = call.dim_arg(meta, 1, "dim", None)?;
    Ok(call.values_and_indices(meta, call.dims.clone()))
}

/// `argmax`, `argmin`: the index of the extreme, over all or along a dim.
pub(super) fn arg_extreme(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    if x.dtype == Some(DType::Bool) {
        let message = format!("{name}(): does not support bool input");
        return raise(Code::DtypeUnsupported, message);
    }
    match args.get(1, "dim") {
        None | Some(Value::None) => {
            let keep = args.flag(2, "keepdim", false) == Some(true);
            Ok(call.output(
                meta,
                if keep {
                    vec![Dim::konst(1); dims.len()]
                } else {
                    Vec::new()
                },
                Some(DType::Int64),
            ))
        }
        _ => {
            let d = call.dim_arg(meta, 1, "dim", None)?;
            let keep = args.flag(2, "keepdim", false);
            Ok(call.output(
                meta,
                reduced(dims, &[d], keep == Some(true)),
                Some(DType::Int64),
            ))
        }
    }
}

/// `topk` and `kthvalue` of a bool tensor, which torch's CPU kernels
/// refuse (a 0-d tensor's `k` past its one value first); `None` for
/// other dtypes.
fn bool_selection(call: &OpCall<'_>) -> Option<RuleResult> {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    if x.dtype != Some(DType::Bool) || !matches!(name, "topk" | "kthvalue") {
        return None;
    }
    // The arguments start with `self`: `k` is the second.
    let (code, message) = if dims.is_empty() && args.int(1, "k").is_some_and(|k| k > 1) {
        let message = if name == "topk" {
            "selected index k out of range".to_string()
        } else {
            "kthvalue(): selected number k out of range for dimension 0".to_string()
        };
        (Code::IndexOutOfRange, message)
    } else {
        let message = if name == "topk" {
            "topk does not support bool dtypes on CPU".to_string()
        } else {
            "\"kthvalue_cpu\" not implemented for 'Bool'".to_string()
        };
        (Code::DtypeUnsupported, message)
    };
    Some(raise(code, message))
}

/// `max`, `min`: of two tensors (`maximum`), over all, or along a dim with
/// the indices.
pub(super) fn extreme(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    match args.get(1, "dim") {
        Some(Value::Tensor(_)) => {
            let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
            Ok(binary(
                meta,
                if name == "max" { "maximum" } else { "minimum" },
                &Value::Tensor(x.clone()),
                &other,
                args,
                call.device,
                call.range,
            ))
        }
        None | Some(Value::None) => Ok(call.output(meta, Vec::new(), x.dtype)),
        _ => {
            let d = call.dim_arg(meta, 1, "dim", None)?;
            let keep = args.flag(2, "keepdim", false) == Some(true);
            let shape = reduced(dims, &[d], keep);
            Ok(call.values_and_indices(meta, shape))
        }
    }
}

/// `median`, `mode`, `nanmedian`, `kthvalue`: values and indices along a
/// dim (`median()` without one: the value over all).
pub(super) fn order_statistic(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    if let Some(result) = bool_selection(&call) {
        return result;
    }
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let rank = dims.len();
    let (dim_index, default) = if name == "kthvalue" {
        (2, Some(-1))
    } else {
        (1, Some(-1))
    };
    if name != "kthvalue" && args.get(1, "dim").is_none() && name != "mode" {
        return Ok(call.output(meta, Vec::new(), x.dtype));
    }
    let d = call.dim_arg(meta, dim_index, "dim", default)?;
    if name == "kthvalue"
        && let Some(k) = args.int(1, "k")
    {
        let size = if rank == 0 {
            Some(1)
        } else {
            meta.env().value(&dims[d])
        };
        if k < 1 || size.is_some_and(|s| k > s) {
            let message = format!("kthvalue(): selected number k out of range for dimension {d}");
            return raise(Code::IndexOutOfRange, message);
        }
    }
    let keep = args.flag(dim_index + 1, "keepdim", false) == Some(true);
    let shape = reduced(dims, &[d], keep);
    Ok(call.values_and_indices(meta, shape))
}

/// `topk`: `k` values and their indices along a dim.
pub(super) fn topk(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    if let Some(result) = bool_selection(&call) {
        return result;
    }
    let (args, dims) = (call.args, &call.dims);
    let k = args.get(1, "k").cloned().unwrap_or(Value::Unknown);
    let d = call.dim_arg(meta, 2, "dim", Some(-1))?;
    let mut shape = dims.clone();
    // a 0-dim tensor has one element along its wrapped dim 0 and stays 0-dim
    let kd = meta.size_dims(&[k])[0].clone();
    let size = dims.get(d).cloned().unwrap_or_else(|| Dim::from(1));
    if let Some(slot) = shape.get_mut(d) {
        *slot = kd.clone();
    }
    if let (Some(k), Some(s)) = (meta.env().value(&kd), meta.env().value(&size))
        && (k > s || k < 0)
    {
        meta.report(
            call.range,
            Code::IndexOutOfRange,
            "selected index k out of range".into(),
        );
    }
    Ok(call.values_and_indices(meta, shape))
}

/// `sort`: sorted values and their indices, of the input's shape. Its
/// signature with `stable` takes `dim` by keyword only.
pub(super) fn sort(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let args = call.args;
    if args.kw("stable").is_some()
        && args.pos.len() > 1
        && let Some(got) = args.python_types()
    {
        return raise(
            Code::ArgumentType,
            format!(
                "sort() received an invalid combination of arguments - got ({got}), but expected one of:\n * (Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None)\n * (Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)"
            ),
        );
    }
    let _ = call.dim_arg(meta, 1, "dim", Some(-1))?;
    Ok(call.values_and_indices(meta, call.dims.clone()))
}

/// `argsort`: the indices that sort, of the input's shape.
pub(super) fn argsort(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let _ = call.dim_arg(meta, 1, "dim", Some(-1))?;
    Ok(call.output(meta, call.dims.clone(), Some(DType::Int64)))
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

pub(super) fn reduce(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> RuleResult {
    if let Some(spread) = name.strip_suffix("_mean") {
        return spread_and_mean(meta, name, spread, x, args, device);
    }
    // `x.norm((0, 1))` reads as dims but is the norm's order, which must
    // be a number (a string for a matrix norm).
    if name == "norm"
        && let Some(kind @ ("tuple" | "list")) = match args.get(1, "p") {
            Some(Value::Tuple(_)) => Some("tuple"),
            Some(Value::List(_)) => Some("list"),
            _ => None,
        }
    {
        let message =
            format!("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {kind}");
        return raise(Code::ArgumentType, message);
    }
    // `logsumexp` over an empty list of dims reduces nothing, yet writes
    // into a 0-dim result, which the kept dims do not fit.
    if name == "logsumexp"
        && let Some(dims) = meta.dims(x)
        && !dims.is_empty()
        && args
            .get(1, "dim")
            .and_then(Value::items)
            .is_some_and(|items| items.is_empty())
        && args.flag(2, "keepdim", false) != Some(true)
    {
        let message = format!(
            "output with shape [] doesn't match the broadcast shape {}",
            meta.fmt_dims(&vec![shapels_shapes::Dim::konst(1); dims.len()])
        );
        return raise(Code::BroadcastShape, message);
    }
    // The 32-bit complex dtypes have no CPU kernels for sums and products
    // (std, var and norm work).
    if device == Some(Device::Cpu)
        && crate::rules::creation::dtype_arg(args).is_none()
        && let Some(dt @ (DType::ComplexHalf | DType::BComplex32)) = x.dtype
        && let Some(kernel) = match name {
            "sum" | "mean" => Some("sum_cpu"),
            "prod" => Some("prod_out_cpu"),
            "amax" => Some("max_values_cpu"),
            _ => None,
        }
    {
        let message = format!("\"{kernel}\" not implemented for '{}'", torch_name(dt));
        return raise(Code::DtypeUnsupported, message);
    }
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
                crate::rules::creation::dtype_arg(args).is_some_and(|d| d.category() >= 2);
            if let Some(d) = x.dtype
                && d.category() <= 1
                && name != "logsumexp"
                && !float_override
            {
                let message = match name {
                    "std" | "var" => {
                        "std and var only support floating point and complex dtypes".to_string()
                    }
                    "nanmean" => format!(
                        "nanmean(): expected input to have floating point or complex dtype but got {}",
                        torch_name(d)
                    ),
                    _ => format!(
                        "{name}(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                        torch_name(d)
                    ),
                };
                return raise(Code::DtypeMismatch, message);
            }
            // complex var / std / norm are real (spec §3.3)
            match name {
                "std" | "var" | "norm" | "linalg_vector_norm" | "linalg_norm" => {
                    x.dtype.map(DType::to_real)
                }
                _ => x.dtype,
            }
        }
        _ => x.dtype,
    };
    let dtype = crate::rules::creation::dtype_or(args, dtype);
    let Some(dims) = meta.dims(x) else {
        if args.get(1, "dim").is_none()
            && !matches!(name, "norm" | "linalg_norm" | "linalg_vector_norm")
        {
            return Ok(out_known(meta, x, Vec::new(), dtype, device, name));
        }
        // The shape is the rule's; the dtype is the reduction's (a sum of
        // bools counts in int64).
        return Ok(reduced_unknown(meta, name, x, args, device, dtype));
    };
    let rank = dims.len();
    let (dim_index, keep_index) = match name {
        "norm" | "linalg_norm" | "linalg_vector_norm" => (2, 3),
        // `var(input, dim, unbiased, keepdim)`: `unbiased` comes first
        // (in the `correction=` form `keepdim` is keyword-only).
        "std" | "var" => (1, 3),
        _ => (1, 2),
    };
    let keepdim = args.flag(keep_index, "keepdim", false) == Some(true);
    let dim_value = args
        .kw("dim")
        .or_else(|| args.pos.get(dim_index))
        .filter(|v| {
            !matches!(
                v,
                Value::Bool(_) | Value::Float(_) | Value::Str(_) | Value::Text
            )
        });
    let targets: Vec<usize> = match dim_value {
        None | Some(Value::None) => (0..rank).collect(),
        Some(v) => {
            let items = v.items().unwrap_or_else(|| vec![v.clone()]);
            if items.is_empty() && matches!(name, "all" | "any") {
                // all/any with an empty dim list reduce nothing, unlike sum(())
                return Ok(out_known(meta, x, dims.clone(), dtype, device, name));
            } else if items.is_empty() {
                (0..rank).collect()
            } else {
                let mut out = Vec::new();
                for item in items {
                    let Value::Int(d) = &item else {
                        return Ok(reduced_unknown(meta, name, x, args, device, dtype));
                    };
                    let Some(d) = d.as_const() else {
                        return Ok(reduced_unknown(meta, name, x, args, device, dtype));
                    };
                    match wrap_dim(d, rank) {
                        Ok(i) if out.contains(&i) => {
                            return raise(
                                Code::DimOutOfRange,
                                format!("dim {i} appears multiple times in the list of dims"),
                            );
                        }
                        Ok(i) => out.push(i),
                        Err(message) => {
                            return raise(Code::DimOutOfRange, message);
                        }
                    }
                }
                out
            }
        }
    };
    Ok(out_known(
        meta,
        x,
        reduced(&dims, &targets, keepdim),
        dtype,
        device,
        name,
    ))
}

/// A reduction whose dims the analysis cannot line up: the shape is the
/// unknown-rank rule's, the dtype the reduction's (a sum of bools counts in
/// int64).
fn reduced_unknown(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    dtype: Option<DType>,
) -> Value {
    match unknown_rank_rule(meta, name, x, args, device) {
        Value::Tensor(t) => Value::Tensor(Rc::new(Tensor {
            dtype,
            ..(*t).clone()
        })),
        other => other,
    }
}

/// `var_mean` and `std_mean`: the spread (`var`/`std`, real for complex
/// input) and the mean, both reduced as `var` reduces.
fn spread_and_mean(
    meta: &mut dyn Meta,
    name: &str,
    spread: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> RuleResult {
    if let Some(d) = x.dtype
        && d.category() <= 1
    {
        let message = format!("{name} only support floating point and complex dtypes");
        return raise(Code::DtypeMismatch, message);
    }
    let first = reduce(meta, spread, x, args, device.clone())?;
    let Value::Tensor(t) = &first else {
        return Ok(Value::Unknown);
    };
    let mean = super::output::out_shape(meta, x, t.shape.clone(), x.dtype, device, name);
    Ok(Value::tuple(vec![first, mean]))
}

/// `aminmax(input, *, dim=None, keepdim=False)`: the minimum and the
/// maximum, over everything or along `dim`, which must not be empty.
pub(super) fn aminmax(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    if let Some(d) = x.dtype
        && d.is_complex()
    {
        let message = format!("aminmax not implemented for {}", torch_name(d));
        return raise(Code::DtypeUnsupported, message);
    }
    let keepdim = args.flag(99, "keepdim", false) == Some(true);
    let shape = match args.get(99, "dim") {
        None | Some(Value::None) => {
            if dims.iter().any(|d| meta.env().value(d) == Some(0)) {
                let message = "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.".to_string();
                return raise(Code::DimOutOfRange, message);
            }
            if keepdim {
                vec![Dim::konst(1); dims.len()]
            } else {
                Vec::new()
            }
        }
        _ => {
            let d = call.dim_arg(meta, 99, "dim", None)?;
            if dims.is_empty() {
                Vec::new()
            } else {
                if meta.env().value(&dims[d]) == Some(0) {
                    let message =
                        format!("aminmax: Expected reduction dim {d} to have non-zero size.");
                    return raise(Code::DimOutOfRange, message);
                }
                reduced(dims, &[d], keepdim)
            }
        }
    };
    let min = call.output(meta, shape.clone(), x.dtype);
    let max = call.output(meta, shape, x.dtype);
    Ok(Value::tuple(vec![min, max]))
}

/// `cov`, `corrcoef`: the `v x v` matrix of the variables in the rows of a
/// 2-d input (its columns are the observations), one number for one
/// variable (a 0-d or 1-d input); ints are taken as the default float.
pub(super) fn covariance(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let dims = &call.dims;
    check!(
        dims.len() <= 2,
        Code::MatmulShape,
        "{}(): expected input to have two or fewer dimensions but got an input with {} dimensions",
        call.name,
        dims.len()
    );
    let shape = match dims.len() {
        2 => vec![dims[0].clone(), dims[0].clone()],
        _ => Vec::new(),
    };
    let dtype = crate::rules::dtype::int_to_float(call.x.dtype);
    Ok(call.output(meta, shape, dtype))
}

/// `searchsorted(sorted_sequence, values)` and `bucketize(values,
/// boundaries)`: the position of each value, in the values' shape (int64,
/// or int32 with `out_int32=True`). The sorted sequence is one vector,
/// or a batch of them whose leading dims are the values' own.
pub(super) fn sorted_positions(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let dtype = if call.args.flag(usize::MAX, "out_int32", false) == Some(true) {
        DType::Int32
    } else {
        DType::Int64
    };
    // `searchsorted` takes the sequence first, `bucketize` the values; the
    // values by keyword (`input=`) would have been read as the first.
    if call.args.kw("input").is_some() {
        return Ok(Value::Unknown);
    }
    let (sequence, values) = if call.name == "searchsorted" {
        (call.dims.clone(), call.args.get(1, "input"))
    } else {
        let boundaries = call.args.tensor(1, "boundaries");
        let Some(bd) = boundaries.and_then(|b| meta.dims(&b)) else {
            return Ok(Value::Unknown);
        };
        check!(
            bd.len() == 1,
            Code::IndexShape,
            "boundaries tensor must be 1 dimension, but got dim({})",
            bd.len()
        );
        return Ok(call.output(meta, call.dims.clone(), Some(dtype)));
    };
    let values = match values {
        Some(Value::Tensor(v)) => match meta.dims(v) {
            Some(d) => d,
            None => return Ok(Value::Unknown),
        },
        Some(Value::Int(_) | Value::Float(_)) => Vec::new(),
        _ => return Ok(Value::Unknown),
    };
    check!(
        !sequence.is_empty(),
        Code::IndexShape,
        "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension"
    );
    if values.is_empty() {
        check!(
            sequence.len() == 1,
            Code::IndexShape,
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim({}) and input value's dim(0) numel(1)",
            sequence.len()
        );
        return Ok(call.output(meta, values, Some(dtype)));
    }
    if sequence.len() > 1
        && (sequence.len() != values.len()
            || sequence[..sequence.len() - 1]
                .iter()
                .zip(&values)
                .any(|(a, b)| meta.env().known_different(a, b)))
    {
        let message = format!(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor {} and input value tensor {}",
            meta.fmt_dims(&sequence),
            meta.fmt_dims(&values)
        );
        return raise(Code::IndexShape, message);
    }
    Ok(call.output(meta, values, Some(dtype)))
}
