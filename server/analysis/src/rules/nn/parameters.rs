//! The parameters of built-in layers: their shapes, `parameters()`, and moving them with `to`.

use std::rc::Rc;

use crate::rules::meta::Meta;
use shapels_shapes::Dim;

use crate::value::{DType, Layer, Shape, Tensor, Value};

use super::is_container;
use super::spatial::spatial;

/// The weight or bias of a layer, as a tensor on the layer's device.
pub(crate) fn layer_param(meta: &mut dyn Meta, layer: &Rc<Layer>, name: &str) -> Value {
    if let Some(v) = layer.params.borrow().get(name) {
        return v.clone();
    }
    let a = |n: &str| layer.setting(n).cloned().unwrap_or(Value::Unknown);
    let dims: Option<Vec<Value>> = match (&*layer.kind, name) {
        ("Linear", "weight") => Some(vec![a("out_features"), a("in_features")]),
        ("Linear", "bias") => Some(vec![a("out_features")]),
        ("Embedding", "weight") => Some(vec![a("num_embeddings"), a("embedding_dim")]),
        ("LayerNorm", _) => a("normalized_shape")
            .items()
            .or(Some(vec![a("normalized_shape")])),
        ("BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d", "num_batches_tracked") => Some(Vec::new()),
        ("BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d", _) => Some(vec![a("num_features")]),
        ("Conv1d" | "Conv2d" | "Conv3d", "bias") => Some(vec![a("out_channels")]),
        ("Conv1d" | "Conv2d" | "Conv3d", "weight") => {
            let n = layer.def().map_or(0, |d| d.spatial) as u8;
            let groups = layer.setting("groups").cloned().unwrap_or(Value::int(1));
            let cin = match (meta.as_dim(&a("in_channels")), meta.as_dim(&groups)) {
                (Some(c), Some(g)) => c.floordiv(&g).map(Value::Int).unwrap_or(Value::Unknown),
                _ => Value::Unknown,
            };
            let mut d = vec![a("out_channels"), cin];
            let kernel = spatial(layer.setting("kernel_size"), n as usize);
            // A kernel size the analysis cannot read is still `n` sizes.
            if kernel.len() == n as usize {
                d.extend(kernel.into_iter().map(Value::Int));
            } else {
                d.extend((0..n).map(|_| Value::Unknown));
            }
            Some(d)
        }
        _ => None,
    };
    let Some(dims) = dims else {
        return Value::Unknown;
    };
    let dims = meta.size_dims(&dims);
    let t = Tensor {
        shape: Shape::known(dims),
        dtype: if name == "num_batches_tracked" {
            Some(DType::Int64)
        } else {
            *layer.dtype.borrow()
        },
        device: layer.device.borrow().clone(),
        origin: layer.origin,
        mode: layer.mode,
        op: Rc::from(format!("nn.{}.{name}", layer.kind)),
        made_at: None,
        is_param: true,
        layout: None,
        trail: None,
    };
    let v = Value::Tensor(Rc::new(t));
    // A parameter is built on its first use, the same whenever that is: a
    // cache of what any read would make, not a change a memo must hear of.
    layer
        .params
        .write_unobserved()
        .insert(Rc::from(name), v.clone());
    v
}

/// The first parameter torch's `parameters()` yields: the module's own
/// parameters first, then its children's, in the order they were assigned.
pub(crate) fn first_parameter(meta: &mut dyn Meta, module: &Value, depth: usize) -> Option<Value> {
    if depth > 16 {
        return None;
    }
    match module {
        Value::Instance(inst) => {
            let order = inst.order.borrow().clone();
            let attrs: Vec<Value> = order
                .iter()
                .filter_map(|k| inst.attrs.borrow().get(k).cloned())
                .collect();
            if let Some(p) = attrs
                .iter()
                .find(|v| matches!(v, Value::Tensor(t) if t.is_param))
            {
                return Some(p.clone());
            }
            attrs
                .iter()
                .filter(|v| matches!(v, Value::Layer(_) | Value::Instance(_)))
                .find_map(|v| first_parameter(meta, v, depth + 1))
        }
        Value::Layer(layer) if is_container(&layer.kind) => {
            let children = layer.children.borrow().clone();
            children
                .iter()
                .find_map(|c| first_parameter(meta, c, depth + 1))
        }
        Value::Layer(layer) => match layer_param(meta, layer, "weight") {
            Value::Tensor(t) => Some(Value::Tensor(t)),
            _ => None,
        },
        _ => None,
    }
}

/// One parameter of a built-in layer, in `named_parameters()` order.
pub(crate) struct LayerParameter {
    /// Its sizes; `None` when the analysis cannot say whether the layer
    /// has it (a `bias=` flag it cannot read).
    pub dims: Option<Vec<Dim>>,
    /// The tensor `layer.weight` gives, for layers that have one: the same
    /// object wherever the parameter is shared or frozen.
    pub tensor: Option<Rc<Tensor>>,
}

/// A boolean setting of a layer: `Some(default)` when not given, `None`
/// when given as something the analysis cannot read.
fn flag(layer: &Layer, name: &str, default: bool) -> Option<bool> {
    match layer.setting(name) {
        None => Some(default),
        Some(Value::Bool(b)) => *b,
        Some(Value::Int(d)) => d.as_const().map(|n| n != 0),
        Some(Value::None) => Some(false),
        Some(_) => None,
    }
}

/// The parameters a built-in layer (not a container) holds, in torch's
/// order, with the shapes its constructor gives them; `None` for a layer
/// whose parameters the rule table does not know.
pub(crate) fn layer_parameters(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
) -> Option<Vec<LayerParameter>> {
    let kind = layer.kind.clone();
    let mut out: Vec<LayerParameter> = Vec::new();
    // A parameter the layer rules build (`layer.weight`): its shape comes
    // from there, and it is the object code reads and ties.
    let mut from_rule = |meta: &mut dyn Meta, name: &str, present: Option<bool>| match present {
        Some(false) => {}
        None => out.push(LayerParameter {
            dims: None,
            tensor: None,
        }),
        Some(true) => {
            let tensor = match layer_param(meta, layer, name) {
                Value::Tensor(t) => Some(t),
                _ => None,
            };
            out.push(LayerParameter {
                dims: tensor
                    .as_ref()
                    .and_then(|t| meta.resolve_shape(&t.shape).dims().map(<[Dim]>::to_vec)),
                tensor,
            });
        }
    };
    match &*kind {
        k if layer.def().is_some_and(|d| d.stateless) || k.ends_with("Loss") => {}
        "Linear" => {
            from_rule(meta, "weight", Some(true));
            from_rule(meta, "bias", flag(layer, "bias", true));
        }
        "Conv1d" | "Conv2d" | "Conv3d" => {
            from_rule(meta, "weight", Some(true));
            from_rule(meta, "bias", flag(layer, "bias", true));
        }
        "Embedding" => from_rule(meta, "weight", Some(true)),
        "LayerNorm" => {
            let affine = flag(layer, "elementwise_affine", true);
            from_rule(meta, "weight", affine);
            let bias = match (affine, flag(layer, "bias", true)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            from_rule(meta, "bias", bias);
        }
        "BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d" => {
            let affine = flag(layer, "affine", true);
            from_rule(meta, "weight", affine);
            from_rule(meta, "bias", affine);
        }
        _ => {
            // Sizes named after the code (`config.n_embd`) are symbols here.
            let mut named = |v: &Value| match v {
                Value::Opaque(name) => Value::Int(meta.opaque_symbol(name)),
                other => other.clone(),
            };
            let resolved = Layer {
                args: layer.args.iter().map(&mut named).collect(),
                kwargs: layer
                    .kwargs
                    .iter()
                    .map(|(k, v)| (k.clone(), named(v)))
                    .collect(),
                ..(**layer).clone()
            };
            let a = |n: &str| resolved.setting(n).cloned().unwrap_or(Value::Unknown);
            let shapes = other_parameter_shapes(&resolved, &kind, &a)?;
            // The names say which parameter each is; the count needs only
            // the sizes.
            for (_name, dims) in shapes {
                let dims = dims.map(|d| meta.size_dims(&d));
                out.push(LayerParameter { dims, tensor: None });
            }
        }
    }
    Some(out)
}

/// Sizes as values: what `size_dims` reads.
type Sizes = Option<Vec<Value>>;

/// The parameters of layers whose `weight` the layer rules do not build:
/// by name, with their sizes as values (`None`: unknown).
fn other_parameter_shapes(
    layer: &Layer,
    kind: &str,
    a: &dyn Fn(&str) -> Value,
) -> Option<Vec<(String, Sizes)>> {
    let mul = |x: &Value, n: i64| match x {
        Value::Int(d) => Value::Int(d.mul(&Dim::konst(n))),
        _ => Value::Unknown,
    };
    let when = |present: Option<bool>, sizes: Vec<Value>| -> Option<Sizes> {
        match present {
            Some(true) => Some(Some(sizes)),
            Some(false) => None,
            None => Some(None),
        }
    };
    let mut out: Vec<(String, Sizes)> = Vec::new();
    let mut push = |name: &str, sizes: Option<Sizes>| {
        if let Some(sizes) = sizes {
            out.push((name.to_string(), sizes));
        }
    };
    match kind {
        "Bilinear" => {
            push(
                "weight",
                Some(Some(vec![
                    a("out_features"),
                    a("in1_features"),
                    a("in2_features"),
                ])),
            );
            push(
                "bias",
                when(flag(layer, "bias", true), vec![a("out_features")]),
            );
        }
        "ConvTranspose1d" | "ConvTranspose2d" | "ConvTranspose3d" => {
            let n = layer.def().map_or(0, |d| d.spatial);
            let groups = layer.setting("groups").cloned().unwrap_or(Value::int(1));
            let cout = match (a("out_channels"), groups) {
                (Value::Int(c), Value::Int(g)) => {
                    c.floordiv(&g).map(Value::Int).unwrap_or(Value::Unknown)
                }
                _ => Value::Unknown,
            };
            let mut weight = vec![a("in_channels"), cout];
            let kernel = spatial(layer.setting("kernel_size"), n);
            if kernel.len() == n {
                weight.extend(kernel.into_iter().map(Value::Int));
            } else {
                weight.extend((0..n).map(|_| Value::Unknown));
            }
            push("weight", Some(Some(weight)));
            push(
                "bias",
                when(flag(layer, "bias", true), vec![a("out_channels")]),
            );
        }
        "EmbeddingBag" => push(
            "weight",
            Some(Some(vec![a("num_embeddings"), a("embedding_dim")])),
        ),
        "GroupNorm" => {
            let affine = flag(layer, "affine", true);
            push("weight", when(affine, vec![a("num_channels")]));
            push("bias", when(affine, vec![a("num_channels")]));
        }
        "InstanceNorm1d" | "InstanceNorm2d" | "InstanceNorm3d" => {
            let affine = flag(layer, "affine", false);
            push("weight", when(affine, vec![a("num_features")]));
            push("bias", when(affine, vec![a("num_features")]));
        }
        "RMSNorm" => {
            let shape = a("normalized_shape");
            let dims = shape.items().unwrap_or_else(|| vec![shape]);
            push(
                "weight",
                when(flag(layer, "elementwise_affine", true), dims),
            );
        }
        "PReLU" => push(
            "weight",
            Some(Some(vec![
                layer
                    .setting("num_parameters")
                    .cloned()
                    .unwrap_or(Value::int(1)),
            ])),
        ),
        "LSTM" | "GRU" | "RNN" => {
            let gates = match kind {
                "LSTM" => 4,
                "GRU" => 3,
                _ => 1,
            };
            let proj = layer.declared_setting("proj_size").cloned();
            if !matches!(proj, None | Some(Value::Int(_)))
                || matches!(&proj, Some(Value::Int(d)) if d.as_const() != Some(0))
            {
                return None;
            }
            let layers = match layer
                .setting("num_layers")
                .cloned()
                .unwrap_or(Value::int(1))
            {
                Value::Int(d) => d.as_const()?,
                _ => return None,
            };
            let directions = match flag(layer, "bidirectional", false)? {
                true => 2,
                false => 1,
            };
            let bias = flag(layer, "bias", true);
            let hidden = a("hidden_size");
            let rows = mul(&hidden, gates);
            for l in 0..layers.clamp(0, 64) {
                let input = if l == 0 {
                    a("input_size")
                } else {
                    mul(&hidden, directions)
                };
                for d in 0..directions {
                    let suffix = if d == 0 {
                        format!("l{l}")
                    } else {
                        format!("l{l}_reverse")
                    };
                    push(
                        &format!("weight_ih_{suffix}"),
                        Some(Some(vec![rows.clone(), input.clone()])),
                    );
                    push(
                        &format!("weight_hh_{suffix}"),
                        Some(Some(vec![rows.clone(), hidden.clone()])),
                    );
                    push(&format!("bias_ih_{suffix}"), when(bias, vec![rows.clone()]));
                    push(&format!("bias_hh_{suffix}"), when(bias, vec![rows.clone()]));
                }
            }
        }
        "LSTMCell" | "GRUCell" | "RNNCell" => {
            let gates = match kind {
                "LSTMCell" => 4,
                "GRUCell" => 3,
                _ => 1,
            };
            let rows = mul(&a("hidden_size"), gates);
            let bias = flag(layer, "bias", true);
            push("weight_ih", Some(Some(vec![rows.clone(), a("input_size")])));
            push(
                "weight_hh",
                Some(Some(vec![rows.clone(), a("hidden_size")])),
            );
            push("bias_ih", when(bias, vec![rows.clone()]));
            push("bias_hh", when(bias, vec![rows]));
        }
        // A stack of copies of its layer, and an optional final norm.
        "TransformerEncoder" | "TransformerDecoder" => {
            let Some(Value::Layer(inner)) = layer.setting(if kind == "TransformerEncoder" {
                "encoder_layer"
            } else {
                "decoder_layer"
            }) else {
                return None;
            };
            let copies = match layer.setting("num_layers") {
                Some(Value::Int(d)) => d.as_const()?,
                _ => return None,
            };
            let one = other_parameter_shapes(inner, &inner.kind, &|n| {
                inner.setting(n).cloned().unwrap_or(Value::Unknown)
            })?;
            for _ in 0..copies.clamp(0, 256) {
                out.extend(one.iter().cloned());
            }
            match layer.setting("norm") {
                None | Some(Value::None) => {}
                Some(Value::Layer(norm)) if &*norm.kind == "LayerNorm" => {
                    out.extend(layer_norm_shapes(norm)?);
                }
                Some(_) => return None,
            }
        }
        // Its encoder and decoder stacks, each with its final norm.
        "Transformer" => {
            // Unset, each takes the default of torch's signature.
            let setting = |n: &str| layer.setting_or_default(n).unwrap_or(Value::Unknown);
            let bias = (std::rc::Rc::from("bias"), setting("bias"));
            if ["custom_encoder", "custom_decoder"]
                .iter()
                .any(|n| !matches!(layer.setting(n), None | Some(Value::None)))
            {
                return None;
            }
            let d = setting("d_model");
            let stack = |kind: &str| Layer {
                kind: std::rc::Rc::from(kind),
                args: vec![d.clone()],
                kwargs: vec![
                    (
                        std::rc::Rc::from("dim_feedforward"),
                        setting("dim_feedforward"),
                    ),
                    bias.clone(),
                ],
                ..layer.clone()
            };
            let norm = Layer {
                kind: std::rc::Rc::from("LayerNorm"),
                args: vec![d.clone()],
                kwargs: vec![bias.clone()],
                ..layer.clone()
            };
            for (kind, count) in [
                ("TransformerEncoderLayer", setting("num_encoder_layers")),
                ("TransformerDecoderLayer", setting("num_decoder_layers")),
            ] {
                let Value::Int(count) = count else {
                    return None;
                };
                let inner = stack(kind);
                let one = other_parameter_shapes(&inner, kind, &|n| {
                    inner.setting(n).cloned().unwrap_or(Value::Unknown)
                })?;
                for _ in 0..count.as_const()?.clamp(0, 256) {
                    out.extend(one.iter().cloned());
                }
                out.extend(layer_norm_shapes(&norm)?);
            }
        }
        "MultiheadAttention" => attention_parameters(layer, "", &mut push, &mul, &when)?,
        "TransformerEncoderLayer" | "TransformerDecoderLayer" => {
            attention_parameters(layer, "self_attn.", &mut push, &mul, &when)?;
            let decoder = kind == "TransformerDecoderLayer";
            if decoder {
                attention_parameters(layer, "multihead_attn.", &mut push, &mul, &when)?;
            }
            let d = a("d_model");
            let ff = layer
                .setting("dim_feedforward")
                .cloned()
                .unwrap_or(Value::int(2048));
            let bias = flag(layer, "bias", true);
            push("linear1.weight", Some(Some(vec![ff.clone(), d.clone()])));
            push("linear1.bias", when(bias, vec![ff.clone()]));
            push("linear2.weight", Some(Some(vec![d.clone(), ff])));
            push("linear2.bias", when(bias, vec![d.clone()]));
            for norm in if decoder {
                &["norm1", "norm2", "norm3"][..]
            } else {
                &["norm1", "norm2"][..]
            } {
                push(&format!("{norm}.weight"), Some(Some(vec![d.clone()])));
                push(&format!("{norm}.bias"), when(bias, vec![d.clone()]));
            }
        }
        _ => return None,
    }
    Some(out)
}

/// A `LayerNorm`'s parameters by name, from its settings.
fn layer_norm_shapes(norm: &Layer) -> Option<Vec<(String, Sizes)>> {
    let shape = norm
        .setting("normalized_shape")
        .cloned()
        .unwrap_or(Value::Unknown);
    let dims = shape.items().unwrap_or_else(|| vec![shape]);
    let affine = flag(norm, "elementwise_affine", true)?;
    let bias = affine && flag(norm, "bias", true)?;
    let mut out = Vec::new();
    if affine {
        out.push(("weight".to_string(), Some(dims.clone())));
    }
    if bias {
        out.push(("bias".to_string(), Some(dims)));
    }
    Some(out)
}

/// `nn.MultiheadAttention`'s parameters (or those of a transformer layer's
/// attention, whose settings are the layer's), each name after `prefix`.
fn attention_parameters(
    layer: &Layer,
    prefix: &str,
    push: &mut dyn FnMut(&str, Option<Sizes>),
    mul: &dyn Fn(&Value, i64) -> Value,
    when: &dyn Fn(Option<bool>, Vec<Value>) -> Option<Sizes>,
) -> Option<()> {
    let attention = &*layer.kind == "MultiheadAttention";
    let e = layer
        .setting(if attention { "embed_dim" } else { "d_model" })
        .cloned()
        .unwrap_or(Value::Unknown);
    // Keys and values of another width get projections of their own
    // (`q_proj_weight`, `k_proj_weight`, `v_proj_weight`); of the same
    // width, one `in_proj_weight` as large as the three.
    let width = |n: &str| match layer.setting(n) {
        None | Some(Value::None) => e.clone(),
        Some(v) => v.clone(),
    };
    let (kdim, vdim) = if attention {
        (width("kdim"), width("vdim"))
    } else {
        (e.clone(), e.clone())
    };
    let bias = flag(layer, "bias", true);
    push(
        &format!("{prefix}q_proj_weight"),
        Some(Some(vec![e.clone(), e.clone()])),
    );
    push(
        &format!("{prefix}k_proj_weight"),
        Some(Some(vec![e.clone(), kdim])),
    );
    push(
        &format!("{prefix}v_proj_weight"),
        Some(Some(vec![e.clone(), vdim])),
    );
    push(
        &format!("{prefix}in_proj_bias"),
        when(bias, vec![mul(&e, 3)]),
    );
    if attention && flag(layer, "add_bias_kv", false)? {
        push(
            "bias_k",
            Some(Some(vec![Value::int(1), Value::int(1), e.clone()])),
        );
        push(
            "bias_v",
            Some(Some(vec![Value::int(1), Value::int(1), e.clone()])),
        );
    }
    push(
        &format!("{prefix}out_proj.weight"),
        Some(Some(vec![e.clone(), e.clone()])),
    );
    push(&format!("{prefix}out_proj.bias"), when(bias, vec![e]));
    Some(())
}
