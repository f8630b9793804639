//! The parameters of built-in layers: their shapes, `parameters()`, and moving them with `to`.

use std::rc::Rc;

use crate::interp::Interp;
use crate::value::{DType, Device, Layer, Shape, Tensor, Value};

use super::is_container;
use super::spatial::spatial;

/// The weight or bias of a layer, as a tensor on the layer's device.
pub(super) fn layer_param(interp: &mut Interp<'_>, layer: &Rc<Layer>, name: &str) -> Value {
    if let Some(v) = layer.params.borrow().get(name) {
        return v.clone();
    }
    let a = |i: usize, n: &str| layer.arg(i, n).cloned().unwrap_or(Value::Unknown);
    let dims: Option<Vec<Value>> = match (&*layer.kind, name) {
        ("Linear", "weight") => Some(vec![a(1, "out_features"), a(0, "in_features")]),
        ("Linear", "bias") => Some(vec![a(1, "out_features")]),
        ("Embedding", "weight") => Some(vec![a(0, "num_embeddings"), a(1, "embedding_dim")]),
        ("LayerNorm", _) => a(0, "normalized_shape")
            .items()
            .or(Some(vec![a(0, "normalized_shape")])),
        ("BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d", "num_batches_tracked") => Some(Vec::new()),
        ("BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d", _) => Some(vec![a(0, "num_features")]),
        ("Conv1d" | "Conv2d" | "Conv3d", "bias") => Some(vec![a(1, "out_channels")]),
        ("Conv1d" | "Conv2d" | "Conv3d", "weight") => {
            let n = layer.kind.as_bytes()[4] - b'0';
            let groups = layer.arg(6, "groups").cloned().unwrap_or(Value::int(1));
            let cin = match (interp.as_dim(&a(0, "in_channels")), interp.as_dim(&groups)) {
                (Some(c), Some(g)) => c.floordiv(&g).map(Value::Int).unwrap_or(Value::Unknown),
                _ => Value::Unknown,
            };
            let mut d = vec![a(1, "out_channels"), cin];
            let kernel = spatial(layer.arg(2, "kernel_size"), n as usize);
            // A kernel size the analysis cannot read is still `n` sizes.
            if kernel.len() == n as usize {
                d.extend(kernel.into_iter().map(Value::Int));
            } else {
                d.extend((0..n).map(|_| Value::Unknown));
            }
            Some(d)
        }
        _ => None,
    };
    let Some(dims) = dims else {
        return Value::Unknown;
    };
    let dims = interp.size_dims(&dims);
    let t = Tensor {
        shape: Shape::known(dims),
        dtype: if name == "num_batches_tracked" {
            Some(DType::Int64)
        } else {
            *layer.dtype.borrow()
        },
        device: layer.device.borrow().clone(),
        origin: layer.origin,
        mode: layer.mode,
        op: Rc::from(format!("nn.{}.{name}", layer.kind)),
        made_at: None,
        is_param: true,
        layout: None,
    };
    let v = Value::Tensor(Rc::new(t));
    layer.params.borrow_mut().insert(Rc::from(name), v.clone());
    v
}

/// The first parameter torch's `parameters()` yields: the module's own
/// parameters first, then its children's, in the order they were assigned.
pub(super) fn first_parameter(
    interp: &mut Interp<'_>,
    module: &Value,
    depth: usize,
) -> Option<Value> {
    if depth > 16 {
        return None;
    }
    match module {
        Value::Instance(inst) => {
            let order = inst.order.borrow().clone();
            let attrs: Vec<Value> = order
                .iter()
                .filter_map(|k| inst.attrs.borrow().get(k).cloned())
                .collect();
            if let Some(p) = attrs
                .iter()
                .find(|v| matches!(v, Value::Tensor(t) if t.is_param))
            {
                return Some(p.clone());
            }
            attrs
                .iter()
                .filter(|v| matches!(v, Value::Layer(_) | Value::Instance(_)))
                .find_map(|v| first_parameter(interp, v, depth + 1))
        }
        Value::Layer(layer) if is_container(&layer.kind) => {
            let children = layer.children.borrow().clone();
            children
                .iter()
                .find_map(|c| first_parameter(interp, c, depth + 1))
        }
        Value::Layer(layer) => match layer_param(interp, layer, "weight") {
            Value::Tensor(t) => Some(Value::Tensor(t)),
            _ => None,
        },
        _ => None,
    }
}

/// `module.to(dev)` moves parameters in place, children included.
pub(super) fn move_module(
    interp: &mut Interp<'_>,
    module: &Value,
    device: Option<Option<Device>>,
    dtype: Option<DType>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    interp.epoch += 1;
    match module {
        Value::Layer(l) => {
            if let Some(d) = &device {
                *l.device.borrow_mut() = d.clone();
            }
            if let Some(d) = dtype {
                *l.dtype.borrow_mut() = Some(d);
            }
            l.params.borrow_mut().clear();
            for child in l.children.borrow().clone() {
                move_module(interp, &child, device.clone(), dtype, depth + 1);
            }
        }
        Value::Instance(inst) => {
            if let Some(d) = &device {
                *inst.device.borrow_mut() = d.clone();
            }
            for (k, v) in crate::value::entries(&inst.attrs) {
                match &v {
                    Value::Tensor(t) => {
                        let moved = Tensor {
                            device: device.clone().unwrap_or_else(|| t.device.clone()),
                            dtype: if t.dtype.is_some_and(|d| d.is_floating()) {
                                dtype.or(t.dtype)
                            } else {
                                t.dtype
                            },
                            ..(**t).clone()
                        };
                        inst.attrs
                            .borrow_mut()
                            .insert(k, Value::Tensor(Rc::new(moved)));
                    }
                    Value::Layer(_) | Value::Instance(_) => {
                        move_module(interp, &v, device.clone(), dtype, depth + 1)
                    }
                    Value::List(_) | Value::Tuple(_) => {
                        for item in v.items().unwrap_or_default() {
                            move_module(interp, &item, device.clone(), dtype, depth + 1);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// `module.train(mode)` / `module.eval()`: the mode of every layer the
/// module holds, children included, as torch's recursive `train` sets it.
pub(super) fn set_training(interp: &mut Interp<'_>, module: &Value, mode: Option<bool>) {
    // The mode is part of a layer's structure, as memo keys see it.
    interp.epoch += 1;
    let mut seen = rustc_hash::FxHashSet::default();
    let mut todo = vec![module.clone()];
    while let Some(v) = todo.pop() {
        match &v {
            Value::Layer(l) if seen.insert(Rc::as_ptr(l) as *const u8 as usize) => {
                l.training.set(mode);
                todo.extend(l.children.borrow().iter().cloned());
            }
            Value::Instance(inst) if seen.insert(Rc::as_ptr(inst) as *const u8 as usize) => {
                todo.extend(
                    crate::value::entries(&inst.attrs)
                        .into_iter()
                        .map(|(_, v)| v),
                );
            }
            Value::List(_) | Value::Tuple(_) => todo.extend(v.items().unwrap_or_default()),
            _ => {}
        }
    }
}
