//! Shape helpers shared by the rules: dim wrapping, broadcasting, numel.

use shapels_shapes::Dim;

use crate::rules::meta::Meta;
use crate::value::Tensor;

/// Wrap a possibly negative dim index for a tensor of `rank` dims.
pub(crate) fn wrap_dim(d: i64, rank: usize) -> Result<usize, String> {
    let m = rank.max(1) as i64;
    if d < -m || d >= m {
        return Err(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
            -m,
            m - 1
        ));
    }
    Ok(if d < 0 { (d + m) as usize } else { d as usize })
}

/// The shape `start` and each of `tensors` broadcast to, in order; `Err`
/// carries torch's message for the first pair that does not, `Ok(None)`
/// means a tensor's shape is not known.
pub(crate) fn broadcast_all<'t>(
    meta: &mut dyn Meta,
    start: Vec<Dim>,
    tensors: impl IntoIterator<Item = &'t Tensor>,
) -> Result<Option<Vec<Dim>>, String> {
    let mut shape = start;
    for t in tensors {
        let Some(d) = meta.dims(t) else {
            return Ok(None);
        };
        shape = broadcast(meta, &shape, &d)?;
    }
    Ok(Some(shape))
}

/// Broadcast two shapes, torch's way. `Err` carries the eager message.
pub(crate) fn broadcast(meta: &mut dyn Meta, a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, String> {
    let n = a.len().max(b.len());
    let mut out = vec![Dim::konst(1); n];
    // Torch's `infer_size` walks from the last dim: the clash it names is
    // the last one.
    for i in (0..n).rev() {
        let da = if i + a.len() >= n {
            Some(&a[i + a.len() - n])
        } else {
            None
        };
        let db = if i + b.len() >= n {
            Some(&b[i + b.len() - n])
        } else {
            None
        };
        let d = match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) => broadcast_dim(meta, x, y).ok_or_else(|| {
                format!(
                    "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {i}",
                    meta.fmt_dim(x),
                    meta.fmt_dim(y)
                )
            })?,
            (None, None) => Dim::konst(1),
        };
        out[i] = d;
    }
    Ok(out)
}

/// One broadcast position; `None` when the sizes are known to clash.
fn broadcast_dim(meta: &mut dyn Meta, x: &Dim, y: &Dim) -> Option<Dim> {
    if meta.env().known_equal(x, y) {
        return Some(x.clone());
    }
    if meta.is_one(x) {
        return Some(y.clone());
    }
    if meta.is_one(y) {
        return Some(x.clone());
    }
    match (meta.env().value(x), meta.env().value(y)) {
        (Some(_), Some(_)) => None,
        // An unknown size against a known one: either it is 1 or it is
        // equal, and the result is the known one either way.
        (Some(_), None) if meta.env().has_anonymous(y) => Some(x.clone()),
        (None, Some(_)) if meta.env().has_anonymous(x) => Some(y.clone()),
        _ => {
            if meta.env().has_anonymous(x) && meta.env().has_anonymous(y) {
                return Some(meta.env_mut().anonymous());
            }
            if meta.env().has_anonymous(x) {
                return Some(y.clone());
            }
            if meta.env().has_anonymous(y) {
                return Some(x.clone());
            }
            // Two named sizes, neither 1: torch's ShapeEnv assumes them equal.
            if meta.env().known_different(x, y) {
                return None;
            }
            let _ = meta.env_mut().unify(x, y);
            // Where one side is a plain name and the other a formula for the
            // same size (`h` and `p*(h // p)` after a patch embedding and
            // back), the result is written the plain way.
            let (x, y) = (meta.env().resolve(x), meta.env().resolve(y));
            Some(if x.as_sym().is_none() && y.as_sym().is_some() {
                y
            } else {
                x
            })
        }
    }
}

/// The product of the dims.
pub(crate) fn numel(dims: &[Dim]) -> Dim {
    dims.iter().fold(Dim::konst(1), |acc, d| acc.mul(d))
}

/// Size `i` of a tensor of unknown rank whose shape is the rank variable
/// `var`'s dims then `known` ones: one of those, or the variable's own
/// size at that index (`x.size(-1)` and `x.shape[-1]` alike), or a size
/// nobody can place (a first size before known last ones).
pub(crate) fn unknown_rank_size(meta: &mut dyn Meta, var: u32, known: &[Dim], i: i64) -> Dim {
    let n = known.len() as i64;
    match i {
        i if i < 0 && -i <= n => known[(n + i) as usize].clone(),
        i if i < 0 => meta.var_dim(var, i + n),
        i if n == 0 => meta.var_dim(var, i),
        _ => meta.env_mut().anonymous(),
    }
}

/// The size a sibling variable's changes give dim `index` (see
/// `Interp::sibling_shape`), if they change it.
pub(crate) fn changed_at(changes: &[(usize, Dim)], index: usize) -> Option<Dim> {
    changes
        .iter()
        .find(|(i, _)| *i == index)
        .map(|(_, d)| d.clone())
}

/// The dims either of two sibling variables changes, in order, each once.
pub(crate) fn changed_indices(a: &[(usize, Dim)], b: &[(usize, Dim)]) -> Vec<usize> {
    let mut indices: Vec<usize> = a.iter().chain(b).map(|(i, _)| *i).collect();
    indices.sort_unstable();
    indices.dedup();
    indices
}

/// Dim `index` of a tensor of unknown rank, read for an op on its first
/// dims (`x[:, 1:]`, `torch.cat(..., dim=1)`): the first size is the
/// batch, named as `x.size(0)` names it; the others are nobody's until
/// the code reads them.
pub(crate) fn first_dim_size(meta: &mut dyn Meta, var: u32, index: usize) -> Dim {
    if index == 0 {
        meta.var_dim(var, 0)
    } else {
        meta.var_dim_unnamed(var, index as i64)
    }
}
