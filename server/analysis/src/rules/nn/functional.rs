//! `torch.nn.functional`: the registry of `F.*` functions and their rules, most shared with the matching layer.
//!
//! As the layer registry has one `LayerDef` per class, each `F.*` function
//! the analysis has a rule for is one `FunctionalDef` (in
//! `functional_table.rs`): its name, its rule, and the spatial dims it
//! works on. A function without an entry runs as the tensor op of its
//! name (`F.relu` as `torch.relu`).

use std::rc::Rc;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, Stop, check, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{check_inputs, op, out_known, out_shape, out_var};
use crate::rules::shape::broadcast;
use crate::value::{DType, Device, Tensor, Value};

use super::conv::{ConvSpec, conv_forward};
use super::functional_table::FUNCTIONALS;
use super::loss::loss_ce;
use super::norm::mixed_dtype;
use super::pool::{adaptive_pool, pool, with_indices};
use super::resample::{
    fold_rule, grid_sample_rule, interpolate_rule, pad_rule, pixel_shuffle_rule, unfold_rule,
};
use super::spatial::{pool_settings, spatial_or};

/// `F.<name>(args)` at `range`: the rule's result, or unknown with the
/// diagnostic where torch raises.
pub(crate) fn functional(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> Value {
    let result = functional_rule(meta, name, args, range);
    meta.settle(range, result)
}

/// `F.<name>(...)`: the rule of its registry entry, once the input is a
/// tensor and the inputs' devices agree. A function without an entry (or
/// without a tensor input) runs as the tensor op of its name.
fn functional_rule(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> RuleResult {
    let Some(x) = args.tensor(0, "input") else {
        return Ok(op(meta, name, args, range));
    };
    let Some(device) = check_inputs(meta, &args, name, range) else {
        return Ok(Value::Unknown);
    };
    let Some(def) = FunctionalDef::of(name) else {
        return Ok(op(meta, name, args, range));
    };
    let call = FunctionalCall {
        name,
        spatial: def.spatial,
        x: &x,
        args: &args,
        device,
        range,
    };
    (def.rule)(meta, call)
}

/// The shape function of an `F.*` function, as torch's meta registrations
/// have one per op.
pub(super) type FunctionalRule = fn(&mut dyn Meta, FunctionalCall<'_>) -> RuleResult;

/// One `F.*` function the analysis has a rule for.
#[derive(Debug)]
pub(super) struct FunctionalDef {
    /// Its name under `torch.nn.functional` (`conv2d`).
    pub name: &'static str,
    pub rule: FunctionalRule,
    /// The spatial dims it works on (`conv2d`: 2), 0 for none.
    pub spatial: usize,
}

impl FunctionalDef {
    /// The entry of a function's name, if the analysis has a rule for it.
    pub(super) fn of(name: &str) -> Option<&'static FunctionalDef> {
        static INDEX: OnceLock<FxHashMap<&'static str, &'static FunctionalDef>> = OnceLock::new();
        INDEX
            .get_or_init(|| FUNCTIONALS.iter().map(|d| (d.name, d)).collect())
            .get(name)
            .copied()
    }
}

/// One call of an `F.*` function whose input is a tensor, as its rule
/// sees it.
pub(super) struct FunctionalCall<'a> {
    name: &'a str,
    /// The entry's spatial dims.
    spatial: usize,
    x: &'a Rc<Tensor>,
    args: &'a Args,
    /// The device the inputs are on, when known.
    device: Option<Device>,
    range: TextRange,
}

/// A rule that takes the function's name, its input and arguments, and
/// the inputs' device: the form of the rules `resample.rs` shares with
/// the layers.
type SharedRule = fn(&mut dyn Meta, &str, (&Rc<Tensor>, &Args), Option<Device>) -> RuleResult;

/// Runs a `SharedRule` on a call.
fn shared(meta: &mut dyn Meta, call: FunctionalCall<'_>, rule: SharedRule) -> RuleResult {
    rule(meta, call.name, (call.x, call.args), call.device)
}

/// `F.pad`.
pub(super) fn pad(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    shared(meta, call, pad_rule)
}

/// `F.interpolate` and the `upsample` functions before it.
pub(super) fn interpolate(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    shared(meta, call, interpolate_rule)
}

/// `F.pixel_shuffle` and `F.pixel_unshuffle`.
pub(super) fn pixel_shuffle(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    shared(meta, call, pixel_shuffle_rule)
}

/// `F.unfold`.
pub(super) fn unfold(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    shared(meta, call, unfold_rule)
}

/// `F.fold`.
pub(super) fn fold(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    shared(meta, call, fold_rule)
}

/// `F.grid_sample`.
pub(super) fn grid_sample(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    shared(meta, call, grid_sample_rule)
}

/// `F.max_pool{1,2,3}d`.
pub(super) fn max_pool(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    pool_rule(meta, call, true)
}

/// `F.avg_pool{1,2,3}d`.
pub(super) fn avg_pool(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    pool_rule(meta, call, false)
}

/// A max or average pool; a max pool asked for its indices returns them
/// too.
fn pool_rule(meta: &mut dyn Meta, call: FunctionalCall<'_>, is_max: bool) -> RuleResult {
    let (n, args) = (call.spatial, call.args);
    let (kernel, stride, padding, dilation) = pool_settings(n, is_max, |i, k| args.get(i + 1, k));
    let ceil = args.flag(if is_max { 5 } else { 4 }, "ceil_mode", false) == Some(true);
    let out = pool(
        meta,
        call.x,
        n,
        is_max,
        &kernel,
        &stride,
        &padding,
        &dilation,
        ceil,
        call.device,
        call.range,
    );
    if is_max && args.flag(6, "return_indices", false) == Some(true) {
        return Ok(with_indices(out));
    }
    Ok(out)
}

/// `F.layer_norm`: weight and bias of another dtype than the input raise.
pub(super) fn layer_norm(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    if let Some(message) = mixed_dtype(call.x, call.args, call.name) {
        return raise(Code::DtypeMismatch, message);
    }
    rms_norm(meta, call)
}

/// `F.rms_norm`, and `F.layer_norm` once its dtypes are checked: the
/// normalized shape must end the input's.
pub(super) fn rms_norm(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    let ns = call
        .args
        .get(1, "normalized_shape")
        .cloned()
        .unwrap_or(Value::Unknown);
    check_affine_shapes(meta, call.args, &ns)?;
    super::norm::layer_norm(meta, call.x, &ns, call.device, call.name)
}

/// Torch's first checks of a layer norm: its weight and bias, when given,
/// have the normalized shape.
fn check_affine_shapes(meta: &mut dyn Meta, args: &Args, ns: &Value) -> Result<(), Stop> {
    let normalized = match ns {
        Value::Int(_) => vec![ns.clone()],
        v => match v.items() {
            Some(items) => items,
            None => return Ok(()),
        },
    };
    let normalized = meta.size_dims(&normalized);
    for (index, name) in [(2, "weight"), (3, "bias")] {
        let Some(dims) = args.tensor(index, name).and_then(|t| meta.dims(&t)) else {
            continue;
        };
        let differs = dims.len() != normalized.len()
            || dims
                .iter()
                .zip(&normalized)
                .any(|(a, b)| meta.env().known_different(a, b));
        check!(
            !differs,
            Code::LayerInput,
            "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {} and normalized_shape = {}",
            meta.fmt_dims(&dims),
            meta.fmt_dims(&normalized)
        );
    }
    Ok(())
}

/// `F.embedding`: the input's indices each take a row of the weight.
pub(super) fn embedding(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    let Some(w) = call.args.tensor(1, "weight") else {
        return Ok(Value::Unknown);
    };
    let Some(wd) = meta.dims(&w) else {
        return Ok(Value::Unknown);
    };
    check!(wd.len() == 2, Code::LayerInput, "'weight' must be 2-D");
    let d = wd.last().cloned().map(Value::Int).unwrap_or(Value::Unknown);
    Ok(super::linear::embedding(
        meta,
        call.x,
        w.dtype,
        &d,
        call.device,
        call.range,
    ))
}

/// `F.cross_entropy` and `F.nll_loss`.
pub(super) fn cross_entropy(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    Ok(loss_ce(
        meta,
        call.name,
        call.x,
        call.args,
        call.device,
        call.range,
    ))
}

/// `F.channel_shuffle(input, groups)`: the shape stays.
pub(super) fn channel_shuffle(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    let Some(dims) = meta.dims(call.x) else {
        return Ok(Value::Unknown);
    };
    super::input_checks::check_channel_shuffle(meta, &dims, call.args.int(1, "groups"))?;
    Ok(out_known(
        meta,
        call.x,
        dims,
        call.x.dtype,
        call.device,
        call.name,
    ))
}

/// `F.multi_margin_loss`.
pub(super) fn multi_margin_loss(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    super::loss::multi_margin_loss(meta, call.x, call.args, call.device)
}

/// `F.multilabel_margin_loss`.
pub(super) fn multilabel_margin_loss(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    super::loss::multilabel_margin_loss(meta, call.x, call.args, call.device)
}

/// `F.mm` and `F.matmul`, as `torch.matmul`.
pub(super) fn matmul(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    let other = call.args.get(1, "other").cloned().unwrap_or(Value::Unknown);
    Ok(crate::rules::ops::matmul(
        meta,
        call.name,
        call.x,
        &other,
        call.args,
        call.device,
        call.range,
    ))
}

/// `F.conv{1,2,3}d`.
pub(super) fn conv(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    conv_rule(meta, call, false)
}

/// `F.conv_transpose{1,2,3}d`.
pub(super) fn conv_transpose(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    conv_rule(meta, call, true)
}

/// A convolution, plain or transposed, whose weight says its channels
/// and kernel.
fn conv_rule(meta: &mut dyn Meta, call: FunctionalCall<'_>, transposed: bool) -> RuleResult {
    let FunctionalCall {
        spatial: n,
        x,
        args,
        device,
        range,
        ..
    } = call;
    let Some(w) = args.tensor(1, "weight") else {
        return Ok(Value::Unknown);
    };
    let Some(wd) = meta.dims(&w) else {
        return Ok(Value::Unknown);
    };
    if wd.len() != n + 2 {
        return Ok(Value::Unknown);
    }
    let stride = spatial_or(args.get(3, "stride"), n, 1);
    if !transposed
        && matches!(args.get(4, "padding"), Some(Value::Str(s)) if &**s == "same")
        && stride.iter().any(|s| s.as_const().is_some_and(|v| v != 1))
    {
        return raise(
            Code::ConvInput,
            "padding='same' is not supported for strided convolutions".to_string(),
        );
    }
    let groups = args.get(6, "groups").cloned().unwrap_or(Value::int(1));
    // Groups the analysis cannot read (`groups=n * c` of unknown sizes)
    // leave the channels the weight's groups make unknown, not one group's.
    let g = meta.as_dim(&groups);
    let (cin, cout) = if transposed {
        (Some(wd[0].clone()), g.map(|g| wd[1].mul(&g)))
    } else {
        (g.map(|g| wd[1].mul(&g)), Some(wd[0].clone()))
    };
    let spec = ConvSpec {
        n,
        in_channels: cin.map(Value::Int),
        out_channels: cout.map(Value::Int),
        kernel: wd[2..].to_vec(),
        stride,
        padding: args.get(4, "padding").cloned(),
        output_padding: if transposed {
            spatial_or(args.get(5, "output_padding"), n, 0)
        } else {
            vec![Dim::konst(0); n]
        },
        groups,
        dilation: spatial_or(args.get(if transposed { 7 } else { 5 }, "dilation"), n, 1),
        transposed,
    };
    Ok(conv_forward(meta, x, &spec, device, range))
}

/// `F.mse_loss` and the other losses that compare input and target
/// element by element.
pub(super) fn pointwise_loss(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    super::loss::pointwise_loss(meta, call.name, call.x, call.args, call.device, call.range)
}

/// `F.poisson_nll_loss`, `F.hinge_embedding_loss`,
/// `F.multilabel_soft_margin_loss` and `F.gaussian_nll_loss`.
pub(super) fn elementwise_loss(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    let FunctionalCall {
        name,
        x,
        args,
        device,
        ..
    } = call;
    super::loss::elementwise_loss(meta, name, x, args, device)
}

/// `F.scaled_dot_product_attention`.
pub(super) fn scaled_dot_product_attention(
    meta: &mut dyn Meta,
    call: FunctionalCall<'_>,
) -> RuleResult {
    let FunctionalCall {
        name,
        x,
        args,
        device,
        ..
    } = call;
    let (Some(k), Some(v)) = (args.tensor(1, "key"), args.tensor(2, "value")) else {
        return Ok(Value::Unknown);
    };
    // The dtypes are checked before any size: one for all three, and a
    // mask of bool, a float, or the query's.
    if let (Some(qt), Some(kt), Some(vt)) = (x.dtype, k.dtype, v.dtype) {
        use crate::rules::dtype::cpp_name;
        if qt != kt || qt != vt {
            let message = format!(
                "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and value.dtype: {} instead.",
                cpp_name(qt),
                cpp_name(kt),
                cpp_name(vt)
            );
            return raise(Code::DtypeMismatch, message);
        }
        if let Some(mt) = args.tensor(3, "attn_mask").and_then(|m| m.dtype)
            && mt != DType::Bool
            && !mt.is_floating()
            && mt != qt
        {
            let message = format!(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {} and  query.dtype: {} instead.",
                cpp_name(mt),
                cpp_name(qt)
            );
            return raise(Code::DtypeMismatch, message);
        }
    }
    let (Some(qd), Some(kd), Some(vd)) = (meta.dims(x), meta.dims(&k), meta.dims(&v)) else {
        return Ok(out_var(meta, x, x.dtype, device, name));
    };
    if qd.len() < 2 || kd.len() < 2 || vd.len() < 2 {
        return Ok(Value::Unknown);
    }
    let (e, ek) = (&qd[qd.len() - 1], &kd[kd.len() - 1]);
    if meta.env().known_different(e, ek) {
        // The math kernel's `q @ k.transpose(-2, -1)`, its batch
        // dims folded into one `bmm`.
        let folded = match broadcast(meta, &qd[..qd.len() - 2], &kd[..kd.len() - 2]) {
            Ok(batch) => meta.fmt_dim(&crate::rules::shape::numel(&batch)),
            Err(message) => return raise(Code::BroadcastShape, message),
        };
        let message = format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{folded}, {}] but got: [{folded}, {}].",
            meta.fmt_dim(e),
            meta.fmt_dim(ek)
        );
        return raise(Code::MatmulShape, message);
    }
    // `scaled_dot_product_attention(query, key, value, attn_mask=None,
    // dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False)`.
    let mask = args.tensor(3, "attn_mask");
    if mask.is_some() && args.flag(5, "is_causal", false) == Some(true) {
        let message =
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
                .to_string();
        return raise(Code::LayerConfig, message);
    }
    let mut key_batch = kd[..kd.len() - 2].to_vec();
    // Grouped-query attention: each key/value head serves a group of
    // query heads, so the key's head count stands for the query's.
    if args.flag(7, "enable_gqa", false) == Some(true) && qd.len() >= 3 && kd.len() >= 3 {
        let (hq, hk) = (&qd[qd.len() - 3], &kd[kd.len() - 3]);
        let hv = (vd.len() >= 3).then(|| &vd[vd.len() - 3]);
        match (meta.env().value(hq), meta.env().value(hk)) {
            (Some(q), Some(k)) => {
                let divides = |h: Option<i64>| h.is_none_or(|h| h > 0 && q % h == 0);
                if !divides(Some(k)) || !divides(hv.and_then(|h| meta.env().value(h))) {
                    let message =
                        "Number of heads in key and value must divide the number of heads in query"
                            .to_string();
                    return raise(Code::BroadcastShape, message);
                }
            }
            _ if !meta.env().known_equal(hq, hk) => return Ok(Value::Unknown),
            _ => {}
        }
        let at = key_batch.len() - 1;
        key_batch[at] = hq.clone();
    }
    let mut batch = match broadcast(meta, &qd[..qd.len() - 2], &key_batch) {
        Ok(batch) => batch,
        Err(message) => return raise(Code::BroadcastShape, message),
    };
    // The attention weights `[*batch, L, S]` (a batch of one dim gets a
    // leading 1 in torch's kernel) take the mask as a bias, added in place.
    if let Some(mask) = mask
        && let Some(md) = meta.dims(&mask)
        && md.len() >= 2
    {
        let mut weights = batch.clone();
        if weights.len() == 1 {
            weights.insert(0, Dim::konst(1));
        }
        weights.push(qd[qd.len() - 2].clone());
        weights.push(kd[kd.len() - 2].clone());
        match broadcast(meta, &weights, &md) {
            Err(message) => return raise(Code::BroadcastShape, message),
            Ok(grown)
                if grown.len() != weights.len()
                    || grown
                        .iter()
                        .zip(&weights)
                        .any(|(a, b)| meta.env().known_different(a, b)) =>
            {
                let message = format!(
                    "output with shape {} doesn't match the broadcast shape {}",
                    meta.fmt_dims(&weights),
                    meta.fmt_dims(&grown)
                );
                return raise(Code::BroadcastShape, message);
            }
            Ok(_) => {}
        }
    }
    batch.push(qd[qd.len() - 2].clone());
    batch.push(vd[vd.len() - 1].clone());
    Ok(out_known(meta, x, batch, x.dtype, device, name))
}

/// `F.linear`.
pub(super) fn linear(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    super::linear::functional_linear(meta, call.x, call.args, call.device, call.range)
}

/// `F.bilinear(input1, input2, weight, bias)`.
pub(super) fn bilinear(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    super::linear::functional_bilinear(meta, call.x, call.args, call.device)
}

/// `F.adaptive_avg_pool{1,2,3}d`.
pub(super) fn adaptive_avg_pool(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    adaptive_pool_rule(meta, call, false)
}

/// `F.adaptive_max_pool{1,2,3}d`.
pub(super) fn adaptive_max_pool(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    adaptive_pool_rule(meta, call, true)
}

/// An adaptive pool to the output size asked; a max pool asked for its
/// indices returns them too.
fn adaptive_pool_rule(meta: &mut dyn Meta, call: FunctionalCall<'_>, is_max: bool) -> RuleResult {
    let FunctionalCall {
        spatial: n,
        x,
        args,
        device,
        range,
        ..
    } = call;
    let out = adaptive_pool(
        meta,
        x,
        (n, !is_max),
        args.get(1, "output_size"),
        device,
        range,
    );
    if is_max && args.flag(2, "return_indices", false) == Some(true) {
        return Ok(with_indices(out));
    }
    Ok(out)
}

/// `F.normalize`.
pub(super) fn normalize(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    let FunctionalCall {
        name,
        x,
        args,
        device,
        ..
    } = call;
    if let Some(dims) = meta.dims(x)
        && let Some(d) = args.int(2, "dim").or(Some(1))
        && let Err(message) = crate::rules::shape::wrap_dim(d, dims.len())
    {
        return raise(Code::DimOutOfRange, message);
    }
    Ok(out_shape(meta, x, x.shape.clone(), x.dtype, device, name))
}

/// `F.batch_norm`: in training, a batch with one value per channel
/// raises.
pub(super) fn batch_norm(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    norm_rule(meta, call, true)
}

/// `F.group_norm`, `F.instance_norm` and `F.local_response_norm`.
pub(super) fn other_norm(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    norm_rule(meta, call, false)
}

/// A norm that keeps its input's shape: weight and bias of another dtype
/// than the input raise, and so does a training batch norm's batch of one
/// value per channel.
fn norm_rule(meta: &mut dyn Meta, call: FunctionalCall<'_>, is_batch: bool) -> RuleResult {
    let FunctionalCall {
        name,
        x,
        args,
        device,
        ..
    } = call;
    // `F.local_response_norm` reads its input's rank before anything.
    if name == "local_response_norm"
        && let Some(rank) = meta.rank(x)
        && rank < 3
    {
        let message = format!(
            "Expected 3D or higher dimensionality                          input (got {rank} dimensions)"
        );
        return raise(Code::LayerInput, message);
    }
    // `F.batch_norm(..., training=True)` verifies the batch first, then
    // each statistic and parameter holds one value per channel.
    if is_batch && let Some(dims) = meta.dims(x) {
        if matches!(args.get(5, "training"), Some(Value::Bool(Some(true))))
            && let Some(message) = super::forward::single_value_per_channel(meta, &dims)
        {
            return raise(Code::LayerInput, message);
        }
        if let Some(channels) = dims.get(1) {
            for (index, what) in [
                (1, "running_mean"),
                (2, "running_var"),
                (3, "weight"),
                (4, "bias"),
            ] {
                let Some(t) = args.tensor(index, what) else {
                    continue;
                };
                let Some(numel) = meta.dims(&t).map(|d| crate::rules::shape::numel(&d)) else {
                    continue;
                };
                if let Some(message) = super::norm::per_channel_error(meta, what, channels, &numel)
                {
                    return raise(Code::LayerInput, message);
                }
            }
        }
    }
    if let Some(message) = mixed_dtype(x, args, name) {
        return raise(Code::DtypeMismatch, message);
    }
    if name == "group_norm"
        && let Some(dims) = meta.dims(x)
        && let (Some(c), Some(g)) = (
            dims.get(1).and_then(|c| meta.env().value(c)),
            args.int(1, "num_groups"),
        )
        && g > 0
        && c % g != 0
    {
        let message = format!(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and num_groups={g}",
            meta.fmt_dims(&dims)
        );
        return raise(Code::LayerInput, message);
    }
    Ok(out_shape(meta, x, x.shape.clone(), x.dtype, device, name))
}

/// `F.glu`: the dim halved, its halves multiplied.
pub(super) fn glu(meta: &mut dyn Meta, call: FunctionalCall<'_>) -> RuleResult {
    let FunctionalCall {
        name,
        x,
        args,
        device,
        ..
    } = call;
    let Some(mut dims) = meta.dims(x) else {
        return Ok(Value::Unknown);
    };
    let Some(d) = args.int_or(1, "dim", -1) else {
        return Ok(out_var(meta, x, x.dtype, device, name));
    };
    let d = match crate::rules::shape::wrap_dim(d, dims.len()) {
        Ok(d) => d,
        Err(message) => {
            return raise(Code::DimOutOfRange, message);
        }
    };
    if let Some(size) = dims.get(d).and_then(|s| meta.env().value(s))
        && size % 2 != 0
    {
        let message = format!("Halving dimension must be even, but dimension {d} is size {size}");
        return raise(Code::GluSize, message);
    }
    if dims.is_empty() {
        return Ok(Value::Unknown);
    }
    dims[d] = dims[d]
        .floordiv(&Dim::konst(2))
        .unwrap_or_else(|| meta.env_mut().anonymous());
    Ok(out_known(meta, x, dims, x.dtype, device, name))
}
