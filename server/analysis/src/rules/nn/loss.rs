//! Losses with a rule of their own: cross entropy and NLL (the target shape each input expects), the margin losses over class indices, and the losses computed elementwise from input and target before they are reduced.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, check, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::out_known;
use crate::rules::shape::broadcast;
use crate::value::{DType, Device, Tensor, Value};

pub(super) fn loss_ce(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let result = loss_ce_rule(meta, name, x, args, device, &range);
    meta.settle(range, result)
}

/// The rule behind `loss_ce`: what torch raises is its `Err`.
fn loss_ce_rule(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    range: &TextRange,
) -> RuleResult {
    let reduction = args.str(99, "reduction");
    let Some(t) = args.tensor(1, "target") else {
        return Ok(reduced_whatever_the_target(meta, name, x, args, device));
    };
    let (Some(xd), Some(td)) = (meta.dims(x), meta.dims(&t)) else {
        // Unreduced, the loss of class indices has the target's shape
        // (`[N, d1, ...]` for logits `[N, C, d1, ...]`); that of class
        // probabilities is nobody's to say without the input's rank.
        if reduction.as_deref() == Some("none") {
            return Ok(match meta.dims(&t) {
                Some(td) if t.dtype.is_some_and(|d| !d.is_floating()) => {
                    out_known(meta, x, td, x.dtype, device, name)
                }
                _ => Value::Unknown,
            });
        }
        return Ok(out_known(meta, x, Vec::new(), x.dtype, device, name));
    };
    let cross_entropy = name == "cross_entropy";
    // Equal shapes mean class probabilities to `cross_entropy`, which
    // must be floating point: torch checks that before any size.
    let equal_shapes = xd.len() == td.len()
        && xd
            .iter()
            .zip(&td)
            .all(|(a, b)| meta.env().known_equal(a, b));
    if cross_entropy
        && equal_shapes
        && let Some(d) = t.dtype
        && !d.is_floating()
    {
        let message = format!(
            "Expected floating point type for target with class probabilities, got {}",
            crate::rules::dtype::torch_name(d)
        );
        return raise(Code::DtypeMismatch, message);
    }
    // Class probabilities have no class to ignore.
    if cross_entropy
        && equal_shapes
        && t.dtype.is_some_and(|d| d.is_floating())
        && args.int(4, "ignore_index").is_some_and(|i| i >= 0)
    {
        return raise(
            Code::LossShape,
            "ignore_index is not supported for floating point target".into(),
        );
    }
    // A 0-d input has no class dim: `nll_loss` says so, `cross_entropy`
    // fails reading dim 1 (the size of the classes, or its `log_softmax`).
    if xd.is_empty() {
        if !cross_entropy {
            let message = "Expected 1 or more dimensions (got 0)".to_string();
            return raise(Code::LossShape, message);
        }
        let message = if !td.is_empty() {
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
        } else if t.dtype.is_some() {
            "Dimension specified as 1 but tensor has no dimensions"
        } else {
            // A probability target of unknown dtype may fail on its dtype first.
            return Ok(Value::Unknown);
        };
        return raise(Code::DimOutOfRange, message.to_string());
    }
    // Class probabilities are a floating target of the input's shape (to
    // `cross_entropy`; `nll_loss` takes class indices only); any other
    // target holds class indices (torch checks its sizes, then
    // its dtype).
    let same_shape = xd.len() == td.len()
        && !xd
            .iter()
            .zip(&td)
            .any(|(a, b)| meta.env().known_different(a, b));
    let class_target = !cross_entropy || t.dtype.is_none_or(|d| !d.is_floating()) || !same_shape;
    if class_target {
        let expected: Vec<Dim> = if xd.len() == 1 {
            Vec::new()
        } else {
            std::iter::once(xd[0].clone())
                .chain(xd[2..].iter().cloned())
                .collect()
        };
        if td.len() != expected.len() {
            // A target of the input's shape whose dtype is not known (moved
            // with `.to(rank)`, where the rank could be a dtype) may hold
            // class probabilities, which torch takes.
            if cross_entropy && same_shape && t.dtype.is_none() {
                return Ok(Value::Unknown);
            }
            let message = if td.len() > 1 && xd.len() == 2 {
                "0D or 1D target tensor expected, multi-target not supported".to_string()
            } else {
                target_size_message(meta, &expected, &td)
            };
            return raise(Code::LossShape, message);
        }
        if let (Some(a), Some(b)) = (expected.first(), td.first())
            && meta.env().known_different(a, b)
        {
            let message = format!(
                "Expected input batch_size ({}) to match target batch_size ({}).",
                meta.fmt_dim(a),
                meta.fmt_dim(b)
            );
            return raise(Code::LossShape, message);
        }
        // The remaining sizes are checked as a whole, as `nll_loss2d` and
        // its N-d form do: `(B, T, V)` logits with `(B, T)` targets read
        // dim 1 (`T`) as the classes, and the target's `T` meets `V`.
        if expected
            .iter()
            .zip(&td)
            .skip(1)
            .any(|(a, b)| meta.env().known_different(a, b))
        {
            // `(B, T, V)` logits with `(B, T)` targets: the classes were
            // meant to be last, as a language model has them.
            if xd.len() == 3 && td.len() == 2 && !meta.env().known_different(&xd[1], &td[1]) {
                crate::rules::fixes::offer_flatten_loss_fix(
                    meta,
                    range,
                    &xd[2],
                    (x.layout.is_none(), t.layout.is_none()),
                );
            }
            // Images (`(N, C, H, W)`) go through `nll_loss2d`, in its words.
            let message = if xd.len() == 4 {
                format!(
                    "size mismatch (got input: {} , target: {}",
                    meta.fmt_dims(&xd),
                    meta.fmt_dims(&td)
                )
            } else {
                target_size_message(meta, &expected, &td)
            };
            return raise(Code::LossShape, message);
        }
        // A class weight has one entry per class (the input's dim 1, or
        // its only dim for a single sample); the images' kernel counts its
        // elements only, and says less.
        if let Some(w) = args.tensor(2, "weight")
            && let Some(wd) = meta.dims(&w)
            && let Some(classes) = xd.get(1).or(xd.first())
        {
            let one_per_class =
                |meta: &dyn Meta| wd.len() == 1 && !meta.env().known_different(&wd[0], classes);
            if xd.len() <= 2 && !one_per_class(meta) {
                let message = format!(
                    "weight tensor should be defined either for all {} classes or no classes but got weight tensor of shape: {}",
                    meta.fmt_dim(classes),
                    meta.fmt_dims(&wd)
                );
                return raise(Code::LossShape, message);
            }
            if xd.len() > 2 && wd.len() == 1 && !one_per_class(meta) {
                let message = "weight tensor should be defined either for all or no classes";
                return raise(Code::LossShape, message.to_string());
            }
        }
        if let Some(d) = t.dtype
            && !matches!(d, DType::Int64 | DType::UInt8)
            && matches!(name, "cross_entropy" | "nll_loss")
        {
            let message = format!(
                "expected target dtype to be Long or Byte, but got {}",
                crate::rules::dtype::torch_name(d)
            );
            return raise(Code::DtypeMismatch, message);
        }
        for (a, b) in expected.iter().zip(&td) {
            let _ = meta.require_equal(a, b);
        }
        let out = if reduction.as_deref() == Some("none") {
            expected
        } else {
            Vec::new()
        };
        return Ok(out_known(meta, x, out, x.dtype, device, name));
    }
    if xd.len() != td.len()
        || xd
            .iter()
            .zip(&td)
            .any(|(a, b)| meta.env().known_different(a, b))
    {
        let message = format!(
            "Expected target size {}, got {}",
            meta.fmt_dims(&xd),
            meta.fmt_dims(&td)
        );
        return raise(Code::LossShape, message);
    }
    let out = if reduction.as_deref() == Some("none") {
        std::iter::once(xd[0].clone())
            .chain(xd.get(2..).unwrap_or(&[]).iter().cloned())
            .collect()
    } else {
        Vec::new()
    };
    Ok(out_known(meta, x, out, x.dtype, device, name))
}

/// torch's words for class indices of the wrong shape.
/// A loss of a target nobody can see (a `DataLoader`'s labels): reduced,
/// as by default, it is a scalar whatever the target is, if it runs;
/// unreduced (or reduced by the old `reduce`/`size_average` flags, or by a
/// setting the analysis cannot read) its shape is the target's to say.
fn reduced_whatever_the_target(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> Value {
    let reduced = match args.get(99, "reduction") {
        None => true,
        Some(_) => matches!(args.str(99, "reduction").as_deref(), Some("mean" | "sum")),
    };
    let legacy =
        args.pos.len() > 2 || args.kw("reduce").is_some() || args.kw("size_average").is_some();
    if reduced && !legacy && matches!(args.get(1, "target"), Some(Value::Unknown)) {
        out_known(meta, x, Vec::new(), x.dtype, device, name)
    } else {
        Value::Unknown
    }
}

fn target_size_message(meta: &dyn Meta, expected: &[Dim], got: &[Dim]) -> String {
    format!(
        "Expected target size {}, got {}",
        meta.fmt_dims(expected),
        meta.fmt_dims(got)
    )
}

/// Losses computed elementwise from input and target, which broadcast
/// together: `poisson_nll_loss` and `hinge_embedding_loss` (their kernels
/// put the target first, as torch's message shows), `gaussian_nll_loss`
/// (with a variance of the input's shape, or one dim short of it, or with
/// a last dim of 1), and `multilabel_soft_margin_loss`, which averages its
/// last dim away before the reduction.
pub(super) fn elementwise_loss(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> RuleResult {
    let reduction = args.str(99, "reduction");
    let Some(t) = args.tensor(1, "target") else {
        return Ok(reduced_whatever_the_target(meta, name, x, args, device));
    };
    let (Some(xd), Some(td)) = (meta.dims(x), meta.dims(&t)) else {
        return Ok(Value::Unknown);
    };
    let target_first = matches!(
        name,
        "poisson_nll_loss" | "hinge_embedding_loss" | "multilabel_soft_margin_loss"
    );
    let joined = if target_first {
        crate::rules::shape::broadcast(meta, &td, &xd)
    } else {
        crate::rules::shape::broadcast(meta, &xd, &td)
    };
    let mut shape = match joined {
        Ok(shape) => shape,
        Err(message) => return raise(Code::BroadcastShape, message),
    };
    if name == "gaussian_nll_loss"
        && let Some(var) = args.tensor(2, "var")
        && let Some(vd) = meta.dims(&var)
    {
        let same = |meta: &dyn Meta, a: &[Dim], b: &[Dim]| {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| meta.env().known_equal(p, q))
        };
        let differs = |meta: &dyn Meta, a: &[Dim], b: &[Dim]| {
            a.len() != b.len()
                || a.iter()
                    .zip(b)
                    .any(|(p, q)| meta.env().known_different(p, q))
        };
        let short = &xd[..xd.len().saturating_sub(1)];
        let fits = same(meta, &vd, &xd)
            || same(meta, &vd, short)
            || (!vd.is_empty()
                && same(meta, &vd[..vd.len() - 1], short)
                && meta.env().value(&vd[vd.len() - 1]) == Some(1));
        let cannot_fit = differs(meta, &vd, &xd)
            && differs(meta, &vd, short)
            && (vd.is_empty()
                || differs(meta, &vd[..vd.len() - 1], short)
                || meta.env().value(&vd[vd.len() - 1]).is_some_and(|n| n != 1));
        if cannot_fit {
            return raise(Code::LossShape, "var is of incorrect size".to_string());
        }
        if !fits {
            return Ok(Value::Unknown);
        }
    }
    if name == "multilabel_soft_margin_loss" {
        shape.pop();
    }
    let dtype = crate::rules::dtype::promote(&[
        (&Value::Tensor(x.clone()), Some(xd.len())),
        (&Value::Tensor(t.clone()), Some(td.len())),
    ])
    .filter(|d| d.is_floating());
    let out = if reduction.as_deref() == Some("none") {
        shape
    } else {
        Vec::new()
    };
    Ok(out_known(meta, x, out, dtype, device, name))
}

/// `F.multi_margin_loss(input, target, p=1, margin=1, weight=None, ...)`:
/// a vector or a batch of class scores and one class index per sample;
/// a loss per sample with `reduction='none'`.
pub(super) fn multi_margin_loss(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> RuleResult {
    if let Some(p) = args.int(2, "p") {
        check!(
            p == 1 || p == 2,
            Code::LayerConfig,
            "only p == 1 and p == 2 supported"
        );
    }
    let weight = args.tensor(4, "weight");
    if let Some(rank) = weight.as_ref().and_then(|w| meta.rank(w)) {
        check!(
            rank == 1,
            Code::LayerConfig,
            "weight must be one-dimensional"
        );
    }
    let (Some(t), Some(xd)) = (args.tensor(1, "target"), meta.dims(x)) else {
        return Ok(Value::Unknown);
    };
    let Some(td) = meta.dims(&t) else {
        return Ok(Value::Unknown);
    };
    let nonempty = |d: &Dim| meta.env().value(d).is_none_or(|v| v > 0);
    check!(
        (xd.len() <= 2 && xd.iter().all(nonempty)) || (xd.len() == 2 && nonempty(&xd[1])),
        Code::LossShape,
        "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {}",
        meta.fmt_dims(&xd)
    );
    let (samples, classes) = match xd.as_slice() {
        [] => (Dim::konst(1), Dim::konst(1)),
        [c] => (Dim::konst(1), c.clone()),
        [n, c] => (n.clone(), c.clone()),
        _ => return Ok(Value::Unknown),
    };
    if td.len() > 1
        || td
            .first()
            .is_some_and(|n| meta.env().known_different(n, &samples))
    {
        let message = format!(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch size). Expected target size [{}], but got {}. Input has shape {}.",
            meta.fmt_dim(&samples),
            meta.fmt_dims(&td),
            meta.fmt_dims(&xd)
        );
        return raise(Code::LossShape, message);
    }
    if let Some(wd) = weight.as_ref().and_then(|w| meta.dims(w))
        && let [size] = wd.as_slice()
        && meta.env().known_different(size, &classes)
    {
        let message = format!(
            "inconsistent weight size, expected {} but got {}",
            meta.fmt_dim(&classes),
            meta.fmt_dims(&wd)
        );
        return raise(Code::LossShape, message);
    }
    long_target(&t)?;
    let shape = if args.str(usize::MAX, "reduction").as_deref() == Some("none") {
        td.clone()
    } else {
        Vec::new()
    };
    Ok(out_known(
        meta,
        x,
        shape,
        x.dtype,
        device,
        "multi_margin_loss",
    ))
}

/// `F.multilabel_margin_loss(input, target, ...)`: class scores and, per
/// sample, class indices of the same shape (padded with -1).
pub(super) fn multilabel_margin_loss(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
) -> RuleResult {
    let (Some(t), Some(xd)) = (args.tensor(1, "target"), meta.dims(x)) else {
        return Ok(Value::Unknown);
    };
    let Some(td) = meta.dims(&t) else {
        return Ok(Value::Unknown);
    };
    if xd.len() <= 2
        && (td.len() != xd.len()
            || xd
                .iter()
                .zip(&td)
                .any(|(a, b)| meta.env().known_different(a, b)))
    {
        let message = format!(
            "inconsistent target size: {} for input of size: {}",
            meta.fmt_dims(&td),
            meta.fmt_dims(&xd)
        );
        return raise(Code::LossShape, message);
    }
    long_target(&t)?;
    let shape = match (args.str(usize::MAX, "reduction").as_deref(), xd.as_slice()) {
        (Some("none"), [n, _]) => vec![n.clone()],
        (Some("none"), [_]) => Vec::new(),
        (Some("none"), _) => return Ok(Value::Unknown),
        _ => Vec::new(),
    };
    Ok(out_known(
        meta,
        x,
        shape,
        x.dtype,
        device,
        "multilabel_margin_loss",
    ))
}

/// `F.mse_loss` and the other losses that compare input and target
/// element by element.
pub(super) fn pointwise_loss(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    args: &Args,
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    let reduction = args.str(99, "reduction");
    let Some(t) = args.tensor(1, "target") else {
        return Ok(reduced_whatever_the_target(meta, name, x, args, device));
    };
    // Binary cross entropy needs input and target of one shape: a
    // side of unknown rank takes the other's.
    if name.starts_with("binary_cross_entropy") {
        if let Some(td) = meta.dims(&t) {
            meta.adopt_shape(&x.shape, &td);
        } else if let Some(xd) = meta.dims(x) {
            meta.adopt_shape(&t.shape, &xd);
        }
    }
    let (Some(xd), Some(td)) = (meta.dims(x), meta.dims(&t)) else {
        // A reduced loss is a scalar whatever the shapes.
        if reduction.as_deref() != Some("none") {
            return Ok(out_known(meta, x, Vec::new(), x.dtype, device, name));
        }
        return Ok(Value::Unknown);
    };
    // Binary cross entropy takes a target of the input's shape
    // (`[B, 1]` logits with `[B]` targets raise) and of a floating
    // dtype.
    if name.starts_with("binary_cross_entropy")
        && (xd.len() != td.len()
            || xd
                .iter()
                .zip(&td)
                .any(|(a, b)| meta.env().known_different(a, b)))
    {
        let (target, input) = (meta.fmt_dims(&td), meta.fmt_dims(&xd));
        let message = if name == "binary_cross_entropy" {
            format!(
                "Using a target size (torch.Size({target})) that is different to the input size (torch.Size({input})) is deprecated. Please ensure they have the same size."
            )
        } else {
            format!(
                "Target size (torch.Size({target})) must be the same as input size (torch.Size({input}))"
            )
        };
        return raise(Code::LossShape, message);
    }
    if name.starts_with("binary_cross_entropy")
        && let (Some(xt), Some(tt)) = (x.dtype, t.dtype)
        && xt.is_floating()
        && !tt.is_floating()
    {
        let (xt, tt) = (
            crate::rules::dtype::torch_name(xt),
            crate::rules::dtype::torch_name(tt),
        );
        let message = if name == "binary_cross_entropy" {
            format!("Found dtype {tt} but expected {xt}")
        } else {
            format!("result type {xt} can't be cast to the desired output type {tt}")
        };
        return raise(Code::DtypeMismatch, message);
    }
    let shape = match broadcast(meta, &xd, &td) {
        Ok(s) => s,
        Err(message) => {
            return raise(Code::BroadcastShape, message);
        }
    };
    // Torch warns when the sizes differ: sizes that may be equal (two
    // symbols the broadcast did not tell apart) are no warning.
    let differ = xd.len() != td.len()
        || xd
            .iter()
            .zip(&td)
            .any(|(a, b)| meta.env().known_different(a, b));
    if differ && !name.starts_with("binary") {
        let message = format!(
            "Using a target size ({}) that is different to the input size ({}). This will likely lead to incorrect results due to broadcasting.",
            meta.fmt_dims(&td),
            meta.fmt_dims(&xd)
        );
        meta.report(range, Code::LossBroadcast, message);
    }
    // `huber_loss` and `soft_margin_loss` write into a result of the
    // input's dtype what they compute in the promoted one (a float for
    // `soft_margin_loss`, which takes an `exp`): an int input refuses it.
    if matches!(name, "huber_loss" | "soft_margin_loss")
        && let Some(xt) = x.dtype
        && !xt.is_floating()
        && !xt.is_complex()
        && let Some(promoted) = crate::rules::dtype::promote(&[
            (&Value::Tensor(x.clone()), Some(xd.len())),
            (&Value::Tensor(t.clone()), Some(td.len())),
        ])
    {
        let computed = if name == "soft_margin_loss" {
            crate::rules::dtype::int_to_float(Some(promoted)).unwrap_or(promoted)
        } else {
            promoted
        };
        let (computed_name, input_name) = (
            crate::rules::dtype::torch_name(computed),
            crate::rules::dtype::torch_name(xt),
        );
        if computed.category() > xt.category() {
            let message = format!(
                "result type {computed_name} can't be cast to the desired output type {input_name}"
            );
            return raise(Code::DtypeMismatch, message);
        }
        let kernel = if matches!(device, Some(crate::value::Device::Cuda(_))) {
            "huber_cuda"
        } else {
            "huber_cpu"
        };
        let message = format!("\"{kernel}\" not implemented for '{computed_name}'");
        return raise(Code::DtypeUnsupported, message);
    }
    let out = if reduction.as_deref() == Some("none") {
        shape
    } else {
        Vec::new()
    };
    // the pointwise losses promote input and target
    let dtype = if matches!(name, "mse_loss" | "l1_loss" | "smooth_l1_loss") {
        crate::rules::dtype::promote(&[
            (&Value::Tensor(x.clone()), Some(xd.len())),
            (&Value::Tensor(t.clone()), Some(td.len())),
        ])
        .or(x.dtype)
    } else {
        x.dtype
    };
    Ok(out_known(meta, x, out, dtype, device, name))
}

/// The margin losses' kernels read their target as class indices of
/// int64.
fn long_target(t: &Tensor) -> Result<(), crate::rules::check::Stop> {
    if let Some(d) = t.dtype
        && d != DType::Int64
    {
        let message = format!(
            "expected scalar type Long but found {}",
            crate::rules::dtype::torch_name(d)
        );
        return raise(Code::DtypeMismatch, message);
    }
    Ok(())
}
