//! Type promotion (spec §3.1): the dtype of a pointwise op's result.

use crate::value::{DType, Value};

/// A pointwise op's result dtype from its operands, torch's way: the
/// highest category wins; within it, dimensioned tensors beat 0-dim ones,
/// which beat Python scalars.
pub(crate) fn promote(operands: &[(&Value, Option<usize>)]) -> Option<DType> {
    let mut category = 0u8;
    let mut dimensioned: Option<DType> = None;
    let mut zero_dim: Option<DType> = None;
    let mut unknown = false;
    for (v, rank) in operands {
        match v {
            Value::Tensor(t) => {
                let Some(d) = t.dtype else {
                    unknown = true;
                    continue;
                };
                category = category.max(d.category());
                match rank {
                    Some(0) => zero_dim = Some(join_opt(zero_dim, d)),
                    Some(_) => dimensioned = Some(join_opt(dimensioned, d)),
                    None => unknown = true,
                }
            }
            Value::Bool(_) => {}
            Value::Int(_) => category = category.max(1),
            Value::Float(_) => category = category.max(2),
            // A value the analysis cannot read may be a complex number
            // (`1j`) or a tensor of any dtype: the result's is unknown.
            _ => unknown = true,
        }
    }
    if unknown {
        return None;
    }
    let pick = |d: Option<DType>| d.filter(|d| d.category() == category);
    Some(
        pick(dimensioned)
            .or(pick(zero_dim))
            .unwrap_or(match category {
                0 => DType::Bool,
                1 => DType::Int64,
                2 => DType::Float32,
                _ => match dimensioned.or(zero_dim) {
                    Some(DType::Float64) => DType::Complex128,
                    _ => DType::Complex64,
                },
            }),
    )
}

fn join_opt(a: Option<DType>, b: DType) -> DType {
    match a {
        None => b,
        Some(a) => join(a, b),
    }
}

/// The least upper bound of two dtypes in torch's lattice.
pub(crate) fn join(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    let rank = |d: DType| match d {
        Bool => 0,
        UInt8 | Int8 => 1,
        UInt16 | Int16 => 2,
        UInt32 | Int32 => 3,
        UInt64 | Int64 => 4,
        Float16 | BFloat16 => 5,
        Float32 => 6,
        Float64 => 7,
        Complex64 => 8,
        Complex128 => 9,
    };
    match (a, b) {
        (UInt8, Int8) | (Int8, UInt8) => Int16,
        (Float16, BFloat16) | (BFloat16, Float16) => Float32,
        // complex64 with a double takes the double's precision
        (Complex64, Float64) | (Float64, Complex64) => Complex128,
        _ => {
            if rank(a) >= rank(b) {
                a
            } else {
                b
            }
        }
    }
}

/// Integer and bool results become the default float (true division, sqrt, exp, ...).
pub(crate) fn int_to_float(d: Option<DType>) -> Option<DType> {
    d.map(|d| if d.category() <= 1 { DType::Float32 } else { d })
}

/// Sums of bools and integers are int64.
pub(crate) fn sum_dtype(d: Option<DType>) -> Option<DType> {
    d.map(|d| if d.category() <= 1 { DType::Int64 } else { d })
}

/// Used by rules to describe dtype-mixing errors.
/// c10's C++ spelling of a dtype, as kernels' messages print it
/// (`Input type (unsigned char) and bias type (float) should be the same`).
pub(crate) fn cpp_name(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
        DType::Float64 => "double",
        DType::Float16 => "c10::Half",
        DType::BFloat16 => "c10::BFloat16",
        DType::Int64 => "long int",
        DType::Int32 => "int",
        DType::Int16 => "short int",
        DType::Int8 => "signed char",
        DType::UInt8 => "unsigned char",
        DType::UInt16 => "unsigned short",
        DType::UInt32 => "unsigned int",
        DType::UInt64 => "unsigned long",
        DType::Bool => "bool",
        DType::Complex64 => "c10::complex<float>",
        DType::Complex128 => "c10::complex<double>",
    }
}

/// What `mm` raises when its two matrices' dtypes differ (a product
/// without a bias: `x @ w`, `F.linear(x, w)`, a bias-free layer).
pub(crate) fn mm_dtype_message(a: DType, b: DType) -> String {
    format!(
        "expected m1 and m2 to have the same dtype, but got: {} != {}",
        cpp_name(a),
        cpp_name(b)
    )
}

/// What `addmm` raises when its two matrices' dtypes differ (a product
/// with a bias: `nn.Linear`, `F.linear(x, w, b)`, a recurrent cell).
pub(crate) fn addmm_dtype_message(a: DType, b: DType) -> String {
    format!(
        "mat1 and mat2 must have the same dtype, but got {} and {}",
        torch_name(a),
        torch_name(b)
    )
}

pub(crate) fn torch_name(d: DType) -> &'static str {
    match d {
        DType::Float32 => "Float",
        DType::Float64 => "Double",
        DType::Float16 => "Half",
        DType::BFloat16 => "BFloat16",
        DType::Int64 => "Long",
        DType::Int32 => "Int",
        DType::Int16 => "Short",
        DType::Int8 => "Char",
        DType::UInt8 => "Byte",
        DType::UInt16 => "UInt16",
        DType::UInt32 => "UInt32",
        DType::UInt64 => "UInt64",
        DType::Bool => "Bool",
        DType::Complex64 => "ComplexFloat",
        DType::Complex128 => "ComplexDouble",
    }
}

/// How torch prints a tensor's type in messages that name it (`expand`'s):
/// the legacy class of the common dtypes (`torch.FloatTensor`,
/// `torch.cuda.LongTensor`), the backend and scalar type of the others
/// (`CPUBoolType`). An unknown dtype prints as the default float's.
pub(crate) fn legacy_type_name(
    dtype: Option<DType>,
    device: Option<&crate::value::Device>,
) -> String {
    let cuda = matches!(device, Some(crate::value::Device::Cuda(_)));
    let dtype = dtype.unwrap_or(DType::Float32);
    let legacy = match dtype {
        DType::Float32
        | DType::Float64
        | DType::Float16
        | DType::Int64
        | DType::Int32
        | DType::Int16
        | DType::Int8
        | DType::UInt8 => Some(torch_name(dtype)),
        _ => None,
    };
    match (legacy, cuda) {
        (Some(name), false) => format!("torch.{name}Tensor"),
        (Some(name), true) => format!("torch.cuda.{name}Tensor"),
        (None, false) => format!("CPU{}Type", torch_name(dtype)),
        (None, true) => format!("CUDA{}Type", torch_name(dtype)),
    }
}
