//! Attributes: reading `object.attr` of any value, and setting attributes of instances.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use crate::interp::Interp;
use crate::rules;
use crate::value::{DType, Device, Value};

impl Interp<'_> {
    pub(crate) fn get_attr(&mut self, object: &Value, attr: &str, range: TextRange) -> Value {
        // `item.append(x)` on an item the analysis cannot follow may fill any
        // list (it may be one of them): lists of this frame are not known
        // to stay empty from now on.
        if matches!(object, Value::Unknown)
            && matches!(attr, "append" | "extend" | "insert" | "__iadd__")
        {
            self.frame().lists_unsure = true;
        }
        match (object, attr) {
            // `loader.dataset` of a DataLoader the analysis made.
            (Value::Many(batch, None), "dataset") => {
                return self
                    .loader_datasets
                    .iter()
                    .find(|(b, _)| Rc::ptr_eq(b, batch))
                    .map_or(Value::Unknown, |(_, d)| d.clone());
            }
            // The name a class or function was defined with
            // (`norm_layer.__name__.lower()` picks a layer by it).
            (Value::Path(p), "__name__") if p.contains('.') => {
                return Value::Str(Rc::from(p.rsplit('.').next().unwrap_or(p)));
            }
            (Value::Class(c), "__name__") => return Value::Str(c.name.clone()),
            (Value::Function(f), "__name__") => {
                return Value::Str(Rc::from(f.def.name.id.as_str()));
            }
            _ => {}
        }
        match object {
            Value::Tensor(t) => rules::tensor_attr(self, object, t, attr, range),
            Value::Path(p) => path_attr(p, attr),
            // `config.n_embd` names a size; `buckets.shape` of something the
            // analysis cannot see is no one size (it may be a tensor's shape).
            Value::Opaque(_) if matches!(attr, "shape" | "T" | "mT" | "data" | "grad") => {
                Value::Unknown
            }
            Value::Opaque(name) => Value::Opaque(Rc::from(format!("{name}.{attr}"))),
            Value::Instance(inst) => self.instance_attr(object, inst, attr),
            Value::Either(alternatives) => {
                let values: Vec<Value> = alternatives
                    .iter()
                    .map(|alt| self.get_attr(alt, attr, range))
                    .collect();
                crate::interp::join_all(self, &values)
            }
            // A module of the user's: its global of that name (a module
            // whose top level could not run to it has none).
            Value::Module(ns) => self.module_attr(ns, attr).unwrap_or(Value::Unknown),
            Value::Class(class) => match crate::interp::call::class_lookup(class, attr) {
                // `Renderer.combine_rgb(rgb, w)`: a class method gets the
                // class as `cls`, not the first argument.
                Some(Value::Tuple(t))
                    if t.len() == 2 && matches!(&t[0], Value::Str(s) if &**s == "@classmethod") =>
                {
                    match &t[1] {
                        Value::Function(f) => {
                            Value::BoundMethod(Box::new(Value::Class(class.clone())), f.clone())
                        }
                        other => other.clone(),
                    }
                }
                Some(Value::Tuple(t))
                    if t.len() == 2 && matches!(&t[0], Value::Str(s) if s.starts_with('@')) =>
                {
                    t[1].clone()
                }
                Some(v) => v,
                // `Scale.apply(x)` of a `torch.autograd.Function`: its
                // static `forward` with a context object.
                None if attr == "apply" && crate::interp::call::is_autograd_function(class) => {
                    Value::BuiltinMethod(Box::new(object.clone()), Rc::from("__autograd_apply__"))
                }
                None => Value::Unknown,
            },
            Value::Super(inst, class) => {
                for base in &class.bases {
                    if let Value::Class(base) = base
                        && let Some(Value::Function(f)) =
                            crate::interp::call::class_lookup(base, attr)
                    {
                        return Value::BoundMethod(inst.clone(), f);
                    }
                }
                // A subclass of a torch layer (`class MyConv(nn.Conv1d)`):
                // the layer part lives in the instance as `__torch_layer__`.
                if let Some(base) = crate::interp::call::torch_layer_base(class) {
                    return Value::BuiltinMethod(
                        Box::new(Value::tuple(vec![(**inst).clone(), Value::Str(base)])),
                        Rc::from(format!("__super__.{attr}")),
                    );
                }
                // A method of a base the analysis does not have (`super().
                // generate(...)` of a library class) may fill the instance's
                // lists: an empty one is not known to stay empty.
                if !attr.starts_with("__") {
                    self.frame().lists_unsure = true;
                }
                Value::BuiltinMethod(Box::new(Value::None), Rc::from(attr))
            }
            Value::Layer(layer) => crate::interp::modules::layer_attr(self, object, layer, attr),
            Value::Distribution(d) => rules::distribution_attr(self, object, &d.clone(), attr),
            Value::Device(d) => match attr {
                "type" => Value::Str(Rc::from(match d {
                    Device::Cpu => "cpu",
                    Device::Cuda(_) => "cuda",
                    Device::Mps => "mps",
                    Device::Meta => "meta",
                    Device::CudaOrCpu => return Value::Unknown,
                })),
                "index" => match d {
                    Device::Cuda(i) => Value::int(*i as i64),
                    _ => Value::None,
                },
                _ => Value::Unknown,
            },
            Value::DType(d) => match attr {
                "is_floating_point" => Value::Bool(Some(d.is_floating())),
                "is_complex" => Value::Bool(Some(d.is_complex())),
                "itemsize" => Value::int(d.itemsize()),
                _ => Value::Unknown,
            },
            // torch.return_types: `x.max(dim=1).values`, `x.topk(5).indices`.
            Value::Tuple(items)
                if items.len() == 2
                    && matches!(attr, "values" | "indices")
                    && items.iter().all(|i| matches!(i, Value::Tensor(_))) =>
            {
                items[if attr == "values" { 0 } else { 1 }].clone()
            }
            // The other torch.return_types whose field names no plain tuple
            // has: `torch.linalg.lstsq(a, b).solution`, `lu_factor(a).pivots`.
            Value::Tuple(items)
                if let Some(i) = return_type_field(items.len(), attr)
                    && matches!(items[0], Value::Tensor(_)) =>
            {
                items[i].clone()
            }
            Value::Tuple(_)
            | Value::List(_)
            | Value::Dict(_)
            | Value::Str(_)
            | Value::Text
            | Value::SizeOfVar(..)
            | Value::Int(_) => Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr)),
            Value::FakeMode { .. } => {
                Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr))
            }
            // A list of unknown length grows (see `eval_call`).
            Value::Many(..) if matches!(attr, "append" | "extend") => {
                Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr))
            }
            // `x.view(B, T, n_head, hs)` of what a layer of another package
            // gave: sizes alone say what it becomes (see `call_builtin_method`).
            Value::Unknown if matches!(attr, "view" | "reshape") => {
                Value::BuiltinMethod(Box::new(Value::Unknown), Rc::from(attr))
            }
            _ => Value::Unknown,
        }
    }

    fn instance_attr(
        &mut self,
        object: &Value,
        inst: &Rc<crate::value::Instance>,
        attr: &str,
    ) -> Value {
        if let Some(v) = inst.attrs.borrow().get(attr) {
            return v.clone();
        }
        match crate::interp::call::class_lookup(&inst.class, attr) {
            Some(Value::Function(f)) => Value::BoundMethod(Box::new(object.clone()), f),
            Some(Value::Tuple(t))
                if t.len() == 2 && matches!(&t[0], Value::Str(s) if &**s == "@property") =>
            {
                if let Value::Function(f) = &t[1] {
                    let f = f.clone();
                    return self.call_function(
                        &f,
                        Some(object.clone()),
                        Vec::new(),
                        Vec::new(),
                        TextRange::new(0, 0),
                    );
                }
                Value::Unknown
            }
            Some(Value::Tuple(t))
                if t.len() == 2 && matches!(&t[0], Value::Str(s) if &**s == "@staticmethod") =>
            {
                t[1].clone()
            }
            Some(Value::Tuple(t))
                if t.len() == 2 && matches!(&t[0], Value::Str(s) if &**s == "@classmethod") =>
            {
                match &t[1] {
                    Value::Function(f) => {
                        Value::BoundMethod(Box::new(Value::Class(inst.class.clone())), f.clone())
                    }
                    other => other.clone(),
                }
            }
            Some(v) => v,
            None => {
                let layer = inst.attrs.borrow().get("__torch_layer__").cloned();
                // What a subclass of a torch layer registers (`self.mask` of a
                // masked convolution) is the subclass's own attribute.
                if matches!(
                    attr,
                    "register_buffer" | "register_parameter" | "add_module" | "register_module"
                ) {
                    return Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr));
                }
                if let Some(Value::Layer(layer)) = layer {
                    return crate::interp::modules::layer_attr(
                        self,
                        &Value::Layer(layer.clone()),
                        &layer,
                        attr,
                    );
                }
                // `DataParallel(model)` and `DistributedDataParallel(model)`
                // are the model here (see `rules::nn::construct`): their
                // `.module` is the model, as the wrapper's is.
                if attr == "module" && crate::interp::call::is_module_class(&inst.class) {
                    return object.clone();
                }
                // A module's mode is a flag the analysis does not follow
                // through `train()`/`eval()` of user modules: both paths
                // of `if self.training:` run, and `self.training and
                // not exists(topk)` is false wherever `topk` is given.
                if attr == "training" && crate::interp::call::is_module_class(&inst.class) {
                    return Value::Bool(None);
                }
                if crate::interp::call::is_module_class(&inst.class) {
                    Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr))
                } else {
                    Value::Unknown
                }
            }
        }
    }

    pub(crate) fn set_attr(&mut self, object: &Value, attr: &str, value: Value) {
        if attr == "requires_grad" && matches!(value, Value::Bool(Some(false))) {
            self.summary_freeze_tensor(object);
        }
        // A write to an instance no memo key has seen (one its constructor
        // is filling in) is noted apart instead of moving the epoch (see
        // `memo::unseen`); one to a seen instance moves it below.
        let unseen = match object {
            Value::Instance(inst)
                if !self.memo_has_seen(Rc::as_ptr(inst) as *const u8 as usize) =>
            {
                self.unseen.note(inst.serial);
                true
            }
            Value::Instance(_) => false,
            _ => {
                self.epoch.bump();
                false
            }
        };
        if let Value::Module(ns) = object {
            // `config.DEBUG = True` from another module: its globals change
            // (for this run only when earlier analyses share them).
            self.globals_epoch += 1;
            self.set_module_attr(ns, attr, value);
            return;
        }
        if let Value::Instance(inst) = object {
            let key: Rc<str> = Rc::from(attr);
            // Inside an undecided branch, remember the value before the
            // first write so the other branch starts from it (see exec_both).
            if let Some(journal) = self.attr_journals.last_mut()
                && !journal
                    .iter()
                    .any(|(i, k, _)| Rc::ptr_eq(i, inst) && *k == key)
            {
                journal.push((
                    inst.clone(),
                    key.clone(),
                    inst.attrs.borrow().get(attr).cloned(),
                ));
            }
            // An unseen instance: no memo key has read it (the write was
            // noted above).
            let mut attrs = if unseen {
                inst.attrs.write_unobserved()
            } else {
                inst.attrs.write(&mut self.epoch)
            };
            if !attrs.contains_key(attr) {
                let mut order = if unseen {
                    inst.order.write_unobserved()
                } else {
                    inst.order.write(&mut self.epoch)
                };
                order.push(key.clone());
            }
            attrs.insert(key, value);
        }
    }
}

/// The value of `module.attr` for a module path.
fn path_attr(path: &str, attr: &str) -> Value {
    match (path, attr) {
        ("math" | "torch" | "numpy" | "np", "pi") => {
            return Value::Float(Some(std::f64::consts::PI));
        }
        ("math" | "torch" | "numpy" | "np", "e") => return Value::Float(Some(std::f64::consts::E)),
        ("math" | "torch" | "numpy" | "np", "inf") => return Value::Float(Some(f64::INFINITY)),
        ("math" | "torch" | "numpy" | "np", "nan") => return Value::Float(Some(f64::NAN)),
        // An index that adds a dim, as `None` does.
        ("numpy" | "np", "newaxis") => return Value::None,
        // What `torch.finfo(...)` / `torch.iinfo(...)` tell: numbers whose
        // value depends on the dtype.
        ("torch.finfo()", "min" | "max" | "eps" | "tiny" | "smallest_normal" | "resolution") => {
            return Value::Float(None);
        }
        _ => {}
    }
    if path == "torch"
        && let Some(d) = DType::from_attr(attr)
    {
        return Value::DType(d);
    }
    Value::Path(joined_path(path, attr))
}

/// The dotted path `path.attr`, made once per thread: model code names the
/// same few dozen (`nn.Conv2d`, `torch.cat`, `F.relu`) at every call, and
/// formatting and allocating each anew was a fiftieth of an analysis.
fn joined_path(path: &str, attr: &str) -> Rc<str> {
    type Joined = rustc_hash::FxHashMap<Box<str>, rustc_hash::FxHashMap<Box<str>, Rc<str>>>;
    thread_local! {
        static JOINED: std::cell::RefCell<Joined> = std::cell::RefCell::default();
    }
    /// Enough for any model's vocabulary; past it (generated code) the
    /// table starts again rather than grow without bound.
    const MAX_PATHS: usize = 4096;
    JOINED.with(|cell| {
        let Ok(mut joined) = cell.try_borrow_mut() else {
            return Rc::from(format!("{path}.{attr}"));
        };
        if let Some(found) = joined.get(path).and_then(|attrs| attrs.get(attr)) {
            return found.clone();
        }
        if joined.len() > MAX_PATHS {
            joined.clear();
        }
        let made: Rc<str> = Rc::from(format!("{path}.{attr}"));
        joined
            .entry(path.into())
            .or_default()
            .insert(attr.into(), made.clone());
        made
    })
}

/// The place of field `attr` in a torch.return_types tuple of `len`
/// items, for the field names no other tuple the analysis makes has.
fn return_type_field(len: usize, attr: &str) -> Option<usize> {
    let fields: &[&str] = match len {
        4 => &["solution", "residuals", "rank", "singular_values"],
        3 if matches!(attr, "LU" | "pivots" | "info") => &["LU", "pivots", "info"],
        2 if matches!(attr, "LU" | "pivots") => &["LU", "pivots"],
        2 if matches!(attr, "eigenvalues" | "eigenvectors") => &["eigenvalues", "eigenvectors"],
        2 if matches!(attr, "sign" | "logabsdet") => &["sign", "logabsdet"],
        2 if matches!(attr, "Q" | "R") => &["Q", "R"],
        _ => return None,
    };
    fields.iter().position(|f| *f == attr)
}
