//! The rules of the tensor methods that are not computations: reading metadata (`size`, `dim`, `item`), casts and moves (`float`, `to`, `cuda`), new tensors like `self` (`new_zeros`), and autograd and memory bookkeeping (`requires_grad_`, `backward`).
//!
//! Each is the `MethodRule` of its registry entry; `creation::method` runs
//! it in place of the op dispatch.

use std::rc::Rc;

use shapels_shapes::Dim;

use super::{MethodCall, device_arg, device_of, dtype_or, literal_shape};
use crate::code::Code;
use crate::rules::meta::Meta;
use crate::rules::shape::{numel, wrap_dim};
use crate::value::{DType, Device, Shape, Tensor, Value};

/// `size()`, the whole shape, or `size(dim)`, one size (torch raises for a
/// dim out of range).
pub(crate) fn size(meta: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    let shape = &call.shape;
    match call.args.get(1, "dim") {
        None => crate::rules::size_value(shape),
        Some(Value::Int(d)) => match (shape.dims(), d.as_const()) {
            (Some(dims), Some(i)) => match wrap_dim(i, dims.len()) {
                Ok(i) => Value::Int(dims.get(i).cloned().unwrap_or_else(|| Dim::konst(1))),
                Err(message) => {
                    meta.report(call.range, Code::DimOutOfRange, message);
                    Value::Unknown
                }
            },
            (None, Some(i)) => match shape.tail() {
                Some((v, known)) => {
                    Value::Int(crate::rules::shape::unknown_rank_size(meta, v, known, i))
                }
                None => Value::Int(meta.env_mut().anonymous()),
            },
            _ => Value::Int(meta.env_mut().anonymous()),
        },
        _ => Value::Unknown,
    }
}

/// `dim()`, `ndimension()`: the rank.
pub(crate) fn rank(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    match call.shape.dims() {
        Some(d) => Value::int(d.len() as i64),
        None => Value::Unknown,
    }
}

/// `numel()`, `nelement()`: the product of the sizes.
pub(crate) fn element_count(meta: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    match call.shape.dims() {
        Some(d) => Value::Int(numel(d)),
        None => Value::Int(meta.env_mut().anonymous()),
    }
}

/// `is_floating_point()`.
pub(crate) fn is_floating_point(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    Value::Bool(call.t.dtype.map(|d| d.is_floating()))
}

/// `is_complex()`.
pub(crate) fn is_complex(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    Value::Bool(call.t.dtype.map(|d| d.is_complex()))
}

/// `is_contiguous()`, `is_pinned()`: the memory layout, which the analysis
/// does not follow.
pub(crate) fn unknown_bool(_: &mut dyn Meta, _: &MethodCall<'_>) -> Value {
    Value::Bool(None)
}

/// `element_size()`, `tolist()`, `numpy()`: values the analysis does not
/// follow.
pub(crate) fn unknown(_: &mut dyn Meta, _: &MethodCall<'_>) -> Value {
    Value::Unknown
}

/// `get_device()`: the CUDA index, or -1 on the CPU.
pub(crate) fn get_device(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    match &call.t.device {
        Some(Device::Cuda(i)) => Value::int(*i as i64),
        Some(Device::Cpu) => Value::int(-1),
        _ => Value::Unknown,
    }
}

/// `item()`: an int of a bool or integer tensor, else a float.
pub(crate) fn item(meta: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    match call.t.dtype {
        Some(d) if d.category() <= 1 => Value::Int(meta.env_mut().anonymous()),
        _ => Value::Float(None),
    }
}

/// `float()`, `long()` and the other casts named after their dtype.
pub(crate) fn cast(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    call.retyped(cast_dtype(call.name), None)
}

/// The dtype a cast method is named after.
fn cast_dtype(name: &str) -> Option<DType> {
    Some(match name {
        "float" => DType::Float32,
        "double" => DType::Float64,
        "half" => DType::Float16,
        "bfloat16" => DType::BFloat16,
        "long" => DType::Int64,
        "int" => DType::Int32,
        "short" => DType::Int16,
        "char" => DType::Int8,
        "byte" => DType::UInt8,
        "bool" => DType::Bool,
        _ => return None,
    })
}

/// `cpu()`.
pub(crate) fn cpu(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    call.retyped(None, Some(Some(Device::Cpu)))
}

/// `cuda()`, `cuda(device)`.
pub(crate) fn cuda(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    call.retyped(None, Some(cuda_device(call.args.get(1, "device"))))
}

/// The device `cuda(device)` moves to: the current one (taken as `cuda:0`)
/// without an argument, and an unknown one for an index the analysis
/// cannot read (`x.cuda(local_rank)` runs on every rank's own GPU).
pub(crate) fn cuda_device(arg: Option<&Value>) -> Option<Device> {
    match arg {
        None | Some(Value::None) => Some(Device::Cuda(0)),
        Some(Value::Int(d)) => d
            .as_const()
            .and_then(|i| u32::try_from(i).ok())
            .map(Device::Cuda),
        Some(Value::Device(d)) => Some(d.clone()),
        Some(_) => None,
    }
}

/// `type_as(other)`: `self.type(other.type())`. The type names the device
/// too (`torch.cuda.FloatTensor`), so the result is where `other` is.
pub(crate) fn type_as(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    let other = call.args.tensor(1, "other");
    Value::Tensor(Rc::new(Tensor {
        shape: call.shape.clone(),
        dtype: other.as_ref().and_then(|o| o.dtype),
        device: other.as_ref().and_then(|o| o.device.clone()),
        op: Rc::from("type_as"),
        ..(**call.t).clone()
    }))
}

/// `type(dtype)`, and `type()`, the type's name.
pub(crate) fn type_(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    let v = match call.args.get(1, "dtype") {
        Some(Value::DType(d)) => return call.retyped(Some(*d), None),
        None => return Value::Unknown,
        Some(v) => v,
    };
    // A dtype the analysis cannot read (`x.type(self.dtype)` of a model
    // built in fp16 or not), or a tensor type's name
    // (`"torch.cuda.HalfTensor"`, which also moves it): the same shape, of
    // a dtype it does not know.
    let device = match v {
        Value::Str(name) if name.contains("cuda") => Some(Device::Cuda(0)),
        Value::Str(_) => Some(Device::Cpu),
        Value::Opaque(n) if n.ends_with("dtype") => call.t.device.clone(),
        Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::None => {
            return Value::Unknown;
        }
        _ => None,
    };
    Value::Tensor(Rc::new(Tensor {
        shape: call.shape.clone(),
        dtype: None,
        device,
        op: Rc::from("type"),
        ..(**call.t).clone()
    }))
}

/// `to(dtype)`, `to(device)`, `to(other)`, `to(device, dtype)` and the
/// keyword forms.
pub(crate) fn to(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    let target = ToTarget::read(call.args);
    match call.retyped(target.dtype, target.device) {
        Value::Tensor(moved) if target.dtype_unknown => Value::Tensor(Rc::new(Tensor {
            dtype: None,
            ..(*moved).clone()
        })),
        moved => moved,
    }
}

/// Where `to` sends a tensor, as its arguments say.
struct ToTarget {
    /// The dtype named, if one is.
    dtype: Option<DType>,
    /// The device named (`Some(None)`: one the analysis cannot tell).
    device: Option<Option<Device>>,
    /// A dtype is named that the analysis cannot read: the result's dtype
    /// is unknown, whatever `dtype` says.
    dtype_unknown: bool,
}

impl ToTarget {
    fn read(args: &crate::rules::Args) -> ToTarget {
        let mut target = ToTarget {
            dtype: super::dtype_arg(args),
            device: device_arg(args),
            // A dtype the analysis does not know (`torch.float8_e4m3fn`), or
            // an argument it cannot read, leaves the new dtype unknown.
            dtype_unknown: matches!(args.kw("dtype"), Some(v) if !matches!(v, Value::DType(_))),
        };
        for v in args.pos.iter().skip(1) {
            target.read_positional(v);
        }
        target
    }

    /// One positional argument: a dtype, a device, or a tensor to match.
    fn read_positional(&mut self, v: &Value) {
        match v {
            Value::DType(d) => self.dtype = Some(*d),
            Value::Device(_) | Value::Str(_) => self.device = Some(device_of(v)),
            // A device named by a string of unknown text (`f"cuda:{rank}"`):
            // some device.
            Value::Text => self.device = Some(None),
            Value::Tensor(other) => {
                self.dtype = other.dtype;
                self.dtype_unknown |= other.dtype.is_none();
                self.device = Some(other.device.clone());
            }
            // An argument of an uncalled function: what its name says it is
            // (`device`, `self.dtype`), else either.
            Value::Opaque(n) if n.ends_with("device") => self.device = Some(None),
            Value::Opaque(n) if n.ends_with("dtype") => self.dtype_unknown = true,
            Value::Unknown | Value::Opaque(_) => {
                self.device = Some(None);
                self.dtype_unknown = true;
            }
            Value::Path(_) => self.dtype_unknown = true,
            _ => {}
        }
    }
}

/// `new_zeros`, `new_ones`, `new_empty`: sizes as `*size` or `size=`.
pub(crate) fn new_filled(meta: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    let args = call.args;
    if let Some(shape) = new_sizes_of_unknown_rank(call) {
        return new_like_self(meta, call, shape);
    }
    let dims = if args.sizes_unknown(1) {
        None
    } else if args.pos.len() == 1 {
        // `t.new_zeros(size=(n, d))`, or no size at all.
        match args.kw("size") {
            Some(Value::SizeOfVar(..)) | None => None,
            Some(v) => v.items().map(|items| meta.size_dims(&items)),
        }
    } else {
        Some(meta.size_dims(&args.varargs(1)))
    };
    new_of_sizes(meta, call, dims)
}

/// `new_full(size, fill_value)`.
pub(crate) fn new_full(meta: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    let args = call.args;
    if let Some(shape) = new_sizes_of_unknown_rank(call) {
        return new_like_self(meta, call, shape);
    }
    let dims = if args.sizes_unknown(1) {
        None
    } else {
        args.get(1, "size")
            .and_then(|v| v.items())
            .map(|items| meta.size_dims(&items))
    };
    new_of_sizes(meta, call, dims)
}

/// `new_tensor(data)`: the shape of the data.
pub(crate) fn new_tensor(meta: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    let args = call.args;
    let dims = if args.sizes_unknown(1) {
        None
    } else {
        let data = args.get(1, "data").cloned().unwrap_or(Value::Unknown);
        literal_shape(meta, &data).map(|(d, _)| d)
    };
    new_of_sizes(meta, call, dims)
}

/// `t.new_empty(t.shape + (2,))` of a tensor of unknown rank: that tensor's
/// leading sizes, then the known ones; `None` when the sizes are not such.
fn new_sizes_of_unknown_rank(call: &MethodCall<'_>) -> Option<Shape> {
    match call.args.pos.get(1) {
        Some(Value::SizeOfVar(var, suffix)) => Some(Shape::of_sizes(*var, suffix)),
        _ => None,
    }
}

/// A `new_*` tensor of `dims`, or of an unknown rank when they are not known.
fn new_of_sizes(meta: &mut dyn Meta, call: &MethodCall<'_>, dims: Option<Vec<Dim>>) -> Value {
    if let Some(dims) = &dims
        && let Some(at) = dims
            .iter()
            .position(|d| d.as_const().is_some_and(|n| n < 0))
    {
        let message = super::negative_size_message(meta, call.name, dims, at);
        meta.report(call.range, Code::NegativeSize, message);
        return Value::Unknown;
    }
    let shape = match dims {
        Some(d) => Shape::known(d),
        None => meta.fresh_rank_var(),
    };
    new_like_self(meta, call, shape)
}

/// A `new_*` tensor of `shape`, of `self`'s dtype and device unless
/// `dtype=` or `device=` say otherwise.
fn new_like_self(meta: &mut dyn Meta, call: &MethodCall<'_>, shape: Shape) -> Value {
    let dtype = dtype_or(call.args, call.t.dtype);
    let device = device_arg(call.args).unwrap_or_else(|| call.t.device.clone());
    Value::Tensor(Rc::new(meta.new_tensor(shape, dtype, device, call.name)))
}

/// `requires_grad_(False)` freezes the tensor, which the model summary
/// counts; the method returns `self`. The call's arguments start with
/// `self`, so the flag is the second.
pub(crate) fn requires_grad_(meta: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    let this = Value::Tensor(call.t.clone());
    if matches!(
        call.args.get(1, "requires_grad"),
        Some(Value::Bool(Some(false)))
    ) {
        meta.freeze_for_summary(&this);
    }
    this
}

/// `retain_grad()`, `share_memory_()`, `pin_memory()`: `self`, as it was.
pub(crate) fn returns_self(_: &mut dyn Meta, call: &MethodCall<'_>) -> Value {
    Value::Tensor(call.t.clone())
}

/// `backward()`, `register_hook(hook)`: `None` (a hook's handle is not
/// followed).
pub(crate) fn returns_none(_: &mut dyn Meta, _: &MethodCall<'_>) -> Value {
    Value::None
}
