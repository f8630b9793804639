//! Complex numbers: `polar` and `complex` build them, `view_as_complex` and
//! `view_as_real` reinterpret a last dim of 2 floats, `real`/`imag` take a part
//! (the rotary embeddings of LLaMA-style models go through all of them), and
//! `stft` makes a spectrogram of them from a signal.

use shapels_shapes::Dim;

use super::OpCall;
use super::output::out_known;
use crate::code::Code;
use crate::rules::check::{RuleResult, raise};
use crate::rules::dtype::torch_name;
use crate::rules::meta::Meta;
use crate::rules::shape::broadcast;
use crate::value::{DType, Value};

/// The dtypes torch builds complex numbers from.
fn has_complex(d: DType) -> bool {
    matches!(d, DType::Float16 | DType::Float32 | DType::Float64)
}

/// The complex dtype with parts of `d`, for the float dtypes torch builds
/// complex tensors from (half makes `complex32`).
pub(super) fn complex_of(d: DType) -> Option<DType> {
    if has_complex(d) { d.to_complex() } else { None }
}

/// The float dtype of the parts of a complex `d`.
pub(super) fn part_of(d: DType) -> Option<DType> {
    d.is_complex().then(|| d.to_real())
}

/// `torch.polar(abs, angle)`, `torch.complex(real, imag)`: two float
/// tensors of one dtype, broadcast together.
pub(super) fn from_pair(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let second = if call.name == "polar" {
        "angle"
    } else {
        "imag"
    };
    let Some(y) = call.args.tensor(1, second) else {
        return Ok(Value::Unknown);
    };
    match (call.x.dtype, y.dtype) {
        (Some(a), Some(b)) if has_complex(a) && has_complex(b) && a != b => {
            let message = format!(
                "Expected object of scalar type {} but got scalar type {} for second argument",
                torch_name(a),
                torch_name(b)
            );
            return raise(Code::DtypeMismatch, message);
        }
        (Some(a), Some(b)) if !has_complex(a) || !has_complex(b) => {
            let message = format!(
                "Expected both inputs to be Half, Float or Double tensors but got {} and {}",
                torch_name(a),
                torch_name(b)
            );
            return raise(Code::DtypeUnsupported, message);
        }
        _ => {}
    }
    let Some(dy) = meta.dims(&y) else {
        return Ok(Value::Unknown);
    };
    let shape = match broadcast(meta, &call.dims, &dy) {
        Ok(shape) => shape,
        Err(message) => {
            return raise(Code::BroadcastShape, message);
        }
    };
    let dtype = call.x.dtype.and_then(complex_of);
    Ok(out_known(
        meta,
        &call.x,
        shape,
        dtype,
        call.device,
        call.name,
    ))
}

/// `torch.view_as_complex(x)`: a float tensor whose last dim holds the two
/// parts; that dim goes.
pub(super) fn view_as_complex(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    if let Some(d) = call.x.dtype
        && !has_complex(d)
    {
        let message = format!(
            "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {}",
            torch_name(d)
        );
        return raise(Code::DtypeUnsupported, message);
    }
    let Some((last, rest)) = call.dims.split_last() else {
        let message = "Input tensor must have one or more dimensions".to_string();
        return raise(Code::ViewSize, message);
    };
    if meta.env().known_different(last, &Dim::konst(2)) {
        let message = "Tensor must have a last dimension of size 2".to_string();
        return raise(Code::ViewSize, message);
    }
    // torch checks the size: past this point it is 2.
    let _ = meta.env_mut().unify(last, &Dim::konst(2));
    let dtype = call.x.dtype.and_then(complex_of);
    Ok(out_known(
        meta,
        &call.x,
        rest.to_vec(),
        dtype,
        call.device,
        call.name,
    ))
}

/// `torch.view_as_real(z)`: a complex tensor as its two parts, in a new
/// last dim of 2.
pub(super) fn view_as_real(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let dtype = match call.x.dtype {
        Some(d) if !d.is_complex() => {
            let message = "view_as_real is only supported for complex tensors".to_string();
            return raise(Code::DtypeUnsupported, message);
        }
        d => d.and_then(part_of),
    };
    let mut dims = call.dims.clone();
    dims.push(Dim::konst(2));
    Ok(out_known(
        meta,
        &call.x,
        dims,
        dtype,
        call.device,
        call.name,
    ))
}

/// `torch.stft(x, n_fft, hop_length, win_length, window, center, pad_mode,
/// normalized, onesided, return_complex)` of a signal `[L]` or `[B, L]`:
/// `[B, n_fft // 2 + 1, frames]` complex (all `n_fft` frequencies when not
/// one-sided; real and imaginary parts in a last dim of 2 with
/// `return_complex=False`). Unknown when `return_complex` is not given,
/// which torch refuses for a real signal.
pub(super) fn stft(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    let args = call.args;
    let (Some(n_fft), Some(Some(center)), Some(Some(complex))) = (
        args.get(1, "n_fft").cloned().and_then(|v| meta.as_dim(&v)),
        Some(args.flag(5, "center", true)),
        args.get(9, "return_complex").map(|v| match v {
            Value::Bool(b) => *b,
            _ => None,
        }),
    ) else {
        return Ok(Value::Unknown);
    };
    let hop = match args.get(2, "hop_length") {
        None | Some(Value::None) => n_fft.floordiv(&Dim::konst(4)),
        Some(v) => meta.as_dim(&v.clone()),
    };
    let (Some(hop), Some(one_sided), [batch @ .., length]) =
        (hop, args.flag(8, "onesided", true), call.dims.as_slice())
    else {
        return Ok(Value::Unknown);
    };
    if batch.len() > 1 {
        return Ok(Value::Unknown);
    }
    let padded = if center {
        length.clone()
    } else {
        length.sub(&n_fft)
    };
    let (Some(steps), Some(half)) = (padded.floordiv(&hop), n_fft.floordiv(&Dim::konst(2))) else {
        return Ok(Value::Unknown);
    };
    let frequencies = if one_sided {
        half.add(&Dim::konst(1))
    } else {
        n_fft
    };
    let mut dims = batch.to_vec();
    dims.push(frequencies);
    dims.push(steps.add(&Dim::konst(1)));
    let dtype = if complex {
        call.x.dtype.and_then(complex_of)
    } else {
        dims.push(Dim::konst(2));
        call.x.dtype
    };
    Ok(out_known(
        meta,
        &call.x,
        dims,
        dtype,
        call.device,
        call.name,
    ))
}

/// `x.real`, `x.imag`: a part of a complex tensor; `real` of a real one is
/// itself.
pub(super) fn part(meta: &mut dyn Meta, call: OpCall<'_>) -> RuleResult {
    match call.x.dtype {
        Some(d) if d.is_complex() => Ok(out_known(
            meta,
            &call.x,
            call.dims,
            part_of(d),
            call.device,
            call.name,
        )),
        Some(_) if call.name == "imag" => {
            let message =
                "imag is not implemented for tensors with non-complex dtypes.".to_string();
            meta.report(call.range, Code::DtypeUnsupported, message);
            Ok(Value::Unknown)
        }
        Some(_) => Ok(Value::Tensor(call.x.clone())),
        None => Ok(out_known(
            meta,
            &call.x,
            call.dims,
            None,
            call.device,
            call.name,
        )),
    }
}
