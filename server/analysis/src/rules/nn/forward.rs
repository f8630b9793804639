//! The forward rule of each built-in layer: what `layer(x)` returns and what torch checks.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{check_inputs, op, out_known, out_shape};
use crate::value::{DType, Device, Layer, Shape, Tensor, Value};

use super::Kwargs;
use super::attention::{mha, transformer_layer, transformer_stack_layer};
use super::conv::{ConvSpec, conv_forward, conv_transpose_output_size};
use super::functional::functional;
use super::input_checks::layer_input;
use super::linear::{LinearCall, bilinear_layer, embedding, linear};
use super::norm::{layer_norm, norm_dtype_message};
use super::parameters::layer_param;
use super::pool::{adaptive_pool, pool, with_indices};
use super::recurrent::{rnn, rnn_cell_layer};
use super::registry::{Forward, LayerDef};
use super::spatial::{named_setting, pool_settings, spatial, spatial_or};

/// Calling a built-in layer: its forward rule, with the fix of a size
/// argument that does not fit the input offered for what it reports.
pub(crate) fn call_layer(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
    args: Vec<Value>,
    kwargs: Kwargs,
    range: TextRange,
) -> Value {
    let offered = meta.offered_fixes().len();
    if let Some(input) = args.first()
        && let Some((code, fix)) = crate::rules::fixes::layer_size_fix(meta, layer, input)
    {
        meta.offer_fix(code, fix);
    }
    if let Some(fix) = crate::rules::fixes::layer_device_fix(meta, layer, args.first(), &range) {
        meta.offer_fix(Code::DeviceMismatch, fix);
    }
    let out = forward(meta, layer, args, kwargs, range);
    let out = meta.settle(range, out);
    // An offer the forward did not report is withdrawn.
    meta.offered_fixes().truncate(offered);
    out
}

/// The forward rule of a built-in layer: the checks every layer's call
/// takes (rank, device, dtype of the weights), then its family's rule.
fn forward(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
    args: Vec<Value>,
    kwargs: Kwargs,
    range: TextRange,
) -> RuleResult {
    let def = layer.def();
    let family = def.map_or(Forward::None, |d| d.forward);
    let input = args.first().cloned().unwrap_or(Value::Unknown);
    if family == Forward::Sequential {
        return Ok(sequential(meta, layer, input, range));
    }
    let Value::Tensor(x) = &input else {
        return Ok(Value::Unknown);
    };
    // An input of unknown rank takes the rank the layer needs, batched.
    if let Some(def) = def
        && def.batched_input
    {
        let names: &[&str] = match def.spatial {
            1 => &["N", "C", "L"],
            2 => &["N", "C", "H", "W"],
            _ => &["N", "C", "D", "H", "W"],
        };
        meta.demand_rank(&x.shape, names);
    }
    let Some(device) = check_layer_inputs(meta, (layer, def), &args, range) else {
        return Ok(Value::Unknown);
    };
    // Eager kernels need the input and the weights of one dtype (fake mode
    // lets it pass; the run would not).
    let weight_dtype = *layer.dtype.borrow();
    if let (Some(xd), Some(wd)) = (x.dtype, weight_dtype)
        && !meta.mode().autocast
        && let Some(message) = weight_dtype_message(layer, family, xd, wd)
    {
        return raise(Code::DtypeMismatch, message);
    }
    let args = Args::new(args, kwargs);
    let call = LayerCall {
        layer,
        spatial: def.map_or(0, |d| d.spatial),
        x,
        input: &input,
        args: &args,
        device,
        range,
    };
    layer_input(meta, &call)?;
    match family {
        Forward::SameShape => Ok(out_shape(
            meta,
            x,
            x.shape.clone(),
            x.dtype,
            call.device.clone(),
            &layer.kind,
        )),
        Forward::Softmax => {
            let dim = call.setting("dim").unwrap_or(Value::None);
            Ok(op(
                meta,
                "softmax",
                Args::new(vec![input.clone(), dim], Vec::new()),
                call.range,
            ))
        }
        Forward::Linear => Ok(linear_layer(meta, &call)),
        Forward::Bilinear => bilinear_layer(meta, &call),
        Forward::LazyLinear => Ok(last_size_from(meta, &call, family)),
        Forward::Conv => conv_layer(meta, &call),
        Forward::Pool { max } => Ok(pool_layer(meta, &call, max)),
        Forward::AdaptivePool { max } => Ok(adaptive_pool_layer(meta, &call, max)),
        Forward::BatchNorm => batch_norm_layer(meta, &call),
        Forward::LayerNorm | Forward::RmsNorm => {
            let ns = call.setting("normalized_shape").unwrap_or(Value::Unknown);
            layer_norm(meta, x, &ns, call.device.clone(), &layer.kind)
        }
        Forward::GroupNorm => group_norm_layer(meta, &call),
        Forward::Embedding => Ok(embedding(
            meta,
            x,
            weight_dtype,
            &call.setting("embedding_dim").unwrap_or(Value::Unknown),
            call.device.clone(),
            call.range,
        )),
        Forward::EmbeddingBag => embedding_bag_layer(meta, &call),
        Forward::Flatten | Forward::Unflatten | Forward::Upsample | Forward::PixelShuffle(_) => {
            Ok(reshaping_layer(meta, &call, family))
        }
        Forward::Pad(mode) => Ok(pad_layer(meta, &call, mode)),
        Forward::Rnn => Ok(rnn(
            meta,
            layer,
            x,
            &args.pos,
            call.device.clone(),
            call.range,
        )),
        Forward::RnnCell => rnn_cell_layer(meta, &call),
        Forward::MultiheadAttention => mha(meta, layer, &args, call.device.clone()),
        Forward::TransformerStack => transformer_stack_layer(meta, &call),
        Forward::Transformer => transformer_layer(meta, &call),
        // A loss layer, like a functional one, calls its function with the
        // settings it was built with (`weight`, `ignore_index`, `margin`,
        // `reduction`, ...), which take part in the function's checks.
        Forward::Loss(function) | Forward::Functional(function) => {
            let mut kw = args.kw.clone();
            for name in def.into_iter().flat_map(|d| d.setting_names()) {
                if let Some(v) = layer.setting(name) {
                    kw.push((Rc::from(name), v.clone()));
                }
            }
            Ok(functional(
                meta,
                function,
                Args::new(args.pos.clone(), kw),
                call.range,
            ))
        }
        Forward::Einops(function) => einops_layer(meta, &call, function),
        Forward::Sequential | Forward::None => {
            crate::rules::no_rule_warning(meta, call.range, &format!("nn.{}", layer.kind));
            Ok(Value::Unknown)
        }
    }
}

/// One call of a built-in layer on a tensor, after the checks all layers take.
pub(super) struct LayerCall<'a> {
    pub(super) layer: &'a Rc<Layer>,
    /// The spatial dims its class works on (`LayerDef::spatial`).
    pub(super) spatial: usize,
    pub(super) x: &'a Rc<Tensor>,
    pub(super) input: &'a Value,
    /// What the layer was called with, the input first.
    pub(super) args: &'a Args,
    pub(super) device: Option<Device>,
    pub(super) range: TextRange,
}

impl LayerCall<'_> {
    /// A constructor argument of the layer, as given.
    pub(super) fn setting(&self, name: &str) -> Option<Value> {
        self.layer.setting(name).cloned()
    }
}

/// `Sequential`: the children in order. Layers made in a loop of unknown
/// length run any number of times: the result is known only when a run
/// keeps the input's shape.
fn sequential(meta: &mut dyn Meta, layer: &Rc<Layer>, input: Value, range: TextRange) -> Value {
    let mut v = input.clone();
    for child in layer.children.borrow().clone() {
        v = meta.call_value(&child, vec![v], Vec::new(), range);
    }
    if !layer.unknown_children.get() {
        return v;
    }
    match (&input, &v) {
        (Value::Tensor(x), Value::Tensor(y)) if same_shape(meta, x, y) && x.dtype == y.dtype => v,
        _ => Value::Unknown,
    }
}

/// The fake-mode and device checks of a layer's call: its parameters take
/// part (a layer whose weight the analysis does not build stands in with a
/// tensor on the layer's device). The device the result is on.
fn check_layer_inputs(
    meta: &mut dyn Meta,
    (layer, def): (&Rc<Layer>, Option<&LayerDef>),
    args: &[Value],
    range: TextRange,
) -> Option<Option<Device>> {
    let weight = layer_param(meta, layer, "weight");
    let mut with_weight = args.to_vec();
    let checks_device = match def {
        Some(def) => def.checks_device,
        // A loss has no parameters (a class `weight=` is an argument): it
        // runs wherever its inputs are.
        None => !layer.kind.ends_with("Loss"),
    };
    if let Value::Tensor(_) = weight {
        // aten.embedding takes the weight first, and torch names the first
        // device it meets first.
        if def.is_some_and(|d| d.forward == Forward::Embedding) {
            with_weight.insert(0, weight.clone());
        } else {
            with_weight.push(weight.clone());
        }
    } else if layer.device.borrow().is_some() && checks_device {
        let t = meta.new_tensor(
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
    check_inputs(
        meta,
        &Args::new(with_weight, Vec::new()),
        &layer.kind,
        range,
    )
}

/// What the eager kernel raises when the input's dtype is not its weights'
/// (integer inputs, a uint8 image or token ids, meet the weights' float in
/// the kernel just as a double input does).
fn weight_dtype_message(layer: &Layer, family: Forward, xd: DType, wd: DType) -> Option<String> {
    if xd == wd {
        return None;
    }
    let dtype = crate::rules::dtype::torch_name;
    let cpp = crate::rules::dtype::cpp_name;
    let biased = || !matches!(layer.setting("bias"), Some(Value::Bool(Some(false))));
    let flag = |name: &str| matches!(layer.setting(name), Some(Value::Bool(Some(true))));
    // addmm (a biased Linear, a floating Bilinear) names the two matrices.
    let addmm = match family {
        Forward::Linear => biased(),
        Forward::Bilinear => xd.is_floating(),
        _ => false,
    };
    if addmm {
        return Some(crate::rules::dtype::addmm_dtype_message(xd, wd));
    }
    match family {
        Forward::Linear => Some(crate::rules::dtype::mm_dtype_message(xd, wd)),
        Forward::Conv if biased() => Some(format!(
            "Input type ({}) and bias type ({}) should be the same",
            cpp(xd),
            cpp(wd)
        )),
        // Without a bias, a bool input reaches the CPU kernel, which has
        // no bool version.
        Forward::Conv if xd == DType::Bool && !layer.kind.starts_with("ConvTranspose") => {
            let kernel = match layer.def().map(|d| d.spatial) {
                Some(3) => "compute_columns3d",
                _ => "slow_conv2d_cpu",
            };
            Some(format!("\"{kernel}\" not implemented for 'Bool'"))
        }
        Forward::Conv => Some(format!(
            "expected scalar type {} but found {}",
            dtype(xd),
            dtype(wd)
        )),
        _ if !xd.is_floating() => None,
        Forward::Rnn => Some(format!(
            "RNN input dtype (torch.{}) does not match weight dtype (torch.{}). Convert input: input.to(torch.{}), or convert model: model.to(torch.{})",
            xd.name(),
            wd.name(),
            wd.name(),
            xd.name()
        )),
        Forward::LayerNorm
            if !matches!(
                layer.setting("elementwise_affine"),
                Some(Value::Bool(Some(false)))
            ) =>
        {
            norm_dtype_message(xd, wd)
        }
        Forward::BatchNorm | Forward::GroupNorm => norm_dtype_message(xd, wd),
        Forward::SameShape if layer.kind.starts_with("InstanceNorm") && flag("affine") => {
            norm_dtype_message(xd, wd)
        }
        _ => None,
    }
}

fn linear_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> Value {
    let name = callee_text(meta.text(&call.range));
    linear(
        meta,
        call.x,
        &call.setting("in_features").unwrap_or(Value::Unknown),
        &call.setting("out_features").unwrap_or(Value::Unknown),
        LinearCall {
            biased: !matches!(call.setting("bias"), Some(Value::Bool(Some(false)))),
            layer_name: name,
        },
        call.device.clone(),
        call.range,
    )
}

/// `LazyLinear` and `Bilinear`: the input with its last size replaced by
/// `out_features`.
pub(super) fn last_size_from(meta: &mut dyn Meta, call: &LayerCall<'_>, family: Forward) -> Value {
    let x = call.x;
    let Some(mut out) = meta.dims(x) else {
        return Value::Unknown;
    };
    if let Some(last) = out.last_mut() {
        let size = call.setting("out_features").unwrap_or(Value::Unknown);
        *last = meta.size_dims(&[size])[0].clone();
    }
    let name = if family == Forward::Bilinear {
        "nn.Bilinear"
    } else {
        "nn.LazyLinear"
    };
    out_known(meta, x, out, x.dtype, call.device.clone(), name)
}

fn conv_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> RuleResult {
    let layer = call.layer;
    let n = call.spatial;
    let transposed = layer.kind.starts_with("ConvTranspose");
    let mut setting = |name: &str| named_setting(meta, layer.setting(name));
    let conv = ConvSpec {
        n,
        in_channels: call.setting("in_channels"),
        out_channels: call.setting("out_channels"),
        kernel: spatial(setting("kernel_size").as_ref(), n),
        stride: spatial_or(setting("stride").as_ref(), n, 1),
        padding: setting("padding"),
        output_padding: if transposed {
            spatial_or(setting("output_padding").as_ref(), n, 0)
        } else {
            vec![Dim::konst(0); n]
        },
        groups: call.setting("groups").unwrap_or(Value::int(1)),
        dilation: spatial_or(setting("dilation").as_ref(), n, 1),
        transposed,
    };
    let out = conv_forward(meta, call.x, &conv, call.device.clone(), call.range);
    let output_size = call.args.get(1, "output_size");
    // torch prints the sizes as the code gave them, list or tuple.
    let tuple = matches!(output_size, Some(Value::Tuple(_)));
    match output_size.and_then(|v| v.items()) {
        Some(sizes) if transposed && sizes.len() >= n => {
            conv_transpose_output_size(meta, call.x, &conv, out, (&sizes[sizes.len() - n..], tuple))
        }
        _ => Ok(out),
    }
}

fn pool_layer(meta: &mut dyn Meta, call: &LayerCall<'_>, is_max: bool) -> Value {
    let layer = call.layer;
    let n = call.spatial;
    // Average pools have no dilation to ask for.
    let names: &[&str] = if is_max {
        &["kernel_size", "stride", "padding", "dilation"]
    } else {
        &["kernel_size", "stride", "padding"]
    };
    let settings: Vec<(&str, Option<Value>)> = names
        .iter()
        .map(|k| (*k, named_setting(meta, layer.setting(k))))
        .collect();
    let (kernel, stride, padding, dilation) = pool_settings(n, is_max, |_, k| {
        settings
            .iter()
            .find(|(name, _)| *name == k)
            .and_then(|(_, v)| v.as_ref())
    });
    let flag = |name: &str| matches!(layer.setting(name), Some(Value::Bool(Some(true))));
    let out = pool(
        meta,
        call.x,
        n,
        is_max,
        &kernel,
        &stride,
        &padding,
        &dilation,
        flag("ceil_mode"),
        call.device.clone(),
        call.range,
    );
    if is_max && flag("return_indices") && matches!(out, Value::Tensor(_)) {
        return with_indices(out);
    }
    out
}

fn adaptive_pool_layer(meta: &mut dyn Meta, call: &LayerCall<'_>, is_max: bool) -> Value {
    let n = call.spatial;
    let out = adaptive_pool(
        meta,
        call.x,
        (n, !is_max),
        call.setting("output_size").as_ref(),
        call.device.clone(),
        call.range,
    );
    if is_max
        && matches!(
            call.setting("return_indices"),
            Some(Value::Bool(Some(true)))
        )
    {
        return with_indices(out);
    }
    out
}

fn batch_norm_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> RuleResult {
    let (layer, x) = (call.layer, call.x);
    let kind = &*layer.kind;
    let Some(dims) = meta.dims(x) else {
        return Ok(out_shape(
            meta,
            x,
            x.shape.clone(),
            x.dtype,
            call.device.clone(),
            kind,
        ));
    };
    // `SyncBatchNorm` and the lazy ones take any rank.
    let expected: &[usize] = match (kind.starts_with("BatchNorm"), call.spatial) {
        (true, 1) => &[2, 3],
        (true, 2) => &[4],
        (true, 3) => &[5],
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
        return raise(Code::LayerInput, message);
    }
    let features = layer.declared_setting("num_features").cloned();
    if let (Some(c), Some(nf)) = (dims.get(1), features.and_then(|v| meta.as_dim(&v))) {
        if let Some(message) = super::norm::per_channel_error(meta, "running_mean", c, &nf) {
            return raise(Code::LayerInput, message);
        }
        let _ = meta.require_equal(c, &nf);
    }
    // A layer that keeps no running statistics normalises with the
    // batch's own in eval mode too.
    let no_running_stats = matches!(
        call.setting("track_running_stats"),
        Some(Value::Bool(Some(false)))
    );
    if (layer.training.get() == Some(true) || no_running_stats)
        && let Some(message) = single_value_per_channel(meta, &dims)
    {
        return raise(Code::LayerInput, message);
    }
    Ok(out_known(meta, x, dims, x.dtype, call.device.clone(), kind))
}

fn group_norm_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> RuleResult {
    let x = call.x;
    let kind = &*call.layer.kind;
    let Some(dims) = meta.dims(x) else {
        return Ok(out_shape(
            meta,
            x,
            x.shape.clone(),
            x.dtype,
            call.device.clone(),
            kind,
        ));
    };
    let channels = call.setting("num_channels");
    if let (Some(c), Some(nc)) = (dims.get(1), channels.and_then(|v| meta.as_dim(&v))) {
        if meta.env().known_different(c, &nc) {
            let message = format!(
                "Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape [{}] and input of shape {}",
                meta.fmt_dim(&nc),
                meta.fmt_dims(&dims)
            );
            return raise(Code::LayerInput, message);
        }
        let _ = meta.require_equal(c, &nc);
    }
    Ok(out_known(meta, x, dims, x.dtype, call.device.clone(), kind))
}

fn embedding_bag_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> RuleResult {
    let x = call.x;
    let Some(dims) = meta.dims(x) else {
        return Ok(Value::Unknown);
    };
    // `F.embedding_bag` reads a 2-D input as bags of one length, and a 1-D
    // one as bags that `offsets` start, one bag per offset (the last offset
    // ends the last bag with `include_last_offset`).
    let offsets = match call.args.get(1, "offsets") {
        None | Some(Value::None) => None,
        Some(v) => Some(v.clone()),
    };
    let b = match (dims.len(), &offsets) {
        (2, None) => dims[0].clone(),
        (2, Some(offsets)) => {
            let kind = match offsets {
                Value::Tensor(_) => "<class 'torch.Tensor'>",
                _ => return Ok(Value::Unknown),
            };
            return raise(
                Code::LayerInput,
                format!(
                    "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type {kind}"
                ),
            );
        }
        (1, None) => {
            return raise(
                Code::LayerInput,
                "offsets has to be a 1D Tensor but got None".to_string(),
            );
        }
        (1, Some(Value::Tensor(offsets))) => match meta.dims(offsets) {
            Some(od) if od.len() != 1 => {
                return raise(
                    Code::LayerInput,
                    "offsets has to be a 1D Tensor".to_string(),
                );
            }
            Some(od)
                if matches!(
                    call.setting("include_last_offset"),
                    Some(Value::Bool(Some(true)))
                ) =>
            {
                od[0].sub(&Dim::konst(1))
            }
            Some(od) => od[0].clone(),
            None => meta.env_mut().anonymous(),
        },
        (1, Some(_)) => meta.env_mut().anonymous(),
        (rank, _) => {
            return raise(
                Code::LayerInput,
                format!("input has to be 1D or 2D Tensor, but got Tensor of dimension {rank}"),
            );
        }
    };
    let width = call.setting("embedding_dim").unwrap_or(Value::Unknown);
    let d = meta.size_dims(&[width])[0].clone();
    Ok(out_known(
        meta,
        x,
        vec![b, d],
        Some(DType::Float32),
        call.device.clone(),
        "nn.EmbeddingBag",
    ))
}

/// Layers that are a reshaping op with the layer's settings: `Flatten`,
/// `Unflatten`, `Upsample`, `PixelShuffle`, `PixelUnshuffle`.
fn reshaping_layer(meta: &mut dyn Meta, call: &LayerCall<'_>, family: Forward) -> Value {
    let input = call.input.clone();
    let range = call.range;
    let a = |name: &str| call.setting(name);
    match family {
        Forward::Flatten => {
            let s = a("start_dim").unwrap_or(Value::int(1));
            let e = a("end_dim").unwrap_or(Value::int(-1));
            op(
                meta,
                "flatten",
                Args::new(vec![input, s, e], Vec::new()),
                range,
            )
        }
        Forward::Unflatten => {
            let d = a("dim").unwrap_or(Value::Unknown);
            let s = a("unflattened_size").unwrap_or(Value::Unknown);
            op(
                meta,
                "unflatten",
                Args::new(vec![input, d, s], Vec::new()),
                range,
            )
        }
        Forward::Upsample => {
            let mut kw: Kwargs = Vec::new();
            for name in ["size", "scale_factor", "mode"] {
                if let Some(v) = call.layer.declared_setting(name) {
                    kw.push((Rc::from(name), v.clone()));
                }
            }
            // `UpsamplingBilinear2d` is `interpolate` in bilinear mode
            // (which wants a 4-d input); `UpsamplingNearest2d` takes the
            // default, nearest.
            if &*call.layer.kind == "UpsamplingBilinear2d" {
                kw.push((Rc::from("mode"), Value::Str(Rc::from("bilinear"))));
                kw.push((Rc::from("align_corners"), Value::Bool(Some(true))));
            }
            functional(meta, "interpolate", Args::new(vec![input], kw), range)
        }
        Forward::PixelShuffle(function) => {
            let factor = if function == "pixel_shuffle" {
                "upscale_factor"
            } else {
                "downscale_factor"
            };
            let r = a(factor).unwrap_or(Value::Unknown);
            functional(meta, function, Args::new(vec![input, r], Vec::new()), range)
        }
        _ => Value::Unknown,
    }
}

/// The pads (`ZeroPad2d`, `ReflectionPad1d`, ...): `F.pad` with the mode of
/// the family and the padding for each side of each spatial dim.
fn pad_layer(meta: &mut dyn Meta, call: &LayerCall<'_>, mode: &'static str) -> Value {
    let n = call.spatial;
    let pad = match call.setting("padding") {
        Some(Value::Int(d)) => Value::tuple(vec![Value::Int(d); 2 * n]),
        Some(v) => v,
        None => Value::Unknown,
    };
    functional(
        meta,
        "pad",
        Args::new(
            vec![call.input.clone(), pad],
            vec![(Rc::from("mode"), Value::Str(Rc::from(mode)))],
        ),
        call.range,
    )
}

/// einops' `Rearrange` and `Reduce` layers: the function with the layer's
/// pattern and axis sizes.
fn einops_layer(meta: &mut dyn Meta, call: &LayerCall<'_>, function: &str) -> RuleResult {
    let layer = call.layer;
    let pattern = call.setting("pattern").unwrap_or(Value::Unknown);
    let mut kw: Kwargs = layer
        .kwargs
        .iter()
        .filter(|(k, _)| &**k != "pattern" && &**k != "reduction")
        .cloned()
        .collect();
    if function == "reduce" {
        kw.push((
            Rc::from("reduction"),
            call.setting("reduction").unwrap_or(Value::Unknown),
        ));
    }
    Ok(crate::rules::einops::call_layer(
        meta,
        function,
        Args::new(vec![call.input.clone(), pattern], kw),
        call.range,
    ))
}

/// Whether two tensors are known to have one shape.
fn same_shape(meta: &mut dyn Meta, x: &Tensor, y: &Tensor) -> bool {
    let (sx, sy) = (meta.resolve_shape(&x.shape), meta.resolve_shape(&y.shape));
    match (sx.dims(), sy.dims()) {
        (Some(a), Some(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| meta.env().known_equal(p, q))
        }
        _ => sx == sy,
    }
}

/// What batch norm in training mode raises when each channel has one value
/// (`F.batch_norm`'s `_verify_batch_size`: the batch times the spatial sizes).
pub(super) fn single_value_per_channel(meta: &dyn Meta, dims: &[Dim]) -> Option<String> {
    let values = dims
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, d)| d.as_const())
        .try_fold(1i64, |acc, d| d.map(|d| acc.saturating_mul(d)))?;
    (values == 1 && dims.len() >= 2).then(|| {
        format!(
            "Expected more than 1 value per channel when training, got input size torch.Size({})",
            meta.fmt_dims(dims)
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
