//! Type promotion (spec §3.1): the dtype of a pointwise op's result.

use crate::value::{DType, Value};

/// A pointwise op's result dtype from its operands, as torch's
/// `result_type` computes it: the dimensioned tensors' dtypes joined, then
/// the 0-dim tensors', then the Python numbers' (at the default dtypes);
/// a later group only counts where its category is higher, and a complex
/// number makes a float result complex with parts as wide (`float16` with
/// `1j` is `complex32`).
///
/// A tensor of unknown rank (`None`) may be 0-dim or not: the result is
/// known when both cases give the same (`x * x`, an int64 `[*bs, 3]` times
/// an int64 vector).
pub(crate) fn promote(operands: &[(&Value, Option<usize>)]) -> Option<DType> {
    let unknown: Vec<usize> = operands
        .iter()
        .enumerate()
        .filter(|(_, (v, rank))| matches!(v, Value::Tensor(_)) && rank.is_none())
        .map(|(i, _)| i)
        .collect();
    if unknown.is_empty() {
        return promote_ranked(operands);
    }
    if unknown.len() > 4 {
        return None;
    }
    let mut agreed: Option<DType> = None;
    for case in 0..(1u32 << unknown.len()) {
        let ranked: Vec<(&Value, Option<usize>)> = operands
            .iter()
            .enumerate()
            .map(
                |(i, (v, rank))| match unknown.iter().position(|u| *u == i) {
                    Some(bit) => (*v, Some(((case >> bit) & 1) as usize)),
                    None => (*v, *rank),
                },
            )
            .collect();
        let d = promote_ranked(&ranked)?;
        if agreed.is_some_and(|a| a != d) {
            return None;
        }
        agreed = Some(d);
    }
    agreed
}

/// `promote` with every tensor's rank known.
fn promote_ranked(operands: &[(&Value, Option<usize>)]) -> Option<DType> {
    let mut dimensioned: Option<DType> = None;
    let mut zero_dim: Option<DType> = None;
    let mut wrapped: Option<DType> = None;
    for (v, rank) in operands {
        let (group, d) = match v {
            Value::Tensor(t) => {
                let d = t.dtype?;
                match rank {
                    Some(0) => (&mut zero_dim, d),
                    Some(_) => (&mut dimensioned, d),
                    None => return None,
                }
            }
            Value::Bool(_) => (&mut wrapped, DType::Bool),
            Value::Int(_) => (&mut wrapped, DType::Int64),
            Value::Float(_) => (&mut wrapped, DType::Float32),
            Value::Complex => (&mut wrapped, DType::Complex64),
            // A value the analysis cannot read may be a number of any kind
            // or a tensor of any dtype: the result's is unknown.
            _ => return None,
        };
        *group = Some(join_opt(*group, d));
    }
    combine_categories(dimensioned, combine_categories(zero_dim, wrapped))
}

/// c10's `combine_categories`: `higher` (the group that outranks) keeps its
/// dtype unless `lower` is of a higher category.
fn combine_categories(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    let Some(high) = higher else {
        return lower;
    };
    let Some(low) = lower else {
        return higher;
    };
    Some(if high.is_complex() {
        high
    } else if low.is_complex() {
        high.to_complex().unwrap_or(low)
    } else if high.is_floating() {
        high
    } else if high == DType::Bool || low.is_floating() {
        join(high, low)
    } else {
        high
    })
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
    // A complex result has parts as wide as both operands' real parts
    // (`complex32` with `bfloat16` is `complex64`, as half with bfloat16 is
    // float).
    if a.is_complex() || b.is_complex() {
        return join(a.to_real(), b.to_real())
            .to_complex()
            .unwrap_or(Complex64);
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
        ComplexHalf | BComplex32 | Complex64 => 8,
        Complex128 => 9,
    };
    match (a, b) {
        (UInt8, Int8) | (Int8, UInt8) => Int16,
        (Float16, BFloat16) | (BFloat16, Float16) => Float32,
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
        DType::ComplexHalf => "c10::complex<c10::Half>",
        DType::BComplex32 => "c10::complex<c10::BFloat16>",
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
        DType::ComplexHalf => "ComplexHalf",
        DType::BComplex32 => "BComplex32",
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

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;
    use crate::rules::meta::testing::TestMeta;

    fn of(meta: &mut TestMeta, dtype: DType) -> Value {
        let Value::Tensor(t) = meta.tensor(&[3]) else {
            unreachable!("a test tensor is a tensor")
        };
        Value::Tensor(Rc::new(crate::value::Tensor {
            dtype: Some(dtype),
            ..(*t).clone()
        }))
    }

    #[test]
    fn unknown_rank_promotes_where_both_cases_agree() {
        let mut meta = TestMeta::new();
        let (i32_, i64_) = (of(&mut meta, DType::Int32), of(&mut meta, DType::Int64));
        let (f32_, f64_) = (of(&mut meta, DType::Float32), of(&mut meta, DType::Float64));
        // 0-dim or not, an int32 with an int64 vector is int64.
        assert_eq!(
            promote(&[(&i32_, None), (&i64_, Some(1))]),
            Some(DType::Int64)
        );
        assert_eq!(
            promote(&[(&f64_, None), (&f64_, None)]),
            Some(DType::Float64)
        );
        // A 0-dim float64 leaves a float32 vector float32; a float64 with
        // dims makes it float64: which, the rank decides.
        assert_eq!(promote(&[(&f64_, None), (&f32_, Some(1))]), None);
        assert_eq!(
            promote(&[(&f32_, None), (&f64_, Some(1))]),
            Some(DType::Float64)
        );
    }
}
