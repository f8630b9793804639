//! Convolutions, plain and transposed, as layers and `F.conv*`: channel checks and output sizes.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::rules::check::{RuleResult, Stop, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{out_known, out_var};
use crate::value::{Device, Tensor, Value};

use super::spatial::spatial_or;

pub(super) struct ConvSpec {
    pub(super) n: usize,
    pub(super) in_channels: Option<Value>,
    pub(super) out_channels: Option<Value>,
    pub(super) kernel: Vec<Dim>,
    pub(super) stride: Vec<Dim>,
    pub(super) padding: Option<Value>,
    pub(super) output_padding: Vec<Dim>,
    pub(super) groups: Value,
    pub(super) dilation: Vec<Dim>,
    pub(super) transposed: bool,
}

pub(super) fn conv_forward(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    c: &ConvSpec,
    device: Option<Device>,
    range: TextRange,
) -> Value {
    let result = conv_forward_rule(meta, x, c, device);
    meta.settle(range, result)
}

/// The rule behind `conv_forward`: what torch raises is its `Err`.
fn conv_forward_rule(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    c: &ConvSpec,
    device: Option<Device>,
) -> RuleResult {
    let name = format!("conv{}d", c.n);
    let Some(dims) = meta.dims(x) else {
        return Ok(out_var(meta, x, x.dtype, device, &name));
    };
    let n = c.n;
    if dims.len() != n + 1 && dims.len() != n + 2 {
        let message = format!(
            "Expected {}D (unbatched) or {}D (batched) input to {name}, but got input of size: {}",
            n + 1,
            n + 2,
            meta.fmt_dims(&dims)
        );
        return raise(Code::ConvInput, message);
    }
    let cout = c
        .out_channels
        .as_ref()
        .map(|v| meta.size_dims(std::slice::from_ref(v))[0].clone())
        .unwrap_or_else(|| meta.env_mut().anonymous());
    check_channels(meta, c, &dims, &cout)?;
    let mut out = dims[..dims.len() - n - 1].to_vec();
    out.push(cout);
    // A setting we could not read (a symbolic stride, say) leaves the
    // spatial sizes unknown rather than taken as a default.
    if c.kernel.len() != n
        || c.stride.len() != n
        || c.dilation.len() != n
        || c.output_padding.len() != n
    {
        out.extend((0..n).map(|_| meta.env_mut().anonymous()));
        return Ok(out_known(meta, x, out, x.dtype, device, &name));
    }
    if c.transposed {
        check_output_padding(meta, c)?;
    }
    out.extend(output_sizes(meta, c, &dims[dims.len() - n..])?);
    Ok(out_known(meta, x, out, x.dtype, device, &name))
}

/// The input's channels against those the weight takes: a known
/// difference raises as torch does, naming the weight's shape; otherwise
/// they are taken as equal from here on.
fn check_channels(meta: &mut dyn Meta, c: &ConvSpec, dims: &[Dim], cout: &Dim) -> Result<(), Stop> {
    let n = c.n;
    let batched = dims.len() == n + 2;
    let ch = &dims[if batched { 1 } else { 0 }];
    let Some(cin) = c.in_channels.as_ref().and_then(|v| meta.as_dim(v)) else {
        return Ok(());
    };
    if !meta.env().known_different(ch, &cin) {
        let _ = meta.require_equal(ch, &cin);
        return Ok(());
    }
    let groups = meta.as_dim(&c.groups).unwrap_or_else(|| Dim::konst(1));
    let per_group = cin.floordiv(&groups).unwrap_or_else(|| cin.clone());
    let mut weight = if c.transposed {
        vec![cin.clone(), cout.floordiv(&groups).unwrap_or(cout.clone())]
    } else {
        vec![cout.clone(), per_group]
    };
    weight.extend(c.kernel.iter().cloned());
    // An unbatched input runs as a batch of one.
    let shown: Vec<Dim> = if batched {
        dims.to_vec()
    } else {
        std::iter::once(Dim::konst(1))
            .chain(dims.iter().cloned())
            .collect()
    };
    let message = if c.transposed {
        format!(
            "Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
            meta.fmt_dims(&weight),
            meta.fmt_dims(&shown),
            meta.fmt_dim(&cin),
            meta.fmt_dim(ch)
        )
    } else {
        format!(
            "Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
            meta.fmt_dim(&groups),
            meta.fmt_dims(&weight),
            meta.fmt_dims(&shown),
            meta.fmt_dim(&cin),
            meta.fmt_dim(ch)
        )
    };
    raise(Code::ConvInput, message)
}

/// A transposed convolution's output padding must be smaller than its
/// stride or its dilation in every dim; torch names each setting of each
/// dim in its message.
fn check_output_padding(meta: &dyn Meta, c: &ConvSpec) -> Result<(), Stop> {
    let n = c.n;
    let too_big = (0..n).any(|i| {
        let v = |d: Option<&Dim>| d.and_then(|d| meta.env().value(d));
        matches!(
            (v(c.output_padding.get(i)), v(c.stride.get(i)), v(c.dilation.get(i))),
            (Some(op), Some(s), Some(d)) if op >= s && op >= d
        )
    });
    if !too_big {
        return Ok(());
    }
    let v = |d: &[Dim], i: usize| d.get(i).and_then(|d| meta.env().value(d)).unwrap_or(0);
    let (h, w) = if n == 1 {
        (None, 0)
    } else {
        (Some(n - 2), n - 1)
    };
    let hv = |d: &[Dim], dflt: i64| h.map(|h| v(d, h)).unwrap_or(dflt);
    // A 3-d convolution names the depth too, first.
    let depth = |d: &[Dim], dflt: i64| if n == 3 { v(d, 0) } else { dflt };
    let message = if n == 3 {
        format!(
            "output padding must be smaller than either stride or dilation, but got output_padding_depth: {} output_padding_height: {} output_padding_width: {} stride_depth: {} stride_height: {} stride_width: {} dilation_depth: {} dilation_height: {} dilation_width: {}",
            depth(&c.output_padding, 0),
            hv(&c.output_padding, 0),
            v(&c.output_padding, w),
            depth(&c.stride, 1),
            hv(&c.stride, 1),
            v(&c.stride, w),
            depth(&c.dilation, 1),
            hv(&c.dilation, 1),
            v(&c.dilation, w)
        )
    } else {
        format!(
            "output padding must be smaller than either stride or dilation, but got output_padding_height: {} output_padding_width: {} stride_height: {} stride_width: {} dilation_height: {} dilation_width: {}",
            hv(&c.output_padding, 0),
            v(&c.output_padding, w),
            hv(&c.stride, 1),
            v(&c.stride, w),
            hv(&c.dilation, 1),
            v(&c.dilation, w)
        )
    };
    raise(Code::ConvInput, message)
}

/// The output's spatial sizes from the input's: torch's
/// `conv_output_size`, or for a transposed convolution the size whose
/// convolution gives the input. A kernel larger than the padded input
/// raises; padding it cannot read leaves the sizes unknown, as a stride
/// it cannot read does: the batch and the channels are still known.
fn output_sizes(meta: &mut dyn Meta, c: &ConvSpec, spatial_in: &[Dim]) -> Result<Vec<Dim>, Stop> {
    let n = c.n;
    let same = matches!(&c.padding, Some(Value::Str(s)) if &**s == "same");
    let padding = match &c.padding {
        Some(Value::Str(_)) => vec![Dim::konst(0); n],
        p => spatial_or(p.as_ref(), n, 0),
    };
    if padding.len() != n {
        return Ok((0..n).map(|_| meta.env_mut().anonymous()).collect());
    }
    let mut out_spatial = Vec::new();
    for i in 0..n {
        let l = &spatial_in[i];
        let k = &c.kernel[i];
        let d = c.dilation.get(i).cloned().unwrap_or_else(|| Dim::konst(1));
        let s = c.stride.get(i).cloned().unwrap_or_else(|| Dim::konst(1));
        let p = &padding[i];
        let keff = d.mul(&k.sub(&Dim::konst(1))).add(&Dim::konst(1));
        let len = if same {
            l.clone()
        } else if c.transposed {
            l.sub(&Dim::konst(1))
                .mul(&s)
                .sub(&p.mul(&Dim::konst(2)))
                .add(&keff)
                .add(&c.output_padding[i])
        } else {
            let padded = l.add(&p.mul(&Dim::konst(2)));
            if let (Some(pv), Some(kv)) = (meta.env().value(&padded), meta.env().value(&keff))
                && pv < kv
            {
                return raise(
                    Code::ConvInput,
                    kernel_too_big(meta, c, spatial_in, &padding),
                );
            }
            match padded.sub(&keff).floordiv(&s) {
                Some(q) => q.add(&Dim::konst(1)),
                None => meta.env_mut().anonymous(),
            }
        };
        out_spatial.push(len);
    }
    Ok(out_spatial)
}

/// torch's message for a kernel (dilated) larger than the padded input:
/// it prints every spatial dim, joined by ` x `.
fn kernel_too_big(meta: &dyn Meta, c: &ConvSpec, spatial_in: &[Dim], padding: &[Dim]) -> String {
    let all = |f: &dyn Fn(usize) -> Dim| {
        (0..c.n)
            .map(|j| meta.fmt_dim(&f(j)))
            .collect::<Vec<_>>()
            .join(" x ")
    };
    let padded_all = all(&|j| spatial_in[j].add(&padding[j].mul(&Dim::konst(2))));
    let kernel_all = all(&|j| {
        let d = c.dilation.get(j).cloned().unwrap_or_else(|| Dim::konst(1));
        d.mul(&c.kernel[j].sub(&Dim::konst(1))).add(&Dim::konst(1))
    });
    format!(
        "Calculated padded input size per channel: ({padded_all}). Kernel size: ({kernel_all}). Kernel size can't be greater than actual input size"
    )
}

/// `ConvTranspose(x, output_size=...)`: the output takes the requested size,
/// which must lie within one stride of the smallest output.
pub(super) fn conv_transpose_output_size(
    meta: &mut dyn Meta,
    x: &Rc<Tensor>,
    c: &ConvSpec,
    out: Value,
    (sizes, tuple): (&[Value], bool),
) -> RuleResult {
    let Value::Tensor(t) = &out else {
        return Ok(out);
    };
    let Some(mut dims) = meta.dims(t) else {
        return Ok(out);
    };
    let n = c.n;
    if dims.len() < n {
        return Ok(out);
    }
    let want = meta.size_dims(sizes);
    let base = dims.len() - n;
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    let mut bad = false;
    for i in 0..n {
        let min = dims[base + i].sub(&c.output_padding[i]);
        let max = min.add(&c.stride[i]).sub(&Dim::konst(1));
        if let (Some(w), Some(a), Some(b)) = (
            meta.env().value(&want[i]),
            meta.env().value(&min),
            meta.env().value(&max),
        ) && (w < a || w > b)
        {
            bad = true;
        }
        lo.push(min);
        hi.push(max);
    }
    if bad {
        let input = meta
            .dims(x)
            .map(|d| d[d.len() - n..].to_vec())
            .unwrap_or_default();
        let message = format!(
            "requested an output size of {}, but valid sizes range from {} to {} (for an input of torch.Size({}))",
            if tuple {
                meta.fmt_tuple(&want)
            } else {
                meta.fmt_dims(&want)
            },
            meta.fmt_dims(&lo),
            meta.fmt_dims(&hi),
            meta.fmt_dims(&input)
        );
        return raise(Code::ConvOutputSize, message);
    }
    dims[base..base + n].clone_from_slice(&want[..n]);
    Ok(out_known(
        meta,
        t,
        dims,
        t.dtype,
        t.device.clone(),
        "conv_transpose",
    ))
}
