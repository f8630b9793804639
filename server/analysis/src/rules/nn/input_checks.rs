//! What layers that keep their input's shape check of it before they run:
//! the channel-wise dropouts' ranks, an instance norm's features, PReLU's
//! channels, `Softmax2d`'s and `ChannelShuffle`'s ranks and groups.

use shapels_shapes::Dim;

use crate::code::Code;
use crate::rules::check::{ShapeError, Stop, check};
use crate::rules::meta::Meta;
use crate::value::Value;

use super::forward::LayerCall;

/// The checks of `call`'s layer kind, if it has any: `Err` is torch's error.
pub(super) fn layer_input(meta: &mut dyn Meta, call: &LayerCall<'_>) -> Result<(), Stop> {
    let kind = &*call.layer.kind;
    match kind {
        "Dropout1d" | "Dropout2d" | "FeatureAlphaDropout" => feature_dropout_input(meta, call),
        "PReLU" => prelu_input(meta, call),
        "Softmax2d" => softmax2d_input(meta, call),
        "ChannelShuffle" => channel_shuffle_input(meta, call),
        "CrossMapLRN2d" => cross_map_input(meta, call),
        "GaussianNLLLoss" => {
            check!(
                call.args.pos.len() >= 3 || call.args.kw("var").is_some(),
                Code::ArgumentType,
                "GaussianNLLLoss.forward() missing 1 required positional argument: 'var'"
            );
            Ok(())
        }
        _ if kind.starts_with("InstanceNorm") => instance_norm_input(meta, call),
        _ => Ok(()),
    }
}

/// PReLU's weights: one for all channels, or one per channel (dim 1, or
/// the one channel of a 1-d input).
fn prelu_input(meta: &mut dyn Meta, call: &LayerCall<'_>) -> Result<(), Stop> {
    let Some(dims) = meta.dims(call.x) else {
        return Ok(());
    };
    let Some(parameters) = call
        .setting("num_parameters")
        .and_then(|v| meta.as_dim(&v))
        .and_then(|d| meta.env().value(&d))
    else {
        return Ok(());
    };
    if parameters == 1 {
        return Ok(());
    }
    check!(
        !dims.is_empty(),
        Code::LayerInput,
        "Not allow zero-dim input tensor."
    );
    let channels = if dims.len() >= 2 {
        dims[1].clone()
    } else {
        Dim::konst(1)
    };
    if meta
        .env()
        .known_different(&channels, &Dim::konst(parameters))
    {
        let message = format!(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = {parameters} and channel size = {}.",
            meta.fmt_dim(&channels)
        );
        return Err(ShapeError::new(Code::LayerInput, message).into());
    }
    Ok(())
}

/// `Softmax2d`: a softmax over the channels of a 3-d or 4-d input.
fn softmax2d_input(meta: &mut dyn Meta, call: &LayerCall<'_>) -> Result<(), Stop> {
    let Some(dims) = meta.dims(call.x) else {
        return Ok(());
    };
    check!(
        matches!(dims.len(), 3 | 4),
        Code::LayerInput,
        "Softmax2d: expected input to be 3D or 4D, got {}D instead",
        dims.len()
    );
    Ok(())
}

/// `CrossMapLRN2d` takes images only (`LocalResponseNorm` is
/// `F.local_response_norm`, which checks its own rank).
fn cross_map_input(meta: &mut dyn Meta, call: &LayerCall<'_>) -> Result<(), Stop> {
    let Some(rank) = meta.rank(call.x) else {
        return Ok(());
    };
    check!(
        rank == 4,
        Code::LayerInput,
        "CrossMapLRN2d: Expected input to be 4D, got {rank}D instead."
    );
    Ok(())
}

/// `ChannelShuffle(groups)`: channels (dim 1 of at least 3) in `groups`
/// groups of equal size.
fn channel_shuffle_input(meta: &mut dyn Meta, call: &LayerCall<'_>) -> Result<(), Stop> {
    let Some(dims) = meta.dims(call.x) else {
        return Ok(());
    };
    let groups = call
        .setting("groups")
        .and_then(|v| meta.as_dim(&v))
        .and_then(|d| meta.env().value(&d));
    check_channel_shuffle(meta, &dims, groups)
}

/// The checks `channel_shuffle` makes (the layer's and `F.channel_shuffle`):
/// at least 3 dims, a positive number of groups, channels (dim 1) in
/// groups of equal size.
pub(super) fn check_channel_shuffle(
    meta: &dyn Meta,
    dims: &[Dim],
    groups: Option<i64>,
) -> Result<(), Stop> {
    check!(
        dims.len() > 2,
        Code::LayerInput,
        "channel_shuffle expects input with > 2 dims, but got input with sizes {}",
        meta.fmt_dims(dims)
    );
    let Some(groups) = groups else {
        return Ok(());
    };
    check!(
        groups > 0,
        Code::LayerConfig,
        "Number of groups to divide channels in must be positive. Value of groups:{groups}"
    );
    if let Some(channels) = meta.env().value(&dims[1])
        && channels % groups != 0
    {
        let message = format!(
            "Number of channels must be divisible by groups. Got {channels} channels and {groups} groups."
        );
        return Err(ShapeError::new(Code::LayerInput, message).into());
    }
    Ok(())
}

/// The ranks the channel-wise dropouts take: `Dropout1d` a 2-d or 3-d
/// input, always; `Dropout2d` and `FeatureAlphaDropout` at least 2 dims
/// when they drop anything (in training, with `p` above 0: the kernel that
/// checks runs only then). `Dropout3d` makes any rank fit, with a warning.
fn feature_dropout_input(meta: &mut dyn Meta, call: &LayerCall<'_>) -> Result<(), Stop> {
    let kind = &*call.layer.kind;
    if !matches!(kind, "Dropout1d" | "Dropout2d" | "FeatureAlphaDropout") {
        return Ok(());
    }
    let Some(dims) = meta.dims(call.x) else {
        return Ok(());
    };
    if kind == "Dropout1d" {
        check!(
            matches!(dims.len(), 2 | 3),
            Code::LayerInput,
            "dropout1d: Expected 2D or 3D input, but received a {}D input. Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).",
            dims.len()
        );
        return Ok(());
    }
    let drops = match call.setting("p") {
        None => true,
        Some(Value::Float(Some(p))) => p > 0.0,
        Some(Value::Int(p)) => p.as_const().is_some_and(|p| p > 0),
        Some(_) => false,
    };
    if drops && call.layer.training.get() == Some(true) {
        check!(
            dims.len() >= 2,
            Code::LayerInput,
            "Feature dropout requires at least 2 dimensions in the input"
        );
    }
    Ok(())
}

/// An instance norm's input: unbatched or batched, and with `affine=True`
/// (weights per feature) as many features as the layer was built for;
/// without weights torch only warns about the count.
fn instance_norm_input(meta: &mut dyn Meta, call: &LayerCall<'_>) -> Result<(), Stop> {
    let Some(dims) = meta.dims(call.x) else {
        return Ok(());
    };
    let unbatched = call.spatial + 1;
    check!(
        dims.len() == unbatched || dims.len() == unbatched + 1,
        Code::LayerInput,
        "expected {}D or {}D input (got {}D input)",
        unbatched,
        unbatched + 1,
        dims.len()
    );
    let feature_dim = dims.len() - unbatched;
    if matches!(call.setting("affine"), Some(Value::Bool(Some(true))))
        && let Some(nf) = call
            .layer
            .declared_setting("num_features")
            .cloned()
            .and_then(|v| meta.as_dim(&v))
        && meta.env().known_different(&dims[feature_dim], &nf)
    {
        let message = format!(
            "expected input's size at dim={feature_dim} to match num_features ({}), but got: {}.",
            meta.fmt_dim(&nf),
            meta.fmt_dim(&dims[feature_dim])
        );
        return Err(ShapeError::new(Code::LayerInput, message).into());
    }
    Ok(())
}
