//! Joining values where control flow merges (after an undecided `if`).
//!
//! Equal values stay; tensors of one rank keep the dims both paths agree on
//! and get an unknown size where they differ; anything else becomes Unknown.

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;

use super::Interp;
use crate::mutation::Shared;
use crate::rules::shape::{changed_at, changed_indices};
use crate::value::{Device, Instance, Layer, Shape, Tensor, Value};

/// The join of all `values`: what any one of them may be. Unknown for none.
pub(crate) fn join_all(interp: &mut Interp<'_>, values: &[Value]) -> Value {
    match values.split_first() {
        Some((first, rest)) => rest
            .iter()
            .fold(first.clone(), |acc, v| join_values(interp, &acc, v)),
        None => Value::Unknown,
    }
}

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
                (Some(dx), Some(dy)) if dx.len() == dy.len() => {
                    Shape::known(join_dims(interp, dx, dy))
                }
                _ if sx == sy => sx.clone(),
                // The same leading dims on both paths, then as many known
                // ones (`x[..., :1]` on one, `x[..., 1:2]` on the other):
                // those agree where both paths do.
                _ => match (&sx, &sy) {
                    (Shape::Tail(v, dx), Shape::Tail(w, dy)) if v == w && dx.len() == dy.len() => {
                        Shape::Tail(*v, Rc::new(join_dims(interp, dx, dy)))
                    }
                    (Shape::Var(a), Shape::Var(b)) => join_siblings(interp, *a, *b),
                    _ => interp.fresh_rank_var(),
                },
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
        (Value::None, other) | (other, Value::None) if !matches!(other, Value::Unknown) => {
            optional(other.clone())
        }
        // Maybe-None on either side: join what is there when it is not None.
        // Optional values are never nested (see `optional`), so this ends.
        (Value::Optional(x), Value::Optional(y)) => optional(join_values(interp, x, y)),
        (Value::Optional(x), y) | (y, Value::Optional(x)) => optional(join_values(interp, x, y)),
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => Value::tuple(
            x.iter()
                .zip(y.iter())
                .map(|(p, q)| join_values(interp, p, q))
                .collect(),
        ),
        // Open tuples, or one open and one whole: the items both know.
        (Value::OpenTuple(x), Value::OpenTuple(y) | Value::Tuple(y))
        | (Value::Tuple(y), Value::OpenTuple(x))
            if !x.is_empty() && !y.is_empty() =>
        {
            Value::OpenTuple(Rc::new(
                x.iter()
                    .zip(y.iter())
                    .map(|(p, q)| join_values(interp, p, q))
                    .collect(),
            ))
        }
        (Value::List(x), Value::List(y)) if Rc::ptr_eq(x, y) => a.clone(),
        // A dict that nothing wrote after it was built (`dd = {'device':
        // device}` before an `if`) is the same on both paths. Writes to a
        // dict are not undone at the end of a branch, as a list's and an
        // object's are (`join_lists`, `join_attrs`), so one written since
        // may hold a key only one path set: it stays unknown.
        (Value::Dict(x), Value::Dict(y))
            if Rc::ptr_eq(x, y) && interp.settled_dicts.contains(&(Rc::as_ptr(x) as usize)) =>
        {
            a.clone()
        }
        (Value::Dict(x), Value::Dict(y)) if x.writes() == 0 && y.writes() == 0 => {
            if Rc::ptr_eq(x, y) {
                a.clone()
            } else {
                // Built on each path with the same keys (`kw = {'dim': d}`
                // or `{'dim': 2 * d}`): one dict of either path's values.
                // With other keys, either path's dict.
                join_dicts(interp, x, y)
                    .unwrap_or_else(|| Value::Either(Rc::new(vec![a.clone(), b.clone()])))
            }
        }
        (Value::Module(x), Value::Module(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Partial(x), Value::Partial(y)) if Rc::ptr_eq(x, y) => a.clone(),
        // A dataset chosen by a setting (`if opt.dataset == 'mnist': ...
        // elif opt.dataset == 'cifar10': ...`): its samples are any one's.
        (Value::Partial(_) | Value::Either(_), Value::Partial(_) | Value::Either(_))
            if super::call::is_dataset(a) && super::call::is_dataset(b) =>
        {
            either_of(a, b, MAX_DATASETS)
        }
        (Value::Distribution(x), Value::Distribution(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Complex, Value::Complex)
        | (Value::Text, Value::Text)
        | (Value::Ellipsis, Value::Ellipsis) => a.clone(),
        (Value::SizeOfVar(v, x), Value::SizeOfVar(w, y)) if v == w && x.len() == y.len() => {
            Value::SizeOfVar(*v, Rc::new(join_dims(interp, x, y)))
        }
        (Value::Range(a0, a1, a2), Value::Range(b0, b1, b2)) => {
            let dims = join_dims(
                interp,
                &[a0.clone(), a1.clone(), a2.clone()],
                &[b0.clone(), b1.clone(), b2.clone()],
            );
            Value::Range(dims[0].clone(), dims[1].clone(), dims[2].clone())
        }
        // A method of one object, or of objects that join (`self.f` in a
        // class two paths made alike): the method of the joined object.
        (Value::BoundMethod(x, f), Value::BoundMethod(y, g)) if Rc::ptr_eq(f, g) => {
            match join_values(interp, x, y) {
                Value::Unknown => Value::Unknown,
                owner => Value::BoundMethod(Box::new(owner), f.clone()),
            }
        }
        (Value::BuiltinMethod(x, f), Value::BuiltinMethod(y, g)) if f == g => {
            match join_values(interp, x, y) {
                Value::Unknown => Value::Unknown,
                owner => Value::BuiltinMethod(Box::new(owner), f.clone()),
            }
        }
        (
            Value::FakeMode {
                id: x,
                allow_non_fake_inputs: p,
            },
            Value::FakeMode {
                id: y,
                allow_non_fake_inputs: q,
            },
        ) if x == y && p == q => a.clone(),
        (Value::Instance(x), Value::Instance(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Layer(x), Value::Layer(y)) if Rc::ptr_eq(x, y) => a.clone(),
        // Two objects of one class built on different paths (`self.conv =
        // Block(a)` or `Block(b)`): one object whose attributes are joined.
        (Value::Instance(x), Value::Instance(y))
            if Rc::ptr_eq(&x.class, &y.class) && interp.join_depth < 6 =>
        {
            interp.join_depth += 1;
            let joined = join_instances(interp, x, y);
            interp.join_depth -= 1;
            joined
        }
        (Value::Layer(x), Value::Layer(y)) if x.kind == y.kind && interp.join_depth < 6 => {
            interp.join_depth += 1;
            let joined = join_layers(interp, x, y);
            interp.join_depth -= 1;
            joined
        }
        (Value::Many(x, n), Value::Many(y, m)) => match join_values(interp, x, y) {
            Value::Unknown => Value::Unknown,
            element => Value::Many(Rc::new(element), if n == m { n.clone() } else { None }),
        },
        // A list on one path and a list of unknown length on the other: a
        // list of unknown length whose items are either path's.
        (Value::List(items), Value::Many(element, _))
        | (Value::Many(element, _), Value::List(items)) => {
            let mut all = items.borrow().clone();
            all.push((**element).clone());
            match join_all(interp, &all) {
                Value::Unknown => Value::Unknown,
                joined => Value::Many(Rc::new(joined), None),
            }
        }
        (Value::Function(x), Value::Function(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Class(x), Value::Class(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Value::Path(x), Value::Path(y)) if x == y => a.clone(),
        (Value::Opaque(x), Value::Opaque(y)) if x == y => a.clone(),
        // A setting nobody gave on one path and a size on the other
        // (`args.n_heads if args.n_kv_heads is None else args.n_kv_heads`):
        // on both paths a size, the same one wherever the result is used.
        // Unknown, it gave each layer built with it a size of its own.
        (Value::Opaque(_), Value::Int(_)) | (Value::Int(_), Value::Opaque(_)) => {
            match (interp.as_dim(a), interp.as_dim(b)) {
                (Some(x), Some(y)) => join_values(interp, &Value::Int(x), &Value::Int(y)),
                _ => Value::Unknown,
            }
        }
        // Layers of different kinds, objects of different classes: one of
        // them, which a call calls each of.
        (x, y) if is_callable_object(x) && is_callable_object(y) && !different_ranks(x, y) => {
            either(x, y)
        }
        // An int on one path and a float on the other (`np.exp(r) if n > 1
        // else 1`): a number of either kind. Arithmetic follows each (see
        // `Interp::binop`), so a tensor scaled by it keeps its shape.
        (x, y) if is_number_choice(x) && is_number_choice(y) => number_either(interp, x, y),
        _ => Value::Unknown,
    }
}

/// Two dicts with the same keys in the same order: a new dict whose values
/// are the join of each key's. Dicts that differ in their keys are Unknown,
/// because a key one path lacks would be a `KeyError` the analysis cannot
/// place.
fn join_dicts(
    interp: &mut Interp<'_>,
    x: &Shared<Vec<(Value, Value)>>,
    y: &Shared<Vec<(Value, Value)>>,
) -> Option<Value> {
    let (ex, ey) = (x.borrow().clone(), y.borrow().clone());
    if ex.len() != ey.len() {
        return None;
    }
    let mut joined = Vec::with_capacity(ex.len());
    for ((kx, vx), (ky, vy)) in ex.iter().zip(&ey) {
        if interp.values_equal(kx, ky) != Some(true) {
            return None;
        }
        joined.push((kx.clone(), join_values(interp, vx, vy)));
    }
    Some(Value::Dict(Rc::new(Shared::new(joined))))
}

/// A number, or a choice between numbers of different kinds.
fn is_number_choice(v: &Value) -> bool {
    match v {
        Value::Either(items) => items.iter().all(Value::is_number),
        v => v.is_number(),
    }
}

/// The numbers either value may be, one alternative per kind (two ints
/// join into one int, as on their own).
fn number_either(interp: &mut Interp<'_>, a: &Value, b: &Value) -> Value {
    let mut alternatives: Vec<Value> = Vec::new();
    for v in [a, b] {
        let items = match v {
            Value::Either(items) => items.as_ref().clone(),
            v => vec![v.clone()],
        };
        for item in items {
            let same_kind = alternatives
                .iter()
                .position(|known| std::mem::discriminant(known) == std::mem::discriminant(&item));
            match same_kind {
                Some(at) => {
                    let known = alternatives[at].clone();
                    alternatives[at] = join_values(interp, &known, &item);
                }
                None => alternatives.push(item),
            }
        }
    }
    match alternatives.len() {
        1 => alternatives.pop().unwrap_or(Value::Unknown),
        _ => Value::Either(Rc::new(alternatives)),
    }
}

/// The join of two layers' settings. Sizes that differ (`Linear(in_dim,
/// w)` and `Linear(w, w)`, the first and the other layers a loop made) are
/// unknown, not one unknown size: the joined layer stands for each of them,
/// and running it on one input must not decide the size for the others
/// (`in_dim == w`, and an error on the next layer's input).
fn join_setting(interp: &mut Interp<'_>, a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) if !interp.env.known_equal(x, y) => Value::Unknown,
        _ => join_values(interp, a, b),
    }
}

/// Objects a model calls that can stand as alternatives of an `Either`.
fn is_callable_object(v: &Value) -> bool {
    matches!(
        v,
        Value::Layer(_) | Value::Instance(_) | Value::Function(_) | Value::Either(_)
    )
}

/// Dims of two paths, one by one: each where both agree, else unknown.
fn join_dims(interp: &mut Interp<'_>, dx: &[Dim], dy: &[Dim]) -> Vec<Dim> {
    dx.iter()
        .zip(dy)
        .map(|(p, q)| {
            if interp.env.known_equal(p, q) {
                p.clone()
            } else {
                interp.env.anonymous()
            }
        })
        .collect()
}

/// Two tensors of unknown rank made from one tensor's dims, some of its
/// first ones changed on either path (`x` on one, `torch.cat((c, x),
/// dim=1)` on the other): that rank is kept, and a changed dim where both
/// paths changed it alike (see `Interp::sibling_shape`).
fn join_siblings(interp: &mut Interp<'_>, a: u32, b: u32) -> Shape {
    let ((base, ca), (other, cb)) = (interp.sibling_base(a), interp.sibling_base(b));
    if base != other {
        return interp.fresh_rank_var();
    }
    let changes: Vec<(usize, Dim)> = changed_indices(&ca, &cb)
        .into_iter()
        .map(|i| {
            let d = match (changed_at(&ca, i), changed_at(&cb, i)) {
                (Some(p), Some(q)) if interp.env.known_equal(&p, &q) => p,
                _ => interp.env.anonymous(),
            };
            (i, d)
        })
        .collect();
    interp
        .sibling_shape(&Shape::Var(base), &changes)
        .unwrap_or_else(|| interp.fresh_rank_var())
}

/// Layers for inputs of different ranks (`Conv1d` or `Conv3d`, what
/// `conv_nd(dims, ...)` gives for an undecided `dims`): calling both on an
/// input of unknown rank would give it the rank each demands, one after
/// the other. Such alternatives are no object the analysis can follow.
fn different_ranks(x: &Value, y: &Value) -> bool {
    let ranks = |v: &Value| -> Vec<usize> {
        match v {
            Value::Layer(l) => crate::rules::nn::spatial_rank_of(&l.kind)
                .into_iter()
                .collect(),
            Value::Either(items) => items
                .iter()
                .filter_map(|i| match i {
                    Value::Layer(l) => crate::rules::nn::spatial_rank_of(&l.kind),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let all: Vec<usize> = ranks(x).into_iter().chain(ranks(y)).collect();
    all.windows(2).any(|w| w[0] != w[1])
}

/// More alternatives than this and the object is unknown.
const MAX_ALTERNATIVES: usize = 4;

/// More datasets than this to choose from and the dataset is unknown.
const MAX_DATASETS: usize = 8;

fn either(a: &Value, b: &Value) -> Value {
    either_of(a, b, MAX_ALTERNATIVES)
}

/// Either value, with at most `cap` alternatives (else unknown).
fn either_of(a: &Value, b: &Value, cap: usize) -> Value {
    let mut alternatives: Vec<Value> = Vec::new();
    for v in [a, b] {
        match v {
            Value::Either(items) => alternatives.extend(items.iter().cloned()),
            v => alternatives.push(v.clone()),
        }
    }
    if alternatives.len() > cap {
        return Value::Unknown;
    }
    Value::Either(Rc::new(alternatives))
}

/// A maybe-None value, never nested: `Optional(Optional(v))` is `Optional(v)`.
pub(crate) fn optional(v: Value) -> Value {
    match v {
        Value::Unknown => Value::Unknown,
        Value::Optional(_) | Value::None => v,
        v => Value::Optional(Box::new(v)),
    }
}

fn join_instances(interp: &mut Interp<'_>, x: &Rc<Instance>, y: &Rc<Instance>) -> Value {
    let keys: Vec<Rc<str>> = x.order.borrow().clone();
    let mut attrs = FxHashMap::default();
    for key in &keys {
        let a = x.attrs.borrow().get(key).cloned();
        let b = y.attrs.borrow().get(key).cloned();
        let v = match (a, b) {
            (Some(a), Some(b)) => join_values(interp, &a, &b),
            (Some(v), None) | (None, Some(v)) => optional(v),
            (None, None) => continue,
        };
        attrs.insert(key.clone(), v);
    }
    for (key, v) in y.attrs.borrow().iter() {
        attrs
            .entry(key.clone())
            .or_insert_with(|| optional(v.clone()));
    }
    let device = if *x.device.borrow() == *y.device.borrow() {
        x.device.borrow().clone()
    } else {
        None
    };
    Value::Instance(Rc::new(Instance {
        class: x.class.clone(),
        attrs: Shared::new(attrs),
        order: Shared::new(keys),
        origin: x.origin,
        device: Shared::new(device),
        serial: Instance::next_serial(),
    }))
}

fn join_layers(interp: &mut Interp<'_>, x: &Rc<Layer>, y: &Rc<Layer>) -> Value {
    let args = if x.args.len() == y.args.len() {
        x.args
            .iter()
            .zip(&y.args)
            .map(|(a, b)| join_setting(interp, a, b))
            .collect()
    } else {
        Vec::new()
    };
    // A keyword only one of them was given (`stride=2`) is unknown in the
    // join: dropping it would give the other's default, a wrong shape.
    let mut kwargs: Vec<(Rc<str>, Value)> = x
        .kwargs
        .iter()
        .map(|(k, a)| match y.kwargs.iter().find(|(j, _)| j == k) {
            Some((_, b)) => (k.clone(), join_setting(interp, a, b)),
            None => (k.clone(), Value::Unknown),
        })
        .collect();
    for (k, _) in &y.kwargs {
        if !x.kwargs.iter().any(|(j, _)| j == k) {
            kwargs.push((k.clone(), Value::Unknown));
        }
    }
    let (cx, cy) = (x.children.borrow().clone(), y.children.borrow().clone());
    let unknown = x.unknown_children.get() || y.unknown_children.get() || cx.len() != cy.len();
    let children = if unknown {
        Vec::new()
    } else {
        cx.iter()
            .zip(&cy)
            .map(|(a, b)| join_values(interp, a, b))
            .collect()
    };
    Value::Layer(Rc::new(Layer {
        kind: x.kind.clone(),
        args,
        kwargs,
        device: Shared::new(if *x.device.borrow() == *y.device.borrow() {
            x.device.borrow().clone()
        } else {
            None
        }),
        dtype: Shared::new(if *x.dtype.borrow() == *y.dtype.borrow() {
            *x.dtype.borrow()
        } else {
            None
        }),
        origin: x.origin,
        mode: x.mode,
        children: Shared::new(children),
        keys: Shared::new(if *x.keys.borrow() == *y.keys.borrow() {
            x.keys.borrow().clone()
        } else {
            Vec::new()
        }),
        params: Shared::new(FxHashMap::default()),
        unknown_children: Shared::new(unknown),
        training: Shared::new(if x.training.get() == y.training.get() {
            x.training.get()
        } else {
            None
        }),
        written: if x.written == y.written {
            x.written.clone()
        } else {
            None
        },
    }))
}
