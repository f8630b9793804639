//! Module objects on the interpreter's side: layer attributes, container items, children, `to`, `train`/`eval`, `parameters()`.
//!
//! What torch's `nn.Module` does as a Python object (holding submodules,
//! moving them, switching their mode) changes objects the memo numbers, so
//! it lives here, beside the interpreter; a layer's forward is a shape
//! function of `rules::nn`, which this calls.

use crate::rules::meta::Meta;
use rustc_hash::{FxHashMap, FxHashSet};
use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use crate::interp::Interp;
use crate::mutation::Shared;
use crate::rules::Args;
use crate::rules::nn::parameters::{first_parameter, layer_param};
use crate::rules::nn::{Forward, call_layer};
use crate::value::{DType, Device, Kwargs, Layer, Tensor, Value};

pub(crate) use super::module_tree::child_modules;
use super::module_tree::{KnownModules, all_modules, known_children};

/// Attributes of a built-in layer: its parameters and constructor settings.
pub(crate) fn layer_attr(
    interp: &mut Interp<'_>,
    object: &Value,
    layer: &Rc<Layer>,
    attr: &str,
) -> Value {
    let kind = &*layer.kind;
    let named = match (kind, attr) {
        // torch keeps a normalized shape as a tuple.
        ("LayerNorm" | "RMSNorm", "normalized_shape") => {
            layer.setting(attr).cloned().map(|v| match v {
                Value::Int(_) => Value::tuple(vec![v]),
                other => other,
            })
        }
        ("MultiheadAttention", "embed_dim" | "num_heads") => layer.setting(attr).cloned(),
        // A pool's stride is the kernel size unless given (torch keeps it
        // so): a subclass passes `self.stride` on to `F.avg_pool2d`.
        ("MaxPool1d" | "MaxPool2d" | "MaxPool3d" | "AvgPool2d" | "AvgPool3d", "stride") => {
            match layer.setting("stride") {
                Some(v) if !v.is_none() => Some(v.clone()),
                _ => layer.setting("kernel_size").cloned(),
            }
        }
        _ => None,
    };
    if let Some(v) = named {
        return v;
    }
    if let ("Transformer", "encoder" | "decoder") = (kind, attr) {
        return transformer_stack(layer, attr);
    }
    if let Some(v) = conv_setting(layer, attr) {
        return v;
    }
    if matches!(
        attr,
        "weight" | "bias" | "running_mean" | "running_var" | "num_batches_tracked"
    ) {
        return layer_param(interp, layer, attr);
    }
    if let Some(def) = layer.def()
        && def.keeps_setting(attr)
    {
        return layer.setting_or_default(attr).unwrap_or(Value::Unknown);
    }
    if let Some(i) = layer.keys.borrow().iter().position(|k| &**k == attr) {
        return layer
            .children
            .borrow()
            .get(i)
            .cloned()
            .unwrap_or(Value::Unknown);
    }
    Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr))
}

/// A convolution's settings as torch keeps them: one entry per spatial dim
/// (`Conv2d(3, 8, 7, padding=3).padding` is `(3, 3)`), `groups` a number,
/// a padding string (`"same"`) as given. What a subclass passes on to
/// `F.conv2d(x, w, self.bias, self.stride, self.padding, ...)`.
fn conv_setting(layer: &Rc<Layer>, attr: &str) -> Option<Value> {
    let def = layer.def().filter(|d| d.forward == Forward::Conv)?;
    let spatial = def.spatial;
    let default = match attr {
        "kernel_size" => None,
        "stride" | "dilation" | "groups" => Some(1),
        "padding" | "output_padding" if def.has_param(attr) => Some(0),
        _ => return None,
    };
    let given = layer
        .setting(attr)
        .cloned()
        .or_else(|| default.map(Value::int));
    Some(match given {
        Some(Value::Int(d)) if attr != "groups" => Value::tuple(vec![Value::Int(d); spatial]),
        Some(v) => v,
        None => Value::Unknown,
    })
}

/// `transformer.encoder` / `transformer.decoder` of an `nn.Transformer`: the
/// stack of layers of its width, called on its own (`encode`/`decode` in a
/// translation model); torch builds them from the same `d_model` (512 when
/// not given) and `batch_first`.
fn transformer_stack(transformer: &Rc<Layer>, part: &str) -> Value {
    let d_model = transformer
        .setting("d_model")
        .cloned()
        .unwrap_or(Value::int(512));
    let settings: Vec<(Rc<str>, Value)> = transformer
        .kwargs
        .iter()
        .filter(|(k, _)| &**k == "batch_first")
        .cloned()
        .collect();
    let (stack, layer) = match part {
        "encoder" => ("TransformerEncoder", "TransformerEncoderLayer"),
        _ => ("TransformerDecoder", "TransformerDecoderLayer"),
    };
    let like = |kind: &str, args: Vec<Value>, kwargs: Vec<(Rc<str>, Value)>| {
        Value::Layer(Rc::new(Layer {
            kind: Rc::from(kind),
            args,
            kwargs,
            device: Shared::new(transformer.device.borrow().clone()),
            dtype: Shared::new(*transformer.dtype.borrow()),
            origin: transformer.origin,
            mode: transformer.mode,
            children: Shared::new(Vec::new()),
            keys: Shared::new(Vec::new()),
            params: Shared::new(FxHashMap::default()),
            unknown_children: Shared::new(false),
            training: Shared::new(transformer.training.get()),
            written: None,
        }))
    };
    let inner = like(layer, vec![d_model], settings.clone());
    like(stack, vec![inner], settings)
}

/// `seq[0]`, `blocks[1:]`, `heads["q"]`.
pub(crate) fn container_item(interp: &mut Interp<'_>, layer: &Rc<Layer>, index: &[Value]) -> Value {
    if layer.unknown_children.get() {
        // Any one item of a container of unknown length is like the layers
        // its loop made; a slice of it has unknown length too.
        return match index {
            [Value::Int(_)] => interp.element_of(&Value::Layer(layer.clone())),
            _ => Value::Unknown,
        };
    }
    let children = layer.children.borrow().clone();
    match index {
        [Value::Int(d)] => match d.as_const() {
            Some(i) => {
                let n = children.len() as i64;
                let i = if i < 0 { i + n } else { i };
                children.get(i as usize).cloned().unwrap_or(Value::Unknown)
            }
            None => Value::Unknown,
        },
        [Value::Str(k)] => match layer.keys.borrow().iter().position(|x| x == k) {
            Some(i) => children.get(i).cloned().unwrap_or(Value::Unknown),
            None => Value::Unknown,
        },
        [Value::Slice(lo, hi, step)] => {
            let Some(picked) = crate::interp::slice_indices(children.len(), lo, hi, step) else {
                return Value::Unknown;
            };
            Value::Layer(Rc::new(Layer {
                kind: layer.kind.clone(),
                args: Vec::new(),
                kwargs: Vec::new(),
                device: Shared::new(layer.device.borrow().clone()),
                dtype: Shared::new(*layer.dtype.borrow()),
                origin: layer.origin,
                mode: layer.mode,
                children: Shared::new(picked.into_iter().map(|i| children[i].clone()).collect()),
                keys: Shared::new(Vec::new()),
                params: Shared::new(FxHashMap::default()),
                unknown_children: Shared::new(false),
                training: Shared::new(layer.training.get()),
                written: None,
            }))
        }
        _ => Value::Unknown,
    }
}

/// The children a layer that a loop over a container handed out stands
/// for (see `Interp::stands_for`); none for any other module.
fn stood_for(interp: &Interp<'_>, module: &Value) -> Rc<Vec<Value>> {
    match module {
        Value::Layer(l) => interp
            .stands_for
            .get(&(Rc::as_ptr(l) as usize))
            .map(|(_, children)| children.clone())
            .unwrap_or_default(),
        _ => Rc::default(),
    }
}

/// Methods of modules (user instances and built-in layers): `to`, `eval`, `register_buffer`, ...
pub(crate) fn module_method(
    interp: &mut Interp<'_>,
    receiver: &Value,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
    range: TextRange,
) -> Value {
    let args = Args::new(args, kwargs);
    match name {
        "to" | "cuda" | "cpu" | "half" | "float" | "double" | "bfloat16" => {
            let device = match name {
                "cuda" => Some(crate::rules::creation::methods::cuda_device(
                    args.get(0, "device"),
                )),
                "cpu" => Some(Some(Device::Cpu)),
                "to" => args
                    .kw("device")
                    .or_else(|| {
                        args.pos.iter().find(|v| {
                            matches!(
                                v,
                                Value::Device(_)
                                    | Value::Str(_)
                                    | Value::Text
                                    | Value::Unknown
                                    | Value::Opaque(_)
                            )
                        })
                    })
                    .map(crate::rules::creation::device_of),
                _ => None,
            };
            let dtype = match name {
                "half" => Some(DType::Float16),
                "float" => Some(DType::Float32),
                "double" => Some(DType::Float64),
                "bfloat16" => Some(DType::BFloat16),
                _ => args
                    .kw("dtype")
                    .or_else(|| args.pos.iter().find(|v| matches!(v, Value::DType(_))))
                    .and_then(|v| match v {
                        Value::DType(d) => Some(*d),
                        _ => None,
                    }),
            };
            move_module(interp, receiver, device.clone(), dtype, 0);
            for child in stood_for(interp, receiver).iter() {
                move_module(interp, child, device.clone(), dtype, 0);
            }
            receiver.clone()
        }
        // Any number of parameters of any shapes, where the module lives:
        // `next(self.parameters())` is how code asks a module for its device
        // and dtype, and a loop over them (an EMA update) sees every shape.
        "parameters" | "buffers" => {
            let (device, dtype) = match (first_parameter(interp, receiver, 0), receiver) {
                (Some(Value::Tensor(first)), _) => (first.device.clone(), first.dtype),
                (_, Value::Layer(l)) => (l.device.borrow().clone(), *l.dtype.borrow()),
                // Not moved: made where torch's defaults put it (unknown in
                // a file that changes them).
                (_, Value::Instance(inst)) => (
                    inst.device
                        .borrow()
                        .clone()
                        .or(interp.defaults.device.clone()),
                    interp.defaults.float,
                ),
                _ => (None, None),
            };
            let shape = interp.fresh_rank_var();
            let mut t = interp.new_tensor(shape, dtype, device, "parameter");
            t.is_param = true;
            let t = Value::Tensor(Rc::new(t));
            interp.summary_parameters_of(receiver, &t);
            Value::Many(Rc::new(t), None)
        }
        "eval" | "train" => {
            // `train(mode=True)`; `eval()` is `train(False)`.
            let mode = if name == "eval" {
                Some(false)
            } else {
                match args.pos.first().or_else(|| args.kw("mode")) {
                    None => Some(true),
                    Some(Value::Bool(b)) => *b,
                    Some(_) => None,
                }
            };
            set_training(interp, receiver, mode);
            for child in stood_for(interp, receiver).iter() {
                set_training(interp, child, mode);
            }
            receiver.clone()
        }
        "requires_grad_" => {
            if matches!(args.get(0, "requires_grad"), Some(Value::Bool(Some(false)))) {
                interp.summary_freeze_module(receiver);
            }
            receiver.clone()
        }
        "apply" | "share_memory" | "zero_grad_self" => receiver.clone(),
        // A container's children, or those of a subclass of one
        // (`class MixedConv2d(nn.ModuleDict)`), which keeps them in its
        // layer part.
        "add_module" | "register_module" if container_of(receiver).is_some() => {
            if let (Some(l), Some(child)) = (container_of(receiver), args.pos.get(1)) {
                add_child(interp, &l, args.pos.first(), child.clone());
            }
            Value::None
        }
        "insert" => {
            if let (Value::Layer(l), Some(Value::Int(at)), Some(child)) =
                (receiver, args.pos.first(), args.pos.get(1))
            {
                let mut children = l.children.write(&mut interp.epoch);
                let len = children.len() as i64;
                // Torch renumbers the children by position: a container
                // whose children have names of their own (`add_module`)
                // cannot take an insert (a `KeyError` in `Sequential`).
                let numbered = l
                    .keys
                    .borrow()
                    .iter()
                    .enumerate()
                    .all(|(i, k)| **k == *i.to_string());
                match interp.env.value(at) {
                    Some(i) if numbered && (-len..=len).contains(&i) => {
                        let i = if i < 0 { i + len } else { i };
                        children.insert(i as usize, child.clone());
                        l.keys.write(&mut interp.epoch).clear();
                    }
                    _ => l.unknown_children.set(true, &mut interp.epoch),
                }
            }
            Value::None
        }
        "register_buffer" | "register_parameter" | "add_module" | "register_module" => {
            // `register_buffer(name, tensor)`, `register_parameter(name,
            // param)`, `add_module(name, module)`, by position or keyword.
            let value_keyword = match name {
                "register_buffer" => "tensor",
                "register_parameter" => "param",
                _ => "module",
            };
            if let (Some(Value::Str(n)), Some(v)) =
                (args.get(0, "name"), args.get(1, value_keyword))
            {
                interp.set_attr(receiver, &n.clone(), v.clone());
            }
            Value::None
        }
        "forward" => match receiver {
            Value::Layer(l) => call_layer(interp, l, args.pos, args.kw, range),
            _ => Value::Unknown,
        },
        "append" => {
            if let (Value::Layer(l), Some(v)) = (receiver, args.pos.first()) {
                l.children.write(&mut interp.epoch).push(v.clone());
                // Appended in a loop that runs an unknown number of times.
                if interp.unknown_loops > 0 {
                    l.unknown_children.set(true, &mut interp.epoch);
                }
            }
            Value::None
        }
        "extend" => {
            if let (Value::Layer(l), Some(v)) = (receiver, args.pos.first()) {
                let items = interp.iterate(v).unwrap_or_default();
                l.children.write(&mut interp.epoch).extend(items);
            }
            Value::None
        }
        // A container whose children the analysis could not enumerate has
        // keys, values and items it cannot list either.
        "keys" | "values" | "items" if matches!(receiver, Value::Layer(l) if l.unknown_children.get()) => {
            Value::Unknown
        }
        "keys" => match receiver {
            Value::Layer(l) => Value::list(
                l.keys
                    .borrow()
                    .iter()
                    .map(|k| Value::Str(k.clone()))
                    .collect(),
            ),
            _ => Value::Unknown,
        },
        "values" => match receiver {
            Value::Layer(l) => Value::list(l.children.borrow().clone()),
            _ => Value::Unknown,
        },
        // The module tree, as torch walks it (`for name, child in
        // module.named_children(): setattr(module, name, LoRA(child))`).
        "children" | "named_children" | "modules" | "named_modules" => {
            let walk = if name.ends_with("children") {
                known_children(receiver)
            } else {
                let mut seen = FxHashSet::default();
                let mut entries = Vec::new();
                let complete = all_modules(
                    receiver,
                    Some(""),
                    name == "named_modules",
                    0,
                    &mut seen,
                    &mut entries,
                );
                Some(KnownModules { entries, complete })
            };
            let Some(walk) = walk else {
                return Value::Unknown;
            };
            let items: Vec<Value> = walk
                .entries
                .into_iter()
                .map(|(path, v)| {
                    if name.starts_with("named") {
                        Value::tuple(vec![path.map_or(Value::Text, Value::Str), v])
                    } else {
                        v
                    }
                })
                .collect();
            if walk.complete {
                Value::list(items)
            } else {
                Value::Members(Rc::new(items))
            }
        }
        "items" => match receiver {
            Value::Layer(l) => Value::list(
                l.keys
                    .borrow()
                    .iter()
                    .zip(l.children.borrow().iter())
                    .map(|(k, v)| Value::tuple(vec![Value::Str(k.clone()), v.clone()]))
                    .collect(),
            ),
            _ => Value::Unknown,
        },
        // `assign=True` makes the state dict's tensors the module's own,
        // where they live: a model built on the meta device, then loaded
        // onto the GPU, is no longer on meta (which device it is on is
        // not known). A module on a real device is taken to stay there.
        "load_state_dict"
            if !matches!(args.kw("assign"), None | Some(Value::Bool(Some(false))))
                && module_device(interp, receiver) == Some(Device::Meta) =>
        {
            move_module(interp, receiver, Some(None), None, 0);
            for child in stood_for(interp, receiver).iter() {
                move_module(interp, child, Some(None), None, 0);
            }
            Value::Unknown
        }
        "__init__" | "zero_grad" | "load_state_dict" => Value::None,
        _ => Value::Unknown,
    }
}

/// `container.add_module(name, child)` (or `container[name] = child`): the
/// child goes last under its name, or where a child of that name is, which
/// it replaces (as in torch).
pub(crate) fn add_child(
    interp: &mut Interp<'_>,
    layer: &Layer,
    name: Option<&Value>,
    child: Value,
) {
    let mut children = layer.children.write(&mut interp.epoch);
    let mut keys = layer.keys.write(&mut interp.epoch);
    // Keys line up with children; unnamed children go by their position.
    while keys.len() < children.len() {
        let position = keys.len();
        keys.push(Rc::from(position.to_string()));
    }
    match name {
        Some(Value::Str(name)) => match keys.iter().position(|k| k == name) {
            Some(i) => children[i] = child,
            None => {
                children.push(child);
                keys.push(name.clone());
            }
        },
        // A name the analysis cannot read may be one the container holds
        // already: which children it has is then unknown.
        _ => {
            children.push(child);
            keys.push(Rc::from("?"));
            if children.len() > 1 {
                layer.unknown_children.set(true, &mut interp.epoch);
            }
        }
    }
    // Added in a loop that runs an unknown number of times.
    if interp.unknown_loops > 0 {
        layer.unknown_children.set(true, &mut interp.epoch);
    }
}

/// The container a module is: itself, or the layer part of a subclass of one.
pub(crate) fn container_of(module: &Value) -> Option<Rc<Layer>> {
    let layer = match module {
        Value::Layer(l) => l.clone(),
        Value::Instance(inst) => match inst.attrs.borrow().get("__torch_layer__") {
            Some(Value::Layer(l)) => l.clone(),
            _ => return None,
        },
        _ => return None,
    };
    crate::rules::nn::is_container(&layer.kind).then_some(layer)
}

/// Settings of a layer that only its forward reads, which a subclass may
/// write over after `super().__init__` (`self.padding = (0, 0, 0)` of a
/// causal convolution that pads by hand).
const FORWARD_SETTINGS: [&str; 5] = [
    "padding",
    "stride",
    "dilation",
    "padding_mode",
    "output_padding",
];

/// The layer part of a torch layer subclass as its `forward` sees it: with
/// the settings the instance wrote over since construction.
pub(crate) fn with_own_settings(layer: &Rc<Layer>, inst: &crate::value::Instance) -> Rc<Layer> {
    let attrs = inst.attrs.borrow();
    let own: Vec<(Rc<str>, Value)> = FORWARD_SETTINGS
        .iter()
        .filter_map(|k| attrs.get(*k).map(|v| (Rc::from(*k), v.clone())))
        .collect();
    if own.is_empty() {
        return layer.clone();
    }
    let mut kwargs: Vec<(Rc<str>, Value)> = layer
        .kwargs
        .iter()
        .filter(|(k, _)| !own.iter().any(|(o, _)| o == k))
        .cloned()
        .collect();
    kwargs.extend(own);
    // The weights follow from the arguments these settings leave alone:
    // they are kept.
    Rc::new(Layer {
        kwargs,
        ..layer.detached()
    })
}

/// The layer with its parameters of `dtype` (unknown for `None`): what a
/// subclass's `_conv_forward` runs with the weight it cast.
pub(crate) fn with_dtype(layer: &Rc<Layer>, dtype: Option<DType>) -> Rc<Layer> {
    if *layer.dtype.borrow() == dtype {
        return layer.clone();
    }
    let params: FxHashMap<Rc<str>, Value> = layer
        .params
        .borrow()
        .iter()
        .map(|(k, v)| match v {
            Value::Tensor(t) => (
                k.clone(),
                Value::Tensor(Rc::new(Tensor {
                    dtype,
                    ..(**t).clone()
                })),
            ),
            other => (k.clone(), other.clone()),
        })
        .collect();
    Rc::new(Layer {
        dtype: Shared::new(dtype),
        params: Shared::new(params),
        ..layer.detached()
    })
}

/// `module.to(dev)` moves parameters in place, children included.
fn move_module(
    interp: &mut Interp<'_>,
    module: &Value,
    device: Option<Option<Device>>,
    dtype: Option<DType>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    match module {
        Value::Layer(l) => {
            if let Some(d) = &device {
                *l.device.write(&mut interp.epoch) = d.clone();
            }
            if let Some(d) = dtype {
                *l.dtype.write(&mut interp.epoch) = Some(d);
            }
            l.params.write(&mut interp.epoch).clear();
            for child in l.children.borrow().clone() {
                move_module(interp, &child, device.clone(), dtype, depth + 1);
            }
        }
        Value::Instance(inst) => {
            if let Some(d) = &device {
                *inst.device.write(&mut interp.epoch) = d.clone();
            }
            for (k, v) in crate::value::object_entries(&inst.attrs) {
                match moved_tensor(&v, &device, dtype) {
                    Some(moved) => {
                        inst.attrs.write(&mut interp.epoch).insert(k, moved);
                    }
                    None => move_module(interp, &v, device.clone(), dtype, depth + 1),
                }
            }
        }
        _ => {
            for part in held_modules(module) {
                move_module(interp, &part, device.clone(), dtype, depth + 1);
            }
        }
    }
}

/// A tensor attribute (a buffer, a parameter) as `module.to(...)` leaves
/// it: on the device, and of the floating dtype, given. One set on some
/// paths only (`if rot: self.register_buffer('r', r)`) moves alike where
/// it is set. `None` for a value that holds no tensor.
fn moved_tensor(v: &Value, device: &Option<Option<Device>>, dtype: Option<DType>) -> Option<Value> {
    match v {
        Value::Tensor(t) => Some(Value::Tensor(Rc::new(Tensor {
            device: device.clone().unwrap_or_else(|| t.device.clone()),
            dtype: if t.dtype.is_some_and(|d| d.is_floating()) {
                dtype.or(t.dtype)
            } else {
                t.dtype
            },
            ..(**t).clone()
        }))),
        Value::Optional(inner) => {
            moved_tensor(inner, device, dtype).map(|m| Value::Optional(Box::new(m)))
        }
        Value::Either(items) if items.iter().any(|i| matches!(i, Value::Tensor(_))) => {
            let moved: Vec<Value> = items
                .iter()
                .map(|i| moved_tensor(i, device, dtype).unwrap_or_else(|| i.clone()))
                .collect();
            Some(Value::Either(Rc::new(moved)))
        }
        _ => None,
    }
}

/// The modules a value that is not itself one holds: a list's or a
/// tuple's items, a dict's values, each of the objects an attribute set on
/// undecided paths may be (`self.pos_emb = always(0)` on one,
/// `AbsolutePositionalEmbedding(...)` on another), what a maybe-None
/// attribute holds, and the one element of a list of unknown length. A
/// recursive `module.to(device)` or `module.eval()` reaches each, as torch
/// reaches whichever the run made.
fn held_modules(value: &Value) -> Vec<Value> {
    match value {
        Value::List(_) | Value::Tuple(_) => value.items().unwrap_or_default(),
        Value::Dict(d) => d.borrow().iter().map(|(_, v)| v.clone()).collect(),
        Value::Either(items) => items.as_ref().clone(),
        Value::Optional(inner) => vec![(**inner).clone()],
        Value::Many(element, _) => vec![(**element).clone()],
        _ => Vec::new(),
    }
}

/// `module.train(mode)` / `module.eval()`: the mode of every layer the
/// module holds, children included, as torch's recursive `train` sets it.
fn set_training(interp: &mut Interp<'_>, module: &Value, mode: Option<bool>) {
    // The mode is part of a layer's structure, as memo keys see it: each
    // write moves the epoch.
    let mut seen = rustc_hash::FxHashSet::default();
    let mut todo = vec![module.clone()];
    while let Some(v) = todo.pop() {
        match &v {
            Value::Layer(l) if seen.insert(Rc::as_ptr(l) as *const u8 as usize) => {
                l.training.set(mode, &mut interp.epoch);
                todo.extend(l.children.borrow().iter().cloned());
            }
            Value::Instance(inst) if seen.insert(Rc::as_ptr(inst) as *const u8 as usize) => {
                todo.extend(
                    crate::value::object_entries(&inst.attrs)
                        .into_iter()
                        .map(|(_, v)| v),
                );
            }
            Value::Layer(_) | Value::Instance(_) => {}
            _ => todo.extend(held_modules(&v)),
        }
    }
}

/// The device a module's parameters are on, when known: its first
/// parameter's, else where it was put (moved, or built under `with
/// torch.device(...)`).
fn module_device(interp: &mut Interp<'_>, module: &Value) -> Option<Device> {
    match first_parameter(interp, module, 0) {
        Some(Value::Tensor(t)) => t.device.clone(),
        _ => match module {
            Value::Layer(l) => l.device.borrow().clone(),
            Value::Instance(inst) => inst.device.borrow().clone(),
            _ => None,
        },
    }
}
