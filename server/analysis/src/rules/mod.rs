//! The rule table: shape, dtype and device rules of torch functions and Tensor methods.
//!
//! Each op is one entry in `op` (tensor ops, with the input first, so that
//! `torch.sum(x, 1)` and `x.sum(1)` share a rule). Rules check what torch's
//! meta kernels check and report torch's own message at the call.

pub(crate) mod args;
pub(crate) mod check;
mod collate;
pub(crate) use collate::collate_alike;
pub(crate) mod creation;
mod distributions;
mod dtype;
mod einops;
mod einops_pack;
#[cfg(test)]
mod family_tests;
pub(crate) mod fixes;
pub(crate) mod index;
mod layout;
pub(crate) mod meta;
pub(crate) mod names;
pub(crate) mod nn;
mod ops;
mod required_args;
pub(crate) mod shape;
mod tail;

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{BinOp, CmpOp, TextRange, UnaryOp};

use crate::code::Code;
use crate::rules::meta::Meta;
use crate::value::{Device, Shape, Tensor, Value};

pub(crate) use args::Args;
pub(crate) use distributions::{attr as distribution_attr, method as distribution_method};

use crate::value::Kwargs;

/// An op without a shape rule: its result is unknown, which the user asked
/// to hear of (`allow_fallback_kernels = false`). `shown` is the op as the
/// user wrote it (`cdist`, `nn.Fold`).
pub(crate) fn no_rule_warning(meta: &mut dyn Meta, range: TextRange, shown: &str) {
    if !meta.config().allow_fallback_kernels {
        meta.report(
            range,
            Code::UnsupportedOp,
            format!("no shape rule for `{shown}`; its result is unknown"),
        );
    }
}

/// A call of something under `torch`, `einops`, or another module path.
pub(crate) fn call_torch(
    meta: &mut dyn Meta,
    path: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
    range: TextRange,
) -> Value {
    let path = normalize_path(path);
    // Arguments the analysis cannot read stand for sizes, except where the
    // registry says the op takes data there, or its whole size first.
    let unread = path
        .strip_prefix("torch.")
        .and_then(ops::OpDef::of)
        .map_or(ops::UnreadArgs::Sizes, |def| def.unread_args);
    let keeps_opaque = path.starts_with("nn.") || unread == ops::UnreadArgs::Data;
    // A made-up parameter that is a factory's whole size is a number
    // (`torch.ones(dim)`), unless its name says it is a shape
    // (`torch.zeros(shape)`): then not even the rank is known.
    let whole_size = match unread {
        ops::UnreadArgs::ShapeFirst { alone } => !alone || args.len() == 1,
        _ => false,
    } && matches!(args.first(), Some(Value::Opaque(name)) if name.contains("shape"));
    let (args, kwargs) = if keeps_opaque {
        (args, kwargs)
    } else if whole_size {
        let mut args = args;
        let size = args.remove(0);
        let mut rest = meta.sizes_from_opaque(args);
        rest.insert(0, size);
        (rest, kwargs)
    } else {
        (meta.sizes_from_opaque(args), kwargs)
    };
    let args = Args::new(args, kwargs);
    if let Some(name) = path.strip_prefix("nn.") {
        return nn::construct(meta, name, args, range);
    }
    if let Some(name) = path.strip_prefix("F.") {
        return nn::functional(meta, name, args, range);
    }
    if let Some(name) = path.strip_prefix("einops.") {
        if let Some(result) = einops_pack::call(meta, name, &args, range) {
            return result;
        }
        return einops::call(meta, name, args, range);
    }
    if let Some(name) = path.strip_prefix("torch.") {
        return torch_function(meta, name, args, range);
    }
    Value::Unknown
}

/// Canonical spellings: `torch.nn.functional.relu` → `F.relu`, `torch.nn.Linear` → `nn.Linear`.
fn normalize_path(path: &str) -> std::borrow::Cow<'_, str> {
    for (prefix, canon) in [
        ("torch.nn.functional.", "F."),
        ("torch.nn.modules.", "nn."),
        ("torch.nn.", "nn."),
        ("einops.layers.torch.", "nn.einops."),
    ] {
        if let Some(rest) = path.strip_prefix(prefix) {
            // `torch.nn.init.*` and `torch.nn.utils.*` are not layers.
            if canon == "nn."
                && (rest.starts_with("init.")
                    || rest.starts_with("utils.")
                    || rest.starts_with("parameter."))
            {
                return ["torch.nn.", rest].concat().into();
            }
            let rest = rest
                .rsplit('.')
                .next()
                .filter(|_| canon == "nn." && rest.contains('.'))
                .unwrap_or(rest);
            return [canon, rest].concat().into();
        }
    }
    path.into()
}

fn torch_function(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> Value {
    if let Some(rest) = name.strip_prefix("distributions.") {
        // `torch.distributions.Normal` or `torch.distributions.normal.Normal`.
        let last = rest.rsplit('.').next().unwrap_or(rest);
        return match last {
            "kl_divergence" => distributions::kl_divergence(meta, &args),
            _ => distributions::construct(meta, last, &args),
        };
    }
    match name {
        // Reparametrisations change how a layer keeps its weight, not what
        // it computes: the layer is returned, as torch returns it.
        "nn.utils.weight_norm"
        | "nn.utils.spectral_norm"
        | "nn.utils.parametrizations.weight_norm"
        | "nn.utils.parametrizations.spectral_norm"
        | "nn.utils.parametrizations.orthogonal" => {
            args.get(0, "module").cloned().unwrap_or(Value::Unknown)
        }
        // `torch.finfo(dtype).min`: a number (a fill value for masks).
        "finfo" | "iinfo" => Value::Path(Rc::from("torch.finfo()")),
        "device" => match args.get(0, "type") {
            Some(Value::Str(s)) => {
                let index = match args.get(1, "index") {
                    Some(Value::Int(d)) => d.as_const(),
                    _ => None,
                };
                match (Device::parse(s), index) {
                    (Some(Device::Cuda(_)), Some(i)) => Value::Device(Device::Cuda(i as u32)),
                    (Some(d), _) => Value::Device(d),
                    _ => Value::Unknown,
                }
            }
            Some(Value::Device(d)) => Value::Device(d.clone()),
            _ => Value::Unknown,
        },
        "cuda.is_available" => Value::Bool(None),
        "cuda.device_count" => Value::Unknown,
        "Size" => match args.get(0, "sizes") {
            Some(v) => match v.items() {
                Some(items) => Value::tuple(items),
                None => v.clone(),
            },
            None => Value::tuple(Vec::new()),
        },
        "broadcast_shapes" => broadcast_shapes(meta, &args.pos),
        "utils.data.default_collate"
        | "utils.data.dataloader.default_collate"
        | "utils.data._utils.collate.default_collate" => {
            collate::default_collate(meta, args.get(0, "batch"), range)
        }
        "no_grad" | "inference_mode" | "enable_grad" | "autocast" | "amp.autocast"
        | "cuda.amp.autocast" => Value::None,
        "set_default_device" | "set_default_dtype" | "set_default_tensor_type" => {
            meta.set_tensor_default(name, args.pos.first().or(args.kw.first().map(|(_, v)| v)));
            Value::None
        }
        "manual_seed" | "set_grad_enabled" | "cuda.manual_seed" | "cuda.manual_seed_all" => {
            Value::None
        }
        "get_default_dtype" => Value::DType(crate::value::DType::Float32),
        "is_tensor" => Value::Bool(Some(matches!(args.get(0, "obj"), Some(Value::Tensor(_))))),
        "_subclasses.fake_tensor.FakeTensorMode" | "_subclasses.FakeTensorMode" => {
            let allow = matches!(
                args.kw("allow_non_fake_inputs"),
                Some(Value::Bool(Some(true)))
            );
            let id = meta.fresh_mode_id();
            Value::FakeMode {
                id,
                allow_non_fake_inputs: allow,
            }
        }
        // `nn.init.uniform_(w)` fills `w` in place and returns it; the
        // other `nn.init` functions (`calculate_gain`) compute numbers.
        _ if name.starts_with("nn.init.") => match args.get(0, "tensor") {
            Some(t @ Value::Tensor(_)) if name.ends_with('_') => t.clone(),
            _ => Value::Unknown,
        },
        // `torch.max_pool2d(x, 2)` is `F.max_pool2d(x, 2)`: the same kernel
        // with the same arguments.
        _ if ops::OpDef::family_of(name) == Some(ops::Family::Functional) => {
            nn::functional(meta, name, args, range)
        }
        _ => {
            // A factory the op registry lists makes its tensor; any other
            // name, or a call the factory's rule does not make, is a tensor op.
            if let Some(v) = creation::create(meta, name, &args, range) {
                return v;
            }
            let name = name
                .strip_prefix("linalg.")
                .map(|n| format!("linalg_{n}"))
                .unwrap_or_else(|| name.to_string());
            let name = name.strip_prefix("special.").unwrap_or(&name).to_string();
            ops::op(meta, &name, args, range)
        }
    }
}

/// A method call on a tensor: `x.view(...)`.
pub(crate) fn tensor_method(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
    range: TextRange,
) -> Value {
    if let Some(message) = required_args::not_a_method(name)
        .or_else(|| required_args::missing_required(name, &args, &kwargs))
    {
        meta.report(range, Code::ArgumentType, message);
        return Value::Unknown;
    }
    let def = ops::OpDef::of(name);
    let mut positional = vec![Value::Tensor(t.clone())];
    // Arguments the analysis cannot read stand for sizes (`x.view(b, n)`),
    // except where a conversion reads a dtype or a device (`x.to(dtype)`).
    if def.is_some_and(|def| {
        def.family == ops::Family::Convert || def.unread_args == ops::UnreadArgs::Data
    }) {
        positional.extend(args);
    } else {
        positional.extend(meta.sizes_from_opaque(args));
    }
    // `x.reshape(shape=(...))`, `x.view(size=(...))`, `x.tile(dims=...)`:
    // the sizes by keyword are the sizes, for the ops whose arguments
    // after `self` are sizes.
    let mut kwargs = kwargs;
    if positional.len() == 1
        && def.is_some_and(|def| def.sizes_follow)
        && let Some(at) = kwargs
            .iter()
            .position(|(k, _)| matches!(&**k, "shape" | "size" | "sizes" | "repeats" | "dims"))
    {
        let (_, sizes) = kwargs.remove(at);
        positional.extend(meta.sizes_from_opaque(vec![sizes]));
    }
    let args = Args {
        method: true,
        ..Args::new(positional, kwargs)
    };
    // A method the op registry gives a rule of its own (`new_zeros`,
    // `size`, `to`) runs it; any other is a tensor op.
    if let Some(v) = creation::method(meta, t, name, &args, range) {
        return v;
    }
    ops::op(meta, name, args, range)
}

/// Attributes of a tensor: `x.shape`, `x.T`, `x.device`, and bound methods.
pub(crate) fn tensor_attr(
    meta: &mut dyn Meta,
    object: &Value,
    t: &Rc<Tensor>,
    attr: &str,
    range: TextRange,
) -> Value {
    let shape = meta.resolve_shape(&t.shape);
    match attr {
        "shape" => size_value(&shape),
        "ndim" => match shape.dims() {
            Some(d) => Value::int(d.len() as i64),
            None => Value::Unknown,
        },
        "dtype" => t.dtype.map(Value::DType).unwrap_or(Value::Unknown),
        // A device the analysis cannot tell is still a device: `p.to(x.device)`
        // moves `p` and keeps its dtype.
        "device" => t
            .device
            .clone()
            .map(Value::Device)
            .unwrap_or_else(|| Value::Opaque(Rc::from("device"))),
        "is_cuda" => match &t.device {
            Some(Device::Cuda(_)) => Value::Bool(Some(true)),
            Some(Device::CudaOrCpu) | None => Value::Bool(None),
            Some(_) => Value::Bool(Some(false)),
        },
        "requires_grad" | "is_leaf" => Value::Bool(None),
        "data" | "grad" => Value::Tensor(t.clone()),
        "T" | "mT" | "mH" | "H" => ops::op(
            meta,
            &format!("__attr_{attr}"),
            Args::new(vec![object.clone()], Vec::new()),
            range,
        ),
        // the real and imaginary parts of a complex tensor are real
        "real" | "imag" => match t.dtype {
            Some(d) if d.is_complex() => Value::Tensor(Rc::new(Tensor {
                dtype: Some(d.to_real()),
                ..(**t).clone()
            })),
            Some(_) if attr == "imag" => {
                meta.report(
                    range,
                    crate::report::Code::DtypeUnsupported,
                    "imag is not implemented for tensors with non-complex dtypes.".into(),
                );
                Value::Unknown
            }
            _ => Value::Tensor(t.clone()),
        },
        _ => Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr)),
    }
}

/// `x.shape` / `x.size()`: a tuple of sizes, or a placeholder while the rank is unknown.
pub(crate) fn size_value(shape: &Shape) -> Value {
    match shape {
        Shape::Known(dims) => Value::tuple(dims.iter().map(|d| Value::Int(d.clone())).collect()),
        Shape::Var(v) => Value::SizeOfVar(*v, Rc::new(Vec::new())),
        Shape::Tail(v, dims) => Value::SizeOfVar(*v, dims.clone()),
    }
}

/// Methods of a `torch.Size` (a tuple of ints): `numel`, `index`, `count`.
pub(crate) fn size_method(meta: &mut dyn Meta, receiver: &Value, name: &str) -> Value {
    match (name, receiver) {
        ("numel", Value::Tuple(items)) => {
            let mut acc = Dim::konst(1);
            for item in items.iter() {
                match meta.as_dim(item) {
                    Some(d) => acc = acc.mul(&d),
                    None => return Value::Unknown,
                }
            }
            Value::Int(acc)
        }
        ("index" | "count", Value::Tuple(_)) => Value::Unknown,
        _ => Value::Unknown,
    }
}

/// The torch op a Python operator calls on tensors.
fn binary_op_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mul => "mul",
        BinOp::Div => "div",
        BinOp::FloorDiv => "floor_divide",
        BinOp::Mod => "remainder",
        BinOp::Pow => "pow",
        BinOp::MatMul => "matmul",
        BinOp::BitAnd => "bitwise_and",
        BinOp::BitOr => "bitwise_or",
        BinOp::BitXor => "bitwise_xor",
        BinOp::LShift => "bitwise_left_shift",
        BinOp::RShift => "bitwise_right_shift",
    }
}

pub(crate) fn binary_op(
    meta: &mut dyn Meta,
    op: BinOp,
    a: &Value,
    b: &Value,
    range: TextRange,
    left: TextRange,
    right: TextRange,
) -> Value {
    let args = Args::operands(a, b, vec![left, right]);
    ops::op(meta, binary_op_name(op), args, range)
}

/// `a += b` on a tensor: torch runs the in-place op, which keeps `a`'s
/// shape and dtype (and fails when the result would not fit in `a`).
/// `@=` has no in-place form and rebinds like `a = a @ b`.
pub(crate) fn inplace_binary_op(
    meta: &mut dyn Meta,
    op: BinOp,
    a: &Value,
    b: &Value,
    range: TextRange,
    left: TextRange,
    right: TextRange,
) -> Value {
    if op == BinOp::MatMul {
        return binary_op(meta, op, a, b, range, left, right);
    }
    let args = Args::operands(a, b, vec![left, right]);
    ops::op(meta, &format!("{}_", binary_op_name(op)), args, range)
}

/// `a < b` and the other comparisons with a tensor: torch's `lt`, `eq`, ...
/// (`is` and `in` never reach a kernel).
pub(crate) fn compare_op(
    meta: &mut dyn Meta,
    op: CmpOp,
    a: &Value,
    b: &Value,
    range: TextRange,
) -> Value {
    // `2 < t` is `t > 2`: Python asks the tensor, with the operator mirrored.
    if !matches!(a, Value::Tensor(_)) && matches!(b, Value::Tensor(_)) {
        let mirrored = match op {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtE => CmpOp::GtE,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtE => CmpOp::LtE,
            other => other,
        };
        return compare_op(meta, mirrored, b, a, range);
    }
    let name = match op {
        CmpOp::NotEq => "ne",
        CmpOp::Lt => "lt",
        CmpOp::LtE => "le",
        CmpOp::Gt => "gt",
        CmpOp::GtE => "ge",
        CmpOp::Eq | CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn => "eq",
    };
    ops::op(meta, name, Args::operands(a, b, Vec::new()), range)
}

pub(crate) fn unary_op(meta: &mut dyn Meta, op: UnaryOp, v: &Value, range: TextRange) -> Value {
    let name = match op {
        UnaryOp::Neg => "neg",
        UnaryOp::Pos => "positive",
        UnaryOp::Not => return Value::Bool(None),
        UnaryOp::Invert => {
            // `Tensor.__invert__` checks the dtype itself, in its own words,
            // before the kernel would.
            if let Value::Tensor(t) = v
                && t.dtype.is_some_and(|d| d.is_floating() || d.is_complex())
            {
                meta.report(
                    range,
                    Code::DtypeUnsupported,
                    "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
                        .into(),
                );
                return Value::Unknown;
            }
            "bitwise_not"
        }
    };
    ops::op(meta, name, Args::new(vec![v.clone()], Vec::new()), range)
}

/// `torch.broadcast_shapes(*shapes)`: the size they all broadcast to. Sizes
/// of tensors of unknown rank broadcast when they share the rank variable
/// (`[*batch, 3]` for several rays) and their known dims are as many;
/// sizes torch would refuse, or that the analysis cannot line up, give an
/// unknown value.
fn broadcast_shapes(meta: &mut dyn Meta, shapes: &[Value]) -> Value {
    let mut var: Option<u32> = None;
    let mut dims: Option<Vec<Dim>> = None;
    for shape in shapes {
        let (v, these) = match shape {
            Value::SizeOfVar(v, suffix) => (Some(*v), suffix.as_ref().clone()),
            other => match other.items() {
                Some(items) => {
                    let mut these = Vec::new();
                    for item in &items {
                        match item {
                            Value::Int(d) => these.push(d.clone()),
                            _ => return Value::Unknown,
                        }
                    }
                    (None, these)
                }
                None => return Value::Unknown,
            },
        };
        // A known size lines up with an unknown rank's only when it is
        // no longer than the known dims; two unknown ranks, when they are
        // one rank variable with as many known dims.
        match (var, v) {
            (Some(a), Some(b)) if a != b => return Value::Unknown,
            (Some(_), Some(_)) if dims.as_ref().is_some_and(|d| d.len() != these.len()) => {
                return Value::Unknown;
            }
            (Some(_), None) if dims.as_ref().is_some_and(|d| these.len() > d.len()) => {
                return Value::Unknown;
            }
            (None, Some(_)) if dims.as_ref().is_some_and(|d| d.len() > these.len()) => {
                return Value::Unknown;
            }
            _ => {}
        }
        var = var.or(v);
        dims = Some(match dims {
            None => these,
            Some(before) => match shape::broadcast(meta, &before, &these) {
                Ok(d) => d,
                Err(_) => return Value::Unknown,
            },
        });
    }
    let dims = dims.unwrap_or_default();
    match var {
        Some(v) => Value::SizeOfVar(v, Rc::new(dims)),
        None => Value::tuple(dims.into_iter().map(Value::Int).collect()),
    }
}
