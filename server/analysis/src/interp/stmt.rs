//! Statements: running a block, expression statements, `with`, `assert`,
//! definitions of functions and classes, imports (assignment is in
//! `assign`, branches and loops in `control`).

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{self, Expr, ExprKind, Stmt, StmtKind};

use super::{Flow, Interp, ModeState};
use crate::mutation::Shared;
use crate::report::BindingKind;
use crate::value::{Class, Function, Value};

impl Interp<'_> {
    pub(crate) fn exec_block(&mut self, body: &[Stmt]) -> Flow {
        for stmt in body {
            // What a statement assumes is void if an op of it fails.
            let mark = self.env.guard_mark();
            let outer = std::mem::replace(&mut self.stmt_guards, mark);
            let flow = self.exec_stmt(stmt);
            self.stmt_guards = outer;
            match flow {
                Flow::Normal => {}
                other => return other,
            }
        }
        Flow::Normal
    }

    fn exec_stmt(&mut self, stmt: &Stmt) -> Flow {
        if !self.tick_at(&stmt.range) {
            return Flow::Stop;
        }
        match &stmt.kind {
            StmtKind::Expr(e) => {
                // The receiver of an in-place view op, before the call.
                // An assert written as a call (`_assert(cond, msg)`) is
                // an assert: its message is never a tensor.
                if self.assert_call(e) {
                    return Flow::Normal;
                }
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
                if let (None, Some(value), [target]) = (annotation, value, targets.as_slice())
                    && self.assign_display(target, value)
                {
                    return Flow::Normal;
                }
                let v = match value {
                    Some(value) => self.eval(value),
                    None => return Flow::Normal,
                };
                let v = match (value, targets.as_slice()) {
                    (Some(value), [target]) => parsed_arguments(value, target)
                        .or_else(|| self.process_setting(value, target, &v))
                        .unwrap_or(v),
                    _ => v,
                };
                if let (Some(annotation), [target]) = (annotation, targets.as_slice())
                    && let ExprKind::Name(_) = &target.kind
                {
                    self.recorder
                        .annotation(&target.range, annotation.range.end);
                    if let Some(value) = value {
                        self.check_annotated(&annotation.range, &v, &value.range);
                    }
                }
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
                        stmt.range,
                        target.range,
                        value.range,
                    );
                    self.assign(target, result, BindingKind::AugAssign);
                    return Flow::Normal;
                }
                let result = self.binop(*op, current, rhs, stmt.range, target.range, value.range);
                self.assign(target, result, BindingKind::AugAssign);
                Flow::Normal
            }
            StmtKind::FunctionDef(def) => {
                let function = self.make_function(def.clone(), None);
                if !def.decorators.is_empty() {
                    self.note_custom_op(def, &function);
                }
                self.bind_name(&def.name.id, Value::Function(function.clone()));
                if self.frame().is_module && self.in_main_module() {
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
                if let Some(e) = value {
                    self.check_return(&v, &e.range);
                }
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
                let iterable = self.own_iterator(&iterable, iter.range).unwrap_or(iterable);
                self.note_unknown_loop(iter);
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
                // What the body raises, a handler catches: the path goes on.
                let raised_before = self.path_raised();
                let flow = self.exec_block(body);
                if !handlers.is_empty() {
                    self.restore_path_raised(raised_before);
                }
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
                self.exec_import(aliases, &stmt.range);
                Flow::Normal
            }
            StmtKind::ImportFrom { module, names } => {
                self.exec_import_from(module, names, &stmt.range);
                Flow::Normal
            }
            StmtKind::Assert { test, .. } => {
                self.assume(test);
                Flow::Normal
            }
            StmtKind::Raise(_) => Flow::Stop,
            StmtKind::Delete(targets) => {
                for t in targets {
                    match &t.kind {
                        ExprKind::Name(n) => {
                            self.touch_scope();
                            self.frame().locals.borrow_mut().remove(n.as_str());
                        }
                        ExprKind::Subscript { value, index } => {
                            let object = self.eval(value);
                            let index: Vec<Value> = index.iter().map(|i| self.eval(i)).collect();
                            self.delete_item(&object, index, t.range);
                        }
                        _ => {}
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
                e.range,
                crate::report::Code::DiscardedTo,
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
        self.epoch.bump();
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

    fn exec_with(&mut self, items: &[ast::WithItem], body: &[Stmt]) -> Flow {
        let saved = self.mode;
        let saved_defaults = self.defaults.clone();
        // `with pytest.raises(RuntimeError):` (or `self.assertRaises(...)`)
        // says the block is meant to fail: what torch would raise there is
        // the test passing, not a problem to show.
        let expected_failure = items
            .iter()
            .any(|item| self.expects_exception(&item.context));
        let reports_before = self.diagnostics.len();
        let raised_before: Vec<bool> = if expected_failure {
            self.frames.iter().map(|f| f.raised).collect()
        } else {
            Vec::new()
        };
        let path_raised_before = self.path_raised();
        for item in items {
            if self.enables_autocast(&item.context) {
                self.mode.autocast = true;
            }
            let ctx = self.eval(&item.context);
            // After the call: run as a plain function, the generator also
            // ran its `finally`, which put the old default back.
            self.forget_defaults_a_manager_sets(&item.context);
            // `with torch.device("cuda"):` makes factories default to it.
            if let Value::Device(device) = &ctx {
                self.defaults.device = Some(device.clone());
            }
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
                    autocast: self.mode.autocast,
                };
                self.enter_user_mode(*id, *allow_non_fake_inputs);
            }
            if let Some(target) = &item.target {
                self.assign(target, ctx, BindingKind::With);
            }
        }
        let flow = self.exec_block(body);
        self.mode = saved;
        self.defaults = saved_defaults;
        if expected_failure {
            // Dropped here rather than kept from being made, so that a call
            // remembered for reuse still holds the reports it makes.
            self.diagnostics.truncate(reports_before);
            // The test catches what torch raised: the code after the block
            // runs, and its problems are reported.
            for (frame, raised) in self.frames.iter_mut().zip(raised_before) {
                frame.raised = raised;
            }
            self.restore_path_raised(path_raised_before);
        }
        flow
    }

    /// A context manager of the user's that sets torch's default dtype or
    /// device (`with training.set_default_dtype(torch.bfloat16):`, a
    /// `@contextmanager` around `torch.set_default_dtype`) leaves them
    /// unknown in its block: the analysis does not run the generator to its
    /// `yield`, and float32 there would be a wrong dtype for every layer.
    fn forget_defaults_a_manager_sets(&mut self, context: &Expr) {
        let ExprKind::Call { func, .. } = &context.kind else {
            return;
        };
        let Value::Function(f) = self.eval(func) else {
            return;
        };
        let body = self.text(&f.def.range);
        if body.contains("set_default_dtype") || body.contains("set_default_tensor_type") {
            self.defaults.float = None;
        }
        if body.contains("set_default_device") || body.contains("set_default_tensor_type") {
            self.defaults.device = None;
        }
    }

    /// `with torch.autocast("cuda"):`, `torch.cuda.amp.autocast()`,
    /// `torch.amp.autocast(...)`, unless it says `enabled=False`.
    fn enables_autocast(&self, context: &Expr) -> bool {
        let ExprKind::Call { func, args } = &context.kind else {
            return false;
        };
        let callee = self.text(&func.range);
        let named = callee.rsplit('.').next() == Some("autocast");
        let disabled = args.iter().any(|a| {
            matches!(a, ast::Arg::Keyword(name, value)
                if name.id == "enabled" && matches!(value.kind, ExprKind::Bool(false)))
        });
        named && !disabled
    }

    /// Whether a `with` item is a test's assertion that its block raises:
    /// `pytest.raises(...)`, `raises(...)`, `self.assertRaises(...)`,
    /// `self.assertRaisesRegex(...)`.
    fn expects_exception(&self, context: &Expr) -> bool {
        let ExprKind::Call { func, .. } = &context.kind else {
            return false;
        };
        let callee = self.text(&func.range);
        let last = callee.rsplit('.').next().unwrap_or(callee);
        matches!(
            last,
            "raises" | "assertRaises" | "assertRaisesRegex" | "assertRaisesRegexp"
        )
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
        if crate::workspace::is_local(&def.range) && self.declares_generic(&def) {
            self.recorder.declare_generic(def.range);
        }
        Rc::new(Function {
            def,
            closure,
            module: Rc::downgrade(&self.frame().module),
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
            attrs: Shared::new(FxHashMap::default()),
            is_dataclass,
        });
        // The class body runs in a scope of its own; its names become class attributes.
        let scope = Rc::new(RefCell::new(FxHashMap::default()));
        let module = self.frame().module.clone();
        self.frames.push(super::Frame {
            locals: scope.clone(),
            module,
            closure: None,
            function: None,
            early_returns: Vec::new(),
            is_module: false,
            lists_unsure: false,
            raised: false,
            after_early_exits: 0,
            yields: Vec::new(),
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
        *class.attrs.write(&mut self.epoch) = scope.borrow().clone();
        self.bind_name(&def.name.id, Value::Class(class.clone()));
        if self.frame().is_module && self.in_main_module() {
            self.classes.push(class);
        }
    }

    /// Whether `value` is a known `True`/`False`.
    pub(crate) fn truth(&mut self, value: &Value) -> Option<bool> {
        match value {
            Value::Bool(b) => *b,
            Value::None => Some(false),
            Value::Int(d) => d.as_const().map(|n| n != 0).or_else(|| {
                let decided = self.env.range_of(d).and_then(|(lo, hi)| {
                    (lo > 0 || hi < 0 || (lo, hi) == (0, 0)).then_some(lo != 0 || hi != 0)
                });
                if decided.is_none() {
                    self.undecided_by_turn(&[d]);
                }
                decided
            }),
            Value::Float(f) => f.map(|f| f != 0.0),
            Value::Str(s) => Some(!s.is_empty()),
            Value::Tuple(items) => Some(!items.is_empty()),
            Value::List(items) => Some(!items.borrow().is_empty()),
            Value::Dict(entries) => Some(!entries.borrow().is_empty()),
            Value::Layer(_)
            | Value::Instance(_)
            | Value::Either(_)
            | Value::Module(_)
            | Value::Class(_)
            | Value::Function(_)
            | Value::Device(_) => Some(true),
            // `if TYPE_CHECKING:` blocks are for type checkers only.
            Value::Path(p) if p.ends_with("TYPE_CHECKING") => Some(false),
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
        // What this gives depends on whether an earlier call made the
        // symbol, which no call key says: another run cannot take the call.
        self.across_unstable();
        if let Some(d) = self.opaque_syms.get(name) {
            return d.clone();
        }
        let d = self.env.symbol(name);
        self.opaque_syms.insert(name.clone(), d.clone());
        d
    }

    /// `model_parallel_size = fs_init.get_model_parallel_world_size()` in a
    /// constructor: a setting of the process that a package outside the
    /// workspace gives, which the analysis cannot read but the code names.
    /// The name stands for the size, as the constructor's own parameters
    /// do (`n_heads // model_parallel_size` heads). Only a call without
    /// arguments: its value is the same for every object built, so one
    /// symbol may stand for it everywhere, where `lib.width(dim)` differs
    /// from one object to the next. Not an unknown of the user's own code
    /// either, which may be anything.
    fn process_setting(&mut self, value: &Expr, target: &Expr, v: &Value) -> Option<Value> {
        let ExprKind::Name(name) = &target.kind else {
            return None;
        };
        let ExprKind::Call { args, .. } = &value.kind else {
            return None;
        };
        (args.is_empty()
            && matches!(v, Value::Unknown)
            && self.last_outside_unknown == Some(value.range)
            && name != "_"
            && self.in_constructor())
        .then(|| Value::Opaque(Rc::from(name.as_str())))
    }
}

/// `args = parser.parse_args()` (or `args, rest = parser.parse_known_args()`):
/// the command line's values are nobody's to know, but they have names,
/// and sizes made from them are named so (`[args.batch_size, nz, 1, 1]`).
fn parsed_arguments(value: &Expr, target: &Expr) -> Option<Value> {
    let ExprKind::Call { func, .. } = &value.kind else {
        return None;
    };
    let ExprKind::Attribute { attr, .. } = &func.kind else {
        return None;
    };
    let known = match attr.id.as_str() {
        "parse_args" => false,
        "parse_known_args" => true,
        _ => return None,
    };
    match (&target.kind, known) {
        (ExprKind::Name(name), false) => Some(Value::Opaque(Rc::from(name.as_str()))),
        (ExprKind::Tuple(items) | ExprKind::List(items), true) => match items.as_slice() {
            [first, _] => match &first.kind {
                ExprKind::Name(name) => Some(Value::tuple(vec![
                    Value::Opaque(Rc::from(name.as_str())),
                    Value::Unknown,
                ])),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}
