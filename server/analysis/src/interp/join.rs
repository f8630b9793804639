//! Joining values where control flow merges (after an undecided `if`).
//!
//! Equal values stay; tensors of one rank keep the dims both paths agree on
//! and get an unknown size where they differ; anything else becomes Unknown.

use std::rc::Rc;

use super::Interp;
use crate::value::{Device, Shape, Tensor, Value};

pub(crate) fn join_values(interp: &mut Interp<'_>, a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            if Rc::ptr_eq(x, y) {
                return a.clone();
            }
            let (sx, sy) = (
                interp.resolve_shape(&x.shape),
                interp.resolve_shape(&y.shape),
            );
            let shape = match (sx.dims(), sy.dims()) {
                (Some(dx), Some(dy)) if dx.len() == dy.len() => Shape::known(
                    dx.iter()
                        .zip(dy)
                        .map(|(p, q)| {
                            if interp.env.known_equal(p, q) {
                                p.clone()
                            } else {
                                interp.env.anonymous()
                            }
                        })
                        .collect(),
                ),
                _ if sx == sy => sx.clone(),
                _ => interp.fresh_rank_var(),
            };
            let device = match (&x.device, &y.device) {
                (Some(p), Some(q)) if p == q => Some(p.clone()),
                (Some(Device::Cpu), Some(Device::Cuda(0)))
                | (Some(Device::Cuda(0)), Some(Device::Cpu)) => Some(Device::CudaOrCpu),
                _ => None,
            };
            Value::Tensor(Rc::new(Tensor {
                shape,
                dtype: if x.dtype == y.dtype { x.dtype } else { None },
                device,
                ..(**x).clone()
            }))
        }
        (Value::Int(x), Value::Int(y)) => {
            if interp.env.known_equal(x, y) {
                a.clone()
            } else {
                Value::Int(interp.env.anonymous())
            }
        }
        (Value::Bool(x), Value::Bool(y)) => Value::Bool(if x == y { *x } else { None }),
        (Value::Float(x), Value::Float(y)) => Value::Float(if x == y { *x } else { None }),
        (Value::Str(x), Value::Str(y)) => {
            if x == y {
                a.clone()
            } else if matches!((&**x, &**y), ("cuda", "cpu") | ("cpu", "cuda")) {
                // `"cuda" if torch.cuda.is_available() else "cpu"`.
                Value::Device(Device::CudaOrCpu)
            } else {
                Value::Unknown
            }
        }
        (Value::Device(x), Value::Device(y)) => {
            if x == y {
                a.clone()
            } else {
                Value::Device(Device::CudaOrCpu)
            }
        }
        (Value::DType(x), Value::DType(y)) if x == y => a.clone(),
        (Value::None, Value::None) => Value::None,
        (Value::None, other) | (other, Value::None) if !matches!(other, Value::Unknown) => match other {
            Value::Optional(_) => other.clone(),
            _ => Value::Optional(Box::new(other.clone())),
        },
        (Value::Optional(x), y) | (y, Value::Optional(x)) => match join_values(interp, x, y) {
            Value::Unknown => Value::Unknown,
            joined => Value::Optional(Box::new(joined)),
        },
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => Value::tuple(
            x.iter()
                .zip(y.iter())
                .map(|(p, q)| join_values(interp, p, q))
                .collect(),
        ),
        (Value::List(x), Value::List(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Instance(x), Value::Instance(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Layer(x), Value::Layer(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Function(x), Value::Function(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Class(x), Value::Class(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Path(x), Value::Path(y)) if x == y => a.clone(),
        (Value::Opaque(x), Value::Opaque(y)) if x == y => a.clone(),
        _ => Value::Unknown,
    }
}
