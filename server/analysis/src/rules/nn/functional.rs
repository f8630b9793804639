//! `torch.nn.functional`: the rule of each `F.*` function, most shared with the matching layer.

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::interp::Interp;
use crate::rules::Args;
use crate::rules::check::{RuleResult, check, raise};
use crate::rules::ops::{check_inputs, matmul, op, out_known, out_shape, out_var};
use crate::rules::shape::broadcast;
use crate::value::Value;

use super::conv::{ConvSpec, conv_forward};
use super::linear::{embedding, linear};
use super::loss::loss_ce;
use super::norm::{layer_norm, mixed_dtype};
use super::pool::{adaptive_pool, pool, with_indices};
use super::spatial::{pool_settings, spatial, spatial_or};

/// `F.<name>(args)` at `range`: the rule's result, or unknown with the
/// diagnostic where torch raises.
pub(crate) fn functional(
    interp: &mut Interp<'_>,
    name: &str,
    args: Args,
    range: TextRange,
) -> Value {
    let result = functional_rule(interp, name, args, range.clone());
    interp.settle(range, result)
}

/// `F.<name>(...)`.
fn functional_rule(
    interp: &mut Interp<'_>,
    name: &str,
    args: Args,
    range: TextRange,
) -> RuleResult {
    let Some(x) = args.tensor(0, "input") else {
        return Ok(op(interp, name, args, range));
    };
    let Some(device) = check_inputs(interp, &args, name, range.clone()) else {
        return Ok(Value::Unknown);
    };
    match name {
        "linear" => {
            let Some(w) = args.tensor(1, "weight") else {
                return Ok(Value::Unknown);
            };
            let Some(wd) = interp.dims(&w) else {
                return Ok(Value::Unknown);
            };
            match wd.as_slice() {
                [out, inp] => Ok(linear(
                    interp,
                    &x,
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
        "conv1d" | "conv2d" | "conv3d" | "conv_transpose1d" | "conv_transpose2d"
        | "conv_transpose3d" => {
            let transposed = name.starts_with("conv_transpose");
            let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
            let Some(w) = args.tensor(1, "weight") else {
                return Ok(Value::Unknown);
            };
            let Some(wd) = interp.dims(&w) else {
                return Ok(Value::Unknown);
            };
            if wd.len() != n + 2 {
                return Ok(Value::Unknown);
            }
            let groups = args.get(6, "groups").cloned().unwrap_or(Value::int(1));
            let g = interp.as_dim(&groups).unwrap_or_else(|| Dim::konst(1));
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
            Ok(conv_forward(interp, &x, &spec, device, range))
        }
        "max_pool1d" | "max_pool2d" | "max_pool3d" | "avg_pool1d" | "avg_pool2d" | "avg_pool3d" => {
            let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
            let is_max = name.starts_with("max");
            let (kernel, stride, padding, dilation) =
                pool_settings(n, is_max, |i, k| args.get(i + 1, k));
            let ceil = args.flag(if is_max { 5 } else { 4 }, "ceil_mode", false) == Some(true);
            let out = pool(
                interp, &x, n, is_max, &kernel, &stride, &padding, &dilation, ceil, device, range,
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
        | "adaptive_max_pool3d" => {
            let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
            let avg = name.contains("avg");
            let out = adaptive_pool(
                interp,
                &x,
                (n, avg),
                args.get(1, "output_size"),
                device,
                range,
            );
            if name.contains("max") && args.flag(2, "return_indices", false) == Some(true) {
                return Ok(with_indices(out));
            }
            Ok(out)
        }
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
            Ok(layer_norm(interp, &x, &ns, device, range, name))
        }
        "normalize" => {
            if let Some(dims) = interp.dims(&x)
                && let Some(d) = args.int(2, "dim").or(Some(1))
                && let Err(message) = crate::rules::shape::wrap_dim(d, dims.len())
            {
                return raise(Code::DimOutOfRange, message);
            }
            Ok(out_shape(
                interp,
                &x,
                x.shape.clone(),
                x.dtype,
                device,
                name,
            ))
        }
        "batch_norm" | "group_norm" | "instance_norm" | "local_response_norm" => {
            if let Some(message) = mixed_dtype(&x, &args, name) {
                return raise(Code::DtypeMismatch, message);
            }
            // `F.batch_norm(..., training=True)` verifies the batch first.
            if name == "batch_norm"
                && matches!(args.get(5, "training"), Some(Value::Bool(Some(true))))
                && let Some(dims) = interp.dims(&x)
                && let Some(message) = super::forward::single_value_per_channel(interp, &dims)
            {
                return raise(Code::LayerInput, message);
            }
            Ok(out_shape(
                interp,
                &x,
                x.shape.clone(),
                x.dtype,
                device,
                name,
            ))
        }
        "embedding" => {
            let Some(w) = args.tensor(1, "weight") else {
                return Ok(Value::Unknown);
            };
            let Some(wd) = interp.dims(&w) else {
                return Ok(Value::Unknown);
            };
            let d = wd.last().cloned().map(Value::Int).unwrap_or(Value::Unknown);
            Ok(embedding(interp, &x, w.dtype, &d, device, range))
        }
        "pad" => {
            let Some(dims) = interp.dims(&x) else {
                return Ok(out_var(interp, &x, x.dtype, device, name));
            };
            let Some(pads) = args.get(1, "pad").and_then(|v| v.items()) else {
                return Ok(Value::Unknown);
            };
            if pads.len() % 2 != 0 {
                return raise(
                    Code::PadSize,
                    "Padding length must be divisible by 2".into(),
                );
            }
            if pads.len() / 2 > dims.len() {
                let message = format!(
                    "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {}",
                    pads.len(),
                    dims.len()
                );
                return raise(Code::PadSize, message);
            }
            let pads = interp.size_dims(&pads);
            let mode = args.str(2, "mode");
            let mode = mode.as_deref().unwrap_or("constant");
            if mode != "constant" {
                let (p, r) = (pads.len(), dims.len());
                if p > 6 || (p / 2 + 1 != r && p / 2 + 2 != r) {
                    let message =
                        format!("Padding size {p} is not supported for {r}D input tensor.");
                    return raise(Code::PadSize, message);
                }
                for i in 0..p / 2 {
                    let k = r - 1 - i;
                    let (Some(size), Some(lo), Some(hi)) = (
                        interp.env.value(&dims[k]),
                        interp.env.value(&pads[2 * i]),
                        interp.env.value(&pads[2 * i + 1]),
                    ) else {
                        continue;
                    };
                    let message = match mode {
                        "reflect" if lo >= size || hi >= size => format!(
                            "Argument #{}: Padding size should be less than the corresponding input dimension, but got: padding ({lo}, {hi}) at dimension {k} of input {}",
                            4 + 2 * i,
                            interp.fmt_dims(&dims)
                        ),
                        "circular" if lo > size || hi > size => {
                            "Padding value causes wrapping around more than once.".to_string()
                        }
                        _ => continue,
                    };
                    return raise(Code::PadSize, message);
                }
            }
            let mut out = dims.clone();
            let n = out.len();
            for i in 0..pads.len() / 2 {
                out[n - 1 - i] = out[n - 1 - i].add(&pads[2 * i]).add(&pads[2 * i + 1]);
            }
            Ok(out_known(interp, &x, out, x.dtype, device, name))
        }
        "interpolate" | "upsample" | "upsample_nearest" | "upsample_bilinear" => {
            if interp.dims(&x).is_none() {
                // The mode or the number of sizes says how many spatial dims
                // the input has (torch refuses any other rank): batch and
                // channels come before them.
                if let Some(k) = interpolated_dims(name, &args) {
                    let names: &[&str] = match k {
                        1 => &["N", "C", "L"],
                        2 => &["N", "C", "H", "W"],
                        _ => &["N", "C", "D", "H", "W"],
                    };
                    interp.demand_rank(&x.shape, names);
                }
            }
            let Some(dims) = interp.dims(&x) else {
                return Ok(out_var(interp, &x, x.dtype, device, name));
            };
            let mode = args.str(3, "mode");
            let mode = mode.as_deref().unwrap_or(match name {
                "upsample_bilinear" => "bilinear",
                _ => "nearest",
            });
            let r = dims.len();
            let need = match mode {
                "linear" => Some(3),
                "bilinear" => Some(4),
                "trilinear" => Some(5),
                _ => None,
            };
            if !(3..=5).contains(&r) || (mode == "bicubic" && r != 4) {
                let message = format!(
                    "Input Error: Only 3D, 4D and 5D input Tensors supported (got {r}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
                );
                return raise(Code::InterpolateSize, message);
            }
            if let Some(k) = need
                && k != r
            {
                let message = format!("Got {r}D input, but {mode} mode needs {k}D input");
                return raise(Code::InterpolateSize, message);
            }
            let n = dims.len() - 2;
            let size = args.get(1, "size").filter(|v| !v.is_none()).cloned();
            let scale = args
                .get(2, "scale_factor")
                .filter(|v| !v.is_none())
                .cloned();
            let mut out = dims[..2].to_vec();
            match (size, scale) {
                (Some(s), None) => {
                    // Sizes the analysis cannot enumerate (`size=low.shape[-2:]`
                    // of a tensor of unknown rank) are as many unknown sizes.
                    let sizes = match &s {
                        Value::Int(_) => vec![s.clone(); n],
                        v => v.items().unwrap_or_else(|| {
                            (0..n).map(|_| Value::Int(interp.env.anonymous())).collect()
                        }),
                    };
                    if sizes.len() != n {
                        let wanted = interp.size_dims(&sizes);
                        return raise(
                            Code::InterpolateSize,
                            format!(
                                "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {} and output size of {}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.",
                                interp.fmt_dims(&dims[2..]),
                                interp.fmt_tuple(&wanted)
                            ),
                        );
                    }
                    out.extend(interp.size_dims(&sizes));
                }
                (None, Some(f)) => {
                    let factors = match &f {
                        Value::Int(_) | Value::Float(_) => vec![f.clone(); n],
                        v => v.items().unwrap_or_default(),
                    };
                    for (i, l) in dims[2..].iter().enumerate() {
                        let d = match factors.get(i) {
                            Some(Value::Int(k)) => l.mul(k),
                            Some(Value::Float(Some(f))) => match interp.env.value(l) {
                                Some(v) => Dim::konst((v as f64 * f).floor() as i64),
                                None if f.fract() == 0.0 => l.mul(&Dim::konst(*f as i64)),
                                None => interp.env.anonymous(),
                            },
                            _ => interp.env.anonymous(),
                        };
                        out.push(d);
                    }
                }
                // A run on made-up inputs kept `None` defaults that any
                // real caller of the module may have set.
                (None, None) if interp.recorder.made_up => return Ok(Value::Unknown),
                (None, None) => {
                    return raise(
                        Code::InterpolateSize,
                        "either size or scale_factor should be defined".into(),
                    );
                }
                (Some(_), Some(_)) => {
                    return raise(
                        Code::InterpolateSize,
                        "only one of size or scale_factor should be defined".into(),
                    );
                }
            }
            Ok(out_known(interp, &x, out, x.dtype, device, name))
        }
        "pixel_shuffle" | "pixel_unshuffle" => {
            let Some(dims) = interp.dims(&x) else {
                return Ok(Value::Unknown);
            };
            let Some(r) = args
                .get(1, "upscale_factor")
                .or(args.get(1, "downscale_factor"))
                .and_then(|v| {
                    if let Value::Int(d) = v {
                        Some(d.clone())
                    } else {
                        None
                    }
                })
            else {
                return Ok(Value::Unknown);
            };
            let n = dims.len();
            check!(
                n >= 3,
                Code::LayerInput,
                "{name} expects input to have at least 3 dimensions, but got input with {n} dimension(s)"
            );
            let factor = if name == "pixel_shuffle" {
                "upscale_factor"
            } else {
                "downscale_factor"
            };
            if let Some(k) = interp.env.value(&r) {
                check!(
                    k > 0,
                    Code::LayerInput,
                    "{name} expects a positive {factor}, but got {k}"
                );
                // The sizes torch divides by the factor must divide exactly
                // (a square past int64 divides no size the analysis knows:
                // it is left alone).
                let divided: &[(usize, &str, Option<i64>, &str)] = if name == "pixel_shuffle" {
                    &[(
                        n - 3,
                        "its input's 'channel' dimension",
                        k.checked_mul(k),
                        "the square of ",
                    )]
                } else {
                    &[
                        (n - 2, "height", Some(k), ""),
                        (n - 1, "width", Some(k), ""),
                    ]
                };
                for &(i, what, by, square) in divided {
                    if let (Some(size), Some(by)) = (interp.env.value(&dims[i]), by) {
                        check!(
                            size % by == 0,
                            Code::LayerInput,
                            "{name} expects {what} to be divisible by {square}{factor}, but input.size({})={size} is not divisible by {by}",
                            i as i64 - n as i64
                        );
                    }
                }
            }
            let r2 = r.mul(&r);
            let mut out = dims.clone();
            if name == "pixel_shuffle" {
                out[n - 3] = dims[n - 3]
                    .floordiv(&r2)
                    .unwrap_or_else(|| interp.env.anonymous());
                out[n - 2] = dims[n - 2].mul(&r);
                out[n - 1] = dims[n - 1].mul(&r);
            } else {
                out[n - 3] = dims[n - 3].mul(&r2);
                out[n - 2] = dims[n - 2]
                    .floordiv(&r)
                    .unwrap_or_else(|| interp.env.anonymous());
                out[n - 1] = dims[n - 1]
                    .floordiv(&r)
                    .unwrap_or_else(|| interp.env.anonymous());
            }
            Ok(out_known(interp, &x, out, x.dtype, device, name))
        }
        "cross_entropy" | "nll_loss" => Ok(loss_ce(interp, name, &x, &args, device, range)),
        "mse_loss"
        | "l1_loss"
        | "smooth_l1_loss"
        | "huber_loss"
        | "binary_cross_entropy"
        | "binary_cross_entropy_with_logits"
        | "kl_div"
        | "soft_margin_loss" => {
            let reduction = args.str(99, "reduction");
            let Some(t) = args.tensor(1, "target") else {
                return Ok(Value::Unknown);
            };
            // Binary cross entropy needs input and target of one shape: a
            // side of unknown rank takes the other's.
            if name.starts_with("binary_cross_entropy") {
                if let Some(td) = interp.dims(&t) {
                    interp.adopt_shape(&x.shape, &td);
                } else if let Some(xd) = interp.dims(&x) {
                    interp.adopt_shape(&t.shape, &xd);
                }
            }
            let (Some(xd), Some(td)) = (interp.dims(&x), interp.dims(&t)) else {
                // A reduced loss is a scalar whatever the shapes.
                if reduction.as_deref() != Some("none") {
                    return Ok(out_known(interp, &x, Vec::new(), x.dtype, device, name));
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
                        .any(|(a, b)| interp.env.known_different(a, b)))
            {
                let (target, input) = (interp.fmt_dims(&td), interp.fmt_dims(&xd));
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
            let shape = match broadcast(interp, &xd, &td) {
                Ok(s) => s,
                Err(message) => {
                    return raise(Code::BroadcastShape, message);
                }
            };
            if xd != td && !name.starts_with("binary") {
                let message = format!(
                    "Using a target size ({}) that is different to the input size ({}). This will likely lead to incorrect results due to broadcasting.",
                    interp.fmt_dims(&td),
                    interp.fmt_dims(&xd)
                );
                interp.report(range.clone(), Code::LossBroadcast, message);
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
            Ok(out_known(interp, &x, out, dtype, device, name))
        }
        "scaled_dot_product_attention" => {
            let (Some(k), Some(v)) = (args.tensor(1, "key"), args.tensor(2, "value")) else {
                return Ok(Value::Unknown);
            };
            let (Some(qd), Some(kd), Some(vd)) =
                (interp.dims(&x), interp.dims(&k), interp.dims(&v))
            else {
                return Ok(out_var(interp, &x, x.dtype, device, name));
            };
            if qd.len() < 2 || kd.len() < 2 || vd.len() < 2 {
                return Ok(Value::Unknown);
            }
            let (e, ek) = (&qd[qd.len() - 1], &kd[kd.len() - 1]);
            if interp.env.known_different(e, ek) {
                // The math kernel's `q @ k.transpose(-2, -1)`, its batch
                // dims folded into one `bmm`.
                let folded = match broadcast(interp, &qd[..qd.len() - 2], &kd[..kd.len() - 2]) {
                    Ok(batch) => interp.fmt_dim(&crate::rules::shape::numel(&batch)),
                    Err(message) => return raise(Code::BroadcastShape, message),
                };
                let message = format!(
                    "Expected size for first two dimensions of batch2 tensor to be: [{folded}, {}] but got: [{folded}, {}].",
                    interp.fmt_dim(e),
                    interp.fmt_dim(ek)
                );
                return raise(Code::MatmulShape, message);
            }
            let Ok(mut batch) = broadcast(interp, &qd[..qd.len() - 2], &kd[..kd.len() - 2]) else {
                return Ok(Value::Unknown);
            };
            batch.push(qd[qd.len() - 2].clone());
            batch.push(vd[vd.len() - 1].clone());
            Ok(out_known(interp, &x, batch, x.dtype, device, name))
        }
        "one_hot" => Ok(op(interp, "one_hot", args, range)),
        "unfold" => {
            let Some(dims) = interp.dims(&x) else {
                return Ok(Value::Unknown);
            };
            if dims.len() != 4 {
                return Ok(Value::Unknown);
            }
            let kernel = spatial(args.get(1, "kernel_size"), 2);
            let dilation = spatial_or(args.get(2, "dilation"), 2, 1);
            let padding = spatial_or(args.get(3, "padding"), 2, 0);
            let stride = spatial_or(args.get(4, "stride"), 2, 1);
            // A setting the analysis cannot read gives no list of two.
            if [&kernel, &dilation, &padding, &stride]
                .iter()
                .any(|s| s.len() != 2)
            {
                return Ok(Value::Unknown);
            }
            let mut blocks = Dim::konst(1);
            for i in 0..2 {
                let keff = dilation[i]
                    .mul(&kernel[i].sub(&Dim::konst(1)))
                    .add(&Dim::konst(1));
                let n = dims[2 + i]
                    .add(&padding[i].mul(&Dim::konst(2)))
                    .sub(&keff)
                    .floordiv(&stride[i])
                    .map(|q| q.add(&Dim::konst(1)));
                blocks = blocks.mul(&n.unwrap_or_else(|| interp.env.anonymous()));
            }
            let c = dims[1].mul(&kernel[0]).mul(&kernel[1]);
            Ok(out_known(
                interp,
                &x,
                vec![dims[0].clone(), c, blocks],
                x.dtype,
                device,
                name,
            ))
        }
        "grid_sample" => {
            let Some(g) = args.tensor(1, "grid") else {
                return Ok(Value::Unknown);
            };
            let (Some(xd), Some(gd)) = (interp.dims(&x), interp.dims(&g)) else {
                return Ok(Value::Unknown);
            };
            if xd.len() != 4 || gd.len() != 4 {
                return Ok(Value::Unknown);
            }
            Ok(out_known(
                interp,
                &x,
                vec![xd[0].clone(), xd[1].clone(), gd[1].clone(), gd[2].clone()],
                x.dtype,
                device,
                name,
            ))
        }
        "glu" => {
            let Some(mut dims) = interp.dims(&x) else {
                return Ok(Value::Unknown);
            };
            let d = args.int(1, "dim").unwrap_or(-1);
            let d = match crate::rules::shape::wrap_dim(d, dims.len()) {
                Ok(d) => d,
                Err(message) => {
                    return raise(Code::DimOutOfRange, message);
                }
            };
            if let Some(size) = dims.get(d).and_then(|s| interp.env.value(s))
                && size % 2 != 0
            {
                let message =
                    format!("Halving dimension must be even, but dimension {d} is size {size}");
                return raise(Code::GluSize, message);
            }
            if dims.is_empty() {
                return Ok(Value::Unknown);
            }
            dims[d] = dims[d]
                .floordiv(&Dim::konst(2))
                .unwrap_or_else(|| interp.env.anonymous());
            Ok(out_known(interp, &x, dims, x.dtype, device, name))
        }
        "mm" | "matmul" => {
            let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
            Ok(matmul(interp, name, &x, &other, &args, device, range))
        }
        _ => Ok(op(interp, name, args, range)),
    }
}

/// How many spatial dims an interpolation works on, when its mode or its
/// sizes say (`size=(h, w)`, `mode="bilinear"`).
fn interpolated_dims(name: &str, args: &Args) -> Option<usize> {
    let mode = args.str(3, "mode");
    let by_mode = match mode.as_deref().unwrap_or(match name {
        "upsample_bilinear" => "bilinear",
        _ => "",
    }) {
        "linear" => Some(1),
        "bilinear" | "bicubic" => Some(2),
        "trilinear" => Some(3),
        _ => None,
    };
    let counted = |v: Option<&Value>| match v {
        Some(v @ (Value::Tuple(_) | Value::List(_) | Value::SizeOfVar(..))) => {
            v.items().map(|items| items.len())
        }
        _ => None,
    };
    let by_sizes = counted(args.get(1, "size")).or_else(|| counted(args.get(2, "scale_factor")));
    by_mode
        .or(by_sizes)
        .filter(|k| (1..=3).contains(k) && by_sizes.is_none_or(|n| n == *k))
}
