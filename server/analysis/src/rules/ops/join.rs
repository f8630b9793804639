//! Joins and splits: `cat`, `stack` and their relatives, `split`, `chunk`, `unbind`.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::inputs::check_inputs;
use super::output::{out_known, out_shape, out_var};
use super::{OpCall, give_rank};
use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, ShapeError, Stop, check, raise};
use crate::rules::meta::Meta;
use crate::rules::shape::wrap_dim;
use crate::value::{DType, Device, Shape, Tensor, Value};

/// `unbind`.
pub(super) fn unbind(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    let d = call.dim_arg(meta, 1, "dim", Some(0))?;
    let mut shape = dims.clone();
    shape.remove(d);
    let item = call.output(meta, shape, x.dtype);
    Ok(match meta.env().value(&dims[d]) {
        Some(n) => Value::tuple(vec![item; n.clamp(0, 1024) as usize]),
        // As many pieces as the dim's size, which is not known: each is
        // the input without the dim, however many there are.
        None => Value::Many(Rc::new(item), Some(dims[d].clone())),
    })
}

/// `split`, `split_with_sizes`.
pub(super) fn split_sizes(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    split(meta, x, dims, args, call.device)
}

/// `chunk`.
pub(super) fn chunk(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let d = call.dim_arg(meta, 2, "dim", Some(0))?;
    let (Some(c), Some(s)) = (args.int(1, "chunks"), meta.env().value(&dims[d])) else {
        // A symbolic size split into known chunks: equal pieces when it divides.
        if let Some(c) = args.int(1, "chunks").filter(|c| *c > 0 && *c <= 64) {
            let mut shape = dims.clone();
            shape[d] = dims[d]
                .floordiv(&Dim::konst(c))
                .unwrap_or_else(|| Dim::konst(0));
            let piece = call.output(meta, shape, x.dtype);
            return Ok(Value::tuple(vec![piece; c as usize]));
        }
        return Ok(Value::Unknown);
    };
    check!(
        c > 0,
        Code::SplitSize,
        "chunk expects `chunks` to be greater than 0, got: {c}"
    );
    let piece = (s + c - 1) / c;
    let count = if piece == 0 {
        c
    } else {
        (s + piece - 1) / piece
    };
    let mut out = Vec::new();
    for i in 0..count.min(1024) {
        let mut shape = dims.clone();
        shape[d] = Dim::konst(if piece == 0 {
            0
        } else {
            piece.min(s - i * piece)
        });
        out.push(call.output(meta, shape, x.dtype));
    }
    Ok(Value::tuple(out))
}

/// `tensor_split`.
pub(super) fn tensor_split(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let d = call.dim_arg(meta, 2, "dim", Some(0))?;
    let spec = call
        .args
        .get(1, "sections")
        .or(call.args.get(1, "indices"))
        .or(call.args.get(1, "tensor_indices_or_sections"))
        .cloned()
        .unwrap_or(Value::Unknown);
    split_at(meta, &call, d, &spec)
}

/// `hsplit`, `vsplit`, `dsplit`: `tensor_split` along the columns (the
/// only dim of a vector), the rows or the depth, of a tensor of at least
/// 1, 2 or 3 dims, into sections that must divide the size.
pub(super) fn directional_split(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let rank = call.dims.len();
    let (least, d) = match call.name {
        "hsplit" => (1, usize::from(rank > 1)),
        "vsplit" => (2, 0),
        _ => (3, 2),
    };
    check!(
        rank >= least,
        Code::DimOutOfRange,
        "torch.{} requires a tensor with at least {least} dimension, but got a tensor with {rank} dimensions!",
        call.name
    );
    let spec = call
        .args
        .get(1, "sections")
        .or(call.args.get(1, "indices"))
        .cloned()
        .unwrap_or(Value::Unknown);
    if let Value::Int(c) = &spec
        && let (Some(c), Some(s)) = (c.as_const(), meta.env().value(&call.dims[d]))
        && c != 0
    {
        check!(
            s.checked_rem(c) == Some(0),
            Code::SplitSize,
            "torch.{} attempted to split along dimension {d}, but the size of the dimension {s} is not divisible by the split_size {c}!",
            call.name
        );
    }
    split_at(meta, &call, d, &spec)
}

/// The pieces `tensor_split` cuts dim `d` into: `sections` pieces as equal
/// as can be (the first ones one longer), or the slices between `indices`
/// (taken as slice bounds: clamped, and wrapped when negative).
fn split_at(meta: &mut dyn Meta, call: &OpCall<'_>, d: usize, spec: &Value) -> RuleResult {
    let dims = &call.dims;
    let Some(s) = meta.env().value(&dims[d]) else {
        return Ok(Value::Unknown);
    };
    let sizes: Vec<i64> = match spec {
        Value::Int(c) => match c.as_const() {
            Some(c) if c > 0 => (0..c.min(1024))
                .map(|i| s / c + i64::from(i < s % c))
                .collect(),
            _ => return Ok(Value::Unknown),
        },
        v => {
            let Some(items) = v.items() else {
                return Ok(Value::Unknown);
            };
            let bounds: Option<Vec<i64>> = items
                .iter()
                .map(|i| match i {
                    Value::Int(i) => i.as_const(),
                    _ => None,
                })
                .collect();
            let Some(bounds) = bounds else {
                return Ok(Value::Unknown);
            };
            let clamp = |i: i64| {
                if i < 0 {
                    i.saturating_add(s).max(0)
                } else {
                    i.min(s)
                }
            };
            let mut start = 0;
            let mut out = Vec::with_capacity(bounds.len() + 1);
            for b in bounds.iter().take(1024) {
                let end = clamp(*b);
                out.push((end - start).max(0));
                start = start.max(end);
            }
            out.push(s - start);
            out
        }
    };
    let out = sizes
        .into_iter()
        .map(|n| {
            let mut shape = dims.clone();
            shape[d] = Dim::konst(n);
            call.output(meta, shape, call.x.dtype)
        })
        .collect();
    Ok(Value::tuple(out))
}

fn split(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    dims: &[Dim],
    args: &Args,
    device: Option<Device>,
) -> RuleResult {
    let rank = dims.len();
    let d = match args.get(2, "dim") {
        None => 0,
        Some(Value::Int(d)) => match d.as_const().map(|d| wrap_dim(d, rank)) {
            Some(Ok(d)) => d,
            Some(Err(message)) => {
                return raise(Code::DimOutOfRange, message);
            }
            None => return Ok(Value::Unknown),
        },
        _ => return Ok(Value::Unknown),
    };
    let size = &dims[d];
    // torch's message names the dim as the code wrote it (`-1`).
    let written = match args.get(2, "dim") {
        Some(Value::Int(w)) => w.as_const().unwrap_or(d as i64),
        _ => d as i64,
    };
    let spec = args
        .get(1, "split_size_or_sections")
        .or(args.get(1, "split_size"))
        .cloned()
        .unwrap_or(Value::Unknown);
    let pieces: Vec<Dim> = match &spec {
        Value::Int(k) => match (meta.env().value(k), meta.env().value(size)) {
            (Some(0), Some(s)) => {
                check!(
                    s == 0,
                    Code::SplitSize,
                    "split_size can only be 0 if dimension size is 0, but got dimension size of {s}"
                );
                vec![Dim::konst(0)]
            }
            (Some(k), Some(s)) if k > 0 => {
                let mut out = Vec::new();
                let mut left = s;
                while left > 0 && out.len() < 1024 {
                    out.push(Dim::konst(k.min(left)));
                    left -= k;
                }
                out
            }
            _ => {
                // A symbolic size split by a symbolic piece: exact when the
                // quotient is a small known number (`split(n_embd)` of `3*n_embd`).
                let q = meta.env().resolve(size).floordiv(&meta.env().resolve(k));
                match q.and_then(|q| q.as_const()) {
                    Some(n)
                        if (1..=64).contains(&n)
                            && meta.env().resolve(k).mul(&Dim::konst(n))
                                == meta.env().resolve(size) =>
                    {
                        vec![k.clone(); n as usize]
                    }
                    _ => return Ok(Value::Unknown),
                }
            }
        },
        v => match v.items() {
            Some(items) => {
                let sizes = meta.size_dims(&items);
                let total = numel_sum(&sizes);
                if meta.env().known_different(&total, size) {
                    let message = format!(
                        "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {written}), but got split_sizes={}",
                        meta.fmt_dim(size),
                        meta.fmt_dims(&sizes)
                    );
                    return raise(Code::SplitSize, message);
                }
                sizes
            }
            None => return Ok(Value::Unknown),
        },
    };
    let out = pieces
        .into_iter()
        .map(|p| {
            let mut shape = dims.to_vec();
            shape[d] = p;
            out_known(meta, x, shape, x.dtype, device.clone(), "split")
        })
        .collect();
    Ok(Value::tuple(out))
}

fn numel_sum(sizes: &[Dim]) -> Dim {
    sizes.iter().fold(Dim::konst(0), |acc, d| acc.add(d))
}

/// `cat`, `stack` and their relatives (`concat`, `hstack`, `vstack`,
/// `dstack`, `row_stack`, `column_stack`).
pub(super) fn cat(meta: &mut dyn Meta, name: &str, args: &Args, range: TextRange) -> RuleResult {
    if let Some(Value::Many(element, len)) = args.get(0, "tensors") {
        return cat_many(meta, name, &element.clone(), len.clone(), args);
    }
    let Some(inputs) = join_inputs(meta, name, args, range) else {
        return Ok(Value::Unknown);
    };
    if matches!(name, "cat" | "concat" | "concatenate") {
        // A dim the analysis cannot read could be any: no input's sizes
        // outside it are known to match.
        if let Some(dim) = args.int_or(1, dim_keyword(args), 0) {
            give_inputs_the_known_rank(meta, &inputs.tensors, dim);
        }
    }
    let all: Option<Vec<Vec<Dim>>> = inputs.tensors.iter().map(|t| meta.dims(t)).collect();
    let Some(mut all) = all else {
        if let Some(result) = join_trailing(meta, name, args, &inputs) {
            return result;
        }
        if let Some(result) = join_leading(meta, name, args, &inputs) {
            return Ok(result);
        }
        return Ok(match partly_known(meta, name, args, &inputs) {
            Some(v) => v,
            None => out_var(meta, &inputs.tensors[0], inputs.dtype, inputs.device, name),
        });
    };
    let JoinInputs {
        tensors,
        dtype,
        device,
    } = inputs;
    let (op, dim_default) = promote_ranks(name, &mut all);
    let joined = Joined {
        name,
        first: &tensors[0],
        dtype,
        device,
    };
    if op == "stack" {
        stack_known(meta, &joined, args, all, dim_default)
    } else {
        cat_known(meta, &joined, args, all, dim_default)
    }
}

/// `cat` takes tensors of one rank (or 1-D empty ones, which a tensor of
/// unknown rank is taken not to be): one of unknown rank among tensors of
/// known rank has theirs (`torch.cat([x2, x1], dim=1)` with `x1: [N, C, H,
/// W]` makes `x2` four-dimensional), and the sizes of a known one but in
/// the joined dim (`[N, ?, H, W]`), as torch requires; a size read before
/// (`x2.size(2)`) is tied to the known one. The ties are made before the
/// join, so that its result is written in the known sizes: a join in a
/// branch the analysis cannot decide keeps them when the branch's facts
/// are taken back.
fn give_inputs_the_known_rank(meta: &mut dyn Meta, tensors: &[Rc<Tensor>], dim: i64) {
    // A 1-D empty tensor (`torch.tensor([])`, an accumulator's start) joins
    // tensors of any rank, and says nothing of theirs.
    let legacy_empty = |dims: &Vec<Dim>| dims.len() == 1 && dims[0].as_const() == Some(0);
    let Some(known) = tensors
        .iter()
        .filter_map(|t| meta.dims(t))
        .find(|d| !legacy_empty(d))
    else {
        return;
    };
    let rank = known.len();
    let Ok(joined) = wrap_dim(dim, rank) else {
        return;
    };
    for t in tensors {
        if matches!(meta.resolve_shape(&t.shape), Shape::Known(_)) {
            continue;
        }
        // A tail longer than the rank is a mismatch the join reports.
        let Some(dims) = give_rank(meta, t, rank) else {
            continue;
        };
        for (i, (mine, theirs)) in dims.iter().zip(&known).enumerate() {
            if i != joined {
                let _ = meta.env_mut().unify(mine, theirs);
            }
        }
    }
}

/// The tensors a join takes, the dtype they promote to, and the device
/// they are on.
struct JoinInputs {
    tensors: Vec<Rc<Tensor>>,
    dtype: Option<DType>,
    device: Option<Device>,
}

/// Reads the list a join takes: `None` when its result is unknown (torch
/// raises for an empty list, and the devices may clash), else its tensors.
fn join_inputs(
    meta: &mut dyn Meta,
    name: &str,
    args: &Args,
    range: TextRange,
) -> Option<JoinInputs> {
    let list = args.get(0, "tensors").and_then(|v| v.items())?;
    if list.is_empty() {
        // Unless it may have been filled through something not followed.
        if !meta.lists_unsure() {
            meta.report(
                range,
                Code::CatShape,
                if name == "stack" {
                    "stack expects a non-empty TensorList".to_string()
                } else {
                    format!("torch.{name}(): expected a non-empty list of Tensors")
                },
            );
        }
        return None;
    }
    let tensors: Vec<Rc<Tensor>> = list.iter().filter_map(|v| v.as_tensor().cloned()).collect();
    if tensors.len() != list.len() {
        return None;
    }
    let device = check_inputs(meta, args, name, range)?;
    let dtype = tensors
        .iter()
        .try_fold(None::<DType>, |acc, t| {
            let d = t.dtype?;
            Some(Some(match acc {
                None => d,
                Some(a) => crate::rules::dtype::join(a, d),
            }))
        })
        .flatten();
    Some(JoinInputs {
        tensors,
        dtype,
        device,
    })
}

/// What a join of inputs of known rank gives its result: the op's name,
/// the first input (whose fake or real kind the result has), the promoted
/// dtype and the device.
struct Joined<'a> {
    name: &'a str,
    first: &'a Rc<Tensor>,
    dtype: Option<DType>,
    device: Option<Device>,
}

impl Joined<'_> {
    fn output(&self, meta: &mut dyn Meta, shape: Vec<Dim>) -> Value {
        out_known(
            meta,
            self.first,
            shape,
            self.dtype,
            self.device.clone(),
            self.name,
        )
    }
}

/// `hstack`, `vstack`, `dstack` and `column_stack` are `cat`s of their
/// inputs made matrices or 3-d first: promotes the ranks in `all` and gives
/// the op they become and the dim it joins by default.
fn promote_ranks(name: &str, all: &mut [Vec<Dim>]) -> (&'static str, i64) {
    match name {
        "hstack" => ("cat", if all[0].len() == 1 { 0 } else { 1 }),
        "vstack" | "row_stack" => {
            for s in all.iter_mut() {
                if s.len() < 2 {
                    s.insert(0, Dim::konst(1));
                    if s.len() < 2 {
                        s.push(Dim::konst(1));
                    }
                }
            }
            ("cat", 0)
        }
        "dstack" => {
            for s in all.iter_mut() {
                while s.len() < 3 {
                    if s.len() < 2 {
                        s.insert(0, Dim::konst(1));
                    } else {
                        s.push(Dim::konst(1));
                    }
                }
            }
            ("cat", 2)
        }
        "column_stack" => {
            // 0-d and 1-d tensors become columns [n, 1], then hstack
            for s in all.iter_mut() {
                if s.len() < 2 {
                    let n = s.pop().unwrap_or_else(|| Dim::konst(1));
                    *s = vec![n, Dim::konst(1)];
                }
            }
            ("cat", 1)
        }
        "stack" => ("stack", 0),
        _ => ("cat", 0),
    }
}

/// `stack` of inputs of known shapes `all`: all the same shape, with a new
/// dim of their count.
fn stack_known(
    meta: &mut dyn Meta,
    joined: &Joined<'_>,
    args: &Args,
    all: Vec<Vec<Dim>>,
    dim_default: i64,
) -> RuleResult {
    let first = all[0].clone();
    let Some(d) = args.int_or(1, dim_keyword(args), dim_default) else {
        return Ok(Value::Unknown);
    };
    let d = wrap_dim(d, first.len() + 1)
        .map_err(|message| ShapeError::new(Code::DimOutOfRange, message))?;
    for (i, s) in all.iter().enumerate().skip(1) {
        check!(
            s.len() == first.len()
                && !s
                    .iter()
                    .zip(&first)
                    .any(|(a, b)| meta.env().known_different(a, b)),
            Code::StackShape,
            "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
            meta.fmt_dims(&first),
            meta.fmt_dims(s)
        );
        for (a, b) in s.iter().zip(&first) {
            let _ = meta.require_equal(a, b);
        }
    }
    let mut shape = first;
    shape.insert(d, Dim::konst(all.len() as i64));
    Ok(joined.output(meta, shape))
}

/// `cat` of inputs of known shapes `all`: the same rank and the same sizes
/// but in the joined dim, which is their sum.
fn cat_known(
    meta: &mut dyn Meta,
    joined: &Joined<'_>,
    args: &Args,
    all: Vec<Vec<Dim>>,
    dim_default: i64,
) -> RuleResult {
    // Legacy: 1-D empty tensors are skipped.
    let all: Vec<Vec<Dim>> = all
        .into_iter()
        .filter(|s| !(s.len() == 1 && meta.env().value(&s[0]) == Some(0)))
        .collect();
    let Some(first) = all.first().cloned() else {
        return Ok(Value::Unknown);
    };
    check!(
        !first.is_empty(),
        Code::CatShape,
        "zero-dimensional tensor (at position 0) cannot be concatenated"
    );
    let dim_key = dim_keyword(args);
    let given = match args.get(1, dim_key) {
        None => Some(dim_default),
        Some(_) => args.int(1, dim_key),
    };
    let Some(d) = given else {
        return Ok(Value::Unknown);
    };
    let d = wrap_dim(d, first.len())
        .map_err(|message| ShapeError::new(Code::DimOutOfRange, message))?;
    let total = joined_size(meta, &all, &first, d)?;
    let mut shape = first;
    shape[d] = total;
    Ok(joined.output(meta, shape))
}

/// The size of `cat`'s joined dim `d`: the sum of the inputs', after the
/// check torch makes that they have `first`'s rank and agree with it in
/// every other dim.
fn joined_size(
    meta: &mut dyn Meta,
    all: &[Vec<Dim>],
    first: &[Dim],
    d: usize,
) -> Result<Dim, Stop> {
    let mut total = Dim::konst(0);
    for (i, s) in all.iter().enumerate() {
        check!(
            s.len() == first.len(),
            Code::CatShape,
            "Tensors must have same number of dimensions: got {} and {}",
            first.len(),
            s.len()
        );
        for (j, (a, b)) in s.iter().zip(first).enumerate() {
            if j == d {
                continue;
            }
            check!(
                !meta.env().known_different(a, b),
                Code::CatShape,
                "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                meta.fmt_dim(b),
                meta.fmt_dim(a)
            );
            let _ = meta.require_equal(a, b);
        }
        total = total.add(&s[d]);
    }
    Ok(total)
}

/// `cat`/`stack` where some inputs have a rank nobody knows but one is
/// known. `stack` needs every input to have that one's shape, so the result
/// is known. `cat` needs them to agree outside the joined dim, whose total
/// is unknown (an unknown input may even be the legacy empty `[0]`, which
/// `cat` skips): the known input's shape with that dim unknown.
fn partly_known(
    meta: &mut dyn Meta,
    name: &str,
    args: &Args,
    inputs: &JoinInputs,
) -> Option<Value> {
    let JoinInputs {
        tensors,
        dtype,
        device,
    } = inputs;
    let (dtype, device) = (*dtype, device.clone());
    let (known, dims) = tensors
        .iter()
        .find_map(|t| meta.dims(t).map(|d| (t.clone(), d)))?;
    let dim_key = dim_keyword(args);
    let d = args.int_or(1, dim_key, 0)?;
    match name {
        "stack" => {
            let d = wrap_dim(d, dims.len() + 1).ok()?;
            let mut out = dims;
            out.insert(d, Dim::konst(tensors.len() as i64));
            Some(out_known(meta, &known, out, dtype, device, name))
        }
        "cat" | "concat" | "concatenate" if !dims.is_empty() => {
            let d = wrap_dim(d, dims.len()).ok()?;
            let mut out = dims;
            out[d] = meta.env_mut().anonymous();
            Some(out_known(meta, &known, out, dtype, device, name))
        }
        _ => None,
    }
}

/// `cat` along a first dim (`dim=1`) of inputs of unknown rank that are
/// one tensor's dims, some of its first ones changed alike but in the
/// joined dim (`torch.cat((c, x), dim=1)` with `c = torch.zeros_like(x)`):
/// that rank, those dims, and the joined dim the sum of the inputs'.
/// `None` for inputs of other ranks.
fn join_leading(
    meta: &mut dyn Meta,
    name: &str,
    args: &Args,
    inputs: &JoinInputs,
) -> Option<Value> {
    if !matches!(name, "cat" | "concat" | "concatenate") {
        return None;
    }
    let d = usize::try_from(args.int(1, dim_keyword(args))?).ok()?;
    let vars: Vec<u32> = inputs
        .tensors
        .iter()
        .map(|t| match meta.resolve_shape(&t.shape) {
            Shape::Var(v) => Some(v),
            _ => None,
        })
        .collect::<Option<_>>()?;
    // An input made from no other tensor (a made-up optional input, the
    // caller's `x_self_cond`) is the others' rank and dims but the joined
    // one, or torch refuses them: it is taken to be made from the oldest
    // tensor among them (a parameter), whose dims last.
    let bases: Vec<(u32, Vec<(usize, Dim)>)> = vars
        .iter()
        .map(|v| meta.sibling_base(*v))
        .collect::<Option<_>>()?;
    let (base, changes) = bases
        .iter()
        .min_by_key(|(b, _)| *b)
        .cloned()
        .unwrap_or((vars[0], Vec::new()));
    let others = |c: &[(usize, Dim)]| -> Vec<(usize, Dim)> {
        c.iter().filter(|(i, _)| *i != d).cloned().collect()
    };
    let kept = others(&changes);
    for (v, (b, c)) in vars.iter().zip(&bases) {
        if *b != base && b == v && c.is_empty() {
            let own = crate::rules::shape::first_dim_size(meta, *v, d);
            let mut theirs = kept.clone();
            theirs.push((d, own));
            theirs.sort_by_key(|(i, _)| *i);
            meta.adopt_sibling(*v, base, theirs);
        }
    }
    for v in &vars {
        let (b, c) = meta.sibling_base(*v)?;
        let theirs = others(&c);
        if b != base
            || theirs.len() != kept.len()
            || theirs
                .iter()
                .zip(&kept)
                .any(|((i, x), (j, y))| i != j || !meta.env().known_equal(x, y))
        {
            return None;
        }
    }
    let joined = vars
        .iter()
        .map(|v| crate::rules::shape::first_dim_size(meta, *v, d))
        .reduce(|a, b| a.add(&b))?;
    let mut all = kept;
    all.push((d, joined));
    let shape = meta.sibling_shape(&Shape::Var(base), &all)?;
    Some(out_shape(
        meta,
        &inputs.tensors[0],
        shape,
        inputs.dtype,
        inputs.device.clone(),
        name,
    ))
}

/// `cat`/`stack` along a trailing dim (`dim=-1`) of inputs whose leading
/// dims are one rank variable (`[*batch, 1]` pieces of one `[*batch, 3]`):
/// the leading dims pass through, the trailing ones join as for known
/// shapes. `None` for any other mix of ranks, whose result is not known.
fn join_trailing(
    meta: &mut dyn Meta,
    name: &str,
    args: &Args,
    inputs: &JoinInputs,
) -> Option<RuleResult> {
    let tensors = &inputs.tensors;
    let stack = match name {
        "stack" => true,
        "cat" | "concat" | "concatenate" => false,
        _ => return None,
    };
    let d = args.int(1, dim_keyword(args))?;
    // Counted from the end, into the dims every input is known to have.
    let from_end = usize::try_from(-d).ok().filter(|&k| k >= 1)?;
    let taken = if stack { from_end - 1 } else { from_end };
    let mut shapes: Vec<Shape> = tensors
        .iter()
        .map(|t| meta.demand_suffix(&t.shape, taken))
        .collect();
    // Inputs of unknown rank joined along a trailing dim share their
    // leading dims, or torch refuses them: a made-up rank (a layer the
    // analysis cannot see gave it) is the other input's.
    let (var, len) = shapes[0].tail().map(|(v, s)| (v, s.len()))?;
    if shapes
        .iter()
        .any(|s| s.tail().is_some_and(|(v, d)| v != var && d.len() == len))
    {
        for shape in shapes.iter_mut().skip(1) {
            if let Some((v, d)) = shape.tail()
                && v != var
                && d.len() == len
                && meta.same_leading_dims(var, v)
            {
                *shape = meta.resolve_shape(shape);
            }
        }
        shapes[0] = meta.resolve_shape(&shapes[0]);
    }
    let (var, first) = shapes[0].tail()?;
    let suffixes: Vec<Vec<Dim>> = shapes
        .iter()
        .map(|s| match s.tail() {
            Some((v, dims)) if v == var && dims.len() == first.len() => Some(dims.to_vec()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let first = suffixes[0].clone();
    let dims = if stack {
        for (i, s) in suffixes.iter().enumerate().skip(1) {
            if s.iter()
                .zip(&first)
                .any(|(a, b)| meta.env().known_different(a, b))
            {
                let message = format!(
                    "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                    meta.fmt_dims(&first),
                    meta.fmt_dims(s)
                );
                return Some(raise(Code::StackShape, message));
            }
            for (a, b) in s.iter().zip(&first) {
                let _ = meta.require_equal(a, b);
            }
        }
        let mut dims = first;
        dims.insert(dims.len() + 1 - from_end, Dim::konst(tensors.len() as i64));
        dims
    } else {
        let at = first.len() - from_end;
        let total = match joined_size(meta, &suffixes, &first, at) {
            Ok(total) => total,
            Err(stop) => return Some(Err(stop)),
        };
        let mut dims = first;
        dims[at] = total;
        dims
    };
    let shape = Shape::Tail(var, Rc::new(dims));
    Some(Ok(out_shape(
        meta,
        &tensors[0],
        shape,
        inputs.dtype,
        inputs.device.clone(),
        name,
    )))
}

/// `torch.stack(ys)` / `torch.cat(ys)` of a list of unknown length (filled
/// in a loop that runs an unknown number of times), whose one element stands
/// for every item: the element's shape with the joined dim's size unknown,
/// or `n` times the item's when the list is known to hold `n` items.
fn cat_many(
    meta: &mut dyn Meta,
    name: &str,
    element: &Value,
    len: Option<Dim>,
    args: &Args,
) -> RuleResult {
    let (Value::Tensor(t), "stack" | "cat" | "concat" | "concatenate") = (element, name) else {
        return Ok(Value::Unknown);
    };
    let Some(mut dims) = meta.dims(t) else {
        return Ok(Value::Unknown);
    };
    let rank = dims.len() + usize::from(name == "stack");
    if rank == 0 {
        return Ok(Value::Unknown);
    }
    let Some(d) = args.int_or(1, dim_keyword(args), 0) else {
        return Ok(Value::Unknown);
    };
    let d = match wrap_dim(d, rank) {
        Ok(d) => d,
        Err(message) => {
            return raise(Code::DimOutOfRange, message);
        }
    };
    match (name, len) {
        ("stack", Some(n)) => dims.insert(d, n),
        ("stack", None) => dims.insert(d, meta.env_mut().anonymous()),
        (_, Some(n)) => dims[d] = n.mul(&dims[d]),
        (_, None) => dims[d] = meta.env_mut().anonymous(),
    }
    Ok(out_known(meta, t, dims, t.dtype, t.device.clone(), name))
}

/// The keyword of a join's dim: `torch.concatenate` spells it `axis`.
fn dim_keyword(args: &Args) -> &'static str {
    if args.kw("axis").is_some() {
        "axis"
    } else {
        "dim"
    }
}

/// `block_diag(*tensors)`: the tensors (each a matrix, a row for a vector,
/// `1 x 1` for a number) along the diagonal of one matrix.
pub(super) fn block_diag(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let items = call.args.varargs(0);
    let mut rows = Dim::konst(0);
    let mut columns = Dim::konst(0);
    let mut operands = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Tensor(t) = item else {
            return Ok(Value::Unknown);
        };
        let Some(dims) = meta.dims(t) else {
            return Ok(Value::Unknown);
        };
        check!(
            dims.len() <= 2,
            Code::CatShape,
            "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {} dimensions",
            dims.len()
        );
        let (r, c) = match dims.as_slice() {
            [] => (Dim::konst(1), Dim::konst(1)),
            [n] => (Dim::konst(1), n.clone()),
            [r, c] => (r.clone(), c.clone()),
            _ => return Ok(Value::Unknown),
        };
        rows = rows.add(&r);
        columns = columns.add(&c);
        operands.push((item, Some(dims.len())));
    }
    let dtype = crate::rules::dtype::promote(&operands);
    Ok(call.output(meta, vec![rows, columns], dtype))
}
