//! Tensor creation: the factories under `torch` (`torch.randn`, `torch.tensor`, `*_like`) and the tensor methods that make a tensor or read or change its metadata (`new_zeros`, `size`, `to`, `float`).
//!
//! Which names these are, and which rule makes each, is the op registry's
//! to say (`ops/op_table.rs`), as it is for every other op: `create` and
//! `method` look the name up there. The rules are in `factories` (no input
//! tensor) and `methods` (a tensor's own); the `dtype=` and `device=`
//! readers here are shared with the ops.

pub(crate) mod factories;
pub(crate) mod methods;

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::ops::OpDef;
use crate::code::Code;
use crate::rules::meta::Meta;
use crate::value::{DType, Device, Shape, Tensor, Value};

/// One call of a factory, as its rule (the `FactoryRule` of its registry
/// entry) sees it.
pub(crate) struct FactoryCall<'a> {
    /// The factory's name under `torch` (`zeros`, `randn_like`).
    pub name: &'a str,
    pub args: &'a Args,
    pub range: TextRange,
}

impl FactoryCall<'_> {
    /// The factory's tensor of the listed sizes `dims`, after the check
    /// torch makes that none is negative; a `dtype=` given overrides `dtype`.
    fn output(&self, meta: &mut dyn Meta, dims: Vec<Dim>, dtype: Option<DType>) -> Value {
        if let Some(at) = dims
            .iter()
            .position(|d| d.as_const().is_some_and(|n| n < 0))
        {
            let message = negative_size_message(meta, self.name, &dims, at);
            meta.report(self.range, Code::NegativeSize, message);
            return Value::Unknown;
        }
        let dtype = dtype_or(self.args, dtype);
        let device = device_arg(self.args).unwrap_or_else(|| meta.defaults().device.clone());
        let name = format!("torch.{}", self.name);
        let t = meta.new_tensor(Shape::known(dims), dtype, device, &name);
        Value::Tensor(Rc::new(Tensor {
            made_at: Some(self.range),
            ..t
        }))
    }

    /// The factory's tensor whose sizes are not listed (the shape of a
    /// tensor of unknown rank, a value the analysis cannot read): `shape`
    /// stands for them, and nothing can be checked. A `dtype=` given
    /// overrides `dtype`.
    fn output_of_unlisted_size(
        &self,
        meta: &mut dyn Meta,
        shape: Shape,
        dtype: Option<DType>,
    ) -> Value {
        let dtype = dtype_or(self.args, dtype);
        let device = device_arg(self.args).unwrap_or_else(|| meta.defaults().device.clone());
        let name = format!("torch.{}", self.name);
        Value::Tensor(Rc::new(meta.new_tensor(shape, dtype, device, &name)))
    }
}

/// Torch's message for the negative size at `at` of `dims`: most factories
/// leave it to the allocation, but some check their sizes in their own words
/// first.
pub(crate) fn negative_size_message(
    meta: &dyn Meta,
    name: &str,
    dims: &[Dim],
    at: usize,
) -> String {
    let bad = &dims[at];
    match name {
        "zeros" => "zeros: Dimension size must be non-negative.".to_string(),
        "linspace" | "logspace" => "number of steps must be non-negative".to_string(),
        "eye" => format!(
            "{} must be greater or equal to 0, got {}",
            if at == 0 { "n" } else { "m" },
            meta.fmt_dim(bad)
        ),
        _ => format!(
            "Trying to create tensor with negative dimension {}: {}",
            meta.fmt_dim(bad),
            meta.fmt_dims(dims)
        ),
    }
}

/// One call of a tensor method with a creation rule, as its rule (the
/// `MethodRule` of its registry entry) sees it.
pub(crate) struct MethodCall<'a> {
    /// The method's name (`new_zeros`, `size`).
    pub name: &'a str,
    /// The tensor whose method it is.
    pub t: &'a Rc<Tensor>,
    /// `t`'s shape, with what is known of its rank variables filled in.
    pub shape: Shape,
    /// The arguments, `t` first.
    pub args: &'a Args,
    pub range: TextRange,
}

impl MethodCall<'_> {
    /// `t` with the same shape and the dtype `dtype` and the device `device`
    /// (each kept when `None`), named after the method: a cast or a move.
    fn retyped(&self, dtype: Option<DType>, device: Option<Option<Device>>) -> Value {
        Value::Tensor(Rc::new(Tensor {
            shape: self.shape.clone(),
            dtype: dtype.or(self.t.dtype),
            device: device.unwrap_or_else(|| self.t.device.clone()),
            op: Rc::from(self.name),
            ..(**self.t).clone()
        }))
    }
}

/// A `torch.<name>(...)` factory's tensor, or `None` when `name` is not a
/// factory or the call is not one its rule makes (`torch.zeros_like` of no
/// tensor): the op dispatch then takes it as any other op.
pub(crate) fn create(
    meta: &mut dyn Meta,
    name: &str,
    args: &Args,
    range: TextRange,
) -> Option<Value> {
    let rule = factory_rule(name)?;
    rule(meta, &FactoryCall { name, args, range })
}

/// The rule of the factory `name`: its registry entry's. A `*_like` name the
/// registry does not list is still read as one of torch's `*_like`
/// factories (they all make a tensor of their input's shape), as it was
/// before the registry listed them.
fn factory_rule(name: &str) -> Option<super::ops::FactoryRule> {
    match OpDef::of(name) {
        Some(def) => def.factory,
        None if name.ends_with("_like") => Some(factories::like),
        None => None,
    }
}

/// The result of the tensor method `name` of `t`, or `None` when the
/// registry has no creation rule for it: it is then a tensor op.
pub(crate) fn method(
    meta: &mut dyn Meta,
    t: &Rc<Tensor>,
    name: &str,
    args: &Args,
    range: TextRange,
) -> Option<Value> {
    let rule = OpDef::of(name)?.method?;
    let shape = meta.resolve_shape(&t.shape);
    let call = MethodCall {
        name,
        t,
        shape,
        args,
        range,
    };
    Some(rule(meta, &call))
}

/// The shape and dtype of a nested list literal.
fn literal_shape(meta: &mut dyn Meta, data: &Value) -> Option<(Vec<Dim>, Option<DType>)> {
    match data {
        Value::Int(_) => Some((Vec::new(), Some(DType::Int64))),
        Value::Float(_) => Some((Vec::new(), Some(DType::Float32))),
        Value::Complex => Some((Vec::new(), Some(DType::Complex64))),
        Value::Bool(_) => Some((Vec::new(), Some(DType::Bool))),
        Value::Tensor(t) => Some((meta.dims(t)?, t.dtype)),
        Value::Tuple(_) | Value::List(_) => {
            let items = data.items()?;
            let mut inner: Option<Vec<Dim>> = None;
            let mut dtype: Option<DType> = None;
            for item in &items {
                let (dims, d) = literal_shape(meta, item)?;
                if let Some(prev) = &inner
                    && *prev != dims
                {
                    return None;
                }
                inner = Some(dims);
                dtype = match (dtype, d) {
                    (None, d) => d,
                    (Some(a), Some(b)) => Some(super::dtype::join(a, b)),
                    (a, None) => a,
                };
            }
            let mut dims = vec![Dim::konst(items.len() as i64)];
            dims.extend(inner.unwrap_or_default());
            Some((dims, dtype.or(Some(DType::Float32))))
        }
        // A list of items alike whose number is not known (`[len(t) for t
        // in texts]`): one dim of that many, then the items' own.
        Value::Many(element, len) => {
            let (inner, dtype) = literal_shape(meta, element)?;
            let mut dims = vec![len.clone().unwrap_or_else(|| meta.env_mut().anonymous())];
            dims.extend(inner);
            Some((dims, dtype.or(Some(DType::Float32))))
        }
        _ => None,
    }
}

/// What torch raises for nested lists of uneven lengths: the lengths the
/// first items give each depth, and the first list that breaks them
/// (`[[1, 2], [3]]`: "expected sequence of length 2 at dim 1 (got 1)").
/// `None` where the lengths agree or the analysis cannot read them.
fn ragged_literal(data: &Value) -> Option<String> {
    let mut lengths = Vec::new();
    let mut first = data.clone();
    while let Some(items) = first.items() {
        lengths.push(items.len());
        let Some(next) = items.first() else {
            break;
        };
        first = next.clone();
    }
    fn walk(v: &Value, depth: usize, lengths: &[usize]) -> Option<String> {
        let items = v.items()?;
        let expected = *lengths.get(depth)?;
        if items.len() != expected {
            return Some(format!(
                "expected sequence of length {expected} at dim {depth} (got {})",
                items.len()
            ));
        }
        items.iter().find_map(|item| walk(item, depth + 1, lengths))
    }
    walk(data, 0, &lengths)
}

pub(crate) fn dtype_arg(args: &Args) -> Option<DType> {
    match args.kw("dtype") {
        Some(Value::DType(d)) => Some(*d),
        _ => None,
    }
}

/// The dtype an op makes: the `dtype=` argument when given (unknown when
/// the analysis cannot read it: `dtype=labels.dtype` of unread labels is
/// not the default float), else `default`.
pub(crate) fn dtype_or(args: &Args, default: Option<DType>) -> Option<DType> {
    match args.kw("dtype") {
        None | Some(Value::None) => default,
        Some(Value::DType(d)) => Some(*d),
        Some(_) => None,
    }
}

/// The `device=` argument: `None` when absent, `Some(None)` when present but unknown.
pub(crate) fn device_arg(args: &Args) -> Option<Option<Device>> {
    args.kw("device").map(device_of)
}

pub(crate) fn device_of(v: &Value) -> Option<Device> {
    match v {
        Value::Device(d) => Some(d.clone()),
        Value::Str(s) => Device::parse(s),
        Value::Int(d) => d.as_const().map(|i| Device::Cuda(i as u32)),
        _ => None,
    }
}
