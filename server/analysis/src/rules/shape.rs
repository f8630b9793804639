//! Shape helpers shared by the rules: dims, dim wrapping, broadcasting, numel.

use shapels_shapes::{Dim, Unified};

use crate::interp::Interp;
use crate::value::{Shape, Tensor, Value};

impl Interp<'_> {
    /// The tensor's dims, resolved, when its rank is known.
    pub(crate) fn dims(&self, t: &Tensor) -> Option<Vec<Dim>> {
        match self.resolve_shape(&t.shape) {
            Shape::Known(d) => Some(d.iter().map(|x| self.env.resolve(x)).collect()),
            Shape::Var(_) | Shape::Tail(..) => None,
        }
    }

    /// The number of dims, when known, without resolving them.
    pub(crate) fn rank(&self, t: &Tensor) -> Option<usize> {
        self.resolve_shape(&t.shape).dims().map(<[Dim]>::len)
    }

    /// Sizes from values (ints, symbols, opaque names); an unknown value is an unknown size.
    pub(crate) fn size_dims(&mut self, values: &[Value]) -> Vec<Dim> {
        values
            .iter()
            .map(|v| match self.as_dim(v) {
                Some(d) => d,
                None => self.env.anonymous(),
            })
            .collect()
    }

    /// The product of the dims, or an unknown size when it overflows
    /// `i64` (no tensor has that many elements: torch's storage size check
    /// fails first), so that no element count is checked against it.
    pub(crate) fn numel_or_unknown(&mut self, dims: &[Dim]) -> Dim {
        let total = numel(dims);
        if total.overflowed() {
            self.env.anonymous()
        } else {
            total
        }
    }

    /// `[8, 128]` for messages, with symbols by name.
    pub(crate) fn fmt_dims(&self, dims: &[Dim]) -> String {
        let parts: Vec<String> = dims.iter().map(|d| self.env.display(d)).collect();
        format!("[{}]", parts.join(", "))
    }

    /// Sizes as a Python tuple, as torch prints an `IntArrayRef` argument:
    /// `(21, 19)`, `(23,)`.
    pub(crate) fn fmt_tuple(&self, dims: &[Dim]) -> String {
        let parts: Vec<String> = dims.iter().map(|d| self.env.display(d)).collect();
        match parts.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", parts.join(", ")),
        }
    }

    pub(crate) fn fmt_dim(&self, d: &Dim) -> String {
        self.env.display(d)
    }

    /// Whether two sizes may be equal; `false` only when known to differ.
    /// When they may be, the equality is recorded (unifying symbols).
    pub(crate) fn require_equal(&mut self, a: &Dim, b: &Dim) -> bool {
        !matches!(self.env.unify(a, b), Unified::Contradiction)
    }

    /// Whether the size is known to be 1.
    pub(crate) fn is_one(&self, d: &Dim) -> bool {
        self.env.value(d) == Some(1)
    }
}

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

/// Broadcast two shapes, torch's way. `Err` carries the eager message.
pub(crate) fn broadcast(interp: &mut Interp<'_>, a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, String> {
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
            (Some(x), Some(y)) => broadcast_dim(interp, x, y).ok_or_else(|| {
                format!(
                    "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {i}",
                    interp.fmt_dim(x),
                    interp.fmt_dim(y)
                )
            })?,
            (None, None) => Dim::konst(1),
        };
        out[i] = d;
    }
    Ok(out)
}

/// One broadcast position; `None` when the sizes are known to clash.
fn broadcast_dim(interp: &mut Interp<'_>, x: &Dim, y: &Dim) -> Option<Dim> {
    if interp.env.known_equal(x, y) {
        return Some(x.clone());
    }
    if interp.is_one(x) {
        return Some(y.clone());
    }
    if interp.is_one(y) {
        return Some(x.clone());
    }
    match (interp.env.value(x), interp.env.value(y)) {
        (Some(_), Some(_)) => None,
        // An unknown size against a known one: either it is 1 or it is
        // equal, and the result is the known one either way.
        (Some(_), None) if interp.env.has_anonymous(y) => Some(x.clone()),
        (None, Some(_)) if interp.env.has_anonymous(x) => Some(y.clone()),
        _ => {
            if interp.env.has_anonymous(x) && interp.env.has_anonymous(y) {
                return Some(interp.env.anonymous());
            }
            if interp.env.has_anonymous(x) {
                return Some(y.clone());
            }
            if interp.env.has_anonymous(y) {
                return Some(x.clone());
            }
            // Two named sizes, neither 1: torch's ShapeEnv assumes them equal.
            if interp.env.known_different(x, y) {
                return None;
            }
            let _ = interp.env.unify(x, y);
            Some(interp.env.resolve(x))
        }
    }
}

/// The product of the dims.
pub(crate) fn numel(dims: &[Dim]) -> Dim {
    dims.iter().fold(Dim::konst(1), |acc, d| acc.mul(d))
}
