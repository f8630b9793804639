//! The layer registry: one entry per built-in `torch.nn` layer class.
//!
//! As torch registers one meta function per op, each layer the analysis
//! knows is one `LayerDef` here: its constructor signature (so an argument
//! is bound by name or position once, never by an index written at the use),
//! whether it holds submodules, how many spatial dims it works on, which
//! checks its weights take part in, and its forward rule. Adding a layer is
//! one entry plus its fixture or golden line; no other list names layers.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use crate::value::Value;

/// What submodules a layer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// No submodules: `children()` is empty.
    Leaf,
    /// `Sequential`, `ModuleList`, `ModuleDict` and the parameter
    /// containers: its children are what it was given.
    Container,
    /// Submodules torch builds inside (`MultiheadAttention.out_proj`, a
    /// Transformer's layers) that the analysis does not list one by one.
    Composite,
}

/// The forward rule of a layer family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Forward {
    /// Keeps the input's shape (activations, dropout, instance norm).
    SameShape,
    /// Softmax along the layer's `dim`.
    Softmax,
    Linear,
    LazyLinear,
    Bilinear,
    Conv,
    /// `MaxPool*` (true) or `AvgPool*` (false).
    Pool {
        max: bool,
    },
    /// `AdaptiveMaxPool*` (true) or `AdaptiveAvgPool*` (false).
    AdaptivePool {
        max: bool,
    },
    BatchNorm,
    LayerNorm,
    RmsNorm,
    GroupNorm,
    Embedding,
    EmbeddingBag,
    Flatten,
    Unflatten,
    Upsample,
    /// `F.pixel_shuffle` or `F.pixel_unshuffle`, by that name.
    PixelShuffle(&'static str),
    /// `F.pad` with this mode.
    Pad(&'static str),
    Rnn,
    RnnCell,
    MultiheadAttention,
    /// A Transformer encoder or decoder layer, or a stack of them.
    TransformerStack,
    Transformer,
    /// The functional loss of this name (`cross_entropy`).
    Loss(&'static str),
    /// einops' `rearrange` or `reduce` layer, by that function's name.
    Einops(&'static str),
    /// The children in order.
    Sequential,
    /// No forward rule: the result is unknown.
    None,
}

/// What the analysis knows of one built-in layer class.
#[derive(Debug)]
pub(crate) struct LayerDef {
    /// The class name under `torch.nn` (`Conv2d`).
    pub name: &'static str,
    /// The constructor's parameters in torch's order, as its signature
    /// writes them: `"bias=True"` has a default; after `"*"` a parameter is
    /// keyword-only. A leading `~` marks a parameter torch keeps in another
    /// form than it was given (`ZeroPad2d(1).padding` is `(1, 1, 1, 1)`), so
    /// the attribute of that name is not the argument.
    pub params: &'static [&'static str],
    pub role: Role,
    /// The spatial dims it works on (`Conv2d`: 2), 0 for none.
    pub spatial: usize,
    /// Its weight takes part in the device checks (a loss or an activation
    /// runs wherever its inputs are).
    pub checks_device: bool,
    /// It holds a `weight` the user may move or read (`self.fc.weight`).
    pub has_weight: bool,
    /// It holds no parameters at all.
    pub stateless: bool,
    /// An input of unknown rank takes the batched rank this layer needs
    /// (`[N, C, H, W]` for a `Conv2d`).
    pub batched_input: bool,
    pub forward: Forward,
}

impl LayerDef {
    /// The entry of a class name, if the analysis knows the class.
    pub(crate) fn of(name: &str) -> Option<&'static LayerDef> {
        static INDEX: OnceLock<FxHashMap<&'static str, &'static LayerDef>> = OnceLock::new();
        INDEX
            .get_or_init(|| LAYERS.iter().map(|d| (d.name, d)).collect())
            .get(name)
            .copied()
    }

    /// Where a parameter may be passed positionally; `None` for a
    /// keyword-only parameter or one the signature does not have.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        for (i, p) in self.params.iter().enumerate() {
            if *p == "*" {
                return None;
            }
            if param_name(p) == name {
                return Some(i);
            }
        }
        None
    }

    /// Whether `layer.<name>` is the constructor argument of that name, as
    /// given or defaulted: torch's leaf layers keep their settings as
    /// attributes, but not `device`, `dtype`, nor what it converts.
    pub(crate) fn keeps_setting(&self, name: &str) -> bool {
        self.role == Role::Leaf
            && !matches!(name, "device" | "dtype")
            && self
                .params
                .iter()
                .any(|p| !p.starts_with('~') && param_name(p) == name)
    }

    /// Whether the signature has this parameter.
    pub(crate) fn has_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| param_name(p) == name)
    }

    /// The default the signature gives a parameter, as a value; `None`
    /// for a required parameter, one the signature does not have, or a
    /// default written as something other than a literal (`relu`).
    pub(crate) fn default(&self, name: &str) -> Option<Value> {
        let spec = self.params.iter().find(|p| param_name(p) == name)?;
        let (_, text) = spec.split_once('=')?;
        literal(text)
    }
}

/// The name of a parameter as the signature writes it (`bias` of `bias=True`).
fn param_name(spec: &str) -> &str {
    let spec = spec.trim_start_matches('~');
    spec.split_once('=').map_or(spec, |(name, _)| name)
}

/// A default's literal as a value (`1`, `0.5`, `True`, `None`, `'zeros'`).
fn literal(text: &str) -> Option<Value> {
    Some(match text {
        "None" => Value::None,
        "True" => Value::Bool(Some(true)),
        "False" => Value::Bool(Some(false)),
        _ if text.starts_with('\'') && text.ends_with('\'') && text.len() >= 2 => {
            Value::Str(text[1..text.len() - 1].into())
        }
        _ => match text.parse::<i64>() {
            Ok(n) => Value::int(n),
            Err(_) => Value::Float(Some(text.parse::<f64>().ok()?)),
        },
    })
}

/// An entry with the settings most layers share: a leaf with weights
/// whose device counts, no spatial dims, no rank demand.
const fn layer(name: &'static str, params: &'static [&'static str], forward: Forward) -> LayerDef {
    LayerDef {
        name,
        params,
        role: Role::Leaf,
        spatial: 0,
        checks_device: true,
        has_weight: false,
        stateless: false,
        batched_input: false,
        forward,
    }
}

/// A layer with a `weight` (and usually a `bias`).
const fn weighted(
    name: &'static str,
    params: &'static [&'static str],
    forward: Forward,
) -> LayerDef {
    LayerDef {
        has_weight: true,
        ..layer(name, params, forward)
    }
}

/// A layer without parameters that keeps its input's shape and runs where
/// its input is.
const fn pointwise(name: &'static str, params: &'static [&'static str]) -> LayerDef {
    LayerDef {
        checks_device: false,
        stateless: true,
        ..layer(name, params, Forward::SameShape)
    }
}

/// A parameterless layer with a forward of its own (pools, pads, reshapes).
const fn stateless(
    name: &'static str,
    params: &'static [&'static str],
    forward: Forward,
) -> LayerDef {
    LayerDef {
        stateless: true,
        ..layer(name, params, forward)
    }
}

/// A loss: no parameters of its own (a class `weight=` is an argument), runs
/// where its inputs are.
const fn loss(
    name: &'static str,
    params: &'static [&'static str],
    function: &'static str,
) -> LayerDef {
    LayerDef {
        checks_device: false,
        stateless: true,
        ..layer(name, params, Forward::Loss(function))
    }
}

/// A layer over `n` spatial dims.
const fn spatial(n: usize, def: LayerDef) -> LayerDef {
    LayerDef { spatial: n, ..def }
}

/// A layer over `n` spatial dims whose input of unknown rank is batched.
const fn batched(n: usize, def: LayerDef) -> LayerDef {
    LayerDef {
        spatial: n,
        batched_input: true,
        ..def
    }
}

/// Instance norm keeps its input's shape and runs where it is, but holds
/// a weight and a bias when `affine=True`.
const fn instance_norm(name: &'static str) -> LayerDef {
    LayerDef {
        stateless: false,
        ..pointwise(name, INSTANCE_NORM)
    }
}

const fn container(
    name: &'static str,
    params: &'static [&'static str],
    forward: Forward,
) -> LayerDef {
    LayerDef {
        role: Role::Container,
        ..layer(name, params, forward)
    }
}

const fn composite(def: LayerDef) -> LayerDef {
    LayerDef {
        role: Role::Composite,
        ..def
    }
}

const CONV: &[&str] = &[
    "in_channels",
    "out_channels",
    "kernel_size",
    "stride=1",
    "padding=0",
    "dilation=1",
    "groups=1",
    "bias=True",
    "padding_mode='zeros'",
    "device=None",
    "dtype=None",
];
const CONV_TRANSPOSE: &[&str] = &[
    "in_channels",
    "out_channels",
    "kernel_size",
    "stride=1",
    "padding=0",
    "output_padding=0",
    "groups=1",
    "bias=True",
    "dilation=1",
    "padding_mode='zeros'",
    "device=None",
    "dtype=None",
];
const MAX_POOL: &[&str] = &[
    "kernel_size",
    "~stride=None",
    "padding=0",
    "dilation=1",
    "return_indices=False",
    "ceil_mode=False",
];
const AVG_POOL_1D: &[&str] = &[
    "~kernel_size",
    "~stride=None",
    "~padding=0",
    "ceil_mode=False",
    "count_include_pad=True",
];
const AVG_POOL: &[&str] = &[
    "kernel_size",
    "~stride=None",
    "padding=0",
    "ceil_mode=False",
    "count_include_pad=True",
    "divisor_override=None",
];
const ADAPTIVE_AVG_POOL: &[&str] = &["output_size"];
const ADAPTIVE_MAX_POOL: &[&str] = &["output_size", "return_indices=False"];
const BATCH_NORM: &[&str] = &[
    "num_features",
    "eps=1e-05",
    "momentum=0.1",
    "affine=True",
    "track_running_stats=True",
    "device=None",
    "dtype=None",
    "*",
    "bias=True",
];
const INSTANCE_NORM: &[&str] = &[
    "num_features",
    "eps=1e-05",
    "momentum=0.1",
    "affine=False",
    "track_running_stats=False",
    "device=None",
    "dtype=None",
    "*",
    "bias=True",
];
const DROPOUT: &[&str] = &["p=0.5", "inplace=False"];
const INPLACE: &[&str] = &["inplace=False"];
const SOFTMAX: &[&str] = &["dim=None"];
const PAD: &[&str] = &["~padding"];
const CONSTANT_PAD: &[&str] = &["~padding", "value"];
const RNN_CELL: &[&str] = &[
    "input_size",
    "hidden_size",
    "bias=True",
    "device=None",
    "dtype=None",
];
const REDUCTION: &[&str] = &["~size_average=None", "~reduce=None", "reduction='mean'"];
const TRANSFORMER_LAYER: &[&str] = &[
    "d_model",
    "nhead",
    "dim_feedforward=2048",
    "dropout=0.1",
    "activation=relu",
    "layer_norm_eps=1e-05",
    "batch_first=False",
    "norm_first=False",
    "bias=True",
    "device=None",
    "dtype=None",
];

/// Every layer class the analysis knows.
pub(crate) static LAYERS: &[LayerDef] = &[
    // Containers.
    container("Sequential", &[], Forward::Sequential),
    container("ModuleList", &["modules=None"], Forward::None),
    container("ModuleDict", &["modules=None"], Forward::None),
    container("ParameterList", &["values=None"], Forward::None),
    container("ParameterDict", &["parameters=None"], Forward::None),
    // Linear layers and embeddings.
    pointwise("Identity", &[]),
    weighted(
        "Linear",
        &[
            "in_features",
            "out_features",
            "bias=True",
            "device=None",
            "dtype=None",
        ],
        Forward::Linear,
    ),
    layer(
        "LazyLinear",
        &["out_features", "bias=True", "device=None", "dtype=None"],
        Forward::LazyLinear,
    ),
    weighted(
        "Bilinear",
        &[
            "in1_features",
            "in2_features",
            "out_features",
            "bias=True",
            "device=None",
            "dtype=None",
        ],
        Forward::Bilinear,
    ),
    weighted(
        "Embedding",
        &[
            "num_embeddings",
            "embedding_dim",
            "~padding_idx=None",
            "max_norm=None",
            "norm_type=2.0",
            "scale_grad_by_freq=False",
            "sparse=False",
            "~_weight=None",
            "~_freeze=False",
            "device=None",
            "dtype=None",
        ],
        Forward::Embedding,
    ),
    layer(
        "EmbeddingBag",
        &[
            "num_embeddings",
            "embedding_dim",
            "max_norm=None",
            "norm_type=2.0",
            "scale_grad_by_freq=False",
            "mode='mean'",
            "sparse=False",
            "~_weight=None",
            "include_last_offset=False",
            "~padding_idx=None",
            "device=None",
            "dtype=None",
        ],
        Forward::EmbeddingBag,
    ),
    // Convolutions.
    batched(1, weighted("Conv1d", CONV, Forward::Conv)),
    batched(2, weighted("Conv2d", CONV, Forward::Conv)),
    batched(3, weighted("Conv3d", CONV, Forward::Conv)),
    batched(
        1,
        weighted("ConvTranspose1d", CONV_TRANSPOSE, Forward::Conv),
    ),
    batched(
        2,
        weighted("ConvTranspose2d", CONV_TRANSPOSE, Forward::Conv),
    ),
    batched(
        3,
        weighted("ConvTranspose3d", CONV_TRANSPOSE, Forward::Conv),
    ),
    // Pools.
    batched(
        1,
        stateless("MaxPool1d", MAX_POOL, Forward::Pool { max: true }),
    ),
    batched(
        2,
        stateless("MaxPool2d", MAX_POOL, Forward::Pool { max: true }),
    ),
    batched(
        3,
        stateless("MaxPool3d", MAX_POOL, Forward::Pool { max: true }),
    ),
    batched(
        1,
        stateless("AvgPool1d", AVG_POOL_1D, Forward::Pool { max: false }),
    ),
    batched(
        2,
        stateless("AvgPool2d", AVG_POOL, Forward::Pool { max: false }),
    ),
    batched(
        3,
        stateless("AvgPool3d", AVG_POOL, Forward::Pool { max: false }),
    ),
    spatial(
        1,
        stateless(
            "AdaptiveAvgPool1d",
            ADAPTIVE_AVG_POOL,
            Forward::AdaptivePool { max: false },
        ),
    ),
    batched(
        2,
        stateless(
            "AdaptiveAvgPool2d",
            ADAPTIVE_AVG_POOL,
            Forward::AdaptivePool { max: false },
        ),
    ),
    spatial(
        3,
        stateless(
            "AdaptiveAvgPool3d",
            ADAPTIVE_AVG_POOL,
            Forward::AdaptivePool { max: false },
        ),
    ),
    spatial(
        1,
        stateless(
            "AdaptiveMaxPool1d",
            ADAPTIVE_MAX_POOL,
            Forward::AdaptivePool { max: true },
        ),
    ),
    batched(
        2,
        stateless(
            "AdaptiveMaxPool2d",
            ADAPTIVE_MAX_POOL,
            Forward::AdaptivePool { max: true },
        ),
    ),
    spatial(
        3,
        stateless(
            "AdaptiveMaxPool3d",
            ADAPTIVE_MAX_POOL,
            Forward::AdaptivePool { max: true },
        ),
    ),
    // Normalisation.
    spatial(1, weighted("BatchNorm1d", BATCH_NORM, Forward::BatchNorm)),
    batched(2, weighted("BatchNorm2d", BATCH_NORM, Forward::BatchNorm)),
    batched(3, weighted("BatchNorm3d", BATCH_NORM, Forward::BatchNorm)),
    layer(
        "SyncBatchNorm",
        &[
            "num_features",
            "eps=1e-05",
            "momentum=0.1",
            "affine=True",
            "track_running_stats=True",
            "process_group=None",
            "device=None",
            "dtype=None",
            "*",
            "bias=True",
        ],
        Forward::BatchNorm,
    ),
    spatial(
        2,
        layer(
            "LazyBatchNorm2d",
            &[
                "eps=1e-05",
                "momentum=0.1",
                "affine=True",
                "track_running_stats=True",
                "device=None",
                "dtype=None",
                "*",
                "bias=True",
            ],
            Forward::BatchNorm,
        ),
    ),
    spatial(1, instance_norm("InstanceNorm1d")),
    batched(2, instance_norm("InstanceNorm2d")),
    spatial(3, instance_norm("InstanceNorm3d")),
    weighted(
        "LayerNorm",
        &[
            "normalized_shape",
            "eps=1e-05",
            "elementwise_affine=True",
            "bias=True",
            "device=None",
            "dtype=None",
        ],
        Forward::LayerNorm,
    ),
    layer(
        "RMSNorm",
        &[
            "normalized_shape",
            "eps=None",
            "elementwise_affine=True",
            "device=None",
            "dtype=None",
        ],
        Forward::RmsNorm,
    ),
    weighted(
        "GroupNorm",
        &[
            "num_groups",
            "num_channels",
            "eps=1e-05",
            "affine=True",
            "device=None",
            "dtype=None",
            "*",
            "bias=True",
        ],
        Forward::GroupNorm,
    ),
    pointwise(
        "LocalResponseNorm",
        &["size", "alpha=0.0001", "beta=0.75", "k=1.0"],
    ),
    spatial(
        2,
        pointwise(
            "CrossMapLRN2d",
            &["size", "alpha=0.0001", "beta=0.75", "k=1"],
        ),
    ),
    // Activations and dropout.
    pointwise("ReLU", INPLACE),
    pointwise("ReLU6", INPLACE),
    pointwise("GELU", &["approximate='none'"]),
    pointwise("SiLU", INPLACE),
    pointwise("Tanh", &[]),
    pointwise("Sigmoid", &[]),
    pointwise("LeakyReLU", &["negative_slope=0.01", "inplace=False"]),
    pointwise("ELU", &["alpha=1.0", "inplace=False"]),
    pointwise("SELU", INPLACE),
    pointwise("CELU", &["alpha=1.0", "inplace=False"]),
    pointwise("Mish", INPLACE),
    pointwise("Hardswish", INPLACE),
    pointwise("Hardsigmoid", INPLACE),
    pointwise(
        "Hardtanh",
        &[
            "min_val=-1.0",
            "max_val=1.0",
            "inplace=False",
            "~min_value=None",
            "~max_value=None",
        ],
    ),
    LayerDef {
        stateless: false,
        ..pointwise(
            "PReLU",
            &["num_parameters=1", "init=0.25", "device=None", "dtype=None"],
        )
    },
    pointwise("Softplus", &["beta=1.0", "threshold=20.0"]),
    pointwise("Softsign", &[]),
    pointwise("Tanhshrink", &[]),
    pointwise("Threshold", &["threshold", "value", "inplace=False"]),
    pointwise("LogSigmoid", &[]),
    pointwise("Hardshrink", &["lambd=0.5"]),
    pointwise("Softshrink", &["lambd=0.5"]),
    pointwise(
        "RReLU",
        &["lower=0.125", "upper=0.3333333333333333", "inplace=False"],
    ),
    LayerDef {
        forward: Forward::Softmax,
        ..pointwise("Softmax", SOFTMAX)
    },
    LayerDef {
        forward: Forward::Softmax,
        ..pointwise("LogSoftmax", SOFTMAX)
    },
    LayerDef {
        forward: Forward::Softmax,
        ..pointwise("Softmin", SOFTMAX)
    },
    pointwise("Softmax2d", &[]),
    pointwise("Dropout", DROPOUT),
    pointwise("Dropout1d", DROPOUT),
    pointwise("Dropout2d", DROPOUT),
    pointwise("Dropout3d", DROPOUT),
    pointwise("AlphaDropout", DROPOUT),
    pointwise("FeatureAlphaDropout", DROPOUT),
    // Reshapes, resizes and pads.
    stateless("Flatten", &["start_dim=1", "end_dim=-1"], Forward::Flatten),
    stateless(
        "Unflatten",
        &["dim", "unflattened_size"],
        Forward::Unflatten,
    ),
    stateless(
        "Upsample",
        &[
            "size=None",
            "~scale_factor=None",
            "mode='nearest'",
            "align_corners=None",
            "recompute_scale_factor=None",
        ],
        Forward::Upsample,
    ),
    spatial(
        2,
        stateless(
            "UpsamplingNearest2d",
            &["size=None", "scale_factor=None"],
            Forward::Upsample,
        ),
    ),
    spatial(
        2,
        stateless(
            "UpsamplingBilinear2d",
            &["size=None", "scale_factor=None"],
            Forward::Upsample,
        ),
    ),
    stateless(
        "PixelShuffle",
        &["upscale_factor"],
        Forward::PixelShuffle("pixel_shuffle"),
    ),
    stateless(
        "PixelUnshuffle",
        &["downscale_factor"],
        Forward::PixelShuffle("pixel_unshuffle"),
    ),
    spatial(1, stateless("ZeroPad1d", PAD, Forward::Pad("constant"))),
    spatial(2, stateless("ZeroPad2d", PAD, Forward::Pad("constant"))),
    spatial(3, stateless("ZeroPad3d", PAD, Forward::Pad("constant"))),
    spatial(
        1,
        stateless("ConstantPad1d", CONSTANT_PAD, Forward::Pad("constant")),
    ),
    spatial(
        2,
        stateless("ConstantPad2d", CONSTANT_PAD, Forward::Pad("constant")),
    ),
    spatial(
        3,
        stateless("ConstantPad3d", CONSTANT_PAD, Forward::Pad("constant")),
    ),
    spatial(
        1,
        stateless("ReflectionPad1d", PAD, Forward::Pad("reflect")),
    ),
    spatial(
        2,
        stateless("ReflectionPad2d", PAD, Forward::Pad("reflect")),
    ),
    spatial(
        3,
        stateless("ReflectionPad3d", PAD, Forward::Pad("reflect")),
    ),
    spatial(
        1,
        stateless("ReplicationPad1d", PAD, Forward::Pad("replicate")),
    ),
    spatial(
        2,
        stateless("ReplicationPad2d", PAD, Forward::Pad("replicate")),
    ),
    spatial(
        3,
        stateless("ReplicationPad3d", PAD, Forward::Pad("replicate")),
    ),
    spatial(1, stateless("CircularPad1d", PAD, Forward::Pad("circular"))),
    spatial(2, stateless("CircularPad2d", PAD, Forward::Pad("circular"))),
    spatial(3, stateless("CircularPad3d", PAD, Forward::Pad("circular"))),
    stateless("CosineSimilarity", &["dim=1", "eps=1e-08"], Forward::None),
    // Recurrent layers.
    layer(
        "LSTM",
        &[
            "input_size",
            "hidden_size",
            "num_layers=1",
            "bias=True",
            "batch_first=False",
            "~dropout=0.0",
            "bidirectional=False",
            "proj_size=0",
            "device=None",
            "dtype=None",
        ],
        Forward::Rnn,
    ),
    layer(
        "GRU",
        &[
            "input_size",
            "hidden_size",
            "num_layers=1",
            "bias=True",
            "batch_first=False",
            "~dropout=0.0",
            "bidirectional=False",
            "device=None",
            "dtype=None",
        ],
        Forward::Rnn,
    ),
    layer(
        "RNN",
        &[
            "input_size",
            "hidden_size",
            "num_layers=1",
            "nonlinearity='tanh'",
            "bias=True",
            "batch_first=False",
            "~dropout=0.0",
            "bidirectional=False",
            "device=None",
            "dtype=None",
        ],
        Forward::Rnn,
    ),
    layer("LSTMCell", RNN_CELL, Forward::RnnCell),
    layer("GRUCell", RNN_CELL, Forward::RnnCell),
    layer(
        "RNNCell",
        &[
            "input_size",
            "hidden_size",
            "bias=True",
            "nonlinearity='tanh'",
            "device=None",
            "dtype=None",
        ],
        Forward::RnnCell,
    ),
    // Attention and Transformers.
    composite(layer(
        "MultiheadAttention",
        &[
            "embed_dim",
            "num_heads",
            "dropout=0.0",
            "bias=True",
            "add_bias_kv=False",
            "add_zero_attn=False",
            "kdim=None",
            "vdim=None",
            "batch_first=False",
            "device=None",
            "dtype=None",
        ],
        Forward::MultiheadAttention,
    )),
    composite(layer(
        "TransformerEncoderLayer",
        TRANSFORMER_LAYER,
        Forward::TransformerStack,
    )),
    composite(layer(
        "TransformerDecoderLayer",
        TRANSFORMER_LAYER,
        Forward::TransformerStack,
    )),
    composite(layer(
        "TransformerEncoder",
        &[
            "encoder_layer",
            "num_layers",
            "norm=None",
            "enable_nested_tensor=True",
            "mask_check=True",
        ],
        Forward::TransformerStack,
    )),
    composite(layer(
        "TransformerDecoder",
        &["decoder_layer", "num_layers", "norm=None"],
        Forward::TransformerStack,
    )),
    composite(layer(
        "Transformer",
        &[
            "d_model=512",
            "nhead=8",
            "num_encoder_layers=6",
            "num_decoder_layers=6",
            "dim_feedforward=2048",
            "dropout=0.1",
            "activation=relu",
            "custom_encoder=None",
            "custom_decoder=None",
            "layer_norm_eps=1e-05",
            "batch_first=False",
            "norm_first=False",
            "bias=True",
            "device=None",
            "dtype=None",
        ],
        Forward::Transformer,
    )),
    // Losses.
    loss(
        "CrossEntropyLoss",
        &[
            "weight=None",
            "~size_average=None",
            "ignore_index=-100",
            "~reduce=None",
            "reduction='mean'",
            "label_smoothing=0.0",
        ],
        "cross_entropy",
    ),
    loss(
        "NLLLoss",
        &[
            "weight=None",
            "~size_average=None",
            "ignore_index=-100",
            "~reduce=None",
            "reduction='mean'",
        ],
        "nll_loss",
    ),
    loss("MSELoss", REDUCTION, "mse_loss"),
    loss("L1Loss", REDUCTION, "l1_loss"),
    loss(
        "BCELoss",
        &[
            "weight=None",
            "~size_average=None",
            "~reduce=None",
            "reduction='mean'",
        ],
        "binary_cross_entropy",
    ),
    loss(
        "BCEWithLogitsLoss",
        &[
            "weight=None",
            "~size_average=None",
            "~reduce=None",
            "reduction='mean'",
            "pos_weight=None",
        ],
        "binary_cross_entropy_with_logits",
    ),
    loss(
        "SmoothL1Loss",
        &[
            "~size_average=None",
            "~reduce=None",
            "reduction='mean'",
            "beta=1.0",
        ],
        "smooth_l1_loss",
    ),
    loss(
        "HuberLoss",
        &["reduction='mean'", "delta=1.0"],
        "huber_loss",
    ),
    loss(
        "KLDivLoss",
        &[
            "~size_average=None",
            "~reduce=None",
            "reduction='mean'",
            "log_target=False",
        ],
        "kl_div",
    ),
    // einops layers (`einops.layers.torch`).
    stateless("Rearrange", &["pattern"], Forward::Einops("rearrange")),
    stateless(
        "Reduce",
        &["pattern", "reduction"],
        Forward::Einops("reduce"),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_defaults_read() {
        let mut names: Vec<&str> = LAYERS.iter().map(|d| d.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a layer is registered twice");
        for def in LAYERS {
            let mut seen_default = false;
            for spec in def.params {
                if *spec == "*" {
                    continue;
                }
                let spec = spec.trim_start_matches('~');
                let name = param_name(spec);
                assert!(
                    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{}: `{spec}` is no parameter",
                    def.name
                );
                match spec.split_once('=') {
                    Some((_, text)) => {
                        seen_default = true;
                        // Every default is a literal but a callable's name.
                        assert!(
                            literal(text).is_some() || text == "relu",
                            "{}: default `{text}` unread",
                            def.name
                        );
                    }
                    None => assert!(!seen_default, "{}: `{spec}` follows a default", def.name),
                }
            }
        }
    }

    /// torch's signatures, written by `tests/golden/layer_signatures.py`.
    const TORCH: &str = include_str!("../../../../../tests/golden/layer_signatures.txt");

    #[test]
    fn signatures_are_torchs() {
        for def in LAYERS {
            let line = TORCH
                .lines()
                .find(|l| l.split(['(', ' ']).next() == Some(def.name))
                .unwrap_or_else(|| {
                    panic!(
                        "{} is not in layer_signatures.txt: run tests/golden/layer_signatures.py",
                        def.name
                    )
                });
            // torch takes `*args, **kwargs` (LSTM) or the class is not
            // installed (einops): nothing to compare.
            let Some(inner) = line
                .strip_prefix(def.name)
                .and_then(|l| l.strip_prefix('('))
            else {
                continue;
            };
            let torch: Vec<&str> = inner
                .trim_end_matches(')')
                .split(", ")
                .filter(|p| !p.is_empty())
                .collect();
            let ours: Vec<&str> = def
                .params
                .iter()
                .map(|p| p.trim_start_matches('~'))
                .collect();
            assert_eq!(ours, torch, "{}'s signature", def.name);
        }
    }

    #[test]
    fn arguments_bind_by_position_and_name() {
        let conv = LayerDef::of("ConvTranspose2d").unwrap();
        assert_eq!(conv.position("dilation"), Some(8));
        assert_eq!(
            LayerDef::of("Conv2d").unwrap().position("dilation"),
            Some(5)
        );
        assert_eq!(LayerDef::of("RNN").unwrap().position("bias"), Some(4));
        assert_eq!(LayerDef::of("LSTM").unwrap().position("bias"), Some(3));
        assert!(matches!(
            LayerDef::of("LSTM").unwrap().default("num_layers"),
            Some(Value::Int(_))
        ));
        assert!(LayerDef::of("Fold").is_none());
        assert_eq!(LayerDef::of("Conv3d").unwrap().spatial, 3);
    }
}
