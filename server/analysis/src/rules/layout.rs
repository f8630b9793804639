//! Memory layout: which tensors are transposed, expanded or sliced views, and when `view` fails.
//!
//! A tensor made by `transpose`/`permute`/`.T`/`.mT` shares its input's
//! memory with the dims reordered; pointwise ops keep that order (spec
//! §5.0). `expand` repeats memory (a stride of 0) and a slice skips some
//! (`x[:, :3]`). `view` then works only when the new shape can be made of
//! consecutive runs of dims that are also consecutive in memory — the
//! classic `y.transpose(1, 2).view(B, T, C)` without `.contiguous()`.
//! A layout is the list of logical dims from outermost to innermost in
//! memory, or, for an expanded or sliced view of known sizes, the strides
//! themselves; `None` means contiguous or unknown, and never causes an
//! error.

use std::rc::Rc;

use super::Args;
use super::shape::wrap_dim;
pub(crate) use crate::value::Layout;
use crate::value::{Tensor, Value};

/// The strides of a tensor of `sizes` laid out as `layout` (contiguous
/// without one), in elements.
pub(crate) fn strides_of(sizes: &[i64], layout: Option<&Layout>) -> Option<Vec<i64>> {
    let rank = sizes.len();
    let identity: Vec<usize> = (0..rank).collect();
    let order = match layout {
        None => &identity,
        Some(Layout::Order(order)) if order.len() == rank => order,
        Some(Layout::Strides(strides)) if strides.len() == rank => return Some(strides.clone()),
        Some(_) => return None,
    };
    let mut stride = vec![0i64; rank];
    let mut acc: i64 = 1;
    for &d in order.iter().rev() {
        *stride.get_mut(d)? = acc;
        acc = acc.checked_mul(sizes[d])?;
    }
    Some(stride)
}

/// The layout `strides` stand for: `None` when they are a contiguous
/// tensor's.
pub(crate) fn from_strides(sizes: &[i64], strides: Vec<i64>) -> Option<Rc<Layout>> {
    if strides_of(sizes, None).as_ref() == Some(&strides) {
        return None;
    }
    Some(Rc::new(Layout::Strides(strides)))
}

/// The layout of `expand`'s view: a new leading dim, or a dim of 1 grown,
/// repeats memory (stride 0); the other dims keep theirs.
pub(crate) fn expanded(
    in_sizes: &[i64],
    in_layout: Option<&Layout>,
    out_sizes: &[i64],
) -> Option<Rc<Layout>> {
    let in_strides = strides_of(in_sizes, in_layout)?;
    let lead = out_sizes.len().checked_sub(in_sizes.len())?;
    let strides: Vec<i64> = (0..out_sizes.len())
        .map(|i| {
            let grown = i < lead || (in_sizes[i - lead] == 1 && out_sizes[i] != 1);
            if grown { 0 } else { in_strides[i - lead] }
        })
        .collect();
    from_strides(out_sizes, strides)
}

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
pub(crate) fn permuted(input: Option<&Layout>, p: &[usize]) -> Option<Rc<Layout>> {
    let rank = p.len();
    let identity: Vec<usize> = (0..rank).collect();
    let input = match input {
        // A strided view's dims take their strides along.
        Some(Layout::Strides(strides)) if strides.len() == rank => {
            let strides = p
                .iter()
                .map(|&d| strides.get(d).copied())
                .collect::<Option<Vec<i64>>>()?;
            return Some(Rc::new(Layout::Strides(strides)));
        }
        Some(Layout::Order(order)) if order.len() == rank => order,
        _ => &identity,
    };
    // Input dim `d` becomes output dim `inverse[d]`.
    let mut inverse = vec![0; rank];
    for (i, &d) in p.iter().enumerate() {
        *inverse.get_mut(d)? = i;
    }
    let layout: Vec<usize> = input.iter().map(|&d| inverse[d]).collect();
    if layout == identity {
        None
    } else {
        Some(Rc::new(Layout::Order(layout)))
    }
}

/// Whether `view(new)` works on a tensor of sizes `sizes` laid out as
/// `layout` (torch's `computeStride`). `None` when it cannot be decided.
pub(crate) fn view_compatible(sizes: &[i64], layout: &Layout, new: &[i64]) -> Option<bool> {
    let rank = sizes.len();
    if sizes.contains(&0) {
        return None;
    }
    if let Layout::Order(order) = layout {
        let mut seen = vec![false; rank];
        for &d in order {
            *seen.get_mut(d)? = true;
        }
        if order.len() != rank || seen.contains(&false) {
            return None;
        }
    }
    let stride = strides_of(sizes, Some(layout))?;
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
pub(crate) fn with_layout(v: Value, layout: Option<Rc<Layout>>) -> Value {
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

    fn order(o: &[usize]) -> Layout {
        Layout::Order(o.to_vec())
    }

    #[test]
    fn transposed_views_follow_torch() {
        // x = [2, 3, 4].transpose(0, 1) -> sizes [3, 2, 4], layout [1, 0, 2]
        let layout = order(&[1, 0, 2]);
        assert_eq!(view_compatible(&[3, 2, 4], &layout, &[3, 8]), Some(false));
        assert_eq!(
            view_compatible(&[3, 2, 4], &layout, &[3, 2, 2, 2]),
            Some(true)
        );
        // [2, 3, 4].permute(2, 0, 1) -> [4, 2, 3], layout [1, 2, 0]: view(4, 6) works.
        assert_eq!(
            view_compatible(&[4, 2, 3], &order(&[1, 2, 0]), &[4, 6]),
            Some(true)
        );
        // y.transpose(1, 2).view(B, T, C) on y = [B, nh, T, hs]
        assert_eq!(
            view_compatible(&[2, 5, 4, 8], &order(&[0, 2, 1, 3]), &[2, 5, 32]),
            Some(false)
        );
        // A size-1 dim moved around changes nothing.
        assert_eq!(
            view_compatible(&[2, 1, 5], &order(&[0, 2, 1]), &[10]),
            Some(true)
        );
    }

    #[test]
    fn expanded_and_sliced_views_follow_torch() {
        // torch.randn(3, 1).expand(3, 4): strides [1, 0]; view(12) fails,
        // view(3, 2, 2) splits a dim and works.
        let grown = expanded(&[3, 1], None, &[3, 4]).unwrap();
        assert_eq!(*grown, Layout::Strides(vec![1, 0]));
        assert_eq!(view_compatible(&[3, 4], &grown, &[12]), Some(false));
        assert_eq!(view_compatible(&[3, 4], &grown, &[3, 2, 2]), Some(true));
        // An expand that grows nothing is the tensor itself.
        assert_eq!(expanded(&[3, 4], None, &[3, 4]), None);
        // torch.randn(4, 6)[:, :3]: strides [6, 1]; view(12) fails.
        let sliced = Layout::Strides(vec![6, 1]);
        assert_eq!(view_compatible(&[4, 3], &sliced, &[12]), Some(false));
        assert_eq!(view_compatible(&[4, 3], &sliced, &[4, 3, 1]), Some(true));
        // Its transpose keeps the strides with the dims.
        assert_eq!(
            permuted(Some(&sliced), &[1, 0]).as_deref(),
            Some(&Layout::Strides(vec![1, 6]))
        );
    }
}
