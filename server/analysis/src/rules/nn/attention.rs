//! Attention and transformer layers: `nn.MultiheadAttention` and the `nn.Transformer*` width.

use std::rc::Rc;

use shapels_shapes::Dim;

use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{out_known, out_shape};
use crate::value::{Device, Layer, Value};

use super::forward::LayerCall;

pub(super) fn layer_d_model(meta: &mut dyn Meta, layer: &Rc<Layer>) -> Option<Dim> {
    match &*layer.kind {
        "TransformerEncoderLayer" | "TransformerDecoderLayer" => layer
            .setting("d_model")
            .cloned()
            .and_then(|v| meta.as_dim(&v)),
        kind @ ("TransformerEncoder" | "TransformerDecoder") => {
            match layer.setting(if kind == "TransformerEncoder" {
                "encoder_layer"
            } else {
                "decoder_layer"
            }) {
                Some(Value::Layer(inner)) => layer_d_model(meta, &inner.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

pub(super) fn mha(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
    args: &Args,
    device: Option<Device>,
) -> RuleResult {
    let embed = layer
        .setting("embed_dim")
        .cloned()
        .and_then(|v| meta.as_dim(&v));
    let heads = layer
        .setting("num_heads")
        .cloned()
        .and_then(|v| meta.as_dim(&v));
    let batch_first = matches!(
        layer
            .kwargs
            .iter()
            .find(|(k, _)| &**k == "batch_first")
            .map(|(_, v)| v),
        Some(Value::Bool(Some(true)))
    );
    let (Some(q), Some(k)) = (args.tensor(0, "query"), args.tensor(1, "key")) else {
        return Ok(Value::Unknown);
    };
    // Inputs of unknown rank are taken as batched, the common case.
    let (q_names, kv_names): (&[&str], &[&str]) = if batch_first {
        (&["N", "L", "E"], &["N", "S", "E_kv"])
    } else {
        (&["L", "N", "E"], &["S", "N", "E_kv"])
    };
    meta.demand_rank(&q.shape, q_names);
    meta.demand_rank(&k.shape, kv_names);
    if let Some(v) = args.tensor(2, "value") {
        meta.demand_rank(&v.shape, kv_names);
    }
    let (Some(qd), Some(kd)) = (meta.dims(&q), meta.dims(&k)) else {
        return Ok(Value::Unknown);
    };
    // A key padding mask is [N, S] (or [S] unbatched): one of unknown rank
    // takes that shape.
    if let Some(mask) = args.tensor(3, "key_padding_mask") {
        let ns = match kd.len() {
            3 if batch_first => Some(vec![kd[0].clone(), kd[1].clone()]),
            3 => Some(vec![kd[1].clone(), kd[0].clone()]),
            2 => Some(vec![kd[0].clone()]),
            _ => None,
        };
        if let Some(ns) = ns {
            meta.adopt_shape(&mask.shape, &ns);
        }
    }
    if let (Some(e), Some(last)) = (&embed, qd.last()) {
        if meta.env().known_different(last, e) {
            let message = format!(
                "was expecting embedding dimension of {}, but got {}",
                meta.fmt_dim(e),
                meta.fmt_dim(last)
            );
            return raise(Code::LayerInput, message);
        }
        let _ = meta.require_equal(last, e);
    }
    if let Some(message) = mask_error(
        meta,
        args,
        &qd,
        &kd,
        heads.as_ref(),
        batch_first,
        extra_positions(layer),
    ) {
        return raise(Code::LayerInput, message);
    }
    // The keys are split into heads with the query's batch, so a call that
    // goes through holds one batch: the context's `N` is the query's, not a
    // second size (`N_2`) of its own.
    if qd.len() == 3 && kd.len() == 3 {
        let b = usize::from(!batch_first);
        let _ = meta.require_equal(&kd[b], &qd[b]);
    }
    // The keys and values are projected from `kdim` and `vdim` features
    // (the embedding's when not given): the context's last size is that.
    for (index, name, setting) in [(1, "key", "kdim"), (2, "value", "vdim")] {
        let width = layer
            .setting(setting)
            .filter(|v| !v.is_none())
            .cloned()
            .and_then(|v| meta.as_dim(&v))
            .or_else(|| embed.clone());
        if let (Some(width), Some(t)) = (width, args.tensor(index, name))
            && let Some(last) = meta.dims(&t).and_then(|d| d.last().cloned())
            && !meta.env().known_different(&last, &width)
        {
            let _ = meta.require_equal(&last, &width);
        }
    }
    let need_weights = args.flag(4, "need_weights", true);
    let average = args.flag(6, "average_attn_weights", true) == Some(true);
    let extra = extra_positions(layer);
    let kd: Vec<Dim> = if extra > 0 && kd.len() == 3 {
        let mut kd = kd;
        let s = if batch_first { 1 } else { 0 };
        kd[s] = kd[s].add(&Dim::konst(extra));
        kd
    } else if extra > 0 && kd.len() == 2 {
        let mut kd = kd;
        kd[0] = kd[0].add(&Dim::konst(extra));
        kd
    } else {
        kd
    };
    let out = out_known(
        meta,
        &q,
        qd.clone(),
        q.dtype,
        device.clone(),
        "nn.MultiheadAttention",
    );
    let weights = if need_weights == Some(false) {
        Value::None
    } else if qd.len() == 3 {
        let (l, n) = if batch_first {
            (qd[1].clone(), qd[0].clone())
        } else {
            (qd[0].clone(), qd[1].clone())
        };
        let s = if batch_first {
            kd[1].clone()
        } else {
            kd[0].clone()
        };
        let shape = if average {
            vec![n, l, s]
        } else {
            vec![n, heads.unwrap_or_else(|| meta.env_mut().anonymous()), l, s]
        };
        out_known(meta, &q, shape, q.dtype, device, "nn.MultiheadAttention")
    } else {
        out_known(
            meta,
            &q,
            vec![qd[0].clone(), kd[0].clone()],
            q.dtype,
            device,
            "nn.MultiheadAttention",
        )
    };
    Ok(Value::tuple(vec![out, weights]))
}

/// The key/value positions `add_bias_kv` and `add_zero_attn` each append.
fn extra_positions(layer: &Layer) -> i64 {
    ["add_bias_kv", "add_zero_attn"]
        .iter()
        .filter(|k| matches!(layer.setting(k), Some(Value::Bool(Some(true)))))
        .count() as i64
}

/// What `F.multi_head_attention_forward` raises about the masks of a
/// batched call, in its order: the attention mask against `(L, S)` or
/// `(N*num_heads, L, S)` (the source length before the extra positions),
/// then the key padding mask against `(N, S)` (after them). A batch-first
/// tensor read as sequence-first (`batch_first=False`, the default) shows
/// here as swapped sizes, as it does in torch.
fn mask_error(
    meta: &dyn Meta,
    args: &Args,
    qd: &[Dim],
    kd: &[Dim],
    heads: Option<&Dim>,
    batch_first: bool,
    extra: i64,
) -> Option<String> {
    if qd.len() != 3 || kd.len() != 3 {
        return None;
    }
    let (l, n, s) = if batch_first {
        (&qd[1], &qd[0], &kd[1])
    } else {
        (&qd[0], &qd[1], &kd[0])
    };
    let differs = |got: &[Dim], want: &[Option<Dim>]| {
        got.iter()
            .zip(want)
            .any(|(g, w)| w.as_ref().is_some_and(|w| meta.env().known_different(g, w)))
    };
    let tuple = |dims: &[Option<Dim>]| {
        let parts: Vec<String> = dims
            .iter()
            .map(|d| {
                d.as_ref()
                    .map_or_else(|| "?".to_string(), |d| meta.fmt_dim(d))
            })
            .collect();
        format!("({})", parts.join(", "))
    };
    if let Some(mask) = args.tensor(5, "attn_mask")
        && let Some(md) = meta.dims(&mask)
    {
        let (rank, want) = match md.len() {
            2 => ("2D", vec![Some(l.clone()), Some(s.clone())]),
            3 => (
                "3D",
                vec![heads.map(|h| n.mul(h)), Some(l.clone()), Some(s.clone())],
            ),
            r => return Some(format!("attn_mask's dimension {r} is not supported")),
        };
        if differs(&md, &want) {
            return Some(format!(
                "The shape of the {rank} attn_mask is torch.Size({}), but should be {}.",
                meta.fmt_dims(&md),
                tuple(&want)
            ));
        }
    }
    // The keys are split into heads with the query's batch: a key of
    // another batch size fails that `view`.
    let nk = if batch_first { &kd[0] } else { &kd[1] };
    if meta.env().known_different(nk, n)
        && let Some(h) = heads
        && let Some(e) = kd.last()
        && let Some(head_dim) = e.floordiv(h)
    {
        let numel = kd.iter().fold(Dim::konst(1), |acc, d| acc.mul(d));
        return Some(format!(
            "shape '[{}, {}, {}]' is invalid for input of size {}",
            meta.fmt_dim(s),
            meta.fmt_dim(&n.mul(h)),
            meta.fmt_dim(&head_dim),
            meta.fmt_dim(&numel)
        ));
    }
    if let Some(mask) = args.tensor(3, "key_padding_mask")
        && let Some(md) = meta.dims(&mask)
        && md.len() == 2
    {
        // The extra positions pad the key padding mask too: torch compares
        // both lengths after them.
        let pad = |d: &Dim, i: usize| {
            if i == 1 {
                d.add(&Dim::konst(extra))
            } else {
                d.clone()
            }
        };
        for (i, want) in [n, s].into_iter().enumerate() {
            if meta.env().known_different(&md[i], want) {
                return Some(format!(
                    "Expected key_padded_mask.shape[{i}] to be {}, but got {}",
                    meta.fmt_dim(&pad(want, i)),
                    meta.fmt_dim(&pad(&md[i], i))
                ));
            }
        }
    }
    None
}

/// `nn.Transformer(src, tgt)`: the target's shape, after the checks its
/// `forward` makes before any layer runs: a batched `src` and `tgt` hold
/// one batch (dim 0 with `batch_first`, else dim 1), and both end in the
/// model's width.
pub(super) fn transformer_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> RuleResult {
    let (layer, src) = (call.layer, call.x);
    let Some(tgt) = call.args.tensor(1, "tgt") else {
        return Ok(Value::Unknown);
    };
    if let (Some(sd), Some(td)) = (meta.dims(src), meta.dims(&tgt)) {
        let batch = if matches!(layer.setting("batch_first"), Some(Value::Bool(Some(true)))) {
            0
        } else {
            1
        };
        if sd.len() == 3 && td.len() > batch && meta.env().known_different(&sd[batch], &td[batch]) {
            return raise(
                Code::LayerInput,
                "the batch number of src and tgt must be equal".to_string(),
            );
        }
        let d_model = layer
            .setting("d_model")
            .cloned()
            .and_then(|v| meta.as_dim(&v));
        if let (Some(d_model), Some(s), Some(t)) = (d_model, sd.last(), td.last())
            && (meta.env().known_different(s, &d_model) || meta.env().known_different(t, &d_model))
        {
            return raise(
                Code::LayerInput,
                "the feature number of src and tgt must be equal to d_model".to_string(),
            );
        }
    }
    Ok(out_shape(
        meta,
        &tgt,
        tgt.shape.clone(),
        tgt.dtype,
        call.device.clone(),
        "nn.Transformer",
    ))
}

/// A Transformer encoder or decoder layer, or a stack of them: the input's
/// shape, once its last size is the model's width.
pub(super) fn transformer_stack_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> RuleResult {
    let (layer, x) = (call.layer, call.x);
    let kind = &*layer.kind;
    let device = call.device.clone();
    let (Some(dims), Some(d_model)) = (meta.dims(x), layer_d_model(meta, layer)) else {
        return Ok(out_shape(meta, x, x.shape.clone(), x.dtype, device, kind));
    };
    if let Some(last) = dims.last() {
        if meta.env().known_different(last, &d_model) {
            // With `norm_first` the first op is the LayerNorm.
            let norm_first = |l: &Layer| {
                matches!(
                    l.declared_setting("norm_first"),
                    Some(Value::Bool(Some(true)))
                )
            };
            let inner_norm_first = match layer.args.first() {
                Some(Value::Layer(inner)) => norm_first(inner),
                _ => false,
            };
            let message = if norm_first(layer) || inner_norm_first {
                format!(
                    "Given normalized_shape=[{}], expected input with shape [*, {}], but got input of size{}",
                    meta.fmt_dim(&d_model),
                    meta.fmt_dim(&d_model),
                    meta.fmt_dims(&dims)
                )
            } else {
                format!(
                    "was expecting embedding dimension of {}, but got {}",
                    meta.fmt_dim(&d_model),
                    meta.fmt_dim(last)
                )
            };
            return raise(Code::LayerInput, message);
        }
        let _ = meta.require_equal(last, &d_model);
    }
    // A decoder's cross-attention splits the memory into heads with the
    // target's batch: a memory of another batch fails there.
    if let Some(memory) = call.args.tensor(1, "memory")
        && let Some(md) = meta.dims(&memory)
    {
        let decoder = match kind {
            "TransformerDecoderLayer" => Some(layer.clone()),
            "TransformerDecoder" => match layer.args.first() {
                Some(Value::Layer(inner)) if &*inner.kind == "TransformerDecoderLayer" => {
                    Some(inner.clone())
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(decoder) = decoder {
            let heads = decoder
                .setting("nhead")
                .cloned()
                .and_then(|v| meta.as_dim(&v));
            let batch_first = matches!(
                decoder.setting("batch_first"),
                Some(Value::Bool(Some(true)))
            );
            let no_masks = Args::new(Vec::new(), Vec::new());
            if let Some(message) =
                mask_error(meta, &no_masks, &dims, &md, heads.as_ref(), batch_first, 0)
            {
                return raise(Code::LayerInput, message);
            }
        }
    }
    Ok(out_known(meta, x, dims, x.dtype, device, kind))
}
