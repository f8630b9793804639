//! Made-up inputs for code no call reaches: instances and arguments built from signatures.

use crate::rules::meta::Meta;
use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::ParamKind;

use crate::interp::Interp;
use crate::value::{Class, Function, Value};

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
                let tensors = tensors || used_as_tensor.contains(&param.name.id);
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
                        // An optional tensor input (`mask=None`): both paths run.
                        Value::None if tensors => {
                            Value::Optional(Box::new(self.generic_tensor(&param.name.id)))
                        }
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

    fn generic_tensor(&mut self, name: &str) -> Value {
        let shape = self.fresh_rank_var();
        if let crate::value::Shape::Var(v) = shape {
            self.var_sources.insert(v, Rc::from(name));
        }
        // Nothing says what dtype an argument has: unknown, so no dtype rule
        // can fire on a guess.
        let t = self.new_tensor(shape, None, None, name);
        Value::Tensor(Rc::new(t))
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
