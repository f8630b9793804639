//! Binding names: assignment targets, tuple unpacking (which can fix the
//! rank of a size it unpacks), and the scopes names live in.

use crate::rules::meta::Meta;
use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{Expr, ExprKind};

use super::Interp;
use crate::report::BindingKind;
use crate::value::Value;

impl Interp<'_> {
    /// Bind a value to an assignment target, recording tensors for hints.
    pub(crate) fn assign(&mut self, target: &Expr, value: Value, kind: BindingKind) {
        match &target.kind {
            ExprKind::Name(name) => {
                let value = match kind {
                    BindingKind::Assign => self.name_unnamed_size(name, value),
                    _ => value,
                };
                self.record_binding(name, target, &value, kind);
                self.bind_name(name, value);
            }
            ExprKind::Attribute {
                value: object,
                attr,
            } => {
                let value = match &object.kind {
                    ExprKind::Name(owner) if owner == "self" && kind == BindingKind::Assign => {
                        self.name_unnamed_size(&attr.id, value)
                    }
                    _ => value,
                };
                let object_value = self.eval(object);
                let name = format!("{}.{}", self.text(&object.range), attr.id);
                self.record_binding(&name, target, &value, kind);
                self.set_attr(&object_value, &attr.id, value);
            }
            ExprKind::Tuple(elts) | ExprKind::List(elts) => {
                let star = elts
                    .iter()
                    .position(|e| matches!(e.kind, ExprKind::Starred(_)));
                let items = self.unpack(&value, elts, star);
                match items {
                    Some(items) => {
                        for (elt, item) in elts.iter().zip(items) {
                            let elt = match &elt.kind {
                                ExprKind::Starred(inner) => inner.as_ref(),
                                _ => elt,
                            };
                            self.assign(elt, item, kind);
                        }
                    }
                    None => {
                        // A constructor's configuration the analysis cannot
                        // read but the code names (`image_height,
                        // image_width = pair(image_size)` of a made-up
                        // `image_size`): the names stand for the sizes, as
                        // the constructor's own parameters do.
                        let named = star.is_none()
                            && matches!(value, Value::Unknown | Value::Opaque(_))
                            && self.in_constructor();
                        for elt in elts {
                            let elt = match &elt.kind {
                                ExprKind::Starred(inner) => inner.as_ref(),
                                _ => elt,
                            };
                            let item = match &elt.kind {
                                ExprKind::Name(name) if named && name != "_" => {
                                    Value::Opaque(Rc::from(name.as_str()))
                                }
                                _ => Value::Unknown,
                            };
                            self.assign(elt, item, kind);
                        }
                    }
                }
            }
            ExprKind::Subscript {
                value: object,
                index,
            } => {
                let object_value = self.eval(object);
                let index_values: Vec<Value> = index.iter().map(|i| self.eval(i)).collect();
                // A list of unknown length is one value, not a shared list:
                // `xs[i] = xs[i].view(...)` makes the name's items either
                // what they were or the new value. Left alone, a later
                // `xs[i]` read the old item.
                if let (Value::Many(element, len), ExprKind::Name(name)) =
                    (&object_value, &object.kind)
                {
                    let joined = super::join_values(self, element, &value);
                    self.bind_name(name, Value::Many(Rc::new(joined), len.clone()));
                    return;
                }
                self.set_item(&object_value, index_values, value, target.range);
            }
            ExprKind::Starred(inner) => self.assign(inner, value, kind),
            _ => {}
        }
    }

    /// A size nobody named, bound to a name (`num_masked = int(ratio *
    /// num_patches)`, `self.table_size = 2 ** log2_size`): the name is the
    /// size's, as a person reading the code calls it, where it would be `?`.
    /// Not a loop's turn (`for i in range(100)` runs its turns as one), and
    /// not a size another local already holds (`prev = cur`: it is `cur`'s).
    fn name_unnamed_size(&mut self, name: &str, value: Value) -> Value {
        let Value::Int(d) = &value else {
            return value;
        };
        let resolved = self.env.resolve(d);
        let Some(s) = resolved.as_sym() else {
            return value;
        };
        if !self.env.is_anonymous(s) || name == "_" || self.env.mentions_bounded(&resolved) {
            return value;
        }
        let held: Vec<Dim> = self
            .frame()
            .locals
            .borrow()
            .values()
            .filter_map(|v| match v {
                Value::Int(d) => Some(d.clone()),
                _ => None,
            })
            .collect();
        if held.iter().any(|h| self.env.resolve(h).as_sym() == Some(s)) {
            return value;
        }
        let named = self.env.weak_symbol(name);
        let _ = self.env.unify(&resolved, &named);
        Value::Int(self.env.resolve(&named))
    }

    /// `b, n, device = *x.shape, x.device`, a display led by the sizes of a
    /// tensor of unknown rank and unpacked at once. The targets before the
    /// display's other items take the sizes, which fixes the rank or names
    /// the first sizes as unpacking `x.shape` alone would; the others take
    /// the other items. Evaluated as a display of unknown length, the whole
    /// display would be unknown. `false` (nothing evaluated) when the
    /// statement is not an unpacking of a display led by a starred item.
    pub(super) fn assign_display(&mut self, target: &Expr, value: &Expr) -> bool {
        let (ExprKind::Tuple(elts) | ExprKind::List(elts)) = &target.kind else {
            return false;
        };
        let (ExprKind::Tuple(items) | ExprKind::List(items)) = &value.kind else {
            return false;
        };
        let Some((first, rest)) = items.split_first() else {
            return false;
        };
        let ExprKind::Starred(inner) = &first.kind else {
            return false;
        };
        if rest.iter().any(|e| matches!(e.kind, ExprKind::Starred(_))) {
            return false;
        }
        let lead = self.eval(inner);
        let star = elts
            .iter()
            .position(|e| matches!(e.kind, ExprKind::Starred(_)));
        // The sizes take the targets before the last `rest.len()`, and a
        // starred target among them; one among the others would leave the
        // sizes' count to the display, which the rank does not give.
        let sizes = elts.len().checked_sub(rest.len()).filter(|&sizes| {
            matches!(lead, Value::SizeOfVar(..)) && star.is_none_or(|s| s < sizes)
        });
        let Some(sizes) = sizes else {
            let v = self.led_by(lead, rest, matches!(value.kind, ExprKind::List(_)));
            self.assign(target, v, BindingKind::Assign);
            return true;
        };
        let others: Vec<Value> = rest.iter().map(|e| self.eval(e)).collect();
        let (size_targets, other_targets) = elts.split_at(sizes);
        let unpacked = self.unpack(&lead, size_targets, star);
        for (i, elt) in size_targets.iter().enumerate() {
            let item = unpacked
                .as_ref()
                .and_then(|items| items.get(i).cloned())
                .unwrap_or(Value::Unknown);
            let elt = match &elt.kind {
                ExprKind::Starred(inner) => inner.as_ref(),
                _ => elt,
            };
            self.assign(elt, item, BindingKind::Assign);
        }
        for (elt, item) in other_targets.iter().zip(others) {
            self.assign(elt, item, BindingKind::Assign);
        }
        true
    }

    /// Split a value into `targets.len()` items for tuple unpacking. Unpacking
    /// the size of a tensor of unknown rank fixes its rank and names its dims.
    fn unpack(
        &mut self,
        value: &Value,
        targets: &[Expr],
        star: Option<usize>,
    ) -> Option<Vec<Value>> {
        let n = targets.len();
        match value {
            Value::SizeOfVar(var, suffix) if star.is_none() && targets.len() >= suffix.len() => {
                let names: Vec<Option<String>> = targets[..targets.len() - suffix.len()]
                    .iter()
                    .map(|t| match &t.kind {
                        ExprKind::Name(name) if name != "_" => Some(name.clone()),
                        _ => None,
                    })
                    .collect();
                let dims = self.refine_rank(*var, &names);
                // The names of the known trailing dims unify with what they are.
                let mut items: Vec<Value> = dims.iter().map(|d| Value::Int(d.clone())).collect();
                items.extend(suffix.iter().map(|d| Value::Int(d.clone())));
                Some(items)
            }
            // `*batch, c = x.shape` of a tensor of unknown rank: the
            // leading sizes stay a sequence of unknown length, the rank
            // unfixed.
            Value::SizeOfVar(var, suffix) if star == Some(0) && n - 1 <= suffix.len() => {
                let lead = suffix.len() - (n - 1);
                let mut items = vec![Value::SizeOfVar(*var, Rc::new(suffix[..lead].to_vec()))];
                items.extend(suffix[lead..].iter().map(|d| Value::Int(d.clone())));
                Some(items)
            }
            // `*_, h, w = x.shape` of a tensor of unknown rank: its last
            // sizes, as `h, w = x.shape[-2:]` reads them (nobody's yet: the
            // names bound to them name them), and a sequence nobody can
            // count before them.
            Value::SizeOfVar(var, suffix) if suffix.is_empty() && star == Some(0) && n <= 9 => {
                let mut items = vec![Value::Unknown];
                items.extend(
                    self.last_sizes_unnamed(*var, n - 1)
                        .into_iter()
                        .map(Value::Int),
                );
                Some(items)
            }
            // `b, v, *rest = x.shape` of a tensor of unknown rank: its first
            // sizes, as `x.shape[0]` reads them (a stated `[batch, view,
            // ...]` names them), and a sequence nobody can count for the rest.
            Value::SizeOfVar(var, suffix) if suffix.is_empty() && star == Some(n - 1) => {
                let mut items: Vec<Value> = (0..n - 1)
                    .map(|i| Value::Int(self.var_dim(*var, i as i64)))
                    .collect();
                items.push(Value::Unknown);
                Some(items)
            }
            Value::Tensor(t) if star.is_none() => match self.iterate(value) {
                Some(items) => (items.len() == n).then_some(items),
                // `k, v = kv` of a tensor whose rank is unknown: its first
                // dim is `n`, and the items share one shape, of unknown rank.
                None if self.dims(t).is_none() => {
                    let shape = self.fresh_rank_var();
                    let item = Value::Tensor(Rc::new(crate::value::Tensor {
                        shape,
                        op: Rc::from("unbind"),
                        made_at: None,
                        layout: None,
                        ..(**t).clone()
                    }));
                    Some(vec![item; n])
                }
                None => None,
            },
            // A sequence of unknown length whose items are alike (the
            // pieces of `unbind` along a dim of unknown size): `a, b = ...`
            // holds as many, each that item.
            Value::Many(element, len)
                if star.is_none()
                    && len
                        .as_ref()
                        .and_then(|l| self.env.value(l))
                        .is_none_or(|l| l == n as i64) =>
            {
                Some(vec![(**element).clone(); n])
            }
            _ => {
                let items = self.iterate(value)?;
                match star {
                    None if items.len() == n => Some(items),
                    Some(s) if items.len() + 1 >= n => {
                        let tail = n - s - 1;
                        let mut out: Vec<Value> = items[..s].to_vec();
                        out.push(Value::list(items[s..items.len() - tail].to_vec()));
                        out.extend(items[items.len() - tail..].iter().cloned());
                        Some(out)
                    }
                    _ => None,
                }
            }
        }
    }

    /// Whether the code running is a class's `__init__`, where values are
    /// configuration (sizes, flags), not data.
    pub(super) fn in_constructor(&mut self) -> bool {
        self.frame()
            .function
            .as_ref()
            .is_some_and(|f| f.owner.is_some() && f.def.name.id == "__init__")
    }

    /// A write to the current frame's names: when they are the module's
    /// globals, functions read them, so the globals' epoch moves.
    pub(super) fn touch_scope(&mut self) {
        if self.frame().is_module {
            self.globals_epoch += 1;
        }
    }

    pub(crate) fn bind_name(&mut self, name: &str, value: Value) {
        self.touch_scope();
        let name: Rc<str> = Rc::from(name);
        if let Some(trial) = &mut self.trial
            && trial.runs_in(&self.frames.last().expect("a frame").locals)
        {
            trial.wrote(&name);
        }
        self.frame().locals.borrow_mut().insert(name, value);
    }

    pub(crate) fn lookup(&mut self, name: &str) -> Option<Value> {
        let frame = self.frames.last().expect("a frame");
        let local = frame.locals.borrow().get(name).cloned();
        if let Some(v) = local {
            if let Some(trial) = &mut self.trial
                && trial.runs_in(&frame.locals)
            {
                trial.read(name);
            }
            return Some(v);
        }
        let enclosing = frame
            .closure
            .as_ref()
            .and_then(|closure| Some((closure.borrow().get(name).cloned()?, closure)));
        if let Some((v, closure)) = enclosing {
            if let Some(trial) = &mut self.trial
                && trial.runs_in(closure)
            {
                trial.read(name);
            }
            return Some(v);
        }
        // Compared by address, not cloned: this runs for every name read.
        if self
            .frames
            .last()
            .is_some_and(|frame| Rc::ptr_eq(&frame.module, &self.main))
        {
            if self.across_tracking() {
                self.across_global(name);
            }
            let value = self.globals.borrow().get(name).cloned();
            if value.is_some()
                && let Some(trial) = &mut self.trial
                && trial.runs_in(&self.globals)
            {
                trial.read(name);
            }
            return value;
        }
        // Another file's globals are checked again in the next version
        // when its top level is a shared one, which no run changes; others
        // are not, and a call reading them is not carried.
        if self.across_tracking() {
            let module = &self.frames.last().expect("a frame").module;
            match module.file.filter(|_| module.shared.get()) {
                Some(file) => self.across_foreign_global(file, name),
                None => self.across_unstable(),
            }
        }
        let globals = &self.frames.last().expect("a frame").module.globals;
        let value = globals.borrow().get(name).cloned();
        if value.is_some()
            && let Some(trial) = &mut self.trial
            && trial.runs_in(globals)
        {
            trial.read(name);
        }
        value
    }

    pub(crate) fn snapshot_locals(&mut self) -> FxHashMap<Rc<str>, Value> {
        self.frame().locals.borrow().clone()
    }

    pub(crate) fn restore_locals(&mut self, saved: FxHashMap<Rc<str>, Value>) {
        self.touch_scope();
        *self.frame().locals.borrow_mut() = saved;
    }
}
