//! Tensor indexing: ints, slices, `None`, `...`, index tensors and boolean masks.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::check::{Stop, check, raise};
use super::ops::{check_inputs, out_known, out_shape};
use super::shape::broadcast;
use crate::code::Code;
use crate::rules::meta::Meta;
use crate::value::{DType, Device, Shape, Tensor, Value};

/// `x[index]`: ints, slices, `None` and `...` (basic indexing, torch's
/// `aten.slice`/`aten.select`), and index tensors, lists and boolean masks
/// (advanced indexing, `aten.index`).
pub(crate) fn index_tensor(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    index: &[Value],
    range: TextRange,
) -> Value {
    let entries = index_entries(index);
    let Some(device) = index_device(meta, t, &entries, range) else {
        return Value::Unknown;
    };
    let Some(dims) = meta.dims(t) else {
        return index_trailing(meta, t, &entries, device.clone(), range)
            .or_else(|| index_leading(meta, t, &entries, device.clone(), range))
            .or_else(|| mask_of_leading_dims(meta, t, &entries, device))
            .unwrap_or_else(|| of_unknown_rank(meta, t));
    };
    if let Some(gathered) = gather_by_unknown_rank(meta, t, &dims, &entries, device.clone()) {
        return gathered;
    }
    match indexed_dims(meta, t, &dims, index, &entries, range) {
        Ok(out) => {
            let layout = basic_index_layout(meta, t, &dims, &entries, &out);
            let result = out_known(meta, t, out, t.dtype, device, "index");
            crate::rules::layout::with_layout(result, layout)
        }
        Err(stop) => meta.settle(range, Err(stop)),
    }
}

/// The layout of a view made by basic indexing (ints, slices, `None`,
/// `...`) of a tensor of known sizes: an int drops its dim, a slice keeps
/// its dim's stride times its step, so a slice that leaves elements out
/// makes a view whose memory has gaps. `None` (contiguous or unknown) for
/// advanced indexing, which copies.
fn basic_index_layout(
    meta: &dyn Meta,
    t: &Tensor,
    dims: &[Dim],
    entries: &[Value],
    out: &[Dim],
) -> Option<Rc<crate::rules::layout::Layout>> {
    let sizes: Vec<i64> = dims
        .iter()
        .map(|d| meta.env().value(d))
        .collect::<Option<_>>()?;
    let out_sizes: Vec<i64> = out
        .iter()
        .map(|d| meta.env().value(d))
        .collect::<Option<_>>()?;
    let in_strides = crate::rules::layout::strides_of(&sizes, t.layout.as_deref())?;
    let taken: usize = entries
        .iter()
        .filter(|e| matches!(e, Value::Int(_) | Value::Slice(..)))
        .count();
    let mut strides = Vec::new();
    let mut pos = 0;
    for e in entries {
        match e {
            Value::Int(_) => pos += 1,
            Value::Slice(_, _, step) => {
                let step = match &**step {
                    Value::None => 1,
                    Value::Int(d) => d.as_const()?,
                    _ => return None,
                };
                strides.push(in_strides.get(pos)?.checked_mul(step)?);
                pos += 1;
            }
            // As `unsqueeze` strides a new dim: over the dim after it.
            Value::None => strides.push(match (sizes.get(pos), in_strides.get(pos)) {
                (Some(size), Some(stride)) => size.checked_mul(*stride)?,
                _ => 1,
            }),
            Value::Ellipsis => {
                let covered = sizes.len().checked_sub(taken)?;
                strides.extend(in_strides.get(pos..pos + covered)?.iter().copied());
                pos += covered;
            }
            _ => return None,
        }
    }
    strides.extend(in_strides.get(pos..)?.iter().copied());
    if strides.len() != out_sizes.len() {
        return None;
    }
    crate::rules::layout::from_strides(&out_sizes, strides)
}

/// The entries of an index, one per dim it addresses (or adds).
fn index_entries(index: &[Value]) -> Vec<Value> {
    let mut entries: Vec<Value> = Vec::new();
    for v in index {
        match v {
            // A tuple is the whole index (`x[idx]`, `idx = (1, 3)`); one
            // among several (`x[:, (-1,), :]`) is an index sequence, like a list.
            Value::Tuple(items) if index.len() == 1 => entries.extend(items.iter().cloned()),
            // torch (like old numpy) reads a short list holding sequences,
            // tensors or None as a tuple: x[[[0, 1], [2, 3]]] is x[[0, 1], [2, 3]]
            Value::List(items)
                if index.len() == 1 && {
                    let items = items.borrow();
                    items.len() < 32
                        && items.iter().any(|v| {
                            matches!(
                                v,
                                Value::List(_) | Value::Tuple(_) | Value::Tensor(_) | Value::None
                            )
                        })
                } =>
            {
                entries.extend(items.borrow().iter().cloned());
            }
            other => entries.push(other.clone()),
        }
    }
    entries
}

/// The device of `t[entries]`, after the check torch makes that the index
/// tensors can be used with `t`; `None` when they cannot.
fn index_device(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    entries: &[Value],
    range: TextRange,
) -> Option<Option<Device>> {
    // Index tensors may live on the CPU whatever device the indexed tensor
    // is on (torch moves them): only an index on another accelerator clashes.
    let mut all = vec![Value::Tensor(t.clone())];
    all.extend(entries.iter().map(|e| match e {
        Value::Tensor(i) if i.device == Some(Device::Cpu) => Value::Tensor(Rc::new(Tensor {
            device: None,
            ..(**i).clone()
        })),
        other => other.clone(),
    }));
    // Basic indexing is `aten.slice`/`aten.select` to torch, advanced `aten.index`.
    let basic = entries.iter().all(|e| {
        matches!(
            e,
            Value::Slice(..) | Value::Int(_) | Value::None | Value::Ellipsis
        )
    });
    let op = if basic {
        "slice.Tensor"
    } else {
        "index.Tensor"
    };
    let device = check_inputs(meta, &Args::new(all, Vec::new()), op, range)?;
    Some(device.or_else(|| t.device.clone()))
}

/// `t[..., i, 1:]` of a tensor of unknown rank (`[*batch, 3]`): the entries
/// after a leading ellipsis index its last dims, which the index says it
/// has, and the dims before them stay the rank variable's. `None` for any
/// other index of such a tensor (one that reads its leading dims, or holds
/// index tensors), whose result's rank is not known.
fn index_trailing(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    entries: &[Value],
    device: Option<Device>,
    range: TextRange,
) -> Option<Value> {
    let (Value::Ellipsis, after) = entries.split_first()? else {
        return None;
    };
    let basic = |e: &Value| matches!(e, Value::Int(_) | Value::Slice(..) | Value::None);
    if !after.iter().all(basic) {
        return None;
    }
    let taken = after.iter().filter(|e| !matches!(e, Value::None)).count();
    let shape = meta.demand_suffix(&t.shape, taken);
    let (var, suffix) = shape.tail()?;
    let split = suffix.len().checked_sub(taken)?;
    let mut walk = IndexWalk {
        dims: &suffix[split..],
        // The rank is not known: torch's number for the dim is not either,
        // but counted from the end it is.
        first_dim: -(taken as i64),
        range,
        out: Vec::new(),
        pos: 0,
        advanced: AdvancedIndices::default(),
    };
    for e in after {
        if let Err(stop) = walk.step(meta, t, e, after) {
            return Some(meta.settle(range, Err(stop)));
        }
    }
    let mut kept: Vec<Dim> = suffix[..split].to_vec();
    kept.extend(walk.out);
    let shape = Shape::of_sizes(var, &Rc::new(kept));
    Some(out_shape(meta, t, shape, t.dtype, device, "index"))
}

/// `x[mask]` where `x` is `[*batch, 3]` and the mask `[*batch]` (rays
/// kept where a test holds): the mask takes the dims of the shared rank
/// variable and the known ones it has, and gives one dim of as many as
/// its trues, a size only the data decides: `[?, 3]`.
fn mask_of_leading_dims(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    entries: &[Value],
    device: Option<Device>,
) -> Option<Value> {
    let [Value::Tensor(mask)] = entries else {
        return None;
    };
    if mask.dtype != Some(DType::Bool) {
        return None;
    }
    let (v, dims) = meta
        .resolve_shape(&t.shape)
        .tail()
        .map(|(v, s)| (v, s.to_vec()))?;
    let (w, taken) = match meta.resolve_shape(&mask.shape) {
        Shape::Var(w) => (w, Vec::new()),
        Shape::Tail(w, m) => (w, m.to_vec()),
        Shape::Known(_) => return None,
    };
    if v != w || taken.len() > dims.len() {
        return None;
    }
    if taken
        .iter()
        .zip(&dims)
        .any(|(m, d)| meta.env().known_different(m, d))
    {
        return None;
    }
    let mut out = vec![meta.env_mut().anonymous()];
    out.extend(dims[taken.len()..].iter().cloned());
    Some(out_known(meta, t, out, t.dtype, device, "index"))
}

/// `table[idx]` (and `table[idx, :]`) with one integer index tensor of
/// unknown rank (`[*batch, n]`) and nothing but full slices after it: torch
/// puts the index's shape first and the table's other dims after it, so
/// the result is `[*batch, n, *table.shape[1:]]`.
fn gather_by_unknown_rank(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    dims: &[Dim],
    entries: &[Value],
    device: Option<Device>,
) -> Option<Value> {
    let (Value::Tensor(ix), rest) = entries.split_first()? else {
        return None;
    };
    let integer = ix
        .dtype
        .is_some_and(|d| d != DType::Bool && !d.is_floating());
    if !integer || meta.dims(ix).is_some() || dims.is_empty() {
        return None;
    }
    let full = |e: &Value| {
        matches!(e, Value::Slice(lo, hi, step)
            if [lo, hi, step].iter().all(|v| matches!(***v, Value::None)))
    };
    if rest.len() >= dims.len() || !rest.iter().all(full) {
        return None;
    }
    let (var, suffix) = meta
        .resolve_shape(&ix.shape)
        .tail()
        .map(|(v, s)| (v, s.to_vec()))?;
    let mut out = suffix;
    out.extend(dims[1..].iter().cloned());
    let shape = Shape::of_sizes(var, &Rc::new(out));
    Some(out_shape(meta, t, shape, t.dtype, device, "index"))
}

/// `x[:, :k]` of a tensor of unknown rank: slices of its first dims, and
/// nothing else, keep its rank and its other dims (see
/// `Interp::sibling_shape`), whatever they turn out to be.
fn index_leading(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    entries: &[Value],
    device: Option<Device>,
    range: TextRange,
) -> Option<Value> {
    let Shape::Var(v) = meta.resolve_shape(&t.shape) else {
        return None;
    };
    if entries.is_empty() {
        return None;
    }
    let mut changes = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Value::Slice(lo, hi, step) = entry else {
            return None;
        };
        if [lo, hi, step].iter().all(|v| matches!(***v, Value::None)) {
            continue;
        }
        // A step that is not a positive number is left to what reads the
        // shape known: a tensor of unknown rank may be numpy's, which takes
        // `[:, ::-1]`.
        let positive = match &**step {
            Value::None => true,
            Value::Int(d) => d.as_const().is_some_and(|n| n > 0),
            _ => false,
        };
        if !positive {
            return None;
        }
        let size = super::shape::first_dim_size(meta, v, i);
        changes.push((i, slice_len(meta, &size, lo, hi, step, range)?));
    }
    let shape = meta.sibling_shape(&Shape::Var(v), &changes)?;
    Some(out_shape(meta, t, shape, t.dtype, device, "index"))
}

/// `t` indexed where its rank, or what an index entry is, is not known:
/// the result's rank is not known either.
fn of_unknown_rank(meta: &mut dyn Meta, t: &Rc<Tensor>) -> Value {
    let shape = meta.fresh_rank_var();
    Value::Tensor(Rc::new(Tensor {
        shape,
        op: Rc::from("index"),
        made_at: None,
        ..(**t).clone()
    }))
}

/// The dims of `t[entries]`, `t` of `dims`, after the checks torch makes.
fn indexed_dims(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    dims: &[Dim],
    index: &[Value],
    entries: &[Value],
    range: TextRange,
) -> Result<Vec<Dim>, Stop> {
    // An entry the analysis cannot read (`np.newaxis` of a parameter named
    // `np`, a name of a library it does not model, a tensor that may be a
    // mask of any rank) may be `None`, an int or a mask: how many dims it
    // takes, and so what the index gives, is unknown.
    if !entries.iter().all(|e| kind_known(meta, e)) {
        return Err(Stop::Give(Value::Unknown));
    }
    let consumed = entries.iter().map(|e| dims_taken(meta, e)).sum::<usize>();
    if consumed > dims.len() {
        // A 0-d tensor indexed by one integer has torch's advice on `item`.
        let message = if dims.is_empty() && matches!(index, [Value::Int(_)]) {
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number".to_string()
        } else {
            format!("too many indices for tensor of dimension {}", dims.len())
        };
        return raise(Code::IndexOutOfRange, message);
    }
    let mut walk = IndexWalk {
        dims,
        first_dim: 0,
        range,
        out: Vec::new(),
        pos: 0,
        advanced: AdvancedIndices::default(),
    };
    for e in entries {
        walk.step(meta, t, e, entries)?;
    }
    let IndexWalk {
        mut out,
        pos,
        advanced,
        ..
    } = walk;
    out.extend(dims[pos..].iter().cloned());
    advanced.place(meta, out)
}

/// Whether an index entry is one whose kind the analysis knows: how many
/// dims it takes follows from it.
fn kind_known(meta: &dyn Meta, e: &Value) -> bool {
    match e {
        Value::Int(_)
        | Value::Bool(_)
        | Value::Slice(..)
        | Value::None
        | Value::Ellipsis
        | Value::List(_)
        | Value::Tuple(_)
        | Value::Range(..)
        | Value::Float(Some(_)) => true,
        // An integer index takes one dim, a mask as many as it has: one
        // of unknown dtype takes one only when it has one.
        Value::Tensor(ix) => ix.dtype.is_some() || meta.dims(ix).is_some_and(|d| d.len() == 1),
        _ => false,
    }
}

/// How many of the indexed tensor's dims an index entry takes: a mask as
/// many as it has, `None` and `...` none (the ellipsis takes what the
/// others leave), any other one.
fn dims_taken(meta: &dyn Meta, e: &Value) -> usize {
    match e {
        Value::None | Value::Ellipsis => 0,
        Value::Tensor(ix) if ix.dtype == Some(DType::Bool) => {
            meta.dims(ix).map(|d| d.len()).unwrap_or(1)
        }
        _ => 1,
    }
}

/// Indexing a tensor of `dims` at `range`, entry by entry: the result's
/// dims so far, the next dim of the tensor to index, and the advanced
/// indices met.
struct IndexWalk<'a> {
    dims: &'a [Dim],
    /// The number torch gives `dims[0]` in its messages: 0, or counted
    /// from the end when only the trailing dims of a tensor are indexed.
    first_dim: i64,
    range: TextRange,
    out: Vec<Dim>,
    pos: usize,
    advanced: AdvancedIndices,
}

impl IndexWalk<'_> {
    /// The entry `e` of `entries`, indexing `t`.
    fn step(
        &mut self,
        meta: &mut dyn Meta,
        t: &Rc<Tensor>,
        e: &Value,
        entries: &[Value],
    ) -> Result<(), Stop> {
        let dims = self.dims;
        match e {
            Value::None => self.out.push(Dim::konst(1)),
            Value::Ellipsis => {
                let remaining_after = consumed_after(entries, e, meta);
                let take = dims.len().saturating_sub(self.pos + remaining_after);
                self.out
                    .extend(dims[self.pos..self.pos + take].iter().cloned());
                self.pos += take;
            }
            Value::Int(i) => {
                check_int_index(meta, i, &dims[self.pos], self.first_dim + self.pos as i64)?;
                self.pos += 1;
            }
            Value::Slice(lo, hi, step) => {
                // `slice_len` reports torch's error (a step that is not
                // positive) itself; `None` leaves the result unknown.
                let len = slice_len(meta, &dims[self.pos], lo, hi, step, self.range);
                let Some(len) = len else {
                    return Err(Stop::Give(Value::Unknown));
                };
                self.out.push(len);
                self.pos += 1;
            }
            Value::Tensor(ix) if ix.dtype == Some(DType::Bool) => self.mask(meta, t, ix)?,
            Value::Tensor(ix) => {
                check_index_dtype(ix)?;
                // An index of unknown rank gives a result of unknown rank.
                let Some(idims) = meta.dims(ix) else {
                    return Err(Stop::Give(of_unknown_rank(meta, t)));
                };
                self.advanced.note(self.out.len(), idims);
                self.pos += 1;
            }
            // A float the analysis knows (`x[2.0]`, `x[n / 2]` of a known
            // `n`); one it only guesses at (`t.item()` of a tensor of
            // unknown dtype) stays an index it cannot read.
            Value::Float(Some(_)) => {
                return raise(
                    Code::IndexShape,
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got float)".into(),
                );
            }
            Value::List(_) | Value::Tuple(_) => {
                let items = e.items().unwrap_or_default();
                // A list of bools is a mask, of as many trues as it has.
                let shape = if items.iter().any(|v| matches!(v, Value::Bool(_))) {
                    vec![meta.env_mut().anonymous()]
                } else {
                    // torch moves the advanced indices' dims to the front
                    // before it reads them: a list's values are checked
                    // against the dim it indexes, named by its place
                    // among the advanced indices.
                    let place = self.advanced.parts.len();
                    for item in &items {
                        if let Value::Int(i) = item {
                            check_int_index(meta, i, &dims[self.pos], place as i64)?;
                        }
                    }
                    vec![Dim::konst(items.len() as i64)]
                };
                self.advanced.note(self.out.len(), shape);
                self.pos += 1;
            }
            // An index we cannot read (an unknown int or object): the rank
            // depends on what it is.
            _ => return Err(Stop::Give(of_unknown_rank(meta, t))),
        }
        Ok(())
    }

    /// A boolean mask: it takes as many dims as it has, which must match
    /// the tensor's there, and gives one of the count of its trues.
    fn mask(&mut self, meta: &mut dyn Meta, t: &Rc<Tensor>, ix: &Rc<Tensor>) -> Result<(), Stop> {
        let dims = self.dims;
        // A mask takes as many dims as it has: of one whose rank is not
        // known, the result's rank is not known either.
        let Some(md) = meta.dims(ix) else {
            return Err(Stop::Give(of_unknown_rank(meta, t)));
        };
        let k = md.len();
        for (j, (m, d)) in md.iter().zip(&dims[self.pos..]).enumerate() {
            check!(
                !meta.env().known_different(m, d),
                Code::IndexShape,
                "The shape of the mask {} at index {j} does not match the shape of the indexed tensor {} at index {}",
                meta.fmt_dims(&md),
                meta.fmt_dims(dims),
                self.pos + j
            );
        }
        let n = meta.env_mut().anonymous();
        self.advanced.note(self.out.len(), vec![n]);
        self.pos += k;
        Ok(())
    }
}

/// An int index must be within the size it indexes.
fn check_int_index(meta: &dyn Meta, i: &Dim, size: &Dim, pos: i64) -> Result<(), Stop> {
    if let (Some(i), Some(s)) = (i.as_const(), meta.env().value(size))
        && (i >= s || i < -s)
    {
        let message = format!("index {i} is out of bounds for dimension {pos} with size {s}");
        return raise(Code::IndexOutOfRange, message);
    }
    Ok(())
}

/// An index tensor must hold integers (or bools, a mask).
fn check_index_dtype(ix: &Tensor) -> Result<(), Stop> {
    if let Some(dt) = ix.dtype
        && dt.is_floating()
    {
        let message = "tensors used as indices must be long, int, byte or bool tensors";
        return raise(Code::DtypeMismatch, message.into());
    }
    Ok(())
}

/// The advanced indices of an index (tensors, lists, masks): where in the
/// result each one's shape goes, and whether they are apart.
#[derive(Default)]
struct AdvancedIndices {
    /// (The result's dim it goes at, its shape), by index.
    parts: Vec<(usize, Vec<Dim>)>,
    /// Some are apart: a slice or `None` between them.
    separated: bool,
    /// Where the last one went.
    last_at: Option<usize>,
}

impl AdvancedIndices {
    /// An advanced index of `shape` at the result's dim `at`.
    fn note(&mut self, at: usize, shape: Vec<Dim>) {
        if let Some(end) = self.last_at
            && end != at
        {
            self.separated = true;
        }
        self.last_at = Some(at);
        self.parts.push((at, shape));
    }

    /// `out` with the advanced indices' shape put in: their shapes
    /// broadcast together, where the first was, or first of all when they
    /// are apart (as numpy does).
    fn place(self, meta: &mut dyn Meta, mut out: Vec<Dim>) -> Result<Vec<Dim>, Stop> {
        if self.parts.is_empty() {
            return Ok(out);
        }
        let mut shape: Vec<Dim> = Vec::new();
        for (_, part) in &self.parts {
            match broadcast(meta, &shape, part) {
                Ok(s) => shape = s,
                Err(_) => {
                    let shapes: Vec<String> =
                        self.parts.iter().map(|(_, p)| meta.fmt_dims(p)).collect();
                    let message = format!(
                        "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                        shapes.join(", ")
                    );
                    return raise(Code::IndexShape, message);
                }
            }
        }
        let at = if self.separated { 0 } else { self.parts[0].0 };
        let at = at.min(out.len());
        let tail = out.split_off(at);
        out.extend(shape);
        out.extend(tail);
        Ok(out)
    }
}

/// How many dims the entries after the ellipsis consume.
fn consumed_after(entries: &[Value], ellipsis: &Value, meta: &dyn Meta) -> usize {
    let start = entries
        .iter()
        .position(|e| std::ptr::eq(e, ellipsis))
        .map(|i| i + 1)
        .unwrap_or(entries.len());
    entries[start..].iter().map(|e| dims_taken(meta, e)).sum()
}

/// The length of `size[lo:hi:step]`.
fn slice_len(
    meta: &mut dyn Meta,
    size: &Dim,
    lo: &Value,
    hi: &Value,
    step: &Value,
    range: TextRange,
) -> Option<Dim> {
    let step = match step {
        Value::None => 1,
        Value::Int(d) => d.as_const()?,
        _ => return Some(meta.env_mut().anonymous()),
    };
    if step <= 0 {
        meta.report(
            range,
            Code::IndexOutOfRange,
            "step must be greater than zero".into(),
        );
        return None;
    }
    let bound = |meta: &mut dyn Meta, v: &Value, default: Dim| -> Option<Dim> {
        match v {
            Value::None => Some(default),
            Value::Int(d) => match d.as_const() {
                Some(n) if n < 0 => Some(size.add(&Dim::konst(n))),
                // `x[:, :-w]` with a size `w`: negative whatever its value,
                // so counted from the end as a constant would be.
                None if d.never_positive() && d.as_const() != Some(0) => Some(size.add(d)),
                _ => Some(d.clone()),
            },
            Value::Opaque(name) => Some(meta.opaque_symbol(name)),
            _ => None,
        }
    };
    let (Some(start), Some(stop)) = (
        bound(meta, lo, Dim::konst(0)),
        bound(meta, hi, size.clone()),
    ) else {
        return Some(meta.env_mut().anonymous());
    };
    // Clamp to [0, size] where the values are known.
    let s = meta.env().value(size);
    let clamp = |d: Dim| match (d.as_const(), s) {
        (Some(n), Some(s)) => Dim::konst(n.clamp(0, s.max(0))),
        (Some(n), None) if n < 0 => Dim::konst(0),
        _ => d,
    };
    let (start, stop) = (clamp(start), clamp(stop));
    let len = stop.sub(&start);
    let len = match len.as_const() {
        Some(n) if n <= 0 => Dim::konst(0),
        Some(n) => Dim::konst((n + step - 1) / step),
        None => {
            if step == 1 {
                len
            } else {
                len.add(&Dim::konst(step - 1))
                    .floordiv(&Dim::konst(step))
                    .unwrap_or_else(|| Dim::konst(0))
            }
        }
    };
    Some(len)
}

/// `x[idx] = value`: the value must broadcast to the indexed region.
pub(crate) fn index_put(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    index: &[Value],
    value: &Value,
    range: TextRange,
) {
    if meta.dims(t).is_none() {
        // Only the devices can be checked; reading the region would name
        // trailing dims of the written tensor that nothing else asked for.
        let _ = index_device(meta, t, &index_entries(index), range);
        return;
    }
    let region = index_tensor(meta, t, index, range);
    if let (Value::Tensor(r), Value::Tensor(v)) = (&region, value)
        && let (Some(rd), Some(vd)) = (meta.dims(r), meta.dims(v))
    {
        // The value is expanded to the region (torch's `copy_`).
        if let Some(message) = crate::rules::ops::expand_error(meta, &vd, &rd) {
            meta.report(range, Code::BroadcastShape, message);
        } else if let Err(message) = broadcast(meta, &rd, &vd) {
            meta.report(range, Code::BroadcastShape, message);
        }
    }
}
