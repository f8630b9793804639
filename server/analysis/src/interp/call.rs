//! Calls: user functions and methods, classes and instances, Python built-ins.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{Arg, Expr, ExprKind, ParamKind, TextRange};

use super::{Flow, Frame, Interp, MAX_CALL_DEPTH, join_values};
use crate::report::BindingKind;
use crate::rules;
use crate::value::{Class, Function, Instance, Provenance, Value};

/// Keyword arguments of a call, in order.
pub(crate) type Kwargs = Vec<(Rc<str>, Value)>;

impl Interp<'_> {
    pub(crate) fn eval_call(&mut self, call: &Expr, func: &Expr, args: &[Arg]) -> Value {
        let callee = self.eval(func);
        let mut positional = Vec::new();
        let mut keywords: Kwargs = Vec::new();
        let mut open = false;
        for arg in args {
            match arg {
                Arg::Positional(e) => positional.push(self.eval(e)),
                Arg::Starred(e) => {
                    let v = self.eval(e);
                    match self.iterate(&v) {
                        Some(items) => positional.extend(items),
                        // `*x.shape[:-1]` of unknown rank stays one sizes value;
                        // shape arguments (`view`, `reshape`) read it as such.
                        None if matches!(v, Value::SizeOfVar(..)) => positional.push(v),
                        None => return self.unknown_call(&callee),
                    }
                }
                Arg::Keyword(name, e) => {
                    let v = self.eval(e);
                    keywords.push((Rc::from(name.id.as_str()), v));
                }
                Arg::DoubleStarred(e) => {
                    let v = self.eval(e);
                    match v {
                        Value::Dict(d) => {
                            for (k, v) in d.borrow().iter() {
                                if let Value::Str(k) = k {
                                    keywords.push((k.clone(), v.clone()));
                                }
                            }
                        }
                        // Unknown keywords: the callee's defaults are open.
                        _ => open = true,
                    }
                }
            }
        }
        self.open_call = open;
        let result = self.call_value(&callee, positional, keywords, call.range.clone());
        // A flag no user call consumed (the callee was a layer or a torch op)
        // must not leak into the next call.
        self.open_call = false;
        result
    }

    /// The result of a call whose arguments could not be followed.
    fn unknown_call(&mut self, _callee: &Value) -> Value {
        Value::Unknown
    }

    pub(crate) fn call_value(
        &mut self,
        callee: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        match callee {
            Value::Function(f) => self.call_function(f, None, args, kwargs, range),
            Value::BoundMethod(receiver, f) => {
                self.call_function(f, Some((**receiver).clone()), args, kwargs, range)
            }
            Value::Class(class) => self.instantiate(class, args, kwargs, range),
            Value::Instance(inst) => {
                self.forward_ran.insert(Rc::as_ptr(&inst.class) as usize);
                let method = lookup_method(&inst.class, "forward")
                    .or_else(|| lookup_method(&inst.class, "__call__"));
                match method {
                    Some(f) => {
                        let result = self.call_function(
                            &f,
                            Some(callee.clone()),
                            args.clone(),
                            kwargs,
                            range.clone(),
                        );
                        self.check_module_device(callee, &args, range);
                        result
                    }
                    None => {
                        // A torch layer subclassed without its own forward.
                        let layer = inst.attrs.borrow().get("__torch_layer__").cloned();
                        match layer {
                            Some(l @ Value::Layer(_)) => self.call_value(&l, args, kwargs, range),
                            _ => Value::Unknown,
                        }
                    }
                }
            }
            Value::Layer(layer) => rules::nn::call_layer(self, callee, layer, args, kwargs, range),
            Value::Path(path) => self.call_path(path, args, kwargs, range),
            Value::BuiltinMethod(receiver, name) => {
                self.call_builtin_method(receiver, name, args, kwargs, range)
            }
            _ => Value::Unknown,
        }
    }

    /// A user module called with an input on another device than its parameters.
    fn check_module_device(&mut self, _module: &Value, _args: &[Value], _range: TextRange) {}

    pub(crate) fn call_function(
        &mut self,
        f: &Rc<Function>,
        receiver: Option<Value>,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        let key = Rc::as_ptr(&f.def) as usize;
        self.reached.insert(key);
        if self.depth >= MAX_CALL_DEPTH
            || self.stack.iter().filter(|k| **k == key).count() >= 2
            || self.out_of_budget()
        {
            self.cuts += 1;
            return Value::Unknown;
        }
        // A call whose keywords are not all known (`f(**kwargs)` with unknown
        // kwargs, or a made-up library call) may override any default.
        let open = std::mem::take(&mut self.open_call);
        let pending = match self.memo_begin(f, receiver.as_ref(), &args, &kwargs, open) {
            Ok(earlier) => return earlier,
            Err(pending) => pending,
        };
        let locals = Rc::new(RefCell::new(FxHashMap::default()));
        let mut positional = receiver.into_iter().chain(args);
        let mut kwargs = kwargs;
        let mut extra_positional = Vec::new();
        let mut bindings: Vec<(usize, Value)> = Vec::new();
        let params = &f.def.params;
        for (i, param) in params.iter().enumerate() {
            let value = match param.kind {
                ParamKind::Normal { .. } => {
                    if let Some(v) = positional.next() {
                        Some(v)
                    } else if let Some(pos) = kwargs.iter().position(|(k, _)| **k == *param.name.id)
                    {
                        Some(kwargs.remove(pos).1)
                    } else {
                        self.default_for(f, i, open)
                    }
                }
                ParamKind::KwOnly => {
                    if let Some(pos) = kwargs.iter().position(|(k, _)| **k == *param.name.id) {
                        Some(kwargs.remove(pos).1)
                    } else {
                        self.default_for(f, i, open)
                    }
                }
                // A made-up call passes nothing the function could count on:
                // its `*args` are unknown, not empty.
                ParamKind::VarArgs if open => {
                    extra_positional.extend(positional.by_ref());
                    Some(Value::Unknown)
                }
                ParamKind::VarArgs => {
                    extra_positional.extend(positional.by_ref());
                    Some(Value::tuple(std::mem::take(&mut extra_positional)))
                }
                ParamKind::VarKw if open => Some(Value::Opaque(Rc::from(param.name.id.as_str()))),
                ParamKind::VarKw => {
                    let entries = kwargs.drain(..).map(|(k, v)| (Value::Str(k), v)).collect();
                    Some(Value::Dict(Rc::new(RefCell::new(entries))))
                }
            };
            bindings.push((i, value.unwrap_or(Value::Unknown)));
        }
        for (i, value) in bindings {
            let param = &params[i];
            locals
                .borrow_mut()
                .insert(Rc::from(param.name.id.as_str()), value.clone());
            if matches!(value, Value::Unknown) {
                self.recorder
                    .unknown_binding(&param.name.id, param.name.range.clone());
            }
            // An optional tensor input is recorded as the tensor it is when given.
            let recorded = match &value {
                Value::Optional(inner) => inner.as_ref(),
                v => v,
            };
            if let Value::Tensor(t) = recorded {
                let t = Rc::new(crate::value::Tensor {
                    shape: self.resolve_shape(&t.shape),
                    ..(**t).clone()
                });
                self.recorder.binding(
                    &param.name.id,
                    param.name.range.clone(),
                    BindingKind::Param,
                    t.clone(),
                );
                self.recorder.expression(param.name.range.clone(), t);
            }
        }
        self.frames.push(Frame {
            locals,
            closure: f.closure.clone(),
            function: Some(f.clone()),
            early_returns: Vec::new(),
            is_module: false,
        });
        self.stack.push(key);
        self.depth += 1;
        let real_site = range != (0..0);
        if real_site {
            self.call_sites.push(range.clone());
        }
        let flow = self.exec_block(&f.def.body);
        if real_site {
            self.call_sites.pop();
        }
        self.depth -= 1;
        self.stack.pop();
        let frame = self.frames.pop().expect("pushed above");
        let mut result = match flow {
            Flow::Return(v) => Some(v),
            Flow::Stop => None,
            _ => Some(Value::None),
        };
        for early in frame.early_returns {
            result = Some(match result {
                Some(r) => join_values(self, &r, &early),
                None => early,
            });
        }
        let _ = range;
        let result = result.unwrap_or(Value::Unknown);
        self.memo_finish(pending, &result);
        result
    }

    /// The value of a parameter the call did not pass: its default, kept
    /// symbolic when the call may have passed it after all.
    fn default_for(&mut self, f: &Rc<Function>, i: usize, open: bool) -> Option<Value> {
        let default = f.defaults.get(i).cloned().flatten()?;
        if !open {
            return Some(default);
        }
        let name = &f.def.params[i].name.id;
        Some(match default {
            Value::Int(_) => Value::Int(self.env.symbol(name)),
            Value::Float(_) => Value::Float(None),
            Value::Bool(_) => Value::Bool(None),
            other => other,
        })
    }

    fn instantiate(
        &mut self,
        class: &Rc<Class>,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        let instance = Rc::new(Instance {
            class: class.clone(),
            attrs: RefCell::new(FxHashMap::default()),
            order: RefCell::new(Vec::new()),
            origin: if self.mode.fake {
                Provenance::Fake
            } else {
                Provenance::Real
            },
            device: RefCell::new(None),
        });
        let value = Value::Instance(instance.clone());
        let made = self
            .instances
            .entry(Rc::as_ptr(class) as usize)
            .or_default();
        if made.len() < 4 {
            made.push(value.clone());
        }
        if class.is_dataclass {
            self.init_dataclass(class, &instance, args, kwargs);
            return value;
        }
        if let Some(init) = lookup_method(class, "__init__") {
            let _ = self.call_function(&init, Some(value.clone()), args, kwargs, range);
        }
        value
    }

    /// A dataclass gets its fields from the class's annotated assignments.
    fn init_dataclass(
        &mut self,
        class: &Rc<Class>,
        instance: &Rc<Instance>,
        args: Vec<Value>,
        kwargs: Kwargs,
    ) {
        let mut fields: Vec<(String, Option<Value>)> = Vec::new();
        let mut chain = vec![class.clone()];
        let mut i = 0;
        while i < chain.len() {
            let c = chain[i].clone();
            for b in &c.bases {
                if let Value::Class(b) = b {
                    chain.push(b.clone());
                }
            }
            i += 1;
        }
        for c in chain.iter().rev() {
            let Some(def) = &c.def else { continue };
            for stmt in &def.body {
                if let shapels_syntax::ast::StmtKind::Assign {
                    targets,
                    annotation: Some(_),
                    ..
                } = &stmt.kind
                    && let [target] = targets.as_slice()
                    && let ExprKind::Name(name) = &target.kind
                {
                    let default = c.attrs.borrow().get(name.as_str()).cloned();
                    fields.retain(|(n, _)| n != name);
                    fields.push((name.clone(), default));
                }
            }
        }
        let mut positional = args.into_iter();
        let open = self.dataclass_prefix.take();
        for (name, default) in fields {
            let default = match (&open, default) {
                (Some(prefix), Some(Value::Int(_))) => {
                    Some(Value::Int(self.env.symbol(&format!("{prefix}.{name}"))))
                }
                (Some(_), Some(Value::Float(_))) => Some(Value::Float(None)),
                (Some(_), Some(Value::Bool(_))) => Some(Value::Bool(None)),
                (Some(prefix), None) => Some(Value::Opaque(Rc::from(format!("{prefix}.{name}")))),
                (_, default) => default,
            };
            let v = positional
                .next()
                .or_else(|| {
                    kwargs
                        .iter()
                        .find(|(k, _)| **k == *name)
                        .map(|(_, v)| v.clone())
                })
                .or(default)
                .unwrap_or(Value::Unknown);
            self.set_attr(&Value::Instance(instance.clone()), &name, v);
        }
    }

    /// An instance made up from the constructor's signature, for classes no
    /// code in the file instantiates.
    pub(crate) fn generic_instance(&mut self, class: &Rc<Class>) -> Value {
        let args = match lookup_method(class, "__init__") {
            Some(init) => self.generic_args(&init, false),
            None => Vec::new(),
        };
        self.open_call = true;
        let instance = self.instantiate(class, args, Vec::new(), 0..0);
        self.open_call = false;
        instance
    }

    /// Arguments made from a signature: defaults where given, symbols named
    /// after int parameters, tensors of unknown rank for forward inputs, and
    /// opaque values otherwise.
    pub(crate) fn generic_args(&mut self, f: &Rc<Function>, tensors: bool) -> Vec<Value> {
        let mut out = Vec::new();
        let is_method = f.owner.is_some();
        let used_as_tensor = self.tensor_params(&f.def);
        let dim_selectors = super::signature::dim_params(&f.def);
        // Dims named alike in one signature's jaxtyping annotations are one symbol.
        let mut jax_symbols: FxHashMap<String, Dim> = FxHashMap::default();
        let mut commented = self.comment_shapes(&f.def);
        for (i, param) in f.def.params.iter().enumerate() {
            if is_method && i == 0 {
                continue;
            }
            if !matches!(param.kind, ParamKind::Normal { .. }) {
                break;
            }
            if let Some(dims) = commented.remove(&param.name.id) {
                let t =
                    self.new_tensor(crate::value::Shape::known(dims), None, None, &param.name.id);
                out.push(Value::Tensor(Rc::new(t)));
                continue;
            }
            let tensors = tensors || used_as_tensor.contains(&param.name.id);
            if let Some(Some(default)) = f.defaults.get(i)
                && dim_selectors.contains(&param.name.id)
            {
                out.push(default.clone());
                continue;
            }
            if let Some(Some(default)) = f.defaults.get(i) {
                // A default is one choice among many a caller may make: a
                // number stays symbolic (named after the parameter), a flag
                // stays undecided, so no shape rests on a guess.
                let value = match default {
                    Value::Int(_) => Value::Int(self.env.symbol(&param.name.id)),
                    Value::Float(_) => Value::Float(None),
                    Value::Bool(_) => Value::Bool(None),
                    // An optional tensor input (`mask=None`): both paths run.
                    Value::None if tensors => {
                        Value::Optional(Box::new(self.generic_tensor(&param.name.id)))
                    }
                    other => other.clone(),
                };
                out.push(value);
                continue;
            }
            let annotation = param
                .annotation
                .as_ref()
                .map(|a| self.text(&a.range).to_string());
            let value = match annotation.as_deref() {
                Some("int") => Value::Int(self.env.symbol(&param.name.id)),
                Some("float") => Value::Float(None),
                Some("bool") => Value::Bool(None),
                Some("str") => Value::Unknown,
                Some(a) if a.contains("Tensor") || a.contains("Float[") || a.contains("Int[") => {
                    match self.jaxtyping_shape(a, &mut jax_symbols) {
                        Some(shape) => {
                            let dtype = if a.starts_with("Int[") || a.starts_with("Long[") {
                                Some(crate::value::DType::Int64)
                            } else if a.starts_with("Float[") {
                                Some(crate::value::DType::Float32)
                            } else {
                                None
                            };
                            Value::Tensor(Rc::new(self.new_tensor(
                                shape,
                                dtype,
                                None,
                                &param.name.id,
                            )))
                        }
                        None => self.generic_tensor(&param.name.id),
                    }
                }
                Some(a) => match self.lookup(a) {
                    Some(Value::Class(c)) if c.is_dataclass => {
                        // A config nobody built: its fields are what callers
                        // pass, named `config.n_embd`; the defaults are one choice.
                        self.dataclass_prefix = Some(Rc::from(param.name.id.as_str()));
                        let v = self.instantiate(&c, Vec::new(), Vec::new(), 0..0);
                        self.dataclass_prefix = None;
                        v
                    }
                    _ if tensors => self.generic_tensor(&param.name.id),
                    _ => Value::Opaque(Rc::from(param.name.id.as_str())),
                },
                None if tensors => self.generic_tensor(&param.name.id),
                None => Value::Opaque(Rc::from(param.name.id.as_str())),
            };
            out.push(value);
        }
        out
    }

    /// The shape a jaxtyping annotation states: `Float[Tensor, "batch seq dim"]`
    /// gives `[batch, seq, dim]`; `*batch` or `...` first gives any number of
    /// leading dims; `_` is a size nobody named.
    fn jaxtyping_shape(
        &mut self,
        annotation: &str,
        symbols: &mut FxHashMap<String, Dim>,
    ) -> Option<crate::value::Shape> {
        let start = annotation.find('"')?;
        let end = annotation[start + 1..].find('"')? + start + 1;
        let spec = &annotation[start + 1..end];
        let mut dims = Vec::new();
        let mut variadic = false;
        for (i, token) in spec.split_whitespace().enumerate() {
            if token == "..." || token.starts_with('*') || token.starts_with("#*") {
                if i != 0 || variadic {
                    return None;
                }
                variadic = true;
                continue;
            }
            let token = token.trim_start_matches('#');
            if let Ok(n) = token.parse::<i64>() {
                dims.push(Dim::konst(n));
            } else if token == "_" {
                dims.push(self.env.anonymous());
            } else if token.chars().all(|c| c.is_alphanumeric() || c == '_') {
                let d = symbols
                    .entry(token.to_string())
                    .or_insert_with(|| self.env.symbol(token))
                    .clone();
                dims.push(d);
            } else {
                return None;
            }
        }
        if variadic {
            let crate::value::Shape::Var(v) = self.fresh_rank_var() else {
                return None;
            };
            return Some(crate::value::Shape::Tail(v, Rc::new(dims)));
        }
        Some(crate::value::Shape::known(dims))
    }

    fn generic_tensor(&mut self, name: &str) -> Value {
        let shape = self.fresh_rank_var();
        // Nothing says what dtype an argument has: unknown, so no dtype rule
        // can fire on a guess.
        let t = self.new_tensor(shape, None, None, name);
        Value::Tensor(Rc::new(t))
    }

    fn call_path(
        &mut self,
        path: &Rc<str>,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        if let Some(name) = path.strip_prefix("builtins.") {
            return self.call_builtin(name, args, kwargs, range);
        }
        if let Some(name) = path.strip_prefix("math.") {
            return math_call(name, &args);
        }
        if matches!(
            &**path,
            "dataclasses.dataclass" | "dataclasses.field" | "functools.partial"
        ) {
            return kwargs
                .iter()
                .find(|(k, _)| &**k == "default")
                .map(|(_, v)| v.clone())
                .unwrap_or(Value::Unknown);
        }
        rules::call_torch(self, path, args, kwargs, range)
    }

    fn call_builtin(
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
                        (None, crate::value::Shape::Var(v)) => Value::Int(self.var_dim(*v, 0, "x")),
                        (None, _) => Value::Int(self.env.anonymous()),
                    }
                }
                Value::Str(s) => Value::int(s.chars().count() as i64),
                Value::Dict(d) => Value::int(d.borrow().len() as i64),
                Value::Layer(l) if l.unknown_children.get() => Value::Unknown,
                Value::Layer(l) => Value::int(l.children.borrow().len() as i64),
                _ => match v.items() {
                    Some(items) => Value::int(items.len() as i64),
                    None => Value::Unknown,
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
                Value::Tensor(_) => Value::Int(self.env.anonymous()),
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
            ("bool", [v]) => Value::Bool(self.truth(v)),
            ("str" | "repr", _) => Value::Str(Rc::from("")),
            ("abs", [Value::Int(d)]) => match d.as_const() {
                Some(n) => Value::int(n.abs()),
                None => Value::Unknown,
            },
            ("abs", [Value::Float(f)]) => Value::Float(f.map(f64::abs)),
            ("round", [Value::Float(f)]) => match f {
                Some(f) if f.is_finite() => Value::int(f.round_ties_even() as i64),
                _ => Value::Unknown,
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
                        range.clone(),
                        range.clone(),
                        range.clone(),
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
            ("dict", []) => Value::Dict(Rc::new(RefCell::new(
                kwargs
                    .into_iter()
                    .map(|(k, v)| (Value::Str(k), v))
                    .collect(),
            ))),
            ("zip", _) => {
                let lists: Option<Vec<Vec<Value>>> = args.iter().map(|a| self.iterate(a)).collect();
                match lists {
                    Some(lists) if !lists.is_empty() => {
                        let n = lists.iter().map(Vec::len).min().unwrap_or(0);
                        Value::list(
                            (0..n)
                                .map(|i| Value::tuple(lists.iter().map(|l| l[i].clone()).collect()))
                                .collect(),
                        )
                    }
                    _ => Value::Unknown,
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
                None => Value::Unknown,
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
                    range.clone(),
                    range.clone(),
                    range.clone(),
                );
                let r = self.binop(
                    shapels_syntax::ast::BinOp::Mod,
                    a.clone(),
                    b.clone(),
                    range.clone(),
                    range.clone(),
                    range,
                );
                Value::tuple(vec![q, r])
            }
            ("any" | "all", _) => Value::Bool(None),
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
                            out.push(self.call_value(f, call_args, Vec::new(), range.clone()));
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

    fn isinstance(&mut self, v: &Value, class: &Value) -> Value {
        let classes = class.items().unwrap_or_else(|| vec![class.clone()]);
        let mut answer = Some(false);
        for c in &classes {
            let r = match (v, c) {
                (Value::Int(_), Value::Path(p)) if &**p == "builtins.int" => Some(true),
                (Value::Float(_), Value::Path(p)) if &**p == "builtins.float" => Some(true),
                (Value::Int(_), Value::Path(p)) if &**p == "builtins.float" => Some(false),
                (Value::Tuple(_), Value::Path(p)) if &**p == "builtins.tuple" => Some(true),
                (Value::List(_), Value::Path(p)) if &**p == "builtins.list" => Some(true),
                (Value::Str(_), Value::Path(p)) if &**p == "builtins.str" => Some(true),
                (Value::Tensor(_), Value::Path(p)) if p.ends_with("Tensor") => Some(true),
                (Value::Instance(inst), Value::Class(c)) => {
                    Some(class_chain(&inst.class).iter().any(|k| Rc::ptr_eq(k, c)))
                }
                (Value::Layer(l), Value::Path(p)) => {
                    Some(p.rsplit('.').next() == Some(&*l.kind) || p.ends_with("Module"))
                }
                (Value::Unknown | Value::Opaque(_), _) => None,
                (
                    Value::Int(_)
                    | Value::Float(_)
                    | Value::Tuple(_)
                    | Value::List(_)
                    | Value::Str(_)
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

    fn call_builtin_method(
        &mut self,
        receiver: &Value,
        name: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        match receiver {
            // `super().__init__(...)` / `super().forward(x)` of a torch layer subclass.
            Value::Tuple(parts) if name.starts_with("__super__.") && parts.len() == 2 => {
                let (Value::Instance(inst), Value::Str(base)) = (&parts[0], &parts[1]) else {
                    return Value::Unknown;
                };
                match &name["__super__.".len()..] {
                    "__init__" => {
                        let layer = rules::call_torch(
                            self,
                            &format!("torch.nn.{base}"),
                            args,
                            kwargs,
                            range,
                        );
                        self.set_attr(&parts[0], "__torch_layer__", layer);
                        Value::None
                    }
                    "forward" => {
                        let layer = inst.attrs.borrow().get("__torch_layer__").cloned();
                        match layer {
                            Some(l @ Value::Layer(_)) => self.call_value(&l, args, kwargs, range),
                            _ => Value::Unknown,
                        }
                    }
                    _ => Value::Unknown,
                }
            }

            Value::Tensor(t) => rules::tensor_method(self, t, name, args, kwargs, range),
            Value::List(items) => match (name, args.as_slice()) {
                ("append", [v]) => {
                    self.epoch += 1;
                    items.borrow_mut().push(v.clone());
                    Value::None
                }
                ("extend", [v]) => {
                    self.epoch += 1;
                    match self.iterate(v) {
                        Some(vs) => items.borrow_mut().extend(vs),
                        None => items.borrow_mut().push(Value::Unknown),
                    }
                    Value::None
                }
                ("insert", [Value::Int(i), v]) => {
                    self.epoch += 1;
                    let mut items = items.borrow_mut();
                    let i = i.as_const().unwrap_or(0).clamp(0, items.len() as i64) as usize;
                    items.insert(i, v.clone());
                    Value::None
                }
                ("pop", []) => {
                    self.epoch += 1;
                    items.borrow_mut().pop().unwrap_or(Value::Unknown)
                }
                ("copy", []) => Value::list(items.borrow().clone()),
                ("index" | "count", _) => Value::Unknown,
                _ => Value::Unknown,
            },
            Value::Dict(d) => match (name, args.as_slice()) {
                ("items", []) => Value::list(
                    d.borrow()
                        .iter()
                        .map(|(k, v)| Value::tuple(vec![k.clone(), v.clone()]))
                        .collect(),
                ),
                ("keys", []) => Value::list(d.borrow().iter().map(|(k, _)| k.clone()).collect()),
                ("values", []) => Value::list(d.borrow().iter().map(|(_, v)| v.clone()).collect()),
                ("get", [key, rest @ ..]) => {
                    let entries = d.borrow().clone();
                    for (k, v) in entries {
                        match self.values_equal(&k, key) {
                            Some(true) => return v,
                            None => return Value::Unknown,
                            _ => {}
                        }
                    }
                    rest.first().cloned().unwrap_or(Value::None)
                }
                ("pop", [key, ..]) => {
                    let entries = d.borrow().clone();
                    for (i, (k, v)) in entries.iter().enumerate() {
                        if self.values_equal(k, key) == Some(true) {
                            self.epoch += 1;
                            d.borrow_mut().remove(i);
                            return v.clone();
                        }
                    }
                    args.get(1).cloned().unwrap_or(Value::Unknown)
                }
                ("update", [Value::Dict(other)]) => {
                    let extra = other.borrow().clone();
                    self.epoch += 1;
                    d.borrow_mut().extend(extra);
                    Value::None
                }
                ("setdefault", _) | ("copy", _) => Value::Unknown,
                _ => Value::Unknown,
            },
            Value::Tuple(_) | Value::SizeOfVar(..) => {
                rules::size_method(self, receiver, name, args, range)
            }
            Value::Str(s) => match name {
                "format" | "join" | "upper" | "lower" | "strip" | "replace" => {
                    Value::Str(Rc::from(""))
                }
                "startswith" | "endswith" => match args.first() {
                    Some(Value::Str(p)) => Value::Bool(Some(if name == "startswith" {
                        s.starts_with(&**p)
                    } else {
                        s.ends_with(&**p)
                    })),
                    _ => Value::Bool(None),
                },
                _ => Value::Unknown,
            },
            Value::Instance(_) | Value::Layer(_) => {
                rules::nn::module_method(self, receiver, name, args, kwargs, range)
            }
            Value::FakeMode { .. } => {
                // `mode.from_tensor(real)` makes a fake copy inside that mode.
                if name == "from_tensor"
                    && let (Some(Value::Tensor(t)), Value::FakeMode { id, .. }) =
                        (args.first(), receiver)
                {
                    return Value::Tensor(Rc::new(crate::value::Tensor {
                        origin: Provenance::Fake,
                        mode: *id,
                        ..(**t).clone()
                    }));
                }
                Value::Unknown
            }
            Value::None => Value::None,
            _ => Value::Unknown,
        }
    }
}

/// The class and its bases, depth-first in declaration order (a simple MRO).
pub(crate) fn class_chain(class: &Rc<Class>) -> Vec<Rc<Class>> {
    let mut out: Vec<Rc<Class>> = Vec::new();
    let mut todo = vec![class.clone()];
    while let Some(c) = todo.pop() {
        if out.iter().any(|k| Rc::ptr_eq(k, &c)) || out.len() > 64 {
            continue;
        }
        for b in c.bases.iter().rev() {
            if let Value::Class(b) = b {
                todo.push(b.clone());
            }
        }
        out.push(c);
    }
    out
}

/// A class attribute, searched along the bases.
pub(crate) fn class_lookup(class: &Rc<Class>, name: &str) -> Option<Value> {
    class_chain(class)
        .iter()
        .find_map(|c| c.attrs.borrow().get(name).cloned())
}

/// A plain method (not a property) along the bases.
pub(crate) fn lookup_method(class: &Rc<Class>, name: &str) -> Option<Rc<Function>> {
    match class_lookup(class, name)? {
        Value::Function(f) => Some(f),
        _ => None,
    }
}

/// The torch layer a class derives from (`Conv1d` for `class C(nn.Conv1d)`),
/// found along its bases; `None` for plain `nn.Module` subclasses.
pub(crate) fn torch_layer_base(class: &Rc<Class>) -> Option<Rc<str>> {
    class_chain(class).iter().find_map(|c| {
        c.bases.iter().find_map(|b| match b {
            Value::Path(p) => {
                let name = p.rsplit('.').next()?;
                let torch = p.starts_with("torch.nn") || p.starts_with("nn.");
                (torch && name != "Module" && name.chars().next()?.is_uppercase())
                    .then(|| Rc::from(name))
            }
            _ => None,
        })
    })
}

/// Whether the class derives from `nn.Module` (or any torch class).
pub(crate) fn is_module_class(class: &Rc<Class>) -> bool {
    class_chain(class).iter().any(|c| {
        c.bases
            .iter()
            .any(|b| matches!(b, Value::Path(p) if p.starts_with("torch.") || p.contains("Module")))
    })
}

fn math_call(name: &str, args: &[Value]) -> Value {
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
