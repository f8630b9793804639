//! Linear, bilinear and embedding layers (and `F.linear`, `F.bilinear`, `F.embedding`): the last dim replaced or added.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, Stop, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{out_known, out_shape, out_var};
use crate::rules::shape::numel;
use crate::value::{DType, Device, Tensor, Value};

use super::forward::{LayerCall, last_size_from};
use super::registry::Forward;

/// How a linear map is called: with a bias (torch's kernel is `addmm`,
/// else `mm`), and through which of the user's layers, if one.
pub(super) struct LinearCall {
    pub biased: bool,
    pub layer_name: Option<String>,
}

/// `x [*, in] -> [*, out]`, with the `addmm` message on a mismatch (`mm`
/// without a bias).
pub(super) fn linear(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    in_features: &Value,
    out_features: &Value,
    call: LinearCall,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let kernel = if call.biased { "addmm" } else { "mm" };
    let result = linear_rule(meta, x, in_features, out_features, kernel, device, range);
    // torch's words, then which of the user's layers it is: a model has
    // many `Linear`s and the sizes alone do not say which.
    let result = match (result, call.layer_name) {
        (Err(Stop::Raise(mut e)), Some(name)) if e.code == Code::LinearShape => {
            let mut size = |v: &Value| {
                meta.as_dim(v)
                    .map_or_else(|| "?".to_string(), |d| meta.fmt_dim(&d))
            };
            e.message = format!(
                "{} (in `{name}`: Linear(in_features={}, out_features={}))",
                e.message,
                size(in_features),
                size(out_features)
            );
            Err(Stop::Raise(e))
        }
        (result, _) => result,
    };
    meta.settle(range, result)
}

/// A bilinear map's inputs against its weight `[out, in1, in2]` and bias
/// `[out]`, checked as torch's kernel checks them, in its order and words;
/// the output's dims (`a`'s, its last the weight's `out`) when they pass.
pub(super) fn bilinear_dims(
    meta: &mut dyn Meta,
    (a, b): (&[Dim], &[Dim]),
    [out, in1, in2]: [&Dim; 3],
    bias: Option<&Dim>,
) -> Result<Vec<Dim>, Stop> {
    if a.len() != b.len() {
        return raise(
            Code::LinearShape,
            format!(
                "bilinear(): input dimensions do not match: got {} and {}",
                a.len(),
                b.len()
            ),
        );
    }
    let (Some(last_a), Some(last_b)) = (a.last(), b.last()) else {
        return Ok(a.to_vec());
    };
    for (i, (x, y)) in a.iter().zip(b).take(a.len() - 1).enumerate() {
        if meta.env().known_different(x, y) {
            let message = format!(
                "bilinear(): input batch dimensions do not match at dim {i}: got {} and {}",
                meta.fmt_dim(x),
                meta.fmt_dim(y)
            );
            return raise(Code::LinearShape, message);
        }
    }
    for (which, got, expected) in [("input1", last_a, in1), ("input2", last_b, in2)] {
        if meta.env().known_different(got, expected) {
            let message = format!(
                "bilinear(): {which} size does not match weight size: got {} but expected {}",
                meta.fmt_dim(got),
                meta.fmt_dim(expected)
            );
            return raise(Code::LinearShape, message);
        }
    }
    if let Some(bias) = bias
        && meta.env().known_different(bias, out)
    {
        let message = format!(
            "bilinear(): bias size does not match weight size: got {} but expected {}",
            meta.fmt_dim(bias),
            meta.fmt_dim(out)
        );
        return raise(Code::LinearShape, message);
    }
    let mut dims = a.to_vec();
    if let Some(last) = dims.last_mut() {
        *last = out.clone();
    }
    Ok(dims)
}

/// The rule behind `linear`: what torch raises is its `Err`.
fn linear_rule(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    in_features: &Value,
    out_features: &Value,
    kernel: &str,
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    let out_dim = meta.size_dims(std::slice::from_ref(out_features))[0].clone();
    let Some(dims) = meta.dims(x) else {
        // Unknown rank: the input is `[*, in_features]`, the output `[*, out_features]`.
        let in_dim = meta
            .as_dim(in_features)
            .unwrap_or_else(|| meta.env_mut().anonymous());
        return Ok(
            match crate::rules::tail::demand_trailing(meta, x, std::slice::from_ref(&in_dim)) {
                Some(Ok((var, mut suffix))) => {
                    if let Some(last) = suffix.last_mut() {
                        *last = out_dim;
                    }
                    out_shape(
                        meta,
                        x,
                        crate::rules::tail::suffix_shape(var, suffix),
                        x.dtype,
                        device,
                        "nn.Linear",
                    )
                }
                Some(Err(found)) => {
                    let message = format!(
                        "mat1 and mat2 shapes cannot be multiplied (?x{} and {}x{})",
                        meta.fmt_dim(found.last().unwrap_or(&in_dim)),
                        meta.fmt_dim(&in_dim),
                        meta.fmt_dim(&out_dim)
                    );
                    meta.report(range, Code::LinearShape, message);
                    Value::Unknown
                }
                None => out_var(meta, x, x.dtype, device, "nn.Linear"),
            },
        );
    };
    if dims.is_empty() {
        return raise(
            Code::LinearShape,
            "both arguments to linear need to be at least 1D, but they are 0D and 2D".into(),
        );
    }
    let last = dims[dims.len() - 1].clone();
    if let Some(in_dim) = meta.as_dim(in_features) {
        if meta.env().known_different(&last, &in_dim) {
            let rows = numel(&dims[..dims.len() - 1]);
            let message = format!(
                "{kernel}: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                meta.fmt_dim(&rows),
                meta.fmt_dim(&last),
                meta.fmt_dim(&in_dim),
                meta.fmt_dim(&out_dim)
            );
            return raise(Code::LinearShape, message);
        }
        let _ = meta.require_equal(&last, &in_dim);
    }
    let mut out = dims;
    let n = out.len();
    out[n - 1] = out_dim;
    Ok(out_known(meta, x, out, x.dtype, device, "nn.Linear"))
}

pub(super) fn embedding(
    meta: &mut dyn Meta,
    idx: &Rc<Tensor>,
    dtype: Option<DType>,
    dim: &Value,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let result = embedding_rule(meta, idx, dtype, dim, device);
    meta.settle(range, result)
}

/// The rule behind `embedding`: what torch raises is its `Err`.
fn embedding_rule(
    meta: &mut dyn Meta,
    idx: &Rc<Tensor>,
    dtype: Option<DType>,
    dim: &Value,
    device: Option<Device>,
) -> RuleResult {
    if let Some(dt) = idx.dtype
        && !matches!(dt, DType::Int64 | DType::Int32)
    {
        let message = format!(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.{}Tensor instead (while checking arguments for embedding)",
            crate::rules::dtype::torch_name(dt)
        );
        return raise(Code::DtypeMismatch, message);
    }
    let d = meta.size_dims(std::slice::from_ref(dim))[0].clone();
    match meta.dims(idx) {
        Some(mut dims) => {
            dims.push(d);
            Ok(out_known(meta, idx, dims, dtype, device, "nn.Embedding"))
        }
        None => match meta.resolve_shape(&idx.shape).tail() {
            // Indices of unknown rank: the vectors are appended, `[*, dim]`.
            Some((var, suffix)) => {
                let mut s = suffix.to_vec();
                s.push(d);
                Ok(out_shape(
                    meta,
                    idx,
                    crate::rules::tail::suffix_shape(var, s),
                    dtype,
                    device,
                    "nn.Embedding",
                ))
            }
            None => Ok(out_var(meta, idx, dtype, device, "nn.Embedding")),
        },
    }
}

/// `nn.Bilinear`: its two inputs checked against its sizes as the kernel
/// checks them against its weight.
pub(super) fn bilinear_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> RuleResult {
    let (Some(a), Some(b)) = (
        meta.dims(call.x),
        call.args.tensor(1, "input2").and_then(|y| meta.dims(&y)),
    ) else {
        return Ok(last_size_from(meta, call, Forward::Bilinear));
    };
    let mut size = |name: &str| {
        let v = call.setting(name).unwrap_or(Value::Unknown);
        meta.size_dims(&[v])[0].clone()
    };
    let (out, in1, in2) = (
        size("out_features"),
        size("in1_features"),
        size("in2_features"),
    );
    let dims = super::linear::bilinear_dims(meta, (&a, &b), [&out, &in1, &in2], None)?;
    Ok(out_known(
        meta,
        call.x,
        dims,
        call.x.dtype,
        call.device.clone(),
        "nn.Bilinear",
    ))
}

/// `F.linear(input, weight, bias=None)`.
pub(super) fn functional_linear(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    let Some(w) = args.tensor(1, "weight") else {
        return Ok(Value::Unknown);
    };
    let bias = args.tensor(2, "bias");
    // With a bias the kernel is `addmm`, which checks the dtypes before
    // the sizes; `mm` checks them after.
    let dtype_message = linear_dtype_message(x.dtype, w.dtype, bias.as_ref().map(|b| b.dtype));
    if bias.is_some()
        && let Some(message) = dtype_message
    {
        return raise(Code::DtypeMismatch, message);
    }
    let Some(wd) = meta.dims(&w) else {
        return Ok(Value::Unknown);
    };
    // A weight that is not a matrix: `linear` transposes it first, and
    // `addmm` (with a bias) takes only a matrix.
    match wd.len() {
        0 => {
            let Some(rank) = meta.rank(x) else {
                return Ok(Value::Unknown);
            };
            let message = format!(
                "both arguments to linear need to be at least 1D, but they are {rank}D and 0D"
            );
            return raise(Code::LinearShape, message);
        }
        1 if bias.is_some() => {
            return raise(
                Code::LinearShape,
                "addmm: mat2 must be a matrix, got 1-D tensor".into(),
            );
        }
        // `x @ w` with a vector `w`, whose dtype message is `addmv`'s.
        1 if dtype_message.is_none() => {
            return Ok(crate::rules::ops::matmul(
                meta,
                "matmul",
                x,
                &Value::Tensor(w),
                args,
                device,
                range,
            ));
        }
        n if n > 2 => {
            let message = format!("t() expects a tensor with <= 2 dimensions, but self is {n}D");
            return raise(Code::LinearShape, message);
        }
        _ => {}
    }
    if let (Some(message), [_, inp], Some(xd)) = (dtype_message, wd.as_slice(), meta.dims(x))
        && xd
            .last()
            .is_some_and(|last| !meta.env().known_different(last, inp))
    {
        return raise(Code::DtypeMismatch, message);
    }
    // `addmm` expands a bias to `[rows, out]` once the product's sizes fit.
    if let ([out, inp], Some(xd)) = (wd.as_slice(), meta.dims(x))
        && let Some(bias) = bias.as_ref().and_then(|b| meta.dims(b))
        && let [size] = bias.as_slice()
        && let Some((last, leading)) = xd.split_last()
        && !meta.env().known_different(last, inp)
        && !meta.is_one(size)
        && meta.env().known_different(size, out)
    {
        let target = [crate::rules::shape::numel(leading), out.clone()];
        let message = format!(
            "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension 1.  Target sizes: {}.  Tensor sizes: {}",
            meta.fmt_dim(out),
            meta.fmt_dim(size),
            meta.fmt_dims(&target),
            meta.fmt_dims(&bias)
        );
        return raise(Code::ExpandShape, message);
    }
    match wd.as_slice() {
        [out, inp] => Ok(linear(
            meta,
            x,
            &Value::Int(inp.clone()),
            &Value::Int(out.clone()),
            LinearCall {
                biased: bias.is_some(),
                layer_name: None,
            },
            device,
            range,
        )),
        _ => Ok(Value::Unknown),
    }
}

/// `F.bilinear(input1, input2, weight, bias)`.
pub(super) fn functional_bilinear(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> RuleResult {
    let (Some(y), Some(w)) = (args.tensor(1, "input2"), args.tensor(2, "weight")) else {
        return Ok(Value::Unknown);
    };
    let bias = args.tensor(3, "bias").and_then(|b| meta.dims(&b));
    let (Some(a), Some(b), Some(wd)) = (meta.dims(x), meta.dims(&y), meta.dims(&w)) else {
        return Ok(Value::Unknown);
    };
    let [out, in1, in2] = wd.as_slice() else {
        return Ok(Value::Unknown);
    };
    let bias = match bias.as_deref() {
        Some([size]) => Some(size.clone()),
        _ => None,
    };
    let dims = bilinear_dims(meta, (&a, &b), [out, in1, in2], bias.as_ref())?;
    Ok(out_known(meta, x, dims, x.dtype, device, "bilinear"))
}

/// What `F.linear` raises when its operands' dtypes differ, in the words
/// of its kernel: `addmm` with a bias (the input against the weight, then
/// the bias against the weight), `mm` without.
fn linear_dtype_message(
    x: Option<DType>,
    w: Option<DType>,
    bias: Option<Option<DType>>,
) -> Option<String> {
    let (x, w) = (x?, w?);
    let name = crate::rules::dtype::torch_name;
    match bias {
        Some(_) if x != w => Some(crate::rules::dtype::addmm_dtype_message(x, w)),
        Some(Some(b)) if b != w => Some(format!(
            "self and mat2 must have the same dtype, but got {} and {}",
            name(b),
            name(w)
        )),
        Some(_) => None,
        None => (x != w).then(|| crate::rules::dtype::mm_dtype_message(x, w)),
    }
}
