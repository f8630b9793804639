//! Normalisation: layer and RMS norm's `normalized_shape`, batch norm's per-channel statistics, and the dtypes norm kernels accept.

use std::rc::Rc;

use shapels_shapes::Dim;

use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{out_known, out_shape};
use crate::value::{DType, Device, Tensor, Value};

/// The CPU norm kernels take a float32 parameter with a reduced-precision
/// input, and otherwise parameters of the input's dtype.
pub(super) fn norm_dtype_message(x: DType, p: DType) -> Option<String> {
    match (x, p) {
        _ if x == p => None,
        (DType::Float16 | DType::BFloat16, DType::Float32) => None,
        (DType::Float32, DType::Float64 | DType::Float16 | DType::BFloat16) => {
            Some("mixed dtype (CPU): expect parameter to have scalar type of Float".into())
        }
        (DType::Float64, DType::Float32) => {
            Some("mixed dtype (CPU): all inputs must share same datatype.".into())
        }
        _ => None,
    }
}

/// `F.batch_norm` / `F.group_norm` / `F.instance_norm` / `F.layer_norm` with
/// parameters of another dtype than the input.
pub(super) fn mixed_dtype(x: &Rc<Tensor>, args: &Args, name: &str) -> Option<String> {
    let keys: &[(usize, &str)] = match name {
        "batch_norm" | "instance_norm" => &[
            (1, "running_mean"),
            (2, "running_var"),
            (3, "weight"),
            (4, "bias"),
        ],
        "group_norm" | "layer_norm" => &[(2, "weight"), (3, "bias")],
        _ => &[],
    };
    let xd = x.dtype?;
    let p = keys
        .iter()
        .find_map(|(i, k)| args.tensor(*i, k).and_then(|t| t.dtype))?;
    norm_dtype_message(xd, p)
}

pub(super) fn layer_norm(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    ns: &Value,
    device: Option<Device>,
    op: &str,
) -> RuleResult {
    let Some(dims) = meta.dims(x) else {
        // Unknown rank: the trailing dims must be `normalized_shape`.
        let normalized = match ns {
            Value::Int(_) | Value::Opaque(_) => Some(meta.size_dims(std::slice::from_ref(ns))),
            v => v.items().map(|items| meta.size_dims(&items)),
        };
        if let Some(normalized) = normalized
            && let Some(Err(found)) = crate::rules::tail::demand_trailing(meta, x, &normalized)
        {
            let message = format!(
                "Given normalized_shape={}, expected input with shape [*, {}], but got input of size[*, {}]",
                meta.fmt_dims(&normalized),
                normalized
                    .iter()
                    .map(|d| meta.fmt_dim(d))
                    .collect::<Vec<_>>()
                    .join(", "),
                found
                    .iter()
                    .map(|d| meta.fmt_dim(d))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return raise(Code::LayerInput, message);
        }
        return Ok(out_shape(meta, x, x.shape.clone(), x.dtype, device, op));
    };
    let normalized = match ns {
        Value::Int(_) | Value::Opaque(_) => meta.size_dims(std::slice::from_ref(ns)),
        v => match v.items() {
            Some(items) => meta.size_dims(&items),
            None => return Ok(out_known(meta, x, dims, x.dtype, device, op)),
        },
    };
    let k = normalized.len();
    // `nn.RMSNorm` checks the rank itself, in Python, first.
    if op == "RMSNorm" && k > dims.len() {
        let message = format!(
            "Input tensor must have at least {k} dimensions, but got {}",
            dims.len()
        );
        return raise(Code::LayerInput, message);
    }
    let mismatch = k > dims.len()
        || normalized
            .iter()
            .zip(&dims[dims.len().saturating_sub(k)..])
            .any(|(a, b)| meta.env().known_different(a, b));
    if mismatch {
        let message = format!(
            "Given normalized_shape={}, expected input with shape [*{}{}], but got input of size{}",
            meta.fmt_dims(&normalized),
            // RMSNorm's kernel prints the star without a comma.
            if op.contains("rms") || op.contains("RMS") {
                ""
            } else {
                ", "
            },
            normalized
                .iter()
                .map(|d| meta.fmt_dim(d))
                .collect::<Vec<_>>()
                .join(", "),
            meta.fmt_dims(&dims)
        );
        return raise(Code::LayerInput, message);
    }
    for (a, b) in normalized
        .iter()
        .zip(dims[dims.len() - k..].to_vec().iter())
    {
        let _ = meta.require_equal(b, a);
    }
    Ok(out_known(meta, x, dims, x.dtype, device, op))
}

/// What batch norm's kernel says when a per-channel statistic or parameter
/// (`running_mean`, `weight`) holds `count` values for `channels` channels.
pub(super) fn per_channel_error(
    meta: &dyn Meta,
    what: &str,
    channels: &Dim,
    count: &Dim,
) -> Option<String> {
    meta.env().known_different(channels, count).then(|| {
        format!(
            "{what} should contain {} elements not {}",
            meta.fmt_dim(channels),
            meta.fmt_dim(count)
        )
    })
}
