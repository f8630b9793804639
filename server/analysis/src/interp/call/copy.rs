//! `copy.copy` and `copy.deepcopy` of analysis values.
//!
//! Model code clones layers with `copy.deepcopy` (`clones(layer, N)` in the
//! Annotated Transformer, EMA teachers, `c = copy.deepcopy; c(attn)`): each
//! copy is a new module with the same configuration, whose parameters and
//! attributes are its own. Tensors are immutable here, so a copy shares
//! them; what can change (modules, lists, dicts) is copied, and an object
//! reached twice is copied once, as Python's `memo` does.

use std::rc::Rc;

use crate::mutation::Shared;

use rustc_hash::FxHashMap;

use crate::value::{Instance, Layer, Value};

/// Nesting beyond which a copy shares what is left rather than recurse.
const MAX_COPY_DEPTH: u32 = 64;

/// `copy.deepcopy(value)`.
pub(crate) fn deep_copy(value: &Value) -> Value {
    DeepCopy::default().value(value, 0)
}

/// `copy.copy(value)`: a new container or object holding the same items.
pub(crate) fn shallow_copy(value: &Value) -> Value {
    match value {
        Value::List(items) => Value::List(Rc::new(Shared::new(items.borrow().clone()))),
        Value::Dict(entries) => Value::Dict(Rc::new(Shared::new(entries.borrow().clone()))),
        Value::Instance(inst) => Value::Instance(Rc::new(Instance {
            class: inst.class.clone(),
            attrs: Shared::new(inst.attrs.borrow().clone()),
            order: Shared::new(inst.order.borrow().clone()),
            origin: inst.origin,
            device: Shared::new(inst.device.borrow().clone()),
            serial: Instance::next_serial(),
        })),
        Value::Layer(layer) => Value::Layer(Rc::new(copy_layer(layer, |v| v.clone()))),
        other => other.clone(),
    }
}

fn copy_layer(layer: &Layer, mut child: impl FnMut(&Value) -> Value) -> Layer {
    Layer {
        children: Shared::new(layer.children.borrow().iter().map(&mut child).collect()),
        // Parameters are made on first use; a copy makes its own.
        params: Shared::new(FxHashMap::default()),
        ..layer.detached()
    }
}

/// Objects copied so far, by address: a second reference gets the same copy.
#[derive(Default)]
struct DeepCopy {
    copied: FxHashMap<usize, Value>,
}

impl DeepCopy {
    fn value(&mut self, value: &Value, depth: u32) -> Value {
        if depth > MAX_COPY_DEPTH {
            return value.clone();
        }
        let address = match value {
            Value::List(l) => Rc::as_ptr(l) as *const u8 as usize,
            Value::Dict(d) => Rc::as_ptr(d) as *const u8 as usize,
            Value::Instance(i) => Rc::as_ptr(i) as *const u8 as usize,
            Value::Layer(l) => Rc::as_ptr(l) as *const u8 as usize,
            Value::Tuple(items) => {
                let items = items.iter().map(|v| self.value(v, depth + 1)).collect();
                return Value::tuple(items);
            }
            Value::Optional(inner) => {
                return Value::Optional(Box::new(self.value(inner, depth + 1)));
            }
            other => return other.clone(),
        };
        if let Some(done) = self.copied.get(&address) {
            return done.clone();
        }
        match value {
            Value::List(items) => {
                let copy = Rc::new(Shared::new(Vec::new()));
                self.copied.insert(address, Value::List(copy.clone()));
                let items: Vec<Value> = items.borrow().clone();
                let items = items.iter().map(|v| self.value(v, depth + 1)).collect();
                // The copy is being made: no memoised result has read it.
                *copy.write_unobserved() = items;
                Value::List(copy)
            }
            Value::Dict(entries) => {
                let copy = Rc::new(Shared::new(Vec::new()));
                self.copied.insert(address, Value::Dict(copy.clone()));
                let entries: Vec<(Value, Value)> = entries.borrow().clone();
                let entries = entries
                    .iter()
                    .map(|(k, v)| (k.clone(), self.value(v, depth + 1)))
                    .collect();
                // The copy is being made: no memoised result has read it.
                *copy.write_unobserved() = entries;
                Value::Dict(copy)
            }
            Value::Instance(inst) => {
                let copy = Rc::new(Instance {
                    class: inst.class.clone(),
                    attrs: Shared::new(FxHashMap::default()),
                    order: Shared::new(inst.order.borrow().clone()),
                    origin: inst.origin,
                    device: Shared::new(inst.device.borrow().clone()),
                    serial: Instance::next_serial(),
                });
                self.copied.insert(address, Value::Instance(copy.clone()));
                let attrs: Vec<(Rc<str>, Value)> = inst
                    .attrs
                    .borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let attrs = attrs
                    .into_iter()
                    .map(|(k, v)| (k, self.value(&v, depth + 1)))
                    .collect();
                // The copy is being made: no memoised result has read it.
                *copy.attrs.write_unobserved() = attrs;
                Value::Instance(copy)
            }
            Value::Layer(layer) => {
                // A layer's children cannot refer back to it: copy them first.
                let children: Vec<Value> = layer.children.borrow().clone();
                let children: Vec<Value> =
                    children.iter().map(|c| self.value(c, depth + 1)).collect();
                let mut next = children.into_iter();
                let copy = Value::Layer(Rc::new(copy_layer(layer, |_| {
                    next.next().unwrap_or(Value::Unknown)
                })));
                self.copied.insert(address, copy.clone());
                copy
            }
            other => other.clone(),
        }
    }
}
