//! Calls: user functions and methods, classes and instances, Python built-ins.
//!
//! This file evaluates a call's arguments and sends the call to what the
//! callee is: a user function, a class, a module instance, a torch layer, a
//! module path (`torch.*`, `math.*`, built-ins) or a method of a built-in
//! value, each of which has a file of its own.

mod builtins;
mod class;
mod copy;
mod data;
mod function;
mod generic;
mod methods;
pub(crate) mod strings;

use std::rc::Rc;

use shapels_syntax::ast::{Arg, Expr, ExprKind, TextRange};

use super::{Interp, join_all, join_values};
use crate::report::BindingKind;
use crate::rules;
use crate::value::Value;

use self::builtins::math_call;
pub(crate) use self::builtins::names_torch_class;
pub(crate) use self::data::is_dataset;

pub(crate) use class::{
    class_lookup, is_autograd_function, is_module_class, lookup_method, torch_layer_base,
};

/// Whether calling `callee` runs the user's own code, which reads
/// keywords it is not given as unknown (`open_call`).
fn runs_user_code(callee: &Value) -> bool {
    match callee {
        Value::Function(_) | Value::BoundMethod(..) | Value::Class(_) | Value::Instance(_) => true,
        // A user `autograd.Function`'s `apply` runs its `forward`.
        Value::BuiltinMethod(receiver, name) => {
            matches!(**receiver, Value::Class(_)) && &**name == "__autograd_apply__"
        }
        _ => false,
    }
}

pub(crate) use crate::value::Kwargs;

impl Interp<'_> {
    pub(crate) fn eval_call(&mut self, call: &Expr, func: &Expr, args: &[Arg]) -> Value {
        let callee = self.eval(func);
        if let Some(rounded) = self.rounded_quotient(&callee, args) {
            return rounded;
        }
        let mut positional = Vec::new();
        let mut keywords: Kwargs = Vec::new();
        let mut open = false;
        let mut unread_keywords = false;
        let user_code = runs_user_code(&callee);
        // The sizes `*x.shape[:-2]` spread into a torch call, while the
        // sizes after them (`x.view(*x.shape[:-2], -1)`) join them.
        let mut spread_sizes: Option<usize> = None;
        let mut maybe_none_keywords: Vec<Rc<str>> = Vec::new();
        for arg in args {
            match arg {
                Arg::Positional(e) if user_code => positional.push(self.eval_passed(e)),
                Arg::Positional(e) => {
                    let v = self.eval(e);
                    let joined = match (spread_sizes, &v) {
                        (Some(at), Value::Int(d)) if at + 1 == positional.len() => {
                            match &mut positional[at] {
                                Value::SizeOfVar(_, suffix) => {
                                    Rc::make_mut(suffix).push(d.clone());
                                    true
                                }
                                _ => false,
                            }
                        }
                        _ => false,
                    };
                    if !joined {
                        spread_sizes = None;
                        positional.push(v);
                    }
                }
                Arg::Starred(e) => {
                    let v = self.eval(e);
                    match self.iterate(&v) {
                        Some(items) => positional.extend(items),
                        // Known items, then any number of unknown ones: user
                        // code gets the known ones, and an open call (its
                        // further parameters unknown, its `*args` open too).
                        None if let (true, Value::OpenTuple(items)) = (user_code, &v) => {
                            positional.extend(items.iter().cloned());
                            open = true;
                        }
                        // `*x.shape[:-1]` of unknown rank stays one sizes value;
                        // shape arguments (`view`, `reshape`) read it as such.
                        None if matches!(v, Value::SizeOfVar(..)) => {
                            spread_sizes = (!user_code).then_some(positional.len());
                            positional.push(v);
                        }
                        // `nn.Sequential(*[Block() for _ in range(n)])`: a
                        // torch constructor reads the unknown-length list as such.
                        None if matches!(v, Value::Many(..))
                            && matches!(callee, Value::Path(_)) =>
                        {
                            positional.push(v)
                        }
                        None => return self.unknown_call(&callee),
                    }
                }
                Arg::Keyword(name, e) => {
                    let v = match self.eval_passed(e) {
                        Value::Optional(inner) if !user_code => {
                            maybe_none_keywords.push(Rc::from(name.id.as_str()));
                            *inner
                        }
                        v => v,
                    };
                    keywords.push((Rc::from(name.id.as_str()), v));
                }
                Arg::DoubleStarred(e) => {
                    let v = self.eval(e);
                    match v {
                        Value::Dict(d) => keywords.extend(dict_keywords(&d)),
                        // One of a few dicts (keys added under a condition):
                        // the keys of all, with any of their values; a key
                        // only some have is given or not, a value nobody
                        // knows (which the default is one of).
                        Value::Either(options)
                            if options.iter().all(|o| matches!(o, Value::Dict(_))) =>
                        {
                            for (k, v) in self.either_keywords(&options) {
                                keywords.push((k, v));
                            }
                        }
                        // Unknown keywords: the callee's defaults are open.
                        // A torch or einops op cannot be judged without
                        // them (`rearrange(x, p, **sizes)`): like an
                        // unknown `*args`, its result is unknown.
                        _ if !runs_user_code(&callee) => return self.unknown_call(&callee),
                        _ => {
                            open = true;
                            unread_keywords = true;
                        }
                    }
                }
            }
        }
        if unread_keywords {
            self.unread_keywords_given(&callee, positional.len(), &mut keywords);
        }
        if matches!(positional.last(), Some(Value::Function(_)))
            && let Some(kernel) = self.register_by_call(func, args, &positional)
        {
            return kernel;
        }
        // A function of the user's handed to code the analysis does not run
        // (`layer.register_forward_hook(hook)`, a library's callback) may
        // run later and fill this frame's lists: an empty one is not known
        // to stay empty.
        if !runs_user_code(&callee)
            && positional
                .iter()
                .chain(keywords.iter().map(|(_, v)| v))
                .any(|v| matches!(v, Value::Function(_)))
        {
            self.frame().lists_unsure = true;
        }
        // `feats.append(x)` on a list of unknown length (`Value::Many`, an
        // immutable value): the name or attribute holding it now holds one
        // whose items may also be `x`.
        if let Value::BuiltinMethod(receiver, method) = &callee
            && let Value::Many(element, _) = &**receiver
            && let ExprKind::Attribute { value: holder, .. } = &func.kind
            && let ("append" | "extend", [item]) = (&**method, positional.as_slice())
        {
            let item = if &**method == "extend" {
                self.element_of(item)
            } else {
                item.clone()
            };
            let joined = join_values(self, element, &item);
            let grown = Value::Many(Rc::new(joined), None);
            self.assign(holder, grown, BindingKind::Assign);
            return Value::None;
        }
        self.open_call = open;
        // An offer lives from a rule's check to its report, which never
        // spans the evaluation of another call: one a rule made and did not
        // report (a raise caught on the way) goes here, before it could be
        // taken by another report of its code.
        self.offered_fixes.clear();
        // Only torch's rules propose fixes; a user function's call is not
        // worth the allocation.
        self.maybe_none_keywords = maybe_none_keywords;
        self.written_call = if runs_user_code(&callee) {
            None
        } else {
            crate::rules::fixes::WrittenCall::of(call, func, args).map(Rc::new)
        };
        // Guards the call assumes are put down to it, by the name of what
        // it calls (a user function's own ops name themselves).
        let op: Option<Rc<str>> = match &callee {
            Value::Layer(l) => Some(l.kind.clone()),
            // Named as written out (`torch.nn.functional.relu`); hover
            // says it shorter.
            Value::Path(p) => Some(p.clone()),
            Value::BuiltinMethod(_, name) => Some(name.clone()),
            Value::Instance(i) => Some(i.class.name.clone()),
            _ => None,
        };
        // The chain of ops of the result names user functions too.
        let step: Option<Rc<str>> = match &callee {
            Value::Function(f) | Value::BoundMethod(_, f) => Some(Rc::from(f.def.name.id.as_str())),
            _ => op.clone(),
        };
        let input = match &callee {
            Value::BuiltinMethod(receiver, _) => Some((**receiver).clone()),
            _ => positional.first().cloned(),
        };
        let outer = op.map(|op| {
            self.env.set_site(Some(shapels_shapes::GuardSite {
                op,
                at: call.range.start,
            }))
        });
        let result = self.call_value(&callee, positional, keywords, call.range);
        if let Some(outer) = outer {
            self.env.set_site(outer);
        }
        let result = match &step {
            Some(step) => self.extend_trail(result, input.as_ref(), step, call.range.start),
            None => result,
        };
        // A flag no user call consumed (the callee was a layer or a torch op)
        // must not leak into the next call.
        self.open_call = false;
        result
    }

    /// `Enc(**config)` with a `config` the analysis cannot read: the call
    /// passes keywords nobody knows, so a parameter whose default is None
    /// or a string (`out_indices=None`, `mode="nearest"`) may hold anything
    /// (an open call keeps such defaults otherwise, as a made-up run does).
    fn unread_keywords_given(&mut self, callee: &Value, given: usize, keywords: &mut Kwargs) {
        let function = match callee {
            Value::Function(f) | Value::BoundMethod(_, f) => Some(f.clone()),
            Value::Class(c) => match class::class_lookup(c, "__init__") {
                Some(Value::Function(f)) => Some(f),
                _ => None,
            },
            _ => None,
        };
        let Some(f) = function else { return };
        // A bound method's and a constructor's `self` is given already.
        let skip = usize::from(!matches!(callee, Value::Function(_)));
        for (i, param) in f.def.params.iter().enumerate().skip(skip + given) {
            let name = param.name.id.as_str();
            if keywords.iter().any(|(k, _)| &**k == name) {
                continue;
            }
            let value = match f.defaults.get(i) {
                Some(Some(Value::None)) => Value::Unknown,
                Some(Some(Value::Str(_))) => Value::Text,
                _ => continue,
            };
            keywords.push((Rc::from(name), value));
        }
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
        if let (Some(log), Value::Opaque(name)) = (self.summary.as_mut(), callee) {
            log.called_opaque.insert(name.clone());
        }
        if let (Some(log), Value::Path(path)) = (self.summary.as_mut(), callee)
            && (path.contains("weight_norm")
                || path.contains("spectral_norm")
                || path.contains("parametriz"))
            && let Some(address) = args.first().and_then(crate::summary::log::module_address)
        {
            log.reparametrized.insert(address);
        }
        if self.summary.is_some() && matches!(callee, Value::Instance(_) | Value::Layer(_)) {
            let call = self.summary_enter(callee, &args, &range);
            let output = self.call_value_here(callee, args, kwargs, range);
            self.summary_leave(call, &output);
            return output;
        }
        self.call_value_here(callee, args, kwargs, range)
    }

    /// Call one of several objects (`self.h_upd` built as an `Upsample`, a
    /// `Downsample` or an `Identity`): only one of them runs, so what each
    /// raises holds on some paths, and one that torch refuses for these
    /// arguments gives nothing (see `alternatives`).
    fn call_either(
        &mut self,
        alternatives: &[Value],
        args: &[Value],
        kwargs: &Kwargs,
        range: TextRange,
    ) -> Value {
        // Objects of one kind among them (the `Conv3d(in_ch, out_ch)` of a
        // module list's first block and the one of another block, joined
        // as the list's item) each run apart: what one learns of sizes
        // (`in_ch` is the input's channels) is not the others'. Objects of
        // different kinds (an attention class chosen by a flag) share
        // what they learn, as the names they give the input's sizes.
        let apart = alternatives
            .iter()
            .enumerate()
            .any(|(i, a)| alternatives[..i].iter().any(|b| same_kind_of_object(a, b)));
        let call = |interp: &mut Self, alt: &Value| {
            interp.call_value(alt, args.to_vec(), kwargs.clone(), range)
        };
        self.uncertain += 1;
        let results = if apart {
            let ran = alternatives
                .iter()
                .map(|alt| self.run_alternative_apart(|interp| call(interp, alt)))
                .collect();
            self.keep_facts_of_working(ran)
        } else {
            alternatives
                .iter()
                .map(|alt| self.run_alternative(|interp| call(interp, alt)))
                .collect()
        };
        self.uncertain -= 1;
        self.join_working(results)
    }

    /// `call_value`, without noting module calls for a summary.
    fn call_value_here(
        &mut self,
        callee: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        match callee {
            Value::Function(f) => self.call_function(f, None, args, kwargs, range),
            Value::Partial(p) => {
                let mut all_args = p.args.clone();
                all_args.extend(args);
                // Keywords of the call override the bound ones, as in Python.
                let mut all_kwargs: Kwargs = p
                    .kwargs
                    .iter()
                    .filter(|(k, _)| !kwargs.iter().any(|(given, _)| given == k))
                    .cloned()
                    .collect();
                all_kwargs.extend(kwargs);
                self.call_value(&p.function, all_args, all_kwargs, range)
            }
            // `self.forward(x)` is `self(x)` without the hooks.
            Value::BoundMethod(receiver, f)
                if f.def.name.id == "forward" && matches!(**receiver, Value::Instance(_)) =>
            {
                self.call_forward(f, receiver, args, kwargs, range)
            }
            Value::BoundMethod(receiver, f) => {
                self.call_function(f, Some((**receiver).clone()), args, kwargs, range)
            }
            Value::Class(class) => self.instantiate(class, args, kwargs, range),
            Value::Instance(inst) => {
                if self.says_something(&args, &kwargs) {
                    self.forward_ran.insert(Rc::as_ptr(&inst.class) as usize);
                    // Only this file's classes are asked about (see
                    // `run_unreached`).
                    if crate::value::is_local_class(&inst.class) {
                        self.across_forward_ran(Rc::as_ptr(&inst.class) as usize);
                    }
                }
                let method = lookup_method(&inst.class, "forward")
                    .or_else(|| lookup_method(&inst.class, "__call__"));
                match method {
                    Some(f) => {
                        let result = self.call_forward(&f, callee, args.clone(), kwargs, range);
                        self.check_module_device(callee, &args, range);
                        result
                    }
                    None => {
                        // A torch layer subclassed without its own forward.
                        let layer = inst.attrs.borrow().get("__torch_layer__").cloned();
                        match layer {
                            // A convolution's forward is `self._conv_forward(
                            // input, self.weight, self.bias)`: a subclass's own
                            // (Whisper's, casting the weights to the input's
                            // dtype) runs in its place.
                            Some(Value::Layer(l))
                                if l.kind.starts_with("Conv")
                                    && let Some(own) =
                                        lookup_method(&inst.class, "_conv_forward")
                                    && let [input] = args.as_slice() =>
                            {
                                let weight = self.get_attr(callee, "weight", range);
                                let bias = self.get_attr(callee, "bias", range);
                                self.call_function(
                                    &own,
                                    Some(callee.clone()),
                                    vec![input.clone(), weight, bias],
                                    Vec::new(),
                                    range,
                                )
                            }
                            Some(l @ Value::Layer(_)) => self.call_value(&l, args, kwargs, range),
                            _ => Value::Unknown,
                        }
                    }
                }
            }
            Value::Layer(layer) => {
                let operands = args.clone();
                let refs: Vec<&Value> = operands.iter().collect();
                let at = range;
                self.with_operands(&refs, &at, |interp| {
                    rules::nn::call_layer(interp, layer, args, kwargs, range)
                })
            }
            // Only one of them runs: what each raises holds on some paths.
            Value::Either(alternatives) => self.call_either(alternatives, &args, &kwargs, range),
            Value::Path(path) => {
                let at = range;
                let result = self.call_path(path, args, kwargs, range);
                if matches!(result, Value::Unknown) {
                    self.last_outside_unknown = Some(at);
                    self.note_unknown_call(path, &at);
                }
                result
            }
            Value::BuiltinMethod(receiver, name) => {
                self.call_builtin_method(receiver, name, args, kwargs, range)
            }
            _ => Value::Unknown,
        }
    }

    /// `math.ceil(a / b)` and `math.floor(a / b)` of two sizes: the
    /// quotient rounded, as an int (`(a + b - 1) // b` for the ceiling),
    /// where the true division alone would give a float nobody can read.
    /// TF-style "same" padding computes `math.ceil(ih / stride)`.
    fn rounded_quotient(&mut self, callee: &Value, args: &[Arg]) -> Option<Value> {
        let Value::Path(path) = callee else {
            return None;
        };
        let ceil = match &**path {
            "math.ceil" => true,
            "math.floor" => false,
            _ => return None,
        };
        let [Arg::Positional(e)] = args else {
            return None;
        };
        let ExprKind::BinOp {
            left,
            op: shapels_syntax::ast::BinOp::Div,
            right,
        } = &e.kind
        else {
            return None;
        };
        let (x, y) = (self.eval(left), self.eval(right));
        // A divisor that is a positive number, or a size (sizes are
        // positive): floor division then rounds as Python's does.
        if let (Value::Int(a), Value::Int(b)) = (&x, &y)
            && (b.as_const().is_some_and(|k| k > 0) || b.as_sym().is_some())
        {
            let numerator = if ceil {
                a.add(b).sub(&shapels_shapes::Dim::konst(1))
            } else {
                a.clone()
            };
            if let Some(q) = numerator.floordiv(b) {
                return Some(Value::Int(q));
            }
        }
        // Anything else rounds the quotient as `math` does, the operands
        // read once.
        let quotient = self.binop(
            shapels_syntax::ast::BinOp::Div,
            x,
            y,
            e.range,
            left.range,
            right.range,
        );
        Some(self.math_call(if ceil { "ceil" } else { "floor" }, &[quotient]))
    }

    /// `math.floor(x)`, `math.ceil(x)`, `math.sqrt(x)`: what `math_call`
    /// gives, and a rounding of a float nobody can read is an int nobody
    /// can read (`math.floor(planes * (base_width / 64.))` channels), which
    /// the name it is bound to names.
    fn math_call(&mut self, name: &str, args: &[Value]) -> Value {
        match (math_call(name, args), name, args) {
            (Value::Unknown, "floor" | "ceil", [Value::Float(None)]) => {
                Value::Int(self.env.anonymous())
            }
            (result, ..) => result,
        }
    }

    /// A user module's `forward` (or `__call__`) run on `args`. A batch the
    /// analysis cannot see (a `DataLoader`'s) leaves that run nothing to
    /// follow: the call gives what the module returns for any input.
    fn call_forward(
        &mut self,
        f: &Rc<crate::value::Function>,
        module: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        let unseen = generic::only_unseen(&args, &kwargs).then(|| (args.clone(), kwargs.clone()));
        let result = self.call_function(f, Some(module.clone()), args, kwargs, range);
        match unseen {
            Some((args, kwargs)) if generic::says_nothing(&result) => self
                .forward_for_any_input(f, module, &args, &kwargs, range)
                .unwrap_or(result),
            _ => result,
        }
    }

    /// A user module called with an input on another device than its parameters.
    fn check_module_device(&mut self, _module: &Value, _args: &[Value], _range: TextRange) {}

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
        if let Some(op) = self.custom_op(path) {
            return self.call_function(&op, None, args, kwargs, range);
        }
        if matches!(&**path, "collections.OrderedDict" | "typing.OrderedDict") {
            return self.call_builtin("dict", args, kwargs, range);
        }
        // `np.log(10000)`: a number, as `math.log` gives.
        if let Some(name) = path.strip_prefix("numpy.")
            && args
                .iter()
                .all(|a| matches!(a, Value::Int(_) | Value::Float(_)))
            && !args.is_empty()
        {
            return math_call(name, &args);
        }
        // `torch.compile` gives back what it compiles, run as it was (an
        // `OptimizedModule` calls and reads through to the module it
        // wraps); with settings only (`@torch.compile(mode=...)`), a
        // decorator that does the same.
        if matches!(&**path, "torch.compile" | "torch.jit.script") {
            return match args.first() {
                Some(
                    v @ (Value::Instance(_)
                    | Value::Layer(_)
                    | Value::Function(_)
                    | Value::BoundMethod(..)
                    | Value::Partial(_)),
                ) => v.clone(),
                None if &**path == "torch.compile" => Value::Path(path.clone()),
                _ => Value::Unknown,
            };
        }
        // Activation checkpointing recomputes in the backward pass; the
        // forward pass is the function's own result. Only the function:
        // `torch.utils.checkpoint` itself is a module, and calling it
        // raises (Pytorch-UNet's `use_checkpointing` does).
        if &**path == "torch.utils.checkpoint.checkpoint"
            && let Some((function, rest)) = args.split_first()
        {
            let kwargs = kwargs
                .into_iter()
                .filter(|(k, _)| {
                    !matches!(
                        &**k,
                        "use_reentrant"
                            | "preserve_rng_state"
                            | "determinism_check"
                            | "debug"
                            | "context_fn"
                    )
                })
                .collect();
            return self.call_value(function, rest.to_vec(), kwargs, range);
        }
        // A progress bar over an iterable gives its items (`for x, y in
        // tqdm(loader)`); `trange(n, ...)` is one over `range(n)`.
        if let Some(name) = path
            .strip_prefix("tqdm.")
            .map(|rest| rest.rsplit('.').next().unwrap_or(rest))
        {
            match name {
                "tqdm" => {
                    let call = rules::Args::new(args.clone(), kwargs.clone());
                    return call
                        .get(0, "iterable")
                        .filter(|v| !v.is_none())
                        .cloned()
                        .unwrap_or(Value::Unknown);
                }
                "trange" => return self.call_builtin("range", args, Vec::new(), range),
                _ => {}
            }
        }
        // `nn.parallel.data_parallel(module, inputs, device_ids)` scatters
        // the batch over devices and gathers the results along the same
        // dim: the shapes are the module's own on the whole batch.
        if matches!(
            &**path,
            "torch.nn.parallel.data_parallel" | "torch.nn.parallel.data_parallel.data_parallel"
        ) {
            let call = rules::Args::new(args.clone(), kwargs.clone());
            let (Some(module), Some(inputs)) = (call.get(0, "module"), call.get(1, "inputs"))
            else {
                return Value::Unknown;
            };
            let inputs = match inputs {
                Value::Tuple(items) => items.as_ref().clone(),
                v => vec![v.clone()],
            };
            let module_kwargs: Vec<(Rc<str>, Value)> = match call.get(5, "module_kwargs") {
                None | Some(Value::None) => Vec::new(),
                Some(Value::Dict(d)) => dict_keywords(d),
                Some(_) => return Value::Unknown,
            };
            let module = module.clone();
            return self.call_value(&module, inputs, module_kwargs, range);
        }
        if let Some(name) = path.strip_prefix("math.") {
            return self.math_call(name, &args);
        }
        if let Some(items) = self.itertools_call(path, &args, &kwargs) {
            return items;
        }
        match (&**path, args.first()) {
            ("copy.deepcopy", Some(v)) => return copy::deep_copy(v),
            ("copy.copy", Some(v)) => return copy::shallow_copy(v),
            _ => {}
        }
        // `field(default_factory=list)`: each instance gets the factory's
        // value, made when the dataclass is built (`init_dataclass`).
        if &**path == "dataclasses.field"
            && let Some((_, factory)) = kwargs.iter().find(|(k, _)| &**k == "default_factory")
        {
            return Value::tuple(vec![Value::Str(Rc::from("@factory")), factory.clone()]);
        }
        if &**path == "functools.partial"
            && let Some((function, bound)) = args.split_first()
        {
            return Value::Partial(Rc::new(crate::value::Partial {
                function: function.clone(),
                args: bound.to_vec(),
                kwargs,
            }));
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
        if let Some(v) = self.data_call(path, &args, &kwargs, range) {
            return v;
        }
        let operands = args.clone();
        let refs: Vec<&Value> = operands.iter().collect();
        let at = range;
        self.with_operands(&refs, &at, |interp| {
            rules::call_torch(interp, path, args, kwargs, range)
        })
    }
}

/// Two layers of one kind, or two objects of one class.
fn same_kind_of_object(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Layer(x), Value::Layer(y)) => x.kind == y.kind,
        (Value::Instance(x), Value::Instance(y)) => Rc::ptr_eq(&x.class, &y.class),
        _ => false,
    }
}

/// The keywords `**d` gives for a dict: its entries whose keys are strings.
fn dict_keywords(d: &crate::value::DictRef) -> Vec<(Rc<str>, Value)> {
    d.borrow()
        .iter()
        .filter_map(|(k, v)| match k {
            Value::Str(k) => Some((k.clone(), v.clone())),
            _ => None,
        })
        .collect()
}

impl Interp<'_> {
    /// The keywords `**d` gives for `d` one of these dicts: a key all of
    /// them have, with the join of their values; a key some have, with a
    /// value nobody knows. Keys that are not strings are left out, as for
    /// one dict.
    fn either_keywords(&mut self, options: &[Value]) -> Vec<(Rc<str>, Value)> {
        let dicts: Vec<Vec<(Value, Value)>> = options
            .iter()
            .filter_map(|o| match o {
                Value::Dict(d) => Some(d.borrow().clone()),
                _ => None,
            })
            .collect();
        let mut out: Vec<(Rc<str>, Value)> = Vec::new();
        for dict in &dicts {
            for (k, _) in dict {
                let Value::Str(name) = k else { continue };
                if out.iter().any(|(n, _)| n == name) {
                    continue;
                }
                let values: Vec<Option<Value>> = dicts
                    .iter()
                    .map(|d| {
                        d.iter().find_map(|(k, v)| match k {
                            Value::Str(k) if k == name => Some(v.clone()),
                            _ => None,
                        })
                    })
                    .collect();
                let value = if values.iter().all(Option::is_some) {
                    let values: Vec<Value> = values.into_iter().flatten().collect();
                    join_all(self, &values)
                } else {
                    Value::Unknown
                };
                out.push((name.clone(), value));
            }
        }
        out
    }
}
