//! Subscripts: `value[index]` of any value, item assignment, and the items a slice picks.

use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use crate::interp::{Interp, join_values};
use crate::rules;
use crate::value::Value;

impl Interp<'_> {
    pub(crate) fn get_item(
        &mut self,
        object: &Value,
        index: Vec<Value>,
        range: TextRange,
    ) -> Value {
        match object {
            Value::Tensor(t) => rules::index::index_tensor(self, t, &index, range),
            // One item of a list of unknown length is one of its items; a
            // slice of it is another such list.
            Value::Many(element, _) => match index.as_slice() {
                [Value::Int(_)] => (**element).clone(),
                [Value::Slice(..)] => Value::Many(element.clone(), None),
                _ => Value::Unknown,
            },
            // A tuple open at its end: what is read among its known items
            // counting from the start is known; anything else is not.
            Value::OpenTuple(items) => {
                let from_start = |v: &Value, bound: usize| match v {
                    Value::Int(d) => d
                        .as_const()
                        .is_some_and(|i| (0..=bound as i64).contains(&i)),
                    _ => false,
                };
                match index.as_slice() {
                    [Value::Int(d)] => match d.as_const() {
                        Some(i) if (0..items.len() as i64).contains(&i) => {
                            items[i as usize].clone()
                        }
                        _ => Value::Unknown,
                    },
                    [Value::Slice(lo, hi, step)]
                        if (lo.is_none() || from_start(lo, items.len()))
                            && from_start(hi, items.len())
                            && (step.is_none() || from_start(step, usize::MAX >> 1)) =>
                    {
                        match slice_indices(items.len(), lo, hi, step) {
                            Some(picked) => {
                                Value::tuple(picked.into_iter().map(|i| items[i].clone()).collect())
                            }
                            None => Value::Unknown,
                        }
                    }
                    _ => Value::Unknown,
                }
            }
            Value::Tuple(_) | Value::List(_) => {
                let items = object.items().unwrap_or_default();
                let [idx] = index.as_slice() else {
                    return Value::Unknown;
                };
                match idx {
                    Value::Int(d) => match d.as_const() {
                        Some(i) => {
                            let n = items.len() as i64;
                            let i = if i < 0 { i + n } else { i };
                            if (0..n).contains(&i) {
                                items[i as usize].clone()
                            } else {
                                Value::Unknown
                            }
                        }
                        None => Value::Unknown,
                    },
                    Value::Slice(lo, hi, step) => {
                        let Some(picked) = slice_indices(items.len(), lo, hi, step) else {
                            return Value::Unknown;
                        };
                        let out: Vec<Value> =
                            picked.into_iter().map(|i| items[i].clone()).collect();
                        if matches!(object, Value::List(_)) {
                            Value::list(out)
                        } else {
                            Value::tuple(out)
                        }
                    }
                    _ => Value::Unknown,
                }
            }
            // A character or a part of a known string (`key[len(prefix):]`
            // of x-transformers' keyword groups, which name the settings
            // of the layers built from them). Python counts characters.
            Value::Str(text) => {
                let chars: Vec<char> = text.chars().collect();
                let picked = match index.as_slice() {
                    [Value::Int(d)] => d.as_const().and_then(|i| {
                        let i = if i < 0 { i + chars.len() as i64 } else { i };
                        usize::try_from(i)
                            .ok()
                            .filter(|i| *i < chars.len())
                            .map(|i| vec![i])
                    }),
                    [Value::Slice(lo, hi, step)] => slice_indices(chars.len(), lo, hi, step),
                    _ => None,
                };
                match picked {
                    Some(picked) => Value::Str(
                        picked
                            .into_iter()
                            .map(|i| chars[i])
                            .collect::<String>()
                            .into(),
                    ),
                    None => Value::Text,
                }
            }
            Value::Dict(d) => {
                let [key] = index.as_slice() else {
                    return Value::Unknown;
                };
                let entries = d.borrow().clone();
                for (k, v) in entries {
                    if self.values_equal(&k, key) == Some(true) {
                        return v;
                    }
                }
                Value::Unknown
            }
            Value::SizeOfVar(var, suffix) => match index.as_slice() {
                [Value::Int(i)] => match i.as_const() {
                    Some(i) => Value::Int(rules::shape::unknown_rank_size(self, *var, suffix, i)),
                    None => Value::Int(self.env.anonymous()),
                },
                // `x.shape[:-1]` of a tensor of unknown rank: the leading sizes.
                [Value::Slice(lo, hi, step)]
                    if matches!(**lo, Value::None) && matches!(**step, Value::None) =>
                {
                    match &**hi {
                        Value::Int(k) => match k.as_const() {
                            Some(k) if k < 0 && (-k) as usize <= suffix.len() => Value::SizeOfVar(
                                *var,
                                Rc::new(suffix[..suffix.len() - (-k) as usize].to_vec()),
                            ),
                            // `x.shape[:1]` when `x` has at least that many
                            // dims: that many sizes, which of them nobody
                            // knows (the leading ones may be the known ones).
                            Some(k) if k >= 0 && k as usize <= suffix.len() => Value::Tuple(
                                Rc::new((0..k).map(|_| Value::Int(self.env.anonymous())).collect()),
                            ),
                            // `n, c = x.shape[:2]` when nothing of `x` is
                            // known: its first sizes, the batch's named as
                            // `x.shape[0]` names it; names bound to the
                            // others name them.
                            Some(k) if suffix.is_empty() && (1..=8).contains(&k) => Value::tuple(
                                (0..k)
                                    .map(|i| match i {
                                        0 => Value::Int(self.var_dim(*var, 0)),
                                        i => Value::Int(self.var_dim_unnamed(*var, i)),
                                    })
                                    .collect(),
                            ),
                            _ => Value::Unknown,
                        },
                        Value::None => object.clone(),
                        _ => Value::Unknown,
                    }
                }
                // `x.shape[-2:]` of a tensor of unknown rank: its last sizes,
                // as `x.shape[-1]` reads one. The known trailing sizes are
                // them; else code that reads the last two sizes takes the
                // tensor to have two (`h, w = x.shape[-2:]`). Those are
                // nobody's yet: names bound to them, or a layer's
                // conventional ones (`H, W`), name them.
                [Value::Slice(lo, hi, step)]
                    if matches!(**hi, Value::None) && matches!(**step, Value::None) =>
                {
                    let from_end = match &**lo {
                        Value::Int(k) => k.as_const().filter(|k| *k < 0).map(|k| (-k) as usize),
                        _ => None,
                    };
                    match from_end {
                        Some(k) if k <= suffix.len() => Value::tuple(
                            suffix[suffix.len() - k..]
                                .iter()
                                .map(|d| Value::Int(d.clone()))
                                .collect(),
                        ),
                        Some(k) if suffix.is_empty() && k <= 8 => Value::tuple(
                            self.last_sizes_unnamed(*var, k)
                                .into_iter()
                                .map(Value::Int)
                                .collect(),
                        ),
                        _ => Value::Unknown,
                    }
                }
                _ => Value::Unknown,
            },
            Value::Layer(layer) => crate::interp::modules::container_item(self, layer, &index),
            // A dataset of torch's is the call its indexing makes (see
            // `call::data`).
            Value::Partial(_) if crate::interp::call::is_dataset(object) => {
                self.call_value(object, index, Vec::new(), range)
            }
            Value::Instance(_) => {
                let method = self.get_attr(object, "__getitem__", range);
                match (method, crate::interp::modules::container_of(object)) {
                    (method @ Value::BoundMethod(..), _) => {
                        self.call_value(&method, index, Vec::new(), range)
                    }
                    // A subclass of a torch container: its layer part's child.
                    (_, Some(layer)) => {
                        crate::interp::modules::container_item(self, &layer, &index)
                    }
                    _ => Value::Unknown,
                }
            }
            _ => Value::Unknown,
        }
    }

    pub(crate) fn set_item(
        &mut self,
        object: &Value,
        index: Vec<Value>,
        value: Value,
        range: TextRange,
    ) {
        match object {
            // `view_shape[1:] = [1] * (len(view_shape) - 1)`: the slice's
            // items replaced by the new ones (a step of 1 only).
            Value::List(items) if let [Value::Slice(lo, hi, step)] = index.as_slice() => {
                if !matches!(**step, Value::None) {
                    return;
                }
                let len = items.borrow().len();
                let (Some(taken), Some(new)) =
                    (slice_indices(len, lo, hi, step), self.iterate(&value))
                else {
                    return;
                };
                if let (Some(&first), Some(&last)) = (taken.first(), taken.last()) {
                    items.write(&mut self.epoch).splice(first..=last, new);
                } else if let Value::Int(d) = &**lo
                    && let Some(at) = d.as_const()
                {
                    // An empty slice inserts where it starts (`xs[2:2] = ...`).
                    let n = len as i64;
                    let at = if at < 0 { (at + n).max(0) } else { at.min(n) } as usize;
                    items.write(&mut self.epoch).splice(at..at, new);
                }
            }
            Value::List(items) => {
                let [Value::Int(d)] = index.as_slice() else {
                    return;
                };
                match d.as_const() {
                    Some(i) => {
                        let mut items = items.write(&mut self.epoch);
                        let n = items.len() as i64;
                        let i = if i < 0 { i + n } else { i };
                        if (0..n).contains(&i) {
                            items[i as usize] = value;
                        }
                    }
                    // `xs[i] = xs[i].view(...)` with an `i` the analysis
                    // cannot read (a loop over a list of unknown length):
                    // any item may be the one written, so each is what it
                    // was or the new value. Left as it was, a later `xs[i]`
                    // read the old item and its next op was reported
                    // against the old shape.
                    None => {
                        let old = items.borrow().clone();
                        let joined: Vec<Value> = old
                            .iter()
                            .map(|item| join_values(self, item, &value))
                            .collect();
                        *items.write(&mut self.epoch) = joined;
                    }
                }
            }
            Value::Dict(d) => {
                if let [key] = index.as_slice() {
                    self.note_dict_write(d);
                    let entries = d.borrow().clone();
                    for (i, (k, _)) in entries.iter().enumerate() {
                        if self.values_equal(k, key) == Some(true) {
                            d.write(&mut self.epoch)[i].1 = value;
                            return;
                        }
                    }
                    d.write(&mut self.epoch).push((key.clone(), value));
                }
            }
            Value::Tensor(t) => rules::index::index_put(self, t, &index, &value, range),
            Value::Layer(layer) if rules::nn::is_container(&layer.kind) => {
                match index.as_slice() {
                    // `blocks[name] = layer` in a ModuleDict.
                    [key @ (Value::Str(_) | Value::Text)] => {
                        crate::interp::modules::add_child(self, layer, Some(key), value);
                    }
                    // `layers[i] = layer` in a ModuleList or Sequential.
                    [Value::Int(d)] => {
                        let mut children = layer.children.write(&mut self.epoch);
                        let n = children.len() as i64;
                        match d.as_const().map(|i| if i < 0 { i + n } else { i }) {
                            Some(i) if (0..n).contains(&i) => children[i as usize] = value,
                            _ => layer.unknown_children.set(true, &mut self.epoch),
                        }
                    }
                    _ => {
                        layer.unknown_children.set(true, &mut self.epoch);
                    }
                }
            }
            // A subclass of a torch container (`class Mixed(nn.ModuleDict)`)
            // keeps its children in the layer part.
            Value::Instance(_) => {
                if let Some(layer) = crate::interp::modules::container_of(object) {
                    self.set_item(&Value::Layer(layer), index, value, range);
                }
            }
            _ => {}
        }
    }
}

/// The indices a Python slice picks from a sequence of `len` items.
pub(crate) fn slice_indices(
    len: usize,
    lo: &Value,
    hi: &Value,
    step: &Value,
) -> Option<Vec<usize>> {
    let n = len as i64;
    let get = |v: &Value| -> Option<Option<i64>> {
        match v {
            Value::None => Some(None),
            Value::Int(d) => d.as_const().map(Some),
            _ => None,
        }
    };
    let step = get(step)?.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let clamp = |i: i64, lo: i64, hi: i64| i.max(lo).min(hi);
    let norm = |i: i64| if i < 0 { i + n } else { i };
    let mut out = Vec::new();
    if step > 0 {
        let start = get(lo)?.map(|i| clamp(norm(i), 0, n)).unwrap_or(0);
        let stop = get(hi)?.map(|i| clamp(norm(i), 0, n)).unwrap_or(n);
        let mut i = start;
        while i < stop {
            out.push(i as usize);
            i += step;
        }
    } else {
        let start = get(lo)?.map(|i| clamp(norm(i), -1, n - 1)).unwrap_or(n - 1);
        let stop = get(hi)?.map(|i| clamp(norm(i), -1, n - 1)).unwrap_or(-1);
        let mut i = start;
        while i > stop {
            out.push(i as usize);
            i += step;
        }
    }
    Some(out)
}

impl Interp<'_> {
    /// `del object[index]`: the entry or item goes, as `d.pop(key)` and
    /// `xs.pop(i)` take it. Left in place, a loop that deletes the keys it
    /// has seen (`del return_layers[name]`, then `if not return_layers:
    /// break`) never stopped, and took in layers the code leaves out.
    pub(crate) fn delete_item(&mut self, object: &Value, index: Vec<Value>, range: TextRange) {
        match (object, index.as_slice()) {
            (Value::Dict(_), [_]) | (Value::List(_), [Value::Int(_)]) => {
                let _ = self.call_builtin_method(object, "pop", index, Vec::new(), range);
            }
            (Value::List(items), [Value::Slice(lo, hi, step)]) => {
                let len = items.borrow().len();
                if let Some(taken) = slice_indices(len, lo, hi, step) {
                    let mut items = items.write(&mut self.epoch);
                    for i in taken.into_iter().rev() {
                        if i < items.len() {
                            items.remove(i);
                        }
                    }
                }
            }
            // `del model[-1]` of a Sequential, `del blocks[name]` of a
            // ModuleDict.
            (Value::Layer(layer), [key]) if rules::nn::is_container(&layer.kind) => {
                let keys = layer.keys.borrow().clone();
                let n = layer.children.borrow().len() as i64;
                let at = match key {
                    Value::Int(d) => d
                        .as_const()
                        .map(|i| if i < 0 { i + n } else { i })
                        .filter(|i| (0..n).contains(i))
                        .map(|i| i as usize),
                    Value::Str(s) => keys.iter().position(|k| **k == **s),
                    _ => None,
                };
                match at {
                    Some(i) => {
                        layer.children.write(&mut self.epoch).remove(i);
                        if i < keys.len() {
                            layer.keys.write(&mut self.epoch).remove(i);
                        }
                    }
                    None => layer.unknown_children.set(true, &mut self.epoch),
                }
            }
            (Value::Instance(_), _) => {
                if let Some(layer) = crate::interp::modules::container_of(object) {
                    self.delete_item(&Value::Layer(layer), index, range);
                }
            }
            _ => {}
        }
    }

    /// `x.shape[4]` of a 4-D tensor (`sizes` is what `x.shape` or
    /// `x.size()` gave): Python raises `IndexError`, so the path ends
    /// here. In a function shown for any input, sizes made up for it may
    /// have the wrong count, so the path ends unsaid.
    pub(crate) fn check_size_index(&mut self, sizes: &Value, index: &[Value], range: TextRange) {
        let (Value::Tuple(items), [Value::Int(i)]) = (sizes, index) else {
            return;
        };
        let Some(i) = i.as_const() else {
            return;
        };
        let n = items.len() as i64;
        if (-n..n).contains(&i) || !items.iter().all(|v| matches!(v, Value::Int(_))) {
            return;
        }
        let made_up = items
            .iter()
            .any(|v| matches!(v, Value::Int(d) if self.dim_made_for_any_input(d)));
        if made_up {
            self.raise_on_path();
            return;
        }
        let message = format!("tuple index out of range: index {i} of {n} sizes");
        self.report(range, crate::code::Code::IndexOutOfRange, message);
    }
}
