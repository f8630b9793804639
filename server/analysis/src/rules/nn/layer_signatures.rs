//! The constructor signatures the layer table names rather than writes inline: those a family of classes shares (`Conv1d` to `Conv3d`), as `LayerDef::params` writes them.

pub(super) const CONV: &[&str] = &[
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
pub(super) const CONV_TRANSPOSE: &[&str] = &[
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
pub(super) const MAX_POOL: &[&str] = &[
    "kernel_size",
    "~stride=None",
    "padding=0",
    "dilation=1",
    "return_indices=False",
    "ceil_mode=False",
];
pub(super) const AVG_POOL_1D: &[&str] = &[
    "~kernel_size",
    "~stride=None",
    "~padding=0",
    "ceil_mode=False",
    "count_include_pad=True",
];
pub(super) const AVG_POOL: &[&str] = &[
    "kernel_size",
    "~stride=None",
    "padding=0",
    "ceil_mode=False",
    "count_include_pad=True",
    "divisor_override=None",
];
pub(super) const ADAPTIVE_AVG_POOL: &[&str] = &["output_size"];
pub(super) const ADAPTIVE_MAX_POOL: &[&str] = &["output_size", "return_indices=False"];
pub(super) const BATCH_NORM: &[&str] = &[
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
pub(super) const INSTANCE_NORM: &[&str] = &[
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
pub(super) const DROPOUT: &[&str] = &["p=0.5", "inplace=False"];
pub(super) const INPLACE: &[&str] = &["inplace=False"];
pub(super) const SOFTMAX: &[&str] = &["dim=None"];
pub(super) const PAD: &[&str] = &["~padding"];
pub(super) const CONSTANT_PAD: &[&str] = &["~padding", "value"];
pub(super) const RNN_CELL: &[&str] = &[
    "input_size",
    "hidden_size",
    "bias=True",
    "device=None",
    "dtype=None",
];
pub(super) const REDUCTION: &[&str] = &["~size_average=None", "~reduce=None", "reduction='mean'"];
pub(super) const TRANSFORMER_LAYER: &[&str] = &[
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
