//! `torch.nn` layers and `torch.nn.functional`: constructors, forward rules, attributes.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::ops::{check_inputs, matmul, op, out_known, out_shape, out_var};
use super::shape::{broadcast, numel};
use crate::interp::Interp;
use crate::report::Severity;
use crate::value::{DType, Device, Layer, Provenance, Shape, Tensor, Value};

type Kwargs = Vec<(Rc<str>, Value)>;

const CONTAINERS: &[&str] = &[
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
];

/// Layers whose forward keeps the input's shape.
const SAME_SHAPE: &[&str] = &[
    "ReLU",
    "ReLU6",
    "GELU",
    "SiLU",
    "Tanh",
    "Sigmoid",
    "LeakyReLU",
    "ELU",
    "SELU",
    "CELU",
    "Mish",
    "Hardswish",
    "Hardsigmoid",
    "Hardtanh",
    "PReLU",
    "Softplus",
    "Softsign",
    "Tanhshrink",
    "Threshold",
    "LogSigmoid",
    "GLU_same",
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "Softmax2d",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "Identity",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LocalResponseNorm",
    "CrossMapLRN2d",
    "Hardshrink",
    "Softshrink",
    "RReLU",
];

pub(crate) fn is_container(kind: &str) -> bool {
    CONTAINERS.contains(&kind)
}

/// `nn.<name>(...)`: a layer value, `nn.Parameter`, or a container.
pub(crate) fn construct(
    interp: &mut Interp<'_>,
    name: &str,
    args: Args,
    range: TextRange,
) -> Value {
    match name {
        "Parameter" | "parameter.Parameter" | "Buffer" => {
            return match args.get(0, "data") {
                Some(Value::Tensor(t)) => Value::Tensor(Rc::new(Tensor {
                    is_param: true,
                    op: Rc::from("nn.Parameter"),
                    ..(**t).clone()
                })),
                _ => Value::Unknown,
            };
        }
        "Module" => return Value::Unknown,
        _ => {}
    }
    let kind: Rc<str> = Rc::from(name.strip_prefix("einops.").unwrap_or(name));
    let mut children = Vec::new();
    let mut keys = Vec::new();
    let mut unknown = false;
    match &*kind {
        "Sequential" => {
            for v in &args.pos {
                match v {
                    Value::Dict(d) => {
                        for (k, v) in d.borrow().iter() {
                            if let Value::Str(k) = k {
                                keys.push(k.clone());
                            }
                            children.push(v.clone());
                        }
                    }
                    other => children.push(other.clone()),
                }
            }
        }
        "ModuleList" | "ParameterList" => match args.get(0, "modules") {
            None | Some(Value::None) => {}
            Some(v) => match v.items() {
                Some(items) => children = items,
                None => unknown = true,
            },
        },
        "ModuleDict" | "ParameterDict" => {
            if matches!(args.get(0, "modules"), Some(v) if !matches!(v, Value::Dict(_) | Value::None))
            {
                unknown = true;
            }
            if let Some(Value::Dict(d)) = args.get(0, "modules") {
                for (k, v) in d.borrow().iter() {
                    if let Value::Str(k) = k {
                        keys.push(k.clone());
                        children.push(v.clone());
                    }
                }
            }
        }
        _ => {}
    }
    check_constructor(interp, &kind, &args, range);
    let device = match args.kw("device") {
        Some(v) => super::creation::device_of(v),
        None => Some(Device::Cpu),
    };
    Value::Layer(Rc::new(Layer {
        kind,
        args: args.pos,
        kwargs: args.kw,
        device: RefCell::new(device),
        dtype: RefCell::new(Some(DType::Float32)),
        origin: if interp.mode.fake {
            Provenance::Fake
        } else {
            Provenance::Real
        },
        mode: interp.mode.id,
        children: RefCell::new(children),
        keys: RefCell::new(keys),
        params: RefCell::new(FxHashMap::default()),
        unknown_children: std::cell::Cell::new(unknown),
    }))
}

fn check_constructor(interp: &mut Interp<'_>, kind: &str, args: &Args, range: TextRange) {
    let int = |i: usize, n: &str| args.int(i, n);
    match kind {
        "Rearrange" | "Reduce" => super::einops::check_layer(interp, kind, args, range),
        "MultiheadAttention" => {
            if let (Some(e), Some(h)) = (int(0, "embed_dim"), int(1, "num_heads"))
                && h > 0
                && e % h != 0
            {
                interp.report(
                    range,
                    Severity::Error,
                    "layer-config",
                    "embed_dim must be divisible by num_heads".into(),
                );
            }
        }
        "GroupNorm" => {
            if let (Some(g), Some(c)) = (int(0, "num_groups"), int(1, "num_channels"))
                && g > 0
                && c % g != 0
            {
                interp.report(
                    range,
                    Severity::Error,
                    "layer-config",
                    format!("num_channels ({c}) must be divisible by num_groups ({g})"),
                );
            }
        }
        "Conv1d" | "Conv2d" | "Conv3d" => {
            let groups = int(6, "groups").unwrap_or(1);
            if groups > 0 {
                if let Some(c) = int(0, "in_channels").filter(|c| c % groups != 0) {
                    let _ = c;
                    interp.report(
                        range.clone(),
                        Severity::Error,
                        "layer-config",
                        "in_channels must be divisible by groups".into(),
                    );
                }
                if let Some(c) = int(1, "out_channels").filter(|c| c % groups != 0) {
                    let _ = c;
                    interp.report(
                        range.clone(),
                        Severity::Error,
                        "layer-config",
                        "out_channels must be divisible by groups".into(),
                    );
                }
            }
            if matches!(args.get(4, "padding"), Some(Value::Str(s)) if &**s == "same")
                && spatial(args.get(3, "stride"), 1)
                    .iter()
                    .any(|s| s.as_const() != Some(1))
            {
                interp.report(
                    range,
                    Severity::Error,
                    "layer-config",
                    "padding='same' is not supported for strided convolutions".into(),
                );
            }
        }
        _ => {}
    }
}

/// Attributes of a built-in layer: its parameters and constructor settings.
pub(crate) fn layer_attr(
    interp: &mut Interp<'_>,
    object: &Value,
    layer: &Rc<Layer>,
    attr: &str,
) -> Value {
    let int_arg = |i: usize, n: &str| layer.arg(i, n).cloned();
    let kind = &*layer.kind;
    let named = match (kind, attr) {
        ("Linear", "in_features") | ("Bilinear", "in1_features") => int_arg(0, "in_features"),
        ("Linear", "out_features") => int_arg(1, "out_features"),
        ("Embedding", "num_embeddings") => int_arg(0, "num_embeddings"),
        ("Embedding", "embedding_dim") => int_arg(1, "embedding_dim"),
        (
            "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose1d" | "ConvTranspose2d"
            | "ConvTranspose3d",
            "in_channels",
        ) => int_arg(0, "in_channels"),
        (
            "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose1d" | "ConvTranspose2d"
            | "ConvTranspose3d",
            "out_channels",
        ) => int_arg(1, "out_channels"),
        ("LayerNorm", "normalized_shape") => int_arg(0, "normalized_shape").map(|v| match v {
            Value::Int(_) => Value::tuple(vec![v]),
            other => other,
        }),
        ("BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d", "num_features") => {
            int_arg(0, "num_features")
        }
        ("LSTM" | "GRU" | "RNN", "hidden_size") => int_arg(1, "hidden_size"),
        ("LSTM" | "GRU" | "RNN", "input_size") => int_arg(0, "input_size"),
        ("LSTM" | "GRU" | "RNN", "num_layers") => {
            Some(int_arg(2, "num_layers").unwrap_or(Value::int(1)))
        }
        ("MultiheadAttention", "embed_dim") => int_arg(0, "embed_dim"),
        ("MultiheadAttention", "num_heads") => int_arg(1, "num_heads"),
        _ => None,
    };
    if let Some(v) = named {
        return v;
    }
    if matches!(
        attr,
        "weight" | "bias" | "running_mean" | "running_var" | "num_batches_tracked"
    ) {
        return layer_param(interp, layer, attr);
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

/// The weight or bias of a layer, as a tensor on the layer's device.
fn layer_param(interp: &mut Interp<'_>, layer: &Rc<Layer>, name: &str) -> Value {
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
            d.extend(
                spatial(layer.arg(2, "kernel_size"), n as usize)
                    .into_iter()
                    .map(Value::Int),
            );
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

/// `seq[0]`, `blocks[1:]`, `heads["q"]`.
pub(crate) fn container_item(interp: &mut Interp<'_>, layer: &Rc<Layer>, index: &[Value]) -> Value {
    if layer.unknown_children.get() {
        return Value::Unknown;
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
            let _ = interp;
            Value::Layer(Rc::new(Layer {
                kind: layer.kind.clone(),
                args: Vec::new(),
                kwargs: Vec::new(),
                device: RefCell::new(layer.device.borrow().clone()),
                dtype: RefCell::new(*layer.dtype.borrow()),
                origin: layer.origin,
                mode: layer.mode,
                children: RefCell::new(picked.into_iter().map(|i| children[i].clone()).collect()),
                keys: RefCell::new(Vec::new()),
                params: RefCell::new(FxHashMap::default()),
                unknown_children: std::cell::Cell::new(false),
            }))
        }
        _ => Value::Unknown,
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
                "cuda" => Some(Some(
                    Device::Cuda(args.int(0, "device").unwrap_or(0) as u32),
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
                                    | Value::Unknown
                                    | Value::Opaque(_)
                            )
                        })
                    })
                    .map(super::creation::device_of),
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
            move_module(interp, receiver, device, dtype, 0);
            receiver.clone()
        }
        // `next(self.parameters())` is how code asks a module for its device
        // and dtype: one parameter of unknown shape where the module lives.
        "parameters" | "buffers" => {
            let (device, dtype) = match receiver {
                Value::Layer(l) => (l.device.borrow().clone(), *l.dtype.borrow()),
                Value::Instance(inst) => (
                    inst.device.borrow().clone().or(Some(Device::Cpu)),
                    Some(DType::Float32),
                ),
                _ => (None, None),
            };
            if let Some(first) = first_parameter(interp, receiver, 0) {
                return Value::list(vec![first]);
            }
            let shape = interp.fresh_rank_var();
            let mut t = interp.new_tensor(shape, dtype, device, "parameter");
            t.is_param = true;
            Value::list(vec![Value::Tensor(Rc::new(t))])
        }
        "eval" | "train" | "requires_grad_" | "apply" | "share_memory" | "zero_grad_self" => {
            receiver.clone()
        }
        "register_buffer" | "register_parameter" | "add_module" | "register_module" => {
            if let (Some(Value::Str(n)), Some(v)) = (args.pos.first(), args.pos.get(1)) {
                interp.set_attr(receiver, n, v.clone());
            }
            Value::None
        }
        "forward" => match receiver {
            Value::Layer(l) => call_layer(interp, receiver, l, args.pos, args.kw, range),
            _ => Value::Unknown,
        },
        "append" => {
            if let (Value::Layer(l), Some(v)) = (receiver, args.pos.first()) {
                interp.epoch += 1;
                l.children.borrow_mut().push(v.clone());
                // Appended in a loop that runs an unknown number of times.
                if interp.unknown_loops > 0 {
                    l.unknown_children.set(true);
                }
            }
            Value::None
        }
        "extend" => {
            if let (Value::Layer(l), Some(v)) = (receiver, args.pos.first()) {
                let items = interp.iterate(v).unwrap_or_default();
                interp.epoch += 1;
                l.children.borrow_mut().extend(items);
            }
            Value::None
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
        "values" | "children" => match receiver {
            Value::Layer(l) => Value::list(l.children.borrow().clone()),
            _ => Value::Unknown,
        },
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
        "__init__" | "zero_grad" | "load_state_dict" => Value::None,
        _ => Value::Unknown,
    }
}

/// The first parameter torch's `parameters()` yields: the module's own
/// parameters first, then its children's, in the order they were assigned.
fn first_parameter(interp: &mut Interp<'_>, module: &Value, depth: usize) -> Option<Value> {
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
            let attrs: Vec<(Rc<str>, Value)> = inst
                .attrs
                .borrow()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (k, v) in attrs {
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

/// Spatial parameters (`kernel_size=3` or `(3, 5)`) as `n` dims.
fn spatial(v: Option<&Value>, n: usize) -> Vec<Dim> {
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
fn pool_settings<'v>(
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

fn spatial_or(v: Option<&Value>, n: usize, default: i64) -> Vec<Dim> {
    match v {
        None | Some(Value::None) => vec![Dim::konst(default); n],
        _ => spatial(v, n),
    }
}

/// Calling a built-in layer: its forward rule.
pub(crate) fn call_layer(
    interp: &mut Interp<'_>,
    callee: &Value,
    layer: &Rc<Layer>,
    args: Vec<Value>,
    kwargs: Kwargs,
    range: TextRange,
) -> Value {
    let kind = layer.kind.clone();
    let a = |i: usize, n: &str| layer.arg(i, n).cloned();
    let input = args.first().cloned().unwrap_or(Value::Unknown);
    let call_args = Args::new(args.clone(), kwargs.clone());
    if kind.as_ref() == "Sequential" && layer.unknown_children.get() {
        return Value::Unknown;
    }
    if kind.as_ref() == "Sequential" {
        let mut v = input;
        for child in layer.children.borrow().clone() {
            v = interp.call_value(&child, vec![v], Vec::new(), range.clone());
        }
        return v;
    }
    let Value::Tensor(x) = &input else {
        return Value::Unknown;
    };
    // An input of unknown rank takes the rank the layer needs, batched.
    let demanded: &[&str] = match &*kind {
        "Conv1d" | "ConvTranspose1d" | "MaxPool1d" | "AvgPool1d" | "BatchNorm1d_3" => {
            &["N", "C", "L"]
        }
        "Conv2d" | "ConvTranspose2d" | "MaxPool2d" | "AvgPool2d" | "BatchNorm2d"
        | "AdaptiveAvgPool2d" | "AdaptiveMaxPool2d" | "InstanceNorm2d" => &["N", "C", "H", "W"],
        "Conv3d" | "ConvTranspose3d" | "MaxPool3d" | "AvgPool3d" | "BatchNorm3d" => {
            &["N", "C", "D", "H", "W"]
        }
        _ => &[],
    };
    if !demanded.is_empty() {
        interp.demand_rank(&x.shape, demanded);
    }
    // The layer's parameters take part in the device and fake-mode checks.
    let weight = layer_param(interp, layer, "weight");
    let mut with_weight = args.clone();
    if let Value::Tensor(_) = weight {
        // aten.embedding takes the weight first, and torch names the first
        // device it meets first.
        if &*kind == "Embedding" {
            with_weight.insert(0, weight.clone());
        } else {
            with_weight.push(weight.clone());
        }
    } else if !matches!(*layer.device.borrow(), None) && !SAME_SHAPE.contains(&&*kind) {
        let t = interp.new_tensor(
            Shape::known(Vec::new()),
            None,
            layer.device.borrow().clone(),
            "weight",
        );
        let t = Tensor {
            origin: layer.origin,
            mode: layer.mode,
            shape: Shape::known(vec![Dim::konst(2)]),
            ..t
        };
        with_weight.push(Value::Tensor(Rc::new(t)));
    }
    let Some(device) = check_inputs(
        interp,
        &Args::new(with_weight, Vec::new()),
        &format!("{kind}"),
        range.clone(),
    ) else {
        return Value::Unknown;
    };
    let _ = callee;
    // Eager kernels need the input and the weights of one dtype (fake mode
    // lets it pass; the run would not).
    let weight_dtype = *layer.dtype.borrow();
    if let (Some(xd), Some(wd)) = (x.dtype, weight_dtype)
        && xd != wd
        && xd.is_floating()
    {
        let message = match &*kind {
            "Linear" | "Bilinear" => Some(format!(
                "mat1 and mat2 must have the same dtype, but got {} and {}",
                super::dtype::torch_name(xd),
                super::dtype::torch_name(wd)
            )),
            k if k.starts_with("Conv") => Some(format!(
                "Input type ({}) and bias type ({}) should be the same",
                xd.name()
                    .replace("float64", "double")
                    .replace("float32", "float")
                    .replace("float16", "c10::Half"),
                wd.name()
                    .replace("float64", "double")
                    .replace("float32", "float")
                    .replace("float16", "c10::Half")
            )),
            "LSTM" | "GRU" | "RNN" => Some(format!(
                "RNN input dtype (torch.{}) does not match weight dtype (torch.{})",
                xd.name(),
                wd.name()
            )),
            "LayerNorm"
                if !matches!(
                    layer.arg(2, "elementwise_affine"),
                    Some(Value::Bool(Some(false)))
                ) =>
            {
                norm_dtype_message(xd, wd)
            }
            "BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d" | "GroupNorm" => {
                norm_dtype_message(xd, wd)
            }
            "InstanceNorm1d" | "InstanceNorm2d" | "InstanceNorm3d"
                if matches!(layer.arg(3, "affine"), Some(Value::Bool(Some(true)))) =>
            {
                norm_dtype_message(xd, wd)
            }
            _ => None,
        };
        if let Some(message) = message {
            interp.report(range, Severity::Error, "dtype-mismatch", message);
            return Value::Unknown;
        }
    }
    if SAME_SHAPE.contains(&&*kind) {
        if matches!(&*kind, "Softmax" | "LogSoftmax" | "Softmin") {
            let dim = a(0, "dim").unwrap_or(Value::None);
            return op(
                interp,
                "softmax",
                Args::new(vec![input.clone(), dim], Vec::new()),
                range,
            );
        }
        return out_shape(interp, x, x.shape.clone(), x.dtype, device, &kind);
    }
    let fa = |v: Vec<Value>, kw: Vec<(&str, Option<Value>)>| {
        Args::new(
            v,
            kw.into_iter()
                .filter_map(|(k, v)| v.map(|v| (Rc::from(k), v)))
                .collect(),
        )
    };
    match &*kind {
        "Linear" => linear(
            interp,
            x,
            &a(0, "in_features").unwrap_or(Value::Unknown),
            &a(1, "out_features").unwrap_or(Value::Unknown),
            device,
            range,
        ),
        "LazyLinear" => {
            let Some(dims) = interp.dims(x) else {
                return Value::Unknown;
            };
            let mut out = dims.clone();
            if let Some(last) = out.last_mut() {
                *last =
                    interp.size_dims(&[a(0, "out_features").unwrap_or(Value::Unknown)])[0].clone();
            }
            out_known(interp, x, out, x.dtype, device, "nn.LazyLinear")
        }
        "Bilinear" => {
            let Some(dims) = interp.dims(x) else {
                return Value::Unknown;
            };
            let mut out = dims;
            if let Some(last) = out.last_mut() {
                *last =
                    interp.size_dims(&[a(2, "out_features").unwrap_or(Value::Unknown)])[0].clone();
            }
            out_known(interp, x, out, x.dtype, device, "nn.Bilinear")
        }
        "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose1d" | "ConvTranspose2d"
        | "ConvTranspose3d" => {
            let transposed = kind.starts_with("ConvTranspose");
            let n = (kind.as_bytes()[kind.len() - 2] - b'0') as usize;
            let conv = ConvSpec {
                n,
                in_channels: a(0, "in_channels"),
                out_channels: a(1, "out_channels"),
                kernel: spatial(layer.arg(2, "kernel_size"), n),
                stride: spatial_or(layer.arg(3, "stride"), n, 1),
                padding: layer.arg(4, "padding").cloned(),
                output_padding: if transposed {
                    spatial_or(layer.arg(5, "output_padding"), n, 0)
                } else {
                    vec![Dim::konst(0); n]
                },
                groups: layer.arg(6, "groups").cloned().unwrap_or(Value::int(1)),
                dilation: spatial_or(layer.arg(if transposed { 8 } else { 5 }, "dilation"), n, 1),
                transposed,
            };
            let out = conv_forward(interp, x, &conv, device, range.clone());
            match call_args.get(1, "output_size").and_then(|v| v.items()) {
                Some(sizes) if transposed && sizes.len() >= n => conv_transpose_output_size(
                    interp,
                    x,
                    &conv,
                    out,
                    &sizes[sizes.len() - n..],
                    range,
                ),
                _ => out,
            }
        }
        "MaxPool1d" | "MaxPool2d" | "MaxPool3d" | "AvgPool1d" | "AvgPool2d" | "AvgPool3d" => {
            let n = (kind.as_bytes()[kind.len() - 2] - b'0') as usize;
            let is_max = kind.starts_with("Max");
            let (kernel, stride, padding, dilation) =
                pool_settings(n, is_max, |i, k| layer.arg(i, k));
            let ceil = matches!(
                layer.arg(if is_max { 5 } else { 3 }, "ceil_mode"),
                Some(Value::Bool(Some(true)))
            );
            if pool_pad_too_big(
                interp,
                n,
                is_max,
                &kernel,
                &padding,
                &dilation,
                range.clone(),
            ) {
                return Value::Unknown;
            }
            let out = pool(
                interp, x, n, &kernel, &stride, &padding, &dilation, ceil, device, range,
            );
            if is_max
                && matches!(
                    layer.arg(4, "return_indices"),
                    Some(Value::Bool(Some(true)))
                )
                && let Value::Tensor(t) = &out
            {
                let idx = Value::Tensor(Rc::new(Tensor {
                    dtype: Some(DType::Int64),
                    ..(**t).clone()
                }));
                return Value::tuple(vec![out, idx]);
            }
            out
        }
        "AdaptiveAvgPool1d" | "AdaptiveAvgPool2d" | "AdaptiveAvgPool3d" | "AdaptiveMaxPool1d"
        | "AdaptiveMaxPool2d" | "AdaptiveMaxPool3d" => {
            let n = (kind.as_bytes()[kind.len() - 2] - b'0') as usize;
            let out = adaptive_pool(interp, x, n, a(0, "output_size").as_ref(), device, range);
            if kind.starts_with("AdaptiveMax")
                && matches!(a(1, "return_indices"), Some(Value::Bool(Some(true))))
            {
                return with_indices(out);
            }
            out
        }
        "BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d" | "SyncBatchNorm" | "LazyBatchNorm2d" => {
            let Some(dims) = interp.dims(x) else {
                return out_shape(interp, x, x.shape.clone(), x.dtype, device, &kind);
            };
            let expected: &[usize] = match &*kind {
                "BatchNorm1d" => &[2, 3],
                "BatchNorm2d" => &[4],
                "BatchNorm3d" => &[5],
                _ => &[],
            };
            if !expected.is_empty() && !expected.contains(&dims.len()) {
                let message = if expected.len() == 2 {
                    format!("expected 2D or 3D input (got {}D input)", dims.len())
                } else {
                    format!(
                        "expected {}D input (got {}D input)",
                        expected[0],
                        dims.len()
                    )
                };
                interp.report(range, Severity::Error, "layer-input", message);
                return Value::Unknown;
            }
            if let (Some(c), Some(nf)) = (
                dims.get(1),
                a(0, "num_features").and_then(|v| interp.as_dim(&v)),
            ) {
                if interp.env.known_different(c, &nf) {
                    let message = format!(
                        "running_mean should contain {} elements not {}",
                        interp.fmt_dim(c),
                        interp.fmt_dim(&nf)
                    );
                    interp.report(range, Severity::Error, "layer-input", message);
                    return Value::Unknown;
                }
                let _ = interp.require_equal(c, &nf);
            }
            out_known(interp, x, dims, x.dtype, device, &kind)
        }
        "LayerNorm" | "RMSNorm" => {
            let ns = a(0, "normalized_shape").unwrap_or(Value::Unknown);
            layer_norm(interp, x, &ns, device, range, &kind)
        }
        "GroupNorm" => {
            let Some(dims) = interp.dims(x) else {
                return out_shape(interp, x, x.shape.clone(), x.dtype, device, &kind);
            };
            if let (Some(c), Some(nc)) = (
                dims.get(1),
                a(1, "num_channels").and_then(|v| interp.as_dim(&v)),
            ) {
                if interp.env.known_different(c, &nc) {
                    let message = format!(
                        "Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape [{}] and input of shape {}",
                        interp.fmt_dim(&nc),
                        interp.fmt_dims(&dims)
                    );
                    interp.report(range, Severity::Error, "layer-input", message);
                    return Value::Unknown;
                }
                let _ = interp.require_equal(c, &nc);
            }
            out_known(interp, x, dims, x.dtype, device, &kind)
        }
        "Embedding" => embedding(
            interp,
            x,
            weight_dtype,
            &a(1, "embedding_dim").unwrap_or(Value::Unknown),
            device,
            range,
        ),
        "EmbeddingBag" => {
            let Some(dims) = interp.dims(x) else {
                return Value::Unknown;
            };
            let d = interp.size_dims(&[a(1, "embedding_dim").unwrap_or(Value::Unknown)])[0].clone();
            let b = if dims.len() == 2 {
                dims[0].clone()
            } else {
                interp.env.anonymous()
            };
            out_known(
                interp,
                x,
                vec![b, d],
                Some(DType::Float32),
                device,
                "nn.EmbeddingBag",
            )
        }
        "Flatten" => {
            let s = a(0, "start_dim").unwrap_or(Value::int(1));
            let e = a(1, "end_dim").unwrap_or(Value::int(-1));
            op(
                interp,
                "flatten",
                Args::new(vec![input.clone(), s, e], Vec::new()),
                range,
            )
        }
        "Unflatten" => {
            let d = a(0, "dim").unwrap_or(Value::Unknown);
            let s = a(1, "unflattened_size").unwrap_or(Value::Unknown);
            op(
                interp,
                "unflatten",
                Args::new(vec![input.clone(), d, s], Vec::new()),
                range,
            )
        }
        "Upsample" | "UpsamplingNearest2d" | "UpsamplingBilinear2d" => {
            let args = fa(
                vec![input.clone()],
                vec![
                    ("size", a(0, "size")),
                    ("scale_factor", a(1, "scale_factor")),
                    ("mode", a(2, "mode")),
                ],
            );
            functional(interp, "interpolate", args, range)
        }
        "PixelShuffle" | "PixelUnshuffle" => {
            let r = a(0, "upscale_factor")
                .or(a(0, "downscale_factor"))
                .unwrap_or(Value::Unknown);
            functional(
                interp,
                if &*kind == "PixelShuffle" {
                    "pixel_shuffle"
                } else {
                    "pixel_unshuffle"
                },
                Args::new(vec![input.clone(), r], Vec::new()),
                range,
            )
        }
        "ZeroPad1d" | "ZeroPad2d" | "ZeroPad3d" | "ConstantPad1d" | "ConstantPad2d"
        | "ConstantPad3d" | "ReflectionPad1d" | "ReflectionPad2d" | "ReflectionPad3d"
        | "ReplicationPad1d" | "ReplicationPad2d" | "ReplicationPad3d" | "CircularPad1d"
        | "CircularPad2d" | "CircularPad3d" => {
            let n = (kind.as_bytes()[kind.len() - 2] - b'0') as usize;
            let pad = match a(0, "padding") {
                Some(Value::Int(d)) => Value::tuple(vec![Value::Int(d); 2 * n]),
                Some(v) => v,
                None => Value::Unknown,
            };
            let mode = match kind.as_bytes()[0] {
                b'R' if kind.starts_with("Reflection") => "reflect",
                b'R' => "replicate",
                b'C' if kind.starts_with("Circular") => "circular",
                _ => "constant",
            };
            functional(
                interp,
                "pad",
                Args::new(
                    vec![input.clone(), pad],
                    vec![(Rc::from("mode"), Value::Str(Rc::from(mode)))],
                ),
                range,
            )
        }
        "LSTM" | "GRU" | "RNN" => rnn(interp, layer, x, &args, device, range),
        "LSTMCell" | "GRUCell" | "RNNCell" => {
            let Some(dims) = interp.dims(x) else {
                return Value::Unknown;
            };
            let h = interp.size_dims(&[a(1, "hidden_size").unwrap_or(Value::Unknown)])[0].clone();
            let h0 = match args.get(1) {
                Some(Value::Tensor(t)) => Some(t.clone()),
                Some(v) => v.items().and_then(|i| match i.first() {
                    Some(Value::Tensor(t)) => Some(t.clone()),
                    _ => None,
                }),
                None => None,
            };
            if let Some(hd) = h0.and_then(|t| interp.dims(&t))
                && hd.len() == 2
                && dims.len() == 2
                && interp.env.known_different(&hd[0], &dims[0])
            {
                let message = format!(
                    "Input batch size {} doesn't match hidden0 batch size {}",
                    interp.fmt_dim(&dims[0]),
                    interp.fmt_dim(&hd[0])
                );
                interp.report(range, Severity::Error, "layer-input", message);
                return Value::Unknown;
            }
            let mut out = dims;
            if let Some(last) = out.last_mut() {
                *last = h;
            }
            let v = out_known(interp, x, out, x.dtype, device, &kind);
            if &*kind == "LSTMCell" {
                Value::tuple(vec![v.clone(), v])
            } else {
                v
            }
        }
        "MultiheadAttention" => mha(interp, layer, &call_args, device, range),
        "TransformerEncoderLayer"
        | "TransformerDecoderLayer"
        | "TransformerEncoder"
        | "TransformerDecoder" => {
            if let (Some(dims), Some(d_model)) = (interp.dims(x), layer_d_model(interp, layer)) {
                if let Some(last) = dims.last() {
                    if interp.env.known_different(last, &d_model) {
                        let message = format!(
                            "was expecting embedding dimension of {}, but got {}",
                            interp.fmt_dim(&d_model),
                            interp.fmt_dim(last)
                        );
                        interp.report(range, Severity::Error, "layer-input", message);
                        return Value::Unknown;
                    }
                    let _ = interp.require_equal(last, &d_model);
                }
                return out_known(interp, x, dims, x.dtype, device, &kind);
            }
            out_shape(interp, x, x.shape.clone(), x.dtype, device, &kind)
        }
        "Transformer" => {
            let tgt = call_args.tensor(1, "tgt");
            match tgt {
                Some(t) => out_shape(
                    interp,
                    &t,
                    t.shape.clone(),
                    t.dtype,
                    device,
                    "nn.Transformer",
                ),
                None => Value::Unknown,
            }
        }
        "CrossEntropyLoss" | "NLLLoss" | "MSELoss" | "L1Loss" | "BCELoss" | "BCEWithLogitsLoss"
        | "SmoothL1Loss" | "HuberLoss" | "KLDivLoss" => {
            let f = match &*kind {
                "CrossEntropyLoss" => "cross_entropy",
                "NLLLoss" => "nll_loss",
                "MSELoss" => "mse_loss",
                "L1Loss" => "l1_loss",
                "BCELoss" => "binary_cross_entropy",
                "BCEWithLogitsLoss" => "binary_cross_entropy_with_logits",
                "SmoothL1Loss" => "smooth_l1_loss",
                "HuberLoss" => "huber_loss",
                _ => "kl_div",
            };
            let mut kw = kwargs.clone();
            if let Some(r) = layer.kwargs.iter().find(|(k, _)| &**k == "reduction") {
                kw.push(r.clone());
            }
            functional(interp, f, Args::new(args, kw), range)
        }
        "Rearrange" | "Reduce" => {
            let pattern = a(0, "pattern").unwrap_or(Value::Unknown);
            let mut kw: Kwargs = layer.kwargs.clone();
            let name = if &*kind == "Rearrange" {
                "rearrange"
            } else {
                "reduce"
            };
            if &*kind == "Reduce" {
                kw.push((
                    Rc::from("reduction"),
                    a(1, "reduction").unwrap_or(Value::Unknown),
                ));
            }
            super::einops::call(
                interp,
                name,
                Args::new(vec![input.clone(), pattern], kw),
                range,
            )
        }
        _ => {
            if !interp.config.allow_fallback_kernels {
                interp.report(
                    range,
                    Severity::Warning,
                    "unsupported-op",
                    format!("no shape rule for `nn.{kind}`; its result is unknown"),
                );
            }
            Value::Unknown
        }
    }
}

/// The CPU norm kernels take a float32 parameter with a reduced-precision
/// input, and otherwise parameters of the input's dtype.
fn norm_dtype_message(x: DType, p: DType) -> Option<String> {
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
fn mixed_dtype(interp: &mut Interp<'_>, x: &Rc<Tensor>, args: &Args, name: &str) -> Option<String> {
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
    let _ = interp;
    let xd = x.dtype?;
    let p = keys
        .iter()
        .find_map(|(i, k)| args.tensor(*i, k).and_then(|t| t.dtype))?;
    norm_dtype_message(xd, p)
}

fn layer_d_model(interp: &mut Interp<'_>, layer: &Rc<Layer>) -> Option<Dim> {
    match &*layer.kind {
        "TransformerEncoderLayer" | "TransformerDecoderLayer" => layer
            .arg(0, "d_model")
            .cloned()
            .and_then(|v| interp.as_dim(&v)),
        "TransformerEncoder" | "TransformerDecoder" => match layer
            .arg(0, "encoder_layer")
            .or(layer.arg(0, "decoder_layer"))
        {
            Some(Value::Layer(inner)) => layer_d_model(interp, &inner.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// `x [*, in] -> [*, out]`, with the `addmm` message on a mismatch.
fn linear(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    in_features: &Value,
    out_features: &Value,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let out_dim = interp.size_dims(std::slice::from_ref(out_features))[0].clone();
    let Some(dims) = interp.dims(x) else {
        // Unknown rank: the input is `[*, in_features]`, the output `[*, out_features]`.
        let in_dim = interp
            .as_dim(in_features)
            .unwrap_or_else(|| interp.env.anonymous());
        return match super::tail::demand_trailing(interp, x, &[in_dim.clone()]) {
            Some(Ok((var, mut suffix))) => {
                if let Some(last) = suffix.last_mut() {
                    *last = out_dim;
                }
                out_shape(
                    interp,
                    x,
                    super::tail::suffix_shape(var, suffix),
                    x.dtype,
                    device,
                    "nn.Linear",
                )
            }
            Some(Err(found)) => {
                let message = format!(
                    "mat1 and mat2 shapes cannot be multiplied (?x{} and {}x{})",
                    interp.fmt_dim(found.last().unwrap_or(&in_dim)),
                    interp.fmt_dim(&in_dim),
                    interp.fmt_dim(&out_dim)
                );
                interp.report(range, Severity::Error, "linear-shape", message);
                Value::Unknown
            }
            None => out_var(interp, x, x.dtype, device, "nn.Linear"),
        };
    };
    if dims.is_empty() {
        interp.report(
            range,
            Severity::Error,
            "linear-shape",
            "both arguments to linear need to be at least 1D, but they are 0D and 2D".into(),
        );
        return Value::Unknown;
    }
    let last = dims[dims.len() - 1].clone();
    if let Some(in_dim) = interp.as_dim(in_features) {
        if interp.env.known_different(&last, &in_dim) {
            let rows = numel(&dims[..dims.len() - 1]);
            let message = format!(
                "addmm: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                interp.fmt_dim(&rows),
                interp.fmt_dim(&last),
                interp.fmt_dim(&in_dim),
                interp.fmt_dim(&out_dim)
            );
            interp.report(range, Severity::Error, "linear-shape", message);
            return Value::Unknown;
        }
        let _ = interp.require_equal(&last, &in_dim);
    }
    let mut out = dims;
    let n = out.len();
    out[n - 1] = out_dim;
    out_known(interp, x, out, x.dtype, device, "nn.Linear")
}

struct ConvSpec {
    n: usize,
    in_channels: Option<Value>,
    out_channels: Option<Value>,
    kernel: Vec<Dim>,
    stride: Vec<Dim>,
    padding: Option<Value>,
    output_padding: Vec<Dim>,
    groups: Value,
    dilation: Vec<Dim>,
    transposed: bool,
}

fn conv_forward(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    c: &ConvSpec,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let name = format!("conv{}d", c.n);
    let Some(dims) = interp.dims(x) else {
        return out_var(interp, x, x.dtype, device, &name);
    };
    let n = c.n;
    if dims.len() != n + 1 && dims.len() != n + 2 {
        let message = format!(
            "Expected {}D (unbatched) or {}D (batched) input to {name}, but got input of size: {}",
            n + 1,
            n + 2,
            interp.fmt_dims(&dims)
        );
        interp.report(range, Severity::Error, "conv-input", message);
        return Value::Unknown;
    }
    let batched = dims.len() == n + 2;
    let ch = &dims[if batched { 1 } else { 0 }];
    let cout = c
        .out_channels
        .as_ref()
        .map(|v| interp.size_dims(std::slice::from_ref(v))[0].clone())
        .unwrap_or_else(|| interp.env.anonymous());
    if let Some(cin) = c.in_channels.as_ref().and_then(|v| interp.as_dim(v)) {
        if interp.env.known_different(ch, &cin) {
            let groups = interp.as_dim(&c.groups).unwrap_or_else(|| Dim::konst(1));
            let per_group = cin.floordiv(&groups).unwrap_or_else(|| cin.clone());
            let mut weight = if c.transposed {
                vec![cin.clone(), cout.floordiv(&groups).unwrap_or(cout.clone())]
            } else {
                vec![cout.clone(), per_group]
            };
            weight.extend(c.kernel.iter().cloned());
            let message = if c.transposed {
                format!(
                    "Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                    interp.fmt_dims(&weight),
                    interp.fmt_dims(&dims),
                    interp.fmt_dim(&cin),
                    interp.fmt_dim(ch)
                )
            } else {
                format!(
                    "Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                    interp.fmt_dim(&groups),
                    interp.fmt_dims(&weight),
                    interp.fmt_dims(&dims),
                    interp.fmt_dim(&cin),
                    interp.fmt_dim(ch)
                )
            };
            interp.report(range, Severity::Error, "conv-input", message);
            return Value::Unknown;
        }
        let _ = interp.require_equal(ch, &cin);
    }
    let spatial_in = &dims[dims.len() - n..];
    // A setting we could not read (a symbolic stride, say) leaves the
    // spatial sizes unknown rather than taken as a default.
    if c.kernel.len() != n
        || c.stride.len() != n
        || c.dilation.len() != n
        || c.output_padding.len() != n
    {
        let mut out = dims[..dims.len() - n - 1].to_vec();
        out.push(cout);
        for _ in 0..n {
            out.push(interp.env.anonymous());
        }
        return out_known(interp, x, out, x.dtype, device, &name);
    }
    if c.transposed {
        let too_big = (0..n).any(|i| {
            let v = |d: Option<&Dim>| d.and_then(|d| interp.env.value(d));
            matches!(
                (v(c.output_padding.get(i)), v(c.stride.get(i)), v(c.dilation.get(i))),
                (Some(op), Some(s), Some(d)) if op >= s && op >= d
            )
        });
        if too_big {
            let v = |d: &[Dim], i: usize| d.get(i).and_then(|d| interp.env.value(d)).unwrap_or(0);
            let (h, w) = if n == 1 {
                (None, 0)
            } else {
                (Some(n - 2), n - 1)
            };
            let hv = |d: &[Dim], dflt: i64| h.map(|h| v(d, h)).unwrap_or(dflt);
            let message = format!(
                "output padding must be smaller than either stride or dilation, but got output_padding_height: {} output_padding_width: {} stride_height: {} stride_width: {} dilation_height: {} dilation_width: {}",
                hv(&c.output_padding, 0),
                v(&c.output_padding, w),
                hv(&c.stride, 1),
                v(&c.stride, w),
                hv(&c.dilation, 1),
                v(&c.dilation, w)
            );
            interp.report(range, Severity::Error, "conv-input", message);
            return Value::Unknown;
        }
    }
    let mut out_spatial = Vec::new();
    let same = matches!(&c.padding, Some(Value::Str(s)) if &**s == "same");
    let padding = match &c.padding {
        Some(Value::Str(_)) => vec![Dim::konst(0); n],
        p => spatial_or(p.as_ref(), n, 0),
    };
    if padding.len() != n {
        return Value::Unknown;
    }
    for i in 0..n {
        let l = &spatial_in[i];
        let k = &c.kernel[i];
        let d = c.dilation.get(i).cloned().unwrap_or_else(|| Dim::konst(1));
        let s = c.stride.get(i).cloned().unwrap_or_else(|| Dim::konst(1));
        let p = &padding[i];
        let keff = d.mul(&k.sub(&Dim::konst(1))).add(&Dim::konst(1));
        let len = if same {
            l.clone()
        } else if c.transposed {
            l.sub(&Dim::konst(1))
                .mul(&s)
                .sub(&p.mul(&Dim::konst(2)))
                .add(&keff)
                .add(&c.output_padding[i])
        } else {
            let padded = l.add(&p.mul(&Dim::konst(2)));
            if let (Some(pv), Some(kv)) = (interp.env.value(&padded), interp.env.value(&keff))
                && pv < kv
            {
                let message = format!(
                    "Calculated padded input size per channel: ({pv}). Kernel size: ({kv}). Kernel size can't be greater than actual input size"
                );
                interp.report(range, Severity::Error, "conv-input", message);
                return Value::Unknown;
            }
            match padded.sub(&keff).floordiv(&s) {
                Some(q) => q.add(&Dim::konst(1)),
                None => interp.env.anonymous(),
            }
        };
        out_spatial.push(len);
    }
    let mut out = dims[..dims.len() - n - 1].to_vec();
    out.push(cout);
    out.extend(out_spatial);
    out_known(interp, x, out, x.dtype, device, &name)
}

/// A max pool's values with their int64 indices.
fn with_indices(out: Value) -> Value {
    match &out {
        Value::Tensor(t) => {
            let idx = Value::Tensor(Rc::new(Tensor {
                dtype: Some(DType::Int64),
                ..(**t).clone()
            }));
            Value::tuple(vec![out, idx])
        }
        _ => Value::Unknown,
    }
}

/// Pools reject a padding over half the (effective) kernel.
fn pool_pad_too_big(
    interp: &mut Interp<'_>,
    n: usize,
    is_max: bool,
    kernel: &[Dim],
    padding: &[Dim],
    dilation: &[Dim],
    range: TextRange,
) -> bool {
    for i in 0..n.min(kernel.len()).min(padding.len()) {
        let d = dilation
            .get(i)
            .and_then(|d| interp.env.value(d))
            .unwrap_or(1);
        let (Some(k), Some(p)) = (interp.env.value(&kernel[i]), interp.env.value(&padding[i]))
        else {
            continue;
        };
        let keff = (k - 1) * d + 1;
        if p > keff / 2 {
            let message = if n == 1 && is_max {
                format!(
                    "max_pool1d() padding should be at most half of kernel size, but got padding={p} and kernel_size={k}"
                )
            } else {
                format!(
                    "pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and dilation={d}"
                )
            };
            interp.report(range, Severity::Error, "pool-input", message);
            return true;
        }
    }
    false
}

/// `ConvTranspose(x, output_size=...)`: the output takes the requested size,
/// which must lie within one stride of the smallest output.
fn conv_transpose_output_size(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    c: &ConvSpec,
    out: Value,
    sizes: &[Value],
    range: TextRange,
) -> Value {
    let Value::Tensor(t) = &out else { return out };
    let Some(mut dims) = interp.dims(t) else {
        return out;
    };
    let n = c.n;
    if dims.len() < n {
        return out;
    }
    let want = interp.size_dims(sizes);
    let base = dims.len() - n;
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    let mut bad = false;
    for i in 0..n {
        let min = dims[base + i].sub(&c.output_padding[i]);
        let max = min.add(&c.stride[i]).sub(&Dim::konst(1));
        if let (Some(w), Some(a), Some(b)) = (
            interp.env.value(&want[i]),
            interp.env.value(&min),
            interp.env.value(&max),
        ) && (w < a || w > b)
        {
            bad = true;
        }
        lo.push(min);
        hi.push(max);
    }
    if bad {
        let input = interp
            .dims(x)
            .map(|d| d[d.len() - n..].to_vec())
            .unwrap_or_default();
        let message = format!(
            "requested an output size of {}, but valid sizes range from {} to {} (for an input of torch.Size({}))",
            interp.fmt_dims(&want),
            interp.fmt_dims(&lo),
            interp.fmt_dims(&hi),
            interp.fmt_dims(&input)
        );
        interp.report(range, Severity::Error, "conv-output-size", message);
        return Value::Unknown;
    }
    for i in 0..n {
        dims[base + i] = want[i].clone();
    }
    out_known(interp, t, dims, t.dtype, t.device.clone(), "conv_transpose")
}

#[allow(clippy::too_many_arguments)]
fn pool(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    n: usize,
    kernel: &[Dim],
    stride: &[Dim],
    padding: &[Dim],
    dilation: &[Dim],
    ceil: bool,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let Some(dims) = interp.dims(x) else {
        return out_var(interp, x, x.dtype, device, "pool");
    };
    if dims.len() < n + 1
        || kernel.len() != n
        || stride.len() != n
        || padding.len() != n
        || dilation.len() != n
    {
        if dims.len() < n + 1 {
            let message = format!(
                "max_pool{n}d: Expected {}D or {}D (batch mode) tensor for input, but got: {}",
                n + 1,
                n + 2,
                interp.fmt_dims(&dims)
            );
            interp.report(range, Severity::Error, "pool-input", message);
            return Value::Unknown;
        }
        let mut out = dims[..dims.len() - n].to_vec();
        for _ in 0..n {
            out.push(interp.env.anonymous());
        }
        return out_known(interp, x, out, x.dtype, device, "pool");
    }
    let mut out = dims[..dims.len() - n].to_vec();
    for i in 0..n {
        let l = &dims[dims.len() - n + i];
        let d = dilation.get(i).cloned().unwrap_or_else(|| Dim::konst(1));
        let keff = d.mul(&kernel[i].sub(&Dim::konst(1))).add(&Dim::konst(1));
        let num = l.add(&padding[i].mul(&Dim::konst(2))).sub(&keff);
        let num = if ceil {
            num.add(&stride[i]).sub(&Dim::konst(1))
        } else {
            num
        };
        let mut len = match num.floordiv(&stride[i]) {
            Some(q) => q.add(&Dim::konst(1)),
            None => interp.env.anonymous(),
        };
        if ceil
            && let (Some(lv), Some(sv), Some(pv), Some(ov)) = (
                interp.env.value(l),
                interp.env.value(&stride[i]),
                interp.env.value(&padding[i]),
                interp.env.value(&len),
            )
            && (ov - 1) * sv >= lv + pv
        {
            len = Dim::konst(ov - 1);
        }
        if let Some(v) = interp.env.value(&len)
            && v < 1
        {
            let message = format!(
                "Given input size: {}. Calculated output size: ({v}). Output size is too small",
                interp.fmt_dims(&dims)
            );
            interp.report(range, Severity::Error, "pool-input", message);
            return Value::Unknown;
        }
        out.push(len);
    }
    out_known(interp, x, out, x.dtype, device, "pool")
}

fn adaptive_pool(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    n: usize,
    output: Option<&Value>,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let Some(dims) = interp.dims(x) else {
        return out_var(interp, x, x.dtype, device, "adaptive_pool");
    };
    if dims.len() < n + 1 {
        let message = format!(
            "Expected {}D or {}D tensor, but got {}",
            n + 1,
            n + 2,
            interp.fmt_dims(&dims)
        );
        interp.report(range, Severity::Error, "pool-input", message);
        return Value::Unknown;
    }
    let sizes: Vec<Option<Dim>> = match output {
        Some(Value::Int(d)) => vec![Some(d.clone()); n],
        Some(v) => v
            .items()
            .unwrap_or_default()
            .iter()
            .map(|i| {
                if let Value::Int(d) = i {
                    Some(d.clone())
                } else {
                    None
                }
            })
            .collect(),
        None => vec![None; n],
    };
    let mut out = dims[..dims.len() - n].to_vec();
    for i in 0..n {
        out.push(match sizes.get(i) {
            Some(Some(d)) => d.clone(),
            _ => dims[dims.len() - n + i].clone(),
        });
    }
    out_known(interp, x, out, x.dtype, device, "adaptive_pool")
}

fn layer_norm(
    interp: &mut Interp<'_>,
    x: &Rc<Tensor>,
    ns: &Value,
    device: Option<Device>,
    range: TextRange,
    op: &str,
) -> Value {
    let Some(dims) = interp.dims(x) else {
        // Unknown rank: the trailing dims must be `normalized_shape`.
        let normalized = match ns {
            Value::Int(_) | Value::Opaque(_) => Some(interp.size_dims(std::slice::from_ref(ns))),
            v => v.items().map(|items| interp.size_dims(&items)),
        };
        if let Some(normalized) = normalized
            && let Some(Err(found)) = super::tail::demand_trailing(interp, x, &normalized)
        {
            let message = format!(
                "Given normalized_shape={}, expected input with shape [*, {}], but got input of size[*, {}]",
                interp.fmt_dims(&normalized),
                normalized
                    .iter()
                    .map(|d| interp.fmt_dim(d))
                    .collect::<Vec<_>>()
                    .join(", "),
                found
                    .iter()
                    .map(|d| interp.fmt_dim(d))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            interp.report(range, Severity::Error, "layer-input", message);
            return Value::Unknown;
        }
        return out_shape(interp, x, x.shape.clone(), x.dtype, device, op);
    };
    let normalized = match ns {
        Value::Int(_) | Value::Opaque(_) => interp.size_dims(std::slice::from_ref(ns)),
        v => match v.items() {
            Some(items) => interp.size_dims(&items),
            None => return out_known(interp, x, dims, x.dtype, device, op),
        },
    };
    let k = normalized.len();
    let mismatch = k > dims.len()
        || normalized
            .iter()
            .zip(&dims[dims.len().saturating_sub(k)..])
            .any(|(a, b)| interp.env.known_different(a, b));
    if mismatch {
        let message = format!(
            "Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
            interp.fmt_dims(&normalized),
            normalized
                .iter()
                .map(|d| interp.fmt_dim(d))
                .collect::<Vec<_>>()
                .join(", "),
            interp.fmt_dims(&dims)
        );
        interp.report(range, Severity::Error, "layer-input", message);
        return Value::Unknown;
    }
    for (a, b) in normalized
        .iter()
        .zip(dims[dims.len() - k..].to_vec().iter())
    {
        let _ = interp.require_equal(b, a);
    }
    out_known(interp, x, dims, x.dtype, device, op)
}

fn embedding(
    interp: &mut Interp<'_>,
    idx: &Rc<Tensor>,
    dtype: Option<DType>,
    dim: &Value,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    if let Some(dt) = idx.dtype
        && !matches!(dt, DType::Int64 | DType::Int32)
    {
        let message = format!(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.{}Tensor instead (while checking arguments for embedding)",
            super::dtype::torch_name(dt)
        );
        interp.report(range, Severity::Error, "dtype-mismatch", message);
        return Value::Unknown;
    }
    let d = interp.size_dims(std::slice::from_ref(dim))[0].clone();
    match interp.dims(idx) {
        Some(mut dims) => {
            dims.push(d);
            out_known(interp, idx, dims, dtype, device, "nn.Embedding")
        }
        None => match interp.resolve_shape(&idx.shape).tail() {
            // Indices of unknown rank: the vectors are appended, `[*, dim]`.
            Some((var, suffix)) => {
                let mut s = suffix.to_vec();
                s.push(d);
                out_shape(
                    interp,
                    idx,
                    super::tail::suffix_shape(var, s),
                    dtype,
                    device,
                    "nn.Embedding",
                )
            }
            None => out_var(interp, idx, dtype, device, "nn.Embedding"),
        },
    }
}

fn rnn(
    interp: &mut Interp<'_>,
    layer: &Rc<Layer>,
    x: &Rc<Tensor>,
    args: &[Value],
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let a = |i: usize, n: &str| layer.arg(i, n).cloned();
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
    let num_layers = a(2, "num_layers")
        .and_then(|v| interp.as_dim(&v))
        .unwrap_or_else(|| Dim::konst(1));
    let hidden = interp.size_dims(&[a(1, "hidden_size").unwrap_or(Value::Unknown)])[0].clone();
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
    interp.demand_rank(
        &x.shape,
        if batch_first {
            &["N", "L", "H_in"]
        } else {
            &["L", "N", "H_in"]
        },
    );
    let Some(dims) = interp.dims(x) else {
        return Value::Unknown;
    };
    if dims.len() != 2 && dims.len() != 3 {
        let message = format!(
            "{}: Expected input to be 2D or 3D, got {}D instead",
            layer.kind,
            dims.len()
        );
        interp.report(range, Severity::Error, "layer-input", message);
        return Value::Unknown;
    }
    if let Some(input_size) = a(0, "input_size").and_then(|v| interp.as_dim(&v)) {
        let last = &dims[dims.len() - 1];
        if interp.env.known_different(last, &input_size) {
            let message = format!(
                "input.size(-1) must be equal to input_size. Expected {}, got {}",
                interp.fmt_dim(&input_size),
                interp.fmt_dim(last)
            );
            interp.report(range, Severity::Error, "layer-input", message);
            return Value::Unknown;
        }
        let _ = interp.require_equal(last, &input_size);
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
        let Some(hd) = interp.dims(&h) else { continue };
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
            .any(|(a, b)| interp.env.known_different(a, b))
        {
            let fmt = |interp: &Interp<'_>, d: &[Dim]| {
                let items: Vec<String> = d.iter().map(|d| interp.fmt_dim(d)).collect();
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
                fmt(interp, want),
                interp.fmt_dims(&hd)
            ))
        } else {
            None
        };
        if let Some(message) = message {
            interp.report(range, Severity::Error, "layer-input", message);
            return Value::Unknown;
        }
    }
    let out = out_known(
        interp,
        x,
        out_shape,
        x.dtype,
        device.clone(),
        &format!("nn.{}", layer.kind),
    );
    let h = out_known(
        interp,
        x,
        h_shape,
        x.dtype,
        device.clone(),
        &format!("nn.{}", layer.kind),
    );
    if is_lstm {
        let c = out_known(interp, x, c_shape, x.dtype, device, "nn.LSTM");
        Value::tuple(vec![out, Value::tuple(vec![h, c])])
    } else {
        Value::tuple(vec![out, h])
    }
}

fn mha(
    interp: &mut Interp<'_>,
    layer: &Rc<Layer>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let embed = layer
        .arg(0, "embed_dim")
        .cloned()
        .and_then(|v| interp.as_dim(&v));
    let heads = layer
        .arg(1, "num_heads")
        .cloned()
        .and_then(|v| interp.as_dim(&v));
    let batch_first = matches!(
        layer
            .kwargs
            .iter()
            .find(|(k, _)| &**k == "batch_first")
            .map(|(_, v)| v),
        Some(Value::Bool(Some(true)))
    );
    let (Some(q), Some(k)) = (args.tensor(0, "query"), args.tensor(1, "key")) else {
        return Value::Unknown;
    };
    // Inputs of unknown rank are taken as batched, the common case.
    let (q_names, kv_names): (&[&str], &[&str]) = if batch_first {
        (&["N", "L", "E"], &["N", "S", "E_kv"])
    } else {
        (&["L", "N", "E"], &["S", "N", "E_kv"])
    };
    interp.demand_rank(&q.shape, q_names);
    interp.demand_rank(&k.shape, kv_names);
    if let Some(v) = args.tensor(2, "value") {
        interp.demand_rank(&v.shape, kv_names);
    }
    let (Some(qd), Some(kd)) = (interp.dims(&q), interp.dims(&k)) else {
        return Value::Unknown;
    };
    // A key padding mask is [N, S] (or [S] unbatched): one of unknown rank
    // takes that shape.
    if let Some(mask) = args.tensor(5, "key_padding_mask") {
        let ns = match kd.len() {
            3 if batch_first => Some(vec![kd[0].clone(), kd[1].clone()]),
            3 => Some(vec![kd[1].clone(), kd[0].clone()]),
            2 => Some(vec![kd[0].clone()]),
            _ => None,
        };
        if let Some(ns) = ns {
            interp.adopt_shape(&mask.shape, &ns);
        }
    }
    if let (Some(e), Some(last)) = (&embed, qd.last()) {
        if interp.env.known_different(last, e) {
            let message = format!(
                "was expecting embedding dimension of {}, but got {}",
                interp.fmt_dim(e),
                interp.fmt_dim(last)
            );
            interp.report(range, Severity::Error, "layer-input", message);
            return Value::Unknown;
        }
        let _ = interp.require_equal(last, e);
    }
    let need_weights = args.flag(4, "need_weights", true);
    let average = args.flag(7, "average_attn_weights", true) == Some(true);
    // add_bias_kv and add_zero_attn each append one key/value position
    let extra = [(4, "add_bias_kv"), (5, "add_zero_attn")]
        .iter()
        .filter(|(i, k)| matches!(layer.arg(*i, k), Some(Value::Bool(Some(true)))))
        .count() as i64;
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
        interp,
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
            vec![n, heads.unwrap_or_else(|| interp.env.anonymous()), l, s]
        };
        out_known(interp, &q, shape, q.dtype, device, "nn.MultiheadAttention")
    } else {
        out_known(
            interp,
            &q,
            vec![qd[0].clone(), kd[0].clone()],
            q.dtype,
            device,
            "nn.MultiheadAttention",
        )
    };
    Value::tuple(vec![out, weights])
}

/// `F.<name>(...)`.
pub(crate) fn functional(
    interp: &mut Interp<'_>,
    name: &str,
    args: Args,
    range: TextRange,
) -> Value {
    let Some(x) = args.tensor(0, "input") else {
        return op(interp, name, args, range);
    };
    let Some(device) = check_inputs(interp, &args, name, range.clone()) else {
        return Value::Unknown;
    };
    match name {
        "linear" => {
            let Some(w) = args.tensor(1, "weight") else {
                return Value::Unknown;
            };
            let Some(wd) = interp.dims(&w) else {
                return Value::Unknown;
            };
            match wd.as_slice() {
                [out, inp] => linear(
                    interp,
                    &x,
                    &Value::Int(inp.clone()),
                    &Value::Int(out.clone()),
                    device,
                    range,
                ),
                _ => Value::Unknown,
            }
        }
        "conv1d" | "conv2d" | "conv3d" | "conv_transpose1d" | "conv_transpose2d"
        | "conv_transpose3d" => {
            let transposed = name.starts_with("conv_transpose");
            let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
            let Some(w) = args.tensor(1, "weight") else {
                return Value::Unknown;
            };
            let Some(wd) = interp.dims(&w) else {
                return Value::Unknown;
            };
            if wd.len() != n + 2 {
                return Value::Unknown;
            }
            let groups = args.get(6, "groups").cloned().unwrap_or(Value::int(1));
            let g = interp.as_dim(&groups).unwrap_or_else(|| Dim::konst(1));
            let (cin, cout) = if transposed {
                (wd[0].clone(), wd[1].mul(&g))
            } else {
                (wd[1].mul(&g), wd[0].clone())
            };
            let spec = ConvSpec {
                n,
                in_channels: Some(Value::Int(cin)),
                out_channels: Some(Value::Int(cout)),
                kernel: wd[2..].to_vec(),
                stride: spatial_or(args.get(3, "stride"), n, 1),
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
            conv_forward(interp, &x, &spec, device, range)
        }
        "max_pool1d" | "max_pool2d" | "max_pool3d" | "avg_pool1d" | "avg_pool2d" | "avg_pool3d" => {
            let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
            let is_max = name.starts_with("max");
            let (kernel, stride, padding, dilation) =
                pool_settings(n, is_max, |i, k| args.get(i + 1, k));
            let ceil = args.flag(if is_max { 5 } else { 4 }, "ceil_mode", false) == Some(true);
            if pool_pad_too_big(
                interp,
                n,
                is_max,
                &kernel,
                &padding,
                &dilation,
                range.clone(),
            ) {
                return Value::Unknown;
            }
            let out = pool(
                interp, &x, n, &kernel, &stride, &padding, &dilation, ceil, device, range,
            );
            if is_max && args.flag(6, "return_indices", false) == Some(true) {
                return with_indices(out);
            }
            out
        }
        "adaptive_avg_pool1d"
        | "adaptive_avg_pool2d"
        | "adaptive_avg_pool3d"
        | "adaptive_max_pool1d"
        | "adaptive_max_pool2d"
        | "adaptive_max_pool3d" => {
            let n = (name.as_bytes()[name.len() - 2] - b'0') as usize;
            let out = adaptive_pool(interp, &x, n, args.get(1, "output_size"), device, range);
            if name.contains("max") && args.flag(2, "return_indices", false) == Some(true) {
                return with_indices(out);
            }
            out
        }
        "layer_norm" | "rms_norm" => {
            if name == "layer_norm"
                && let Some(message) = mixed_dtype(interp, &x, &args, name)
            {
                interp.report(range, Severity::Error, "dtype-mismatch", message);
                return Value::Unknown;
            }
            let ns = args
                .get(1, "normalized_shape")
                .cloned()
                .unwrap_or(Value::Unknown);
            layer_norm(interp, &x, &ns, device, range, name)
        }
        "normalize" => {
            if let Some(dims) = interp.dims(&x)
                && let Some(d) = args.int(2, "dim").or(Some(1))
                && let Err(message) = super::shape::wrap_dim(d, dims.len())
            {
                interp.report(range, Severity::Error, "dim-out-of-range", message);
                return Value::Unknown;
            }
            out_shape(interp, &x, x.shape.clone(), x.dtype, device, name)
        }
        "batch_norm" | "group_norm" | "instance_norm" | "local_response_norm" => {
            if let Some(message) = mixed_dtype(interp, &x, &args, name) {
                interp.report(range, Severity::Error, "dtype-mismatch", message);
                return Value::Unknown;
            }
            out_shape(interp, &x, x.shape.clone(), x.dtype, device, name)
        }
        "embedding" => {
            let Some(w) = args.tensor(1, "weight") else {
                return Value::Unknown;
            };
            let Some(wd) = interp.dims(&w) else {
                return Value::Unknown;
            };
            let d = wd.last().cloned().map(Value::Int).unwrap_or(Value::Unknown);
            embedding(interp, &x, w.dtype, &d, device, range)
        }
        "pad" => {
            let Some(dims) = interp.dims(&x) else {
                return out_var(interp, &x, x.dtype, device, name);
            };
            let Some(pads) = args.get(1, "pad").and_then(|v| v.items()) else {
                return Value::Unknown;
            };
            if pads.len() % 2 != 0 {
                interp.report(
                    range,
                    Severity::Error,
                    "pad-size",
                    "Padding length must be divisible by 2".into(),
                );
                return Value::Unknown;
            }
            if pads.len() / 2 > dims.len() {
                let message = format!(
                    "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {}",
                    pads.len(),
                    dims.len()
                );
                interp.report(range, Severity::Error, "pad-size", message);
                return Value::Unknown;
            }
            let pads = interp.size_dims(&pads);
            let mode = args.str(2, "mode");
            let mode = mode.as_deref().unwrap_or("constant");
            if mode != "constant" {
                let (p, r) = (pads.len(), dims.len());
                if p > 6 || (p / 2 + 1 != r && p / 2 + 2 != r) {
                    let message =
                        format!("Padding size {p} is not supported for {r}D input tensor.");
                    interp.report(range, Severity::Error, "pad-size", message);
                    return Value::Unknown;
                }
                for i in 0..p / 2 {
                    let k = r - 1 - i;
                    let (Some(size), Some(lo), Some(hi)) = (
                        interp.env.value(&dims[k]),
                        interp.env.value(&pads[2 * i]),
                        interp.env.value(&pads[2 * i + 1]),
                    ) else {
                        continue;
                    };
                    let message = match mode {
                        "reflect" if lo >= size || hi >= size => format!(
                            "Argument #{}: Padding size should be less than the corresponding input dimension, but got: padding ({lo}, {hi}) at dimension {k} of input {}",
                            4 + 2 * i,
                            interp.fmt_dims(&dims)
                        ),
                        "circular" if lo > size || hi > size => {
                            "Padding value causes wrapping around more than once.".to_string()
                        }
                        _ => continue,
                    };
                    interp.report(range, Severity::Error, "pad-size", message);
                    return Value::Unknown;
                }
            }
            let mut out = dims.clone();
            let n = out.len();
            for i in 0..pads.len() / 2 {
                out[n - 1 - i] = out[n - 1 - i].add(&pads[2 * i]).add(&pads[2 * i + 1]);
            }
            out_known(interp, &x, out, x.dtype, device, name)
        }
        "interpolate" | "upsample" | "upsample_nearest" | "upsample_bilinear" => {
            let Some(dims) = interp.dims(&x) else {
                return out_var(interp, &x, x.dtype, device, name);
            };
            let mode = args.str(3, "mode");
            let mode = mode.as_deref().unwrap_or(match name {
                "upsample_bilinear" => "bilinear",
                _ => "nearest",
            });
            let r = dims.len();
            let need = match mode {
                "linear" => Some(3),
                "bilinear" => Some(4),
                "trilinear" => Some(5),
                _ => None,
            };
            if !(3..=5).contains(&r) || (mode == "bicubic" && r != 4) {
                let message = format!(
                    "Input Error: Only 3D, 4D and 5D input Tensors supported (got {r}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})"
                );
                interp.report(range, Severity::Error, "interpolate-size", message);
                return Value::Unknown;
            }
            if let Some(k) = need
                && k != r
            {
                let message = format!("Got {r}D input, but {mode} mode needs {k}D input");
                interp.report(range, Severity::Error, "interpolate-size", message);
                return Value::Unknown;
            }
            let n = dims.len() - 2;
            let size = args.get(1, "size").filter(|v| !v.is_none()).cloned();
            let scale = args
                .get(2, "scale_factor")
                .filter(|v| !v.is_none())
                .cloned();
            let mut out = dims[..2].to_vec();
            match (size, scale) {
                (Some(s), None) => {
                    let sizes = match &s {
                        Value::Int(_) => vec![s.clone(); n],
                        v => v.items().unwrap_or_default(),
                    };
                    if sizes.len() != n {
                        interp.report(range, Severity::Error, "interpolate-size", format!("Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {} and output size of {} entries", interp.fmt_dims(&dims[2..]), sizes.len()));
                        return Value::Unknown;
                    }
                    out.extend(interp.size_dims(&sizes));
                }
                (None, Some(f)) => {
                    let factors = match &f {
                        Value::Int(_) | Value::Float(_) => vec![f.clone(); n],
                        v => v.items().unwrap_or_default(),
                    };
                    for (i, l) in dims[2..].iter().enumerate() {
                        let d = match factors.get(i) {
                            Some(Value::Int(k)) => l.mul(k),
                            Some(Value::Float(Some(f))) => match interp.env.value(l) {
                                Some(v) => Dim::konst((v as f64 * f).floor() as i64),
                                None if f.fract() == 0.0 => l.mul(&Dim::konst(*f as i64)),
                                None => interp.env.anonymous(),
                            },
                            _ => interp.env.anonymous(),
                        };
                        out.push(d);
                    }
                }
                (None, None) => {
                    interp.report(
                        range,
                        Severity::Error,
                        "interpolate-size",
                        "either size or scale_factor should be defined".into(),
                    );
                    return Value::Unknown;
                }
                (Some(_), Some(_)) => {
                    interp.report(
                        range,
                        Severity::Error,
                        "interpolate-size",
                        "only one of size or scale_factor should be defined".into(),
                    );
                    return Value::Unknown;
                }
            }
            out_known(interp, &x, out, x.dtype, device, name)
        }
        "pixel_shuffle" | "pixel_unshuffle" => {
            let Some(dims) = interp.dims(&x) else {
                return Value::Unknown;
            };
            let Some(r) = args
                .get(1, "upscale_factor")
                .or(args.get(1, "downscale_factor"))
                .and_then(|v| {
                    if let Value::Int(d) = v {
                        Some(d.clone())
                    } else {
                        None
                    }
                })
            else {
                return Value::Unknown;
            };
            if dims.len() < 3 {
                return Value::Unknown;
            }
            let n = dims.len();
            let r2 = r.mul(&r);
            let mut out = dims.clone();
            if name == "pixel_shuffle" {
                out[n - 3] = dims[n - 3]
                    .floordiv(&r2)
                    .unwrap_or_else(|| interp.env.anonymous());
                out[n - 2] = dims[n - 2].mul(&r);
                out[n - 1] = dims[n - 1].mul(&r);
            } else {
                out[n - 3] = dims[n - 3].mul(&r2);
                out[n - 2] = dims[n - 2]
                    .floordiv(&r)
                    .unwrap_or_else(|| interp.env.anonymous());
                out[n - 1] = dims[n - 1]
                    .floordiv(&r)
                    .unwrap_or_else(|| interp.env.anonymous());
            }
            out_known(interp, &x, out, x.dtype, device, name)
        }
        "cross_entropy" | "nll_loss" => loss_ce(interp, name, &x, &args, device, range),
        "mse_loss"
        | "l1_loss"
        | "smooth_l1_loss"
        | "huber_loss"
        | "binary_cross_entropy"
        | "binary_cross_entropy_with_logits"
        | "kl_div"
        | "soft_margin_loss" => {
            let reduction = args.str(99, "reduction");
            let Some(t) = args.tensor(1, "target") else {
                return Value::Unknown;
            };
            // Binary cross entropy needs input and target of one shape: a
            // side of unknown rank takes the other's.
            if name.starts_with("binary_cross_entropy") {
                if let Some(td) = interp.dims(&t) {
                    interp.adopt_shape(&x.shape, &td);
                } else if let Some(xd) = interp.dims(&x) {
                    interp.adopt_shape(&t.shape, &xd);
                }
            }
            let (Some(xd), Some(td)) = (interp.dims(&x), interp.dims(&t)) else {
                // A reduced loss is a scalar whatever the shapes.
                if reduction.as_deref() != Some("none") {
                    return out_known(interp, &x, Vec::new(), x.dtype, device, name);
                }
                return Value::Unknown;
            };
            if name.starts_with("binary_cross_entropy")
                && xd.len() == td.len()
                && xd
                    .iter()
                    .zip(&td)
                    .any(|(a, b)| interp.env.known_different(a, b))
            {
                let message = format!(
                    "Using a target size ({}) that is different to the input size ({}) is deprecated. Please ensure they have the same size.",
                    interp.fmt_dims(&td),
                    interp.fmt_dims(&xd)
                );
                interp.report(range, Severity::Error, "loss-shape", message);
                return Value::Unknown;
            }
            let shape = match broadcast(interp, &xd, &td) {
                Ok(s) => s,
                Err(message) => {
                    interp.report(range, Severity::Error, "broadcast-shape", message);
                    return Value::Unknown;
                }
            };
            if xd != td && !name.starts_with("binary") {
                let message = format!(
                    "Using a target size ({}) that is different to the input size ({}). This will likely lead to incorrect results due to broadcasting.",
                    interp.fmt_dims(&td),
                    interp.fmt_dims(&xd)
                );
                interp.report(range.clone(), Severity::Warning, "loss-broadcast", message);
            }
            let out = if reduction.as_deref() == Some("none") {
                shape
            } else {
                Vec::new()
            };
            // the pointwise losses promote input and target
            let dtype = if matches!(name, "mse_loss" | "l1_loss" | "smooth_l1_loss") {
                super::dtype::promote(&[
                    (&Value::Tensor(x.clone()), Some(xd.len())),
                    (&Value::Tensor(t.clone()), Some(td.len())),
                ])
                .or(x.dtype)
            } else {
                x.dtype
            };
            out_known(interp, &x, out, dtype, device, name)
        }
        "scaled_dot_product_attention" => {
            let (Some(k), Some(v)) = (args.tensor(1, "key"), args.tensor(2, "value")) else {
                return Value::Unknown;
            };
            let (Some(qd), Some(kd), Some(vd)) =
                (interp.dims(&x), interp.dims(&k), interp.dims(&v))
            else {
                return out_var(interp, &x, x.dtype, device, name);
            };
            if qd.len() < 2 || kd.len() < 2 || vd.len() < 2 {
                return Value::Unknown;
            }
            let (e, ek) = (&qd[qd.len() - 1], &kd[kd.len() - 1]);
            if interp.env.known_different(e, ek) {
                let message = format!(
                    "Expected size for first two dimensions of batch2 tensor to be: [{}] but got: [{}].",
                    interp.fmt_dim(e),
                    interp.fmt_dim(ek)
                );
                interp.report(range, Severity::Error, "matmul-shape", message);
                return Value::Unknown;
            }
            let Ok(mut batch) = broadcast(interp, &qd[..qd.len() - 2], &kd[..kd.len() - 2]) else {
                return Value::Unknown;
            };
            batch.push(qd[qd.len() - 2].clone());
            batch.push(vd[vd.len() - 1].clone());
            out_known(interp, &x, batch, x.dtype, device, name)
        }
        "one_hot" => op(interp, "one_hot", args, range),
        "unfold" => {
            let Some(dims) = interp.dims(&x) else {
                return Value::Unknown;
            };
            if dims.len() != 4 {
                return Value::Unknown;
            }
            let kernel = spatial(args.get(1, "kernel_size"), 2);
            let dilation = spatial_or(args.get(2, "dilation"), 2, 1);
            let padding = spatial_or(args.get(3, "padding"), 2, 0);
            let stride = spatial_or(args.get(4, "stride"), 2, 1);
            if kernel.len() != 2 {
                return Value::Unknown;
            }
            let mut blocks = Dim::konst(1);
            for i in 0..2 {
                let keff = dilation[i]
                    .mul(&kernel[i].sub(&Dim::konst(1)))
                    .add(&Dim::konst(1));
                let n = dims[2 + i]
                    .add(&padding[i].mul(&Dim::konst(2)))
                    .sub(&keff)
                    .floordiv(&stride[i])
                    .map(|q| q.add(&Dim::konst(1)));
                blocks = blocks.mul(&n.unwrap_or_else(|| interp.env.anonymous()));
            }
            let c = dims[1].mul(&kernel[0]).mul(&kernel[1]);
            out_known(
                interp,
                &x,
                vec![dims[0].clone(), c, blocks],
                x.dtype,
                device,
                name,
            )
        }
        "grid_sample" => {
            let Some(g) = args.tensor(1, "grid") else {
                return Value::Unknown;
            };
            let (Some(xd), Some(gd)) = (interp.dims(&x), interp.dims(&g)) else {
                return Value::Unknown;
            };
            if xd.len() != 4 || gd.len() != 4 {
                return Value::Unknown;
            }
            out_known(
                interp,
                &x,
                vec![xd[0].clone(), xd[1].clone(), gd[1].clone(), gd[2].clone()],
                x.dtype,
                device,
                name,
            )
        }
        "glu" => {
            let Some(mut dims) = interp.dims(&x) else {
                return Value::Unknown;
            };
            let d = args.int(1, "dim").unwrap_or(-1);
            let d = match super::shape::wrap_dim(d, dims.len()) {
                Ok(d) => d,
                Err(message) => {
                    interp.report(range, Severity::Error, "dim-out-of-range", message);
                    return Value::Unknown;
                }
            };
            if let Some(size) = dims.get(d).and_then(|s| interp.env.value(s))
                && size % 2 != 0
            {
                let message =
                    format!("Halving dimension must be even, but dimension {d} is size {size}");
                interp.report(range, Severity::Error, "glu-size", message);
                return Value::Unknown;
            }
            if dims.is_empty() {
                return Value::Unknown;
            }
            dims[d] = dims[d]
                .floordiv(&Dim::konst(2))
                .unwrap_or_else(|| interp.env.anonymous());
            out_known(interp, &x, dims, x.dtype, device, name)
        }
        "mm" | "matmul" => {
            let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
            matmul(interp, name, &x, &other, &args, device, range)
        }
        _ => op(interp, name, args, range),
    }
}

fn loss_ce(
    interp: &mut Interp<'_>,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let reduction = args.str(99, "reduction");
    let Some(t) = args.tensor(1, "target") else {
        return Value::Unknown;
    };
    let (Some(xd), Some(td)) = (interp.dims(x), interp.dims(&t)) else {
        return out_known(interp, x, Vec::new(), x.dtype, device, name);
    };
    let class_target = t.dtype.is_none_or(|d| !d.is_floating());
    if class_target {
        if let Some(d) = t.dtype
            && d != DType::Int64
            && name == "cross_entropy"
        {
            let message = format!(
                "expected scalar type Long but found {}",
                super::dtype::torch_name(d)
            );
            interp.report(range.clone(), Severity::Error, "dtype-mismatch", message);
            return Value::Unknown;
        }
        let expected: Vec<Dim> = if xd.len() == 1 {
            Vec::new()
        } else {
            std::iter::once(xd[0].clone())
                .chain(xd[2..].iter().cloned())
                .collect()
        };
        if td.len() != expected.len() {
            let message = if td.len() > 1 && xd.len() == 2 {
                "0D or 1D target tensor expected, multi-target not supported".to_string()
            } else {
                format!(
                    "Expected target size {}, got {}",
                    interp.fmt_dims(&expected),
                    interp.fmt_dims(&td)
                )
            };
            interp.report(range, Severity::Error, "loss-shape", message);
            return Value::Unknown;
        }
        if let (Some(a), Some(b)) = (expected.first(), td.first())
            && interp.env.known_different(a, b)
        {
            let message = format!(
                "Expected input batch_size ({}) to match target batch_size ({}).",
                interp.fmt_dim(a),
                interp.fmt_dim(b)
            );
            interp.report(range, Severity::Error, "loss-shape", message);
            return Value::Unknown;
        }
        for (a, b) in expected.iter().zip(&td) {
            let _ = interp.require_equal(a, b);
        }
        let out = if reduction.as_deref() == Some("none") {
            expected
        } else {
            Vec::new()
        };
        return out_known(interp, x, out, x.dtype, device, name);
    }
    if xd.len() != td.len()
        || xd
            .iter()
            .zip(&td)
            .any(|(a, b)| interp.env.known_different(a, b))
    {
        let message = format!(
            "Expected target size {}, got {}",
            interp.fmt_dims(&xd),
            interp.fmt_dims(&td)
        );
        interp.report(range, Severity::Error, "loss-shape", message);
        return Value::Unknown;
    }
    let out = if reduction.as_deref() == Some("none") {
        std::iter::once(xd[0].clone())
            .chain(xd.get(2..).unwrap_or(&[]).iter().cloned())
            .collect()
    } else {
        Vec::new()
    };
    out_known(interp, x, out, x.dtype, device, name)
}
