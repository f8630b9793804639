//! Recurrent layers (`nn.RNN`, `nn.LSTM`, `nn.GRU`) and their cells (`nn.RNNCell`, …): the output and hidden states they return.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::check::{RuleResult, Stop, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::out_known;
use crate::value::{Device, Layer, Tensor, Value};

use super::forward::LayerCall;

/// `nn.RNN`, `nn.LSTM` or `nn.GRU` called on `x` (with the initial state
/// `args[1]`, if given): the output and the final states, or unknown with
/// the diagnostic where torch raises.
pub(super) fn rnn(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
    x: &Rc<Tensor>,
    args: &[Value],
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let result = rnn_rule(meta, layer, x, args, device);
    meta.settle(range, result)
}

/// The rule behind `rnn`: what torch raises is its `Err`.
fn rnn_rule(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
    x: &Rc<Tensor>,
    args: &[Value],
    device: Option<Device>,
) -> RuleResult {
    let is_lstm = &*layer.kind == "LSTM";
    let settings = Recurrent::of(meta, layer);
    // An input of unknown rank is taken as batched, the common case.
    meta.demand_rank(
        &x.shape,
        if settings.batch_first {
            &["N", "L", "H_in"]
        } else {
            &["L", "N", "H_in"]
        },
    );
    let Some(dims) = meta.dims(x) else {
        return Ok(Value::Unknown);
    };
    check_input(meta, layer, &dims)?;
    let shapes = settings.shapes(&dims);
    check_initial_state(meta, is_lstm, args.get(1), &dims, &shapes)?;
    let op = format!("nn.{}", layer.kind);
    let out = out_known(meta, x, shapes.output, x.dtype, device.clone(), &op);
    let h = out_known(meta, x, shapes.hidden, x.dtype, device.clone(), &op);
    Ok(if is_lstm {
        let c = out_known(meta, x, shapes.cell, x.dtype, device, "nn.LSTM");
        Value::tuple(vec![out, Value::tuple(vec![h, c])])
    } else {
        Value::tuple(vec![out, h])
    })
}

/// What a recurrent layer's settings say of the shapes it returns.
struct Recurrent {
    batch_first: bool,
    /// 2 for a bidirectional layer, else 1.
    directions: Dim,
    num_layers: Dim,
    hidden: Dim,
    /// The features of `h_n` and of the output per direction: `proj_size`
    /// when an LSTM projects, else `hidden_size`.
    h_out: Dim,
}

/// The shapes a recurrent layer returns for one input.
struct Shapes {
    output: Vec<Dim>,
    /// `h_n`, the final hidden state.
    hidden: Vec<Dim>,
    /// `c_n`, an LSTM's final cell state.
    cell: Vec<Dim>,
}

impl Recurrent {
    fn of(meta: &mut dyn Meta, layer: &Layer) -> Recurrent {
        let keyword = |n: &str| {
            layer
                .kwargs
                .iter()
                .find(|(k, _)| &**k == n)
                .map(|(_, v)| v.clone())
        };
        let flag = |v: Option<Value>| matches!(v, Some(Value::Bool(Some(true))));
        // A count given but not readable is some count, not the default one.
        let num_layers = match layer.setting("num_layers") {
            None | Some(Value::None) => Dim::konst(1),
            Some(v) => meta.as_dim(v).unwrap_or_else(|| meta.env_mut().anonymous()),
        };
        let hidden_size = layer
            .setting("hidden_size")
            .cloned()
            .unwrap_or(Value::Unknown);
        let hidden = meta.size_dims(&[hidden_size])[0].clone();
        let h_out = match keyword("proj_size") {
            Some(Value::Int(p)) if p.as_const() != Some(0) => p,
            _ => hidden.clone(),
        };
        Recurrent {
            batch_first: flag(keyword("batch_first")),
            directions: Dim::konst(if flag(keyword("bidirectional")) { 2 } else { 1 }),
            num_layers,
            hidden,
            h_out,
        }
    }

    /// The shapes for an input of these dims: `[L, N, H_in]` (or
    /// batch-first `[N, L, H_in]`), or unbatched `[L, H_in]`.
    fn shapes(&self, dims: &[Dim]) -> Shapes {
        let d = &self.directions;
        let layers = d.mul(&self.num_layers);
        let feat = d.mul(&self.h_out);
        if dims.len() == 3 {
            let (seq, batch) = if self.batch_first {
                (&dims[1], &dims[0])
            } else {
                (&dims[0], &dims[1])
            };
            let output = if self.batch_first {
                vec![batch.clone(), seq.clone(), feat]
            } else {
                vec![seq.clone(), batch.clone(), feat]
            };
            Shapes {
                output,
                hidden: vec![layers.clone(), batch.clone(), self.h_out.clone()],
                cell: vec![layers, batch.clone(), self.hidden.clone()],
            }
        } else {
            Shapes {
                output: vec![dims[0].clone(), feat],
                hidden: vec![layers.clone(), self.h_out.clone()],
                cell: vec![layers, self.hidden.clone()],
            }
        }
    }
}

/// The input must be 2-d or 3-d, with `input_size` features; known
/// features are taken as the layer's from here on.
fn check_input(meta: &mut dyn Meta, layer: &Layer, dims: &[Dim]) -> Result<(), Stop> {
    if dims.len() != 2 && dims.len() != 3 {
        let message = format!(
            "{}: Expected input to be 2D or 3D, got {}D instead",
            layer.kind,
            dims.len()
        );
        return raise(Code::LayerInput, message);
    }
    if let Some(input_size) = layer.setting("input_size").and_then(|v| meta.as_dim(v)) {
        let last = &dims[dims.len() - 1];
        if meta.env().known_different(last, &input_size) {
            let message = format!(
                "input.size(-1) must be equal to input_size. Expected {}, got {}",
                meta.fmt_dim(&input_size),
                meta.fmt_dim(last)
            );
            return raise(Code::LayerInput, message);
        }
        let _ = meta.require_equal(last, &input_size);
    }
    Ok(())
}

/// A given initial state (`h_0`, or an LSTM's `(h_0, c_0)`) must have
/// the final state's shape.
fn check_initial_state(
    meta: &mut dyn Meta,
    is_lstm: bool,
    given: Option<&Value>,
    dims: &[Dim],
    shapes: &Shapes,
) -> Result<(), Stop> {
    let given: Vec<(usize, Rc<Tensor>)> = match given {
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
        let want = if i == 0 { &shapes.hidden } else { &shapes.cell };
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
            let which = if is_lstm {
                format!("hidden[{i}] size")
            } else {
                "hidden size".to_string()
            };
            Some(format!(
                "Expected {which} {}, got {}",
                meta.fmt_tuple(want),
                meta.fmt_dims(&hd)
            ))
        } else {
            None
        };
        if let Some(message) = message {
            return raise(Code::LayerInput, message);
        }
    }
    Ok(())
}

/// `nn.RNNCell`, `nn.GRUCell` or `nn.LSTMCell` on one step's input (and
/// its states, `args[1]`): the new state (an LSTM's `(h, c)`), after the
/// checks torch's cell kernels make.
pub(super) fn rnn_cell_layer(meta: &mut dyn Meta, call: &LayerCall<'_>) -> RuleResult {
    let x = call.x;
    let Some(dims) = meta.dims(x) else {
        return Ok(Value::Unknown);
    };
    let hidden = call.setting("hidden_size").unwrap_or(Value::Unknown);
    let h = meta.size_dims(&[hidden])[0].clone();
    // torch's cell kernels check the input's size, then each hidden state
    // (an LSTM's `h` is hidden0, its `c` hidden1), then the products' dtypes;
    // a 1-d input and its states are seen with a batch of one.
    if let (Some(last), Some(input_size)) = (dims.last(), call.setting("input_size"))
        && let Some(input_size) = meta.as_dim(&input_size)
        && meta.env().known_different(last, &input_size)
    {
        let message = format!(
            "input has inconsistent input_size: got {} expected {}",
            meta.fmt_dim(last),
            meta.fmt_dim(&input_size)
        );
        return raise(Code::LayerInput, message);
    }
    // The states by their place: an LSTM's `c` is hidden1 even when its
    // `h` cannot be read.
    let states: Vec<Value> = match call.args.pos.get(1) {
        Some(v @ Value::Tensor(_)) => vec![v.clone()],
        Some(v) => v.items().unwrap_or_default(),
        None => Vec::new(),
    };
    for (label, state) in states.iter().enumerate() {
        let Value::Tensor(state) = state else {
            continue;
        };
        let Some(hd) = meta.dims(state) else {
            continue;
        };
        if hd.len() == 2 && dims.len() == 2 && meta.env().known_different(&hd[0], &dims[0]) {
            let message = format!(
                "Input batch size {} doesn't match hidden{label} batch size {}",
                meta.fmt_dim(&dims[0]),
                meta.fmt_dim(&hd[0])
            );
            return raise(Code::LayerInput, message);
        }
        if hd.len() == dims.len()
            && let Some(size) = hd.last()
            && meta.env().known_different(size, &h)
        {
            let message = format!(
                "hidden{label} has inconsistent hidden_size: got {}, expected {}",
                meta.fmt_dim(size),
                meta.fmt_dim(&h)
            );
            return raise(Code::LayerInput, message);
        }
    }
    let weight_dtype = *call.layer.dtype.borrow();
    if let (Some(xd), Some(wd)) = (x.dtype, weight_dtype)
        && xd != wd
    {
        // With biases the products are `addmm`s, else `mm`s.
        let message = if matches!(call.setting("bias"), Some(Value::Bool(Some(false)))) {
            crate::rules::dtype::mm_dtype_message(xd, wd)
        } else {
            crate::rules::dtype::addmm_dtype_message(xd, wd)
        };
        return raise(Code::DtypeMismatch, message);
    }
    let mut out = dims;
    if let Some(last) = out.last_mut() {
        *last = h;
    }
    let kind = &*call.layer.kind;
    let v = out_known(meta, x, out, x.dtype, call.device.clone(), kind);
    if kind == "LSTMCell" {
        Ok(Value::tuple(vec![v.clone(), v]))
    } else {
        Ok(v)
    }
}
