//! Pointwise ops and broadcasting: unary ops keep the shape, binary ops broadcast and promote.

use std::fmt::Write as _;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::inputs::check_inputs;
use super::output::{out_known, out_shape};
use super::registry::{Family, OpDef};
use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, raise};
use crate::rules::dtype::{int_to_float, promote};
use crate::rules::meta::Meta;
use crate::rules::shape::{broadcast, broadcast_all, wrap_dim};
use crate::value::{DType, Device, Tensor, Value};

/// What `flip` refuses in the dims it is given (a list, or the method's
/// ints one by one): one out of range, or one given twice (as wrapped, so
/// `0` and `-1` of a vector are the same dim).
fn flip_dims_error(args: &Args, rank: usize) -> Option<(Code, String)> {
    let written: Vec<Value> = match args.get(1, "dims") {
        Some(list @ (Value::List(_) | Value::Tuple(_))) => list.items()?,
        Some(Value::Int(_)) => args.pos[1..].to_vec(),
        _ => return None,
    };
    let mut seen = Vec::new();
    for value in written {
        let Value::Int(d) = value else {
            return None;
        };
        let d = d.as_const()?;
        let wrapped = match wrap_dim(d, rank) {
            Ok(wrapped) => wrapped,
            Err(message) => return Some((Code::DimOutOfRange, message)),
        };
        if seen.contains(&wrapped) {
            return Some((
                Code::DimOutOfRange,
                format!("dim {wrapped} appears multiple times in the list of dims"),
            ));
        }
        seen.push(wrapped);
    }
    None
}

/// The rule of a pointwise op that keeps its input's shape: the checks a
/// few of them make, and the dtype their other operands give.
pub(super) fn same_shape(
    meta: &mut dyn Meta,
    name: &str,
    x: Rc<Tensor>,
    dims: Option<Vec<Dim>>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    if matches!(name, "tril" | "triu")
        && let Some(d) = &dims
        && d.len() < 2
    {
        let message = format!("{name}: input tensor must have at least 2 dimensions");
        return raise(Code::DimOutOfRange, message);
    }
    // `roll`'s dims must be the input's (a 0-d input has none to name).
    if name == "roll"
        && let Some(d) = &dims
        && let Some(listed) = args.get(2, "dims")
    {
        let listed = match listed {
            Value::Int(i) => vec![i.as_const()],
            other => other
                .items()
                .unwrap_or_default()
                .iter()
                .map(|v| match v {
                    Value::Int(i) => i.as_const(),
                    _ => None,
                })
                .collect(),
        };
        for dim in listed.into_iter().flatten() {
            if d.is_empty() {
                let message = format!("Dimension specified as {dim} but tensor has no dimensions");
                return raise(Code::DimOutOfRange, message);
            }
            if let Err(message) = wrap_dim(dim, d.len()) {
                return raise(Code::DimOutOfRange, message);
            }
        }
    }
    // `fliplr` flips dim 1, `flipud` dim 0.
    if let Some(least) = match name {
        "fliplr" => Some(2),
        "flipud" => Some(1),
        _ => None,
    } && let Some(d) = &dims
        && d.len() < least
    {
        return raise(Code::DimOutOfRange, format!("Input must be >= {least}-d."));
    }
    // `x.random_(to)` or `x.random_(from, to)`: integers in `[from, to)`
    // that `x`'s dtype must hold.
    if name == "random_"
        && let Some(dtype) = x.dtype
    {
        let bounds = match (args.pos.len(), args.get(1, "from"), args.get(2, "to")) {
            (2, Some(_), None) => (Some(0), args.int(1, "to")),
            (_, Some(_), Some(_)) => (args.int(1, "from"), args.int(2, "to")),
            _ => (None, None),
        };
        if let (Some(from), Some(to)) = bounds
            && let Some(message) =
                crate::rules::creation::factories::random_bounds_error(from, to, dtype)
        {
            return raise(Code::DtypeUnsupported, message);
        }
    }
    if name == "flip"
        && let Some(d) = &dims
        && let Some(message) = flip_dims_error(args, d.len())
    {
        return raise(message.0, message.1);
    }
    if matches!(name, "masked_fill" | "masked_scatter") {
        check_mask(meta, &x, args, range);
    }
    if let Some(message) = x
        .dtype
        .and_then(|d| kernel_refuses(name, d, device.as_ref()))
    {
        return raise(Code::DtypeUnsupported, message);
    }
    let mut dtype = x.dtype;
    match name {
        // several tensor operands broadcast together (out of place)
        "lerp" | "addcmul" | "addcdiv" | "masked_fill" => {
            let keys: &[(usize, &str)] = match name {
                "lerp" => &[(1, "end"), (2, "weight")],
                "masked_fill" => &[(1, "mask"), (2, "value")],
                _ => &[(1, "tensor1"), (2, "tensor2")],
            };
            let Some(mut shape) = dims.clone() else {
                return Ok(out_shape(meta, &x, x.shape.clone(), dtype, device, name));
            };
            let mut operands = vec![(Value::Tensor(x.clone()), Some(shape.len()))];
            for &(i, key) in keys {
                let Some(t) = args.tensor(i, key) else {
                    continue;
                };
                let Some(d) = meta.dims(&t) else {
                    return Ok(out_shape(meta, &x, x.shape.clone(), dtype, device, name));
                };
                operands.push((Value::Tensor(t.clone()), Some(d.len())));
                match broadcast(meta, &shape, &d) {
                    Ok(b) => shape = b,
                    Err(message) => {
                        if name != "masked_fill" {
                            meta.report(range, Code::BroadcastShape, message);
                        }
                        return Ok(Value::Unknown);
                    }
                }
            }
            if name != "masked_fill" {
                let refs: Vec<(&Value, Option<usize>)> =
                    operands.iter().map(|(v, r)| (v, *r)).collect();
                dtype = promote(&refs);
            }
            return Ok(out_known(meta, &x, shape, dtype, device, name));
        }
        // bounds take part in type promotion: int.clamp(min=0.5) is float
        "clamp" | "clip" | "clamp_min" | "clamp_max" => {
            let given = |i, key| !matches!(args.get(i, key), None | Some(Value::None));
            if matches!(name, "clamp" | "clip") && !given(1, "min") && !given(2, "max") {
                return raise(
                    Code::ArgumentType,
                    "torch.clamp: At least one of 'min' or 'max' must not be None".into(),
                );
            }
            let mut operands = vec![(Value::Tensor(x.clone()), dims.as_ref().map(Vec::len))];
            let mut bounds = Vec::new();
            for (i, key) in [(1, "min"), (2, "max")] {
                match args.get(i, key) {
                    Some(Value::Tensor(t)) => {
                        operands.push((Value::Tensor(t.clone()), meta.dims(t).map(|d| d.len())));
                        bounds.push(t.clone());
                    }
                    Some(v @ (Value::Int(_) | Value::Float(_) | Value::Bool(_))) => {
                        operands.push((v.clone(), None));
                    }
                    _ => {}
                }
            }
            let refs: Vec<(&Value, Option<usize>)> =
                operands.iter().map(|(v, r)| (v, *r)).collect();
            dtype = promote(&refs).or(dtype);
            // Tensor bounds broadcast with the input, in order, and may grow
            // it (one of unknown rank may too: the result is then unknown).
            if let Some(d) = &dims
                && !bounds.is_empty()
            {
                match broadcast_all(meta, d.clone(), bounds.iter().map(|t| &**t)) {
                    Ok(Some(shape)) if shape != *d => {
                        return Ok(out_known(meta, &x, shape, dtype, device, name));
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => return Ok(Value::Unknown),
                    Err(message) => return raise(Code::BroadcastShape, message),
                }
            }
        }
        // scatter: dim range, index rank, index no larger than self / src
        "scatter" | "scatter_add" | "scatter_reduce" | "index_fill" | "index_add"
        | "index_copy"
            if dims.is_some() =>
        {
            let xd = dims.clone().unwrap_or_default();
            let d = match args.get(1, "dim") {
                Some(Value::Int(k)) => k.as_const(),
                _ => None,
            };
            let Some(d) = d else {
                return Ok(out_shape(meta, &x, x.shape.clone(), dtype, device, name));
            };
            let d = match wrap_dim(d, xd.len()) {
                Ok(d) => d,
                Err(message) => {
                    return raise(Code::DimOutOfRange, message);
                }
            };
            if name == "index_add"
                && let Some((code, message)) = index_add_error(meta, &x, &xd, d, args)
            {
                return raise(code, message);
            }
            if name.starts_with("scatter")
                && let Some(index) = args.tensor(2, "index")
                && let Some(idims) = meta.dims(&index)
            {
                if idims.len() != xd.len() {
                    let message =
                        "Index tensor must have the same number of dimensions as self tensor"
                            .to_string();
                    return raise(Code::IndexShape, message);
                }
                let src = args.tensor(3, "src").and_then(|t| meta.dims(&t));
                let bigger = |a: &Dim, b: &Dim| matches!((meta.env().value(a), meta.env().value(b)), (Some(i), Some(s)) if i > s);
                let over_self = (0..xd.len()).any(|k| k != d && bigger(&idims[k], &xd[k]));
                let over_src = src.as_ref().is_some_and(|sd| {
                    sd.len() == idims.len() && (0..sd.len()).any(|k| bigger(&idims[k], &sd[k]))
                });
                if over_self || over_src {
                    let mut message = format!(
                        "Expected index {} to be no larger than self {} apart from dimension {d}",
                        meta.fmt_dims(&idims),
                        meta.fmt_dims(&xd)
                    );
                    if let Some(sd) = &src {
                        let _ = write!(
                            message,
                            " and to be no larger size than src {}",
                            meta.fmt_dims(sd)
                        );
                    }
                    return raise(Code::IndexShape, message);
                }
            }
        }
        // pow(x, 2): bool becomes int64
        "square" if dtype == Some(DType::Bool) => dtype = Some(DType::Int64),
        // |z| of a complex tensor is real
        "abs" | "absolute" => dtype = dtype.map(DType::to_real),
        _ => {}
    }
    Ok(out_shape(meta, &x, x.shape.clone(), dtype, device, name))
}

/// What `index_add(dim, index, source)` raises, in torch's order: a
/// vector of int indices, one dtype for self and source, one index per
/// slice of `source` along `dim`, and slices of one shape.
fn index_add_error(
    meta: &dyn Meta,
    x: &Tensor,
    xd: &[Dim],
    d: usize,
    args: &Args,
) -> Option<(Code, String)> {
    let index = args.tensor(2, "index")?;
    let source = args.tensor(3, "source")?;
    let (id, sd) = (meta.dims(&index)?, meta.dims(&source)?);
    let name = crate::rules::dtype::torch_name;
    if id.len() > 1 {
        return Some((
            Code::IndexShape,
            format!(
                "index_add_(): Index is supposed to be a vector, but got dim: {} with type: {} and size: {}",
                id.len(),
                index.dtype.map_or("Long", name),
                meta.fmt_dims(&id)
            ),
        ));
    }
    if let Some(t) = index.dtype
        && !matches!(t, DType::Int64 | DType::Int32)
    {
        return Some((
            Code::DtypeMismatch,
            format!(
                "index_add_(): Expected dtype int32/int64 for index but got: {}",
                name(t)
            ),
        ));
    }
    if let (Some(a), Some(b)) = (x.dtype, source.dtype)
        && a != b
    {
        return Some((
            Code::DtypeMismatch,
            format!(
                "index_add_(): self ({}) and source ({}) must have the same scalar type",
                name(a),
                name(b)
            ),
        ));
    }
    if d != 0 && d >= sd.len() {
        return Some((
            Code::IndexShape,
            format!(
                "index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim {}",
                sd.len()
            ),
        ));
    }
    let count = id.first().cloned().unwrap_or(Dim::konst(1));
    let per_slice = sd.get(d).cloned().unwrap_or(Dim::konst(1));
    if meta.env().known_different(&count, &per_slice) {
        return Some((
            Code::IndexShape,
            format!(
                "index_add_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {d}",
                meta.fmt_dim(&count),
                meta.fmt_dim(&per_slice)
            ),
        ));
    }
    let without = |dims: &[Dim]| -> Vec<Dim> {
        dims.iter()
            .enumerate()
            .filter(|(k, _)| *k != d)
            .map(|(_, s)| s.clone())
            .collect()
    };
    let (a, b) = if sd.is_empty() || xd.is_empty() {
        (xd.to_vec(), sd.clone())
    } else {
        (without(xd), without(&sd))
    };
    let differs = a.len() != b.len()
        || a.iter()
            .zip(&b)
            .any(|(p, q)| meta.env().known_different(p, q));
    differs.then(|| {
        (Code::IndexShape, format!(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = {} source.shape = {}",
            meta.fmt_dims(xd),
            meta.fmt_dims(&sd)
        ))
    })
}

pub(super) fn meshgrid(meta: &mut dyn Meta, name: &str, args: &Args, range: TextRange) -> Value {
    {
        // 1-D inputs of sizes n0, n1, ... give that many tensors of shape
        // [n0, n1, ...] ("ij"), or with the first two swapped ("xy", the default).
        let items = args.varargs(0);
        let ts: Vec<Rc<Tensor>> = items
            .iter()
            .filter_map(|v| v.as_tensor().cloned())
            .collect();
        if ts.len() != items.len() || ts.is_empty() {
            return Value::Unknown;
        }
        let mut sizes = Vec::new();
        for t in &ts {
            match meta.dims(t).as_deref() {
                Some([n]) => sizes.push(n.clone()),
                Some([]) => sizes.push(Dim::konst(1)),
                _ => return Value::Unknown,
            }
        }
        let xy = !matches!(args.kw("indexing"), Some(Value::Str(s)) if &**s == "ij");
        let mut shape = sizes.clone();
        if xy && shape.len() >= 2 {
            shape.swap(0, 1);
        }
        let device = check_inputs(meta, args, name, range).unwrap_or(None);
        Value::tuple(
            ts.iter()
                .map(|t| out_known(meta, t, shape.clone(), t.dtype, device.clone(), name))
                .collect(),
        )
    }
}

fn check_mask(meta: &mut dyn Meta, x: &Rc<Tensor>, args: &Args, range: TextRange) {
    let Some(mask) = args.tensor(1, "mask") else {
        return;
    };
    if let Some(dt) = mask.dtype
        && dt != DType::Bool
    {
        let message = format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            crate::rules::dtype::cpp_name(dt)
        );
        meta.report(range, Code::DtypeMismatch, message);
    }
    // Torch broadcasts the mask against the input: the mask is "a".
    if let (Some(xd), Some(md)) = (meta.dims(x), meta.dims(&mask))
        && let Err(message) = broadcast(meta, &md, &xd)
    {
        meta.report(range, Code::BroadcastShape, message);
    }
}

/// What torch says when a pointwise op has no loop for `dtype`: rounding,
/// `abs` and a few others have none for bools, the bitwise ops none for
/// floating-point or complex numbers (nor shifts for bools), clamps none
/// for complex numbers; a few refuse in words of their own. On the CPU the
/// 32-bit complex dtypes have hardly any kernels (see `small_complex_kernel`).
pub(super) fn kernel_refuses(name: &str, dtype: DType, device: Option<&Device>) -> Option<String> {
    if device == Some(&Device::Cpu)
        && let Some(kernel) = small_complex_kernel(name, dtype)
    {
        return Some(format!(
            "\"{kernel}\" not implemented for '{}'",
            crate::rules::dtype::torch_name(dtype)
        ));
    }
    // Complex numbers have no order to clamp by (`relu` is a clamp at 0).
    if dtype.is_complex() && matches!(name, "clamp" | "clip" | "clamp_min" | "clamp_max" | "relu") {
        return Some("clamp is not supported for complex types".into());
    }
    if dtype == DType::Bool {
        // Some ops refuse masks in words of their own, before any kernel.
        match name {
            "neg" | "negative" => {
                return Some(
                    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.".into(),
                );
            }
            "positive" => {
                return Some("The `+` operator, on a bool tensor is not supported.".into());
            }
            "relu" => return Some("Boolean inputs not supported for relu".into()),
            _ => {}
        }
    }
    // Complex numbers have no floor, no sign (but `sgn`) and no order.
    if dtype.is_complex() {
        match name {
            "floor" | "ceil" | "trunc" => {
                return Some(format!("{name} is not supported for complex inputs"));
            }
            "fix" => return Some("trunc is not supported for complex inputs".into()),
            "sign" => {
                return Some(
                    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.".into(),
                );
            }
            "heaviside" => {
                return Some("heaviside is not yet implemented for complex tensors.".into());
            }
            "maximum" | "minimum" => {
                return Some(format!("{name} not implemented for complex tensors."));
            }
            _ => {}
        }
    }
    let kernel = if dtype == DType::Bool {
        match name {
            "abs" | "absolute" => "abs_cpu",
            "ceil" => "ceil_vml_cpu",
            "floor" => "floor_vml_cpu",
            "trunc" | "fix" => "trunc_vml_cpu",
            "elu" | "selu" | "celu" => "elu_cpu",
            "hardshrink" => "hardshrink_cpu",
            "hypot" => "hypot_cpu",
            "fmod" => "fmod_cpu",
            "remainder" => "remainder_cpu",
            "floor_divide" => "div_floor_cpu",
            "bitwise_left_shift" => "lshift_cpu",
            "bitwise_right_shift" => "rshift_cpu",
            _ => return None,
        }
    } else if dtype == DType::Int64 && matches!(name, "selu" | "celu") {
        "elu_cpu"
    } else if dtype.is_integral() && name == "hardshrink" {
        "hardshrink_cpu"
    } else if dtype.is_integral() && name == "softshrink" {
        "softshrink_check"
    } else if dtype.is_integral() && name == "hypot" {
        "hypot_cpu"
    } else if dtype.is_complex()
        && let Some(kernel) = match name {
            "hardshrink" => Some("hardshrink_cpu"),
            "hypot" => Some("hypot_cpu"),
            "lt" | "less" => Some("lt_cpu"),
            "le" | "less_equal" => Some("le_cpu"),
            "gt" | "greater" => Some("gt_cpu"),
            "ge" | "greater_equal" => Some("ge_cpu"),
            "remainder" => Some("remainder_cpu"),
            "fmod" => Some("fmod_cpu"),
            "floor_divide" => Some("div_floor_cpu"),
            "atan2" | "arctan2" => Some("atan2_cpu"),
            "round" => Some("round_vml_cpu"),
            "frac" => Some("frac_cpu"),
            _ => None,
        }
    {
        kernel
    } else if dtype.is_floating() || dtype.is_complex() {
        match name {
            "bitwise_and" => "bitwise_and_cpu",
            "bitwise_or" => "bitwise_or_cpu",
            "bitwise_xor" => "bitwise_xor_cpu",
            "bitwise_not" => "bitwise_not_cpu",
            "bitwise_left_shift" => "lshift_cpu",
            "bitwise_right_shift" => "rshift_cpu",
            _ => return None,
        }
    } else {
        return None;
    };
    Some(format!(
        "\"{kernel}\" not implemented for '{}'",
        crate::rules::dtype::torch_name(dtype)
    ))
}

/// The CPU kernel that refuses `name` for `complex32` (which has add, sub,
/// mul, comparisons for equality, `neg`, `abs`, `conj` and `sgn`) or
/// `bcomplex32` (which has only `conj` and equality), in torch's words (no
/// complex dtype has an order: `lt` and the like are refused above); the
/// CUDA kernels cover far more, so only tensors known to be on the CPU are
/// checked.
fn small_complex_kernel(name: &str, dtype: DType) -> Option<&'static str> {
    let bfloat = match dtype {
        DType::ComplexHalf => false,
        DType::BComplex32 => true,
        _ => return None,
    };
    Some(match name {
        "add" | "sub" | "subtract" | "rsub" if bfloat => "add_stub",
        "mul" | "multiply" if bfloat => "mul_cpu",
        "neg" | "negative" if bfloat => "neg_cpu",
        "abs" | "absolute" if bfloat => "abs_cpu",
        "sgn" if bfloat => "sgn_cpu",
        "div" | "divide" | "true_divide" => "div_cpu",
        "pow" | "square" => "pow",
        "exp" => "exp_vml_cpu",
        "sqrt" => "sqrt_vml_cpu",
        "log" => "log_vml_cpu",
        "sin" => "sin_vml_cpu",
        "cos" => "cos_vml_cpu",
        "tan" => "tan_vml_cpu",
        "tanh" => "tanh_vml_cpu",
        "log1p" => "log1p_vml_cpu",
        "expm1" => "expm1_vml_cpu",
        "sigmoid" => "sigmoid_cpu",
        "reciprocal" => "reciprocal_cpu",
        "rsqrt" => "rsqrt_cpu",
        "xlogy" => "xlogy_cpu",
        "logaddexp" => "logaddexp_cpu",
        "copysign" => "copysign_cpu",
        _ => return None,
    })
}

pub(super) fn binary(
    meta: &mut dyn Meta,
    name: &str,
    a: &Value,
    b: &Value,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let dims_of = |meta: &dyn Meta, v: &Value| -> Option<Option<Vec<Dim>>> {
        match v {
            Value::Tensor(t) => Some(meta.dims(t)),
            v if v.is_number() => Some(Some(Vec::new())),
            _ => None,
        }
    };
    let template = match (a, b) {
        (Value::Tensor(t), _) | (_, Value::Tensor(t)) => t.clone(),
        _ => return Value::Unknown,
    };
    let (da, db) = (dims_of(meta, a), dims_of(meta, b));
    let promoted = {
        let ra = da.clone().flatten().map(|d| d.len());
        let rb = db.clone().flatten().map(|d| d.len());
        promote(&[(a, ra), (b, rb)])
    };
    let dtype = {
        let d = promoted;
        if OpDef::family_of(name) == Some(Family::Compare) {
            Some(DType::Bool)
        } else if name == "float_power" {
            d.map(|d| {
                if d.is_complex() {
                    DType::Complex128
                } else {
                    DType::Float64
                }
            })
        } else if matches!(name, "atan2" | "arctan2" | "copysign" | "xlogy" | "ldexp") {
            int_to_float(d)
        } else if matches!(name, "div" | "true_divide" | "divide") {
            if args
                .kw("rounding_mode")
                .is_some_and(|v| !matches!(v, Value::None))
            {
                d
            } else {
                int_to_float(d)
            }
        } else if name == "pow" {
            // A bool tensor to a Python bool stays bool; to an int it counts.
            d.map(|d| {
                if d == DType::Bool && !matches!(b, Value::Bool(_)) {
                    DType::Int64
                } else {
                    d
                }
            })
        } else {
            d
        }
    };
    // A subtraction of two bool tensors is refused before anything else;
    // a kernel that has no loop for the dtype the operands promote to
    // (`bitwise_or` of floats, `fmod` of bools), once the shapes broadcast.
    // Subtraction refuses bools before anything else: torch's `sub_check`
    // (a Python `True` counts as a bool tensor, other numbers do not).
    if matches!(name, "sub" | "subtract" | "rsub" | "sub_" | "subtract_") {
        let is_bool = |v: &Value| match v {
            Value::Tensor(t) => t.dtype.map(|d| d == DType::Bool),
            Value::Bool(_) => Some(true),
            Value::Int(_) | Value::Float(_) | Value::Complex => Some(false),
            _ => None,
        };
        let message = match (is_bool(a), is_bool(b)) {
            (Some(true), Some(true)) => Some(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
            ),
            (Some(true), Some(false)) | (Some(false), Some(true)) => Some(
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ),
            _ => None,
        };
        if let Some(message) = message {
            meta.report(range, Code::DtypeUnsupported, message.into());
            return Value::Unknown;
        }
    }
    // `isclose` and `heaviside` take two tensors of one dtype, checked
    // before anything else.
    if let (Value::Tensor(x), Value::Tensor(y)) = (a, b)
        && let (Some(dx), Some(dy)) = (x.dtype, y.dtype)
        && dx != dy
    {
        let message = match name {
            "isclose" => Some(format!(
                "{} did not match {}",
                crate::rules::dtype::torch_name(dx),
                crate::rules::dtype::torch_name(dy)
            )),
            "heaviside" if !dx.is_complex() && !dy.is_complex() => {
                Some("heaviside is not yet implemented for tensors with different dtypes.".into())
            }
            _ => None,
        };
        if let Some(message) = message {
            meta.report(range, Code::DtypeMismatch, message);
            return Value::Unknown;
        }
    }
    // `2 / t` runs as `t.reciprocal() * 2` (`Tensor.__rtruediv__`): those
    // two kernels are the ones that may refuse.
    let refused = match (name, a, b) {
        ("div" | "divide" | "true_divide", number, Value::Tensor(t)) if number.is_number() => t
            .dtype
            .and_then(|d| kernel_refuses("reciprocal", d, device.as_ref()))
            .or_else(|| promoted.and_then(|d| kernel_refuses("mul", d, device.as_ref()))),
        _ => promoted.and_then(|d| kernel_refuses(name, d, device.as_ref())),
    };
    let (Some(Some(xa)), Some(Some(xb))) = (da.clone(), db.clone()) else {
        if let Some(message) = refused {
            meta.report(range, Code::DtypeUnsupported, message);
            return Value::Unknown;
        }
        // A tensor of unknown rank with a scalar keeps its rank variable.
        let shape = match (a, b, &da, &db) {
            (Value::Tensor(t), _, _, Some(Some(s))) | (_, Value::Tensor(t), Some(Some(s)), _)
                if s.is_empty() =>
            {
                t.shape.clone()
            }
            (Value::Tensor(x), Value::Tensor(y), _, _) if x.shape == y.shape => x.shape.clone(),
            (Value::Tensor(x), Value::Tensor(y), _, _) => {
                crate::rules::tail::broadcast(meta, x, y).unwrap_or_else(|| meta.fresh_rank_var())
            }
            _ => meta.fresh_rank_var(),
        };
        return out_shape(meta, &template, shape, dtype, device, name);
    };
    let broadcasted = broadcast(meta, &xa, &xb);
    if broadcasted.is_ok()
        && let Some(message) = refused
    {
        meta.report(range, Code::DtypeUnsupported, message);
        return Value::Unknown;
    }
    match broadcasted {
        Ok(shape) => out_known(meta, &template, shape, dtype, device, name),
        Err(message) => {
            // `rsub(a, b)` is `b - a`: torch broadcasts `b` first, so its
            // message names the operands the other way round.
            let message = match name {
                "rsub" => broadcast(meta, &xb, &xa).err().unwrap_or(message),
                _ => message,
            };
            let related = args
                .ranges
                .iter()
                .zip(["left operand", "right operand"])
                .zip([&xa, &xb])
                .map(|((r, which), d)| (*r, format!("{which}: {}", meta.fmt_dims(d))))
                .collect();
            meta.report_related(range, Code::BroadcastShape, message, related);
            Value::Unknown
        }
    }
}
