//! The forward rule of each built-in layer: what `layer(x)` returns and what torch checks.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::interp::Interp;
use crate::rules::Args;
use crate::rules::ops::{check_inputs, op, out_known, out_shape};
use crate::value::{DType, Layer, Shape, Tensor, Value};

use super::Kwargs;
use super::attention::{layer_d_model, mha};
use super::conv::{ConvSpec, conv_forward, conv_transpose_output_size};
use super::functional::functional;
use super::linear::{LinearCall, embedding, linear};
use super::norm::{layer_norm, norm_dtype_message};
use super::parameters::layer_param;
use super::pool::{adaptive_pool, pool, with_indices};
use super::recurrent::rnn;
use super::spatial::{pool_settings, spatial, spatial_or};
use crate::rules::names::NameSet;

/// Layers whose forward keeps the input's shape.
static SAME_SHAPE: NameSet = NameSet::new(&[
    "ReLU",
    "ReLU6",
    "GELU",
    "SiLU",
    "Tanh",
    "Sigmoid",
    "LeakyReLU",
    "ELU",
    "SELU",
    "CELU",
    "Mish",
    "Hardswish",
    "Hardsigmoid",
    "Hardtanh",
    "PReLU",
    "Softplus",
    "Softsign",
    "Tanhshrink",
    "Threshold",
    "LogSigmoid",
    "GLU_same",
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "Softmax2d",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "Identity",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LocalResponseNorm",
    "CrossMapLRN2d",
    "Hardshrink",
    "Softshrink",
    "RReLU",
]);

/// Calling a built-in layer: its forward rule, with the fix of a size
/// argument that does not fit the input offered for what it reports.
pub(crate) fn call_layer(
    interp: &mut Interp<'_>,
    callee: &Value,
    layer: &Rc<Layer>,
    args: Vec<Value>,
    kwargs: Kwargs,
    range: TextRange,
) -> Value {
    let offered = interp.offered_fixes.len();
    if let Some(input) = args.first()
        && let Some((code, fix)) = crate::rules::fixes::layer_size_fix(interp, layer, input)
    {
        interp.offer_fix(code, fix);
    }
    if let Some(fix) = crate::rules::fixes::layer_device_fix(interp, layer, args.first(), &range) {
        interp.offer_fix(Code::DeviceMismatch, fix);
    }
    let out = forward(interp, callee, layer, args, kwargs, range);
    // An offer the forward did not report is withdrawn.
    interp.offered_fixes.truncate(offered);
    out
}

/// The forward rule of a built-in layer.
fn forward(
    interp: &mut Interp<'_>,
    callee: &Value,
    layer: &Rc<Layer>,
    args: Vec<Value>,
    kwargs: Kwargs,
    range: TextRange,
) -> Value {
    let kind = layer.kind.clone();
    let a = |i: usize, n: &str| layer.arg(i, n).cloned();
    let input = args.first().cloned().unwrap_or(Value::Unknown);
    let call_args = Args::new(args.clone(), kwargs.clone());
    if kind.as_ref() == "Sequential" && layer.unknown_children.get() {
        // Layers made in a loop of unknown length run any number of times:
        // the result is known only when a run keeps the input's shape.
        let mut v = input.clone();
        for child in layer.children.borrow().clone() {
            v = interp.call_value(&child, vec![v], Vec::new(), range.clone());
        }
        return match (&input, &v) {
            (Value::Tensor(x), Value::Tensor(y))
                if same_shape(interp, x, y) && x.dtype == y.dtype =>
            {
                v
            }
            _ => Value::Unknown,
        };
    }
    if kind.as_ref() == "Sequential" {
        let mut v = input;
        for child in layer.children.borrow().clone() {
            v = interp.call_value(&child, vec![v], Vec::new(), range.clone());
        }
        return v;
    }
    let Value::Tensor(x) = &input else {
        return Value::Unknown;
    };
    // An input of unknown rank takes the rank the layer needs, batched.
    let demanded: &[&str] = match &*kind {
        "Conv1d" | "ConvTranspose1d" | "MaxPool1d" | "AvgPool1d" | "BatchNorm1d_3" => {
            &["N", "C", "L"]
        }
        "Conv2d" | "ConvTranspose2d" | "MaxPool2d" | "AvgPool2d" | "BatchNorm2d"
        | "AdaptiveAvgPool2d" | "AdaptiveMaxPool2d" | "InstanceNorm2d" => &["N", "C", "H", "W"],
        "Conv3d" | "ConvTranspose3d" | "MaxPool3d" | "AvgPool3d" | "BatchNorm3d" => {
            &["N", "C", "D", "H", "W"]
        }
        _ => &[],
    };
    if !demanded.is_empty() {
        interp.demand_rank(&x.shape, demanded);
    }
    // The layer's parameters take part in the device and fake-mode checks.
    let weight = layer_param(interp, layer, "weight");
    let mut with_weight = args.clone();
    if let Value::Tensor(_) = weight {
        // aten.embedding takes the weight first, and torch names the first
        // device it meets first.
        if &*kind == "Embedding" {
            with_weight.insert(0, weight.clone());
        } else {
            with_weight.push(weight.clone());
        }
    } else if layer.device.borrow().is_some()
        && !SAME_SHAPE.contains(&kind)
        // A loss has no parameters (a class `weight=` is an argument):
        // it runs wherever its inputs are.
        && !kind.ends_with("Loss")
    {
        let t = interp.new_tensor(
            Shape::known(Vec::new()),
            None,
            layer.device.borrow().clone(),
            "weight",
        );
        let t = Tensor {
            origin: layer.origin,
            mode: layer.mode,
            shape: Shape::known(vec![Dim::konst(2)]),
            ..t
        };
        with_weight.push(Value::Tensor(Rc::new(t)));
    }
    let Some(device) = check_inputs(
        interp,
        &Args::new(with_weight, Vec::new()),
        &format!("{kind}"),
        range.clone(),
    ) else {
        return Value::Unknown;
    };
    let _ = callee;
    // Eager kernels need the input and the weights of one dtype (fake mode
    // lets it pass; the run would not).
    let weight_dtype = *layer.dtype.borrow();
    if let (Some(xd), Some(wd)) = (x.dtype, weight_dtype)
        && xd != wd
    {
        let dtype = crate::rules::dtype::torch_name;
        let cpp = crate::rules::dtype::cpp_name;
        let biased = |i| !matches!(layer.arg(i, "bias"), Some(Value::Bool(Some(false))));
        // Integer inputs (a uint8 image, token ids) meet the weights'
        // float in the kernel just as a double input does.
        let message = match &*kind {
            "Linear" if biased(2) => Some(format!(
                "mat1 and mat2 must have the same dtype, but got {} and {}",
                dtype(xd),
                dtype(wd)
            )),
            "Linear" => Some(format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                cpp(xd),
                cpp(wd)
            )),
            "Bilinear" if xd.is_floating() => Some(format!(
                "mat1 and mat2 must have the same dtype, but got {} and {}",
                dtype(xd),
                dtype(wd)
            )),
            k if k.starts_with("Conv") && biased(7) => Some(format!(
                "Input type ({}) and bias type ({}) should be the same",
                cpp(xd),
                cpp(wd)
            )),
            k if k.starts_with("Conv") => Some(format!(
                "expected scalar type {} but found {}",
                dtype(xd),
                dtype(wd)
            )),
            _ if !xd.is_floating() => None,
            "LSTM" | "GRU" | "RNN" => Some(format!(
                "RNN input dtype (torch.{}) does not match weight dtype (torch.{}). Convert input: input.to(torch.{}), or convert model: model.to(torch.{})",
                xd.name(),
                wd.name(),
                wd.name(),
                xd.name()
            )),
            "LayerNorm"
                if !matches!(
                    layer.arg(2, "elementwise_affine"),
                    Some(Value::Bool(Some(false)))
                ) =>
            {
                norm_dtype_message(xd, wd)
            }
            "BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d" | "GroupNorm" => {
                norm_dtype_message(xd, wd)
            }
            "InstanceNorm1d" | "InstanceNorm2d" | "InstanceNorm3d"
                if matches!(layer.arg(3, "affine"), Some(Value::Bool(Some(true)))) =>
            {
                norm_dtype_message(xd, wd)
            }
            _ => None,
        };
        if let Some(message) = message {
            interp.report(range, Code::DtypeMismatch, message);
            return Value::Unknown;
        }
    }
    if SAME_SHAPE.contains(&kind) {
        if matches!(&*kind, "Softmax" | "LogSoftmax" | "Softmin") {
            let dim = a(0, "dim").unwrap_or(Value::None);
            return op(
                interp,
                "softmax",
                Args::new(vec![input.clone(), dim], Vec::new()),
                range,
            );
        }
        return out_shape(interp, x, x.shape.clone(), x.dtype, device, &kind);
    }
    let fa = |v: Vec<Value>, kw: Vec<(&str, Option<Value>)>| {
        Args::new(
            v,
            kw.into_iter()
                .filter_map(|(k, v)| v.map(|v| (Rc::from(k), v)))
                .collect(),
        )
    };
    match &*kind {
        "Linear" => {
            let name = callee_text(interp.text(&range));
            linear(
                interp,
                x,
                &a(0, "in_features").unwrap_or(Value::Unknown),
                &a(1, "out_features").unwrap_or(Value::Unknown),
                LinearCall {
                    biased: !matches!(a(2, "bias"), Some(Value::Bool(Some(false)))),
                    layer_name: name,
                },
                device,
                range,
            )
        }
        "LazyLinear" => {
            let Some(dims) = interp.dims(x) else {
                return Value::Unknown;
            };
            let mut out = dims.clone();
            if let Some(last) = out.last_mut() {
                *last =
                    interp.size_dims(&[a(0, "out_features").unwrap_or(Value::Unknown)])[0].clone();
            }
            out_known(interp, x, out, x.dtype, device, "nn.LazyLinear")
        }
        "Bilinear" => {
            let Some(dims) = interp.dims(x) else {
                return Value::Unknown;
            };
            let mut out = dims;
            if let Some(last) = out.last_mut() {
                *last =
                    interp.size_dims(&[a(2, "out_features").unwrap_or(Value::Unknown)])[0].clone();
            }
            out_known(interp, x, out, x.dtype, device, "nn.Bilinear")
        }
        "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose1d" | "ConvTranspose2d"
        | "ConvTranspose3d" => {
            let transposed = kind.starts_with("ConvTranspose");
            let n = (kind.as_bytes()[kind.len() - 2] - b'0') as usize;
            let conv = ConvSpec {
                n,
                in_channels: a(0, "in_channels"),
                out_channels: a(1, "out_channels"),
                kernel: spatial(layer.arg(2, "kernel_size"), n),
                stride: spatial_or(layer.arg(3, "stride"), n, 1),
                padding: layer.arg(4, "padding").cloned(),
                output_padding: if transposed {
                    spatial_or(layer.arg(5, "output_padding"), n, 0)
                } else {
                    vec![Dim::konst(0); n]
                },
                groups: layer.arg(6, "groups").cloned().unwrap_or(Value::int(1)),
                dilation: spatial_or(layer.arg(if transposed { 8 } else { 5 }, "dilation"), n, 1),
                transposed,
            };
            let out = conv_forward(interp, x, &conv, device, range.clone());
            let output_size = call_args.get(1, "output_size");
            // torch prints the sizes as the code gave them, list or tuple.
            let tuple = matches!(output_size, Some(Value::Tuple(_)));
            match output_size.and_then(|v| v.items()) {
                Some(sizes) if transposed && sizes.len() >= n => conv_transpose_output_size(
                    interp,
                    x,
                    &conv,
                    out,
                    (&sizes[sizes.len() - n..], tuple),
                    range,
                ),
                _ => out,
            }
        }
        "MaxPool1d" | "MaxPool2d" | "MaxPool3d" | "AvgPool1d" | "AvgPool2d" | "AvgPool3d" => {
            let n = (kind.as_bytes()[kind.len() - 2] - b'0') as usize;
            let is_max = kind.starts_with("Max");
            let (kernel, stride, padding, dilation) =
                pool_settings(n, is_max, |i, k| layer.arg(i, k));
            let ceil = matches!(
                layer.arg(if is_max { 5 } else { 3 }, "ceil_mode"),
                Some(Value::Bool(Some(true)))
            );
            let out = pool(
                interp, x, n, is_max, &kernel, &stride, &padding, &dilation, ceil, device, range,
            );
            if is_max
                && matches!(
                    layer.arg(4, "return_indices"),
                    Some(Value::Bool(Some(true)))
                )
                && matches!(out, Value::Tensor(_))
            {
                return with_indices(out);
            }
            out
        }
        "AdaptiveAvgPool1d" | "AdaptiveAvgPool2d" | "AdaptiveAvgPool3d" | "AdaptiveMaxPool1d"
        | "AdaptiveMaxPool2d" | "AdaptiveMaxPool3d" => {
            let n = (kind.as_bytes()[kind.len() - 2] - b'0') as usize;
            let avg = kind.starts_with("AdaptiveAvg");
            let out = adaptive_pool(
                interp,
                x,
                (n, avg),
                a(0, "output_size").as_ref(),
                device,
                range,
            );
            if kind.starts_with("AdaptiveMax")
                && matches!(a(1, "return_indices"), Some(Value::Bool(Some(true))))
            {
                return with_indices(out);
            }
            out
        }
        "BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d" | "SyncBatchNorm" | "LazyBatchNorm2d" => {
            let Some(dims) = interp.dims(x) else {
                return out_shape(interp, x, x.shape.clone(), x.dtype, device, &kind);
            };
            let expected: &[usize] = match &*kind {
                "BatchNorm1d" => &[2, 3],
                "BatchNorm2d" => &[4],
                "BatchNorm3d" => &[5],
                _ => &[],
            };
            if !expected.is_empty() && !expected.contains(&dims.len()) {
                let message = if expected.len() == 2 {
                    format!("expected 2D or 3D input (got {}D input)", dims.len())
                } else {
                    format!(
                        "expected {}D input (got {}D input)",
                        expected[0],
                        dims.len()
                    )
                };
                interp.report(range, Code::LayerInput, message);
                return Value::Unknown;
            }
            if let (Some(c), Some(nf)) = (
                dims.get(1),
                a(0, "num_features").and_then(|v| interp.as_dim(&v)),
            ) {
                if interp.env.known_different(c, &nf) {
                    let message = format!(
                        "running_mean should contain {} elements not {}",
                        interp.fmt_dim(c),
                        interp.fmt_dim(&nf)
                    );
                    interp.report(range, Code::LayerInput, message);
                    return Value::Unknown;
                }
                let _ = interp.require_equal(c, &nf);
            }
            // A layer that keeps no running statistics normalises with the
            // batch's own in eval mode too.
            let no_running_stats =
                matches!(a(4, "track_running_stats"), Some(Value::Bool(Some(false))));
            if (layer.training.get() == Some(true) || no_running_stats)
                && let Some(message) = single_value_per_channel(interp, &dims)
            {
                interp.report(range, Code::LayerInput, message);
                return Value::Unknown;
            }
            out_known(interp, x, dims, x.dtype, device, &kind)
        }
        "LayerNorm" | "RMSNorm" => {
            let ns = a(0, "normalized_shape").unwrap_or(Value::Unknown);
            layer_norm(interp, x, &ns, device, range, &kind)
        }
        "GroupNorm" => {
            let Some(dims) = interp.dims(x) else {
                return out_shape(interp, x, x.shape.clone(), x.dtype, device, &kind);
            };
            if let (Some(c), Some(nc)) = (
                dims.get(1),
                a(1, "num_channels").and_then(|v| interp.as_dim(&v)),
            ) {
                if interp.env.known_different(c, &nc) {
                    let message = format!(
                        "Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape [{}] and input of shape {}",
                        interp.fmt_dim(&nc),
                        interp.fmt_dims(&dims)
                    );
                    interp.report(range, Code::LayerInput, message);
                    return Value::Unknown;
                }
                let _ = interp.require_equal(c, &nc);
            }
            out_known(interp, x, dims, x.dtype, device, &kind)
        }
        "Embedding" => embedding(
            interp,
            x,
            weight_dtype,
            &a(1, "embedding_dim").unwrap_or(Value::Unknown),
            device,
            range,
        ),
        "EmbeddingBag" => {
            let Some(dims) = interp.dims(x) else {
                return Value::Unknown;
            };
            let d = interp.size_dims(&[a(1, "embedding_dim").unwrap_or(Value::Unknown)])[0].clone();
            let b = if dims.len() == 2 {
                dims[0].clone()
            } else {
                interp.env.anonymous()
            };
            out_known(
                interp,
                x,
                vec![b, d],
                Some(DType::Float32),
                device,
                "nn.EmbeddingBag",
            )
        }
        "Flatten" => {
            let s = a(0, "start_dim").unwrap_or(Value::int(1));
            let e = a(1, "end_dim").unwrap_or(Value::int(-1));
            op(
                interp,
                "flatten",
                Args::new(vec![input.clone(), s, e], Vec::new()),
                range,
            )
        }
        "Unflatten" => {
            let d = a(0, "dim").unwrap_or(Value::Unknown);
            let s = a(1, "unflattened_size").unwrap_or(Value::Unknown);
            op(
                interp,
                "unflatten",
                Args::new(vec![input.clone(), d, s], Vec::new()),
                range,
            )
        }
        "Upsample" | "UpsamplingNearest2d" | "UpsamplingBilinear2d" => {
            let args = fa(
                vec![input.clone()],
                vec![
                    ("size", a(0, "size")),
                    ("scale_factor", a(1, "scale_factor")),
                    ("mode", a(2, "mode")),
                ],
            );
            functional(interp, "interpolate", args, range)
        }
        "PixelShuffle" | "PixelUnshuffle" => {
            let r = a(0, "upscale_factor")
                .or(a(0, "downscale_factor"))
                .unwrap_or(Value::Unknown);
            functional(
                interp,
                if &*kind == "PixelShuffle" {
                    "pixel_shuffle"
                } else {
                    "pixel_unshuffle"
                },
                Args::new(vec![input.clone(), r], Vec::new()),
                range,
            )
        }
        "ZeroPad1d" | "ZeroPad2d" | "ZeroPad3d" | "ConstantPad1d" | "ConstantPad2d"
        | "ConstantPad3d" | "ReflectionPad1d" | "ReflectionPad2d" | "ReflectionPad3d"
        | "ReplicationPad1d" | "ReplicationPad2d" | "ReplicationPad3d" | "CircularPad1d"
        | "CircularPad2d" | "CircularPad3d" => {
            let n = (kind.as_bytes()[kind.len() - 2] - b'0') as usize;
            let pad = match a(0, "padding") {
                Some(Value::Int(d)) => Value::tuple(vec![Value::Int(d); 2 * n]),
                Some(v) => v,
                None => Value::Unknown,
            };
            let mode = match kind.as_bytes()[0] {
                b'R' if kind.starts_with("Reflection") => "reflect",
                b'R' => "replicate",
                b'C' if kind.starts_with("Circular") => "circular",
                _ => "constant",
            };
            functional(
                interp,
                "pad",
                Args::new(
                    vec![input.clone(), pad],
                    vec![(Rc::from("mode"), Value::Str(Rc::from(mode)))],
                ),
                range,
            )
        }
        "LSTM" | "GRU" | "RNN" => rnn(interp, layer, x, &args, device, range),
        "LSTMCell" | "GRUCell" | "RNNCell" => {
            let Some(dims) = interp.dims(x) else {
                return Value::Unknown;
            };
            let h = interp.size_dims(&[a(1, "hidden_size").unwrap_or(Value::Unknown)])[0].clone();
            let h0 = match args.get(1) {
                Some(Value::Tensor(t)) => Some(t.clone()),
                Some(v) => v.items().and_then(|i| match i.first() {
                    Some(Value::Tensor(t)) => Some(t.clone()),
                    _ => None,
                }),
                None => None,
            };
            if let Some(hd) = h0.and_then(|t| interp.dims(&t))
                && hd.len() == 2
                && dims.len() == 2
                && interp.env.known_different(&hd[0], &dims[0])
            {
                let message = format!(
                    "Input batch size {} doesn't match hidden0 batch size {}",
                    interp.fmt_dim(&dims[0]),
                    interp.fmt_dim(&hd[0])
                );
                interp.report(range, Code::LayerInput, message);
                return Value::Unknown;
            }
            let mut out = dims;
            if let Some(last) = out.last_mut() {
                *last = h;
            }
            let v = out_known(interp, x, out, x.dtype, device, &kind);
            if &*kind == "LSTMCell" {
                Value::tuple(vec![v.clone(), v])
            } else {
                v
            }
        }
        "MultiheadAttention" => mha(interp, layer, &call_args, device, range),
        "TransformerEncoderLayer"
        | "TransformerDecoderLayer"
        | "TransformerEncoder"
        | "TransformerDecoder" => {
            if let (Some(dims), Some(d_model)) = (interp.dims(x), layer_d_model(interp, layer)) {
                if let Some(last) = dims.last() {
                    if interp.env.known_different(last, &d_model) {
                        // With `norm_first` the first op is the LayerNorm.
                        let norm_first = |l: &Layer| {
                            matches!(l.arg(99, "norm_first"), Some(Value::Bool(Some(true))))
                        };
                        let inner_norm_first = match layer.args.first() {
                            Some(Value::Layer(inner)) => norm_first(inner),
                            _ => false,
                        };
                        let message = if norm_first(layer) || inner_norm_first {
                            format!(
                                "Given normalized_shape=[{}], expected input with shape [*, {}], but got input of size{}",
                                interp.fmt_dim(&d_model),
                                interp.fmt_dim(&d_model),
                                interp.fmt_dims(&dims)
                            )
                        } else {
                            format!(
                                "was expecting embedding dimension of {}, but got {}",
                                interp.fmt_dim(&d_model),
                                interp.fmt_dim(last)
                            )
                        };
                        interp.report(range, Code::LayerInput, message);
                        return Value::Unknown;
                    }
                    let _ = interp.require_equal(last, &d_model);
                }
                return out_known(interp, x, dims, x.dtype, device, &kind);
            }
            out_shape(interp, x, x.shape.clone(), x.dtype, device, &kind)
        }
        "Transformer" => {
            let tgt = call_args.tensor(1, "tgt");
            match tgt {
                Some(t) => out_shape(
                    interp,
                    &t,
                    t.shape.clone(),
                    t.dtype,
                    device,
                    "nn.Transformer",
                ),
                None => Value::Unknown,
            }
        }
        "CrossEntropyLoss" | "NLLLoss" | "MSELoss" | "L1Loss" | "BCELoss" | "BCEWithLogitsLoss"
        | "SmoothL1Loss" | "HuberLoss" | "KLDivLoss" => {
            let f = match &*kind {
                "CrossEntropyLoss" => "cross_entropy",
                "NLLLoss" => "nll_loss",
                "MSELoss" => "mse_loss",
                "L1Loss" => "l1_loss",
                "BCELoss" => "binary_cross_entropy",
                "BCEWithLogitsLoss" => "binary_cross_entropy_with_logits",
                "SmoothL1Loss" => "smooth_l1_loss",
                "HuberLoss" => "huber_loss",
                _ => "kl_div",
            };
            let mut kw = kwargs.clone();
            if let Some(r) = layer.kwargs.iter().find(|(k, _)| &**k == "reduction") {
                kw.push(r.clone());
            }
            functional(interp, f, Args::new(args, kw), range)
        }
        "Rearrange" | "Reduce" => {
            let pattern = a(0, "pattern").unwrap_or(Value::Unknown);
            let mut kw: Kwargs = layer.kwargs.clone();
            let name = if &*kind == "Rearrange" {
                "rearrange"
            } else {
                "reduce"
            };
            if &*kind == "Reduce" {
                kw.push((
                    Rc::from("reduction"),
                    a(1, "reduction").unwrap_or(Value::Unknown),
                ));
            }
            crate::rules::einops::call(
                interp,
                name,
                Args::new(vec![input.clone(), pattern], kw),
                range,
            )
        }
        _ => {
            crate::rules::no_rule_warning(interp, range, &format!("nn.{kind}"));
            Value::Unknown
        }
    }
}

/// Whether two tensors are known to have one shape.
fn same_shape(interp: &mut Interp<'_>, x: &Tensor, y: &Tensor) -> bool {
    let (sx, sy) = (
        interp.resolve_shape(&x.shape),
        interp.resolve_shape(&y.shape),
    );
    match (sx.dims(), sy.dims()) {
        (Some(a), Some(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| interp.env.known_equal(p, q))
        }
        _ => sx == sy,
    }
}

/// What batch norm in training mode raises when each channel has one value
/// (`F.batch_norm`'s `_verify_batch_size`: the batch times the spatial sizes).
pub(super) fn single_value_per_channel(interp: &Interp<'_>, dims: &[Dim]) -> Option<String> {
    let values = dims
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, d)| d.as_const())
        .try_fold(1i64, |acc, d| d.map(|d| acc.saturating_mul(d)))?;
    (values == 1 && dims.len() >= 2).then(|| {
        format!(
            "Expected more than 1 value per channel when training, got input size torch.Size({})",
            interp.fmt_dims(dims)
        )
    })
}

/// The called expression of a call's text (`self.fc1` of `self.fc1(x)`,
/// `self.blocks[0]` of `self.blocks[0](x)`): what the user calls the layer.
fn callee_text(call: &str) -> Option<String> {
    let call = call.trim_end();
    if !call.ends_with(')') {
        return None;
    }
    // The argument list is the last bracketed group: find its `(`.
    let mut depth = 0i32;
    for (i, c) in call.char_indices().rev() {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' => {
                depth -= 1;
                if depth == 0 {
                    let name = call[..i].trim();
                    return (!name.is_empty() && name.len() <= 60 && !name.contains('\n'))
                        .then(|| name.to_string());
                }
            }
            _ => {}
        }
    }
    None
}
