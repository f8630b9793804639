//! Rules for tensors of unknown rank whose trailing dims are known: `[*, 768]`.
//!
//! Model code is full of ops that only touch the last dims (`nn.Linear`,
//! `LayerNorm`, `softmax(dim=-1)`, `q @ k.transpose(-2, -1)`), and in a
//! library file nothing says how many batch dims come first. These rules
//! keep the leading dims as a rank variable and compute the trailing ones,
//! so that `[*batch, n_embd]` flows through a transformer block; once some
//! use fixes the rank (`B, T, C = x.size()`), every such shape resolves.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::shape::broadcast as broadcast_dims;
use super::shape::{changed_at, changed_indices};
use crate::code::Code;
use crate::rules::meta::Meta;
use crate::rules::ops::OpDef;
use crate::value::{Shape, Tensor, Value};

/// What a rule made of an input of unknown rank.
pub(crate) enum TailResult {
    One(Shape),
    /// Values and indices (`max(dim=-1)`), both of this shape.
    Pair(Shape),
    Many(Vec<Shape>),
    /// Pieces of one shape, how many not known (`unbind` along a dim of
    /// unknown size).
    Alike(Shape),
}

fn with_suffix(var: u32, suffix: Vec<Dim>) -> Shape {
    if suffix.is_empty() {
        Shape::Var(var)
    } else {
        Shape::Tail(var, Rc::new(suffix))
    }
}

/// A dim argument that points into the known trailing dims: a negative
/// index, which counts from the end whatever the rank.
fn suffix_index(v: Option<&Value>, suffix_len: usize) -> Option<usize> {
    let Some(Value::Int(d)) = v else { return None };
    let d = d.as_const()?;
    if d < 0 && (-d) as usize <= suffix_len {
        Some(suffix_len - (-d) as usize)
    } else {
        None
    }
}

/// A reduction along first dims that keeps them (`x.mean(dim=1,
/// keepdim=True)`) of a tensor of unknown rank: its rank and its other
/// dims, ones where it reduced (see `Interp::sibling_shape`).
fn kept_first_dims(
    meta: &mut dyn Meta,
    name: &str,
    shape: &Shape,
    args: &Args,
) -> Option<TailResult> {
    if !matches!(shape, Shape::Var(_)) {
        return None;
    }
    let (dim_index, keep_index) = reduction_arguments(name)?;
    if args.flag(keep_index, "keepdim", false) != Some(true) {
        return None;
    }
    let dims = args.get(dim_index, "dim")?;
    let items = dims.items().unwrap_or_else(|| vec![dims.clone()]);
    let mut changes = Vec::new();
    for item in &items {
        let Value::Int(d) = item else {
            return None;
        };
        let d = usize::try_from(d.as_const()?).ok()?;
        changes.push((d, Dim::konst(1)));
    }
    if changes.is_empty() {
        return None;
    }
    Some(reduced(name, meta.sibling_shape(shape, &changes)?))
}

/// `x.chunk(c, dim)` and `x.split([a, b], dim)` along a first dim of a
/// tensor of unknown rank (`x_u, x_c = x.chunk(2)` of a guided batch): each
/// piece is the input with that dim changed (see `Meta::sibling_shape`).
/// A piece of `chunk` is the exact share where the size divides evenly, and
/// an unknown size where it may not (`N` in two: torch's pieces are
/// `ceil(N / 2)` and the rest).
fn pieces_of_first_dim(
    meta: &mut dyn Meta,
    name: &str,
    shape: &Shape,
    args: &Args,
) -> Option<TailResult> {
    let Shape::Var(var) = shape else {
        return None;
    };
    let d = match args.get(2, "dim") {
        None => 0,
        Some(Value::Int(d)) => usize::try_from(d.as_const()?).ok()?,
        Some(_) => return None,
    };
    let pieces: Vec<Dim> = match (
        name,
        args.get(1, "split_size_or_sections")
            .or(args.get(1, "chunks")),
    ) {
        ("chunk", Some(Value::Int(c))) => {
            let c = c.as_const().filter(|c| (2..=64).contains(c))?;
            let size = super::shape::first_dim_size(meta, *var, d);
            chunk_pieces(meta, &size, c)
        }
        ("split", Some(sections @ (Value::List(_) | Value::Tuple(_)))) => {
            let size = super::shape::first_dim_size(meta, *var, d);
            listed_sections(meta, sections, &size).filter(|s| s.len() >= 2)?
        }
        _ => return None,
    };
    let shapes: Option<Vec<Shape>> = pieces
        .into_iter()
        .map(|p| meta.sibling_shape(shape, &[(d, p)]))
        .collect();
    Some(TailResult::Many(shapes?))
}

/// The sizes of `c` pieces `chunk` cuts a dim of `size` into: the exact
/// share where it divides evenly, else unknown sizes (torch's pieces are
/// `ceil(size / c)` and what is left).
fn chunk_pieces(meta: &mut dyn Meta, size: &Dim, c: i64) -> Vec<Dim> {
    let share = size.floordiv(&Dim::konst(c));
    match share {
        Some(share)
            if meta.env().resolve(&share.mul(&Dim::konst(c))) == meta.env().resolve(size) =>
        {
            vec![share; c as usize]
        }
        _ => (0..c).map(|_| meta.env_mut().anonymous()).collect(),
    }
}

/// `split`'s listed sections of a dim of `size`: the sizes, which must add
/// up to the dim, as torch checks. `None` when one is not an int, or when
/// they cannot add up.
fn listed_sections(meta: &mut dyn Meta, sections: &Value, size: &Dim) -> Option<Vec<Dim>> {
    let items = sections.items()?;
    if !(1..=64).contains(&items.len()) {
        return None;
    }
    let sizes = items
        .iter()
        .map(|v| match v {
            Value::Int(k) => Some(k.clone()),
            _ => None,
        })
        .collect::<Option<Vec<Dim>>>()?;
    let total = sizes.iter().skip(1).fold(sizes[0].clone(), |a, b| a.add(b));
    meta.require_equal(size, &total).then_some(sizes)
}

/// Where a reduction takes its `dim` and its `keepdim`: `norm(p, dim,
/// keepdim)`, `std(dim, unbiased, keepdim)`, `sum(dim, keepdim)`. `None`
/// for an op that is no such reduction.
fn reduction_arguments(name: &str) -> Option<(usize, usize)> {
    match name {
        "norm" => Some((2, 3)),
        "std" | "var" => Some((1, 3)),
        "sum" | "mean" | "amax" | "amin" | "prod" | "logsumexp" | "argmax" | "argmin" | "max"
        | "min" => Some((1, 2)),
        _ => None,
    }
}

/// A reduction's result: values and indices for `max` and `min`.
fn reduced(name: &str, out: Shape) -> TailResult {
    if matches!(name, "max" | "min") {
        TailResult::Pair(out)
    } else {
        TailResult::One(out)
    }
}

pub(crate) fn unknown_rank_op(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
) -> Option<TailResult> {
    // A negative dim argument says the tensor has at least that many dims:
    // make them known (as unknown sizes) so the rule can address them.
    let negative_dims = ["dim", "dim0", "dim1"]
        .iter()
        .enumerate()
        .filter_map(|(i, k)| match args.kw(k).or_else(|| args.pos.get(i + 1)) {
            Some(Value::Int(d)) => d.as_const().filter(|d| *d < 0 && *d >= -8),
            _ => None,
        })
        .map(|d| (-d) as usize)
        .max();
    let def = OpDef::of(name);
    let wants_dims = def.is_some_and(|def| def.negative_dim_shows_rank);
    if let (Some(k), true) = (negative_dims, wants_dims) {
        let _ = meta.demand_suffix(&x.shape, k);
    }
    if name == "__attr_mT" {
        let _ = meta.demand_suffix(&x.shape, 2);
    }
    if let Some(result) = indexed_by_tensor(meta, name, x, args) {
        return Some(result);
    }
    let shape = meta.resolve_shape(&x.shape);
    // Also for a known shape with a dim the analysis cannot read
    // (`x.softmax(dim=d)`): the shape stays, whichever dim it is.
    if def.is_some_and(|def| def.keeps_any_shape) {
        return Some(TailResult::One(shape.clone()));
    }
    if let Some(result) = kept_first_dims(meta, name, &shape, args) {
        return Some(result);
    }
    if let Some(result) = pieces_of_first_dim(meta, name, &shape, args) {
        return Some(result);
    }
    let (var, suffix) = shape.tail()?;
    let suffix = suffix.to_vec();
    match name {
        "transpose" | "swapaxes" | "swapdims" => {
            let a = suffix_index(args.get(1, "dim0"), suffix.len())?;
            let b = suffix_index(args.get(2, "dim1"), suffix.len())?;
            let mut s = suffix;
            s.swap(a, b);
            Some(TailResult::One(with_suffix(var, s)))
        }
        "__attr_mT" if suffix.len() >= 2 => {
            let mut s = suffix;
            let n = s.len();
            s.swap(n - 1, n - 2);
            Some(TailResult::One(with_suffix(var, s)))
        }
        "unsqueeze" => {
            let Some(Value::Int(d)) = args.get(1, "dim") else {
                return None;
            };
            if d.as_const()? != -1 {
                return None;
            }
            let mut s = suffix;
            s.push(Dim::konst(1));
            Some(TailResult::One(with_suffix(var, s)))
        }
        _ if let Some((dim_index, keep_index)) = reduction_arguments(name) => {
            let d = suffix_index(args.get(dim_index, "dim"), suffix.len())?;
            let keep = args.flag(keep_index, "keepdim", false)?;
            let mut s = suffix;
            if keep {
                s[d] = Dim::konst(1);
            } else {
                s.remove(d);
            }
            Some(reduced(name, with_suffix(var, s)))
        }
        // Batches of square matrices (`extrinsics.inverse()` of `[*batch,
        // 4, 4]`): the same shape, or one value per matrix.
        "inverse"
        | "linalg_inv"
        | "matrix_exp"
        | "linalg_matrix_exp"
        | "cholesky"
        | "linalg_cholesky"
        | "matrix_power"
        | "linalg_matrix_power"
        | "det"
        | "linalg_det"
        | "logdet"
            if suffix.len() >= 2 =>
        {
            let n = suffix.len();
            if meta.env().known_different(&suffix[n - 2], &suffix[n - 1]) {
                return None;
            }
            let _ = meta.require_equal(&suffix[n - 2], &suffix[n - 1]);
            let mut s = suffix;
            if matches!(name, "det" | "linalg_det" | "logdet") {
                s.truncate(n - 2);
            }
            Some(TailResult::One(with_suffix(var, s)))
        }
        // The main diagonal of the last two dims (`torch.diagonal(covs,
        // dim1=-2, dim2=-1)` of `[*bs, d, d]`): `[*bs, d]`.
        "diagonal" | "linalg_diagonal" => {
            // `linalg.diagonal` takes its settings by keyword only, and
            // defaults to the last two dims; only those can be addressed
            // here, counted from the end.
            let linalg = name == "linalg_diagonal";
            let at = |i: usize| if linalg { usize::MAX } else { i };
            let offset = match args.get(at(1), "offset") {
                None => 0,
                Some(Value::Int(o)) => o.as_const()?,
                Some(_) => return None,
            };
            let (d1, d2) = if linalg { (-2, -1) } else { (0, 1) };
            let (d1, d2) = (Value::Int(Dim::konst(d1)), Value::Int(Dim::konst(d2)));
            let a = suffix_index(args.get(at(2), "dim1").or(Some(&d1)), suffix.len())?;
            let b = suffix_index(args.get(at(3), "dim2").or(Some(&d2)), suffix.len())?;
            if offset != 0 || a == b {
                return None;
            }
            let n = suffix[a].minimum(&suffix[b]);
            let s = crate::rules::ops::diagonal_dims(&suffix, a, b, n);
            Some(TailResult::One(with_suffix(var, s)))
        }
        // `i, j, k, r = quaternions.unbind(-1)` of `[*batch, 4]`: four
        // `[*batch]` tensors.
        "unbind" => {
            let d = suffix_index(args.get(1, "dim"), suffix.len())?;
            let n = meta
                .env()
                .value(&suffix[d])
                .filter(|n| (0..=1024).contains(n));
            let mut s = suffix;
            s.remove(d);
            Some(match n {
                Some(n) => TailResult::Many(vec![with_suffix(var, s); n as usize]),
                None => TailResult::Alike(with_suffix(var, s)),
            })
        }
        // The last dim spread on a new diagonal (`offset=0, dim1=-2,
        // dim2=-1`, the defaults): `[*batch, n]` becomes `[*batch, n, n]`.
        "diag_embed" if args.pos.len() <= 1 && args.kw.is_empty() => {
            let n = suffix.last()?.clone();
            let mut s = suffix;
            s.push(n);
            Some(TailResult::One(with_suffix(var, s)))
        }
        "split" | "chunk" => {
            let d = suffix_index(args.get(2, "dim"), suffix.len())?;
            let size = &suffix[d];
            let pieces: Vec<Dim> = match (
                name,
                args.get(1, "split_size_or_sections")
                    .or(args.get(1, "chunks")),
            ) {
                ("chunk", Some(Value::Int(c))) => {
                    let c = c.as_const().filter(|c| *c > 0 && *c <= 64)?;
                    chunk_pieces(meta, size, c)
                }
                ("split", Some(sections @ (Value::List(_) | Value::Tuple(_)))) => {
                    listed_sections(meta, sections, size)?
                }
                ("split", Some(Value::Int(k))) => {
                    let q = meta
                        .env()
                        .resolve(size)
                        .floordiv(&meta.env().resolve(k))?
                        .as_const()?;
                    if !(1..=64).contains(&q)
                        || meta.env().resolve(&k.mul(&Dim::konst(q))) != meta.env().resolve(size)
                    {
                        return None;
                    }
                    vec![k.clone(); q as usize]
                }
                _ => return None,
            };
            Some(TailResult::Many(
                pieces
                    .into_iter()
                    .map(|p| {
                        let mut s = suffix.clone();
                        s[d] = p;
                        with_suffix(var, s)
                    })
                    .collect(),
            ))
        }
        _ => None,
    }
}

/// Ops whose result has the shape of a tensor argument that says where to
/// look: `searchsorted(seq, values)` gives one position per value,
/// `gather(x, dim, index)` one element per index, and `take_along_dim(x,
/// indices, dim)` the broadcast of both with the indices' size at `dim`.
/// For inputs of unknown rank that share their leading dims.
fn indexed_by_tensor(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
) -> Option<TailResult> {
    match name {
        "searchsorted" => {
            let values = args.tensor(1, "input")?;
            let shape = meta.resolve_shape(&values.shape);
            shape.tail()?;
            Some(TailResult::One(shape))
        }
        "gather" => {
            let index = args.tensor(2, "index")?;
            let shape = meta.resolve_shape(&index.shape);
            shape.tail()?;
            Some(TailResult::One(shape))
        }
        "take_along_dim" => {
            let indices = args.tensor(1, "indices")?;
            let Some(Value::Int(d)) = args.get(2, "dim") else {
                return None;
            };
            let k = usize::try_from(-d.as_const()?).ok().filter(|&k| k >= 1)?;
            let (a, b) = (
                meta.demand_suffix(&x.shape, k),
                meta.demand_suffix(&indices.shape, k),
            );
            let ((v, xs), (w, ys)) = (a.tail()?, b.tail()?);
            if v != w || xs.len() != ys.len() {
                return None;
            }
            let at = xs.len() - k;
            let mut xs = xs.to_vec();
            xs[at] = ys[at].clone();
            let dims = broadcast_dims(meta, &xs, ys).ok()?;
            Some(TailResult::One(with_suffix(v, dims)))
        }
        _ => None,
    }
}

/// Broadcasting where a side has unknown rank: only the trailing dims meet,
/// so it is decidable when the other side is no longer than the known ones,
/// or shares the rank variable. Otherwise the result's rank is unknown too,
/// but its last dims are not: see `broadcast_apart`.
pub(crate) fn broadcast(meta: &mut dyn Meta, a: &Rc<Tensor>, b: &Rc<Tensor>) -> Option<Shape> {
    let (sa, sb) = (meta.resolve_shape(&a.shape), meta.resolve_shape(&b.shape));
    match (&sa, &sb) {
        (Shape::Tail(v, x), Shape::Known(y)) | (Shape::Known(y), Shape::Tail(v, x))
            if y.len() <= x.len() =>
        {
            let dims = broadcast_dims(meta, x, y).ok()?;
            Some(with_suffix(*v, dims))
        }
        (Shape::Var(v), Shape::Known(y)) | (Shape::Known(y), Shape::Var(v)) if y.is_empty() => {
            Some(Shape::Var(*v))
        }
        (Shape::Tail(v, x), Shape::Tail(w, y)) if v == w && x.len() == y.len() => {
            let dims = broadcast_dims(meta, x, y).ok()?;
            Some(with_suffix(*v, dims))
        }
        (Shape::Tail(v, x), Shape::Var(w)) | (Shape::Var(w), Shape::Tail(v, x)) if v == w => {
            Some(with_suffix(*v, x.as_ref().clone()))
        }
        (Shape::Tail(v, x), Shape::Tail(w, y)) => {
            let like = if y.len() > x.len() { *w } else { *v };
            broadcast_apart(meta, x, y, like)
        }
        (Shape::Tail(v, x), Shape::Var(_)) | (Shape::Var(_), Shape::Tail(v, x)) => {
            broadcast_apart(meta, x, &[], *v)
        }
        // A vector with a tensor of unknown rank (`x * self.gamma`, `x +
        // self.bias`): `[*batch, dim]`. A known shape longer than the other
        // side's known dims (`h * mask`, `samples * valid[..., None, None]`)
        // leaves the result unknown: `[*batch, N, C, H, W]` would be true,
        // but it reads as a claim of more dims than anybody passes.
        (Shape::Var(v), Shape::Known(y)) | (Shape::Known(y), Shape::Var(v)) if y.len() == 1 => {
            broadcast_apart(meta, &[], y, *v)
        }
        (Shape::Var(a), Shape::Var(b)) => broadcast_siblings(meta, *a, *b),
        _ => None,
    }
}

/// Broadcasting two tensors of unknown rank made from one tensor's dims,
/// some of its first ones changed (`x - x.mean(dim=1, keepdim=True)`):
/// that rank, and its dims but where a side changed one to other than 1.
fn broadcast_siblings(meta: &mut dyn Meta, a: u32, b: u32) -> Option<Shape> {
    let (base, ca) = meta.sibling_base(a)?;
    let (other, cb) = meta.sibling_base(b)?;
    if base != other {
        return None;
    }
    let one = |d: &Dim| d.as_const() == Some(1);
    let mut changes = Vec::new();
    for i in changed_indices(&ca, &cb) {
        match (changed_at(&ca, i), changed_at(&cb, i)) {
            // Against the tensor's own dim: a 1 takes it, another size is
            // what the dim must be.
            (Some(x), None) | (None, Some(x)) => {
                if !one(&x) {
                    changes.push((i, x));
                }
            }
            (Some(x), Some(y)) => {
                let d = broadcast_dims(meta, &[x], &[y]).ok()?;
                changes.push((i, d.into_iter().next()?));
            }
            (None, None) => {}
        }
    }
    meta.sibling_shape(&Shape::Var(base), &changes)
}

/// Broadcasting two shapes whose ranks are not known to agree, one with
/// known trailing dims (`[*bs, 1] * [*batch, n, 1]`, `[*batch, C] * mask`):
/// the result has a rank of its own, at least the longer known suffix, and
/// its last dims are the known ones broadcast as torch does. Where one side's
/// dim is unknown or absent, a named or constant size of the other is the
/// result (it is 1 or equal, the convention of known shapes too) and a 1
/// gives an unknown size; unknown sizes before the first known one are left
/// to the rank variable. Nothing when no trailing size would be known. The
/// leading dims are named as those of `like`, the operand with more known
/// dims (`*batch` stays `*batch` through a product with a mask).
fn broadcast_apart(meta: &mut dyn Meta, x: &[Dim], y: &[Dim], like: u32) -> Option<Shape> {
    let n = x.len().max(y.len());
    let mut padded = |dims: &[Dim]| -> Vec<Dim> {
        let mut out: Vec<Dim> = (dims.len()..n)
            .map(|_| meta.env_mut().anonymous())
            .collect();
        out.extend(dims.iter().cloned());
        out
    };
    let (x, y) = (padded(x), padded(y));
    let mut dims = broadcast_dims(meta, &x, &y).ok()?;
    let first_known = dims.iter().position(|d| !meta.env().has_anonymous(d))?;
    dims.drain(..first_known);
    let Shape::Var(v) = meta.fresh_rank_var_like(like) else {
        return None;
    };
    Some(with_suffix(v, dims))
}

/// `x @ w` where `x` is `[*, n, k]` and `w` a known matrix, or both share
/// their batch dims (`q @ k.transpose(-2, -1)`).
pub(crate) fn matmul(
    meta: &mut dyn Meta,
    a: &Rc<Tensor>,
    b: &Rc<Tensor>,
    range: TextRange,
) -> Option<Shape> {
    let (sa, sb) = (meta.resolve_shape(&a.shape), meta.resolve_shape(&b.shape));
    let (inner_a, inner_b, shape) = match (&sa, &sb) {
        (Shape::Tail(v, x), Shape::Known(w)) if !x.is_empty() && w.len() == 2 => {
            let mut s = x.as_ref().clone();
            let k = s.pop()?;
            s.push(w[1].clone());
            (k, w[0].clone(), with_suffix(*v, s))
        }
        (Shape::Tail(v, x), Shape::Tail(u, y)) if v == u && x.len() >= 2 && x.len() == y.len() => {
            let n = x.len();
            let batch = broadcast_dims(meta, &x[..n - 2], &y[..n - 2]).ok()?;
            let mut s = batch;
            s.push(x[n - 2].clone());
            s.push(y[n - 1].clone());
            (x[n - 1].clone(), y[n - 2].clone(), with_suffix(*v, s))
        }
        _ => return None,
    };
    if meta.env().known_different(&inner_a, &inner_b) {
        let message = format!(
            "mat1 and mat2 shapes cannot be multiplied (?x{} and {}x?)",
            meta.fmt_dim(&inner_a),
            meta.fmt_dim(&inner_b)
        );
        meta.report(range, Code::MatmulShape, message);
        return None;
    }
    let _ = meta.require_equal(&inner_a, &inner_b);
    Some(shape)
}

/// What `demand_trailing` found: the rank variable and the known trailing
/// dims, or the dims found when one is known to differ from what is wanted.
pub(crate) type Trailing = Result<(u32, Vec<Dim>), Vec<Dim>>;

/// The trailing dims a layer needs of an input of unknown rank: `[*, in]`
/// for `nn.Linear`, `normalized_shape` for `LayerNorm`. Returns the input's
/// shape with those dims, checked against `want`; `Err` carries the dims
/// found when one is known to differ.
pub(crate) fn demand_trailing(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    want: &[Dim],
) -> Option<Trailing> {
    let shape = meta.demand_suffix(&x.shape, want.len());
    let (var, suffix) = shape.tail()?;
    let suffix = suffix.to_vec();
    let tail = &suffix[suffix.len() - want.len()..];
    if tail
        .iter()
        .zip(want)
        .any(|(a, b)| meta.env().known_different(a, b))
    {
        return Some(Err(suffix));
    }
    for (a, b) in tail.to_vec().iter().zip(want) {
        let _ = meta.require_equal(a, b);
    }
    let suffix = suffix.iter().map(|d| meta.env().resolve(d)).collect();
    Some(Ok((var, suffix)))
}

pub(crate) fn suffix_shape(var: u32, suffix: Vec<Dim>) -> Shape {
    with_suffix(var, suffix)
}
