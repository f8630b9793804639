//! Tensor ops: pointwise, reductions, shape manipulation, joins and splits, linear algebra, `einsum`.
//!
//! `op` is the entry point of every tensor op. `dispatch` sorts an op into its
//! family: the pointwise ops and reductions by their tables, the ops on a
//! tensor of known rank by name into the rule of their submodule, and the ops
//! without a tensor first argument (`torch.cat([...])`) through
//! `scalar_fallback`.

mod calculus;
mod complex;
mod decompositions;
mod einsum;
mod inputs;
mod join;
mod linalg;
mod matrices;
mod op_table;
mod output;
mod pointwise;
mod reduction;
mod registry;
mod select;
mod solvers;
mod view;

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::check::{RuleResult, ShapeError, Stop, raise};
use super::dtype::int_to_float;
use super::shape::{broadcast_all, numel, wrap_dim};
use crate::code::Code;
use crate::rules::meta::Meta;
use crate::value::{DType, Device, Shape, Tensor, Value};

use self::join::cat;
pub(crate) use self::matrices::diagonal_dims;
use self::output::{track_layout, unknown_rank_rule};
use self::pointwise::{binary, meshgrid, same_shape};
use self::reduction::reduce;

pub(crate) use self::registry::{FactoryRule, Family, NumberFirst, OpDef, UnreadArgs};

pub(crate) use self::einsum::einsum;
pub(crate) use self::inputs::check_inputs;
pub(crate) use self::linalg::matmul;
pub(crate) use self::output::{out_known, out_shape, out_var};
pub(crate) use self::view::expand_error;

/// One call of a tensor op on an input of known rank, as its shape function
/// (the `OpRule` of its registry entry) sees it. It carries what they all
/// need to read a dim argument or to build a result, so every rule does both
/// the same way instead of binding its own helpers.
pub(crate) struct OpCall<'a> {
    name: &'a str,
    /// Called in place (`x.t_()`): torch's messages name the op so.
    inplace: bool,
    x: Rc<Tensor>,
    dims: Vec<Dim>,
    args: &'a Args,
    device: Option<Device>,
    range: TextRange,
}

impl OpCall<'_> {
    /// Reads the dim argument at `index` (keyword `keyword`, `default` when
    /// not given), wrapped into `0..rank`: a dim out of range raises, and a
    /// dim that is not a known int stops the rule with the unknown-rank
    /// result.
    fn dim_arg(
        &self,
        meta: &mut dyn Meta,
        index: usize,
        keyword: &str,
        default: Option<i64>,
    ) -> Result<usize, Stop> {
        let d = match self.args.get(index, keyword) {
            Some(Value::Int(d)) => d.as_const(),
            None | Some(Value::None) => default,
            _ => None,
        };
        match d {
            Some(d) => wrap_dim(d, self.dims.len())
                .map_err(|message| ShapeError::new(Code::DimOutOfRange, message).into()),
            None => Err(Stop::Give(unknown_rank_rule(
                meta,
                self.name,
                &self.x,
                self.args,
                self.device.clone(),
            ))),
        }
    }

    /// The op's result with `dims` and `dtype`, on the input's device and
    /// named after the op: most rules decide only the shape and the dtype.
    fn output(&self, meta: &mut dyn Meta, dims: Vec<Dim>, dtype: Option<DType>) -> Value {
        out_known(meta, &self.x, dims, dtype, self.device.clone(), self.name)
    }

    /// Values of the input's dtype and their int64 indices, both of `dims`
    /// (`max(dim=1)`, `topk`, `sort`).
    fn values_and_indices(&self, meta: &mut dyn Meta, dims: Vec<Dim>) -> Value {
        let values = self.output(meta, dims.clone(), self.x.dtype);
        let indices = self.output(meta, dims, Some(DType::Int64));
        Value::tuple(vec![values, indices])
    }
}

/// Run the rule of `name` on `args` (tensor ops take the input first).
pub(crate) fn op(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> Value {
    let (base, inplace) = match name.strip_suffix('_') {
        Some(b)
            if !b.is_empty()
                && !b.ends_with('_')
                && OpDef::family_of(name) != Some(Family::Same) =>
        {
            (b, true)
        }
        _ => (name, false),
    };
    let result = dispatch(meta, (base, inplace), &args, range);
    let result = track_layout(meta, base, &args, result);
    // in-place view ops change self's shape: their result is the new view
    if inplace && OpDef::of(base).is_some_and(|def| def.reshapes_in_place) {
        return result;
    }
    if inplace && let (Some(Value::Tensor(this)), Value::Tensor(out)) = (args.pos.first(), &result)
    {
        // An in-place op writes its result into self: torch refuses a
        // result of a higher category (float into int, int into bool,
        // complex into float), as `int_tensor /= 2` or `+= 1.5` meet.
        if let (Some(from), Some(to)) = (out.dtype, this.dtype)
            && from.category() > to.category()
            && OpDef::family_of(base)
                .is_some_and(|family| family.is_binary() || family == Family::ToFloat)
        {
            meta.report(
                range,
                Code::DtypeMismatch,
                format!(
                    "result type {} can't be cast to the desired output type {}",
                    super::dtype::torch_name(from),
                    super::dtype::torch_name(to)
                ),
            );
            return Value::Tensor(this.clone());
        }
        // An in-place op keeps self's shape and dtype; a broadcast that
        // would grow self is an error.
        if let (Some(a), Some(b)) = (meta.dims(this), meta.dims(out))
            && (a.len() < b.len()
                || a.len() == b.len()
                    && a.iter()
                        .zip(&b)
                        .any(|(x, y)| meta.env().known_different(x, y)))
        {
            meta.report(
                range,
                Code::BroadcastShape,
                format!(
                    "output with shape {} doesn't match the broadcast shape {}",
                    meta.fmt_dims(&a),
                    meta.fmt_dims(&b)
                ),
            );
        }
        return Value::Tensor(this.clone());
    }
    result
}

fn dispatch(
    meta: &mut dyn Meta,
    (name, inplace): (&str, bool),
    args: &Args,
    range: TextRange,
) -> Value {
    let def = OpDef::of(name);
    let family = def.map(|def| def.family);
    if family == Some(Family::Meshgrid) {
        return meshgrid(meta, name, args, range);
    }
    if family == Some(Family::MultiDot) {
        let result = linalg::multi_dot(meta, name, args, range);
        return meta.settle(range, result);
    }

    let Some(x) = args.tensor(0, "input") else {
        let result = scalar_fallback(meta, name, family, args, range);
        return meta.settle(range, result);
    };
    let Some(tensors) = check_inputs(meta, args, name, range) else {
        return Value::Unknown;
    };
    let device = tensors;
    if family == Some(Family::BroadcastTensors) {
        let result = broadcast_tensors(meta, name, args);
        return meta.settle(range, result);
    }
    // `y.view(*t.shape[:-1], d)` (the sizes spread into the call join the
    // ones after them): a view of a tensor of known rank to the sizes of
    // one of unknown rank, with no `-1` to infer, has those sizes.
    if matches!(name, "view" | "reshape")
        && meta.rank(&x).is_some()
        && let [_, Value::SizeOfVar(var, suffix)] = args.pos.as_slice()
        && !suffix.iter().any(|d| meta.env().value(d) == Some(-1))
    {
        let shape = Shape::of_sizes(*var, suffix);
        return out_shape(meta, &x, shape, x.dtype, device, name);
    }
    // `x.broadcast_to(torch.broadcast_shapes(x.shape, y.shape))`, or
    // `res.expand(x_start.shape)`: sizes of a tensor of unknown rank with
    // no `-1` among the known ones are the result's, whatever the input's
    // shape (torch refuses, and nothing is shown, only where the input has
    // more dims or sizes other than 1 that differ).
    if matches!(name, "broadcast_to" | "expand")
        && let [_, Value::SizeOfVar(var, suffix)] = args.pos.as_slice()
        && !suffix.iter().any(|d| meta.env().value(d) == Some(-1))
    {
        let shape = Shape::of_sizes(*var, suffix);
        return out_shape(meta, &x, shape, x.dtype, device, name);
    }
    // Sizes given as one value nobody can read: the result's rank is unknown.
    if def.is_some_and(|def| def.sizes_follow)
        && (args.sizes_unknown(1)
        // Sizes of a tensor of unknown rank: only a view of the very tensor
        // they came from can use them (below).
        || (args.sizes_of_unknown_rank(1)
            && !(matches!(name, "view" | "reshape") && meta.rank(&x).is_none())))
    {
        return unknown_rank_rule(meta, name, &x, args, device);
    }
    // (A tensor of unknown rank viewed with its own leading sizes is
    // `unranked`'s, below.)
    if def.is_some_and(|def| def.sizes_follow)
        && !(matches!(name, "view" | "reshape")
            && meta.rank(&x).is_none()
            && matches!(args.pos.get(1), Some(Value::SizeOfVar(..))))
        && let Some(shape) = sizes_with_unknown_rank(meta, name, args)
    {
        return out_shape(meta, &x, shape, x.dtype, device, name);
    }
    let dims = match meta.dims(&x) {
        None if name == "permute" => pin_rank_for_permute(meta, &x, args),
        dims => dims,
    };
    match family {
        Some(Family::Same) => {
            let result = same_shape(meta, name, x, dims, args, device, range);
            return meta.settle(range, result);
        }
        Some(Family::ToFloat) => {
            if let Some(message) = x
                .dtype
                .and_then(|d| pointwise::kernel_refuses(name, d, device.as_ref()))
            {
                return meta.settle(range, raise(Code::DtypeUnsupported, message));
            }
            let dtype = int_to_float(x.dtype);
            return out_shape(meta, &x, x.shape.clone(), dtype, device, name);
        }
        Some(Family::ToBool) => {
            let dtype = Some(DType::Bool);
            return out_shape(meta, &x, x.shape.clone(), dtype, device, name);
        }
        Some(f) if f.is_binary() => {
            if let Err(stop) = number_second(def, name, args) {
                return meta.settle(range, Err(stop));
            }
            let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
            return binary(meta, name, &Value::Tensor(x), &other, args, device, range);
        }
        Some(Family::Reduction) => {
            let result = reduce(meta, name, &x, args, device);
            return meta.settle(range, result);
        }
        _ => {}
    }
    let Some(dims) = dims else {
        return unranked(meta, name, &x, args, device, range);
    };
    let rank = dims.len();
    // a 0-dim tensor: dim 0 / -1 wrap to a dim that is not there
    if rank == 0 {
        let message = match name {
            "transpose" | "swapaxes" | "swapdims" | "movedim" | "moveaxis" => {
                return out_known(meta, &x, Vec::new(), x.dtype, device, name);
            }
            "narrow" => Some("narrow() cannot be applied to a 0-dim tensor."),
            "select" => Some("select() cannot be applied to a 0-dim tensor."),
            "unflatten" => Some("unflatten got an unexpected error:"),
            "tensor_split" => Some(
                "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
            ),
            "chunk" => Some("chunk expects at least a 1-dimensional tensor"),
            "unbind" => Some("Dimension specified as 0 but tensor has no dimensions"),
            "split" | "split_with_sizes" | "index_select" | "repeat_interleave" | "unfold" => {
                return Value::Unknown;
            }
            _ => None,
        };
        if let Some(message) = message {
            meta.report(range, Code::DimOutOfRange, message.into());
            return Value::Unknown;
        }
    }
    // An op on a tensor of known rank goes to the shape function its entry
    // names; an op without one falls to `no_rule`.
    let call = OpCall {
        name,
        inplace,
        x,
        dims,
        args,
        device,
        range,
    };
    let result: RuleResult = match def.and_then(|def| def.rule) {
        Some(rule) => rule(meta, call),
        None => Ok(no_rule(meta, name, &call.x, args, call.device, call.range)),
    };
    meta.settle(range, result)
}

/// The shape of an op whose sizes mix listed sizes with the sizes of a
/// tensor of unknown rank (`x.view(*t.shape[:-1], 3)`, `x.view(6,
/// *t.shape[:-1])`), which the sizes-as-a-list reading would count as one
/// dim: a view of the leading sizes then listed ones is that rank
/// variable's shape (without a `-1`, whose size torch infers from the whole
/// count); any other mix has a rank nobody knows. `None` when the sizes are
/// no such mix (the case of the sizes alone is the callers').
fn sizes_with_unknown_rank(meta: &mut dyn Meta, name: &str, args: &Args) -> Option<Shape> {
    let sizes = args.pos.get(1..).unwrap_or(&[]);
    if sizes.len() < 2 || !sizes.iter().any(|v| matches!(v, Value::SizeOfVar(..))) {
        return None;
    }
    if matches!(name, "view" | "reshape")
        && let [Value::SizeOfVar(var, prefix), rest @ ..] = sizes
        && !rest.iter().any(|v| matches!(v, Value::SizeOfVar(..)))
    {
        let listed = meta.size_dims(rest);
        if !listed.iter().any(|d| meta.env().value(d) == Some(-1)) {
            let mut dims = prefix.as_ref().clone();
            dims.extend(listed);
            return Some(Shape::of_sizes(*var, &Rc::new(dims)));
        }
    }
    Some(meta.fresh_rank_var())
}

/// An op on a tensor of unknown rank: a view whose sizes are spelled out,
/// or made from the input's own `shape`, still has a result; any other op
/// gives its unknown-rank result.
fn unranked(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    if matches!(name, "view" | "reshape")
        && let Some(Value::SizeOfVar(var, prefix)) = args.pos.get(1)
    {
        // `x.view(*x.shape[:-1], h, -1)` (or `x.view(x.size()[:-1] + (h,
        // -1))`, whose sizes after the rank variable hold the -1): the
        // leading dims stay what they are; a `-1` is what the known
        // trailing dims leave.
        let mut rest: Vec<Dim> = prefix.as_ref().clone();
        rest.extend(meta.size_dims(&args.pos[2..]));
        let (xvar, xsuffix) = match meta.resolve_shape(&x.shape) {
            Shape::Var(v) => (v, Vec::new()),
            Shape::Tail(v, s) => (v, s.as_ref().clone()),
            Shape::Known(_) => return unknown_rank_rule(meta, name, x, args, device),
        };
        let mut suffix: Vec<Dim> = Vec::new();
        let infer = rest.iter().position(|d| meta.env().value(d) == Some(-1));
        for (i, d) in rest.iter().enumerate() {
            if Some(i) != infer {
                suffix.push(d.clone());
                continue;
            }
            let others: Vec<Dim> = rest
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, d)| d.clone())
                .collect();
            let inferred = if xvar == *var && !xsuffix.is_empty() {
                let total = meta.env().resolve(&numel(&xsuffix));
                let known = meta.env().resolve(&numel(&others));
                // A valid view divides exactly; torch would raise otherwise.
                meta.env_mut().assume_divisible(&total, &known);
                total
                    .floordiv(&known)
                    .map(|q| meta.env().resolve(&q))
                    .unwrap_or_else(|| meta.env_mut().anonymous())
            } else {
                meta.env_mut().anonymous()
            };
            suffix.push(inferred);
        }
        let shape = super::tail::suffix_shape(*var, suffix);
        return out_shape(meta, x, shape, x.dtype, device, name);
    }
    if matches!(name, "view" | "reshape") {
        // The new shape is spelled out; only a `-1` depends on the input.
        let items = args.varargs(1);
        if !items.is_empty() && !matches!(items.as_slice(), [Value::DType(_)]) {
            let mut sizes = meta.size_dims(&items);
            // torch reads the sizes before the input: a second -1 or
            // another negative size fails whatever the input is.
            let shown = format!(
                "[{}]",
                sizes
                    .iter()
                    .map(|d| meta.fmt_dim(d))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let mut inferred = false;
            for (i, d) in sizes.iter_mut().enumerate() {
                match meta.env().value(d) {
                    Some(-1) if inferred => {
                        let message = "only one dimension can be inferred".to_string();
                        return meta.settle(range, raise(Code::ViewSize, message));
                    }
                    Some(-1) => {
                        inferred = true;
                        *d = if i == 0 {
                            meta.env_mut().weak_symbol("N")
                        } else {
                            meta.env_mut().anonymous()
                        };
                    }
                    Some(n) if n < 0 => {
                        let message =
                            format!("invalid shape dimension {n} at index {i} of shape {shown}");
                        return meta.settle(range, raise(Code::ViewSize, message));
                    }
                    _ => {}
                }
            }
            return out_known(meta, x, sizes, x.dtype, device, name);
        }
    }
    // `x @ w` of `[*batch, n, k]` and a matrix, or of two operands that
    // share their leading dims; `mm` and the other products of fixed
    // ranks give the operand its rank.
    if matches!(name, "matmul" | "mm" | "bmm" | "mv" | "dot")
        && let Some(y) = args.tensor(1, "other")
    {
        return matmul(meta, name, x, &Value::Tensor(y), args, device, range);
    }
    unknown_rank_rule(meta, name, x, args, device)
}

/// A tensor of unknown rank that an op takes only at `rank` dims has that
/// many (torch raises otherwise): a tail already known stays, the dims
/// before it are new, tied to sizes read before (`x.size(0)`). Returns its
/// dims, `None` when its known tail is longer than the rank.
pub(crate) fn give_rank(meta: &mut dyn Meta, t: &Tensor, rank: usize) -> Option<Vec<Dim>> {
    let (var, tail) = match meta.resolve_shape(&t.shape) {
        Shape::Known(dims) => return Some(dims.as_ref().clone()),
        Shape::Var(v) => (v, 0),
        Shape::Tail(v, suffix) => (v, suffix.len()),
    };
    if tail > rank {
        return None;
    }
    meta.refine_rank(var, &vec![None; rank - tail]);
    meta.dims(t)
}

/// `x.permute(0, 2, 1, 3)` on a tensor of unknown rank: the permutation
/// names every dim, so `x` has exactly that many (torch raises otherwise).
/// The dims not known yet get made-up names, as trailing dims do elsewhere.
fn pin_rank_for_permute(meta: &mut dyn Meta, x: &Rc<Tensor>, args: &Args) -> Option<Vec<Dim>> {
    let order = args.varargs(1);
    let k = order.len();
    let all_ints = order
        .iter()
        .all(|v| matches!(v, Value::Int(d) if d.as_const().is_some()));
    if k == 0 || k > 8 || !all_ints {
        return None;
    }
    let (var, suffix) = meta
        .demand_suffix(&x.shape, k)
        .tail()
        .map(|(v, s)| (v, s.len()))?;
    if suffix != k {
        return None;
    }
    meta.refine_rank(var, &[]);
    meta.dims(x)
}

/// An op with no rule. With fallback kernels off, torch's mode would refuse
/// it; either way its result is unknown.
fn no_rule(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    super::no_rule_warning(meta, range, name);
    unknown_rank_rule(meta, name, x, args, device)
}

/// `broadcast_tensors(*tensors)`: each of them in the shape they all
/// broadcast to.
fn broadcast_tensors(meta: &mut dyn Meta, name: &str, args: &Args) -> RuleResult {
    let ts = args.tensors();
    let shape = match broadcast_all(meta, Vec::new(), ts.iter().map(|t| &**t)) {
        Ok(Some(shape)) => shape,
        Ok(None) => return Ok(Value::Unknown),
        Err(message) => return raise(Code::BroadcastShape, message),
    };
    Ok(Value::tuple(
        ts.iter()
            .map(|t| out_known(meta, t, shape.clone(), t.dtype, t.device.clone(), name))
            .collect(),
    ))
}

/// Ops without a tensor first argument: `torch.cat([...])`, `torch.stack`, `torch.einsum`, `torch.max(a, b)`.
fn scalar_fallback(
    meta: &mut dyn Meta,
    name: &str,
    family: Option<Family>,
    args: &Args,
    range: TextRange,
) -> RuleResult {
    match family {
        Some(Family::Join) => cat(meta, name, args, range),
        Some(Family::Einsum) => einsum(meta, args, range),
        Some(Family::BroadcastTensors) => broadcast_tensors(meta, name, args),
        Some(Family::Meshgrid) => Ok(meshgrid(meta, name, args, range)),
        _ => {
            // `torch.add(2, x)`, `torch.where(cond, 1.0, x)`: a tensor elsewhere.
            if let Some(t) = args.tensors().first().cloned()
                && family.is_some_and(Family::is_binary)
            {
                number_first(name, args)?;
                let device = check_inputs(meta, args, name, range).unwrap_or(None);
                let a = args.pos.first().cloned().unwrap_or(Value::Unknown);
                let b = args.pos.get(1).cloned().unwrap_or(Value::Tensor(t));
                return Ok(binary(meta, name, &a, &b, args, device, range));
            }
            if name == "where"
                && let Some(Value::Tensor(_)) = args.pos.first()
            {
                return Ok(Value::Unknown);
            }
            if !args.tensors().is_empty() {
                super::no_rule_warning(meta, range, name);
            }
            Ok(Value::Unknown)
        }
    }
}

/// Torch's argument parsing of a number passed as the second operand of an
/// elementwise op with no overload that takes one (`torch.maximum(x, 0)`,
/// `x.minimum(2)`, `mask.logical_or(1)`): the ops that refuse a number
/// first (`NumberFirst::NotTensor`) refuse it anywhere. Judged for the
/// plain call, by position or by the parameter's keyword; an operator
/// (`x >= 2`) never is. `def` is `name`'s registry entry, which the
/// dispatch has already looked up.
fn number_second(def: Option<&OpDef>, name: &str, args: &Args) -> Result<(), Stop> {
    if args.operator || def.map(|def| def.number_first) != Some(NumberFirst::NotTensor) {
        return Ok(());
    }
    let parameter = if name == "heaviside" {
        "values"
    } else {
        "other"
    };
    // Torch names the position of a positional argument (counting `self`
    // of a method call out), not of a keyword.
    let (value, position) = match (args.pos.as_slice(), args.kw.as_slice()) {
        ([_, value], []) if args.method => (value, " (position 1)"),
        ([_, value], []) => (value, " (position 2)"),
        ([_], [(keyword, value)]) if &**keyword == parameter => (value, ""),
        _ => return Ok(()),
    };
    let number = match value {
        Value::Int(_) => "int",
        Value::Float(_) => "float",
        Value::Bool(_) => "bool",
        _ => return Ok(()),
    };
    raise(
        Code::ArgumentType,
        format!("{name}(): argument '{parameter}'{position} must be Tensor, not {number}"),
    )
}

/// Torch's argument parsing of a number passed first to an elementwise op
/// (`torch.maximum(2, x)`): most take none there. Only the plain call
/// `op(number, tensor)` is judged; with more arguments torch's message
/// lists them all. An operator (`2 >= x`) is never judged: Python
/// reflects it to the tensor's method.
fn number_first(name: &str, args: &Args) -> Result<(), Stop> {
    if args.operator {
        return Ok(());
    }
    let number = match args.pos.as_slice() {
        [Value::Int(_), Value::Tensor(_)] => "int",
        [Value::Float(_), Value::Tensor(_)] => "float",
        [Value::Bool(_), Value::Tensor(_)] => "bool",
        _ => return Ok(()),
    };
    if !args.kw.is_empty() {
        return Ok(());
    }
    match OpDef::of(name).map(|def| def.number_first) {
        Some(NumberFirst::NotTensor) => raise(
            Code::ArgumentType,
            format!("{name}(): argument 'input' (position 1) must be Tensor, not {number}"),
        ),
        Some(NumberFirst::NoSignature(signatures)) => raise(
            Code::ArgumentType,
            format!(
                "{name}() received an invalid combination of arguments - got ({number}, Tensor), but expected one of:\n{signatures}"
            ),
        ),
        Some(NumberFirst::Taken) | None => Ok(()),
    }
}
