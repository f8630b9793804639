//! `F.pad`, `F.interpolate`, `F.pixel_shuffle`, `F.unfold` and `F.grid_sample`: the functional ops
//! that resample or regroup an input's spatial dims.

use super::spatial::{spatial, spatial_or};
use crate::code::Code;
use crate::rules::Args;
use crate::rules::check::{RuleResult, Stop, check, raise};
use crate::rules::meta::Meta;
use crate::rules::ops::{out_known, out_shape, out_var};
use crate::rules::tail::suffix_shape;
use crate::value::Value;
use crate::value::{Device, Tensor};
use shapels_shapes::Dim;
use std::rc::Rc;

/// `F.pad`.
pub(super) fn pad_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    let pads = args.get(1, "pad").and_then(|v| v.items());
    if pads.as_ref().is_some_and(|p| p.len() % 2 != 0) {
        return raise(
            Code::PadSize,
            "Padding length must be divisible by 2".into(),
        );
    }
    let Some(dims) = meta.dims(x) else {
        return Ok(match pads {
            Some(pads) => pad_trailing(meta, name, x, &pads, device),
            None => out_var(meta, x, x.dtype, device, name),
        });
    };
    let Some(pads) = pads else {
        return Ok(Value::Unknown);
    };
    if pads.len() / 2 > dims.len() {
        let message = format!(
            "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {}",
            pads.len(),
            dims.len()
        );
        return raise(Code::PadSize, message);
    }
    let pads = meta.size_dims(&pads);
    let mode = args.str(2, "mode");
    let mode = mode.as_deref().unwrap_or("constant");
    if mode != "constant" {
        let (p, r) = (pads.len(), dims.len());
        if p > 6 || (p / 2 + 1 != r && p / 2 + 2 != r) {
            let message = format!("Padding size {p} is not supported for {r}D input tensor.");
            return raise(Code::PadSize, message);
        }
        for i in 0..p / 2 {
            let k = r - 1 - i;
            let (Some(size), Some(lo), Some(hi)) = (
                meta.env().value(&dims[k]),
                meta.env().value(&pads[2 * i]),
                meta.env().value(&pads[2 * i + 1]),
            ) else {
                continue;
            };
            let message = match mode {
                "reflect" if lo >= size || hi >= size => format!(
                    "Argument #{}: Padding size should be less than the corresponding input dimension, but got: padding ({lo}, {hi}) at dimension {k} of input {}",
                    4 + 2 * i,
                    meta.fmt_dims(&dims)
                ),
                "circular" if lo > size || hi > size => {
                    "Padding value causes wrapping around more than once.".to_string()
                }
                _ => continue,
            };
            return raise(Code::PadSize, message);
        }
    }
    Ok(out_known(
        meta,
        x,
        padded(&dims, &pads),
        x.dtype,
        device,
        name,
    ))
}

/// `dims` with their last ones grown by `pads`, which name the last dim
/// first (`(left, right, top, bottom)`).
fn padded(dims: &[Dim], pads: &[Dim]) -> Vec<Dim> {
    let mut out = dims.to_vec();
    let n = out.len();
    for (i, pair) in pads.chunks(2).enumerate() {
        out[n - 1 - i] = out[n - 1 - i].add(&pair[0]).add(&pair[1]);
    }
    out
}

/// `F.pad` of a tensor of unknown rank: torch refuses fewer dims than the
/// pads name, so the input has those last dims, and they grow by their
/// pads (`F.pad(mask, (1, 0))` of `[*batch, C]` is `[*batch, C + 1]`).
fn pad_trailing(
    meta: &mut dyn Meta,
    name: &str,
    x: &Rc<Tensor>,
    pads: &[Value],
    device: Option<Device>,
) -> Value {
    let pads = meta.size_dims(pads);
    let k = pads.len() / 2;
    // Two or three dims all padded are an image's or a volume's; a padding
    // that leaves the last dim be (`(0, 0, 0, n)`) pads a sequence.
    let zero = |d: &Dim| d.as_const() == Some(0);
    let all_padded = pads.chunks(2).all(|p| !(zero(&p[0]) && zero(&p[1])));
    let shape = match k {
        2 if all_padded => meta.demand_named_suffix(&x.shape, &["H", "W"]),
        3 if all_padded => meta.demand_named_suffix(&x.shape, &["D", "H", "W"]),
        _ => meta.demand_suffix(&x.shape, k),
    };
    let Some((var, suffix)) = shape.tail() else {
        return out_var(meta, x, x.dtype, device, name);
    };
    let out = padded(suffix, &pads)
        .into_iter()
        .map(|d| meta.bounded(d))
        .collect();
    out_shape(meta, x, suffix_shape(var, out), x.dtype, device, name)
}

/// `F.interpolate` and its kin.
pub(super) fn interpolate_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    if meta.dims(x).is_none() {
        // The mode or the number of sizes says how many spatial dims
        // the input has (torch refuses any other rank): batch and
        // channels come before them.
        if let Some(k) = interpolated_dims(name, args) {
            let names: &[&str] = match k {
                1 => &["N", "C", "L"],
                2 => &["N", "C", "H", "W"],
                _ => &["N", "C", "D", "H", "W"],
            };
            meta.demand_rank(&x.shape, names);
        }
    }
    let Some(dims) = meta.dims(x) else {
        return Ok(out_var(meta, x, x.dtype, device, name));
    };
    let mode = args.str(3, "mode");
    let mode = mode.as_deref().unwrap_or(match name {
        "upsample_bilinear" => "bilinear",
        _ => "nearest",
    });
    // Torch reads `size` and `scale_factor` before it looks at the rank.
    let size = args.get(1, "size").filter(|v| !v.is_none()).cloned();
    let scale = args
        .get(2, "scale_factor")
        .filter(|v| !v.is_none())
        .cloned();
    check_output_request(meta, dims.get(2..).unwrap_or_default(), &size, &scale)?;
    let r = dims.len();
    let need = match mode {
        "linear" => Some(3),
        "bilinear" => Some(4),
        "trilinear" => Some(5),
        _ => None,
    };
    if !(3..=5).contains(&r) || (mode == "bicubic" && r != 4) {
        let message = format!(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got {r}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
        );
        return raise(Code::InterpolateSize, message);
    }
    if let Some(k) = need
        && k != r
    {
        let message = format!("Got {r}D input, but {mode} mode needs {k}D input");
        return raise(Code::InterpolateSize, message);
    }
    let n = dims.len() - 2;
    let mut out = dims[..2].to_vec();
    match (size, scale) {
        (Some(s), None) => {
            // Sizes the analysis cannot enumerate (`size=low.shape[-2:]`
            // of a tensor of unknown rank) are as many unknown sizes.
            let sizes = match &s {
                Value::Int(_) => vec![s.clone(); n],
                v => v.items().unwrap_or_else(|| {
                    (0..n)
                        .map(|_| Value::Int(meta.env_mut().anonymous()))
                        .collect()
                }),
            };
            out.extend(meta.size_dims(&sizes));
        }
        (None, Some(f)) => {
            let factors = match &f {
                Value::Int(_) | Value::Float(_) => vec![f.clone(); n],
                v => v.items().unwrap_or_default(),
            };
            for (i, l) in dims[2..].iter().enumerate() {
                let d = match factors.get(i) {
                    Some(Value::Int(k)) => l.mul(k),
                    Some(Value::Float(Some(f))) => match meta.env().value(l) {
                        Some(v) => Dim::konst((v as f64 * f).floor() as i64),
                        None if f.fract() == 0.0 => l.mul(&Dim::konst(*f as i64)),
                        None => meta.env_mut().anonymous(),
                    },
                    _ => meta.env_mut().anonymous(),
                };
                out.push(d);
            }
        }
        // Neither (a run on made-up inputs kept `None` defaults that any
        // real caller of the module may have set) or both (refused above).
        (None, None) | (Some(_), Some(_)) => return Ok(Value::Unknown),
    }
    Ok(out_known(meta, x, out, x.dtype, device, name))
}

/// Torch's checks of what `F.interpolate` is asked for, made before it
/// looks at the input's rank: `size` or `scale_factor`, not both, and as
/// many of them as the input has spatial dims (`spatial`).
fn check_output_request(
    meta: &mut dyn Meta,
    spatial: &[Dim],
    size: &Option<Value>,
    scale: &Option<Value>,
) -> Result<(), Stop> {
    // As Python prints the argument: `(4, 4)`, `[4, 4]`, `(2.0, 2.0)`;
    // `None` when an item is nothing the analysis can print.
    let written = |meta: &dyn Meta, v: &Value| -> Option<String> {
        let items = v.items()?;
        let parts: Option<Vec<String>> = items
            .iter()
            .map(|item| match item {
                Value::Int(d) => Some(meta.fmt_dim(d)),
                Value::Float(Some(f)) => Some(format!("{f:?}")),
                Value::Opaque(name) => Some(name.to_string()),
                // A size the analysis cannot read still counts.
                Value::Unknown | Value::Float(None) => Some("?".to_string()),
                _ => None,
            })
            .collect();
        let parts = parts?;
        Some(match (v, parts.as_slice()) {
            (Value::List(_), _) => format!("[{}]", parts.join(", ")),
            (_, [one]) => format!("({one},)"),
            _ => format!("({})", parts.join(", ")),
        })
    };
    let n = spatial.len();
    let (message, asked) = match (size, scale) {
        // A value that may be `None` (set on some paths only, or nothing the
        // analysis can read) is no conflict: `size` where a fixed size is
        // given and `scale_factor` where it is not meet here from paths
        // whose pairing is not known.
        (Some(a), Some(b))
            if !certainly_set(a)
                || !certainly_set(b)
                || meta.keyword_maybe_none("size")
                || meta.keyword_maybe_none("scale_factor") =>
        {
            return Ok(());
        }
        (Some(_), Some(_)) => {
            return raise(
                Code::InterpolateSize,
                "only one of size or scale_factor should be defined".into(),
            );
        }
        (None, None) if meta.made_up_run() => return Ok(()),
        (None, None) => {
            return raise(
                Code::InterpolateSize,
                "either size or scale_factor should be defined".into(),
            );
        }
        (Some(v), None) => ("output size of", v),
        (None, Some(v)) => ("scale_factor of shape", v),
    };
    let Some(count) = asked.items().map(|items| items.len()) else {
        return Ok(());
    };
    if count == n {
        return Ok(());
    }
    let Some(shown) = written(meta, asked) else {
        return Ok(());
    };
    let (what, format) = match size {
        Some(_) => ("output", "output size in (o1, o2, ...,oK)"),
        None => ("scale_factor", "scale_factor in (s1, s2, ...,sK)"),
    };
    raise(
        Code::InterpolateSize,
        format!(
            "Input and {what} must have the same number of spatial dimensions, but got input with spatial dimensions of {} and {message} {shown}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and {format} format.",
            meta.fmt_dims(spatial)
        ),
    )
}

/// `F.pixel_shuffle` and its kin.
pub(super) fn pixel_shuffle_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    let Some(dims) = meta.dims(x) else {
        return Ok(Value::Unknown);
    };
    let Some(r) = args
        .get(1, "upscale_factor")
        .or(args.get(1, "downscale_factor"))
        .and_then(|v| {
            if let Value::Int(d) = v {
                Some(d.clone())
            } else {
                None
            }
        })
    else {
        return Ok(Value::Unknown);
    };
    let n = dims.len();
    check!(
        n >= 3,
        Code::LayerInput,
        "{name} expects input to have at least 3 dimensions, but got input with {n} dimension(s)"
    );
    let factor = if name == "pixel_shuffle" {
        "upscale_factor"
    } else {
        "downscale_factor"
    };
    if let Some(k) = meta.env().value(&r) {
        check!(
            k > 0,
            Code::LayerInput,
            "{name} expects a positive {factor}, but got {k}"
        );
        // The sizes torch divides by the factor must divide exactly
        // (a square past int64 divides no size the analysis knows:
        // it is left alone).
        let divided: &[(usize, &str, Option<i64>, &str)] = if name == "pixel_shuffle" {
            &[(
                n - 3,
                "its input's 'channel' dimension",
                k.checked_mul(k),
                "the square of ",
            )]
        } else {
            &[
                (n - 2, "height", Some(k), ""),
                (n - 1, "width", Some(k), ""),
            ]
        };
        for &(i, what, by, square) in divided {
            if let (Some(size), Some(by)) = (meta.env().value(&dims[i]), by) {
                check!(
                    size % by == 0,
                    Code::LayerInput,
                    "{name} expects {what} to be divisible by {square}{factor}, but input.size({})={size} is not divisible by {by}",
                    i as i64 - n as i64
                );
            }
        }
    }
    let r2 = r.mul(&r);
    let mut out = dims.clone();
    if name == "pixel_shuffle" {
        out[n - 3] = dims[n - 3]
            .floordiv(&r2)
            .unwrap_or_else(|| meta.env_mut().anonymous());
        out[n - 2] = dims[n - 2].mul(&r);
        out[n - 1] = dims[n - 1].mul(&r);
    } else {
        out[n - 3] = dims[n - 3].mul(&r2);
        out[n - 2] = dims[n - 2]
            .floordiv(&r)
            .unwrap_or_else(|| meta.env_mut().anonymous());
        out[n - 1] = dims[n - 1]
            .floordiv(&r)
            .unwrap_or_else(|| meta.env_mut().anonymous());
    }
    Ok(out_known(meta, x, out, x.dtype, device, name))
}

/// `F.unfold`.
pub(super) fn unfold_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    // An input of unknown rank gives blocks of unknown rank (two dims
    // without a batch, three with one), still a tensor.
    let Some(dims) = meta.dims(x) else {
        return Ok(out_var(meta, x, x.dtype, device, name));
    };
    // A batch of images, or one image without a batch dim.
    let batched = match dims.len() {
        4 => true,
        3 => false,
        _ => return Ok(Value::Unknown),
    };
    let lead = usize::from(batched);
    let kernel = spatial(args.get(1, "kernel_size"), 2);
    let dilation = spatial_or(args.get(2, "dilation"), 2, 1);
    let padding = spatial_or(args.get(3, "padding"), 2, 0);
    let stride = spatial_or(args.get(4, "stride"), 2, 1);
    // A setting the analysis cannot read gives no list of two.
    if [&kernel, &dilation, &padding, &stride]
        .iter()
        .any(|s| s.len() != 2)
    {
        return Ok(Value::Unknown);
    }
    let spatial_dims = &dims[lead + 1..];
    // torch's kernel refuses a count of blocks below one.
    if let Some(counts) = block_counts(meta, spatial_dims, [&kernel, &dilation, &padding, &stride])
        && counts.iter().any(|&n| n < 1)
    {
        let message = format!(
            "Given input with spatial size {}, kernel_size={}, dilation={}, padding={}, calculated shape of the array of sliding blocks as ({}, {}), but its components must be at least one.",
            pair(meta, spatial_dims),
            pair(meta, &kernel),
            pair(meta, &dilation),
            pair(meta, &padding),
            counts[0],
            counts[1]
        );
        return raise(Code::ConvOutputSize, message);
    }
    let mut blocks = Dim::konst(1);
    for i in 0..2 {
        let keff = dilation[i]
            .mul(&kernel[i].sub(&Dim::konst(1)))
            .add(&Dim::konst(1));
        let n = spatial_dims[i]
            .add(&padding[i].mul(&Dim::konst(2)))
            .sub(&keff)
            .floordiv(&stride[i])
            .map(|q| q.add(&Dim::konst(1)));
        blocks = blocks.mul(&n.unwrap_or_else(|| meta.env_mut().anonymous()));
    }
    let c = dims[lead].mul(&kernel[0]).mul(&kernel[1]);
    let mut shape = dims[..lead].to_vec();
    shape.extend([c, blocks]);
    Ok(out_known(meta, x, shape, x.dtype, device, name))
}

/// `F.grid_sample`.
pub(super) fn grid_sample_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    let Some(g) = args.tensor(1, "grid") else {
        return Ok(Value::Unknown);
    };
    let (Some(xd), Some(gd)) = (meta.dims(x), meta.dims(&g)) else {
        return Ok(Value::Unknown);
    };
    if xd.len() != 4 || gd.len() != 4 {
        return Ok(Value::Unknown);
    }
    Ok(out_known(
        meta,
        x,
        vec![xd[0].clone(), xd[1].clone(), gd[1].clone(), gd[2].clone()],
        x.dtype,
        device,
        name,
    ))
}

/// How many spatial dims an interpolation works on, when its mode or its
/// sizes say (`size=(h, w)`, `mode="bilinear"`).
pub(super) fn interpolated_dims(name: &str, args: &Args) -> Option<usize> {
    let mode = args.str(3, "mode");
    let by_mode = match mode.as_deref().unwrap_or(match name {
        "upsample_bilinear" => "bilinear",
        _ => "",
    }) {
        "linear" => Some(1),
        "bilinear" | "bicubic" => Some(2),
        "trilinear" => Some(3),
        _ => None,
    };
    let counted = |v: Option<&Value>| match v {
        Some(v @ (Value::Tuple(_) | Value::List(_) | Value::SizeOfVar(..))) => {
            v.items().map(|items| items.len())
        }
        _ => None,
    };
    let by_sizes = counted(args.get(1, "size")).or_else(|| counted(args.get(2, "scale_factor")));
    by_mode
        .or(by_sizes)
        .filter(|k| (1..=3).contains(k) && by_sizes.is_none_or(|n| n == *k))
}

/// `F.fold(input, output_size, kernel_size, dilation=1, padding=0,
/// stride=1)`: the inverse of `unfold`, blocks `[N, C*kh*kw, L]` summed
/// back into images `[N, C, *output_size]`. torch names the dims of the
/// batched form (1 and 2) for an unbatched input too.
pub(super) fn fold_rule(
    meta: &mut dyn Meta,
    name: &str,
    (x, args): (&Rc<Tensor>, &Args),
    device: Option<Device>,
) -> RuleResult {
    let Some(dims) = meta.dims(x) else {
        return Ok(Value::Unknown);
    };
    let lead = match dims.len() {
        3 => 1,
        2 => 0,
        _ => {
            let message = format!(
                "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {}",
                meta.fmt_dims(&dims)
            );
            return raise(Code::LayerInput, message);
        }
    };
    let output = spatial(args.get(1, "output_size"), 2);
    let kernel = spatial(args.get(2, "kernel_size"), 2);
    let dilation = spatial_or(args.get(3, "dilation"), 2, 1);
    let padding = spatial_or(args.get(4, "padding"), 2, 0);
    let stride = spatial_or(args.get(5, "stride"), 2, 1);
    if [&output, &kernel, &dilation, &padding, &stride]
        .iter()
        .any(|s| s.len() != 2)
    {
        return Ok(Value::Unknown);
    }
    let (columns, blocks) = (&dims[lead], &dims[lead + 1]);
    let kernel_numel = kernel[0].mul(&kernel[1]);
    if let (Some(c), Some(k)) = (meta.env().value(columns), meta.env().value(&kernel_numel))
        && k > 0
        && c % k != 0
    {
        let message = format!(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={c} and kernel_size={}.",
            pair(meta, &kernel)
        );
        return raise(Code::LayerInput, message);
    }
    if let Some(counts) = block_counts(meta, &output, [&kernel, &dilation, &padding, &stride])
        && let Some(total) = counts[0].checked_mul(counts[1])
        && let Some(l) = meta.env().value(blocks)
        && total != l
    {
        let message = format!(
            "Given output_size={}, kernel_size={}, dilation={}, padding={}, stride={}, expected size of input's dimension 2 to match the calculated number of sliding blocks {} * {} = {}, but got input.size(2)={l}.",
            pair(meta, &output),
            pair(meta, &kernel),
            pair(meta, &dilation),
            pair(meta, &padding),
            pair(meta, &stride),
            counts[0],
            counts[1],
            total
        );
        return raise(Code::LayerInput, message);
    }
    let Some(channels) = columns.floordiv(&kernel_numel) else {
        return Ok(Value::Unknown);
    };
    let mut shape = dims[..lead].to_vec();
    shape.push(channels);
    shape.extend(output.iter().cloned());
    Ok(out_known(meta, x, shape, x.dtype, device, name))
}

/// How many blocks `unfold` cuts from each of two spatial sizes (and
/// `fold` sums into them), counted as torch's kernels count them: in C++
/// integers, dividing toward zero. `None` unless every setting is known.
fn block_counts(
    meta: &dyn Meta,
    sizes: &[Dim],
    [kernel, dilation, padding, stride]: [&[Dim]; 4],
) -> Option<Vec<i64>> {
    let value = |d: &Dim| meta.env().value(d);
    (0..2)
        .map(|i| {
            let (size, k, d, p, s) = (
                value(sizes.get(i)?)?,
                value(kernel.get(i)?)?,
                value(dilation.get(i)?)?,
                value(padding.get(i)?)?,
                value(stride.get(i)?)?,
            );
            if s <= 0 {
                return None;
            }
            let span = d.checked_mul(k.checked_sub(1)?)?.checked_add(1)?;
            let room = size.checked_add(p.checked_mul(2)?)?.checked_sub(span)?;
            (room / s).checked_add(1)
        })
        .collect()
}

/// Two sizes as torch prints a pair of settings: `(5, 5)`.
fn pair(meta: &dyn Meta, v: &[Dim]) -> String {
    format!("({}, {})", meta.fmt_dim(&v[0]), meta.fmt_dim(&v[1]))
}

/// Whether an argument is set on every path: not `None` on some, and not a
/// value nobody can read (which may be `None`).
fn certainly_set(v: &Value) -> bool {
    !v.maybe_none() && !matches!(v, Value::Unknown | Value::Opaque(_) | Value::None)
}
