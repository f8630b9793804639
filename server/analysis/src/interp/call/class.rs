//! Classes and instances: calling a class, dataclass fields, and lookups along the bases.

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_syntax::ast::{ExprKind, TextRange};

use crate::interp::Interp;
use crate::rules;
use crate::value::{Class, Function, Instance, Provenance, Value};

use super::Kwargs;
use crate::mutation::Shared;

impl Interp<'_> {
    pub(super) fn instantiate(
        &mut self,
        class: &Rc<Class>,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        let instance = Rc::new(Instance {
            class: class.clone(),
            attrs: Shared::new(FxHashMap::default()),
            order: Shared::new(Vec::new()),
            origin: if self.mode.fake {
                Provenance::Fake
            } else {
                Provenance::Real
            },
            device: Shared::new(None),
            serial: Instance::next_serial(),
        });
        let value = Value::Instance(instance.clone());
        // Library mode runs the instances made of this file's classes,
        // which another run taking the call would not make; those of
        // another file's classes only a summary shows, and no call is
        // taken from another run when one is made.
        if crate::value::is_local_class(class) || self.summary.is_some() {
            self.across_unstable();
            let made = self
                .instances
                .entry(Rc::as_ptr(class) as usize)
                .or_default();
            if made.len() < 4 {
                made.push(value.clone());
            }
        }
        if args
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .any(|v| !is_setting(v))
        {
            self.built_from_parts.insert(Rc::as_ptr(class) as usize);
        }
        if self.recorder.made_up
            && args
                .iter()
                .chain(kwargs.iter().map(|(_, v)| v))
                .any(|v| self.unread_setting(v))
        {
            self.built_unread.insert(Rc::as_ptr(class) as usize);
        }
        if class.is_dataclass {
            self.init_dataclass(class, &instance, args, kwargs);
            // Fields computed from others (`self.head_dim = self.dim //
            // self.heads`) are set there.
            if let Some(post_init) = lookup_method(class, "__post_init__") {
                let _ = self.call_function(
                    &post_init,
                    Some(value.clone()),
                    Vec::new(),
                    Vec::new(),
                    range,
                );
            }
            return value;
        }
        if let Some(init) = lookup_method(class, "__init__") {
            let _ = self.call_function(&init, Some(value.clone()), args, kwargs, range);
        } else if let Some(base) = torch_layer_base(class) {
            // A torch layer subclassed for its `forward` or a hook
            // (`class Linear(nn.Linear)` casting its weights): the torch
            // layer's own constructor takes the arguments.
            let layer = rules::call_torch(self, &format!("torch.nn.{base}"), args, kwargs, range);
            self.set_attr(&value, "__torch_layer__", layer);
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
        // Each field: its name, its default, and where its annotation is.
        let mut fields: Vec<(String, Option<Value>, Option<TextRange>)> = Vec::new();
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
                    annotation: Some(annotation),
                    ..
                } = &stmt.kind
                    && let [target] = targets.as_slice()
                    && let ExprKind::Name(name) = &target.kind
                {
                    let default = c.attrs.borrow().get(name.as_str()).cloned();
                    fields.retain(|(n, _, _)| n != name);
                    fields.push((name.clone(), default, Some(annotation.range)));
                }
            }
        }
        let mut positional = args.into_iter();
        let open = self.dataclass_prefix.take();
        // Made up for library mode: a config parameter's, or one for the
        // methods of a class no code builds (`generic_instance`).
        let made_up = open.is_some() || self.open_call;
        // Dims named alike in the fields' stated shapes are one size, and
        // `*bs` in several fields the same leading dims (`origins:
        // Float[Tensor, "*bs 3"]`, `starts: Float[Tensor, "*bs 1"]`).
        let mut stated_symbols: FxHashMap<String, shapels_shapes::Dim> = FxHashMap::default();
        // A dataclass built while a signature's arguments are made up (a
        // config parameter) must not lose that signature's `*bs`.
        let outer_ranks = std::mem::take(&mut self.stated_ranks);
        for (name, default, annotation) in fields {
            let default = match default {
                Some(Value::Tuple(t))
                    if t.len() == 2 && matches!(&t[0], Value::Str(s) if &**s == "@factory") =>
                {
                    Some(self.call_value(&t[1], Vec::new(), Vec::new(), TextRange::new(0, 0)))
                }
                other => other,
            };
            let default = match (&open, default) {
                (Some(prefix), Some(Value::Int(_))) => {
                    Some(Value::Int(self.env.symbol(&format!("{prefix}.{name}"))))
                }
                (Some(_), Some(Value::Float(_))) => Some(Value::Float(None)),
                (Some(_), Some(Value::Bool(_))) => Some(Value::Bool(None)),
                // A field of another dataclass nobody gave (`frustums:
                // Frustums` of a made-up `RaySamples`): one made up alike,
                // its fields named after the path to them.
                (Some(prefix), None)
                    if let Some(class) = annotation
                        .and_then(|range| field_class(self, class, self.text(&range).trim()))
                        .and_then(|v| match v {
                            Value::Class(c) if c.is_dataclass && !Rc::ptr_eq(&c, class) => Some(c),
                            _ => None,
                        })
                        && self.dataclass_depth < 4 =>
                {
                    self.dataclass_prefix = Some(Rc::from(format!("{prefix}.{name}")));
                    self.dataclass_depth += 1;
                    let v = self.instantiate(&class, Vec::new(), Vec::new(), TextRange::new(0, 0));
                    self.dataclass_depth -= 1;
                    self.dataclass_prefix = None;
                    Some(v)
                }
                // A field whose annotation states a shape is made a tensor
                // of it below.
                (Some(_), None)
                    if annotation.is_some_and(|range| {
                        crate::stated::annotation::read(self.text(&range)).is_some()
                    }) =>
                {
                    None
                }
                (Some(prefix), None) => Some(Value::Opaque(Rc::from(format!("{prefix}.{name}")))),
                // `n_kv_heads: Optional[int] = None` of a made-up config:
                // None is the default, one case of many (Llama 2 70B sets
                // it), so the field may be None or a setting of that name.
                (Some(prefix), Some(Value::None))
                    if annotation.is_some_and(|range| {
                        let text = self.text(&range);
                        (text.contains("Optional") || text.contains("None"))
                            && crate::stated::annotation::read(text).is_none()
                    }) =>
                {
                    Some(crate::interp::optional(Value::Opaque(Rc::from(format!(
                        "{prefix}.{name}"
                    )))))
                }
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
                .or(default);
            // A made-up object's field that defaults to None but states a
            // shape (`deltas: Optional[Float[Tensor, "*bs 1"]] = None`) may
            // hold either: code that uses it (`assert self.deltas is not
            // None`) sees the tensor.
            if made_up
                && matches!(v, Some(Value::None))
                && let Some(range) = annotation
                && let Some(stated) = crate::stated::annotation::read(self.text(&range))
            {
                let tensor = self.stated_tensor(&stated, &mut stated_symbols, &name);
                if matches!(tensor, Value::Tensor(_)) {
                    let v = crate::interp::optional(tensor);
                    self.set_attr(&Value::Instance(instance.clone()), &name, v);
                    continue;
                }
            }
            // A field nobody gave (a made-up object of library mode), or
            // given a value the analysis cannot read, whose annotation
            // states a shape is a tensor of that shape.
            let v = match (v, annotation) {
                (Some(v), _) if !matches!(v, Value::Unknown) => v,
                (_, Some(range)) => match crate::stated::annotation::read(self.text(&range)) {
                    Some(stated) => self.stated_tensor(&stated, &mut stated_symbols, &name),
                    None => Value::Unknown,
                },
                (_, None) => Value::Unknown,
            };
            self.set_attr(&Value::Instance(instance.clone()), &name, v);
        }
        self.stated_ranks = outer_ranks;
    }
}

/// What a field's annotation names, looked up where the class is written
/// (the module of its methods), or else where it is built.
fn field_class(interp: &mut Interp<'_>, class: &Rc<Class>, annotation: &str) -> Option<Value> {
    let module = class.attrs.borrow().values().find_map(|v| match v {
        Value::Function(f) => f.module.upgrade(),
        _ => None,
    });
    match module {
        Some(module) => module.globals.borrow().get(annotation).cloned(),
        None => interp.lookup(annotation),
    }
}

/// Whether the class derives from `torch.autograd.Function`.
pub(crate) fn is_autograd_function(class: &Rc<Class>) -> bool {
    class_chain(class).iter().any(|c| {
        c.bases.iter().any(|b| {
            matches!(b, Value::Path(p) if p.ends_with("autograd.Function") || p.ends_with("autograd.function.Function"))
        })
    })
}

impl Interp<'_> {
    /// `F.apply(*args)` of an autograd function: its `forward(ctx, *args)`,
    /// with a context object that takes any attribute (`ctx.run_function =
    /// fn`) and whose methods do nothing the forward pass sees.
    pub(super) fn autograd_apply(
        &mut self,
        class: &Rc<Class>,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        // `forward` is a static method (a tagged pair), or a plain one.
        let forward = match class_lookup(class, "forward") {
            Some(Value::Function(f)) => f,
            Some(Value::Tuple(t)) if t.len() == 2 => match &t[1] {
                Value::Function(f) => f.clone(),
                _ => return Value::Unknown,
            },
            _ => return Value::Unknown,
        };
        let context_class = Rc::new(Class {
            name: Rc::from("FunctionCtx"),
            def: None,
            bases: Vec::new(),
            attrs: Shared::new(FxHashMap::default()),
            is_dataclass: false,
        });
        let ctx = Value::Instance(Rc::new(Instance {
            class: context_class,
            attrs: Shared::new(FxHashMap::default()),
            order: Shared::new(Vec::new()),
            origin: Provenance::Fake,
            device: Shared::new(None),
            serial: Instance::next_serial(),
        }));
        let mut all = vec![ctx];
        all.extend(args);
        // A static method: the context is its first argument.
        let free = Rc::new(crate::value::Function {
            owner: None,
            ..(*forward).clone()
        });
        self.call_function(&free, None, all, kwargs, range)
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

/// A constructor argument that sets a size or a flag (numbers, strings,
/// `None`, tuples of them, a config object) rather than handing over a part
/// of the model (a block class, a layer, a function).
impl Interp<'_> {
    /// A setting whose value nobody could read: unknown, or an int of no
    /// name (an item of a made-up list of widths).
    fn unread_setting(&self, v: &Value) -> bool {
        match v {
            Value::Unknown => true,
            Value::Int(d) => self.env.has_anonymous(d),
            _ => false,
        }
    }
}

fn is_setting(v: &Value) -> bool {
    match v {
        Value::Int(_)
        | Value::Float(_)
        | Value::Bool(_)
        | Value::None
        | Value::Str(_)
        | Value::Text
        | Value::Opaque(_)
        | Value::Unknown => true,
        Value::Tuple(items) => items.iter().all(is_setting),
        Value::List(items) => items.borrow().iter().all(is_setting),
        Value::Instance(inst) => inst.class.is_dataclass,
        _ => false,
    }
}
