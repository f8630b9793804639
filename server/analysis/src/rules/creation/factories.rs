//! The rules of the factories under `torch`: `zeros` and its kin, `full`, `arange`, `eye`, the windows, `tensor`, and the `*_like` factories.
//!
//! Each is the `FactoryRule` of its registry entry. Like torch's factory
//! functions, a rule reads the sizes (from `*size`, `size=`, or the numbers
//! that count them), decides the dtype, and leaves the checks of the sizes
//! and the `dtype=`/`device=` arguments to `FactoryCall::output`.

use std::rc::Rc;

use shapels_shapes::Dim;

use super::{FactoryCall, device_arg, dtype_arg, dtype_or, literal_shape, ragged_literal};
use crate::code::Code;
use crate::rules::Args;
use crate::rules::meta::Meta;
use crate::value::{DType, Shape, Value};

/// `zeros`, `ones`, `empty`, `rand`, `randn`: sizes as `*size` or `size=`,
/// of the default float dtype.
pub(crate) fn filled(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    let float = meta.defaults().float;
    // `torch.zeros(shape)` with `shape` unknown: not even the rank is known.
    if args.sizes_unknown(0) {
        let shape = meta.fresh_rank_var();
        return Some(call.output_of_unlisted_size(meta, shape, float));
    }
    if let Some(shape) = sizes_of_unknown_rank(meta, args) {
        return Some(call.output_of_unlisted_size(meta, shape, float));
    }
    let items = match args.kw("size") {
        // torch.zeros(size=[2, 3])
        Some(v) if args.pos.is_empty() => match v.items() {
            Some(items) => items,
            None => return Some(Value::Unknown),
        },
        _ => args.varargs(0),
    };
    let sizes = meta.size_dims(&items);
    Some(call.output(meta, sizes, float))
}

/// The shape `*size` stands for when some of the sizes are those of a
/// tensor of unknown rank, or `None` when none is. `torch.zeros(x.shape)`
/// or `torch.zeros(*x.shape[:-1], 4)`: the leading sizes of that tensor,
/// then known ones; `torch.zeros(3, *x.size())`: sizes of an unknown count
/// after known ones, so an unknown rank.
fn sizes_of_unknown_rank(meta: &mut dyn Meta, args: &Args) -> Option<Shape> {
    if !args.pos.iter().any(|v| matches!(v, Value::SizeOfVar(..))) {
        return None;
    }
    Some(match args.pos.as_slice() {
        [Value::SizeOfVar(var, suffix), rest @ ..]
            if !rest.iter().any(|v| matches!(v, Value::SizeOfVar(..))) =>
        {
            let mut dims = suffix.as_ref().clone();
            dims.extend(meta.size_dims(rest));
            Shape::of_sizes(*var, &Rc::new(dims))
        }
        _ => meta.fresh_rank_var(),
    })
}

/// `full(size, fill_value)`: the fill value's kind decides the dtype.
pub(crate) fn full(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    // A fill value the analysis cannot read may be of any kind.
    let dtype = match args.get(1, "fill_value") {
        Some(Value::Int(_)) => Some(DType::Int64),
        Some(Value::Bool(_)) => Some(DType::Bool),
        Some(Value::Float(_)) => meta.defaults().float,
        Some(Value::Complex) => meta.defaults().float.and_then(DType::to_complex),
        _ => None,
    };
    Some(match sized(meta, args.get(0, "size")) {
        Ok(sizes) => call.output(meta, sizes, dtype),
        Err(shape) => call.output_of_unlisted_size(meta, shape, dtype),
    })
}

/// `normal(mean, std, size)` of two numbers: `size` gives the shape, in
/// the default float dtype. A tensor `mean` (or `std`) with a number for
/// the other gives a tensor like it; two tensors broadcast, which the op
/// rules say (`None`).
pub(crate) fn normal(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    let (mean, std) = (args.get(0, "mean"), args.get(1, "std"));
    let number = |v: Option<&Value>| matches!(v, Some(Value::Int(_) | Value::Float(_)));
    let like = match (args.tensor(0, "mean"), args.tensor(1, "std")) {
        (Some(t), None) if std.is_none() || number(std) => t,
        (None, Some(t)) if number(mean) => t,
        (None, None) => {
            let float = dtype_or(args, meta.defaults().float);
            return Some(match sized(meta, args.get(2, "size")) {
                Ok(sizes) => call.output(meta, sizes, float),
                Err(shape) => call.output_of_unlisted_size(meta, shape, float),
            });
        }
        _ => return None,
    };
    let shape = meta.resolve_shape(&like.shape);
    Some(match shape.dims() {
        Some(dims) => call.output(meta, dims.to_vec(), like.dtype),
        None => call.output_of_unlisted_size(meta, shape, like.dtype),
    })
}

/// `randint(high, size)` or `randint(low, high, size)`: int64 sizes last.
pub(crate) fn randint(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    let size = args
        .kw("size")
        .or_else(|| args.pos.get(1..).and_then(<[Value]>::last));
    let dtype = dtype_or(args, Some(DType::Int64));
    // `randint(high, size)` or `randint(low, high, size)`, the size also
    // by keyword (`randint(0, n + 1, size=(1,))`).
    let bounds_given =
        args.pos.len() - usize::from(args.kw("size").is_none() && !args.pos.is_empty());
    let (low, high) = match bounds_given {
        2.. => (args.int(0, "low"), args.int(1, "high")),
        1 if args.kw("low").is_none() => (Some(0), args.int(0, "high")),
        _ => (None, None),
    };
    if let (Some(low), Some(high), Some(dtype)) = (low, high, dtype)
        && let Some(message) = random_bounds_error(low, high, dtype)
    {
        meta.report(call.range, Code::DtypeUnsupported, message);
        return Some(Value::Unknown);
    }
    Some(match sized(meta, size) {
        Ok(sizes) => call.output(meta, sizes, dtype),
        Err(shape) => call.output_of_unlisted_size(meta, shape, dtype),
    })
}

/// The sizes a factory's `size` argument lists, or, when it does not list
/// them (the shape of a tensor of unknown rank, a value the analysis cannot
/// read), the shape it stands for: a rank variable's, or an unknown rank.
fn sized(meta: &mut dyn Meta, size: Option<&Value>) -> Result<Vec<Dim>, Shape> {
    match size {
        Some(Value::SizeOfVar(var, suffix)) => Err(Shape::of_sizes(*var, suffix)),
        Some(v @ Value::Int(_)) => Ok(meta.size_dims(std::slice::from_ref(v))),
        Some(v) => match v.items() {
            Some(items) => Ok(meta.size_dims(&items)),
            None => Err(meta.fresh_rank_var()),
        },
        None => Err(meta.fresh_rank_var()),
    }
}

/// `randperm(n)`: the int64 permutation `[n]`.
pub(crate) fn randperm(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let n = call.args.get(0, "n").cloned().unwrap_or(Value::Unknown);
    let sizes = meta.size_dims(&[n]);
    Some(call.output(meta, sizes, Some(DType::Int64)))
}

/// `triu_indices`, `tril_indices`: the (row, column) pairs above or below a
/// diagonal, `[2, count]`.
pub(crate) fn triangle_indices(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    let (row, col) = (args.int(0, "row"), args.int(1, "col"));
    let offset = match args.get(2, "offset") {
        None => Some(0),
        Some(_) => args.int(2, "offset"),
    };
    let count = match (row, col, offset) {
        (Some(r), Some(c), Some(k)) if r >= 0 && c >= 0 && r * c <= 1 << 24 => {
            let upper = call.name == "triu_indices";
            let n = (0..r)
                .flat_map(|i| (0..c).map(move |j| (i, j)))
                .filter(|(i, j)| if upper { j - i >= k } else { j - i <= k })
                .count();
            Dim::konst(n as i64)
        }
        _ => meta.env_mut().anonymous(),
    };
    Some(call.output(meta, vec![Dim::konst(2), count], Some(DType::Int64)))
}

/// The signal windows (`torch.hann_window(n_fft)` for `stft`): `[window_length]`.
pub(crate) fn window(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let n = call
        .args
        .get(0, "window_length")
        .cloned()
        .unwrap_or(Value::Unknown);
    let float = meta.defaults().float;
    let sizes = meta.size_dims(&[n]);
    Some(call.output(meta, sizes, float))
}

/// `arange(end)`, `arange(start, end, step)`: `[ceil((end - start) / step)]`.
pub(crate) fn arange(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    let (start, end, step) = arange_bounds(args);
    if let Some(message) = arange_bounds_error(&start, end.as_ref(), step.as_ref()) {
        meta.report(call.range, Code::NegativeSize, message.to_string());
        return Some(Value::Unknown);
    }
    let len = arange_len(meta, &start, end.as_ref(), step.as_ref());
    let float = meta.defaults().float;
    let dtype = arange_dtype(args, float);
    Some(call.output(meta, vec![len], dtype))
}

/// A bound of `arange` the analysis knows, as a number.
fn known_number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(d) => d.as_const().map(|n| n as f64),
        Value::Float(f) => *f,
        _ => None,
    }
}

/// What torch's `arange` refuses in its bounds, in its order: a step of
/// zero, then an end on the other side of the start than the step goes.
fn arange_bounds_error(
    start: &Value,
    end: Option<&Value>,
    step: Option<&Value>,
) -> Option<&'static str> {
    let step = match step {
        None | Some(Value::None) => 1.0,
        Some(v) => known_number(v)?,
    };
    if step == 0.0 {
        return Some("step must be nonzero");
    }
    let (start, end) = (known_number(start)?, known_number(end?)?);
    let consistent = (step > 0.0 && end >= start) || (step < 0.0 && end <= start);
    (!consistent).then_some("upper bound and lower bound inconsistent with step sign")
}

/// `arange`'s start, end and step, given by position or keyword: one
/// number is the end, counted from 0.
fn arange_bounds(args: &Args) -> (Value, Option<Value>, Option<Value>) {
    let nums: Vec<&Value> = args.pos.iter().collect();
    match nums.len() {
        0 => (
            args.kw("start").cloned().unwrap_or(Value::int(0)),
            args.kw("end").cloned(),
            args.kw("step").cloned(),
        ),
        1 => (
            Value::int(0),
            args.kw("end").or_else(|| nums.first().copied()).cloned(),
            args.kw("step").cloned(),
        ),
        _ => (
            nums[0].clone(),
            nums.get(1).map(|v| (*v).clone()),
            nums.get(2)
                .map(|v| (*v).clone())
                .or(args.kw("step").cloned()),
        ),
    }
}

/// `arange`'s dtype: int64 from ints, the default float `float` from a
/// float; from numbers the analysis cannot read, either: unknown, not a
/// guess.
fn arange_dtype(args: &Args, float: Option<DType>) -> Option<DType> {
    const BOUNDS: [&str; 3] = ["start", "end", "step"];
    let all_int = args.pos.iter().all(|v| matches!(v, Value::Int(_)))
        && BOUNDS
            .iter()
            .all(|k| !matches!(args.kw(k), Some(Value::Float(_))));
    let any_float = args.pos.iter().any(|v| matches!(v, Value::Float(_)))
        || BOUNDS
            .iter()
            .any(|k| matches!(args.kw(k), Some(Value::Float(_))));
    if all_int {
        Some(DType::Int64)
    } else if any_float {
        float
    } else {
        None
    }
}

/// `torch.arange` length: `ceil((end - start) / step)`.
fn arange_len(
    meta: &mut dyn Meta,
    start: &Value,
    end: Option<&Value>,
    step: Option<&Value>,
) -> Dim {
    let step_v = step.map(known_number).unwrap_or(Some(1.0));
    if let (Some(s), Some(e), Some(st)) = (known_number(start), end.and_then(known_number), step_v)
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
    meta.env_mut().anonymous()
}

/// `linspace`, `logspace`: `[steps]`.
pub(crate) fn spaced(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let n = call.args.get(2, "steps").cloned().unwrap_or(Value::Unknown);
    let float = meta.defaults().float;
    let sizes = meta.size_dims(&[n]);
    Some(call.output(meta, sizes, float))
}

/// `eye(n)`, `eye(n, m)`: `[n, m]`, square when `m` is not given.
pub(crate) fn eye(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    let n = args.get(0, "n").cloned().unwrap_or(Value::Unknown);
    let m = args.get(1, "m").cloned().unwrap_or_else(|| n.clone());
    let float = meta.defaults().float;
    let sizes = meta.size_dims(&[n, m]);
    Some(call.output(meta, sizes, float))
}

/// `tensor(data)`, `as_tensor(data)`: the shape and dtype of the data.
pub(crate) fn tensor(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    let data = args.get(0, "data").cloned().unwrap_or(Value::Unknown);
    if let Some((dims, dtype)) = literal_shape(meta, &data) {
        return Some(call.output(meta, dims, dtype));
    }
    if let Some(message) = ragged_literal(&data) {
        meta.report(call.range, Code::ArgumentType, message);
        return Some(Value::Unknown);
    }
    // Data it cannot read still goes where `device=` says, with the
    // `dtype=` given.
    let shape = meta.fresh_rank_var();
    let device = device_arg(args).unwrap_or_else(|| meta.defaults().device.clone());
    let t = meta.new_tensor(shape, dtype_arg(args), device, "torch.tensor");
    Some(Value::Tensor(Rc::new(t)))
}

/// The legacy typed constructors (`torch.FloatTensor`, `torch.LongTensor`,
/// …): data (`FloatTensor([(0, 1), (2, 3)])`, one list or tuple) makes a
/// tensor of its shape, sizes (`FloatTensor(2, 3)`) an uninitialised one of
/// them; either way of the type's dtype, on the cpu.
pub(crate) fn legacy_typed(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let dtype = match call.name {
        "FloatTensor" => DType::Float32,
        "DoubleTensor" => DType::Float64,
        "HalfTensor" => DType::Float16,
        "BFloat16Tensor" => DType::BFloat16,
        "LongTensor" => DType::Int64,
        "IntTensor" => DType::Int32,
        "ShortTensor" => DType::Int16,
        "CharTensor" => DType::Int8,
        "ByteTensor" => DType::UInt8,
        "BoolTensor" => DType::Bool,
        _ => return None,
    };
    let args = call.args;
    if !args.kw.is_empty() {
        return None;
    }
    let dims = match args.pos.as_slice() {
        [data @ (Value::List(_) | Value::Tuple(_) | Value::Many(..))] => {
            literal_shape(meta, data)?.0
        }
        sizes if sizes.iter().all(|v| matches!(v, Value::Int(_))) => meta.size_dims(sizes),
        _ => return None,
    };
    Some(call.output(meta, dims, Some(dtype)))
}

/// What torch's integer sampling (`randint`, `randint_like`, `random_`)
/// refuses in its bounds `[from, to)` for a result of `dtype`, in its
/// order: an empty range, then a bound the dtype cannot hold (floats only
/// warn).
pub(crate) fn random_bounds_error(from: i64, to: i64, dtype: DType) -> Option<String> {
    if from >= to {
        return Some(format!(
            "random_ expects 'from' to be less than 'to', but got from={from} >= to={to}"
        ));
    }
    let (min, max): (i128, i128) = match dtype {
        DType::Bool => (0, 1),
        DType::UInt8 => (0, u8::MAX.into()),
        DType::Int8 => (i8::MIN.into(), i8::MAX.into()),
        DType::Int16 => (i16::MIN.into(), i16::MAX.into()),
        DType::UInt16 => (0, u16::MAX.into()),
        DType::Int32 => (i32::MIN.into(), i32::MAX.into()),
        DType::UInt32 => (0, u32::MAX.into()),
        _ => return None,
    };
    let name = crate::rules::dtype::cpp_name(dtype);
    let outside = |v: i64| !(min..=max).contains(&i128::from(v));
    if outside(from) {
        return Some(format!("from is out of bounds for {name}"));
    }
    outside(to - 1).then(|| format!("to - 1 is out of bounds for {name}"))
}

/// `zeros_like(input)` and the other `*_like` factories: the input's shape,
/// dtype and device unless `dtype=` or `device=` say otherwise. `None` when
/// there is no input tensor.
pub(crate) fn like(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let args = call.args;
    let base = args.tensor(0, "input")?;
    let dtype = dtype_or(args, base.dtype);
    // `randint_like(input, high)` or `randint_like(input, low, high)`.
    if call.name == "randint_like"
        && let Some(dtype) = dtype
    {
        let (low, high) = match (args.pos.len(), args.kw("low"), args.kw("high")) {
            (3, ..) => (args.int(1, "low"), args.int(2, "high")),
            (2, None, None) => (Some(0), args.int(1, "high")),
            _ => (args.int(1, "low").or(Some(0)), args.int(2, "high")),
        };
        if let (Some(low), Some(high)) = (low, high)
            && let Some(message) = random_bounds_error(low, high, dtype)
        {
            meta.report(call.range, Code::DtypeUnsupported, message);
            return Some(Value::Unknown);
        }
    }
    let device = device_arg(args).unwrap_or_else(|| base.device.clone());
    let name = format!("torch.{}", call.name);
    let t = meta.new_tensor(base.shape.clone(), dtype, device, &name);
    Some(Value::Tensor(Rc::new(t)))
}

/// `torch.load(f)`, `torch.from_numpy(array)`: loaded or converted from
/// outside, a real tensor nobody knows the shape of. `torch.load` restores
/// tensors to the device they were saved from, unless `map_location` says
/// where; an array is on the cpu.
pub(crate) fn from_outside(meta: &mut dyn Meta, call: &FactoryCall<'_>) -> Option<Value> {
    let device = match call.name {
        "load" => call.args.kw("map_location").and_then(super::device_of),
        _ => Some(crate::value::Device::Cpu),
    };
    let shape = meta.fresh_rank_var();
    let name = format!("torch.{}", call.name);
    let mut t = meta.new_tensor(shape, None, device, &name);
    t.origin = crate::value::Provenance::Real;
    Some(Value::Tensor(Rc::new(t)))
}
