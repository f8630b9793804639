//! `torch.nn.functional`: the rule of each `F.*` function, most shared with the matching layer.

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{check_inputs, matmul, op, out_known, out_shape, out_var};
use crate::rules::shape::broadcast;
use std::rc::Rc;

use crate::value::Value;
use crate::value::{Device, Tensor};

use super::conv::{ConvSpec, conv_forward};
use super::linear::{embedding, linear};
use super::loss::loss_ce;
use super::norm::{layer_norm, mixed_dtype};
use super::pool::{adaptive_pool, pool, with_indices};
use super::resample::{
    grid_sample_rule, interpolate_rule, pad_rule, pixel_shuffle_rule, unfold_rule,
};
use super::spatial::{pool_settings, spatial_or};

/// `F.<name>(args)` at `range`: the rule's result, or unknown with the
/// diagnostic where torch raises.
pub(crate) fn functional(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> Value {
    let result = functional_rule(meta, name, args, range);
    meta.settle(range, result)
}

/// `F.<name>(...)`.
fn functional_rule(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> RuleResult {
    let Some(x) = args.tensor(0, "input") else {
        return Ok(op(meta, name, args, range));
    };
    let Some(device) = check_inputs(meta, &args, name, range) else {
        return Ok(Value::Unknown);
    };
    match name {
        "linear" => linear_rule(meta, (&x, &args), device, range),
        "conv1d" | "conv2d" | "conv3d" | "conv_transpose1d" | "conv_transpose2d"
        | "conv_transpose3d" => conv1d_rule(meta, name, (&x, &args), device, range),
        "max_pool1d" | "max_pool2d" | "max_pool3d" | "avg_pool1d" | "avg_pool2d" | "avg_pool3d" => {
            let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
            let is_max = name.starts_with("max");
            let (kernel, stride, padding, dilation) =
                pool_settings(n, is_max, |i, k| args.get(i + 1, k));
            let ceil = args.flag(if is_max { 5 } else { 4 }, "ceil_mode", false) == Some(true);
            let out = pool(
                meta, &x, n, is_max, &kernel, &stride, &padding, &dilation, ceil, device, range,
            );
            if is_max && args.flag(6, "return_indices", false) == Some(true) {
                return Ok(with_indices(out));
            }
            Ok(out)
        }
        "adaptive_avg_pool1d"
        | "adaptive_avg_pool2d"
        | "adaptive_avg_pool3d"
        | "adaptive_max_pool1d"
        | "adaptive_max_pool2d"
        | "adaptive_max_pool3d" => adaptive_avg_pool1d_rule(meta, name, (&x, &args), device, range),
        "layer_norm" | "rms_norm" => {
            if name == "layer_norm"
                && let Some(message) = mixed_dtype(&x, &args, name)
            {
                return raise(Code::DtypeMismatch, message);
            }
            let ns = args
                .get(1, "normalized_shape")
                .cloned()
                .unwrap_or(Value::Unknown);
            layer_norm(meta, &x, &ns, device, name)
        }
        "normalize" => normalize_rule(meta, name, (&x, &args), device),
        "batch_norm" | "group_norm" | "instance_norm" | "local_response_norm" => {
            batch_norm_rule(meta, name, (&x, &args), device)
        }
        "embedding" => {
            let Some(w) = args.tensor(1, "weight") else {
                return Ok(Value::Unknown);
            };
            let Some(wd) = meta.dims(&w) else {
                return Ok(Value::Unknown);
            };
            let d = wd.last().cloned().map(Value::Int).unwrap_or(Value::Unknown);
            Ok(embedding(meta, &x, w.dtype, &d, device, range))
        }
        "pad" => pad_rule(meta, name, (&x, &args), device),
        "interpolate" | "upsample" | "upsample_nearest" | "upsample_bilinear" => {
            interpolate_rule(meta, name, (&x, &args), device)
        }
        "pixel_shuffle" | "pixel_unshuffle" => pixel_shuffle_rule(meta, name, (&x, &args), device),
        "cross_entropy" | "nll_loss" => Ok(loss_ce(meta, name, &x, &args, device, range)),
        "mse_loss"
        | "l1_loss"
        | "smooth_l1_loss"
        | "huber_loss"
        | "binary_cross_entropy"
        | "binary_cross_entropy_with_logits"
        | "kl_div"
        | "soft_margin_loss" => mse_loss_rule(meta, name, (&x, &args), device, range),
        "scaled_dot_product_attention" => {
            scaled_dot_product_attention_rule(meta, name, (&x, &args), device)
        }
        "one_hot" => Ok(op(meta, "one_hot", args, range)),
        "unfold" => unfold_rule(meta, name, (&x, &args), device),
        "grid_sample" => grid_sample_rule(meta, name, (&x, &args), device),
        "glu" => glu_rule(meta, name, (&x, &args), device),
        "mm" | "matmul" => {
            let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
            Ok(matmul(meta, name, &x, &other, &args, device, range))
        }
        _ => Ok(op(meta, name, args, range)),
    }
}

/// `F.conv1d` and its kin.
fn conv1d_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    let transposed = name.starts_with("conv_transpose");
    let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
    let Some(w) = args.tensor(1, "weight") else {
        return Ok(Value::Unknown);
    };
    let Some(wd) = meta.dims(&w) else {
        return Ok(Value::Unknown);
    };
    if wd.len() != n + 2 {
        return Ok(Value::Unknown);
    }
    let groups = args.get(6, "groups").cloned().unwrap_or(Value::int(1));
    let g = meta.as_dim(&groups).unwrap_or_else(|| Dim::konst(1));
    let (cin, cout) = if transposed {
        (wd[0].clone(), wd[1].mul(&g))
    } else {
        (wd[1].mul(&g), wd[0].clone())
    };
    let spec = ConvSpec {
        n,
        in_channels: Some(Value::Int(cin)),
        out_channels: Some(Value::Int(cout)),
        kernel: wd[2..].to_vec(),
        stride: spatial_or(args.get(3, "stride"), n, 1),
        padding: args.get(4, "padding").cloned(),
        output_padding: if transposed {
            spatial_or(args.get(5, "output_padding"), n, 0)
        } else {
            vec![Dim::konst(0); n]
        },
        groups,
        dilation: spatial_or(args.get(if transposed { 7 } else { 5 }, "dilation"), n, 1),
        transposed,
    };
    Ok(conv_forward(meta, x, &spec, device, range))
}

/// `F.mse_loss` and its kin.
fn mse_loss_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    let reduction = args.str(99, "reduction");
    let Some(t) = args.tensor(1, "target") else {
        return Ok(Value::Unknown);
    };
    // Binary cross entropy needs input and target of one shape: a
    // side of unknown rank takes the other's.
    if name.starts_with("binary_cross_entropy") {
        if let Some(td) = meta.dims(&t) {
            meta.adopt_shape(&x.shape, &td);
        } else if let Some(xd) = meta.dims(x) {
            meta.adopt_shape(&t.shape, &xd);
        }
    }
    let (Some(xd), Some(td)) = (meta.dims(x), meta.dims(&t)) else {
        // A reduced loss is a scalar whatever the shapes.
        if reduction.as_deref() != Some("none") {
            return Ok(out_known(meta, x, Vec::new(), x.dtype, device, name));
        }
        return Ok(Value::Unknown);
    };
    // Binary cross entropy takes a target of the input's shape
    // (`[B, 1]` logits with `[B]` targets raise) and of a floating
    // dtype.
    if name.starts_with("binary_cross_entropy")
        && (xd.len() != td.len()
            || xd
                .iter()
                .zip(&td)
                .any(|(a, b)| meta.env().known_different(a, b)))
    {
        let (target, input) = (meta.fmt_dims(&td), meta.fmt_dims(&xd));
        let message = if name == "binary_cross_entropy" {
            format!(
                "Using a target size (torch.Size({target})) that is different to the input size (torch.Size({input})) is deprecated. Please ensure they have the same size."
            )
        } else {
            format!(
                "Target size (torch.Size({target})) must be the same as input size (torch.Size({input}))"
            )
        };
        return raise(Code::LossShape, message);
    }
    if name.starts_with("binary_cross_entropy")
        && let (Some(xt), Some(tt)) = (x.dtype, t.dtype)
        && xt.is_floating()
        && !tt.is_floating()
    {
        let (xt, tt) = (
            crate::rules::dtype::torch_name(xt),
            crate::rules::dtype::torch_name(tt),
        );
        let message = if name == "binary_cross_entropy" {
            format!("Found dtype {tt} but expected {xt}")
        } else {
            format!("result type {xt} can't be cast to the desired output type {tt}")
        };
        return raise(Code::DtypeMismatch, message);
    }
    let shape = match broadcast(meta, &xd, &td) {
        Ok(s) => s,
        Err(message) => {
            return raise(Code::BroadcastShape, message);
        }
    };
    if xd != td && !name.starts_with("binary") {
        let message = format!(
            "Using a target size ({}) that is different to the input size ({}). This will likely lead to incorrect results due to broadcasting.",
            meta.fmt_dims(&td),
            meta.fmt_dims(&xd)
        );
        meta.report(range, Code::LossBroadcast, message);
    }
    let out = if reduction.as_deref() == Some("none") {
        shape
    } else {
        Vec::new()
    };
    // the pointwise losses promote input and target
    let dtype = if matches!(name, "mse_loss" | "l1_loss" | "smooth_l1_loss") {
        crate::rules::dtype::promote(&[
            (&Value::Tensor(x.clone()), Some(xd.len())),
            (&Value::Tensor(t.clone()), Some(td.len())),
        ])
        .or(x.dtype)
    } else {
        x.dtype
    };
    Ok(out_known(meta, x, out, dtype, device, name))
}

/// `F.scaled_dot_product_attention`.
fn scaled_dot_product_attention_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    let (Some(k), Some(v)) = (args.tensor(1, "key"), args.tensor(2, "value")) else {
        return Ok(Value::Unknown);
    };
    let (Some(qd), Some(kd), Some(vd)) = (meta.dims(x), meta.dims(&k), meta.dims(&v)) else {
        return Ok(out_var(meta, x, x.dtype, device, name));
    };
    if qd.len() < 2 || kd.len() < 2 || vd.len() < 2 {
        return Ok(Value::Unknown);
    }
    let (e, ek) = (&qd[qd.len() - 1], &kd[kd.len() - 1]);
    if meta.env().known_different(e, ek) {
        // The math kernel's `q @ k.transpose(-2, -1)`, its batch
        // dims folded into one `bmm`.
        let folded = match broadcast(meta, &qd[..qd.len() - 2], &kd[..kd.len() - 2]) {
            Ok(batch) => meta.fmt_dim(&crate::rules::shape::numel(&batch)),
            Err(message) => return raise(Code::BroadcastShape, message),
        };
        let message = format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{folded}, {}] but got: [{folded}, {}].",
            meta.fmt_dim(e),
            meta.fmt_dim(ek)
        );
        return raise(Code::MatmulShape, message);
    }
    let Ok(mut batch) = broadcast(meta, &qd[..qd.len() - 2], &kd[..kd.len() - 2]) else {
        return Ok(Value::Unknown);
    };
    batch.push(qd[qd.len() - 2].clone());
    batch.push(vd[vd.len() - 1].clone());
    Ok(out_known(meta, x, batch, x.dtype, device, name))
}

/// `F.linear`.
fn linear_rule(
    meta: &mut dyn Meta,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    let Some(w) = args.tensor(1, "weight") else {
        return Ok(Value::Unknown);
    };
    let Some(wd) = meta.dims(&w) else {
        return Ok(Value::Unknown);
    };
    match wd.as_slice() {
        [out, inp] => Ok(linear(
            meta,
            x,
            &Value::Int(inp.clone()),
            &Value::Int(out.clone()),
            super::linear::LinearCall {
                biased: args.tensor(2, "bias").is_some(),
                layer_name: None,
            },
            device,
            range,
        )),
        _ => Ok(Value::Unknown),
    }
}

/// `F.adaptive_avg_pool1d` and its kin.
fn adaptive_avg_pool1d_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
    let avg = name.contains("avg");
    let out = adaptive_pool(meta, x, (n, avg), args.get(1, "output_size"), device, range);
    if name.contains("max") && args.flag(2, "return_indices", false) == Some(true) {
        return Ok(with_indices(out));
    }
    Ok(out)
}

/// `F.normalize`.
fn normalize_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    if let Some(dims) = meta.dims(x)
        && let Some(d) = args.int(2, "dim").or(Some(1))
        && let Err(message) = crate::rules::shape::wrap_dim(d, dims.len())
    {
        return raise(Code::DimOutOfRange, message);
    }
    Ok(out_shape(meta, x, x.shape.clone(), x.dtype, device, name))
}

/// `F.batch_norm` and its kin.
fn batch_norm_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    if let Some(message) = mixed_dtype(x, args, name) {
        return raise(Code::DtypeMismatch, message);
    }
    // `F.batch_norm(..., training=True)` verifies the batch first.
    if name == "batch_norm"
        && matches!(args.get(5, "training"), Some(Value::Bool(Some(true))))
        && let Some(dims) = meta.dims(x)
        && let Some(message) = super::forward::single_value_per_channel(meta, &dims)
    {
        return raise(Code::LayerInput, message);
    }
    Ok(out_shape(meta, x, x.shape.clone(), x.dtype, device, name))
}

/// `F.glu`.
fn glu_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    let Some(mut dims) = meta.dims(x) else {
        return Ok(Value::Unknown);
    };
    let d = args.int(1, "dim").unwrap_or(-1);
    let d = match crate::rules::shape::wrap_dim(d, dims.len()) {
        Ok(d) => d,
        Err(message) => {
            return raise(Code::DimOutOfRange, message);
        }
    };
    if let Some(size) = dims.get(d).and_then(|s| meta.env().value(s))
        && size % 2 != 0
    {
        let message = format!("Halving dimension must be even, but dimension {d} is size {size}");
        return raise(Code::GluSize, message);
    }
    if dims.is_empty() {
        return Ok(Value::Unknown);
    }
    dims[d] = dims[d]
        .floordiv(&Dim::konst(2))
        .unwrap_or_else(|| meta.env_mut().anonymous());
    Ok(out_known(meta, x, dims, x.dtype, device, name))
}
