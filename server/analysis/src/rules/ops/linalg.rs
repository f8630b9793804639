//! Linear algebra: `matmul` and its relatives, `outer`, `addmm`, `addr`, `cross`, distances, `multi_dot`.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::output::{out_known, out_shape, out_var};
use super::{OpCall, give_rank};
use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, ShapeError, check, raise};
use crate::rules::dtype::promote;
use crate::rules::meta::Meta;
use crate::rules::shape::{broadcast, wrap_dim};
use crate::value::{DType, Device, Tensor, Value};

/// `matmul`, `mm`, `bmm`, `mv`, `dot`, `inner_vec`.
pub(super) fn matrix_product(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x) = (call.name, call.args, &call.x);
    // `torch.linalg.matmul` is `torch.matmul`.
    let name = if name == "linalg_matmul" {
        "matmul"
    } else {
        name
    };
    let other = args.get(1, "other").cloned().unwrap_or(Value::Unknown);
    Ok(matmul(meta, name, x, &other, args, call.device, call.range))
}

/// `cross`, `linalg.cross`: two batches of 3-vectors of one rank along
/// `dim` (the last for `linalg.cross`; for `cross` without one, the first
/// of size 3), their other dims broadcast.
pub(super) fn cross(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let dims = &call.dims;
    let Some((y, dy)) = second_operand(meta, &call, "other") else {
        return Ok(Value::Unknown);
    };
    check!(
        dims.len() == dy.len(),
        Code::MatmulShape,
        "linalg.cross: inputs must have the same number of dimensions."
    );
    let three = Dim::konst(3);
    let written = match call.args.get(2, "dim") {
        Some(Value::Int(d)) => d.as_const(),
        None | Some(Value::None) if call.name == "linalg_cross" => Some(-1),
        // The old `cross` takes the first dim both hold 3 in.
        None | Some(Value::None) => (0..dims.len())
            .find(|&i| {
                meta.env().known_equal(&dims[i], &three) && meta.env().known_equal(&dy[i], &three)
            })
            .map(|i| i as i64),
        _ => None,
    };
    let Some(written) = written else {
        return Ok(Value::Unknown);
    };
    let d = wrap_dim(written, dims.len())
        .map_err(|message| ShapeError::new(Code::DimOutOfRange, message))?;
    if meta.env().known_different(&dims[d], &three) || meta.env().known_different(&dy[d], &three) {
        let message = format!(
            "linalg.cross: inputs dimension {written} must have length 3. Got {} and {}",
            meta.fmt_dim(&dims[d]),
            meta.fmt_dim(&dy[d])
        );
        return raise(Code::MatmulShape, message);
    }
    let shape = broadcast(meta, dims, &dy)
        .map_err(|message| ShapeError::new(Code::BroadcastShape, message))?;
    let dtype = pair_dtype(&call, &y, dy.len());
    Ok(call.output(meta, shape, dtype))
}

/// `inner`: the last dims contract, the others of both follow in order.
pub(super) fn inner(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let dims = &call.dims;
    let Some((y, dy)) = second_operand(meta, &call, "other") else {
        return Ok(Value::Unknown);
    };
    let (Some(a), Some(b)) = (dims.last(), dy.last()) else {
        return Ok(Value::Unknown);
    };
    if meta.env().known_different(a, b) {
        let message = format!(
            "inner() the last dimension must match on both input tensors but got shapes {} and {}",
            meta.fmt_dims(dims),
            meta.fmt_dims(&dy)
        );
        return raise(Code::MatmulShape, message);
    }
    let mut shape = dims[..dims.len() - 1].to_vec();
    shape.extend(dy[..dy.len() - 1].iter().cloned());
    let dtype = pair_dtype(&call, &y, dy.len());
    Ok(call.output(meta, shape, dtype))
}

/// `vdot`: two vectors of one length give a 0-dim tensor.
pub(super) fn vdot(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let dims = &call.dims;
    let Some((y, dy)) = second_operand(meta, &call, "other") else {
        return Ok(Value::Unknown);
    };
    if dims.len() != 1 || dy.len() != 1 {
        let message = format!(
            "1D tensors expected, but got {}D and {}D tensors",
            dims.len(),
            dy.len()
        );
        return raise(Code::MatmulShape, message);
    }
    if !meta.env().known_equal(&dims[0], &dy[0]) {
        return Ok(Value::Unknown);
    }
    let dtype = pair_dtype(&call, &y, 1);
    Ok(call.output(meta, Vec::new(), dtype))
}

/// The second tensor of a product of two (`other`, `vec2`) and its dims,
/// when both are known.
fn second_operand(
    meta: &mut dyn Meta,
    call: &OpCall<'_>,
    key: &str,
) -> Option<(Rc<Tensor>, Vec<Dim>)> {
    let y = call.args.tensor(1, key)?;
    let dy = meta.dims(&y)?;
    Some((y, dy))
}

/// The dtype the input and a second tensor of `rank` dims promote to.
fn pair_dtype(call: &OpCall<'_>, y: &Rc<Tensor>, rank: usize) -> Option<DType> {
    promote(&[
        (&Value::Tensor(call.x.clone()), Some(call.dims.len())),
        (&Value::Tensor(y.clone()), Some(rank)),
    ])
}

/// `outer`, `ger`.
pub(super) fn outer(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let dims = &call.dims;
    let Some((y, dy)) = second_operand(meta, &call, "vec2") else {
        return Ok(Value::Unknown);
    };
    for (what, n) in [("self", dims.len()), ("vec2", dy.len())] {
        if n != 1 {
            let message = format!("outer: Expected 1-D argument {what}, but got {n}-D");
            return raise(Code::MatmulShape, message);
        }
    }
    let (Some(a), Some(b)) = (dims.first(), dy.first()) else {
        return Ok(Value::Unknown);
    };
    let dtype = pair_dtype(&call, &y, 1);
    Ok(call.output(meta, vec![a.clone(), b.clone()], dtype))
}

/// `baddbmm`, `addmm`, `addbmm`, `addmv`.
pub(super) fn add_product(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, dims) = (call.name, call.args, &call.dims);
    let (Some(a), Some(b)) = (
        args.tensor(1, "batch1").or(args.tensor(1, "mat1")),
        args.tensor(2, "batch2").or(args.tensor(2, "mat2")),
    ) else {
        return Ok(Value::Unknown);
    };
    // baddbmm reads the result's sizes first (`batch1.size(0)`,
    // `batch1.size(1)`, `batch2.size(2)`), so a batch of too few dims
    // fails there, before any check of its rank.
    if name == "baddbmm"
        && let (Some(ad), Some(bd)) = (meta.dims(&a), meta.dims(&b))
    {
        for (rank, index) in [(ad.len(), 0), (ad.len(), 1), (bd.len(), 2)] {
            if rank > 0
                && let Err(message) = wrap_dim(index, rank)
            {
                return raise(Code::DimOutOfRange, message);
            }
        }
    }
    // addmv checks every rank at once.
    if name == "addmv"
        && let (Some(ad), Some(bd)) = (meta.dims(&a), meta.dims(&b))
        && !(ad.len() == 2 && bd.len() == 1 && dims.len() <= 1)
    {
        let message = format!(
            "vector + matrix @ vector expected, got {}, {}, {}",
            dims.len(),
            ad.len(),
            bd.len()
        );
        return raise(Code::MatmulShape, message);
    }
    // addbmm checks the batches itself, before its `bmm`.
    if name == "addbmm"
        && let (Some(ad), Some(bd)) = (meta.dims(&a), meta.dims(&b))
        && ad.len() == 3
        && bd.len() == 3
        && meta.env().known_different(&ad[0], &bd[0])
    {
        let message = format!(
            "batch1 and batch2 must have same number of batches, got {} and {}",
            meta.fmt_dim(&ad[0]),
            meta.fmt_dim(&bd[0])
        );
        return raise(Code::MatmulShape, message);
    }
    let product = matmul(
        meta,
        match name {
            "baddbmm" | "addbmm" => "bmm",
            "addmv" => "mv",
            _ => "mm",
        },
        &a,
        &Value::Tensor(b),
        args,
        call.device.clone(),
        call.range,
    );
    let Value::Tensor(p) = &product else {
        return Ok(product);
    };
    // addbmm sums the batch of products
    let product = match (name, meta.dims(p)) {
        ("addbmm", Some(pd)) if pd.len() == 3 => {
            out_known(meta, p, pd[1..].to_vec(), p.dtype, p.device.clone(), name)
        }
        _ => product,
    };
    let Value::Tensor(p) = &product else {
        return Ok(product);
    };
    let (Some(pd), Some(bias)) = (meta.dims(p), Some(dims.clone())) else {
        return Ok(product);
    };
    if let Some(message) = super::view::expand_size_error(meta, &call.x, &bias, &pd) {
        meta.report(call.range, Code::BroadcastShape, message);
        return Ok(Value::Unknown);
    }
    match broadcast(meta, &bias, &pd) {
        Ok(_) => Ok(product),
        Err(message) => {
            meta.report(call.range, Code::BroadcastShape, message);
            Ok(Value::Unknown)
        }
    }
}

/// `addr(input, vec1, vec2)`: `input` plus the outer product of two
/// vectors, `input` expanded to the product's shape.
pub(super) fn addr(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (Some(a), Some(b)) = (call.args.tensor(1, "vec1"), call.args.tensor(2, "vec2")) else {
        return Ok(Value::Unknown);
    };
    let (Some(ad), Some(bd)) = (meta.dims(&a), meta.dims(&b)) else {
        return Ok(Value::Unknown);
    };
    for (what, n) in [("vec1", ad.len()), ("vec2", bd.len())] {
        check!(
            n == 1,
            Code::MatmulShape,
            "addr: Expected 1-D argument {what}, but got {n}-D"
        );
    }
    let shape = vec![ad[0].clone(), bd[0].clone()];
    if let Some(message) = super::view::expand_size_error(meta, &call.x, &call.dims, &shape) {
        return raise(Code::BroadcastShape, message);
    }
    let dtype = promote(&[
        (&Value::Tensor(call.x.clone()), Some(call.dims.len())),
        (&Value::Tensor(a), Some(1)),
        (&Value::Tensor(b), Some(1)),
    ]);
    Ok(call.output(meta, shape, dtype))
}

/// `einsum_operand`.
pub(super) fn einsum_operand(_: &mut dyn Meta, _: OpCall<'_>) -> RuleResult {
    Ok(Value::Unknown)
}

/// `cdist`.
pub(super) fn cdist(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let rank = dims.len();
    let Some(y) = args.tensor(1, "x2") else {
        return Ok(Value::Unknown);
    };
    let Some(dy) = meta.dims(&y) else {
        return Ok(Value::Unknown);
    };
    if rank < 2 || dy.len() < 2 {
        return Ok(Value::Unknown);
    }
    if meta
        .env()
        .known_different(&dims[rank - 1], &dy[dy.len() - 1])
    {
        let message = format!(
            "X1 and X2 must have the same number of columns. X1: {} X2: {}",
            meta.fmt_dim(&dims[rank - 1]),
            meta.fmt_dim(&dy[dy.len() - 1])
        );
        return raise(Code::MatmulShape, message);
    }
    let Ok(mut batch) = broadcast(meta, &dims[..rank - 2], &dy[..dy.len() - 2]) else {
        return Ok(Value::Unknown);
    };
    batch.push(dims[rank - 2].clone());
    batch.push(dy[dy.len() - 2].clone());
    Ok(call.output(meta, batch, x.dtype))
}

/// `linalg.vecdot(x, y, *, dim=-1)`: the operands broadcast together and
/// `dim` is summed away.
pub(super) fn vecdot(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (args, x, dims) = (call.args, &call.x, &call.dims);
    let Some(y) = args.tensor(1, "y") else {
        return Ok(Value::Unknown);
    };
    let Some(dy) = meta.dims(&y) else {
        return Ok(Value::Unknown);
    };
    let mut shape = match broadcast(meta, dims, &dy) {
        Ok(b) => b,
        Err(message) => return raise(Code::BroadcastShape, message),
    };
    let Some(dim) = args.int_or(99, "dim", -1) else {
        return Ok(Value::Unknown);
    };
    let d = match wrap_dim(dim, shape.len()) {
        Ok(d) => d,
        Err(message) => return raise(Code::DimOutOfRange, message),
    };
    if !shape.is_empty() {
        shape.remove(d);
    }
    // Operands of two dtypes are not promoted (torch checks them).
    let dtype = x.dtype.filter(|_| x.dtype == y.dtype);
    Ok(call.output(meta, shape, dtype))
}

/// `cosine_similarity`, `pairwise_distance`.
pub(super) fn distance(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let (name, args, x, dims) = (call.name, call.args, &call.x, &call.dims);
    let Some(y) = args.tensor(1, "x2") else {
        return Ok(Value::Unknown);
    };
    let Some(dy) = meta.dims(&y) else {
        return Ok(Value::Unknown);
    };
    let b = match broadcast(meta, dims, &dy) {
        Ok(b) => b,
        Err(message) => return raise(Code::BroadcastShape, message),
    };
    // `cosine_similarity(x1, x2, dim=1, eps)` sums over `dim`;
    // `pairwise_distance(x1, x2, p, eps, keepdim)` takes the norm over the
    // last dim (its third argument is the norm's order, not a dim).
    let (dim, keepdim) = if name == "cosine_similarity" {
        let Some(dim) = args.int_or(2, "dim", 1) else {
            return Ok(Value::Unknown);
        };
        (dim, false)
    } else {
        (
            -1,
            matches!(args.get(4, "keepdim"), Some(Value::Bool(Some(true)))),
        )
    };
    let d = match wrap_dim(dim, b.len()) {
        Ok(d) => d,
        Err(message) => return raise(Code::DimOutOfRange, message),
    };
    let mut shape = b;
    // A 0-d result of 0-d operands: reducing it over dim 0 or -1 keeps it.
    if shape.is_empty() {
        return Ok(call.output(meta, shape, x.dtype));
    }
    if keepdim {
        shape[d] = Dim::konst(1);
    } else {
        shape.remove(d);
    }
    Ok(call.output(meta, shape, x.dtype))
}

/// `matmul` and friends, with torch's messages.
pub(crate) fn matmul(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    other: &Value,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let Value::Tensor(y) = other else {
        return Value::Unknown;
    };
    let Some(dtype) = product_dtype(meta, name, x, y, range) else {
        return Value::Unknown;
    };
    // `mm`, `bmm`, `mv` and `dot` take operands of one rank each: an
    // operand of unknown rank has it (`torch.mm(h, W)` makes `h` a matrix).
    let fixed = match name {
        "mm" => Some((2, 2)),
        "bmm" => Some((3, 3)),
        "mv" => Some((2, 1)),
        "dot" => Some((1, 1)),
        _ => None,
    };
    if let Some((rank_x, rank_y)) = fixed {
        give_rank(meta, x, rank_x);
        give_rank(meta, y, rank_y);
    }
    let (Some(a), Some(b)) = (meta.dims(x), meta.dims(y)) else {
        if let Some(shape) = crate::rules::tail::matmul(meta, x, y, range) {
            return out_shape(meta, x, shape, dtype, device, name);
        }
        return out_var(meta, x, dtype, device, name);
    };
    // Each operand's shape is shown where it is written, as it was before
    // the checks learned anything of its sizes.
    let related: Vec<(TextRange, String)> = args
        .ranges
        .iter()
        .zip([&a, &b])
        .map(|(r, d)| (*r, format!("this operand is {}", meta.fmt_dims(d))))
        .collect();
    match product_dims(meta, name, &a, &b) {
        Ok(shape) => out_known(meta, x, shape, dtype, device, name),
        Err(message) => {
            meta.report_related(range, Code::MatmulShape, message, related);
            Value::Unknown
        }
    }
}

/// The product's dtype: both operands must have the same one (torch
/// raises, in the words of the kernel the ranks pick: `dot` for two
/// vectors, `addmv` for a matrix times a vector, `bmm` for batches, and
/// the result is `None`: unknown, so that nothing after reports again).
fn product_dtype(
    meta: &mut dyn Meta,
    name: &str,
    x: &Tensor,
    y: &Tensor,
    range: TextRange,
) -> Option<Option<DType>> {
    use crate::rules::dtype::torch_name;
    match (x.dtype, y.dtype) {
        // Autocast casts both operands to its own dtype, which the
        // analysis does not follow.
        (Some(a), Some(b)) if a != b && meta.mode().autocast => Some(None),
        (Some(a), Some(b)) if a != b => {
            let ranks = (meta.dims(x).map(|d| d.len()), meta.dims(y).map(|d| d.len()));
            let kernel = match (name, ranks) {
                ("bmm", _) => "bmm",
                ("dot", _) | ("matmul", (Some(1), Some(1))) => "dot",
                ("mv", _) | ("matmul", (Some(2..), Some(1))) => "addmv",
                ("matmul", (Some(1), Some(3..)) | (Some(3..), Some(3..))) => "bmm",
                _ => "mm",
            };
            let message = match kernel {
                "bmm" => format!(
                    "expected scalar type {} but found {}",
                    torch_name(a),
                    torch_name(b)
                ),
                "dot" => format!(
                    "dot : expected both vectors to have same dtype, but found {} and {}",
                    torch_name(a),
                    torch_name(b)
                ),
                "addmv" => format!(
                    "addmv input tensors must have the same dtype, but got {}, {}, and {}",
                    torch_name(b),
                    torch_name(a),
                    torch_name(b)
                ),
                _ => crate::rules::dtype::mm_dtype_message(a, b),
            };
            meta.report(range, Code::DtypeMismatch, message);
            None
        }
        (a, _) => Some(a),
    }
}

/// The product's dims from its operands' `a` and `b`, after the checks torch
/// makes; `Err` carries torch's message.
fn product_dims(meta: &mut dyn Meta, name: &str, a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, String> {
    check_kernel_operands(meta, name, a, b)?;
    // The dims the product sums over: `a`'s last and `b`'s first of its
    // matrix (its only one for a vector).
    let ka = a[a.len() - 1].clone();
    let kb = if b.len() == 1 {
        b[0].clone()
    } else {
        b[b.len() - 2].clone()
    };
    if meta.env().known_different(&ka, &kb) {
        return Err(contraction_mismatch(meta, a, b, &ka, &kb));
    }
    let _ = meta.require_equal(&ka, &kb);
    product_shape(meta, a, b)
}

/// The ranks `matmul` needs, and those the named kernels check their
/// operands for themselves (`mm`, `bmm`, `mv`, `dot`); `bmm` also checks its
/// batch and inner sizes before it multiplies.
fn check_kernel_operands(
    meta: &mut dyn Meta,
    name: &str,
    a: &[Dim],
    b: &[Dim],
) -> Result<(), String> {
    // `mv` of a 0-d matrix fails reading its first dim.
    if name == "mv" && a.is_empty() {
        return Err("Dimension specified as 0 but tensor has no dimensions".to_string());
    }
    if (a.is_empty() || b.is_empty()) && !matches!(name, "mm" | "bmm" | "dot") {
        return Err(format!(
            "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
            a.len(),
            b.len()
        ));
    }
    match name {
        "mm" if a.len() != 2 || b.len() != 2 => Err(if a.len() != 2 {
            format!("mm: self must be a matrix, got {}-D tensor", a.len())
        } else {
            format!("mm: mat2 must be a matrix, got {}-D tensor", b.len())
        }),
        "bmm" if a.len() != 3 || b.len() != 3 => {
            let which = if a.len() != 3 { "batch1" } else { "batch2" };
            Err(format!("{which} must be a 3D tensor"))
        }
        "bmm"
            if meta.env().known_different(&a[0], &b[0])
                || meta.env().known_different(&a[2], &b[1]) =>
        {
            Err(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                meta.fmt_dim(&a[0]),
                meta.fmt_dim(&a[2]),
                meta.fmt_dim(&b[0]),
                meta.fmt_dim(&b[1])
            ))
        }
        "mv" if a.len() != 2 || b.len() != 1 => Err(format!(
            "vector + matrix @ vector expected, got 1, {}, {}",
            a.len(),
            b.len()
        )),
        "dot" if a.len() != 1 || b.len() != 1 => Err(format!(
            "1D tensors expected, but got {}D and {}D tensors",
            a.len(),
            b.len()
        )),
        _ => Ok(()),
    }
}

/// Torch's message when the summed dims `ka` of `a` and `kb` of `b` differ:
/// it names the kernel the product folds into.
fn contraction_mismatch(meta: &mut dyn Meta, a: &[Dim], b: &[Dim], ka: &Dim, kb: &Dim) -> String {
    match (a.len(), b.len()) {
        (1, 1) => format!(
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
            meta.fmt_dim(ka),
            meta.fmt_dim(kb),
            meta.fmt_dim(ka),
            meta.fmt_dim(kb)
        ),
        // A matrix, or a batch of them folded into rows, times a vector
        // is one matrix-vector product.
        (n, 1) if n >= 2 => {
            let rows = meta.fmt_dim(&crate::rules::shape::numel(&a[..n - 1]));
            format!(
                "size mismatch, got input ({rows}), mat ({rows}x{}), vec ({})",
                meta.fmt_dim(ka),
                meta.fmt_dim(kb)
            )
        }
        // A batch of matrices times one matrix is folded into one mm,
        // as torch does: `[4, 20, 128] @ [1000, 128]` is `80x128`.
        (_, 2) => {
            let rows = if a.len() == 1 {
                "1".to_string()
            } else {
                meta.fmt_dim(&crate::rules::shape::numel(&a[..a.len() - 1]))
            };
            format!(
                "mm: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                rows,
                meta.fmt_dim(ka),
                meta.fmt_dim(kb),
                meta.fmt_dim(&b[1])
            )
        }
        // A vector times a batch of matrices is one matrix-vector
        // product of the batch folded into rows.
        (1, _) => {
            let rows = crate::rules::shape::numel(&b[..b.len() - 2]).mul(&b[b.len() - 1]);
            format!(
                "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                meta.fmt_dim(&rows),
                meta.fmt_dim(&rows),
                meta.fmt_dim(&b[b.len() - 2]),
                meta.fmt_dim(ka)
            )
        }
        // Batches of matrices: torch broadcasts the batch dims first
        // (its message if they clash), then folds them into one `bmm`.
        _ => {
            let batch = match broadcast(meta, &a[..a.len() - 2], &b[..b.len() - 2]) {
                Ok(batch) => batch,
                Err(message) => return message,
            };
            let folded = meta.fmt_dim(&crate::rules::shape::numel(&batch));
            format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{folded}, {}] but got: [{folded}, {}].",
                meta.fmt_dim(ka),
                meta.fmt_dim(kb)
            )
        }
    }
}

/// The product's shape: a vector operand loses its dim, matrices give
/// their rows and columns, after the batch dims broadcast together.
fn product_shape(meta: &mut dyn Meta, a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, String> {
    Ok(match (a.len(), b.len()) {
        (1, 1) => Vec::new(),
        (2, 1) => vec![a[0].clone()],
        (1, 2) => vec![b[1].clone()],
        (2, 2) => vec![a[0].clone(), b[1].clone()],
        _ => {
            let (ba, bb) = (
                &a[..a.len().saturating_sub(2)],
                &b[..b.len().saturating_sub(2)],
            );
            let ba = if a.len() == 1 { &[][..] } else { ba };
            let bb = if b.len() == 1 { &[][..] } else { bb };
            let mut batch = broadcast(meta, ba, bb)?;
            if a.len() >= 2 {
                batch.push(a[a.len() - 2].clone());
            }
            if b.len() >= 2 {
                batch.push(b[b.len() - 1].clone());
            }
            batch
        }
    })
}

/// `torch.linalg.multi_dot(tensors)` and `torch.chain_matmul(*matrices)`:
/// a chain of matrix products, in torch's order of checks. `chain_matmul`
/// first wants every operand 2-D (one alone is returned as it is), then is
/// `multi_dot`, which takes a vector at either end (a row first, a column
/// last, neither kept in the result), wants matrices between them, one
/// dtype, and each operand's last size equal to the next one's first.
pub(super) fn multi_dot(
    meta: &mut dyn Meta,
    name: &str,
    args: &Args,
    range: TextRange,
) -> RuleResult {
    let items = if name == "chain_matmul" {
        args.pos.clone()
    } else {
        match args.get(0, "tensors").and_then(Value::items) {
            Some(items) => items,
            None => return Ok(Value::Unknown),
        }
    };
    let tensors: Option<Vec<Rc<Tensor>>> = items
        .iter()
        .map(|v| match v {
            Value::Tensor(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    let Some(tensors) = tensors else {
        return Ok(Value::Unknown);
    };
    let Some(device) = super::inputs::check_inputs(meta, args, name, range) else {
        return Ok(Value::Unknown);
    };
    let all: Option<Vec<Vec<Dim>>> = tensors.iter().map(|t| meta.dims(t)).collect();
    let n = tensors.len();
    if name == "chain_matmul" {
        // `checkAllSameDim(matrices, 2)` runs before the count is checked.
        if let Some(all) = &all
            && let Some(d) = all.iter().find(|d| d.len() != 2)
        {
            return raise(
                Code::MatmulShape,
                format!("Tensor dimension is {}, expected 2 instead.", d.len()),
            );
        }
        check!(
            n > 0,
            Code::MatmulShape,
            "chain_matmul(): Expected one or more matrices"
        );
        if n == 1 {
            let t = &tensors[0];
            return Ok(match all {
                Some(all) => out_known(meta, t, all[0].clone(), t.dtype, device, name),
                None => out_var(meta, t, t.dtype, device, name),
            });
        }
    }
    check!(
        n >= 2,
        Code::MatmulShape,
        "multi_dot(): expected at least 2 tensors but got {n}"
    );
    let Some(all) = all else {
        return Ok(out_var(meta, &tensors[0], tensors[0].dtype, device, name));
    };
    let (first, last) = (&all[0], &all[n - 1]);
    check!(
        matches!(first.len(), 1 | 2),
        Code::MatmulShape,
        "multi_dot(): the first tensor must be 1D or 2D but got {}D",
        first.len()
    );
    check!(
        matches!(last.len(), 1 | 2),
        Code::MatmulShape,
        "multi_dot(): the last tensor must be 1D or 2D but got {}D",
        last.len()
    );
    if let Some(i) = (1..n - 1).find(|&i| all[i].len() != 2) {
        return raise(
            Code::MatmulShape,
            format!(
                "multi_dot(): tensor {i} must be 2D but got {}D",
                all[i].len()
            ),
        );
    }
    for i in 1..n {
        if let (Some(a), Some(b)) = (tensors[0].dtype, tensors[i].dtype)
            && a != b
        {
            return raise(
                Code::DtypeMismatch,
                format!(
                    "multi_dot(): all tensors must have be the same dtype but tensor 0 is {} and tensor {i} {}",
                    crate::rules::dtype::cpp_name(a),
                    crate::rules::dtype::cpp_name(b)
                ),
            );
        }
        // A vector first is one row; a vector last is one column.
        let inner_left = all[i - 1].last().cloned();
        let inner_right = all[i].first().cloned();
        let (Some(k1), Some(k2)) = (inner_left, inner_right) else {
            continue;
        };
        if meta.env().known_different(&k1, &k2) {
            return raise(
                Code::MatmulShape,
                format!(
                    "multi_dot(): tensors {} and {i} with shapes {} and {} cannot be multiplied",
                    i - 1,
                    meta.fmt_dims(&all[i - 1]),
                    meta.fmt_dims(&all[i])
                ),
            );
        }
        let _ = meta.require_equal(&k1, &k2);
    }
    let mut shape = Vec::new();
    if first.len() == 2 {
        shape.push(first[0].clone());
    }
    if last.len() == 2 {
        shape.push(last[1].clone());
    }
    Ok(out_known(
        meta,
        &tensors[0],
        shape,
        tensors[0].dtype,
        device,
        name,
    ))
}
