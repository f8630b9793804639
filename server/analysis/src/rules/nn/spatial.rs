//! Kernel sizes, strides, paddings and dilations of convolutions and pools, one per spatial dim.

use shapels_shapes::Dim;

use crate::rules::meta::Meta;
use crate::value::Value;

/// How many spatial dims a layer of this kind works on, when it works on
/// a fixed number (`Conv2d`, `ConvTranspose3d`, `BatchNorm1d`).
pub(crate) fn spatial_rank_of(kind: &str) -> Option<usize> {
    super::LayerDef::of(kind)
        .map(|d| d.spatial)
        .filter(|n| *n > 0)
}

/// Spatial parameters (`kernel_size=3` or `(3, 5)`) as `n` dims.
pub(super) fn spatial(v: Option<&Value>, n: usize) -> Vec<Dim> {
    match v {
        Some(Value::Int(d)) => vec![d.clone(); n],
        Some(v @ (Value::Tuple(_) | Value::List(_))) => {
            let items = v.items().unwrap_or_default();
            let dims: Vec<Dim> = items
                .iter()
                .filter_map(|i| {
                    if let Value::Int(d) = i {
                        Some(d.clone())
                    } else {
                        None
                    }
                })
                .collect();
            if dims.len() == n {
                dims
            } else if dims.len() == 1 {
                vec![dims[0].clone(); n]
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    }
}

/// Kernel, stride (the kernel when not given), padding and dilation (max
/// pooling only) of a pooling layer or `F.*_pool*d`, whose arguments come in
/// this order after the input.
pub(super) fn pool_settings<'v>(
    n: usize,
    is_max: bool,
    arg: impl Fn(usize, &str) -> Option<&'v Value>,
) -> (Vec<Dim>, Vec<Dim>, Vec<Dim>, Vec<Dim>) {
    let kernel = spatial(arg(0, "kernel_size"), n);
    let stride = match arg(1, "stride") {
        None | Some(Value::None) => kernel.clone(),
        s => spatial(s, n),
    };
    let padding = spatial_or(arg(2, "padding"), n, 0);
    let dilation = if is_max {
        spatial_or(arg(3, "dilation"), n, 1)
    } else {
        vec![Dim::konst(1); n]
    };
    (kernel, stride, padding, dilation)
}

pub(super) fn spatial_or(v: Option<&Value>, n: usize, default: i64) -> Vec<Dim> {
    match v {
        None | Some(Value::None) => vec![Dim::konst(default); n],
        _ => spatial(v, n),
    }
}

/// A spatial setting given as a value the analysis can name but not read
/// (`cfg.patch_size`, an argparse value): the size that name stands for, in
/// every spatial dim alike, so `Conv2d(c, d, cfg.patch_size,
/// cfg.patch_size)` gives `H // cfg.patch_size` rather than `?`.
pub(super) fn named_setting(meta: &mut dyn Meta, v: Option<&Value>) -> Option<Value> {
    match v {
        Some(Value::Opaque(name)) => Some(Value::Int(meta.opaque_symbol(name))),
        other => other.cloned(),
    }
}
