//! Matrix decompositions and the functions of a matrix built on them: `svd`, `qr`, `eig`, `eigh`, `cholesky`, `matrix_power`, `matrix_norm`, `pinv`, `matrix_rank`, `cond`.

use shapels_shapes::Dim;

use super::OpCall;
use super::complex::{complex_of, part_of};
use super::matrices::check_square;
use crate::code::Code;
use crate::rules::check::{RuleResult, ShapeError, check, raise};
use crate::rules::meta::Meta;
use crate::value::{DType, Value};

/// A batch of matrices: the batch dims, the rows and the columns.
struct Matrices {
    batch: Vec<Dim>,
    m: Dim,
    n: Dim,
}

/// The input as a batch of matrices, or torch's message (in the words of
/// the function `shown`) for an input of fewer than 2 dims.
fn matrices(call: &OpCall<'_>, shown: &str) -> Result<Matrices, String> {
    let rank = call.dims.len();
    if rank < 2 {
        return Err(format!(
            "{shown}: The input tensor A must have at least 2 dimensions."
        ));
    }
    Ok(Matrices {
        batch: call.dims[..rank - 2].to_vec(),
        m: call.dims[rank - 2].clone(),
        n: call.dims[rank - 1].clone(),
    })
}

/// The batch dims followed by `tail`.
fn batched(batch: &[Dim], tail: &[&Dim]) -> Vec<Dim> {
    batch
        .iter()
        .cloned()
        .chain(tail.iter().map(|d| (*d).clone()))
        .collect()
}

/// The real dtype of a possibly complex input (singular values, norms).
fn real(d: Option<DType>) -> Option<DType> {
    d.map(|d| part_of(d).unwrap_or(d))
}

/// `linalg.svd`, `svd`, `linalg.svdvals`: `U`, `S` and `Vh` (`V` for the
/// old `svd`), full or reduced to `k = min(m, n)`.
pub(super) fn svd(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let a = matrices(&call, "linalg.svd").map_err(|m| ShapeError::new(Code::MatmulShape, m))?;
    let k = a.m.minimum(&a.n);
    let dtype = call.x.dtype;
    let s = call.output(meta, batched(&a.batch, &[&k]), real(dtype));
    if call.name == "linalg_svdvals" {
        return Ok(s);
    }
    let (u, v) = if call.name == "svd" {
        // `torch.svd(A, some=True)`: `V`, not its transpose.
        if call.args.flag(1, "some", true) == Some(false) {
            (
                batched(&a.batch, &[&a.m, &a.m]),
                batched(&a.batch, &[&a.n, &a.n]),
            )
        } else {
            (
                batched(&a.batch, &[&a.m, &k]),
                batched(&a.batch, &[&a.n, &k]),
            )
        }
    } else if call.args.flag(1, "full_matrices", true) == Some(false) {
        (
            batched(&a.batch, &[&a.m, &k]),
            batched(&a.batch, &[&k, &a.n]),
        )
    } else {
        (
            batched(&a.batch, &[&a.m, &a.m]),
            batched(&a.batch, &[&a.n, &a.n]),
        )
    };
    let u = call.output(meta, u, dtype);
    let v = call.output(meta, v, dtype);
    Ok(Value::tuple(vec![u, s, v]))
}

/// `linalg.qr`: `Q` and `R`, reduced (`k = min(m, n)` columns of `Q`),
/// complete (`Q` square) or `R` alone (`Q` empty).
pub(super) fn qr(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let a = matrices(&call, "linalg.qr").map_err(|m| ShapeError::new(Code::MatmulShape, m))?;
    let k = a.m.minimum(&a.n);
    let mode = call.args.str(1, "mode");
    let (q, r) = match mode.as_deref() {
        None | Some("reduced") => (
            batched(&a.batch, &[&a.m, &k]),
            batched(&a.batch, &[&k, &a.n]),
        ),
        Some("complete") => (
            batched(&a.batch, &[&a.m, &a.m]),
            batched(&a.batch, &[&a.m, &a.n]),
        ),
        Some("r") => (vec![Dim::konst(0)], batched(&a.batch, &[&k, &a.n])),
        Some(_) => return Ok(Value::Unknown),
    };
    let dtype = call.x.dtype;
    let q = call.output(meta, q, dtype);
    let r = call.output(meta, r, dtype);
    Ok(Value::tuple(vec![q, r]))
}

/// `linalg.eig`, `linalg.eigvals` (complex), `linalg.eigh`,
/// `linalg.eigvalsh` (real eigenvalues): of square matrices.
pub(super) fn eig(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let shown = match call.name {
        "linalg_eig" => "linalg.eig",
        "linalg_eigvals" => "linalg.eigvals",
        _ => "linalg.eigh",
    };
    let a = matrices(&call, shown).map_err(|m| ShapeError::new(Code::MatmulShape, m))?;
    if let Err(message) = check_square(meta, shown, &call.dims) {
        return raise(Code::MatmulShape, message);
    }
    let hermitian = matches!(call.name, "linalg_eigh" | "linalg_eigvalsh");
    let (values_dtype, vectors_dtype) = if hermitian {
        (real(call.x.dtype), call.x.dtype)
    } else {
        let complex = call.x.dtype.and_then(|d| {
            if d.is_complex() {
                Some(d)
            } else {
                complex_of(d)
            }
        });
        (complex, complex)
    };
    let values = call.output(meta, batched(&a.batch, &[&a.n]), values_dtype);
    if matches!(call.name, "linalg_eigvals" | "linalg_eigvalsh") {
        return Ok(values);
    }
    let vectors = call.output(meta, batched(&a.batch, &[&a.n, &a.n]), vectors_dtype);
    Ok(Value::tuple(vec![values, vectors]))
}

/// `linalg.cholesky`, `cholesky`, `linalg.matrix_power`, `matrix_power`:
/// square matrices of the same shape.
pub(super) fn square_same(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let shown = if call.name.ends_with("cholesky") {
        "linalg.cholesky"
    } else {
        "linalg.matrix_power"
    };
    if let Err(message) = check_square(meta, shown, &call.dims) {
        return raise(Code::MatmulShape, message);
    }
    Ok(call.output(meta, call.dims.clone(), call.x.dtype))
}

/// `linalg.matrix_norm`, `linalg.cond`, `linalg.matrix_rank`: one number
/// per matrix (kept as `1 x 1` with `keepdim=True` for the norm).
pub(super) fn per_matrix(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let rank = call.dims.len();
    let message = match call.name {
        "linalg_cond" => "linalg.cond: The input tensor must have at least 2 dimensions.",
        "linalg_matrix_rank" => {
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        }
        _ => "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
    };
    check!(rank >= 2, Code::MatmulShape, "{message}");
    let batch = call.dims[..rank - 2].to_vec();
    match call.name {
        "linalg_matrix_rank" => Ok(call.output(meta, batch, Some(DType::Int64))),
        "linalg_cond" => Ok(call.output(meta, batch, real(call.x.dtype))),
        _ => {
            // Norms over other dims than the last two are left unknown.
            if !matches!(call.args.get(2, "dim"), None | Some(Value::None)) {
                return Ok(Value::Unknown);
            }
            let shape = if call.args.flag(3, "keepdim", false) == Some(true) {
                batched(&batch, &[&Dim::konst(1), &Dim::konst(1)])
            } else {
                batch
            };
            Ok(call.output(meta, shape, real(call.x.dtype)))
        }
    }
}

/// `linalg.pinv`, `pinverse`: the `n x m` pseudo-inverse of each matrix.
pub(super) fn pinv(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let rank = call.dims.len();
    if rank < 2 {
        let dtype = call
            .x
            .dtype
            .map_or("Float", crate::rules::dtype::torch_name);
        let message = format!(
            "linalg.pinv({dtype}{{{}}}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types",
            meta.fmt_dims(&call.dims)
        );
        return raise(Code::MatmulShape, message);
    }
    let mut shape = call.dims.clone();
    shape.swap(rank - 2, rank - 1);
    Ok(call.output(meta, shape, call.x.dtype))
}
