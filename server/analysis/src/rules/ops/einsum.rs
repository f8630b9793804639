//! Contractions named by labels or by dims: `torch.einsum("bij,bjk->bik", a, b)` and `torch.tensordot(a, b, dims)`.
//!
//! As torch's `einsum` does, the rule reads the equation, checks each
//! operand's subscripts against its dims, binds each subscript to one size
//! (a size 1 broadcasts), and gives the output the sizes of its subscripts.
//! `tensordot` contracts listed dims of one operand with listed dims of the
//! other and keeps the rest of both, in order.

use std::rc::Rc;

use rustc_hash::FxHashMap;
use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::inputs::check_inputs;
use super::output::out_known;
use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, ShapeError, Stop, check, raise};
use crate::rules::meta::Meta;
use crate::value::{Shape, Tensor, Value};

/// `torch.einsum("bij,bjk->bik", a, b)` (operands may also come as one list).
pub(crate) fn einsum(meta: &mut dyn Meta, args: &Args, range: TextRange) -> RuleResult {
    let Some(eq) = args.str(0, "equation") else {
        return Ok(Value::Unknown);
    };
    let Some(tensors) = operands(args) else {
        return Ok(Value::Unknown);
    };
    let Some(device) = check_inputs(meta, args, "einsum", range) else {
        return Ok(Value::Unknown);
    };
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let inputs: Vec<&str> = lhs.split(',').collect();
    if inputs.len() > tensors.len() {
        return raise(
            Code::EinsumShape,
            "einsum(): fewer operands were provided than specified in the equation".into(),
        );
    }
    pin_ranks(meta, &inputs, &tensors);
    if tensors.iter().any(|t| meta.dims(t).is_none())
        && let Some(result) =
            over_shared_batch(meta, args, &inputs, rhs.as_deref(), &tensors, range)
    {
        return result;
    }
    let mut operand_dims = Vec::new();
    for (i, (spec, t)) in inputs.iter().zip(&tensors).enumerate() {
        let Some(dims) = meta.dims(t) else {
            let shape = meta.fresh_rank_var();
            let t = meta.new_tensor(shape, t.dtype, device, "torch.einsum");
            return Ok(Value::Tensor(Rc::new(t)));
        };
        check_count(i, spec, &dims)?;
        operand_dims.push(dims);
    }
    // torch reads the output's subscripts after counting the operands'
    // and before comparing any sizes.
    if let Some(rhs) = &rhs {
        check_output(&lhs, rhs)?;
    }
    let mut subscripts = Subscripts::default();
    for (i, (spec, dims)) in inputs.iter().zip(&operand_dims).enumerate() {
        if let Err(stop) = subscripts.bind_operand(meta, i, spec, dims) {
            return Ok(meta.settle(range, Err(stop)));
        }
    }
    let Some(out) = subscripts.output_dims(rhs.as_deref()) else {
        return Ok(Value::Unknown);
    };
    let dtype = tensors[0].dtype;
    Ok(out_known(
        meta,
        &tensors[0],
        out,
        dtype,
        device,
        "torch.einsum",
    ))
}

/// Operands whose leading dims are one rank variable (`[*batch, i, j]`
/// and `[*batch, j]` of one function's annotations), each subscripted from
/// an ellipsis that stands for those dims alone (`... i j, ... j -> ...
/// i`): the contraction of the known trailing dims, behind the same
/// leading ones. `None` for anything else, whose result is not known.
fn over_shared_batch(
    meta: &mut dyn Meta,
    args: &Args,
    inputs: &[&str],
    rhs: Option<&str>,
    tensors: &[Rc<Tensor>],
    range: TextRange,
) -> Option<RuleResult> {
    let mut var = None;
    let mut trailing = Vec::new();
    for (spec, t) in inputs.iter().zip(tensors) {
        let shape = meta.resolve_shape(&t.shape);
        let (v, suffix) = shape.tail()?;
        let letters = spec.strip_prefix("...")?;
        // The ellipsis must hold the rank variable's dims only: dims it
        // also held of the known ones would line up differently per operand.
        if letters.contains('.')
            || letters.chars().count() != suffix.len()
            || *var.get_or_insert(v) != v
        {
            return None;
        }
        trailing.push(Rc::new(Tensor {
            shape: Shape::known(suffix.to_vec()),
            ..(**t).clone()
        }));
    }
    let var = var?;
    let leading = match rhs {
        None => true,
        Some(r) if r.starts_with("...") => true,
        Some(r) if !r.contains('.') => false,
        Some(_) => return None,
    };
    let mut pos = vec![args.pos.first()?.clone()];
    pos.extend(trailing.into_iter().map(Value::Tensor));
    let result = einsum(meta, &Args::new(pos, Vec::new()), range);
    Some(result.map(|v| match (&v, leading) {
        (Value::Tensor(t), true) => Value::Tensor(Rc::new(Tensor {
            shape: crate::rules::tail::suffix_shape(var, meta.dims(t).unwrap_or_default()),
            ..(**t).clone()
        })),
        _ => v,
    }))
}

/// The operands after the equation, or the one list of them; `None` unless
/// all are tensors, and at least one.
fn operands(args: &Args) -> Option<Vec<Rc<Tensor>>> {
    let mut operands: Vec<Value> = args.pos.get(1..).unwrap_or_default().to_vec();
    if let [single] = operands.as_slice()
        && let Some(items) = single.items()
    {
        operands = items;
    }
    let tensors: Vec<Rc<Tensor>> = operands
        .iter()
        .filter_map(|v| v.as_tensor().cloned())
        .collect();
    if tensors.len() != operands.len() || tensors.is_empty() {
        return None;
    }
    Some(tensors)
}

/// The subscripts spell out the rank of an operand nobody knew the rank
/// of, unless they hold an ellipsis.
fn pin_ranks(meta: &mut dyn Meta, inputs: &[&str], tensors: &[Rc<Tensor>]) {
    for (spec, t) in inputs.iter().zip(tensors) {
        if !spec.contains("...") {
            let names: Vec<String> = spec.chars().map(|c| c.to_string()).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            meta.demand_rank(&t.shape, &names);
        }
    }
}

/// What the operands bound the subscripts to: each one's size, how many
/// times it appears, and the dims the ellipsis stands for.
#[derive(Default)]
struct Subscripts {
    sizes: FxHashMap<char, Dim>,
    counts: FxHashMap<char, usize>,
    ellipsis: Option<Vec<Dim>>,
}

impl Subscripts {
    /// Binds the subscripts `spec` of operand `i` to its dims, after the
    /// check torch makes that there is one per dim (or fewer, with an
    /// ellipsis).
    fn bind_operand(
        &mut self,
        meta: &mut dyn Meta,
        i: usize,
        spec: &str,
        dims: &[Dim],
    ) -> Result<(), Stop> {
        check_count(i, spec, dims)?;
        let has_ellipsis = spec.contains("...");
        let letters: Vec<char> = spec.replace("...", "").chars().collect();
        let (before, after) = match spec.split_once("...") {
            Some((b, a)) => (b.chars().collect::<Vec<_>>(), a.chars().collect::<Vec<_>>()),
            None => (letters.clone(), Vec::new()),
        };
        for (c, d) in before.iter().zip(dims) {
            self.bind(meta, i, *c, d)?;
        }
        for (c, d) in after.iter().rev().zip(dims.iter().rev()) {
            self.bind(meta, i, *c, d)?;
        }
        if has_ellipsis {
            let mid = dims[before.len()..dims.len() - after.len()].to_vec();
            let merged = match self.ellipsis.take() {
                None => mid,
                Some(prev) => broadcast_ellipsis(meta, i, prev, mid)?,
            };
            self.ellipsis = Some(merged);
        }
        Ok(())
    }

    /// Binds subscript `c` of operand `i` to the size `d`: a size 1 gives
    /// way to the other (they broadcast), and torch raises when two are
    /// known to differ.
    fn bind(&mut self, meta: &mut dyn Meta, i: usize, c: char, d: &Dim) -> Result<(), Stop> {
        *self.counts.entry(c).or_insert(0) += 1;
        match self.sizes.get(&c) {
            Some(prev) if meta.is_one(prev) => {
                self.sizes.insert(c, d.clone());
            }
            Some(prev) => {
                if meta.is_one(d) {
                    return Ok(());
                }
                check!(
                    !meta.env().known_different(prev, d),
                    Code::EinsumShape,
                    "einsum(): subscript {c} has size {} for operand {i} which does not broadcast with previously seen size {}",
                    meta.fmt_dim(d),
                    meta.fmt_dim(prev)
                );
                let prev = prev.clone();
                let _ = meta.require_equal(&prev, d);
            }
            None => {
                self.sizes.insert(c, d.clone());
            }
        }
        Ok(())
    }

    /// The output's dims: those of the subscripts after `->`, or, without
    /// one, the ellipsis's and then those of the subscripts that appear
    /// once, in alphabetical order. `None` for a subscript no operand has.
    fn output_dims(&self, rhs: Option<&str>) -> Option<Vec<Dim>> {
        let out_spec = match rhs {
            Some(r) => explicit_output(r),
            None => self.implicit_output(),
        };
        let mut out = Vec::new();
        for p in out_spec {
            if p == "..." {
                out.extend(self.ellipsis.clone().unwrap_or_default());
            } else {
                let c = p.chars().next().unwrap_or(' ');
                out.push(self.sizes.get(&c)?.clone());
            }
        }
        Some(out)
    }

    /// The output torch makes without `->`: the ellipsis's dims, then the
    /// subscripts that appear once, sorted.
    fn implicit_output(&self) -> Vec<String> {
        let mut once: Vec<char> = self
            .counts
            .iter()
            .filter(|(_, n)| **n == 1)
            .map(|(c, _)| *c)
            .collect();
        once.sort();
        let mut parts: Vec<String> = Vec::new();
        if self.ellipsis.is_some() {
            parts.push("...".into());
        }
        parts.extend(once.into_iter().map(|c| c.to_string()));
        parts
    }
}

/// The check torch makes that operand `i` has one subscript per dim (or
/// fewer, with an ellipsis).
fn check_count(i: usize, spec: &str, dims: &[Dim]) -> Result<(), Stop> {
    let has_ellipsis = spec.contains("...");
    let letters = spec.replace("...", "").chars().count();
    check!(
        (has_ellipsis || letters == dims.len()) && (!has_ellipsis || letters <= dims.len()),
        Code::EinsumShape,
        "einsum(): the number of subscripts in the equation ({letters}) does not match the number of dimensions ({}) for operand {i} and no ellipsis was given",
        dims.len()
    );
    Ok(())
}

/// The checks torch makes of the subscripts after `->`: each once, and
/// each one some operand has.
fn check_output(lhs: &str, rhs: &str) -> Result<(), Stop> {
    let mut seen: Vec<String> = Vec::new();
    for part in explicit_output(rhs) {
        if part == "..." {
            continue;
        }
        check!(
            !seen.contains(&part),
            Code::EinsumShape,
            "einsum(): output subscript {part} appears more than once in the output"
        );
        check!(
            lhs.contains(part.as_str()),
            Code::EinsumShape,
            "einsum(): output subscript {part} does not appear in the equation for any input operand"
        );
        seen.push(part);
    }
    Ok(())
}

/// `tensordot(a, b, dims=2)`: the last `dims` dims of `a` contract with
/// the first `dims` of `b`, or the dims of two lists pair by pair; a size
/// 1 on either side is summed away first. The rest of `a`'s dims, then
/// the rest of `b`'s.
pub(super) fn tensordot(meta: &mut dyn Meta, call: super::OpCall<'_>) -> RuleResult {
    let a = &call.dims;
    let Some(other) = call.args.tensor(1, "b") else {
        return Ok(Value::Unknown);
    };
    let Some(b) = meta.dims(&other) else {
        return Ok(Value::Unknown);
    };
    let (dims_a, dims_b): (Vec<i64>, Vec<i64>) = match call.args.get(2, "dims") {
        None => (vec![-2, -1], vec![0, 1]),
        Some(Value::Int(n)) => {
            let Some(n) = n.as_const() else {
                return Ok(Value::Unknown);
            };
            check!(
                n >= 0,
                Code::MatmulShape,
                "tensordot expects dims >= 0, but got dims={n}"
            );
            check!(
                n as usize <= a.len().min(b.len()),
                Code::MatmulShape,
                "tensordot expects dims < ndim_a or ndim_b, but got dims={n}"
            );
            ((-n..0).collect(), (0..n).collect())
        }
        Some(pair) => {
            let Some([first, second]) = pair.items().and_then(|p| <[Value; 2]>::try_from(p).ok())
            else {
                return Ok(Value::Unknown);
            };
            let ints = |v: &Value| -> Option<Vec<i64>> {
                match v {
                    Value::Int(d) => d.as_const().map(|d| vec![d]),
                    _ => v
                        .items()?
                        .iter()
                        .map(|i| match i {
                            Value::Int(d) => d.as_const(),
                            _ => None,
                        })
                        .collect(),
                }
            };
            // Two ints (`dims=(1, 0)`) are not two lists: torch's argument
            // parsing refuses them.
            if let Value::Int(_) = first {
                return raise(
                    Code::ArgumentType,
                    "tensordot(): argument 'dims_self' (position 3) must be tuple of ints, not int"
                        .into(),
                );
            }
            let (Some(first), Some(second)) = (ints(&first), ints(&second)) else {
                return Ok(Value::Unknown);
            };
            (first, second)
        }
    };
    check!(
        dims_a.len() == dims_b.len(),
        Code::MatmulShape,
        "both dimension lists should have same length"
    );
    if let (Some(x), Some(y)) = (call.x.dtype, other.dtype) {
        check!(
            x == y,
            Code::DtypeMismatch,
            "both inputs should have same dtype"
        );
    }
    let mut contracted_a = Vec::new();
    let mut contracted_b = Vec::new();
    for (&da, &db) in dims_a.iter().zip(&dims_b) {
        for (d, rank) in [(da, a.len()), (db, b.len())] {
            check!(
                rank > 0,
                Code::DimOutOfRange,
                "Dimension specified as {d} but tensor has no dimensions"
            );
        }
        let i = crate::rules::shape::wrap_dim(da, a.len())
            .map_err(|message| ShapeError::new(Code::DimOutOfRange, message))?;
        let j = crate::rules::shape::wrap_dim(db, b.len())
            .map_err(|message| ShapeError::new(Code::DimOutOfRange, message))?;
        let (s1, s2) = (&a[i], &b[j]);
        if !meta.is_one(s1) && !meta.is_one(s2) && meta.env().known_different(s1, s2) {
            let message = format!(
                "contracted dimensions need to match, but first has size {} in dim {da} and second has size {} in dim {db}",
                meta.fmt_dim(s1),
                meta.fmt_dim(s2)
            );
            return raise(Code::MatmulShape, message);
        }
        contracted_a.push(i);
        contracted_b.push(j);
    }
    for (list, dims) in [(&contracted_a, &dims_a), (&contracted_b, &dims_b)] {
        for (k, i) in list.iter().enumerate() {
            check!(
                !list[..k].contains(i),
                Code::DimOutOfRange,
                "dim {} appears multiple times in the list of dims",
                dims[k]
            );
        }
    }
    let shape: Vec<Dim> = (0..a.len())
        .filter(|i| !contracted_a.contains(i))
        .map(|i| a[i].clone())
        .chain(
            (0..b.len())
                .filter(|j| !contracted_b.contains(j))
                .map(|j| b[j].clone()),
        )
        .collect();
    Ok(call.output(meta, shape, call.x.dtype))
}

/// The subscripts after `->`, one by one, `...` as one.
fn explicit_output(rhs: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = rhs;
    while !rest.is_empty() {
        if let Some(stripped) = rest.strip_prefix("...") {
            parts.push("...".to_string());
            rest = stripped;
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            parts.push(c.to_string());
            rest = &rest[c.len_utf8()..];
        }
    }
    parts
}

/// The dims two operands' ellipses stand for together: they broadcast,
/// aligned from the right (`[1, 2, 1]` and `[16]` are `[1, 2, 16]`), and
/// torch raises where two sizes other than 1 differ.
fn broadcast_ellipsis(
    meta: &mut dyn Meta,
    i: usize,
    prev: Vec<Dim>,
    mid: Vec<Dim>,
) -> Result<Vec<Dim>, Stop> {
    let offset = prev.len() as isize - mid.len() as isize;
    for (j, d) in mid.iter().enumerate() {
        let Some(p) = usize::try_from(j as isize + offset)
            .ok()
            .and_then(|k| prev.get(k))
        else {
            continue;
        };
        check!(
            meta.is_one(p) || meta.is_one(d) || !meta.env().known_different(p, d),
            Code::EinsumShape,
            "einsum(): dimension {j} covered by ellipsis in operand {i}has size {} which does not broadcast with previously seen ellipsis with size {} for the respective dimension",
            meta.fmt_dim(d),
            meta.fmt_dim(p)
        );
    }
    let (long, short) = if mid.len() >= prev.len() {
        (mid, prev)
    } else {
        (prev, mid)
    };
    let skip = long.len() - short.len();
    Ok(long
        .iter()
        .enumerate()
        .map(|(k, d)| match k.checked_sub(skip).map(|m| &short[m]) {
            Some(other) if meta.is_one(d) => other.clone(),
            _ => d.clone(),
        })
        .collect())
}
