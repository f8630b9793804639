//! Diagonals and functions of square matrices: `diag`, `diagonal`, `diag_embed`, `trace`, `inverse`, `matrix_exp`, `det`, `slogdet`, `tensorinv`.

use shapels_shapes::Dim;

use super::OpCall;
use crate::code::Code;
use crate::rules::check::{RuleResult, check, raise};
use crate::rules::meta::Meta;
use crate::rules::shape::wrap_dim;
use crate::value::{DType, Value};

/// `diag_embed`.
pub(super) fn diag_embed(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    // The result has one dim more; its default diagonal dims are the last
    // two, which a 0-dim input's result does not have.
    if dims.is_empty()
        && call.args.get(2, "dim1").is_none()
        && let Err(message) = wrap_dim(-2, 1)
    {
        return raise(Code::DimOutOfRange, message);
    }
    let mut shape = dims.clone();
    if let Some(last) = shape.last().cloned() {
        shape.push(last);
    }
    Ok(call.output(meta, shape, x.dtype))
}

/// `diag`.
pub(super) fn diag(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    let rank = dims.len();
    match rank {
        1 => Ok(call.output(meta, vec![dims[0].clone(), dims[0].clone()], x.dtype)),
        2 => Ok(call.output(meta, vec![dims[0].minimum(&dims[1])], x.dtype)),
        _ => Ok(Value::Unknown),
    }
}

/// `diagonal`.
pub(super) fn diagonal(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let rank = dims.len();
    if rank == 0 {
        return Ok(Value::Unknown);
    }
    // `linalg.diagonal` takes its settings by keyword only, and defaults
    // to the last two dims.
    let (positions, defaults) = if call.name == "linalg_diagonal" {
        ([usize::MAX; 3], (-2, -1))
    } else {
        ([1, 2, 3], (0, 1))
    };
    // A vector's second default dim is out of range: torch says so.
    let a = call.dim_arg(meta, positions[1], "dim1", Some(defaults.0))?;
    let b = call.dim_arg(meta, positions[2], "dim2", Some(defaults.1))?;
    if rank < 2 {
        return Ok(Value::Unknown);
    }
    // An offset the analysis cannot read leaves the diagonal's length
    // unknown, not the main diagonal's.
    let offset = args.int_or(positions[0], "offset", 0);
    let n = if offset == Some(0) {
        dims[a].minimum(&dims[b])
    } else {
        match (
            meta.env().value(&dims[a]),
            meta.env().value(&dims[b]),
            offset,
        ) {
            (Some(r), Some(c), Some(offset)) => {
                let n = if offset > 0 {
                    r.min(c - offset)
                } else {
                    (r + offset).min(c)
                };
                Dim::konst(n.max(0))
            }
            _ => meta.env_mut().anonymous(),
        }
    };
    Ok(call.output(meta, diagonal_dims(dims, a, b, n), x.dtype))
}

/// The dims of a diagonal taken over dims `a` and `b`: the others, then
/// the diagonal's length `n`.
pub(crate) fn diagonal_dims(dims: &[Dim], a: usize, b: usize, n: Dim) -> Vec<Dim> {
    let mut shape: Vec<Dim> = dims
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != a && *i != b)
        .map(|(_, d)| d.clone())
        .collect();
    shape.push(n);
    shape
}

/// `trace`.
pub(super) fn trace(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    let rank = dims.len();
    if rank != 2 {
        let message = format!("trace: expected a matrix, but got tensor with dim {rank}");
        meta.report(call.range, Code::DimOutOfRange, message);
        Ok(Value::Unknown)
    } else {
        Ok(call.output(meta, Vec::new(), x.dtype))
    }
}

/// The checks torch's linear algebra makes of an op on square matrices
/// (batches of them): at least 2 dims, and the last two of one size.
/// `Err` carries torch's message, named as torch names the op.
pub(super) fn check_square(meta: &dyn Meta, name: &str, dims: &[Dim]) -> Result<(), String> {
    let shown = match name {
        "inverse" | "linalg_inv" | "linalg_inv_ex" => "linalg.inv",
        "matrix_exp" | "linalg_matrix_exp" => "linalg.matrix_exp",
        "det" | "linalg_det" => "linalg.det",
        "slogdet" | "linalg_slogdet" => "linalg.slogdet",
        other => other,
    };
    let rank = dims.len();
    if rank < 2 {
        return Err(format!(
            "{shown}: The input tensor A must have at least 2 dimensions."
        ));
    }
    let (m, n) = (&dims[rank - 2], &dims[rank - 1]);
    if meta.env().known_different(m, n) {
        return Err(format!(
            "{shown}: A must be batches of square matrices, but they are {} by {} matrices",
            meta.fmt_dim(m),
            meta.fmt_dim(n)
        ));
    }
    Ok(())
}

/// `inverse`, `linalg_inv`, `matrix_exp`: a square matrix of the same shape.
pub(super) fn square(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    if let Err(message) = check_square(meta, call.name, dims) {
        return raise(Code::MatmulShape, message);
    }
    let shape = dims.clone();
    if call.name == "linalg_inv_ex" {
        // The inverse and an int32 status per matrix.
        let batch = dims[..dims.len() - 2].to_vec();
        let inverse = call.output(meta, shape, x.dtype);
        let info = call.output(meta, batch, Some(DType::Int32));
        return Ok(Value::tuple(vec![inverse, info]));
    }
    Ok(call.output(meta, shape, x.dtype))
}

/// `linalg.tensorinv(a, ind=2)`: the inverse of `a` read as a square
/// matrix of its first `ind` dims by the rest, shaped as the rest and then
/// the first `ind`.
pub(super) fn tensorinv(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    let ind = match call.args.get(1, "ind") {
        None => 2,
        Some(Value::Int(d)) => match d.as_const() {
            Some(ind) => ind,
            None => return Ok(Value::Unknown),
        },
        Some(_) => return Ok(Value::Unknown),
    };
    check!(
        ind > 0,
        Code::DimOutOfRange,
        "Expected a strictly positive integer for 'ind', but got {ind}"
    );
    let ind = ind as usize;
    check!(
        ind <= dims.len(),
        Code::DimOutOfRange,
        "ArrayRef: invalid slice, N = {ind}; size = {}",
        dims.len()
    );
    let (rows, columns) = dims.split_at(ind);
    let (rows_numel, columns_numel) = (
        crate::rules::shape::numel(rows),
        crate::rules::shape::numel(columns),
    );
    if meta.env().known_different(&columns_numel, &rows_numel) {
        let message = format!(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {} != {}",
            meta.fmt_dim(&columns_numel),
            meta.fmt_dim(&rows_numel)
        );
        return raise(Code::MatmulShape, message);
    }
    let mut shape = columns.to_vec();
    shape.extend_from_slice(rows);
    Ok(call.output(meta, shape, x.dtype))
}

/// `det`, `linalg_det`, `logdet`, and `slogdet` (the sign and the log of
/// the absolute value): one value per matrix.
pub(super) fn determinant(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (x, dims) = (&call.x, &call.dims);
    if let Err(message) = check_square(meta, call.name, dims) {
        return raise(Code::MatmulShape, message);
    }
    let batch = dims[..dims.len() - 2].to_vec();
    if call.name.ends_with("slogdet") {
        let sign = call.output(meta, batch.clone(), x.dtype);
        let logabsdet = call.output(meta, batch, x.dtype);
        return Ok(Value::tuple(vec![sign, logabsdet]));
    }
    Ok(call.output(meta, batch, x.dtype))
}
