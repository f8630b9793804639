//! Iteration: the elements of the iterables the analysis can enumerate, and comprehensions.

use std::rc::Rc;

use crate::interp::join_all;

use shapels_shapes::Dim;
use shapels_syntax::ast;

use crate::interp::{Interp, MAX_LOOP_ITERATIONS};
use crate::report::BindingKind;
use crate::rules;
use crate::value::Value;

/// How a comprehension's body ran.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Comprehended {
    /// Once per element: what it made is every item.
    All,
    /// On elements standing for others (an iterable the analysis cannot
    /// enumerate or unroll, a condition it cannot decide): what it made
    /// stands for the items, `count` of them when that is known.
    Partly { count: Option<Dim> },
}

impl Interp<'_> {
    /// Run `body` once per element of the comprehension's generators, in a
    /// scope of its own.
    pub(super) fn comprehend(
        &mut self,
        generators: &[ast::Comprehension],
        body: &mut dyn FnMut(&mut Self),
    ) -> Comprehended {
        let saved = self.snapshot_locals();
        let complete = self.comprehend_level(generators, body);
        self.restore_locals(saved);
        complete
    }

    fn comprehend_level(
        &mut self,
        generators: &[ast::Comprehension],
        body: &mut dyn FnMut(&mut Self),
    ) -> Comprehended {
        let Some((first, rest)) = generators.split_first() else {
            body(self);
            return Comprehended::All;
        };
        let iterable = self.eval(&first.iter);
        let iterable = self
            .own_iterator(&iterable, first.iter.range)
            .unwrap_or(iterable);
        let items = self.iterate(&iterable);
        // A list of unknown length whose length is known (the samples a
        // `DataLoader` hands its `collate_fn`) has as many.
        let too_many = match &iterable {
            Value::Many(_, Some(n)) => Some(n.clone()),
            _ => items
                .as_ref()
                .map(Vec::len)
                .filter(|n| *n > MAX_LOOP_ITERATIONS)
                .map(|n| Dim::konst(n as i64)),
        };
        // More items than the analysis unrolls: the comprehension is read as
        // over an iterable it cannot enumerate (its first items alone would
        // make a list too short), of a known length.
        let Some(items) = items.filter(|items| items.len() <= MAX_LOOP_ITERATIONS) else {
            // Still evaluate once so hover and diagnostics see the element expression.
            let element = self.element_of(&iterable);
            self.assign(&first.target, element, BindingKind::For);
            let _ = self.comprehend_level(rest, body);
            // One item per element, when nothing filters or multiplies them.
            let count = too_many.filter(|_| rest.is_empty() && first.ifs.is_empty());
            return Comprehended::Partly { count };
        };
        let mut complete = true;
        for item in items {
            if self.out_of_budget() {
                return Comprehended::Partly { count: None };
            }
            self.assign(&first.target, item, BindingKind::For);
            let mut keep = true;
            for cond in &first.ifs {
                let c = self.eval(cond);
                match self.truth(&c) {
                    Some(false) => keep = false,
                    Some(true) => {}
                    None => complete = false,
                }
            }
            if keep {
                complete &= self.comprehend_level(rest, body) == Comprehended::All;
            }
        }
        if complete {
            Comprehended::All
        } else {
            Comprehended::Partly { count: None }
        }
    }

    /// The elements of an iterable the analysis can enumerate.
    pub(crate) fn iterate(&mut self, value: &Value) -> Option<Vec<Value>> {
        match value {
            Value::Tuple(_) | Value::List(_) => value.items(),
            Value::Dict(d) => Some(d.borrow().iter().map(|(k, _)| k.clone()).collect()),
            Value::Range(start, stop, step) => {
                let (a, b, s) = (start.as_const()?, stop.as_const()?, step.as_const()?);
                let count = range_len(a, b, s)?;
                if count as usize > MAX_LOOP_ITERATIONS * 4 {
                    return None;
                }
                Some((0..count).map(|i| Value::int(a + i * s)).collect())
            }
            Value::Layer(layer) if layer.unknown_children.get() => None,
            Value::Layer(layer) => {
                let children = layer.children.borrow().clone();
                if children.is_empty() && !rules::nn::is_container(&layer.kind) {
                    return None;
                }
                if &*layer.kind == "ModuleDict" {
                    return Some(
                        layer
                            .keys
                            .borrow()
                            .iter()
                            .map(|k| Value::Str(k.clone()))
                            .collect(),
                    );
                }
                Some(children)
            }
            Value::Tensor(t) => {
                let shape = self.resolve_shape(&t.shape);
                let dims = shape.dims()?;
                let first = self.env.value(dims.first()?)?;
                if first as usize > MAX_LOOP_ITERATIONS {
                    return None;
                }
                let rest = crate::value::Shape::known(dims[1..].to_vec());
                let item = Value::Tensor(Rc::new(crate::value::Tensor {
                    shape: rest,
                    ..(**t).clone()
                }));
                Some((0..first).map(|_| item.clone()).collect())
            }
            // A user class built on a torch container (`class
            // TimestepEmbedSequential(nn.Sequential, ...)`) iterates the
            // container's layers.
            Value::Instance(inst) => {
                let layer = inst.attrs.borrow().get("__torch_layer__").cloned()?;
                match layer {
                    Value::Layer(_) => self.iterate(&layer),
                    _ => None,
                }
            }
            Value::Str(s) if s.len() <= MAX_LOOP_ITERATIONS => Some(
                s.chars()
                    .map(|c| Value::Str(Rc::from(c.to_string())))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// What `iter(v)` gives for an object of a user class with an
    /// `__iter__` of its own (a hand-written loader, often a generator
    /// method): that method's result. `None` for any other value, and for
    /// a class built on a torch container, which iterates its layers.
    pub(crate) fn own_iterator(&mut self, v: &Value, range: ast::TextRange) -> Option<Value> {
        let Value::Instance(inst) = v else {
            return None;
        };
        if inst.attrs.borrow().contains_key("__torch_layer__") {
            return None;
        }
        let method = crate::interp::call::lookup_method(&inst.class, "__iter__")?;
        Some(self.call_function(&method, Some(v.clone()), Vec::new(), Vec::new(), range))
    }

    /// A value standing for any element of an iterable we cannot enumerate.
    pub(crate) fn element_of(&mut self, value: &Value) -> Value {
        match value {
            Value::Range(..) => Value::Int(self.env.anonymous()),
            Value::Many(element, _) => (**element).clone(),
            // A list too long to unroll (see `exec_for`): any of its items.
            Value::List(_) | Value::Tuple(_) => {
                let items = value.items().unwrap_or_default();
                join_all(self, &items)
            }
            // A container of layers built in a loop of unknown length: its
            // children are the layers the loop body made, each standing for
            // any number of alike layers.
            Value::Layer(layer) if layer.unknown_children.get() => {
                let children = layer.children.borrow().clone();
                let element = join_all(self, &children);
                if let Value::Layer(joined) = &element
                    && !children
                        .iter()
                        .any(|c| matches!(c, Value::Layer(l) if Rc::ptr_eq(l, joined)))
                {
                    self.stands_for.insert(
                        Rc::as_ptr(joined) as usize,
                        (element.clone(), Rc::new(children)),
                    );
                }
                element
            }
            Value::Tensor(t) => {
                let shape = self.resolve_shape(&t.shape);
                match shape.dims() {
                    Some(dims) if !dims.is_empty() => {
                        Value::Tensor(Rc::new(crate::value::Tensor {
                            shape: crate::value::Shape::known(dims[1..].to_vec()),
                            ..(**t).clone()
                        }))
                    }
                    _ => Value::Unknown,
                }
            }
            _ => Value::Unknown,
        }
    }
}

/// How many items `range(start, stop, step)` holds; `None` for a step of 0.
pub(crate) fn range_len(start: i64, stop: i64, step: i64) -> Option<i64> {
    match step {
        0 => None,
        s if s > 0 => Some((stop - start + s - 1).max(0) / s),
        s => Some((start - stop - s - 1).max(0) / -s),
    }
}
