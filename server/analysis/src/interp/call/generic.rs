//! Made-up inputs for code no call reaches: instances and arguments built from signatures.

use crate::rules::meta::Meta;
use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::ParamKind;

use crate::interp::Interp;
use crate::value::{Class, Function, Shape, Value};

use super::class::lookup_method;
use shapels_syntax::ast::TextRange;

impl Interp<'_> {
    /// An instance made up from the constructor's signature, for classes no
    /// code in the file instantiates.
    pub(crate) fn generic_instance(&mut self, class: &Rc<Class>) -> Value {
        let (args, kwargs) = match lookup_method(class, "__init__") {
            Some(init) => self.generic_args(&init, false),
            None => (Vec::new(), Vec::new()),
        };
        // Nobody knows where a made-up object's code moved it since
        // (`model.cuda()` in a training script): what its constructor makes
        // without naming a device is on a device unknown here.
        let device = self.defaults.device.take();
        self.open_call = true;
        let instance = self.instantiate(class, args, kwargs, TextRange::new(0, 0));
        self.open_call = false;
        self.defaults.device = device;
        instance
    }

    /// A value a caller may pass where `default` is the default: numbers
    /// become symbols named after the parameter (`resolution=(32, 32)` is
    /// `(resolution_0, resolution_1)`), floats and flags unknown, the rest
    /// (strings, `None`) as given.
    fn any_like(&mut self, default: &Value, name: &str) -> Value {
        match default {
            Value::Int(d) => {
                let made = self.env.symbol(name);
                // Only a parameter named for it (`dims`, `spatial_dims`): a
                // `num_classes=2` compared with 2 is a size, both ways open.
                if let (Some(k @ 1..=3), Some(id)) = (d.as_const(), made.as_sym())
                    && names_spatial_rank(name)
                {
                    self.mode_defaults.insert(id, k);
                }
                Value::Int(made)
            }
            Value::Float(_) => Value::Float(None),
            Value::Bool(_) => Value::Bool(None),
            // An empty default (`anchors=()`, `ch=[]`) is a placeholder
            // for what callers pass: it stands for any sequence, as a
            // parameter without a default does (torch would refuse an empty
            // one: `torch.tensor(()).view(nl, -1, 2)`).
            Value::Tuple(items) if items.is_empty() => Value::Opaque(Rc::from(name)),
            Value::List(items) if items.borrow().is_empty() => Value::Opaque(Rc::from(name)),
            Value::Tuple(items) => Value::tuple(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.any_like(item, &format!("{name}_{i}")))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// Arguments made from a signature: defaults where given, symbols named
    /// after int parameters, tensors of unknown rank for forward inputs, and
    /// opaque values otherwise; keyword-only parameters (`def __init__(self,
    /// *, dim, heads)`) by keyword, the rest by position.
    pub(crate) fn generic_args(
        &mut self,
        f: &Rc<Function>,
        tensors: bool,
    ) -> (Vec<Value>, super::Kwargs) {
        let mut out = Vec::new();
        let mut keywords: super::Kwargs = Vec::new();
        let is_method = f.owner.is_some();
        let used_as_tensor = self.tensor_params(&f.def);
        let dim_selectors = crate::interp::signature::dim_params(&f.def);
        // Dims named alike in one signature's stated shapes are one symbol.
        let mut jax_symbols: FxHashMap<String, Dim> = FxHashMap::default();
        self.stated_ranks.clear();
        let mut commented = self.comment_shapes(&f.def);
        for (i, param) in f.def.params.iter().enumerate() {
            if is_method && i == 0 {
                continue;
            }
            // `*args` and `**kwargs` are open (the call is made with
            // `open_call`): nothing is made up for them.
            if matches!(param.kind, ParamKind::VarArgs | ParamKind::VarKw) {
                continue;
            }
            // A keyword-only parameter's value goes in by keyword.
            let by_keyword = matches!(param.kind, ParamKind::KwOnly);
            let value = 'value: {
                if let Some(dims) = commented.remove(&param.name.id) {
                    let t = self.new_tensor(
                        crate::value::Shape::known(dims),
                        None,
                        None,
                        &param.name.id,
                    );
                    break 'value Value::Tensor(Rc::new(t));
                }
                // A parameter its annotation says is no torch tensor (a
                // numpy array, an image, a path) is never made up as one:
                // numpy and PIL accept what torch refuses (`image[..., ::-1]`).
                let foreign = param
                    .annotation
                    .as_ref()
                    .is_some_and(|a| names_foreign_array(self.text(&a.range)));
                if foreign {
                    break 'value Value::Unknown;
                }
                // `accelerator: Accelerator`, `decoder: Decoder`: an object of a
                // class, whatever tensor methods its name shares (`.gather`).
                let of_a_class = param.annotation.as_ref().is_some_and(|a| {
                    let text = self.text(&a.range);
                    // A config dataclass is made up below; `Batch =
                    // torch.Tensor` and then `x: Batch` names a tensor.
                    names_a_class(text)
                        && !match self.lookup(text) {
                            Some(Value::Class(c)) => c.is_dataclass,
                            Some(Value::Path(p)) => p.contains("Tensor"),
                            _ => false,
                        }
                });
                // A callable whose default is `None` (`drop_layer: Callable =
                // None`) is an optional part, absent unless given: made up as
                // something nobody can call, every layer built with it, and
                // every shape after those, would be unknown.
                let optional_callable = param.annotation.as_ref().is_some_and(|a| {
                    matches!(self.text(&a.range).rsplit('.').next(), Some("Callable"))
                }) && matches!(f.defaults.get(i), Some(Some(Value::None)));
                if of_a_class && !optional_callable {
                    break 'value Value::Opaque(Rc::from(param.name.id.as_str()));
                }
                // `messages: list[Message]`, `xs: List[Tensor]`: a container,
                // whatever the body hands it to (`self.template(messages)`).
                let container = param
                    .annotation
                    .as_ref()
                    .is_some_and(|a| names_a_container(self.text(&a.range)));
                let input = tensors || used_as_tensor.contains(&param.name.id);
                let tensors = input && !container;
                if let Some(Some(default)) = f.defaults.get(i)
                    && dim_selectors.contains(&param.name.id)
                {
                    break 'value default.clone();
                }
                if let Some(Some(default)) = f.defaults.get(i) {
                    // A default is one choice among many a caller may make: a
                    // number stays symbolic (named after the parameter), a flag
                    // stays undecided, so no shape rests on a guess.
                    let value = match default {
                        // An optional tensor input (`mask=None`): both paths
                        // run, the tensor of the shape it states if it does
                        // (`near: Optional[Float[Tensor, "*#batch"]] = None`).
                        Value::None
                            if tensors || self.param_claim(&f.def, &param.name.id).is_some() =>
                        {
                            let stated = match self.param_claim(&f.def, &param.name.id) {
                                Some(claim) => self.stated_tensor(
                                    &claim.shape,
                                    &mut jax_symbols,
                                    &param.name.id,
                                ),
                                None => Value::Unknown,
                            };
                            let tensor = match stated {
                                t @ Value::Tensor(_) => t,
                                _ => self.generic_tensor(&param.name.id),
                            };
                            Value::Optional(Box::new(tensor))
                        }
                        // An optional container of a model's inputs
                        // (`texts: Optional[List[str]] = None`): both paths
                        // run, as for an optional tensor, the other with
                        // contents nobody knows.
                        Value::None if input && container => Value::Optional(Box::new(
                            Value::Opaque(Rc::from(param.name.id.as_str())),
                        )),
                        other => self.any_like(other, &param.name.id),
                    };
                    break 'value value;
                }
                // A shape the annotation or the docstring states (jaxtyping,
                // torchtyping, `Annotated`, Pyrefly, Google/NumPy/torch docs).
                if let Some(claim) = self.param_claim(&f.def, &param.name.id) {
                    break 'value self.stated_tensor(
                        &claim.shape,
                        &mut jax_symbols,
                        &param.name.id,
                    );
                }
                let annotation = param
                    .annotation
                    .as_ref()
                    .map(|a| self.text(&a.range).to_string());
                // `a: torch.Tensor` (or `Tensor`, `th.FloatTensor`) is a
                // tensor, however the body uses it: made up as an opaque
                // value, `a + b` was taken for a sum of sizes.
                if annotation
                    .as_deref()
                    .and_then(|a| self.annotation_path(a))
                    .is_some_and(|p| names_a_tensor_type(&p))
                {
                    break 'value self.generic_tensor(&param.name.id);
                }
                // `size: tuple[int, int]`, `x: Tuple[Tensor, Tensor]`: a tuple of
                // as many made-up items, named after the parameter.
                let items = annotation.as_deref().and_then(tuple_items);
                match annotation.as_deref() {
                    Some("int") => Value::Int(self.env.symbol(&param.name.id)),
                    _ if items.is_some() => {
                        let name = &param.name.id;
                        Value::tuple(
                            items
                                .unwrap_or_default()
                                .iter()
                                .enumerate()
                                .map(|(i, item)| {
                                    let item_name = format!("{name}_{i}");
                                    if *item == "int" {
                                        Value::Int(self.env.symbol(&item_name))
                                    } else {
                                        self.generic_tensor(&item_name)
                                    }
                                })
                                .collect(),
                        )
                    }
                    Some("float") => Value::Float(None),
                    Some("bool") => Value::Bool(None),
                    Some("str") => Value::Unknown,
                    Some(a) => match self.lookup(a) {
                        Some(Value::Class(c)) if c.is_dataclass => {
                            // A config nobody built: its fields are what callers
                            // pass, named `config.n_embd`; the defaults are one choice.
                            self.dataclass_prefix = Some(Rc::from(param.name.id.as_str()));
                            let v =
                                self.instantiate(&c, Vec::new(), Vec::new(), TextRange::new(0, 0));
                            self.dataclass_prefix = None;
                            v
                        }
                        _ if tensors => self.generic_tensor(&param.name.id),
                        _ => Value::Opaque(Rc::from(param.name.id.as_str())),
                    },
                    None if tensors => self.generic_tensor(&param.name.id),
                    None => Value::Opaque(Rc::from(param.name.id.as_str())),
                }
            };
            if by_keyword {
                keywords.push((Rc::from(param.name.id.as_str()), value));
            } else {
                out.push(value);
            }
        }
        if self.recorder.declared_generic(&f.def.range) {
            let start = f
                .def
                .params
                .first()
                .map_or(f.def.range.start, |p| p.name.range.start);
            for (name, dim) in &jax_symbols {
                self.recorder.declared_name(start, name, dim.clone());
            }
        }
        (out, keywords)
    }

    /// What a user module returns for any input, for a call given an
    /// input the analysis cannot see (`output = model(data)` over a
    /// `DataLoader`'s batches): the module's `forward` runs on a copy of
    /// the module, with made-up inputs where the call's are unknown (as
    /// library mode makes them up) and the call's own elsewhere. Nothing of
    /// that run is recorded or reported, and it reaches nothing: the
    /// module's lines show what they show without it, and the caller gets
    /// a value whose sizes hold for every input (`[N, 10]`). `None` when
    /// that run cannot tell either.
    pub(crate) fn forward_for_any_input(
        &mut self,
        f: &Rc<Function>,
        module: &Value,
        args: &[Value],
        kwargs: &super::Kwargs,
        site: TextRange,
    ) -> Option<Value> {
        // Only unknown inputs: the same value for every call at the site.
        let key = args
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .all(|v| matches!(v, Value::Unknown))
            .then(|| {
                let module = match module {
                    Value::Instance(inst) => Rc::as_ptr(inst) as usize,
                    _ => 0,
                };
                (site.start, site.end, Rc::as_ptr(&f.def) as usize, module)
            });
        if let Some((_, known)) = key.as_ref().and_then(|k| self.any_input_results.get(k)) {
            return Some(known.clone());
        }
        if self.recorder.muted > 0
            || self.out_of_budget()
            || self.depth + 1 >= crate::interp::MAX_CALL_DEPTH
        {
            return None;
        }
        let symbols = self.env.generation() - self.env.facts();
        let vars = self.rank_vars.len();
        // From here on nothing is recorded: not even the names a declared
        // signature gives its made-up sizes, which are library mode's to give.
        self.recorder.muted += 1;
        // Making up arguments resets what the signature being run named.
        let stated = self.stated_ranks.clone();
        let (made, made_kwargs) = self.generic_args(f, true);
        self.stated_ranks = stated;
        let skip = usize::from(f.owner.is_some());
        let positional: Vec<&str> = f
            .def
            .params
            .iter()
            .skip(skip)
            .filter(|p| matches!(p.kind, ParamKind::Normal { .. }))
            .map(|p| p.name.id.as_str())
            .collect();
        let mut made_by_name: FxHashMap<&str, Value> =
            positional.iter().copied().zip(made).collect();
        for (name, value) in &made_kwargs {
            made_by_name.insert(name, value.clone());
        }
        let args: Vec<Value> = args
            .iter()
            .enumerate()
            .map(|(i, v)| match (v, positional.get(i)) {
                (Value::Unknown, Some(name)) => {
                    made_by_name.get(name).cloned().unwrap_or(Value::Unknown)
                }
                _ => v.clone(),
            })
            .collect();
        let kwargs: super::Kwargs = kwargs
            .iter()
            .map(|(name, v)| match v {
                Value::Unknown => (
                    name.clone(),
                    made_by_name.get(&**name).cloned().unwrap_or(Value::Unknown),
                ),
                _ => (name.clone(), v.clone()),
            })
            .collect();
        // What the run reaches, runs and builds is not what the file does:
        // library mode reads these to choose what to run on its own.
        let reached = self.reached.clone();
        let forward_ran = self.forward_ran.clone();
        let instances = self.instances.clone();
        let built_from_parts = self.built_from_parts.clone();
        let built_unread = self.built_unread.clone();
        let diagnostics = self.diagnostics.len();
        let made_up = std::mem::replace(&mut self.recorder.made_up, true);
        // What `forward` writes on its module (a cache, the last attention
        // map) is the copy's.
        let copy = super::copy::deep_copy(module);
        let result = self.call_function(f, Some(copy), args, kwargs, TextRange::new(0, 0));
        self.recorder.muted -= 1;
        self.recorder.made_up = made_up;
        self.diagnostics.truncate(diagnostics);
        self.reached = reached;
        self.forward_ran = forward_ran;
        self.instances = instances;
        self.built_from_parts = built_from_parts;
        self.built_unread = built_unread;
        self.made_for_any_input.push((
            symbols as u32..(self.env.generation() - self.env.facts()) as u32,
            vars as u32..self.rank_vars.len() as u32,
        ));
        let result = (!says_nothing(&result)).then_some(result)?;
        if let Some(key) = key {
            self.any_input_results
                .insert(key, (module.clone(), result.clone()));
        }
        Some(result)
    }

    /// Whether a value's sizes come from what a module returns for any
    /// input (see `forward_for_any_input`).
    pub(crate) fn made_for_any_input(&self, v: &Value) -> bool {
        if self.made_for_any_input.is_empty() {
            return false;
        }
        let made_dim = |d: &Dim| self.dim_made_for_any_input(d);
        match v {
            Value::Tensor(t) => match self.resolve_shape(&t.shape) {
                Shape::Known(dims) => dims.iter().any(made_dim),
                Shape::Var(var) | Shape::Tail(var, _)
                    if self
                        .made_for_any_input
                        .iter()
                        .any(|(_, v)| v.contains(&var)) =>
                {
                    true
                }
                Shape::Tail(_, dims) => dims.iter().any(made_dim),
                Shape::Var(_) => false,
            },
            Value::Optional(inner) => self.made_for_any_input(inner),
            Value::Tuple(items) => items.iter().any(|i| self.made_for_any_input(i)),
            Value::List(items) => items.borrow().iter().any(|i| self.made_for_any_input(i)),
            _ => false,
        }
    }

    pub(crate) fn dim_made_for_any_input(&self, d: &Dim) -> bool {
        self.env.resolve(d).symbols().into_iter().any(|s| {
            self.made_for_any_input
                .iter()
                .any(|(made, _)| made.contains(&s.0))
        })
    }

    /// Whether the op being run has an operand whose sizes come from what
    /// a module returns for any input: what it raises is a made-up input's
    /// problem (a model's layers reached through a loop the analysis
    /// cannot cut short), not one of a call the file makes.
    pub(crate) fn op_on_made_up_sizes(&self) -> bool {
        !self.made_for_any_input.is_empty()
            && self
                .env
                .operands()
                .iter()
                .any(|dims| dims.iter().any(|d| self.dim_made_for_any_input(d)))
    }

    fn generic_tensor(&mut self, name: &str) -> Value {
        let shape = self.fresh_rank_var();
        if let crate::value::Shape::Var(v) = shape {
            self.var_sources.insert(v, Rc::from(name));
            self.made_up_depth.insert(v, self.frames.len());
        }
        // Nothing says what dtype an argument has: unknown, so no dtype rule
        // can fire on a guess.
        let t = self.new_tensor(shape, None, None, name);
        Value::Tensor(Rc::new(t))
    }
}

/// Whether a value holds nothing the analysis can follow: unknown, or a
/// tuple of such (what `forward` returns for an input nobody can see).
/// Whether a call's inputs are some the analysis cannot see and, besides,
/// only plain settings (numbers, strings, flags): a known tensor or a
/// symbolic number would tie the made-up inputs to the caller's sizes.
pub(crate) fn only_unseen(args: &[Value], kwargs: &super::Kwargs) -> bool {
    let mut values = args.iter().chain(kwargs.iter().map(|(_, v)| v));
    let plain = |v: &Value| match v {
        Value::Unknown | Value::None | Value::Str(_) | Value::Bool(_) | Value::Float(_) => true,
        Value::Int(d) => d.is_const(),
        _ => false,
    };
    values.clone().any(|v| matches!(v, Value::Unknown)) && values.all(plain)
}

pub(crate) fn says_nothing(v: &Value) -> bool {
    match v {
        Value::Unknown => true,
        Value::Tuple(items) => items.iter().all(says_nothing),
        _ => false,
    }
}

/// The item types of a `tuple[int, int]` or `Tuple[Tensor, Tensor]`
/// annotation of known length whose items are ints or tensors.
fn tuple_items(annotation: &str) -> Option<Vec<&str>> {
    let a = annotation.trim();
    let inner = a
        .strip_prefix("tuple[")
        .or_else(|| a.strip_prefix("Tuple["))
        .or_else(|| a.strip_prefix("typing.Tuple["))?
        .strip_suffix(']')?;
    let items: Vec<&str> = inner.split(',').map(str::trim).collect();
    let plain = |t: &&str| matches!(*t, "int" | "Tensor" | "torch.Tensor");
    (!items.is_empty() && items.len() <= 8 && items.iter().all(plain)).then_some(items)
}

/// Whether a parameter's name says it picks 1-, 2- or 3-D code (`dims`,
/// `spatial_dims`, `ndim`, `conv_dims`).
fn names_spatial_rank(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("dims")
        || name.contains("ndim")
        || (name.starts_with("spatial") && name.ends_with("_dim"))
}

/// Whether an annotation is a plain class name (`Accelerator`,
/// `models.Decoder`) that is no tensor type.
fn names_a_class(annotation: &str) -> bool {
    let plain = !annotation.is_empty()
        && annotation
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    let last = annotation.rsplit('.').next().unwrap_or(annotation);
    plain
        && last.starts_with(|c: char| c.is_ascii_uppercase())
        && !last.contains("Tensor")
        && !matches!(last, "Any" | "Parameter")
}

/// Whether an annotation names a container of no tensors, optional or not
/// (`list[Message]`, `Optional[Dict[str, int]]`, `Sequence[int] | None`).
/// One that holds tensors (`x: List[Tensor]`) is left to the body, which
/// may take a tensor as well (`if not isinstance(x, list): x = [x]`).
/// Tuples are made up item by item (see `tuple_items`).
fn names_a_container(annotation: &str) -> bool {
    if annotation.contains("Tensor") {
        return false;
    }
    let mut a = annotation.trim();
    for optional in ["Optional[", "typing.Optional["] {
        if let Some(inner) = a.strip_prefix(optional).and_then(|a| a.strip_suffix(']')) {
            a = inner.trim();
        }
    }
    let a = a.strip_suffix("| None").map_or(a, str::trim);
    let outer = a.split('[').next().unwrap_or(a).trim();
    let outer = outer.strip_prefix("typing.").unwrap_or(outer);
    let outer = outer.strip_prefix("collections.abc.").unwrap_or(outer);
    matches!(
        outer,
        "list"
            | "List"
            | "dict"
            | "Dict"
            | "set"
            | "Set"
            | "frozenset"
            | "Sequence"
            | "MutableSequence"
            | "Iterable"
            | "Iterator"
            | "Mapping"
            | "MutableMapping"
    )
}

/// Whether an annotation names an array type other than torch's, and no
/// tensor (`np.ndarray`, `Optional[np.ndarray]`, `numpy.typing.NDArray[...]`,
/// `PIL.Image.Image`).
fn names_foreign_array(annotation: &str) -> bool {
    let foreign = [
        "ndarray",
        "NDArray",
        "ArrayLike",
        "np.",
        "numpy.",
        "PIL.",
        "Image.Image",
    ];
    foreign.iter().any(|f| annotation.contains(f)) && !annotation.contains("Tensor")
}

impl Interp<'_> {
    /// The path an annotation names (`torch.Tensor` for `Tensor` imported
    /// from torch, or for `th.Tensor` with `import torch as th`).
    fn annotation_path(&mut self, text: &str) -> Option<String> {
        let (head, rest) = match text.split_once('.') {
            Some((head, rest)) => (head, Some(rest)),
            None => (text, None),
        };
        match (self.lookup(head), rest) {
            (Some(Value::Path(p)), None) => Some(p.to_string()),
            (Some(Value::Path(p)), Some(rest)) => Some(format!("{p}.{rest}")),
            _ => None,
        }
    }
}

/// Whether a path names torch's tensor type (`torch.Tensor`, or a typed
/// one of old, `torch.FloatTensor`).
fn names_a_tensor_type(path: &str) -> bool {
    path.strip_prefix("torch.")
        .is_some_and(|name| name.ends_with("Tensor") && !name.contains('.'))
}
