//! The layer registry's table: the `LayerDef` of every `torch.nn` layer class the analysis knows, with torch's constructor signatures.

use super::layer_signatures::{
    ADAPTIVE_AVG_POOL, ADAPTIVE_MAX_POOL, AVG_POOL, AVG_POOL_1D, BATCH_NORM, CONSTANT_PAD, CONV,
    CONV_TRANSPOSE, DROPOUT, INPLACE, INSTANCE_NORM, MAX_POOL, PAD, REDUCTION, RNN_CELL, SOFTMAX,
    TRANSFORMER_LAYER,
};
use super::parameter_table as shapes;
use super::registry::Parameters::{Built, Counted};
use super::registry::{Forward, LayerDef, Parameters, Role};

/// An entry with the settings most layers share: a leaf with weights
/// whose device counts, no spatial dims, no rank demand, and parameters
/// the analysis does not size.
const fn layer(name: &'static str, params: &'static [&'static str], forward: Forward) -> LayerDef {
    LayerDef {
        name,
        params,
        role: Role::Leaf,
        spatial: 0,
        checks_device: true,
        has_weight: false,
        parameters: Parameters::Unsized,
        batched_input: false,
        forward,
    }
}

/// A layer holding these parameters.
const fn holding(
    name: &'static str,
    params: &'static [&'static str],
    forward: Forward,
    parameters: Parameters,
) -> LayerDef {
    LayerDef {
        parameters,
        ..layer(name, params, forward)
    }
}

/// A layer with a `weight` (and usually a `bias`): the tensors the
/// analysis builds for it, or a function that counts them.
const fn weighted(
    name: &'static str,
    params: &'static [&'static str],
    forward: Forward,
    parameters: Parameters,
) -> LayerDef {
    LayerDef {
        has_weight: true,
        parameters,
        ..layer(name, params, forward)
    }
}

/// A layer without parameters that keeps its input's shape and runs where
/// its input is.
const fn pointwise(name: &'static str, params: &'static [&'static str]) -> LayerDef {
    LayerDef {
        checks_device: false,
        parameters: Parameters::None,
        ..layer(name, params, Forward::SameShape)
    }
}

/// A parameterless layer with a forward of its own (pools, pads,
/// reshapes): nothing of it is on a device, so it runs where its input is
/// (`nn.MaxPool2d(2)` never moved to the gpu pools a cuda tensor).
const fn stateless(
    name: &'static str,
    params: &'static [&'static str],
    forward: Forward,
) -> LayerDef {
    LayerDef {
        checks_device: false,
        parameters: Parameters::None,
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
        parameters: Parameters::None,
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
        parameters: Counted(shapes::instance_norm),
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

/// A convolution over `n` spatial dims.
const fn conv(n: usize, name: &'static str) -> LayerDef {
    batched(n, weighted(name, CONV, Forward::Conv, Built(shapes::CONV)))
}

/// A transposed convolution over `n` spatial dims.
const fn conv_transpose(n: usize, name: &'static str) -> LayerDef {
    let parameters = Counted(shapes::conv_transpose);
    batched(n, weighted(name, CONV_TRANSPOSE, Forward::Conv, parameters))
}

/// Batch norm, with its running statistics.
const fn batch_norm(name: &'static str) -> LayerDef {
    weighted(
        name,
        BATCH_NORM,
        Forward::BatchNorm,
        Built(shapes::BATCH_NORM),
    )
}

/// `MaxPool*` or `AvgPool*` over `n` spatial dims.
const fn pool(
    n: usize,
    name: &'static str,
    params: &'static [&'static str],
    max: bool,
) -> LayerDef {
    batched(n, stateless(name, params, Forward::Pool { max }))
}

/// An adaptive pool over `n` spatial dims. Only the 2-d ones give an input
/// of unknown rank its batched rank, as the table before the registry did.
const fn adaptive_pool(n: usize, name: &'static str, max: bool) -> LayerDef {
    let params = if max {
        ADAPTIVE_MAX_POOL
    } else {
        ADAPTIVE_AVG_POOL
    };
    LayerDef {
        spatial: n,
        batched_input: n == 2,
        ..stateless(name, params, Forward::AdaptivePool { max })
    }
}

/// A pad over `n` spatial dims, `F.pad` with this mode.
const fn pad(
    n: usize,
    name: &'static str,
    params: &'static [&'static str],
    mode: &'static str,
) -> LayerDef {
    spatial(n, stateless(name, params, Forward::Pad(mode)))
}

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
        Built(shapes::LINEAR),
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
        Counted(shapes::bilinear),
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
        Built(shapes::EMBEDDING),
    ),
    holding(
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
        Counted(shapes::embedding_bag),
    ),
    // Convolutions.
    conv(1, "Conv1d"),
    conv(2, "Conv2d"),
    conv(3, "Conv3d"),
    conv_transpose(1, "ConvTranspose1d"),
    conv_transpose(2, "ConvTranspose2d"),
    conv_transpose(3, "ConvTranspose3d"),
    // Pools.
    pool(1, "MaxPool1d", MAX_POOL, true),
    pool(2, "MaxPool2d", MAX_POOL, true),
    pool(3, "MaxPool3d", MAX_POOL, true),
    pool(1, "AvgPool1d", AVG_POOL_1D, false),
    pool(2, "AvgPool2d", AVG_POOL, false),
    pool(3, "AvgPool3d", AVG_POOL, false),
    adaptive_pool(1, "AdaptiveAvgPool1d", false),
    adaptive_pool(2, "AdaptiveAvgPool2d", false),
    adaptive_pool(3, "AdaptiveAvgPool3d", false),
    adaptive_pool(1, "AdaptiveMaxPool1d", true),
    adaptive_pool(2, "AdaptiveMaxPool2d", true),
    adaptive_pool(3, "AdaptiveMaxPool3d", true),
    // Normalisation.
    spatial(1, batch_norm("BatchNorm1d")),
    batched(2, batch_norm("BatchNorm2d")),
    batched(3, batch_norm("BatchNorm3d")),
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
        Built(shapes::LAYER_NORM),
    ),
    holding(
        "RMSNorm",
        &[
            "normalized_shape",
            "eps=None",
            "elementwise_affine=True",
            "device=None",
            "dtype=None",
        ],
        Forward::RmsNorm,
        Counted(shapes::rms_norm),
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
        Counted(shapes::group_norm),
    ),
    stateless(
        "LocalResponseNorm",
        &["size", "alpha=0.0001", "beta=0.75", "k=1.0"],
        Forward::Functional("local_response_norm"),
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
        parameters: Counted(shapes::prelu),
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
    pointwise("ChannelShuffle", &["groups"]),
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
    pad(1, "ZeroPad1d", PAD, "constant"),
    pad(2, "ZeroPad2d", PAD, "constant"),
    pad(3, "ZeroPad3d", PAD, "constant"),
    pad(1, "ConstantPad1d", CONSTANT_PAD, "constant"),
    pad(2, "ConstantPad2d", CONSTANT_PAD, "constant"),
    pad(3, "ConstantPad3d", CONSTANT_PAD, "constant"),
    pad(1, "ReflectionPad1d", PAD, "reflect"),
    pad(2, "ReflectionPad2d", PAD, "reflect"),
    pad(3, "ReflectionPad3d", PAD, "reflect"),
    pad(1, "ReplicationPad1d", PAD, "replicate"),
    pad(2, "ReplicationPad2d", PAD, "replicate"),
    pad(3, "ReplicationPad3d", PAD, "replicate"),
    pad(1, "CircularPad1d", PAD, "circular"),
    pad(2, "CircularPad2d", PAD, "circular"),
    pad(3, "CircularPad3d", PAD, "circular"),
    stateless("GLU", &["dim=-1"], Forward::Functional("glu")),
    stateless(
        "Unfold",
        &["kernel_size", "dilation=1", "padding=0", "stride=1"],
        Forward::Functional("unfold"),
    ),
    stateless(
        "Fold",
        &[
            "output_size",
            "kernel_size",
            "dilation=1",
            "padding=0",
            "stride=1",
        ],
        Forward::Functional("fold"),
    ),
    stateless(
        "CosineSimilarity",
        &["dim=1", "eps=1e-08"],
        Forward::Functional("cosine_similarity"),
    ),
    stateless(
        "PairwiseDistance",
        &["p=2.0", "eps=1e-06", "keepdim=False"],
        Forward::Functional("pairwise_distance"),
    ),
    // Recurrent layers.
    holding(
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
        Counted(shapes::recurrent),
    ),
    holding(
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
        Counted(shapes::recurrent),
    ),
    holding(
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
        Counted(shapes::recurrent),
    ),
    holding(
        "LSTMCell",
        RNN_CELL,
        Forward::RnnCell,
        Counted(shapes::recurrent_cell),
    ),
    holding(
        "GRUCell",
        RNN_CELL,
        Forward::RnnCell,
        Counted(shapes::recurrent_cell),
    ),
    holding(
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
        Counted(shapes::recurrent_cell),
    ),
    // Attention and Transformers.
    composite(holding(
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
        Counted(shapes::multihead_attention),
    )),
    composite(holding(
        "TransformerEncoderLayer",
        TRANSFORMER_LAYER,
        Forward::TransformerStack,
        Counted(shapes::transformer_layer),
    )),
    composite(holding(
        "TransformerDecoderLayer",
        TRANSFORMER_LAYER,
        Forward::TransformerStack,
        Counted(shapes::transformer_layer),
    )),
    composite(holding(
        "TransformerEncoder",
        &[
            "encoder_layer",
            "num_layers",
            "norm=None",
            "enable_nested_tensor=True",
            "mask_check=True",
        ],
        Forward::TransformerStack,
        Counted(shapes::transformer_stack),
    )),
    composite(holding(
        "TransformerDecoder",
        &["decoder_layer", "num_layers", "norm=None"],
        Forward::TransformerStack,
        Counted(shapes::transformer_stack),
    )),
    composite(holding(
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
        Counted(shapes::transformer),
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
    loss(
        "PoissonNLLLoss",
        &[
            "log_input=True",
            "full=False",
            "~size_average=None",
            "eps=1e-08",
            "~reduce=None",
            "reduction='mean'",
        ],
        "poisson_nll_loss",
    ),
    loss(
        "GaussianNLLLoss",
        &["*", "full=False", "eps=1e-06", "reduction='mean'"],
        "gaussian_nll_loss",
    ),
    loss(
        "HingeEmbeddingLoss",
        &[
            "margin=1.0",
            "~size_average=None",
            "~reduce=None",
            "reduction='mean'",
        ],
        "hinge_embedding_loss",
    ),
    loss(
        "MultiMarginLoss",
        &[
            "p=1",
            "margin=1.0",
            "weight=None",
            "~size_average=None",
            "~reduce=None",
            "reduction='mean'",
        ],
        "multi_margin_loss",
    ),
    loss(
        "MultiLabelMarginLoss",
        &["~size_average=None", "~reduce=None", "reduction='mean'"],
        "multilabel_margin_loss",
    ),
    loss(
        "MultiLabelSoftMarginLoss",
        &[
            "weight=None",
            "~size_average=None",
            "~reduce=None",
            "reduction='mean'",
        ],
        "multilabel_soft_margin_loss",
    ),
    // einops layers (`einops.layers.torch`).
    stateless("Rearrange", &["pattern"], Forward::Einops("rearrange")),
    stateless(
        "Reduce",
        &["pattern", "reduction"],
        Forward::Einops("reduce"),
    ),
];
