//! Methods of built-in values: lists, dicts, strings, tensors, modules, and `super()`.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use crate::interp::{Interp, join_all};
use crate::mutation::Shared;
use crate::rules;
use crate::value::{Provenance, Value};

use super::Kwargs;

impl Interp<'_> {
    pub(crate) fn call_builtin_method(
        &mut self,
        receiver: &Value,
        name: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        if let (Value::Class(class), "__autograd_apply__") = (receiver, name) {
            return self.autograd_apply(class, args, kwargs, range);
        }
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
                            Some(Value::Layer(l)) => {
                                let l = Value::Layer(crate::interp::modules::with_own_settings(
                                    &l, inst,
                                ));
                                self.call_value(&l, args, kwargs, range)
                            }
                            _ => Value::Unknown,
                        }
                    }
                    // `super()._conv_forward(x, weight, bias)` of a
                    // convolution subclass: the convolution with the
                    // weight given, whose dtype may not be the layer's own
                    // (`weight.to(x.dtype)`).
                    "_conv_forward" => {
                        let layer = inst.attrs.borrow().get("__torch_layer__").cloned();
                        match (layer, args.as_slice()) {
                            (Some(Value::Layer(l)), [input, weight, ..]) => {
                                let dtype = match weight {
                                    Value::Tensor(w) => w.dtype,
                                    _ => None,
                                };
                                let l = crate::interp::modules::with_dtype(&l, dtype);
                                self.call_value(
                                    &Value::Layer(l),
                                    vec![input.clone()],
                                    kwargs,
                                    range,
                                )
                            }
                            _ => Value::Unknown,
                        }
                    }
                    _ => Value::Unknown,
                }
            }

            // Only a tensor takes `view` with sizes (an array's `view` takes
            // a dtype), and `reshape` to sizes makes that shape of anything:
            // what a layer of another package gave, reshaped so, is a tensor
            // of those sizes, whatever it was before.
            Value::Unknown if all_sizes(&args) && kwargs.is_empty() => {
                let shape = self.fresh_rank_var();
                let tensor = Value::Tensor(Rc::new(crate::rules::meta::Meta::new_tensor(
                    self, shape, None, None, "unknown",
                )));
                self.call_builtin_method(&tensor, name, args, kwargs, range)
            }
            Value::Tensor(t) => {
                let operands: Vec<Value> = std::iter::once(receiver.clone())
                    .chain(args.iter().cloned())
                    .collect();
                let refs: Vec<&Value> = operands.iter().collect();
                let at = range;
                self.with_operands(&refs, &at, |interp| {
                    rules::tensor_method(interp, t, name, args, kwargs, range)
                })
            }
            Value::Distribution(d) => {
                rules::distribution_method(self, d, name, &rules::Args::new(args, kwargs))
            }
            Value::List(items) => match (name, args.as_slice()) {
                ("append", [v]) => {
                    self.note_loop_append(items);
                    items.write(&mut self.epoch).push(v.clone());
                    Value::None
                }
                ("extend", [v]) => {
                    self.note_loop_append(items);
                    match self.iterate(v) {
                        Some(vs) => items.write(&mut self.epoch).extend(vs),
                        None => items.write(&mut self.epoch).push(Value::Unknown),
                    }
                    Value::None
                }
                ("insert", [at, v]) => {
                    self.note_loop_append(items);
                    let len = items.borrow().len();
                    // Python counts a negative place from the end and puts
                    // one beyond either end at that end.
                    match list_index(at, len) {
                        Some(i) => {
                            let i = i.clamp(0, len as i64) as usize;
                            items.write(&mut self.epoch).insert(i, v.clone());
                        }
                        None => {
                            let mut all = items.borrow().clone();
                            all.push(v.clone());
                            self.scramble(items, &all, len + 1);
                        }
                    }
                    Value::None
                }
                ("pop", []) => items.write(&mut self.epoch).pop().unwrap_or(Value::Unknown),
                ("pop", [at]) => {
                    let all = items.borrow().clone();
                    if all.is_empty() {
                        return Value::Unknown;
                    }
                    let len = all.len() as i64;
                    match list_index(at, all.len()).filter(|i| (0..len).contains(i)) {
                        Some(i) => items.write(&mut self.epoch).remove(i as usize),
                        None => self.scramble(items, &all, all.len() - 1),
                    }
                }
                ("remove", [v]) => {
                    let all = items.borrow().clone();
                    let mut first = None;
                    for (i, item) in all.iter().enumerate() {
                        match self.values_equal(item, v) {
                            Some(true) => {
                                first = Some(Some(i));
                                break;
                            }
                            Some(false) => {}
                            None => {
                                first = Some(None);
                                break;
                            }
                        }
                    }
                    match first {
                        Some(Some(i)) => {
                            items.write(&mut self.epoch).remove(i);
                        }
                        Some(None) => {
                            let _ = self.scramble(items, &all, all.len().saturating_sub(1));
                        }
                        // Python raises ValueError: the list stays as it is.
                        None => {}
                    }
                    Value::None
                }
                // Only a set (kept as the list of its distinct items) has
                // it: Python refuses it on a list.
                ("add", [v]) => {
                    let all = items.borrow().clone();
                    if !all
                        .iter()
                        .any(|item| self.values_equal(item, v) == Some(true))
                    {
                        items.write(&mut self.epoch).push(v.clone());
                    }
                    Value::None
                }
                ("reverse", []) => {
                    items.write(&mut self.epoch).reverse();
                    Value::None
                }
                ("clear", []) => {
                    items.write(&mut self.epoch).clear();
                    Value::None
                }
                ("sort", _) => {
                    let all = items.borrow().clone();
                    let _ = self.scramble(items, &all, all.len());
                    Value::None
                }
                ("copy", []) => Value::list(items.borrow().clone()),
                ("index" | "count", [_]) => Value::Int(self.env.anonymous()),
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
                            self.note_dict_write(d);
                            d.write(&mut self.epoch).remove(i);
                            return v.clone();
                        }
                    }
                    args.get(1).cloned().unwrap_or(Value::Unknown)
                }
                ("update", [Value::Dict(other)]) => {
                    let extra = other.borrow().clone();
                    self.note_dict_write(d);
                    d.write(&mut self.epoch).extend(extra);
                    Value::None
                }
                // The entry's value when the key is there, else the default,
                // which goes in (`kwargs.setdefault('inplace', inplace)`).
                ("setdefault", [key, rest @ ..]) => {
                    let default = rest.first().cloned().unwrap_or(Value::None);
                    let entries = d.borrow().clone();
                    for (k, v) in entries {
                        match self.values_equal(&k, key) {
                            Some(true) => return v,
                            None => return Value::Unknown,
                            Some(false) => {}
                        }
                    }
                    self.note_dict_write(d);
                    d.write(&mut self.epoch)
                        .push((key.clone(), default.clone()));
                    default
                }
                ("setdefault", _) | ("copy", _) => Value::Unknown,
                _ => Value::Unknown,
            },
            Value::Tuple(_) | Value::SizeOfVar(..) => rules::size_method(self, receiver, name),
            Value::Str(s)
                if matches!(
                    name,
                    "format" | "join" | "upper" | "lower" | "strip" | "replace"
                ) =>
            {
                super::strings::string_method(s, name, &args, &kwargs)
            }
            // What these make of a string of unknown text is one too.
            Value::Text
                if matches!(
                    name,
                    "format" | "join" | "upper" | "lower" | "strip" | "replace"
                ) =>
            {
                Value::Text
            }
            Value::Text => match name {
                "startswith" | "endswith" => Value::Bool(None),
                "index" | "find" | "rindex" | "rfind" | "count" => Value::Int(self.env.anonymous()),
                _ => Value::Unknown,
            },
            Value::Str(s) => match name {
                // A place or count in a string is a number even when the
                // text looked for is not known (`"xy".index(dimension)`).
                "index" | "find" | "rindex" | "rfind" | "count" => match args.first() {
                    Some(Value::Str(p)) => match super::strings::position(s, p, name) {
                        Some(n) => Value::int(n),
                        // `index` of text that is not there raises.
                        None => Value::Unknown,
                    },
                    _ => Value::Int(self.env.anonymous()),
                },
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
                crate::interp::modules::module_method(self, receiver, name, args, kwargs, range)
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

    /// A list changed at a place the analysis cannot read (`xs.insert(k,
    /// v)` of an unknown `k`, a sort): it holds `len` items, each of which
    /// may be any of `all`, so every place holds their join. Gives the join.
    pub(crate) fn scramble(
        &mut self,
        items: &Rc<Shared<Vec<Value>>>,
        all: &[Value],
        len: usize,
    ) -> Value {
        let joined = join_all(self, all);
        *items.write(&mut self.epoch) = vec![joined.clone(); len];
        joined
    }
}

/// A list place as a number from the list's start (`-1` is `len - 1`);
/// `None` when the place is not a known int.
fn list_index(at: &Value, len: usize) -> Option<i64> {
    let Value::Int(d) = at else { return None };
    let i = d.as_const()?;
    Some(if i < 0 { i + len as i64 } else { i })
}

/// Whether a call's arguments are sizes and nothing else: ints (`-1`
/// among them), named settings, or one tuple or list of such. An unknown
/// one would make the result say little, where a run for made-up inputs
/// (taken when a call gives nothing) may say more.
fn all_sizes(args: &[Value]) -> bool {
    let size = |v: &Value| matches!(v, Value::Int(_) | Value::Opaque(_));
    match args {
        [] => false,
        [Value::Tuple(items)] => !items.is_empty() && items.iter().all(size),
        [Value::List(items)] => {
            let items = items.borrow();
            !items.is_empty() && items.iter().all(size)
        }
        _ => args.iter().all(size),
    }
}
