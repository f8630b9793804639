//! The layer registry's parameter shapes: what each layer family's constructor makes, as torch's `__init__` and `reset_parameters` do.
//!
//! A family whose tensors the analysis builds (`self.fc.weight`) lists
//! them one by one as `ParamDef`s, so that reading one attribute sizes
//! only that one. The other families have a function that lists their
//! parameters with their sizes, for counting: torch names some after the
//! settings (`weight_ih_l1_reverse`), and a Transformer repeats its
//! layer's. The entries of `layer_table.rs` point here.

use shapels_shapes::Dim;

use crate::rules::meta::Meta;
use crate::value::{DType, Layer, Value};

use super::registry::{ParamDef, ParamSizes, Parameters};
use super::spatial::spatial;

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

/// A setting as given, unknown when not.
fn setting(layer: &Layer, name: &str) -> Value {
    layer.setting(name).cloned().unwrap_or(Value::Unknown)
}

/// A size times a constant; unknown unless the size is an int or symbol.
fn times(size: &Value, n: i64) -> Value {
    match size {
        Value::Int(d) => Value::Int(d.mul(&Dim::konst(n))),
        _ => Value::Unknown,
    }
}

/// Sizes shaped as `normalized_shape` (an int or a tuple of them).
fn normalized_shape(layer: &Layer) -> Vec<Value> {
    let shape = setting(layer, "normalized_shape");
    shape.items().unwrap_or_else(|| vec![shape])
}

/// The kernel sizes of a convolution over its `n` spatial dims; a kernel
/// size the analysis cannot read is still `n` sizes.
fn kernel(layer: &Layer, n: usize) -> Vec<Value> {
    let kernel = spatial(layer.setting("kernel_size"), n);
    if kernel.len() == n {
        kernel.into_iter().map(Value::Int).collect()
    } else {
        (0..n).map(|_| Value::Unknown).collect()
    }
}

/// A parameter every layer of its family holds.
fn always(_: &Layer) -> Option<bool> {
    Some(true)
}

/// A bias that `bias=False` leaves out.
fn bias_flag(layer: &Layer) -> Option<bool> {
    flag(layer, "bias", true)
}

/// A parameter the layer holds when built with `affine=True` (the default).
fn affine(layer: &Layer) -> Option<bool> {
    flag(layer, "affine", true)
}

/// A layer norm's weight, left out by `elementwise_affine=False`.
fn elementwise_affine(layer: &Layer) -> Option<bool> {
    flag(layer, "elementwise_affine", true)
}

/// A layer norm's bias, which needs both `elementwise_affine` and `bias`.
fn layer_norm_bias(layer: &Layer) -> Option<bool> {
    match (elementwise_affine(layer), bias_flag(layer)) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

impl ParamDef {
    /// A parameter of the layer's dtype.
    const fn param(
        name: &'static str,
        held: fn(&Layer) -> Option<bool>,
        sizes: fn(&mut dyn Meta, &Layer) -> Vec<Value>,
    ) -> ParamDef {
        ParamDef {
            name,
            held,
            sizes,
            buffer: false,
            dtype: None,
        }
    }

    /// A buffer every layer of the family holds.
    const fn buffer(
        name: &'static str,
        sizes: fn(&mut dyn Meta, &Layer) -> Vec<Value>,
        dtype: Option<DType>,
    ) -> ParamDef {
        ParamDef {
            name,
            held: always,
            sizes,
            buffer: true,
            dtype,
        }
    }
}

/// `nn.Linear`: `weight[out_features, in_features]`, `bias[out_features]`.
pub(super) static LINEAR: &[ParamDef] = &[
    ParamDef::param("weight", always, |_, l| {
        vec![setting(l, "out_features"), setting(l, "in_features")]
    }),
    ParamDef::param("bias", bias_flag, |_, l| vec![setting(l, "out_features")]),
];

/// `nn.Embedding`: `weight[num_embeddings, embedding_dim]`.
pub(super) static EMBEDDING: &[ParamDef] = &[ParamDef::param("weight", always, |_, l| {
    vec![setting(l, "num_embeddings"), setting(l, "embedding_dim")]
})];

/// `nn.Conv{1,2,3}d`: `weight[out_channels, in_channels / groups, *kernel]`,
/// `bias[out_channels]`.
pub(super) static CONV: &[ParamDef] = &[
    ParamDef::param("weight", always, conv_weight),
    ParamDef::param("bias", bias_flag, |_, l| vec![setting(l, "out_channels")]),
];

/// A convolution's weight. The channels per group are a size computed
/// from two settings, so a size named after the code becomes its symbol
/// first.
fn conv_weight(meta: &mut dyn Meta, layer: &Layer) -> Vec<Value> {
    let n = layer.def().map_or(0, |d| d.spatial);
    let groups = layer.setting("groups").cloned().unwrap_or(Value::int(1));
    let per_group = match (
        meta.as_dim(&setting(layer, "in_channels")),
        meta.as_dim(&groups),
    ) {
        (Some(c), Some(g)) => c.floordiv(&g).map(Value::Int).unwrap_or(Value::Unknown),
        _ => Value::Unknown,
    };
    let mut sizes = vec![setting(layer, "out_channels"), per_group];
    sizes.extend(kernel(layer, n));
    sizes
}

/// `nn.BatchNorm{1,2,3}d`: `weight` and `bias` when affine, and the
/// running statistics, all `[num_features]`, with the int64 count of
/// batches seen.
pub(super) static BATCH_NORM: &[ParamDef] = &[
    ParamDef::param("weight", affine, |_, l| vec![setting(l, "num_features")]),
    ParamDef::param("bias", affine, |_, l| vec![setting(l, "num_features")]),
    ParamDef::buffer(
        "running_mean",
        |_, l| vec![setting(l, "num_features")],
        None,
    ),
    ParamDef::buffer("running_var", |_, l| vec![setting(l, "num_features")], None),
    ParamDef::buffer("num_batches_tracked", |_, _| Vec::new(), Some(DType::Int64)),
];

/// `nn.LayerNorm`: `weight` and `bias` shaped as `normalized_shape`.
pub(super) static LAYER_NORM: &[ParamDef] = &[
    ParamDef::param("weight", elementwise_affine, |_, l| normalized_shape(l)),
    ParamDef::param("bias", layer_norm_bias, |_, l| normalized_shape(l)),
];

/// A `CountParameters` function's list as it grows: a parameter the
/// layer holds is listed with its sizes, one it may hold with unknown
/// sizes, one it does not hold not at all.
#[derive(Default)]
struct Listed(Vec<ParamSizes>);

impl Listed {
    fn push(&mut self, name: impl Into<String>, held: Option<bool>, sizes: Vec<Value>) {
        let sizes = match held {
            Some(true) => Some(sizes),
            Some(false) => return,
            None => None,
        };
        self.0.push(ParamSizes {
            name: name.into(),
            sizes,
        });
    }

    /// A parameter every layer of the family holds.
    fn always(&mut self, name: impl Into<String>, sizes: Vec<Value>) {
        self.push(name, Some(true), sizes);
    }
}

/// `nn.Bilinear`: `weight[out, in1, in2]`, `bias[out]`.
pub(super) fn bilinear(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let out = setting(layer, "out_features");
    let mut list = Listed::default();
    list.always(
        "weight",
        vec![
            out.clone(),
            setting(layer, "in1_features"),
            setting(layer, "in2_features"),
        ],
    );
    list.push("bias", bias_flag(layer), vec![out]);
    Some(list.0)
}

/// `nn.ConvTranspose{1,2,3}d`: `weight[in_channels, out_channels / groups,
/// *kernel]`, `bias[out_channels]`.
pub(super) fn conv_transpose(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let n = layer.def().map_or(0, |d| d.spatial);
    let groups = layer.setting("groups").cloned().unwrap_or(Value::int(1));
    let per_group = match (setting(layer, "out_channels"), groups) {
        (Value::Int(c), Value::Int(g)) => c.floordiv(&g).map(Value::Int).unwrap_or(Value::Unknown),
        _ => Value::Unknown,
    };
    let mut weight = vec![setting(layer, "in_channels"), per_group];
    weight.extend(kernel(layer, n));
    let mut list = Listed::default();
    list.always("weight", weight);
    list.push(
        "bias",
        bias_flag(layer),
        vec![setting(layer, "out_channels")],
    );
    Some(list.0)
}

/// `nn.EmbeddingBag`: `weight[num_embeddings, embedding_dim]`.
pub(super) fn embedding_bag(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let mut list = Listed::default();
    list.always(
        "weight",
        vec![
            setting(layer, "num_embeddings"),
            setting(layer, "embedding_dim"),
        ],
    );
    Some(list.0)
}

/// `nn.GroupNorm`: `weight` and `bias` of `[num_channels]` when affine.
pub(super) fn group_norm(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let channels = setting(layer, "num_channels");
    let mut list = Listed::default();
    list.push("weight", affine(layer), vec![channels.clone()]);
    list.push("bias", affine(layer), vec![channels]);
    Some(list.0)
}

/// `nn.InstanceNorm{1,2,3}d`: `weight` and `bias` of `[num_features]`
/// when built with `affine=True` (not the default).
pub(super) fn instance_norm(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let affine = flag(layer, "affine", false);
    let features = setting(layer, "num_features");
    let mut list = Listed::default();
    list.push("weight", affine, vec![features.clone()]);
    list.push("bias", affine, vec![features]);
    Some(list.0)
}

/// `nn.RMSNorm`: a `weight` shaped as `normalized_shape`, no bias.
pub(super) fn rms_norm(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let mut list = Listed::default();
    list.push("weight", elementwise_affine(layer), normalized_shape(layer));
    Some(list.0)
}

/// `nn.PReLU`: one slope per parameter, `weight[num_parameters]`.
pub(super) fn prelu(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let count = layer
        .setting("num_parameters")
        .cloned()
        .unwrap_or(Value::int(1));
    let mut list = Listed::default();
    list.always("weight", vec![count]);
    Some(list.0)
}

/// The gates of a recurrent layer: its weights stack one block of rows
/// per gate.
fn gates(kind: &str) -> i64 {
    match kind {
        "LSTM" | "LSTMCell" => 4,
        "GRU" | "GRUCell" => 3,
        _ => 1,
    }
}

/// `nn.LSTM`, `nn.GRU` and `nn.RNN`: per layer and direction,
/// `weight_ih`, `weight_hh` and (unless `bias=False`) the two biases. A
/// projection (`proj_size`) or a layer count the analysis cannot read
/// leaves the list unknown.
pub(super) fn recurrent(layer: &Layer) -> Option<Vec<ParamSizes>> {
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
    let bias = bias_flag(layer);
    let hidden = setting(layer, "hidden_size");
    let rows = times(&hidden, gates(&layer.kind));
    let mut list = Listed::default();
    for l in 0..layers.clamp(0, 64) {
        let input = if l == 0 {
            setting(layer, "input_size")
        } else {
            times(&hidden, directions)
        };
        for d in 0..directions {
            let suffix = if d == 0 {
                format!("l{l}")
            } else {
                format!("l{l}_reverse")
            };
            list.always(
                format!("weight_ih_{suffix}"),
                vec![rows.clone(), input.clone()],
            );
            list.always(
                format!("weight_hh_{suffix}"),
                vec![rows.clone(), hidden.clone()],
            );
            list.push(format!("bias_ih_{suffix}"), bias, vec![rows.clone()]);
            list.push(format!("bias_hh_{suffix}"), bias, vec![rows.clone()]);
        }
    }
    Some(list.0)
}

/// `nn.LSTMCell`, `nn.GRUCell` and `nn.RNNCell`: one layer's weights and
/// biases, unsuffixed.
pub(super) fn recurrent_cell(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let hidden = setting(layer, "hidden_size");
    let rows = times(&hidden, gates(&layer.kind));
    let bias = bias_flag(layer);
    let mut list = Listed::default();
    list.always(
        "weight_ih",
        vec![rows.clone(), setting(layer, "input_size")],
    );
    list.always("weight_hh", vec![rows.clone(), hidden]);
    list.push("bias_ih", bias, vec![rows.clone()]);
    list.push("bias_hh", bias, vec![rows]);
    Some(list.0)
}

/// `nn.MultiheadAttention`: its input projections, the optional key and
/// value biases, and `out_proj`.
pub(super) fn multihead_attention(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let mut list = Listed::default();
    attention(layer, "", &mut list)?;
    Some(list.0)
}

/// The parameters of an attention (`nn.MultiheadAttention`, or a
/// transformer layer's, whose settings are the layer's), each name after
/// `prefix`.
fn attention(layer: &Layer, prefix: &str, list: &mut Listed) -> Option<()> {
    let standalone = &*layer.kind == "MultiheadAttention";
    let e = setting(layer, if standalone { "embed_dim" } else { "d_model" });
    // Keys and values of another width get projections of their own
    // (`q_proj_weight`, `k_proj_weight`, `v_proj_weight`); of the same
    // width, one `in_proj_weight` as large as the three.
    let width = |n: &str| match layer.setting(n) {
        None | Some(Value::None) => e.clone(),
        Some(v) => v.clone(),
    };
    let (kdim, vdim) = if standalone {
        (width("kdim"), width("vdim"))
    } else {
        (e.clone(), e.clone())
    };
    let bias = bias_flag(layer);
    list.always(format!("{prefix}q_proj_weight"), vec![e.clone(), e.clone()]);
    list.always(format!("{prefix}k_proj_weight"), vec![e.clone(), kdim]);
    list.always(format!("{prefix}v_proj_weight"), vec![e.clone(), vdim]);
    list.push(format!("{prefix}in_proj_bias"), bias, vec![times(&e, 3)]);
    if standalone && flag(layer, "add_bias_kv", false)? {
        let one = Value::int(1);
        list.always("bias_k", vec![one.clone(), one.clone(), e.clone()]);
        list.always("bias_v", vec![one.clone(), one, e.clone()]);
    }
    list.always(
        format!("{prefix}out_proj.weight"),
        vec![e.clone(), e.clone()],
    );
    list.push(format!("{prefix}out_proj.bias"), bias, vec![e]);
    Some(())
}

/// `nn.TransformerEncoderLayer` and `nn.TransformerDecoderLayer`: the
/// attentions (a decoder's second attends to the memory), the two linear
/// layers of the feed-forward block, and a layer norm after each block.
pub(super) fn transformer_layer(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let decoder = &*layer.kind == "TransformerDecoderLayer";
    let mut list = Listed::default();
    attention(layer, "self_attn.", &mut list)?;
    if decoder {
        attention(layer, "multihead_attn.", &mut list)?;
    }
    let d = setting(layer, "d_model");
    let ff = layer
        .setting("dim_feedforward")
        .cloned()
        .unwrap_or(Value::int(2048));
    let bias = bias_flag(layer);
    list.always("linear1.weight", vec![ff.clone(), d.clone()]);
    list.push("linear1.bias", bias, vec![ff.clone()]);
    list.always("linear2.weight", vec![d.clone(), ff]);
    list.push("linear2.bias", bias, vec![d.clone()]);
    let norms: &[&str] = if decoder {
        &["norm1", "norm2", "norm3"]
    } else {
        &["norm1", "norm2"]
    };
    for norm in norms {
        list.always(format!("{norm}.weight"), vec![d.clone()]);
        list.push(format!("{norm}.bias"), bias, vec![d.clone()]);
    }
    Some(list.0)
}

/// `nn.TransformerEncoder` and `nn.TransformerDecoder`: `num_layers`
/// copies of the layer they were given, and the optional final norm.
pub(super) fn transformer_stack(layer: &Layer) -> Option<Vec<ParamSizes>> {
    let given = if &*layer.kind == "TransformerEncoder" {
        "encoder_layer"
    } else {
        "decoder_layer"
    };
    let Some(Value::Layer(inner)) = layer.setting(given) else {
        return None;
    };
    let copies = match layer.setting("num_layers") {
        Some(Value::Int(d)) => d.as_const()?,
        _ => return None,
    };
    let mut list = copies_of(inner, copies, "")?;
    match layer.setting("norm") {
        None | Some(Value::None) => {}
        Some(Value::Layer(norm)) if &*norm.kind == "LayerNorm" => {
            list.extend(layer_norm_sizes(norm, "norm.")?);
        }
        Some(_) => return None,
    }
    Some(list)
}

/// `copies` times the parameters of a stacked layer, named as torch's
/// `layers` list names them after `prefix`. The layer is one whose
/// parameters are counted: one whose tensors the analysis builds is no
/// layer a Transformer stacks.
fn copies_of(inner: &Layer, copies: i64, prefix: &str) -> Option<Vec<ParamSizes>> {
    let Some(Parameters::Counted(count)) = inner.def().map(|d| d.parameters) else {
        return None;
    };
    let one = count(inner)?;
    let mut list = Vec::new();
    for i in 0..copies.clamp(0, 256) {
        list.extend(one.iter().map(|p| ParamSizes {
            name: format!("{prefix}layers.{i}.{}", p.name),
            sizes: p.sizes.clone(),
        }));
    }
    Some(list)
}

/// A `LayerNorm`'s parameters, each name after `prefix`, from the same
/// entries its own tensors are built from; `None` when the analysis
/// cannot tell which it holds.
fn layer_norm_sizes(norm: &Layer, prefix: &str) -> Option<Vec<ParamSizes>> {
    let mut list = Vec::new();
    for def in LAYER_NORM {
        if (def.held)(norm)? {
            list.push(ParamSizes {
                name: format!("{prefix}{}", def.name),
                sizes: Some(normalized_shape(norm)),
            });
        }
    }
    Some(list)
}

/// `nn.Transformer`: its encoder and decoder stacks, each with its final
/// norm, made as torch's constructor makes them from its settings.
pub(super) fn transformer(layer: &Layer) -> Option<Vec<ParamSizes>> {
    // Unset, each takes the default of torch's signature.
    let setting = |n: &str| layer.setting_or_default(n).unwrap_or(Value::Unknown);
    if ["custom_encoder", "custom_decoder"]
        .iter()
        .any(|n| !matches!(layer.setting(n), None | Some(Value::None)))
    {
        return None;
    }
    let bias = (std::rc::Rc::from("bias"), setting("bias"));
    let d = setting("d_model");
    let made = |kind: &str, kwargs: Vec<(std::rc::Rc<str>, Value)>| Layer {
        kind: std::rc::Rc::from(kind),
        args: vec![d.clone()],
        kwargs,
        ..layer.clone()
    };
    let norm = made("LayerNorm", vec![bias.clone()]);
    let mut list = Vec::new();
    for (kind, count, stack) in [
        (
            "TransformerEncoderLayer",
            setting("num_encoder_layers"),
            "encoder.",
        ),
        (
            "TransformerDecoderLayer",
            setting("num_decoder_layers"),
            "decoder.",
        ),
    ] {
        let Value::Int(count) = count else {
            return None;
        };
        let feed_forward = (
            std::rc::Rc::from("dim_feedforward"),
            setting("dim_feedforward"),
        );
        let stacked = made(kind, vec![feed_forward, bias.clone()]);
        list.extend(copies_of(&stacked, count.as_const()?, stack)?);
        list.extend(layer_norm_sizes(&norm, &format!("{stack}norm."))?);
    }
    Some(list)
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use rustc_hash::FxHashMap;

    use super::*;
    use crate::mutation::Shared;
    use crate::value::Provenance;

    use super::super::registry::LAYERS;

    /// A layer of this class built with these keyword arguments.
    fn layer(kind: &str, kwargs: &[(&str, Value)]) -> Layer {
        Layer {
            kind: Rc::from(kind),
            args: Vec::new(),
            kwargs: kwargs
                .iter()
                .map(|(k, v)| (Rc::from(*k), v.clone()))
                .collect(),
            device: Shared::new(None),
            dtype: Shared::new(None),
            origin: Provenance::Real,
            mode: 0,
            children: Shared::new(Vec::new()),
            keys: Shared::new(Vec::new()),
            unknown_children: Shared::new(false),
            training: Shared::new(Some(true)),
            params: Shared::new(FxHashMap::default()),
            written: None,
        }
    }

    fn names(list: &[ParamSizes]) -> Vec<&str> {
        list.iter().map(|p| p.name.as_str()).collect()
    }

    #[test]
    fn every_layer_with_a_weight_sizes_it() {
        for def in LAYERS {
            // Listing a layer built with no arguments also shows that each
            // function reads only settings its classes have (`setting`
            // asserts it).
            let listed: Vec<&str> = match def.parameters {
                Parameters::Built(defs) => defs.iter().map(|d| d.name).collect(),
                Parameters::Counted(count) => match count(&layer(def.name, &[])) {
                    Some(list) => list.into_iter().map(|p| p.name).map(leak).collect(),
                    // A stack needs the layer it stacks.
                    None => continue,
                },
                Parameters::None | Parameters::Unsized => Vec::new(),
            };
            if def.has_weight {
                assert!(listed.contains(&"weight"), "{} sizes no weight", def.name);
            }
            let mut unique = listed.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(
                unique.len(),
                listed.len(),
                "{} lists a name twice",
                def.name
            );
        }
    }

    /// A name kept for the rest of the test run, so that both kinds of
    /// entry give `&str`s.
    fn leak(name: String) -> &'static str {
        Box::leak(name.into_boxed_str())
    }

    #[test]
    fn recurrent_layers_list_torchs_names() {
        let lstm = layer(
            "LSTM",
            &[
                ("input_size", Value::int(8)),
                ("hidden_size", Value::int(16)),
                ("num_layers", Value::int(2)),
                ("bidirectional", Value::Bool(Some(true))),
            ],
        );
        let list = recurrent(&lstm).unwrap();
        assert_eq!(
            names(&list[..8]),
            [
                "weight_ih_l0",
                "weight_hh_l0",
                "bias_ih_l0",
                "bias_hh_l0",
                "weight_ih_l0_reverse",
                "weight_hh_l0_reverse",
                "bias_ih_l0_reverse",
                "bias_hh_l0_reverse",
            ]
        );
        assert_eq!(list.len(), 16);
        // The second layer reads both directions of the first: `[4 * 16, 2 * 16]`.
        let sizes: Vec<Option<i64>> = list[8]
            .sizes
            .as_ref()
            .unwrap()
            .iter()
            .map(|v| match v {
                Value::Int(d) => d.as_const(),
                _ => None,
            })
            .collect();
        assert_eq!(sizes, [Some(64), Some(32)]);
        let unbiased = layer("GRUCell", &[("bias", Value::Bool(Some(false)))]);
        assert_eq!(
            names(&recurrent_cell(&unbiased).unwrap()),
            ["weight_ih", "weight_hh"]
        );
    }

    #[test]
    fn an_unreadable_flag_leaves_the_parameter_unsized() {
        let norm = layer("GroupNorm", &[("affine", Value::Unknown)]);
        let list = group_norm(&norm).unwrap();
        assert_eq!(names(&list), ["weight", "bias"]);
        assert!(list.iter().all(|p| p.sizes.is_none()));
        // A stack's final norm must be known to count the stack.
        let stack = layer(
            "TransformerEncoder",
            &[
                (
                    "encoder_layer",
                    Value::Layer(Rc::new(layer(
                        "TransformerEncoderLayer",
                        &[("d_model", Value::int(8)), ("nhead", Value::int(2))],
                    ))),
                ),
                ("num_layers", Value::int(2)),
                (
                    "norm",
                    Value::Layer(Rc::new(layer(
                        "LayerNorm",
                        &[("elementwise_affine", Value::Unknown)],
                    ))),
                ),
            ],
        );
        assert!(transformer_stack(&stack).is_none());
    }
}
