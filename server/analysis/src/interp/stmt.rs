//! Statements: assignment and binding, control flow, definitions, imports.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{self, Expr, ExprKind, Stmt, StmtKind};

use super::{Flow, Interp, MAX_LOOP_ITERATIONS, ModeState, join_values};
use crate::report::BindingKind;
use crate::value::{Class, Function, Value};

impl Interp<'_> {
    pub(crate) fn exec_block(&mut self, body: &[Stmt]) -> Flow {
        for stmt in body {
            match self.exec_stmt(stmt) {
                Flow::Normal => {}
                other => return other,
            }
        }
        Flow::Normal
    }

    fn exec_stmt(&mut self, stmt: &Stmt) -> Flow {
        if !self.tick() {
            return Flow::Stop;
        }
        match &stmt.kind {
            StmtKind::Expr(e) => {
                // The receiver of an in-place view op, before the call.
                let before = self.inplace_view_receiver(e);
                let v = self.eval(e);
                self.check_discarded(e, &v);
                if let Some(old) = before {
                    self.replace_tensor(&old, &v);
                }
                Flow::Normal
            }
            StmtKind::Assign {
                targets,
                annotation,
                value,
            } => {
                let v = match value {
                    Some(value) => self.eval(value),
                    None => return Flow::Normal,
                };
                let _ = annotation;
                for target in targets {
                    self.assign(target, v.clone(), BindingKind::Assign);
                }
                Flow::Normal
            }
            StmtKind::AugAssign { target, op, value } => {
                let current = self.eval(target);
                let rhs = self.eval(value);
                if let Value::Tensor(_) = current {
                    let result = crate::rules::inplace_binary_op(
                        self,
                        *op,
                        &current,
                        &rhs,
                        stmt.range.clone(),
                        target.range.clone(),
                        value.range.clone(),
                    );
                    self.assign(target, result, BindingKind::AugAssign);
                    return Flow::Normal;
                }
                let result = self.binop(
                    *op,
                    current,
                    rhs,
                    stmt.range.clone(),
                    target.range.clone(),
                    value.range.clone(),
                );
                self.assign(target, result, BindingKind::AugAssign);
                Flow::Normal
            }
            StmtKind::FunctionDef(def) => {
                let function = self.make_function(def.clone(), None);
                self.bind_name(&def.name.id, Value::Function(function.clone()));
                if self.frame().is_module {
                    self.functions.push(function);
                }
                Flow::Normal
            }
            StmtKind::ClassDef(def) => {
                self.define_class(def.clone());
                Flow::Normal
            }
            StmtKind::Return(value) => {
                let v = value.as_ref().map(|e| self.eval(e)).unwrap_or(Value::None);
                Flow::Return(v)
            }
            StmtKind::If { test, body, orelse } => self.exec_if(test, body, orelse),
            StmtKind::For {
                target,
                iter,
                body,
                orelse,
            } => {
                let iterable = self.eval(iter);
                self.exec_for(target, iterable, body, orelse)
            }
            StmtKind::While { test, body, orelse } => self.exec_while(test, body, orelse),
            StmtKind::With { items, body } => self.exec_with(items, body),
            StmtKind::Try {
                body,
                handlers,
                orelse,
                finalbody,
            } => {
                // The body is taken as the path that runs; handlers are explored
                // too but their bindings only join in where the body's are unknown.
                let snapshot = self.snapshot_locals();
                let flow = self.exec_block(body);
                let flow = match flow {
                    Flow::Normal => self.exec_block(orelse),
                    other => other,
                };
                if !handlers.is_empty() {
                    let after_body = self.snapshot_locals();
                    for handler in handlers {
                        self.restore_locals(snapshot.clone());
                        let _ = self.exec_block(&handler.body);
                    }
                    self.restore_locals(after_body);
                }
                let final_flow = self.exec_block(finalbody);
                match final_flow {
                    Flow::Normal => flow,
                    other => other,
                }
            }
            StmtKind::Import(aliases) => {
                for alias in aliases {
                    match &alias.asname {
                        Some(asname) => {
                            self.bind_name(&asname.id, Value::Path(Rc::from(alias.name.as_str())))
                        }
                        None => {
                            let top = alias.name.split('.').next().unwrap_or("");
                            self.bind_name(top, Value::Path(Rc::from(top)));
                        }
                    }
                }
                Flow::Normal
            }
            StmtKind::ImportFrom { module, names } => {
                for alias in names {
                    if alias.name == "*" {
                        continue;
                    }
                    let bound = alias
                        .asname
                        .as_ref()
                        .map(|n| n.id.as_str())
                        .unwrap_or(alias.name.as_str());
                    let path = if module.starts_with('.') {
                        Value::Unknown
                    } else {
                        Value::Path(Rc::from(format!("{module}.{}", alias.name)))
                    };
                    self.bind_name(bound, path);
                }
                Flow::Normal
            }
            StmtKind::Assert { test, .. } => {
                self.assume(test);
                Flow::Normal
            }
            StmtKind::Raise(_) => Flow::Stop,
            StmtKind::Delete(targets) => {
                for t in targets {
                    if let ExprKind::Name(n) = &t.kind {
                        self.touch_scope();
                        self.frame().locals.borrow_mut().remove(n.as_str());
                    }
                }
                Flow::Normal
            }
            StmtKind::Break => Flow::Break,
            StmtKind::Continue => Flow::Continue,
            StmtKind::Global(_) | StmtKind::Pass | StmtKind::Other => Flow::Normal,
        }
    }

    /// `tensor.to(dev)` as a statement of its own does nothing: torch returns
    /// a new tensor and leaves the old one where it was.
    fn check_discarded(&mut self, e: &Expr, value: &Value) {
        if let (ExprKind::Call { func, .. }, Value::Tensor(_)) = (&e.kind, value)
            && let ExprKind::Attribute {
                value: receiver,
                attr,
            } = &func.kind
            && matches!(
                attr.id.as_str(),
                "to" | "cuda" | "cpu" | "half" | "float" | "double" | "long" | "int" | "bfloat16"
            )
            && matches!(self.peek(receiver), Some(Value::Tensor(_)))
        {
            self.report(
                e.range.clone(),
                crate::report::Severity::Warning,
                "discarded-to",
                format!(
                    "`{}` returns a new tensor and leaves `{}` unchanged; assign the result",
                    self.text(&e.range),
                    self.text(&receiver.range)
                ),
            );
        }
    }

    /// `x.unsqueeze_(0)`: the tensor an in-place op that changes the shape
    /// (not just the data) is called on.
    fn inplace_view_receiver(&mut self, e: &Expr) -> Option<Rc<crate::value::Tensor>> {
        let ExprKind::Call { func, .. } = &e.kind else {
            return None;
        };
        let ExprKind::Attribute { value, attr } = &func.kind else {
            return None;
        };
        if !matches!(
            attr.id.as_str(),
            "unsqueeze_"
                | "squeeze_"
                | "t_"
                | "transpose_"
                | "swapdims_"
                | "swapaxes_"
                | "resize_"
                | "as_strided_"
        ) {
            return None;
        }
        let ExprKind::Name(name) = &value.kind else {
            return None;
        };
        match self.lookup(name) {
            Some(Value::Tensor(t)) => Some(t),
            _ => None,
        }
    }

    /// Torch changed the tensor itself: every name in scope that refers to
    /// it (`p = x; p.unsqueeze_(0)` changes `x` too) now sees the new shape,
    /// or nothing when the new shape is unknown.
    fn replace_tensor(&mut self, old: &Rc<crate::value::Tensor>, new: &Value) {
        self.epoch += 1;
        let replacement = match new {
            Value::Tensor(_) => new.clone(),
            _ => Value::Unknown,
        };
        let scopes: Vec<super::Scope> = [
            Some(self.frame().locals.clone()),
            Some(self.globals.clone()),
        ]
        .into_iter()
        .flatten()
        .collect();
        for scope in scopes {
            for v in scope.borrow_mut().values_mut() {
                if let Value::Tensor(t) = v
                    && Rc::ptr_eq(t, old)
                {
                    *v = replacement.clone();
                }
            }
        }
    }

    /// The current value of a simple name or attribute chain, without side effects.
    fn peek(&mut self, e: &Expr) -> Option<Value> {
        match &e.kind {
            ExprKind::Name(n) => self.lookup(n),
            ExprKind::Attribute { .. } => Some(self.eval(e)),
            _ => None,
        }
    }

    /// Bind a value to an assignment target, recording tensors for hints.
    pub(crate) fn assign(&mut self, target: &Expr, value: Value, kind: BindingKind) {
        match &target.kind {
            ExprKind::Name(name) => {
                self.record_binding(name, target, &value, kind);
                self.bind_name(name, value);
            }
            ExprKind::Attribute {
                value: object,
                attr,
            } => {
                let object_value = self.eval(object);
                let name = format!("{}.{}", self.text(&object.range), attr.id);
                self.record_binding(&name, target, &value, kind);
                self.set_attr(&object_value, &attr.id, value);
            }
            ExprKind::Tuple(elts) | ExprKind::List(elts) => {
                let n = elts.len();
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
                        let _ = n;
                        for elt in elts {
                            let elt = match &elt.kind {
                                ExprKind::Starred(inner) => inner.as_ref(),
                                _ => elt,
                            };
                            self.assign(elt, Value::Unknown, kind);
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
                self.set_item(&object_value, index_values, value, target.range.clone());
            }
            ExprKind::Starred(inner) => self.assign(inner, value, kind),
            _ => {}
        }
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
            Value::Tensor(_) => {
                let items = self.iterate(value)?;
                if items.len() == n { Some(items) } else { None }
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

    /// A write to the current frame's names: when they are the module's
    /// globals, functions read them, so the epoch moves.
    fn touch_scope(&mut self) {
        if self.frame().is_module {
            self.epoch += 1;
        }
    }

    pub(crate) fn bind_name(&mut self, name: &str, value: Value) {
        self.touch_scope();
        self.frame()
            .locals
            .borrow_mut()
            .insert(Rc::from(name), value);
    }

    pub(crate) fn lookup(&mut self, name: &str) -> Option<Value> {
        if let Some(v) = self.frame().locals.borrow().get(name) {
            return Some(v.clone());
        }
        if let Some(closure) = &self.frame().closure
            && let Some(v) = closure.borrow().get(name)
        {
            return Some(v.clone());
        }
        self.globals.borrow().get(name).cloned()
    }

    pub(crate) fn snapshot_locals(&mut self) -> FxHashMap<Rc<str>, Value> {
        self.frame().locals.borrow().clone()
    }

    pub(crate) fn restore_locals(&mut self, saved: FxHashMap<Rc<str>, Value>) {
        self.touch_scope();
        *self.frame().locals.borrow_mut() = saved;
    }

    /// Merge two branch states name by name.
    fn join_locals(
        &mut self,
        a: FxHashMap<Rc<str>, Value>,
        b: FxHashMap<Rc<str>, Value>,
    ) -> FxHashMap<Rc<str>, Value> {
        let mut out = FxHashMap::default();
        for (k, va) in &a {
            let v = match b.get(k) {
                Some(vb) => join_values(self, va, vb),
                None => va.clone(),
            };
            out.insert(k.clone(), v);
        }
        for (k, vb) in b {
            out.entry(k).or_insert(vb);
        }
        out
    }

    fn exec_if(&mut self, test: &Expr, body: &[Stmt], orelse: &[Stmt]) -> Flow {
        if is_main_guard(test) && self.frame().is_module {
            // The oracle, like a user's script, runs the main block inside the
            // fake mode: tensors made there are fake.
            let saved = self.mode;
            let id = self.fresh_mode_id();
            self.mode = ModeState {
                fake: true,
                id,
                allow_non_fake_inputs: self.config.allow_non_fake_inputs,
                user_mode: false,
            };
            let flow = self.exec_block(body);
            self.mode = saved;
            return flow;
        }
        let cond = self.eval(test);
        match self.truth(&cond) {
            Some(true) => self.exec_block(body),
            Some(false) => self.exec_block(orelse),
            None => self.exec_both(body, orelse),
        }
    }

    /// Run two alternative blocks from the same state and join what they leave.
    fn exec_both(&mut self, body: &[Stmt], orelse: &[Stmt]) -> Flow {
        let before = self.snapshot_locals();
        self.uncertain += 1;
        self.attr_journals.push(Vec::new());
        let flow_a = self.exec_block(body);
        let after_a = self.snapshot_locals();
        self.restore_locals(before);
        // Undo the first branch's attribute writes, keeping what it left.
        let journal_a = self.attr_journals.pop().unwrap_or_default();
        let attrs_a: Vec<Option<Value>> = journal_a
            .iter()
            .map(|(inst, key, _)| inst.attrs.borrow().get(key).cloned())
            .collect();
        for (inst, key, old) in &journal_a {
            restore_attr(inst, key, old.clone());
        }
        self.attr_journals.push(Vec::new());
        let flow_b = self.exec_block(orelse);
        let journal_b = self.attr_journals.pop().unwrap_or_default();
        self.uncertain -= 1;
        self.join_attrs(journal_a, attrs_a, journal_b);
        let after_b = self.snapshot_locals();
        match (flow_a, flow_b) {
            (Flow::Normal, Flow::Normal) => {
                let joined = self.join_locals(after_a, after_b);
                self.restore_locals(joined);
                Flow::Normal
            }
            (Flow::Normal, other) => {
                self.note_early(other);
                self.restore_locals(after_a);
                Flow::Normal
            }
            (other, Flow::Normal) => {
                self.note_early(other);
                self.restore_locals(after_b);
                Flow::Normal
            }
            (Flow::Return(a), Flow::Return(b)) => Flow::Return(join_values(self, &a, &b)),
            (Flow::Return(a), _) | (_, Flow::Return(a)) => Flow::Return(a),
            (a, _) => a,
        }
    }

    /// After both branches ran: each attribute either branch wrote becomes
    /// the join of what the two left (a branch that did not write it left
    /// the value from before).
    fn join_attrs(
        &mut self,
        journal_a: Vec<(Rc<crate::value::Instance>, Rc<str>, Option<Value>)>,
        attrs_a: Vec<Option<Value>>,
        journal_b: Vec<(Rc<crate::value::Instance>, Rc<str>, Option<Value>)>,
    ) {
        let mut touched: Vec<(Rc<crate::value::Instance>, Rc<str>, Option<Value>)> = Vec::new();
        for (inst, key, old) in journal_a.iter().chain(journal_b.iter()) {
            if !touched
                .iter()
                .any(|(i, k, _)| Rc::ptr_eq(i, inst) && k == key)
            {
                touched.push((inst.clone(), key.clone(), old.clone()));
            }
        }
        for (inst, key, old) in touched {
            let in_a = journal_a
                .iter()
                .position(|(i, k, _)| Rc::ptr_eq(i, &inst) && *k == key);
            let value_a = match in_a {
                Some(p) => attrs_a[p].clone(),
                None => old.clone(),
            };
            let in_b = journal_b
                .iter()
                .any(|(i, k, _)| Rc::ptr_eq(i, &inst) && *k == key);
            let value_b = if in_b {
                inst.attrs.borrow().get(&key).cloned()
            } else {
                old.clone()
            };
            let joined = match (value_a, value_b) {
                (Some(a), Some(b)) => Some(join_values(self, &a, &b)),
                (Some(v), None) | (None, Some(v)) => Some(super::join::optional(v)),
                (None, None) => None,
            };
            // The outer branch, if any, must be able to undo this too.
            if let Some(outer) = self.attr_journals.last_mut()
                && !outer
                    .iter()
                    .any(|(i, k, _)| Rc::ptr_eq(i, &inst) && *k == key)
            {
                outer.push((inst.clone(), key.clone(), old));
            }
            restore_attr(&inst, &key, joined);
        }
    }

    fn note_early(&mut self, flow: Flow) {
        if let Flow::Return(v) = flow {
            self.frame().early_returns.push(v);
        }
    }

    fn exec_for(&mut self, target: &Expr, iterable: Value, body: &[Stmt], orelse: &[Stmt]) -> Flow {
        match self.iterate(&iterable) {
            Some(items) => {
                for item in items.into_iter().take(MAX_LOOP_ITERATIONS) {
                    if self.out_of_budget() {
                        return Flow::Stop;
                    }
                    self.assign(target, item, BindingKind::For);
                    match self.exec_block(body) {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => return Flow::Normal,
                        other => return other,
                    }
                }
                self.exec_block(orelse)
            }
            None => {
                // An iterable we cannot enumerate: the body may run any number
                // of times. Run it twice (to let values flow around the loop
                // once) and join with the state of running it not at all.
                let before = self.snapshot_locals();
                let element = self.element_of(&iterable);
                self.unknown_loops += 1;
                for _ in 0..2 {
                    self.assign(target, element.clone(), BindingKind::For);
                    match self.exec_block(body) {
                        Flow::Normal | Flow::Continue | Flow::Break => {}
                        Flow::Return(v) => {
                            self.frame().early_returns.push(v);
                            break;
                        }
                        Flow::Stop => break,
                    }
                }
                self.unknown_loops -= 1;
                let after = self.snapshot_locals();
                let joined = self.join_locals(before, after);
                self.restore_locals(joined);
                let _ = self.exec_block(orelse);
                Flow::Normal
            }
        }
    }

    fn exec_while(&mut self, test: &Expr, body: &[Stmt], orelse: &[Stmt]) -> Flow {
        for _ in 0..MAX_LOOP_ITERATIONS {
            if self.out_of_budget() {
                return Flow::Stop;
            }
            let cond = self.eval(test);
            match self.truth(&cond) {
                Some(false) => return self.exec_block(orelse),
                Some(true) => match self.exec_block(body) {
                    Flow::Normal | Flow::Continue => {}
                    Flow::Break => return Flow::Normal,
                    other => return other,
                },
                None => {
                    let before = self.snapshot_locals();
                    let flow = self.exec_block(body);
                    let after = self.snapshot_locals();
                    let joined = self.join_locals(before, after);
                    self.restore_locals(joined);
                    if let Flow::Return(v) = flow {
                        self.frame().early_returns.push(v);
                    }
                    return Flow::Normal;
                }
            }
        }
        Flow::Normal
    }

    fn exec_with(&mut self, items: &[ast::WithItem], body: &[Stmt]) -> Flow {
        let saved = self.mode;
        for item in items {
            let ctx = self.eval(&item.context);
            if let Value::FakeMode {
                id,
                allow_non_fake_inputs,
            } = &ctx
            {
                self.mode = ModeState {
                    fake: true,
                    id: *id,
                    allow_non_fake_inputs: *allow_non_fake_inputs,
                    user_mode: true,
                };
            }
            if let Some(target) = &item.target {
                self.assign(target, ctx, BindingKind::With);
            }
        }
        let flow = self.exec_block(body);
        self.mode = saved;
        flow
    }

    /// Learn from `assert` what the user states as fact.
    fn assume(&mut self, test: &Expr) {
        if let ExprKind::Compare {
            left,
            ops,
            comparators,
        } = &test.kind
            && ops.len() == 1
            && ops[0] == ast::CmpOp::Eq
        {
            // `assert a % b == 0` records divisibility; `assert a == b` unifies.
            if let ExprKind::BinOp {
                left: a,
                op: ast::BinOp::Mod,
                right: b,
            } = &left.kind
                && matches!(comparators[0].kind, ExprKind::Int(0))
            {
                let (va, vb) = (self.eval(a), self.eval(b));
                if let (Some(da), Some(db)) = (self.as_dim(&va), self.as_dim(&vb)) {
                    self.env.assume_divisible(&da, &db);
                }
                return;
            }
            let (va, vb) = (self.eval(left), self.eval(&comparators[0]));
            if let (Value::Int(da), Value::Int(db)) = (&va, &vb) {
                let _ = self.env.unify(da, db);
            }
            return;
        }
        let _ = self.eval(test);
    }

    pub(crate) fn make_function(
        &mut self,
        def: Rc<ast::FunctionDef>,
        owner: Option<Rc<Class>>,
    ) -> Rc<Function> {
        let closure = if self.frame().is_module {
            None
        } else {
            Some(self.frame().locals.clone())
        };
        let defaults = def
            .params
            .iter()
            .map(|p| p.default.as_ref().map(|d| self.eval(d)))
            .collect();
        Rc::new(Function {
            def,
            closure,
            owner: owner.as_ref().map(Rc::downgrade),
            defaults,
        })
    }

    fn define_class(&mut self, def: Rc<ast::ClassDef>) {
        let bases: Vec<Value> = def.bases.iter().map(|b| self.eval(b)).collect();
        let is_dataclass = def.decorators.iter().any(|d| {
            let text = self.text(&d.range);
            text.contains("dataclass")
        });
        let class = Rc::new(Class {
            name: Rc::from(def.name.id.as_str()),
            def: Some(def.clone()),
            bases,
            attrs: RefCell::new(FxHashMap::default()),
            is_dataclass,
        });
        // The class body runs in a scope of its own; its names become class attributes.
        let scope = Rc::new(RefCell::new(FxHashMap::default()));
        self.frames.push(super::Frame {
            locals: scope.clone(),
            closure: None,
            function: None,
            early_returns: Vec::new(),
            is_module: false,
            lists_unsure: false,
        });
        for stmt in &def.body {
            match &stmt.kind {
                StmtKind::FunctionDef(f) => {
                    let function = self.make_function(f.clone(), Some(class.clone()));
                    let function = Rc::new(Function {
                        closure: None,
                        ..(*function).clone()
                    });
                    let mut value = Value::Function(function);
                    if f.decorators
                        .iter()
                        .any(|d| matches!(&d.kind, ExprKind::Name(n) if n == "property"))
                    {
                        value =
                            Value::Tuple(Rc::new(vec![Value::Str(Rc::from("@property")), value]));
                    } else if f
                        .decorators
                        .iter()
                        .any(|d| matches!(&d.kind, ExprKind::Name(n) if n == "staticmethod"))
                    {
                        value = Value::Tuple(Rc::new(vec![
                            Value::Str(Rc::from("@staticmethod")),
                            value,
                        ]));
                    } else if f
                        .decorators
                        .iter()
                        .any(|d| matches!(&d.kind, ExprKind::Name(n) if n == "classmethod"))
                    {
                        value = Value::Tuple(Rc::new(vec![
                            Value::Str(Rc::from("@classmethod")),
                            value,
                        ]));
                    }
                    scope
                        .borrow_mut()
                        .insert(Rc::from(f.name.id.as_str()), value);
                }
                _ => {
                    let _ = self.exec_stmt(stmt);
                }
            }
        }
        self.frames.pop();
        self.epoch += 1;
        *class.attrs.borrow_mut() = scope.borrow().clone();
        self.bind_name(&def.name.id, Value::Class(class.clone()));
        if self.frame().is_module {
            self.classes.push(class);
        }
    }

    /// Whether `value` is a known `True`/`False`.
    pub(crate) fn truth(&mut self, value: &Value) -> Option<bool> {
        match value {
            Value::Bool(b) => *b,
            Value::None => Some(false),
            Value::Int(d) => d.as_const().map(|n| n != 0),
            Value::Float(f) => f.map(|f| f != 0.0),
            Value::Str(s) => Some(!s.is_empty()),
            Value::Tuple(items) => Some(!items.is_empty()),
            Value::List(items) => Some(!items.borrow().is_empty()),
            Value::Layer(_)
            | Value::Instance(_)
            | Value::Class(_)
            | Value::Function(_)
            | Value::Device(_) => Some(true),
            _ => None,
        }
    }

    /// A dim from an int-like value (`Opaque` values become named symbols).
    pub(crate) fn as_dim(&mut self, value: &Value) -> Option<Dim> {
        match value {
            Value::Int(d) => Some(d.clone()),
            Value::Bool(Some(b)) => Some(Dim::konst(*b as i64)),
            Value::Opaque(name) => Some(self.opaque_symbol(name)),
            _ => None,
        }
    }

    pub(crate) fn opaque_symbol(&mut self, name: &Rc<str>) -> Dim {
        if let Some(d) = self.opaque_syms.get(name) {
            return d.clone();
        }
        let d = self.env.symbol(name);
        self.opaque_syms.insert(name.clone(), d.clone());
        d
    }
}

fn restore_attr(inst: &Rc<crate::value::Instance>, key: &Rc<str>, value: Option<Value>) {
    let mut attrs = inst.attrs.borrow_mut();
    match value {
        Some(v) => {
            attrs.insert(key.clone(), v);
        }
        None => {
            attrs.remove(key);
        }
    }
}

/// `if __name__ == "__main__":`
fn is_main_guard(test: &Expr) -> bool {
    if let ExprKind::Compare {
        left,
        ops,
        comparators,
    } = &test.kind
        && ops.len() == 1
        && ops[0] == ast::CmpOp::Eq
    {
        let is_name = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == "__name__");
        let is_main = |e: &Expr| matches!(&e.kind, ExprKind::Str(s) if s == "__main__");
        return (is_name(left) && is_main(&comparators[0]))
            || (is_main(left) && is_name(&comparators[0]));
    }
    false
}
