//! Pooling, as layers and `F.*_pool*d`: max and average pools over windows, and adaptive pools.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::check::{RuleResult, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{out_known, out_var};
use crate::value::{DType, Device, Tensor, Value};

/// A max pool's values with their int64 indices.
pub(super) fn with_indices(out: Value) -> Value {
    match &out {
        Value::Tensor(t) => {
            let idx = Value::Tensor(Rc::new(Tensor {
                dtype: Some(DType::Int64),
                ..(**t).clone()
            }));
            Value::tuple(vec![out, idx])
        }
        _ => Value::Unknown,
    }
}

/// Pools reject a padding over half the (effective) kernel.
fn pool_pad_too_big(
    meta: &mut dyn Meta,
    n: usize,
    is_max: bool,
    kernel: &[Dim],
    padding: &[Dim],
    dilation: &[Dim],
    range: TextRange,
) -> bool {
    for i in 0..n.min(kernel.len()).min(padding.len()) {
        let d = dilation
            .get(i)
            .and_then(|d| meta.env().value(d))
            .unwrap_or(1);
        let (Some(k), Some(p)) = (meta.env().value(&kernel[i]), meta.env().value(&padding[i]))
        else {
            continue;
        };
        let keff = (k - 1) * d + 1;
        if p > keff / 2 {
            let message = if n == 1 && is_max {
                format!(
                    "max_pool1d() padding should be at most half of kernel size, but got padding={p} and kernel_size={k}"
                )
            } else {
                format!(
                    "pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and dilation={d}"
                )
            };
            meta.report(range, Code::PoolInput, message);
            return true;
        }
    }
    false
}

/// A max or average pool over the last `n` dims (layer or functional).
#[allow(clippy::too_many_arguments)]
pub(super) fn pool(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    n: usize,
    is_max: bool,
    kernel: &[Dim],
    stride: &[Dim],
    padding: &[Dim],
    dilation: &[Dim],
    ceil: bool,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let result = pool_rule(
        meta, x, n, is_max, kernel, stride, padding, dilation, ceil, device, range,
    );
    meta.settle(range, result)
}

/// The argument checker's words for a 1-d average pool's input of `rank`
/// dims.
/// What the 1-d max pool's kernel raises for an input that is not 2-d or
/// 3-d.
fn max_pool1d_rank(meta: &mut dyn Meta, dims: &[Dim]) -> String {
    format!(
        "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:{}",
        meta.fmt_dims(dims)
    )
}

fn avg_pool1d_rank(rank: usize, op: &str) -> String {
    format!(
        "Expected 2 to 3 dimensions, but got {rank}-dimensional tensor for argument #1 'self' (while checking arguments for {op})"
    )
}

/// The rule behind `pool`: what torch raises is its `Err`.
#[allow(clippy::too_many_arguments)]
fn pool_rule(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    n: usize,
    is_max: bool,
    kernel: &[Dim],
    stride: &[Dim],
    padding: &[Dim],
    dilation: &[Dim],
    ceil: bool,
    device: Option<Device>,
    range: TextRange,
) -> RuleResult {
    if pool_pad_too_big(meta, n, is_max, kernel, padding, dilation, range) {
        return Ok(Value::Unknown);
    }
    let Some(dims) = meta.dims(x) else {
        return Ok(out_var(meta, x, x.dtype, device, "pool"));
    };
    // The 1-d average pool goes through the argument checker, which also
    // refuses a batch of images.
    if !is_max && n == 1 && dims.len() > 3 {
        return raise(Code::PoolInput, avg_pool1d_rank(dims.len(), "avg_pool1d"));
    }
    // So does the 1-d max pool's kernel, in its own words.
    if is_max && n == 1 && dims.len() > 3 {
        return raise(Code::PoolInput, max_pool1d_rank(meta, &dims));
    }
    if dims.len() < n + 1
        || kernel.len() != n
        || stride.len() != n
        || padding.len() != n
        || dilation.len() != n
    {
        if dims.len() < n + 1 {
            // Each max-pool kernel words its rank check its own way.
            let message = match (is_max, n) {
                (true, 1) => max_pool1d_rank(meta, &dims),
                (true, _) => format!(
                    "non-empty {}D or {}D (batch mode) tensor expected for input",
                    n + 1,
                    n + 2
                ),
                _ => format!(
                    "max_pool{n}d: Expected {}D or {}D (batch mode) tensor for input, but got: {}",
                    n + 1,
                    n + 2,
                    meta.fmt_dims(&dims)
                ),
            };
            return raise(Code::PoolInput, message);
        }
        let mut out = dims[..dims.len() - n].to_vec();
        for _ in 0..n {
            out.push(meta.env_mut().anonymous());
        }
        return Ok(out_known(meta, x, out, x.dtype, device, "pool"));
    }
    let mut out = dims[..dims.len() - n].to_vec();
    for i in 0..n {
        let l = &dims[dims.len() - n + i];
        let d = dilation.get(i).cloned().unwrap_or_else(|| Dim::konst(1));
        let keff = d.mul(&kernel[i].sub(&Dim::konst(1))).add(&Dim::konst(1));
        let num = l.add(&padding[i].mul(&Dim::konst(2))).sub(&keff);
        let num = if ceil {
            num.add(&stride[i]).sub(&Dim::konst(1))
        } else {
            num
        };
        let mut len = match num.floordiv(&stride[i]) {
            Some(q) => q.add(&Dim::konst(1)),
            None => meta.env_mut().anonymous(),
        };
        if ceil
            && let (Some(lv), Some(sv), Some(pv), Some(ov)) = (
                meta.env().value(l),
                meta.env().value(&stride[i]),
                meta.env().value(&padding[i]),
                meta.env().value(&len),
            )
            && (ov - 1) * sv >= lv + pv
        {
            len = Dim::konst(ov - 1);
        }
        out.push(len);
    }
    let spatial_out = &out[out.len() - n..];
    if let Some(v) = spatial_out
        .iter()
        .filter_map(|d| meta.env().value(d))
        .find(|v| *v < 1)
    {
        return raise(
            Code::PoolInput,
            too_small(meta, n, is_max, &dims, spatial_out, kernel, v),
        );
    }
    Ok(out_known(meta, x, out, x.dtype, device, "pool"))
}

pub(super) fn adaptive_pool(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    (n, avg): (usize, bool),
    output: Option<&Value>,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let result = adaptive_pool_rule(meta, x, (n, avg), output, device);
    meta.settle(range, result)
}

/// The rule behind `adaptive_pool`: what torch raises is its `Err`.
fn adaptive_pool_rule(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    (n, avg): (usize, bool),
    output: Option<&Value>,
    device: Option<Device>,
) -> RuleResult {
    // The 1-d pools parse `output_size` as a tuple of ints, before any
    // check of the input; the others read `None` as "keep this size", but
    // not for the whole argument (`_list_with_default` takes its `len`).
    if n == 1 {
        let kernel = if avg {
            "adaptive_avg_pool1d"
        } else {
            "adaptive_max_pool1d"
        };
        let parameter =
            format!("{kernel}(): argument 'output_size' (position 2) must be tuple of ints");
        match output {
            Some(Value::None) => {
                return raise(Code::ArgumentType, format!("{parameter}, not NoneType"));
            }
            Some(v @ (Value::Tuple(_) | Value::List(_))) => {
                if let Some(at) = v
                    .items()
                    .unwrap_or_default()
                    .iter()
                    .position(|i| matches!(i, Value::None))
                {
                    return raise(
                        Code::ArgumentType,
                        format!("{parameter}, but found element of type NoneType at pos {at}"),
                    );
                }
            }
            _ => {}
        }
    } else if let Some(Value::None) = output {
        return raise(
            Code::ArgumentType,
            "object of type 'NoneType' has no len()".to_string(),
        );
    }
    let Some(dims) = meta.dims(x) else {
        return Ok(out_var(meta, x, x.dtype, device, "adaptive_pool"));
    };
    if avg && n == 1 && dims.len() > 3 {
        return raise(
            Code::PoolInput,
            avg_pool1d_rank(dims.len(), "adaptive_avg_pool1d"),
        );
    }
    if dims.len() < n + 1 {
        // The average pools' kernels name themselves (the 1-d one through
        // the argument checker).
        let message = match (avg, n) {
            (true, 1) => avg_pool1d_rank(dims.len(), "adaptive_avg_pool1d"),
            (true, _) => format!(
                "adaptive_avg_pool{n}d(): Expected {}D or {}D tensor, but got {}",
                n + 1,
                n + 2,
                meta.fmt_dims(&dims)
            ),
            _ => format!(
                "Expected {}D or {}D tensor, but got {}",
                n + 1,
                n + 2,
                meta.fmt_dims(&dims)
            ),
        };
        return raise(Code::PoolInput, message);
    }
    // `None` in the output size keeps that input size; a size nobody can
    // read (an unread setting, a loop's unknown item) is unknown, never
    // the input's.
    let size = |meta: &mut dyn Meta, v: &Value, i: usize| match v {
        Value::None => dims[dims.len() - n + i].clone(),
        v => match meta.as_dim(v) {
            Some(d) => d,
            None => meta.env_mut().anonymous(),
        },
    };
    let items = match output {
        Some(v @ (Value::Tuple(_) | Value::List(_))) => v.items(),
        _ => None,
    };
    let mut out = dims[..dims.len() - n].to_vec();
    for i in 0..n {
        let d = match (&items, output) {
            (Some(items), _) => match items.get(i) {
                Some(item) => size(meta, item, i),
                None => meta.env_mut().anonymous(),
            },
            // One size for every spatial dim (`AdaptiveAvgPool2d(7)`).
            (None, Some(v)) => size(meta, v, i),
            (None, None) => dims[dims.len() - n + i].clone(),
        };
        out.push(d);
    }
    Ok(out_known(meta, x, out, x.dtype, device, "adaptive_pool"))
}

/// torch's words for a pooling window larger than its (padded) input:
/// the kernels' own checks for `max_pool1d` and `avg_pool3d`, otherwise
/// the shared one, which prints the channels and spatial sizes of the
/// input and the output (a 1-d pool runs as a 2-d one of height 1).
fn too_small(
    meta: &dyn Meta,
    n: usize,
    is_max: bool,
    dims: &[Dim],
    spatial_out: &[Dim],
    kernel: &[Dim],
    v: i64,
) -> String {
    let spatial_in = &dims[dims.len() - n..];
    let joined = |ds: &[Dim]| {
        ds.iter()
            .map(|d| meta.fmt_dim(d))
            .collect::<Vec<_>>()
            .join("x")
    };
    match (n, is_max) {
        (1, true) => return format!("max_pool1d() Invalid computed output size: {v}"),
        (3, false)
            if spatial_in
                .iter()
                .zip(kernel)
                .any(|(l, k)| meta.env().known_different(l, k)) =>
        {
            let named = |ds: &[Dim], prefix: &str| {
                ["T", "H", "W"]
                    .iter()
                    .zip(ds)
                    .map(|(axis, d)| format!("{prefix}{axis}: {}", meta.fmt_dim(d)))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            return format!(
                "input image ({}) smaller than kernel size ({})",
                named(spatial_in, ""),
                named(kernel, "k")
            );
        }
        _ => {}
    }
    let channels = dims[dims.len() - n - 1].clone();
    let one = Dim::konst(1);
    let height = if n == 1 { vec![one] } else { Vec::new() };
    let shown_in: Vec<Dim> = std::iter::once(channels.clone())
        .chain(height.iter().cloned())
        .chain(spatial_in.iter().cloned())
        .collect();
    let shown_out: Vec<Dim> = std::iter::once(channels)
        .chain(height)
        .chain(spatial_out.iter().cloned())
        .collect();
    format!(
        "Given input size: ({}). Calculated output size: ({}). Output size is too small",
        joined(&shown_in),
        joined(&shown_out)
    )
}
