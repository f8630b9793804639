//! Python built-in functions (`len`, `range`, `min`, `isinstance`, ...) and `math.*`.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use crate::interp::{Interp, join_all};
use crate::value::{Class, Value};

use super::Kwargs;
use super::class::{class_chain, class_lookup};
use crate::mutation::Shared;

/// More items than this and an `itertools` product or chain is not spelled
/// out (its loop runs an unknown number of times instead). A product is
/// kept to a few cases (`product([True, False], repeat=2)`): one of grid
/// positions (`product(range(14), range(14))`) read pairwise in a nested
/// loop would spend the analysis' whole budget on index arithmetic.
const MAX_ITERTOOLS_ITEMS: usize = 64;
const MAX_PRODUCT_ITEMS: usize = 16;

impl Interp<'_> {
    /// `itertools.product(a, b)`, `product(a, repeat=k)` and `chain(a, b)`
    /// of iterables the analysis can list: the list of what they give
    /// (`for min_valid, max_valid in product([True, False], [True,
    /// False])` runs four known turns). `None` for anything else.
    pub(super) fn itertools_call(
        &mut self,
        path: &str,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        let name = path.strip_prefix("itertools.")?;
        // `cycle(loader)`: its items again and again, as many as nobody
        // knows.
        if let ("cycle", [iterable]) = (name, args) {
            let item = self.element_of(iterable);
            return Some(Value::Many(std::rc::Rc::new(item), None));
        }
        let lists: Vec<Vec<Value>> = args
            .iter()
            .map(|a| self.iterate(a))
            .collect::<Option<_>>()?;
        match name {
            "chain" if kwargs.is_empty() => {
                let items: Vec<Value> = lists.into_iter().flatten().collect();
                (items.len() <= MAX_ITERTOOLS_ITEMS).then(|| Value::list(items))
            }
            "product" => {
                let repeat = match kwargs.iter().find(|(k, _)| &**k == "repeat") {
                    Some((_, Value::Int(d))) => usize::try_from(d.as_const()?).ok()?,
                    Some(_) => return None,
                    None => 1,
                };
                if kwargs.iter().any(|(k, _)| &**k != "repeat") {
                    return None;
                }
                let pools: Vec<&Vec<Value>> = (0..repeat).flat_map(|_| lists.iter()).collect();
                let mut tuples: Vec<Vec<Value>> = vec![Vec::new()];
                for pool in pools {
                    if tuples.len().saturating_mul(pool.len()) > MAX_PRODUCT_ITEMS {
                        return None;
                    }
                    tuples = tuples
                        .iter()
                        .flat_map(|t| {
                            pool.iter().map(move |item| {
                                let mut next = t.clone();
                                next.push(item.clone());
                                next
                            })
                        })
                        .collect();
                }
                Some(Value::list(tuples.into_iter().map(Value::tuple).collect()))
            }
            _ => None,
        }
    }

    pub(crate) fn call_builtin(
        &mut self,
        name: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        match (name, args.as_slice()) {
            ("len", [v]) => match v {
                Value::Tensor(t) => {
                    let shape = self.resolve_shape(&t.shape);
                    match (shape.dims(), &shape) {
                        (Some(d), _) => match d.first() {
                            Some(d) => Value::Int(d.clone()),
                            None => Value::Unknown,
                        },
                        // The first size of a tensor of unknown rank: the same
                        // symbol `x.size(0)` gives, so the two relate.
                        (None, crate::value::Shape::Var(v)) => Value::Int(self.var_dim(*v, 0)),
                        (None, _) => Value::Int(self.env.anonymous()),
                    }
                }
                Value::Str(s) => Value::int(s.chars().count() as i64),
                Value::Dict(d) => Value::int(d.borrow().len() as i64),
                Value::Many(_, Some(n)) => Value::Int(n.clone()),
                Value::Members(_) => Value::Int(self.env.anonymous()),
                // Whatever it is of, `len` gives an int: a count nobody
                // knows (`torch.tensor([len(t) for t in texts])` is 1-D).
                Value::Layer(l) if l.unknown_children.get() => Value::Int(self.env.anonymous()),
                Value::Layer(l) => Value::int(l.children.borrow().len() as i64),
                // An object of the user's: its own `__len__`, else the
                // children of the torch container it extends.
                Value::Instance(i) => {
                    if let Some(method) = super::class::lookup_method(&i.class, "__len__") {
                        self.call_function(&method, Some(v.clone()), Vec::new(), Vec::new(), range)
                    } else if let Some(layer) = crate::interp::modules::container_of(v) {
                        self.call_builtin("len", vec![Value::Layer(layer)], Vec::new(), range)
                    } else {
                        Value::Int(self.env.anonymous())
                    }
                }
                _ => match v.items() {
                    Some(items) => Value::int(items.len() as i64),
                    None => Value::Int(self.env.anonymous()),
                },
            },
            ("range", _) => {
                let dims: Vec<Option<Dim>> = args.iter().map(|a| self.as_dim(a)).collect();
                match dims.as_slice() {
                    [Some(stop)] => Value::Range(Dim::konst(0), stop.clone(), Dim::konst(1)),
                    [Some(a), Some(b)] => Value::Range(a.clone(), b.clone(), Dim::konst(1)),
                    [Some(a), Some(b), Some(c)] => Value::Range(a.clone(), b.clone(), c.clone()),
                    _ => Value::Range(Dim::konst(0), self.env.anonymous(), Dim::konst(1)),
                }
            }
            ("int", [v]) => match v {
                Value::Int(_) => v.clone(),
                Value::Float(Some(f)) if f.is_finite() && f.abs() < 9.0e18 => {
                    Value::int(f.trunc() as i64)
                }
                Value::Bool(Some(b)) => Value::int(*b as i64),
                Value::Opaque(n) => Value::Int(self.opaque_symbol(n)),
                Value::Str(s) => s
                    .trim()
                    .parse::<i64>()
                    .map(Value::int)
                    .unwrap_or(Value::Unknown),
                // An int of a number nobody can read is still an int (a
                // count a ratio gives, `int(ratio * n)`).
                Value::Tensor(_) | Value::Float(None) => Value::Int(self.env.anonymous()),
                _ => Value::Unknown,
            },
            ("float", [v]) => match v {
                Value::Int(d) => Value::Float(d.as_const().map(|n| n as f64)),
                Value::Float(_) => v.clone(),
                Value::Str(s) => Value::Float(match s.trim() {
                    "inf" | "+inf" => Some(f64::INFINITY),
                    "-inf" => Some(f64::NEG_INFINITY),
                    "nan" => Some(f64::NAN),
                    other => other.parse().ok(),
                }),
                _ => Value::Float(None),
            },
            ("complex", _) => Value::Complex,
            ("callable", [v]) => Value::Bool(is_callable(v)),
            ("bool", [v]) => Value::Bool(self.truth(v)),
            ("str", []) => Value::Str(Rc::from("")),
            // The text of a value the analysis can spell (`str(i)` keys
            // layers in a loop); a string of unknown text otherwise.
            ("str", [v]) | ("repr", [v @ (Value::Int(_) | Value::Bool(_) | Value::None)]) => {
                match super::strings::plain_text(v) {
                    Some(text) => Value::Str(text.into()),
                    None => Value::Text,
                }
            }
            ("str" | "repr", _) => Value::Text,
            ("abs", [Value::Int(d)]) => match d.as_const() {
                Some(n) => Value::int(n.abs()),
                None => Value::Unknown,
            },
            ("abs", [Value::Float(f)]) => Value::Float(f.map(f64::abs)),
            ("round", [Value::Float(f)]) => match f {
                Some(f) if f.is_finite() => Value::int(f.round_ties_even() as i64),
                Some(_) => Value::Unknown,
                // Rounded, a float nobody can read is an int nobody can read.
                None => Value::Int(self.env.anonymous()),
            },
            ("round", [Value::Int(_)]) => args[0].clone(),
            ("min" | "max", _) => {
                let items = if args.len() == 1 {
                    self.iterate(&args[0]).unwrap_or_default()
                } else {
                    args.clone()
                };
                self.min_max(name == "max", &items)
            }
            ("sum", [v, rest @ ..]) => {
                let Some(items) = self.iterate(v) else {
                    return Value::Unknown;
                };
                let mut acc = rest.first().cloned().unwrap_or(Value::int(0));
                for item in items {
                    acc = self.binop(
                        shapels_syntax::ast::BinOp::Add,
                        acc,
                        item,
                        range,
                        range,
                        range,
                    );
                }
                acc
            }
            ("isinstance", [v, class]) => self.isinstance(v, class),
            ("list" | "tuple", []) => {
                if name == "list" {
                    Value::list(Vec::new())
                } else {
                    Value::tuple(Vec::new())
                }
            }
            // Still open at its end: its known items stay readable.
            ("list" | "tuple", [Value::OpenTuple(items)]) => Value::OpenTuple(items.clone()),
            // A walk known in part stays one: its order is no better known.
            ("list" | "tuple", [v @ Value::Members(_)]) => v.clone(),
            ("list" | "tuple" | "sorted" | "reversed", [v, ..]) => match self.iterate(v) {
                Some(mut items) => {
                    if name == "reversed" {
                        items.reverse();
                    }
                    if name == "tuple" {
                        Value::tuple(items)
                    } else {
                        Value::list(items)
                    }
                }
                None => Value::Unknown,
            },
            // A set is kept as the list of its distinct items, which is
            // what membership, `len` and iteration read; one whose items
            // may or may not be equal has a length the analysis cannot know.
            ("set", []) => Value::list(Vec::new()),
            ("set", [v]) => match self.iterate(v) {
                // Each item is compared with the ones kept: a long literal
                // list would cost its length squared.
                Some(items) if items.len() > crate::interp::MAX_LOOP_ITERATIONS * 4 => {
                    Value::Unknown
                }
                Some(items) => {
                    let mut distinct: Vec<Value> = Vec::new();
                    for item in items {
                        let equal: Vec<Option<bool>> = distinct
                            .iter()
                            .map(|kept| self.values_equal(&item, kept))
                            .collect();
                        if equal.contains(&Some(true)) {
                            continue;
                        }
                        if equal.contains(&None) {
                            return Value::Unknown;
                        }
                        distinct.push(item);
                    }
                    Value::list(distinct)
                }
                None => Value::Unknown,
            },
            ("dict", []) => Value::Dict(Rc::new(Shared::new(
                kwargs
                    .into_iter()
                    .map(|(k, v)| (Value::Str(k), v))
                    .collect(),
            ))),
            // `dict([(k, v), ...])`, `dict(other)`: a new dict of the pairs
            // (`OrderedDict` comes here too, for `nn.Sequential(OrderedDict(...))`).
            ("dict", [items]) => {
                let pairs: Option<Vec<(Value, Value)>> = match items {
                    Value::Dict(d) => Some(d.borrow().clone()),
                    other => self.iterate(other).and_then(|items| {
                        items
                            .into_iter()
                            .map(|pair| match pair.items().as_deref() {
                                Some([k, v]) => Some((k.clone(), v.clone())),
                                _ => None,
                            })
                            .collect()
                    }),
                };
                match pairs {
                    Some(mut pairs) => {
                        pairs.extend(kwargs.into_iter().map(|(k, v)| (Value::Str(k), v)));
                        Value::Dict(Rc::new(Shared::new(pairs)))
                    }
                    None => Value::Unknown,
                }
            }
            ("zip", _) => {
                let lists: Vec<Option<Vec<Value>>> = args.iter().map(|a| self.iterate(a)).collect();
                if lists.is_empty() {
                    Value::Unknown
                } else if lists.iter().all(Option::is_some) {
                    let lists: Vec<Vec<Value>> = lists.into_iter().flatten().collect();
                    let n = lists.iter().map(Vec::len).min().unwrap_or(0);
                    Value::list(
                        (0..n)
                            .map(|i| Value::tuple(lists.iter().map(|l| l[i].clone()).collect()))
                            .collect(),
                    )
                } else {
                    // Zipped with something of unknown length: any number
                    // of tuples, each holding one item of every argument
                    // (of a known list, one of its items: their join).
                    let element = args
                        .iter()
                        .zip(lists)
                        .map(|(arg, items)| match items {
                            Some(items) => join_all(self, &items),
                            None => self.element_of(arg),
                        })
                        .collect();
                    Value::Many(Rc::new(Value::tuple(element)), None)
                }
            }
            ("enumerate", [v, ..]) => match self.iterate(v) {
                Some(items) => Value::list(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| Value::tuple(vec![Value::int(i as i64), x]))
                        .collect(),
                ),
                None => {
                    let element = self.element_of(v);
                    let count = match v {
                        Value::Many(_, count) => count.clone(),
                        _ => None,
                    };
                    let index = Value::Int(self.env.anonymous());
                    Value::Many(Rc::new(Value::tuple(vec![index, element])), count)
                }
            },
            ("super", _) => {
                let frame = self.frames.last();
                let receiver = frame.and_then(|f| {
                    let first = f.function.as_ref()?.def.params.first()?.name.id.clone();
                    f.locals.borrow().get(first.as_str()).cloned()
                });
                let owner = frame.and_then(|f| f.function.as_ref()?.owner.as_ref()?.upgrade());
                match (receiver, owner) {
                    (Some(r), Some(o)) => Value::Super(Box::new(r), o),
                    _ => Value::Unknown,
                }
            }
            ("getattr", [obj, Value::Str(attr), rest @ ..]) => {
                let v = self.get_attr(obj, attr, range);
                match (v, rest.first()) {
                    (Value::Unknown, Some(default)) => default.clone(),
                    (v, _) => v,
                }
            }
            ("hasattr", [Value::Instance(inst), Value::Str(attr)]) => Value::Bool(Some(
                inst.attrs.borrow().contains_key(&**attr)
                    || class_lookup(&inst.class, attr).is_some(),
            )),
            // What a library has depends on its version, which is the
            // environment's, not the model's: both answers are kept (the
            // branch a user keeps for old versions is shown too).
            ("hasattr", [Value::Path(_), Value::Str(_)]) => Value::Bool(None),
            ("setattr", [obj, Value::Str(attr), v]) => {
                self.set_attr(obj, attr, v.clone());
                Value::None
            }
            ("print", _) => Value::None,
            ("divmod", [a, b]) => {
                let q = self.binop(
                    shapels_syntax::ast::BinOp::FloorDiv,
                    a.clone(),
                    b.clone(),
                    range,
                    range,
                    range,
                );
                let r = self.binop(
                    shapels_syntax::ast::BinOp::Mod,
                    a.clone(),
                    b.clone(),
                    range,
                    range,
                    range,
                );
                Value::tuple(vec![q, r])
            }
            // Over items the analysis can list and decide (`any([isinstance(v,
            // (tuple, list)) for v in [k, s, d]])`), the answer; else open.
            ("any" | "all", [items]) => {
                let any = name == "any";
                let Some(items) = self.iterate(items) else {
                    return Value::Bool(None);
                };
                let mut decided = true;
                for item in &items {
                    match self.truth(item) {
                        Some(t) if t == any => return Value::Bool(Some(any)),
                        Some(_) => {}
                        None => decided = false,
                    }
                }
                Value::Bool(decided.then_some(!any))
            }
            ("any" | "all", _) => Value::Bool(None),
            // An iterator over a list, tuple, dict or items of unknown number
            // goes through the same items (`next(iter(d.values()))`).
            ("iter", [it])
                if matches!(
                    it,
                    Value::List(_) | Value::Tuple(_) | Value::Dict(_) | Value::Many(..)
                ) =>
            {
                it.clone()
            }
            ("iter", [it @ Value::Instance(_)]) => {
                self.own_iterator(it, range).unwrap_or(Value::Unknown)
            }
            // The first of items of unknown number is like any of them.
            ("next", [Value::Many(element, _), ..]) => (**element).clone(),
            ("next", [it, ..]) => match self.iterate(it) {
                Some(items) if !items.is_empty() => items[0].clone(),
                _ => Value::Unknown,
            },
            // `map(f, xs)` over an enumerable iterable: the calls, in order.
            ("map", [f, rest @ ..]) if !rest.is_empty() => {
                let lists: Option<Vec<Vec<Value>>> = rest.iter().map(|a| self.iterate(a)).collect();
                match lists {
                    Some(lists) => {
                        let n = lists.iter().map(Vec::len).min().unwrap_or(0);
                        let mut out = Vec::with_capacity(n);
                        for i in 0..n {
                            let call_args: Vec<Value> =
                                lists.iter().map(|l| l[i].clone()).collect();
                            out.push(self.call_value(f, call_args, Vec::new(), range));
                        }
                        Value::list(out)
                    }
                    None => Value::Unknown,
                }
            }
            _ => Value::Unknown,
        }
    }

    fn min_max(&mut self, is_max: bool, items: &[Value]) -> Value {
        let mut acc: Option<Value> = None;
        for item in items {
            acc = Some(match (acc, item) {
                (None, v) => v.clone(),
                (Some(Value::Int(a)), Value::Int(b)) => {
                    Value::Int(if is_max { a.maximum(b) } else { a.minimum(b) })
                }
                (Some(a), b) => {
                    let num = |v: &Value| match v {
                        Value::Int(d) => d.as_const().map(|n| n as f64),
                        Value::Float(f) => *f,
                        _ => None,
                    };
                    match (num(&a), num(b)) {
                        (Some(x), Some(y)) => {
                            if (is_max && y > x) || (!is_max && y < x) {
                                b.clone()
                            } else {
                                a
                            }
                        }
                        _ => Value::Unknown,
                    }
                }
            });
        }
        acc.unwrap_or(Value::Unknown)
    }

    pub(crate) fn isinstance(&mut self, v: &Value, class: &Value) -> Value {
        // One of several objects: what each of them answers, when they agree.
        if let Value::Either(members) = v {
            let answers: Vec<Option<bool>> = members
                .iter()
                .map(|m| match self.isinstance(m, class) {
                    Value::Bool(b) => b,
                    _ => None,
                })
                .collect();
            let first = answers.first().copied().flatten();
            return Value::Bool(first.filter(|f| answers.iter().all(|a| *a == Some(*f))));
        }
        let classes = class.items().unwrap_or_else(|| vec![class.clone()]);
        let mut answer = Some(false);
        for c in &classes {
            let r = match (v, c) {
                (Value::Int(_), Value::Path(p)) if &**p == "builtins.int" => Some(true),
                (Value::Float(_), Value::Path(p)) if &**p == "builtins.float" => Some(true),
                (Value::Int(_), Value::Path(p)) if &**p == "builtins.float" => Some(false),
                (Value::Complex, Value::Path(p)) if &**p == "builtins.complex" => Some(true),
                (Value::Tuple(_), Value::Path(p)) if &**p == "builtins.tuple" => Some(true),
                (Value::List(_), Value::Path(p)) if &**p == "builtins.list" => Some(true),
                (Value::Str(_) | Value::Text, Value::Path(p)) if &**p == "builtins.str" => {
                    Some(true)
                }
                (Value::Tensor(_), Value::Path(p)) if p.ends_with("Tensor") => Some(true),
                (Value::Instance(inst), Value::Class(c)) => {
                    Some(class_chain(&inst.class).iter().any(|k| Rc::ptr_eq(k, c)))
                }
                (Value::Instance(inst), Value::Path(p)) => instance_of_path(&inst.class, p),
                // A torch layer is no instance of a user's class (a user
                // class built on a torch layer is an `Instance`).
                (Value::Layer(_), Value::Class(_)) => Some(false),
                (Value::Layer(l), Value::Path(p)) => {
                    Some(p.rsplit('.').next() == Some(&*l.kind) || p.ends_with("Module"))
                }
                (Value::Unknown | Value::Opaque(_), _) => None,
                (Value::Dict(_), Value::Path(p)) => Some(&**p == "builtins.dict"),
                (Value::Partial(_), Value::Path(p)) if &**p == "functools.partial" => Some(true),
                // A class or a function (`nn.ReLU`, a factory of the user's)
                // passed where a name or a class may go (timm's
                // `get_act_layer(name)`): no string, number or container.
                // Other paths may be any value of a library (`os.sep`).
                (Value::Class(_) | Value::Function(_) | Value::Partial(_), Value::Path(c))
                    if is_builtin_value_type(c) =>
                {
                    Some(false)
                }
                (Value::Path(p), Value::Path(c))
                    if names_torch_class(p) && is_builtin_value_type(c) =>
                {
                    Some(false)
                }
                (Value::Class(_), Value::Path(c)) if &**c == "builtins.type" => Some(true),
                (Value::Class(_), Value::Path(c))
                    if &**c == "types.FunctionType" || &**c == "functools.partial" =>
                {
                    Some(false)
                }
                (Value::Function(_), Value::Path(c)) if &**c == "types.FunctionType" => Some(true),
                (Value::Function(_), Value::Path(c))
                    if &**c == "builtins.type" || &**c == "functools.partial" =>
                {
                    Some(false)
                }
                // A torch class (`torch.nn.BatchNorm2d`) is a type, and no
                // function or partial.
                (Value::Path(p), Value::Path(c)) if names_torch_class(p) => match &**c {
                    "builtins.type" => Some(true),
                    "types.FunctionType" | "functools.partial" => Some(false),
                    _ => None,
                },
                (
                    Value::Int(_)
                    | Value::Float(_)
                    | Value::Complex
                    | Value::Tuple(_)
                    | Value::List(_)
                    | Value::Str(_)
                    | Value::Text
                    | Value::None,
                    Value::Path(_),
                ) => Some(false),
                (Value::Tensor(_), _) => Some(false),
                _ => None,
            };
            match r {
                Some(true) => return Value::Bool(Some(true)),
                None => answer = None,
                _ => {}
            }
        }
        Value::Bool(answer)
    }
}

/// `isinstance(obj, torch_or_builtin_class)` for an object of a user
/// class: true when a base along its classes is that class (or `p` is
/// `nn.Module` and a base is a torch module); false when every base outside
/// the user's classes is `nn.Module` or `object`, which are no subclass of
/// anything else (a model's `for m in self.modules(): if isinstance(m,
/// nn.Conv2d)` meets its own blocks); unknown for other bases, whose class
/// tree the analysis does not hold.
fn instance_of_path(class: &Rc<Class>, p: &str) -> Option<bool> {
    let wants_module = is_module_class(p);
    let mut answer = Some(false);
    for c in class_chain(class) {
        for base in &c.bases {
            match base {
                Value::Class(_) => {}
                Value::Path(q) if &**q == p => return Some(true),
                Value::Path(q) if q.starts_with("torch.nn.") && wants_module => return Some(true),
                Value::Path(q) if is_module_class(q) || &**q == "builtins.object" => {}
                _ => answer = None,
            }
        }
    }
    answer
}

/// `torch.nn.Module` under any of its paths.
fn is_module_class(path: &str) -> bool {
    path.starts_with("torch.nn.") && path.ends_with(".Module")
}

pub(super) fn math_call(name: &str, args: &[Value]) -> Value {
    let num = |v: &Value| match v {
        Value::Int(d) => d.as_const().map(|n| n as f64),
        Value::Float(f) => *f,
        _ => None,
    };
    let x = args.first().and_then(num);
    match name {
        "sqrt" => Value::Float(x.map(f64::sqrt)),
        "log" => Value::Float(x.map(f64::ln)),
        "exp" => Value::Float(x.map(f64::exp)),
        "log2" => Value::Float(x.map(f64::log2)),
        "ceil" | "floor" => match (args.first(), x) {
            (Some(Value::Int(d)), _) => Value::Int(d.clone()),
            (_, Some(x)) if x.is_finite() => {
                Value::int(if name == "ceil" { x.ceil() } else { x.floor() } as i64)
            }
            _ => Value::Unknown,
        },
        "prod" => Value::Unknown,
        "pi" => Value::Float(Some(std::f64::consts::PI)),
        _ => Value::Float(None),
    }
}

/// `callable(v)`: whether calling `v` is no `TypeError`, where the
/// analysis knows. `default(val, d)` helpers ask it of their fallback
/// (`d() if callable(d) else d`): a number is the fallback itself.
fn is_callable(v: &Value) -> Option<bool> {
    match v {
        Value::Function(_)
        | Value::BoundMethod(..)
        | Value::BuiltinMethod(..)
        | Value::Partial(_)
        | Value::Class(_)
        | Value::Layer(_) => Some(true),
        // A module object calls its `forward`; another object is callable
        // when its class says how.
        Value::Instance(i) => (super::class::lookup_method(&i.class, "__call__").is_some()
            || super::class::lookup_method(&i.class, "forward").is_some())
        .then_some(true),
        Value::Unknown | Value::Opaque(_) | Value::Path(_) | Value::Super(..) => None,
        Value::Optional(inner) => match is_callable(inner) {
            Some(false) => Some(false),
            _ => None,
        },
        Value::Either(items) => {
            let first = is_callable(items.first()?)?;
            items
                .iter()
                .all(|i| is_callable(i) == Some(first))
                .then_some(first)
        }
        // Numbers, strings, containers, tensors, devices and the like.
        _ => Some(false),
    }
}

/// Python's own types of values (`str`, `int`, `tuple`, ...), which no
/// class or function is an instance of.
fn is_builtin_value_type(path: &str) -> bool {
    matches!(
        path,
        "builtins.str"
            | "builtins.int"
            | "builtins.float"
            | "builtins.bool"
            | "builtins.complex"
            | "builtins.tuple"
            | "builtins.list"
            | "builtins.dict"
            | "builtins.set"
            | "builtins.bytes"
    )
}

/// Whether a module path names one of torch's classes (`torch.nn.ReLU`):
/// a capitalized last part under `torch.nn`.
pub(crate) fn names_torch_class(path: &str) -> bool {
    path.starts_with("torch.nn.")
        && path
            .rsplit('.')
            .next()
            .and_then(|last| last.chars().next())
            .is_some_and(char::is_uppercase)
}
