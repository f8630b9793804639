//! Losses with a rule of their own: cross entropy and NLL (the target shape each input expects), and the losses computed elementwise from input and target before they are reduced.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::out_known;
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
        return Ok(Value::Unknown);
    };
    let (Some(xd), Some(td)) = (meta.dims(x), meta.dims(&t)) else {
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
        return Ok(Value::Unknown);
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
