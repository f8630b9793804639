//! Factories (`torch.randn`, `torch.tensor`, `*_like`) and the metadata
//! methods of a tensor (`size`, `dim`, `to`, `float`, `new_zeros`).

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::shape::{numel, wrap_dim};
use crate::code::Code;
use crate::interp::Interp;
use crate::value::{DType, Device, Shape, Tensor, Value};

/// A `torch.<name>(...)` factory, or `None` when `name` is not one.
pub(crate) fn create(
    interp: &mut Interp<'_>,
    name: &str,
    args: &Args,
    range: TextRange,
) -> Option<Value> {
    let float = interp.defaults.float;
    // `torch.zeros(shape)` with `shape` unknown: not even the rank is known.
    if matches!(name, "randn" | "rand" | "zeros" | "ones" | "empty") && args.sizes_unknown(0) {
        let shape = interp.fresh_rank_var();
        return Some(of_unlisted_size(interp, args, shape, float, name));
    }
    let (shape, dtype) = match name {
        // `torch.zeros(x.shape)` or `torch.zeros(*x.shape[:-1], 4)`: the
        // leading sizes of a tensor of unknown rank, then known ones;
        // `torch.zeros(3, *x.size())`: sizes of an unknown count after known
        // ones, so an unknown rank.
        "randn" | "rand" | "zeros" | "ones" | "empty"
            if args.pos.iter().any(|v| matches!(v, Value::SizeOfVar(..))) =>
        {
            let shape = match args.pos.as_slice() {
                [Value::SizeOfVar(var, suffix), rest @ ..]
                    if !rest.iter().any(|v| matches!(v, Value::SizeOfVar(..))) =>
                {
                    let mut dims = suffix.as_ref().clone();
                    dims.extend(interp.size_dims(rest));
                    Shape::of_sizes(*var, &Rc::new(dims))
                }
                _ => interp.fresh_rank_var(),
            };
            return Some(of_unlisted_size(interp, args, shape, float, name));
        }
        "randn" | "rand" | "zeros" | "ones" | "empty" => {
            let items = match args.kw("size") {
                // torch.zeros(size=[2, 3])
                Some(v) if args.pos.is_empty() => match v.items() {
                    Some(items) => items,
                    None => return Some(Value::Unknown),
                },
                _ => args.varargs(0),
            };
            let sizes = interp.size_dims(&items);
            (sizes, float)
        }
        "full" => {
            let dtype = match args.get(1, "fill_value") {
                Some(Value::Int(_)) => Some(DType::Int64),
                Some(Value::Bool(_)) => Some(DType::Bool),
                _ => float,
            };
            match sized(interp, args.get(0, "size")) {
                Ok(sizes) => (sizes, dtype),
                Err(shape) => return Some(of_unlisted_size(interp, args, shape, dtype, name)),
            }
        }
        "randint" => {
            // randint(high, size) or randint(low, high, size)
            let size = args
                .kw("size")
                .or_else(|| args.pos.get(1..).and_then(<[Value]>::last));
            match sized(interp, size) {
                Ok(sizes) => (sizes, Some(DType::Int64)),
                Err(shape) => {
                    return Some(of_unlisted_size(
                        interp,
                        args,
                        shape,
                        Some(DType::Int64),
                        name,
                    ));
                }
            }
        }
        "randperm" => {
            let n = args.get(0, "n").cloned().unwrap_or(Value::Unknown);
            (interp.size_dims(&[n]), Some(DType::Int64))
        }
        // The (row, column) pairs above or below a diagonal: `[2, count]`.
        "triu_indices" | "tril_indices" => {
            let (row, col) = (args.int(0, "row"), args.int(1, "col"));
            let offset = match args.get(2, "offset") {
                None => Some(0),
                Some(_) => args.int(2, "offset"),
            };
            let count = match (row, col, offset) {
                (Some(r), Some(c), Some(k)) if r >= 0 && c >= 0 && r * c <= 1 << 24 => {
                    let upper = name == "triu_indices";
                    let n = (0..r)
                        .flat_map(|i| (0..c).map(move |j| (i, j)))
                        .filter(|(i, j)| if upper { j - i >= k } else { j - i <= k })
                        .count();
                    Dim::konst(n as i64)
                }
                _ => interp.env.anonymous(),
            };
            (vec![Dim::konst(2), count], Some(DType::Int64))
        }
        // Signal windows (`torch.hann_window(n_fft)` for `stft`).
        "hann_window" | "hamming_window" | "blackman_window" | "bartlett_window"
        | "kaiser_window" => {
            let n = args
                .get(0, "window_length")
                .cloned()
                .unwrap_or(Value::Unknown);
            (interp.size_dims(&[n]), float)
        }
        "arange" => {
            let nums: Vec<&Value> = args.pos.iter().collect();
            let all_int = nums.iter().all(|v| matches!(v, Value::Int(_)))
                && ["start", "end", "step"]
                    .iter()
                    .all(|k| !matches!(args.kw(k), Some(Value::Float(_))));
            let get = |i: usize, k: &str| args.kw(k).or_else(|| nums.get(i).copied());
            let (start, end, step) = match nums.len() {
                0 => (
                    args.kw("start").cloned().unwrap_or(Value::int(0)),
                    args.kw("end").cloned(),
                    args.kw("step").cloned(),
                ),
                1 => (
                    Value::int(0),
                    get(0, "end").cloned(),
                    args.kw("step").cloned(),
                ),
                _ => (
                    nums[0].clone(),
                    nums.get(1).map(|v| (*v).clone()),
                    nums.get(2)
                        .map(|v| (*v).clone())
                        .or(args.kw("step").cloned()),
                ),
            };
            let len = arange_len(interp, &start, end.as_ref(), step.as_ref());
            // int64 from ints, the default float from a float; from numbers
            // the analysis cannot read, either: unknown, not a guess.
            let any_float = nums.iter().any(|v| matches!(v, Value::Float(_)))
                || ["start", "end", "step"]
                    .iter()
                    .any(|k| matches!(args.kw(k), Some(Value::Float(_))));
            let dtype = if all_int {
                Some(DType::Int64)
            } else if any_float {
                float
            } else {
                None
            };
            (vec![len], dtype)
        }
        "linspace" | "logspace" => {
            let n = args.get(2, "steps").cloned().unwrap_or(Value::Unknown);
            (interp.size_dims(&[n]), float)
        }
        "eye" => {
            let n = args.get(0, "n").cloned().unwrap_or(Value::Unknown);
            let m = args.get(1, "m").cloned().unwrap_or_else(|| n.clone());
            (interp.size_dims(&[n, m]), float)
        }
        "tensor" | "as_tensor" => {
            let data = args.get(0, "data").cloned().unwrap_or(Value::Unknown);
            match literal_shape(interp, &data) {
                Some((dims, dtype)) => (dims, dtype),
                None => {
                    let shape = interp.fresh_rank_var();
                    // Data it cannot read still goes where `device=` says,
                    // with the `dtype=` given.
                    let device = device_arg(args).unwrap_or_else(|| interp.defaults.device.clone());
                    let t = interp.new_tensor(shape, dtype_arg(args), device, "torch.tensor");
                    return Some(Value::Tensor(Rc::new(t)));
                }
            }
        }
        _ if name.ends_with("_like") => {
            let base = args.tensor(0, "input")?;
            let dtype = match name {
                "randint_like" => base.dtype,
                "full_like" => base.dtype,
                _ => base.dtype,
            };
            let dtype = dtype_or(args, dtype);
            let device = device_arg(args).unwrap_or_else(|| base.device.clone());
            let t = interp.new_tensor(base.shape.clone(), dtype, device, &format!("torch.{name}"));
            return Some(Value::Tensor(Rc::new(t)));
        }
        _ => return None,
    };
    if let Some(i) = shape
        .iter()
        .position(|d| d.as_const().is_some_and(|n| n < 0))
    {
        let bad = &shape[i];
        // Some factories check their sizes in their own words first.
        let message = match name {
            "zeros" => "zeros: Dimension size must be non-negative.".to_string(),
            "linspace" | "logspace" => "number of steps must be non-negative".to_string(),
            "eye" => format!(
                "{} must be greater or equal to 0, got {}",
                if i == 0 { "n" } else { "m" },
                interp.fmt_dim(bad)
            ),
            _ => format!(
                "Trying to create tensor with negative dimension {}: {}",
                interp.fmt_dim(bad),
                interp.fmt_dims(&shape)
            ),
        };
        interp.report(range, Code::NegativeSize, message);
        return Some(Value::Unknown);
    }
    let dtype = dtype_or(args, dtype);
    let device = device_arg(args).unwrap_or_else(|| interp.defaults.device.clone());
    let t = interp.new_tensor(Shape::known(shape), dtype, device, &format!("torch.{name}"));
    Some(Value::Tensor(Rc::new(Tensor {
        made_at: Some(range),
        ..t
    })))
}

/// `torch.arange` length: `ceil((end - start) / step)`.
fn arange_len(
    interp: &mut Interp<'_>,
    start: &Value,
    end: Option<&Value>,
    step: Option<&Value>,
) -> Dim {
    let num = |v: &Value| match v {
        Value::Int(d) => d.as_const().map(|n| n as f64),
        Value::Float(f) => *f,
        _ => None,
    };
    let step_v = step.map(num).unwrap_or(Some(1.0));
    if let (Some(s), Some(e), Some(st)) = (num(start), end.and_then(num), step_v)
        && st != 0.0
    {
        return Dim::konst(((e - s) / st).ceil().max(0.0) as i64);
    }
    // Symbolic ints: (end - start + step - 1) // step for a known positive int step.
    if let (Value::Int(s), Some(Value::Int(e))) = (start, end) {
        let st = match step {
            None => Some(1),
            Some(Value::Int(d)) => d.as_const(),
            _ => None,
        };
        if let Some(st) = st.filter(|st| *st > 0)
            && let Some(len) = e.sub(s).add(&Dim::konst(st - 1)).floordiv(&Dim::konst(st))
        {
            return len;
        }
    }
    interp.env.anonymous()
}

/// The shape and dtype of a nested list literal.
fn literal_shape(interp: &mut Interp<'_>, data: &Value) -> Option<(Vec<Dim>, Option<DType>)> {
    match data {
        Value::Int(_) => Some((Vec::new(), Some(DType::Int64))),
        Value::Float(_) => Some((Vec::new(), Some(DType::Float32))),
        Value::Bool(_) => Some((Vec::new(), Some(DType::Bool))),
        Value::Tensor(t) => Some((interp.dims(t)?, t.dtype)),
        Value::Tuple(_) | Value::List(_) => {
            let items = data.items()?;
            let mut inner: Option<Vec<Dim>> = None;
            let mut dtype: Option<DType> = None;
            for item in &items {
                let (dims, d) = literal_shape(interp, item)?;
                if let Some(prev) = &inner
                    && *prev != dims
                {
                    return None;
                }
                inner = Some(dims);
                dtype = match (dtype, d) {
                    (None, d) => d,
                    (Some(a), Some(b)) => Some(super::dtype::join(a, b)),
                    (a, None) => a,
                };
            }
            let mut dims = vec![Dim::konst(items.len() as i64)];
            dims.extend(inner.unwrap_or_default());
            Some((dims, dtype.or(Some(DType::Float32))))
        }
        _ => None,
    }
}

pub(crate) fn dtype_arg(args: &Args) -> Option<DType> {
    match args.kw("dtype") {
        Some(Value::DType(d)) => Some(*d),
        _ => None,
    }
}

/// The dtype an op makes: the `dtype=` argument when given (unknown when
/// the analysis cannot read it: `dtype=labels.dtype` of unread labels is
/// not the default float), else `default`.
pub(crate) fn dtype_or(args: &Args, default: Option<DType>) -> Option<DType> {
    match args.kw("dtype") {
        None | Some(Value::None) => default,
        Some(Value::DType(d)) => Some(*d),
        Some(_) => None,
    }
}

/// The `device=` argument: `None` when absent, `Some(None)` when present but unknown.
pub(crate) fn device_arg(args: &Args) -> Option<Option<Device>> {
    args.kw("device").map(device_of)
}

pub(crate) fn device_of(v: &Value) -> Option<Device> {
    match v {
        Value::Device(d) => Some(d.clone()),
        Value::Str(s) => Device::parse(s),
        Value::Int(d) => d.as_const().map(|i| Device::Cuda(i as u32)),
        _ => None,
    }
}

/// Tensor methods that read or change metadata rather than compute.
pub(crate) fn method(
    interp: &mut Interp<'_>,
    t: &Rc<Tensor>,
    name: &str,
    args: &Args,
    range: TextRange,
) -> Option<Value> {
    let shape = interp.resolve_shape(&t.shape);
    let this = Value::Tensor(t.clone());
    let retype = |dtype: Option<DType>, device: Option<Option<Device>>, op: &str| {
        Value::Tensor(Rc::new(Tensor {
            shape: shape.clone(),
            dtype: dtype.or(t.dtype),
            device: device.unwrap_or_else(|| t.device.clone()),
            op: Rc::from(op),
            ..(**t).clone()
        }))
    };
    Some(match name {
        "size" => match args.get(1, "dim") {
            None => super::size_value(&shape),
            Some(Value::Int(d)) => match (shape.dims(), d.as_const()) {
                (Some(dims), Some(i)) => match wrap_dim(i, dims.len()) {
                    Ok(i) => Value::Int(dims.get(i).cloned().unwrap_or_else(|| Dim::konst(1))),
                    Err(message) => {
                        interp.report(range, Code::DimOutOfRange, message);
                        Value::Unknown
                    }
                },
                (None, Some(i)) => match &shape {
                    Shape::Var(v) => Value::Int(interp.var_dim(*v, i, &t.op)),
                    _ => Value::Int(interp.env.anonymous()),
                },
                _ => Value::Int(interp.env.anonymous()),
            },
            _ => Value::Unknown,
        },
        "dim" | "ndimension" => match shape.dims() {
            Some(d) => Value::int(d.len() as i64),
            None => Value::Unknown,
        },
        "numel" | "nelement" => match shape.dims() {
            Some(d) => Value::Int(numel(d)),
            None => Value::Int(interp.env.anonymous()),
        },
        "is_floating_point" => Value::Bool(t.dtype.map(|d| d.is_floating())),
        "is_complex" => Value::Bool(t.dtype.map(|d| d.is_complex())),
        "is_contiguous" | "is_pinned" => Value::Bool(None),
        "element_size" => Value::Unknown,
        "get_device" => match &t.device {
            Some(Device::Cuda(i)) => Value::int(*i as i64),
            Some(Device::Cpu) => Value::int(-1),
            _ => Value::Unknown,
        },
        "item" => match t.dtype {
            Some(d) if d.category() <= 1 => Value::Int(interp.env.anonymous()),
            _ => Value::Float(None),
        },
        "tolist" => Value::Unknown,
        "float" => retype(Some(DType::Float32), None, "float"),
        "double" => retype(Some(DType::Float64), None, "double"),
        "half" => retype(Some(DType::Float16), None, "half"),
        "bfloat16" => retype(Some(DType::BFloat16), None, "bfloat16"),
        "long" => retype(Some(DType::Int64), None, "long"),
        "int" => retype(Some(DType::Int32), None, "int"),
        "short" => retype(Some(DType::Int16), None, "short"),
        "char" => retype(Some(DType::Int8), None, "char"),
        "byte" => retype(Some(DType::UInt8), None, "byte"),
        "bool" => retype(Some(DType::Bool), None, "bool"),
        "cpu" => retype(None, Some(Some(Device::Cpu)), "cpu"),
        "cuda" => {
            let index = args.int(1, "device").unwrap_or(0);
            retype(None, Some(Some(Device::Cuda(index as u32))), "cuda")
        }
        // `self.type(other.type())`: the type names the device too
        // (`torch.cuda.FloatTensor`), so the result is where `other` is.
        "type_as" => {
            let other = args.tensor(1, "other");
            Value::Tensor(Rc::new(Tensor {
                shape: shape.clone(),
                dtype: other.as_ref().and_then(|o| o.dtype),
                device: other.as_ref().and_then(|o| o.device.clone()),
                op: Rc::from("type_as"),
                ..(**t).clone()
            }))
        }
        "type" => match args.get(1, "dtype") {
            Some(Value::DType(d)) => retype(Some(*d), None, "type"),
            // `x.type()` is the type's name.
            None => Value::Unknown,
            // A dtype the analysis cannot read (`x.type(self.dtype)` of a
            // model built in fp16 or not), or a tensor type's name
            // (`"torch.cuda.HalfTensor"`, which also moves it): the same
            // shape, of a dtype it does not know.
            Some(v) => {
                let device = match v {
                    Value::Str(name) if name.contains("cuda") => Some(Device::Cuda(0)),
                    Value::Str(_) => Some(Device::Cpu),
                    Value::Opaque(n) if n.ends_with("dtype") => t.device.clone(),
                    Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::None => {
                        return Some(Value::Unknown);
                    }
                    _ => None,
                };
                Value::Tensor(Rc::new(Tensor {
                    shape: shape.clone(),
                    dtype: None,
                    device,
                    op: Rc::from("type"),
                    ..(**t).clone()
                }))
            }
        },
        "to" => {
            let mut dtype = super::creation::dtype_arg(args);
            let mut device = device_arg(args);
            // A dtype the analysis does not know (`torch.float8_e4m3fn`), or
            // an argument it cannot read, leaves the new dtype unknown.
            let mut dtype_unknown =
                matches!(args.kw("dtype"), Some(v) if !matches!(v, Value::DType(_)));
            for v in args.pos.iter().skip(1) {
                match v {
                    Value::DType(d) => dtype = Some(*d),
                    Value::Device(_) | Value::Str(_) => device = Some(device_of(v)),
                    // A device named by a string of unknown text
                    // (`f"cuda:{rank}"`): some device.
                    Value::Text => device = Some(None),
                    Value::Tensor(other) => {
                        dtype = other.dtype;
                        dtype_unknown |= other.dtype.is_none();
                        device = Some(other.device.clone());
                    }
                    // An argument of an uncalled function: what its name says
                    // it is (`device`, `self.dtype`), else either.
                    Value::Opaque(n) if n.ends_with("device") => device = Some(None),
                    Value::Opaque(n) if n.ends_with("dtype") => dtype_unknown = true,
                    Value::Unknown | Value::Opaque(_) => {
                        device = Some(None);
                        dtype_unknown = true;
                    }
                    Value::Path(_) => dtype_unknown = true,
                    _ => {}
                }
            }
            match retype(dtype, device, "to") {
                Value::Tensor(moved) if dtype_unknown => Value::Tensor(Rc::new(Tensor {
                    dtype: None,
                    ..(*moved).clone()
                })),
                moved => moved,
            }
        }
        "new_zeros" | "new_ones" | "new_empty" | "new_full" | "new_tensor" => {
            let shape = match args.pos.get(1) {
                // `t.new_empty(t.shape + (2,))` of a tensor of unknown rank:
                // that tensor's leading sizes, then the known ones.
                Some(Value::SizeOfVar(var, suffix)) if name != "new_tensor" => {
                    Shape::of_sizes(*var, suffix)
                }
                _ => {
                    let dims = if args.sizes_unknown(1) {
                        None
                    } else if name == "new_tensor" {
                        let data = args.get(1, "data").cloned().unwrap_or(Value::Unknown);
                        literal_shape(interp, &data).map(|(d, _)| d)
                    } else if name == "new_full" {
                        args.get(1, "size")
                            .and_then(|v| v.items())
                            .map(|items| interp.size_dims(&items))
                    } else if args.pos.len() == 1 {
                        // `t.new_zeros(size=(n, d))`, or no size at all.
                        match args.kw("size") {
                            Some(Value::SizeOfVar(..)) | None => None,
                            Some(v) => v.items().map(|items| interp.size_dims(&items)),
                        }
                    } else {
                        Some(interp.size_dims(&args.varargs(1)))
                    };
                    match dims {
                        Some(d) => Shape::known(d),
                        None => interp.fresh_rank_var(),
                    }
                }
            };
            let dtype = dtype_or(args, t.dtype);
            let device = device_arg(args).unwrap_or_else(|| t.device.clone());
            Value::Tensor(Rc::new(interp.new_tensor(shape, dtype, device, name)))
        }
        "requires_grad_" => {
            if matches!(args.get(0, "requires_grad"), Some(Value::Bool(Some(false)))) {
                interp.summary_freeze_tensor(&this);
            }
            this
        }
        "retain_grad" | "share_memory_" | "pin_memory" => this,
        "backward" | "register_hook" => Value::None,
        "numpy" => Value::Unknown,
        _ => return None,
    })
}

/// The sizes a factory's `size` argument lists, or, when it does not list
/// them (the shape of a tensor of unknown rank, a value the analysis cannot
/// read), the shape it stands for: a rank variable's, or an unknown rank.
fn sized(interp: &mut Interp<'_>, size: Option<&Value>) -> Result<Vec<Dim>, Shape> {
    match size {
        Some(Value::SizeOfVar(var, suffix)) => Err(Shape::of_sizes(*var, suffix)),
        Some(v @ Value::Int(_)) => Ok(interp.size_dims(std::slice::from_ref(v))),
        Some(v) => match v.items() {
            Some(items) => Ok(interp.size_dims(&items)),
            None => Err(interp.fresh_rank_var()),
        },
        None => Err(interp.fresh_rank_var()),
    }
}

/// A factory's tensor whose sizes are not listed (see `sized`); a `dtype=`
/// given overrides `dtype`.
fn of_unlisted_size(
    interp: &mut Interp<'_>,
    args: &Args,
    shape: Shape,
    dtype: Option<DType>,
    name: &str,
) -> Value {
    let dtype = dtype_or(args, dtype);
    let device = device_arg(args).unwrap_or_else(|| interp.defaults.device.clone());
    Value::Tensor(Rc::new(interp.new_tensor(
        shape,
        dtype,
        device,
        &format!("torch.{name}"),
    )))
}
