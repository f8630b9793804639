//! Recurrent layers (`nn.RNN`, `nn.LSTM`, `nn.GRU`): the output and hidden states they return.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::meta::Meta;
use crate::rules::ops::out_known;
use crate::value::{Device, Layer, Tensor, Value};

pub(super) fn rnn(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
    x: &Rc<Tensor>,
    args: &[Value],
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let a = |n: &str| layer.setting(n).cloned();
    let is_lstm = &*layer.kind == "LSTM";
    let flag = |v: Option<Value>| matches!(v, Some(Value::Bool(Some(true))));
    let batch_first = flag(
        layer
            .kwargs
            .iter()
            .find(|(k, _)| &**k == "batch_first")
            .map(|(_, v)| v.clone()),
    );
    let bidirectional = flag(
        layer
            .kwargs
            .iter()
            .find(|(k, _)| &**k == "bidirectional")
            .map(|(_, v)| v.clone()),
    );
    let num_layers = a("num_layers")
        .and_then(|v| meta.as_dim(&v))
        .unwrap_or_else(|| Dim::konst(1));
    let hidden = meta.size_dims(&[a("hidden_size").unwrap_or(Value::Unknown)])[0].clone();
    let proj = layer
        .kwargs
        .iter()
        .find(|(k, _)| &**k == "proj_size")
        .and_then(|(_, v)| {
            if let Value::Int(d) = v {
                Some(d.clone())
            } else {
                None
            }
        });
    let h_out = match &proj {
        Some(p) if p.as_const() != Some(0) => p.clone(),
        _ => hidden.clone(),
    };
    let d = Dim::konst(if bidirectional { 2 } else { 1 });
    // An input of unknown rank is taken as batched, the common case.
    meta.demand_rank(
        &x.shape,
        if batch_first {
            &["N", "L", "H_in"]
        } else {
            &["L", "N", "H_in"]
        },
    );
    let Some(dims) = meta.dims(x) else {
        return Value::Unknown;
    };
    if dims.len() != 2 && dims.len() != 3 {
        let message = format!(
            "{}: Expected input to be 2D or 3D, got {}D instead",
            layer.kind,
            dims.len()
        );
        meta.report(range, Code::LayerInput, message);
        return Value::Unknown;
    }
    if let Some(input_size) = a("input_size").and_then(|v| meta.as_dim(&v)) {
        let last = &dims[dims.len() - 1];
        if meta.env().known_different(last, &input_size) {
            let message = format!(
                "input.size(-1) must be equal to input_size. Expected {}, got {}",
                meta.fmt_dim(&input_size),
                meta.fmt_dim(last)
            );
            meta.report(range, Code::LayerInput, message);
            return Value::Unknown;
        }
        let _ = meta.require_equal(last, &input_size);
    }
    let layers = d.mul(&num_layers);
    let (out_shape, h_shape, c_shape) = if dims.len() == 3 {
        let (seq, batch) = if batch_first {
            (&dims[1], &dims[0])
        } else {
            (&dims[0], &dims[1])
        };
        let feat = d.mul(&h_out);
        let out = if batch_first {
            vec![batch.clone(), seq.clone(), feat]
        } else {
            vec![seq.clone(), batch.clone(), feat]
        };
        (
            out,
            vec![layers.clone(), batch.clone(), h_out.clone()],
            vec![layers.clone(), batch.clone(), hidden.clone()],
        )
    } else {
        (
            vec![dims[0].clone(), d.mul(&h_out)],
            vec![layers.clone(), h_out.clone()],
            vec![layers.clone(), hidden.clone()],
        )
    };
    // a given initial state must have the state's shape
    let given: Vec<(usize, Rc<Tensor>)> = match args.get(1) {
        Some(Value::Tensor(h)) if !is_lstm => vec![(0, h.clone())],
        Some(v) if is_lstm => v
            .items()
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| match v {
                Value::Tensor(t) => Some((i, t)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for (i, h) in given {
        let Some(hd) = meta.dims(&h) else { continue };
        let want = if i == 0 { &h_shape } else { &c_shape };
        let message = if hd.len() != want.len() {
            (dims.len() == 3 && hd.len() == 2).then(|| {
                format!(
                    "For batched 3-D input, hx should also be 3-D but got {}-D tensor",
                    hd.len()
                )
            })
        } else if hd
            .iter()
            .zip(want)
            .any(|(a, b)| meta.env().known_different(a, b))
        {
            let fmt = |meta: &dyn Meta, d: &[Dim]| {
                let items: Vec<String> = d.iter().map(|d| meta.fmt_dim(d)).collect();
                if items.len() == 1 {
                    format!("({},)", items[0])
                } else {
                    format!("({})", items.join(", "))
                }
            };
            let which = if is_lstm {
                format!("hidden[{i}] size")
            } else {
                "hidden size".to_string()
            };
            Some(format!(
                "Expected {which} {}, got {}",
                fmt(meta, want),
                meta.fmt_dims(&hd)
            ))
        } else {
            None
        };
        if let Some(message) = message {
            meta.report(range, Code::LayerInput, message);
            return Value::Unknown;
        }
    }
    let out = out_known(
        meta,
        x,
        out_shape,
        x.dtype,
        device.clone(),
        &format!("nn.{}", layer.kind),
    );
    let h = out_known(
        meta,
        x,
        h_shape,
        x.dtype,
        device.clone(),
        &format!("nn.{}", layer.kind),
    );
    if is_lstm {
        let c = out_known(meta, x, c_shape, x.dtype, device, "nn.LSTM");
        Value::tuple(vec![out, Value::tuple(vec![h, c])])
    } else {
        Value::tuple(vec![out, h])
    }
}
