//! Systems of linear equations and the LU factorization: `linalg.solve`, `linalg.solve_triangular`, `linalg.lstsq`, `linalg.lu_factor`, `linalg.lu`.

use std::rc::Rc;

use shapels_shapes::Dim;

use super::OpCall;
use super::matrices::check_square;
use crate::code::Code;
use crate::rules::check::{RuleResult, ShapeError, check, raise};
use crate::rules::dtype::torch_name;
use crate::rules::meta::Meta;
use crate::rules::shape::broadcast;
use crate::value::{DType, Tensor, Value};

/// The right-hand side `B` of a solver and its dims, when both are known.
fn right_hand_side(meta: &mut dyn Meta, call: &OpCall<'_>) -> Option<(Rc<Tensor>, Vec<Dim>)> {
    let b = call.args.tensor(1, "B").or(call.args.tensor(1, "other"))?;
    let dims = meta.dims(&b)?;
    Some((b, dims))
}

/// `linalg.solve(A, B, *, left=True)` and `linalg.solve_triangular(A, B,
/// *, upper, left=True)`: `X` with `AX = B` (or `XA = B`), shaped as `B`
/// over the batch dims of both broadcast. `linalg.solve` also takes a `B`
/// of one dim less than `A` (a batch of vectors).
pub(super) fn solve(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let shown = if call.name == "linalg_solve" {
        "linalg.solve"
    } else {
        "linalg.solve_triangular"
    };
    let a = &call.dims;
    let Some((b, bd)) = right_hand_side(meta, &call) else {
        return Ok(Value::Unknown);
    };
    let Some(left) = call.args.flag(usize::MAX, "left", true) else {
        return Ok(Value::Unknown);
    };
    // `linalg.solve` checks the dtypes before anything else.
    if shown == "linalg.solve"
        && let (Some(da), Some(db)) = (call.x.dtype, b.dtype)
    {
        check!(
            da.is_floating() || da.is_complex(),
            Code::DtypeMismatch,
            "linalg.solve: Expected a floating point or complex tensor as input. Got {}",
            torch_name(da)
        );
        check!(
            da == db,
            Code::DtypeMismatch,
            "linalg.solve: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
            torch_name(da),
            torch_name(db)
        );
    }
    // A vector right-hand side: one dim, or `A`'s dims but the last.
    let vector = shown == "linalg.solve"
        && (bd.len() == 1
            || (a.len() == bd.len() + 1
                && a[..a.len() - 1]
                    .iter()
                    .zip(&bd)
                    .all(|(x, y)| meta.env().known_equal(x, y))));
    let mut b2 = bd.clone();
    if vector {
        b2.push(Dim::konst(1));
    }
    if let Err(message) = check_square(meta, shown, a) {
        return raise(Code::MatmulShape, message);
    }
    check!(
        b2.len() >= 2,
        Code::MatmulShape,
        "{shown}: The input tensor B must have at least 2 dimensions."
    );
    let (n, m) = (&a[a.len() - 2], &a[a.len() - 1]);
    let (rows, columns) = (&b2[b2.len() - 2], &b2[b2.len() - 1]);
    let clash = if left {
        meta.env().known_different(n, rows)
    } else {
        meta.env().known_different(m, columns)
    };
    if clash {
        let message = format!(
            "{shown}: Incompatible shapes of A and B for the equation {} ({}x{} and {}x{})",
            if left { "AX = B" } else { "XA = B" },
            meta.fmt_dim(n),
            meta.fmt_dim(m),
            meta.fmt_dim(rows),
            meta.fmt_dim(columns)
        );
        return raise(Code::MatmulShape, message);
    }
    let batch = broadcast(meta, &b2[..b2.len() - 2], &a[..a.len() - 2])
        .map_err(|message| ShapeError::new(Code::BroadcastShape, message))?;
    let mut shape = batch;
    shape.push(rows.clone());
    if !vector {
        shape.push(columns.clone());
    }
    let dtype = call.x.dtype.filter(|d| Some(*d) == b.dtype);
    Ok(call.output(meta, shape, dtype))
}

/// `linalg.lstsq(A, B)`: the least-squares solution (`n x k` for an `m x
/// n` `A` and an `m x k` `B`, or `n` for a vector `B`), then the
/// residuals, the rank and the singular values, which depend on the driver
/// and the device and are left unknown.
pub(super) fn lstsq(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let a = &call.dims;
    let Some((b, bd)) = right_hand_side(meta, &call) else {
        return Ok(Value::Unknown);
    };
    check!(
        a.len() >= 2,
        Code::MatmulShape,
        "torch.linalg.lstsq: input must have at least 2 dimensions."
    );
    check!(
        !bd.is_empty(),
        Code::MatmulShape,
        "torch.linalg.lstsq: other must have at least 1 dimension."
    );
    if let (Some(da), Some(db)) = (call.x.dtype, b.dtype) {
        check!(
            da == db,
            Code::DtypeMismatch,
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype {} and other's dtype {}",
            torch_name(da),
            torch_name(db)
        );
    }
    check!(
        a.len() == bd.len() || a.len() == bd.len() + 1,
        Code::MatmulShape,
        "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1"
    );
    let vector = a.len() == bd.len() + 1;
    let mut b2 = bd.clone();
    if vector {
        b2.push(Dim::konst(1));
    }
    let (m, n) = (&a[a.len() - 2], &a[a.len() - 1]);
    if meta.env().known_different(m, &b2[b2.len() - 2]) {
        let which = if vector {
            "other.size(-1)"
        } else {
            "other.size(-2)"
        };
        return raise(
            Code::MatmulShape,
            format!("torch.linalg.lstsq: input.size(-2) should match {which}"),
        );
    }
    let batch = broadcast(meta, &a[..a.len() - 2], &b2[..b2.len() - 2])
        .map_err(|message| ShapeError::new(Code::BroadcastShape, message))?;
    let mut shape = batch;
    shape.push(n.clone());
    if !vector {
        shape.push(b2[b2.len() - 1].clone());
    }
    let solution = call.output(meta, shape, call.x.dtype);
    Ok(Value::tuple(vec![
        solution,
        Value::Unknown,
        Value::Unknown,
        Value::Unknown,
    ]))
}

/// `linalg.lu_factor(A)` (`LU` and the int32 pivots, `min(m, n)` per
/// matrix), `linalg.lu_factor_ex(A)` (and an int32 status per matrix) and
/// `linalg.lu(A)` (`P`, `L` and `U`).
pub(super) fn lu(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let a = &call.dims;
    let shown = if call.name == "linalg_lu" {
        "linalg.lu"
    } else {
        "torch.lu_factor"
    };
    check!(
        a.len() >= 2,
        Code::MatmulShape,
        "{shown}: Expected tensor with 2 or more dimensions. Got size: {} instead",
        meta.fmt_dims(a)
    );
    let batch = &a[..a.len() - 2];
    let (m, n) = (&a[a.len() - 2], &a[a.len() - 1]);
    let k = m.minimum(n);
    let with = |tail: &[&Dim]| -> Vec<Dim> {
        batch
            .iter()
            .cloned()
            .chain(tail.iter().map(|d| (*d).clone()))
            .collect()
    };
    let dtype = call.x.dtype;
    if call.name == "linalg_lu" {
        let p = call.output(meta, with(&[m, m]), dtype);
        let l = call.output(meta, with(&[m, &k]), dtype);
        let u = call.output(meta, with(&[&k, n]), dtype);
        return Ok(Value::tuple(vec![p, l, u]));
    }
    let factors = call.output(meta, a.clone(), dtype);
    let pivots = call.output(meta, with(&[&k]), Some(DType::Int32));
    if call.name == "linalg_lu_factor_ex" {
        let info = call.output(meta, batch.to_vec(), Some(DType::Int32));
        return Ok(Value::tuple(vec![factors, pivots, info]));
    }
    Ok(Value::tuple(vec![factors, pivots]))
}
