//! Memory layout: which tensors are transposed views, and when `view` fails.
//!
//! A tensor made by `transpose`/`permute`/`.T`/`.mT` shares its input's
//! memory with the dims reordered; pointwise ops keep that order (spec
//! §5.0). `view` then works only when the new shape can be made of
//! consecutive runs of dims that are also consecutive in memory — the
//! classic `y.transpose(1, 2).view(B, T, C)` without `.contiguous()`.
//! A layout is the list of logical dims from outermost to innermost in
//! memory; `None` means contiguous or unknown, and never causes an error.

use std::rc::Rc;

use super::Args;
use super::shape::wrap_dim;
use crate::value::{Tensor, Value};

/// The dim permutation a reordering op applies: output dim `i` is input dim `p[i]`.
pub(crate) fn permutation(name: &str, args: &Args, rank: usize) -> Option<Vec<usize>> {
    let int = |v: Option<&Value>| match v {
        Some(Value::Int(d)) => d.as_const(),
        _ => None,
    };
    // A 0-d tensor accepts dims 0 and -1 (torch wraps them as for rank 1),
    // and reordering it changes nothing.
    if rank == 0 {
        return None;
    }
    let mut p: Vec<usize> = (0..rank).collect();
    match name {
        "transpose" | "swapaxes" | "swapdims" => {
            let a = wrap_dim(int(args.get(1, "dim0"))?, rank).ok()?;
            let b = wrap_dim(int(args.get(2, "dim1"))?, rank).ok()?;
            p.swap(a, b);
        }
        "t" | "__attr_T" => p.reverse(),
        "__attr_mT" if rank >= 2 => p.swap(rank - 1, rank - 2),
        "permute" => {
            let order = args.varargs(1);
            if order.len() != rank {
                return None;
            }
            p = order
                .iter()
                .map(|v| wrap_dim(int(Some(v))?, rank).ok())
                .collect::<Option<Vec<_>>>()?;
        }
        _ => return None,
    }
    Some(p)
}

/// The layout after reordering the dims of a tensor with layout `input`.
pub(crate) fn permuted(input: Option<&[usize]>, p: &[usize]) -> Option<Rc<Vec<usize>>> {
    let rank = p.len();
    let identity: Vec<usize> = (0..rank).collect();
    let input = input.filter(|l| l.len() == rank).unwrap_or(&identity);
    // Input dim `d` becomes output dim `inverse[d]`.
    let mut inverse = vec![0; rank];
    for (i, &d) in p.iter().enumerate() {
        *inverse.get_mut(d)? = i;
    }
    let layout: Vec<usize> = input.iter().map(|&d| inverse[d]).collect();
    if layout == identity {
        None
    } else {
        Some(Rc::new(layout))
    }
}

/// Whether `view(new)` works on a tensor of sizes `sizes` laid out as
/// `layout` (torch's `computeStride`). `None` when it cannot be decided.
pub(crate) fn view_compatible(sizes: &[i64], layout: &[usize], new: &[i64]) -> Option<bool> {
    let rank = sizes.len();
    if layout.len() != rank || sizes.contains(&0) {
        return None;
    }
    let mut seen = vec![false; rank];
    for &d in layout {
        *seen.get_mut(d)? = true;
    }
    if seen.contains(&false) {
        return None;
    }
    // Strides of a dense tensor stored in `layout` order.
    let mut stride = vec![0i64; rank];
    let mut acc: i64 = 1;
    for &d in layout.iter().rev() {
        stride[d] = acc;
        acc = acc.checked_mul(sizes[d])?;
    }
    if rank == 0 {
        return Some(true);
    }
    let mut view_d = new.len() as i64 - 1;
    let mut chunk_base_stride = stride[rank - 1];
    let mut tensor_numel: i64 = 1;
    let mut view_numel: i64 = 1;
    for tensor_d in (0..rank).rev() {
        tensor_numel = tensor_numel.checked_mul(sizes[tensor_d])?;
        let chunk_ends = tensor_d == 0
            || (sizes[tensor_d - 1] != 1
                && stride[tensor_d - 1] != tensor_numel.checked_mul(chunk_base_stride)?);
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new[view_d as usize] == 1) {
                view_numel = view_numel.checked_mul(new[view_d as usize])?;
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return Some(false);
            }
            if tensor_d > 0 {
                chunk_base_stride = stride[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    Some(view_d == -1)
}

/// The same tensor value with another layout.
pub(crate) fn with_layout(v: Value, layout: Option<Rc<Vec<usize>>>) -> Value {
    match v {
        Value::Tensor(t) if t.layout != layout => Value::Tensor(Rc::new(Tensor {
            layout,
            ..(*t).clone()
        })),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposed_views_follow_torch() {
        // x = [2, 3, 4].transpose(0, 1) -> sizes [3, 2, 4], layout [1, 0, 2]
        let layout = [1, 0, 2];
        assert_eq!(view_compatible(&[3, 2, 4], &layout, &[3, 8]), Some(false));
        assert_eq!(
            view_compatible(&[3, 2, 4], &layout, &[3, 2, 2, 2]),
            Some(true)
        );
        // [2, 3, 4].permute(2, 0, 1) -> [4, 2, 3], layout [1, 2, 0]: view(4, 6) works.
        assert_eq!(view_compatible(&[4, 2, 3], &[1, 2, 0], &[4, 6]), Some(true));
        // y.transpose(1, 2).view(B, T, C) on y = [B, nh, T, hs]
        assert_eq!(
            view_compatible(&[2, 5, 4, 8], &[0, 2, 1, 3], &[2, 5, 32]),
            Some(false)
        );
        // A size-1 dim moved around changes nothing.
        assert_eq!(view_compatible(&[2, 1, 5], &[0, 2, 1], &[10]), Some(true));
    }
}
