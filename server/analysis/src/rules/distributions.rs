//! `torch.distributions`: the shapes of samples, log-probabilities and
//! entropies of the common distributions, from their parameters' shapes.
//!
//! A distribution has a batch shape (its parameters broadcast together) and
//! an event shape (one draw of a multivariate distribution): `sample(s)` is
//! `s + batch + event`, `log_prob(v)` is `v` without its event dims
//! broadcast with the batch, `entropy()` the batch.

use std::rc::Rc;

use shapels_shapes::Dim;

use super::shape::broadcast;
use super::{Args, size_value};
use crate::rules::meta::Meta;
use crate::value::{DType, Device, Distribution, Shape, Tensor, Value};

/// `torch.distributions.<name>(...)`; unknown for a distribution or an
/// argument this does not follow.
pub(crate) fn construct(meta: &mut dyn Meta, name: &str, args: &Args) -> Value {
    let made = match name {
        "Normal" | "Laplace" | "Cauchy" | "Gumbel" | "LogNormal" => {
            elementwise(meta, name, args, &[(0, "loc"), (1, "scale")])
        }
        "Uniform" => elementwise(meta, name, args, &[(0, "low"), (1, "high")]),
        "Beta" => elementwise(
            meta,
            name,
            args,
            &[(0, "concentration1"), (1, "concentration0")],
        ),
        "Gamma" => elementwise(meta, name, args, &[(0, "concentration"), (1, "rate")]),
        "Exponential" | "Poisson" => elementwise(meta, name, args, &[(0, "rate")]),
        "Bernoulli" | "Categorical" | "OneHotCategorical" => discrete(meta, name, args),
        "MultivariateNormal" => multivariate_normal(meta, args),
        "Independent" => independent(args),
        _ => None,
    };
    made.map_or(Value::Unknown, |d| Value::Distribution(Rc::new(d)))
}

/// A distribution whose parameters broadcast together into its batch shape
/// and whose draws are single numbers.
fn elementwise(
    meta: &mut dyn Meta,
    name: &str,
    args: &Args,
    params: &[(usize, &str)],
) -> Option<Distribution> {
    let mut batch: Vec<Dim> = Vec::new();
    let mut like: Option<Rc<Tensor>> = None;
    let mut named = Vec::new();
    for (index, param) in params {
        let value = args.get(*index, param)?.clone();
        match &value {
            Value::Tensor(t) => {
                let dims = meta.dims(t)?;
                batch = broadcast(meta, &batch, &dims).ok()?;
                like.get_or_insert_with(|| t.clone());
            }
            Value::Int(_) | Value::Float(_) => {}
            _ => return None,
        }
        named.push((Rc::from(*param), value));
    }
    let dtype = like.as_ref().map_or(Some(DType::Float32), |t| t.dtype);
    Some(Distribution {
        kind: Rc::from(name),
        batch,
        event: Vec::new(),
        sample_dtype: dtype,
        dtype,
        device: like.map_or(Some(Device::Cpu), |t| t.device.clone()),
        params: named,
    })
}

/// `Bernoulli`, `Categorical` and `OneHotCategorical`, given `probs` or
/// `logits`: a categorical's last dim holds the categories.
fn discrete(meta: &mut dyn Meta, name: &str, args: &Args) -> Option<Distribution> {
    let (param, t) = match (args.tensor(0, "probs"), args.kw("logits")) {
        (Some(t), _) => ("probs", t),
        (None, Some(Value::Tensor(t))) => ("logits", t.clone()),
        _ => match args.get(1, "logits") {
            Some(Value::Tensor(t)) => ("logits", t.clone()),
            _ => return None,
        },
    };
    let dims = meta.dims(&t)?;
    let (batch, event, sample_dtype) = match name {
        "Bernoulli" => (dims, Vec::new(), t.dtype),
        _ => {
            let (categories, batch) = dims.split_last()?;
            if name == "Categorical" {
                (batch.to_vec(), Vec::new(), Some(DType::Int64))
            } else {
                (batch.to_vec(), vec![categories.clone()], t.dtype)
            }
        }
    };
    Some(Distribution {
        kind: Rc::from(name),
        batch,
        event,
        sample_dtype,
        dtype: t.dtype,
        device: t.device.clone(),
        params: vec![(Rc::from(param), Value::Tensor(t))],
    })
}

/// `MultivariateNormal(loc, covariance_matrix | scale_tril | precision_matrix)`:
/// draws are vectors of `loc`'s last size.
fn multivariate_normal(meta: &mut dyn Meta, args: &Args) -> Option<Distribution> {
    let loc = args.tensor(0, "loc")?;
    let matrix = args
        .tensor(1, "covariance_matrix")
        .or_else(|| args.tensor(2, "precision_matrix"))
        .or_else(|| args.tensor(3, "scale_tril"))?;
    let loc_dims = meta.dims(&loc)?;
    let matrix_dims = meta.dims(&matrix)?;
    let (event, loc_batch) = loc_dims.split_last()?;
    let matrix_batch = matrix_dims.get(..matrix_dims.len().checked_sub(2)?)?;
    let batch = broadcast(meta, loc_batch, matrix_batch).ok()?;
    Some(Distribution {
        kind: Rc::from("MultivariateNormal"),
        batch,
        event: vec![event.clone()],
        sample_dtype: loc.dtype,
        dtype: loc.dtype,
        device: loc.device.clone(),
        params: vec![(Rc::from("loc"), Value::Tensor(loc))],
    })
}

/// `Independent(base, n)`: the base's last `n` batch dims become event dims.
fn independent(args: &Args) -> Option<Distribution> {
    let Value::Distribution(base) = args.get(0, "base_distribution")? else {
        return None;
    };
    let n = usize::try_from(args.int(1, "reinterpreted_batch_ndims")?).ok()?;
    let cut = base.batch.len().checked_sub(n)?;
    let mut event = base.batch[cut..].to_vec();
    event.extend(base.event.iter().cloned());
    Some(Distribution {
        kind: Rc::from("Independent"),
        batch: base.batch[..cut].to_vec(),
        event,
        ..(**base).clone()
    })
}

/// `d.batch_shape`, `d.mean`, `d.loc`, ...; a method otherwise.
pub(crate) fn attr(meta: &mut dyn Meta, object: &Value, d: &Distribution, attr: &str) -> Value {
    if let Some((_, v)) = d.params.iter().find(|(k, _)| &**k == attr) {
        return v.clone();
    }
    match attr {
        "batch_shape" => size_value(&Shape::known(d.batch.clone())),
        "event_shape" => size_value(&Shape::known(d.event.clone())),
        "mean" | "mode" | "stddev" | "variance" => {
            let mut shape = d.batch.clone();
            shape.extend(d.event.iter().cloned());
            tensor(meta, d, shape, d.dtype, &format!("{}.{attr}", d.kind))
        }
        // The parameter the distribution was not given, made from the other.
        "probs" | "logits"
            if matches!(&*d.kind, "Bernoulli" | "Categorical" | "OneHotCategorical") =>
        {
            match d.params.first() {
                Some((_, Value::Tensor(t))) => Value::Tensor(t.clone()),
                _ => Value::Unknown,
            }
        }
        _ => Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr)),
    }
}

/// `d.sample(shape)`, `d.rsample()`, `d.log_prob(v)`, `d.entropy()`, `d.expand(batch)`.
pub(crate) fn method(meta: &mut dyn Meta, d: &Rc<Distribution>, name: &str, args: &Args) -> Value {
    match name {
        "sample" | "rsample" => {
            let mut shape = match args.get(0, "sample_shape") {
                None => Vec::new(),
                Some(v) => match v.items() {
                    Some(items) => meta.size_dims(&items),
                    None => return Value::Unknown,
                },
            };
            shape.extend(d.batch.iter().cloned());
            shape.extend(d.event.iter().cloned());
            tensor(
                meta,
                d,
                shape,
                d.sample_dtype,
                &format!("{}.{name}", d.kind),
            )
        }
        "log_prob" | "cdf" | "icdf" => {
            let Some(v) = args.tensor(0, "value") else {
                return Value::Unknown;
            };
            let Some(dims) = meta.dims(&v) else {
                return Value::Unknown;
            };
            let Some(kept) = dims.len().checked_sub(d.event.len()) else {
                return Value::Unknown;
            };
            match broadcast(meta, &dims[..kept], &d.batch) {
                Ok(shape) => tensor(meta, d, shape, d.dtype, &format!("{}.{name}", d.kind)),
                Err(_) => Value::Unknown,
            }
        }
        "entropy" => tensor(
            meta,
            d,
            d.batch.clone(),
            d.dtype,
            &format!("{}.entropy", d.kind),
        ),
        "expand" => match args.get(0, "batch_shape").and_then(Value::items) {
            Some(items) => Value::Distribution(Rc::new(Distribution {
                batch: meta.size_dims(&items),
                ..(**d).clone()
            })),
            None => Value::Unknown,
        },
        _ => Value::Unknown,
    }
}

/// `torch.distributions.kl_divergence(p, q)`: one number per batch entry.
pub(crate) fn kl_divergence(meta: &mut dyn Meta, args: &Args) -> Value {
    let (Some(Value::Distribution(p)), Some(Value::Distribution(q))) =
        (args.get(0, "p"), args.get(1, "q"))
    else {
        return Value::Unknown;
    };
    match broadcast(meta, &p.batch, &q.batch) {
        Ok(shape) => tensor(meta, p, shape, p.dtype, "kl_divergence"),
        Err(_) => Value::Unknown,
    }
}

fn tensor(
    meta: &mut dyn Meta,
    d: &Distribution,
    shape: Vec<Dim>,
    dtype: Option<DType>,
    op: &str,
) -> Value {
    let t = meta.new_tensor(Shape::known(shape), dtype, d.device.clone(), op);
    Value::Tensor(Rc::new(t))
}
