//! Expressions: names, literals, operators, attributes, subscripts, containers.

use std::cell::RefCell;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{self, BinOp, CmpOp, Expr, ExprKind, TextRange, UnaryOp};

use super::{Interp, MAX_EXPR_DEPTH, MAX_LOOP_ITERATIONS, join_values};
use crate::report::BindingKind;
use crate::rules;
use crate::value::{DType, Device, Value};

/// Python built-ins the interpreter models; any other global name is unknown.
const BUILTINS: &[&str] = &[
    "len",
    "range",
    "int",
    "float",
    "bool",
    "str",
    "min",
    "max",
    "sum",
    "abs",
    "round",
    "print",
    "isinstance",
    "list",
    "tuple",
    "dict",
    "set",
    "zip",
    "enumerate",
    "super",
    "getattr",
    "hasattr",
    "setattr",
    "reversed",
    "sorted",
    "any",
    "all",
    "map",
    "type",
    "divmod",
    "pow",
    "iter",
    "next",
    "callable",
    "id",
    "hash",
    "repr",
    "object",
    "Exception",
    "ValueError",
    "RuntimeError",
    "NotImplementedError",
    "TypeError",
    "KeyError",
    "AssertionError",
    "IndexError",
];

impl Interp<'_> {
    pub(crate) fn eval(&mut self, e: &Expr) -> Value {
        if !self.tick() || self.expr_depth > MAX_EXPR_DEPTH {
            self.cuts += 1;
            return Value::Unknown;
        }
        let v = self.eval_maybe_none(e);
        // A value that may be None is used as what it is when it is not:
        // only an `is None` test sees the difference (`eval_maybe_none`).
        let v = match v {
            Value::Optional(inner) => *inner,
            v => v,
        };
        if let Value::Tensor(t) = &v {
            self.recorder.expression(e.range.clone(), t.clone());
        }
        v
    }

    /// Evaluate without unwrapping a value that may be None.
    fn eval_maybe_none(&mut self, e: &Expr) -> Value {
        if !self.tick() || self.expr_depth > MAX_EXPR_DEPTH {
            self.cuts += 1;
            return Value::Unknown;
        }
        self.expr_depth += 1;
        let v = self.eval_inner(e);
        self.expr_depth -= 1;
        v
    }

    fn eval_inner(&mut self, e: &Expr) -> Value {
        match &e.kind {
            ExprKind::Name(name) => match self.lookup(name) {
                Some(v) => v,
                None if BUILTINS.contains(&name.as_str()) => {
                    Value::Path(Rc::from(format!("builtins.{name}")))
                }
                None => Value::Unknown,
            },
            ExprKind::Int(n) => Value::int(*n),
            ExprKind::Float(f) => Value::Float(Some(*f)),
            ExprKind::Str(s) => Value::Str(Rc::from(s.as_str())),
            ExprKind::FString => Value::Str(Rc::from("")),
            ExprKind::Bool(b) => Value::Bool(Some(*b)),
            ExprKind::NoneLit => Value::None,
            ExprKind::Ellipsis => Value::Ellipsis,
            ExprKind::Attribute { value, attr } => {
                let object = self.eval(value);
                self.get_attr(&object, &attr.id, e.range.clone())
            }
            ExprKind::Subscript { value, index } => {
                let object = self.eval(value);
                let indices: Vec<Value> = index.iter().map(|i| self.eval(i)).collect();
                self.get_item(&object, indices, e.range.clone())
            }
            ExprKind::Slice { lower, upper, step } => {
                let mut part =
                    |p: &Option<Box<Expr>>| p.as_ref().map(|x| self.eval(x)).unwrap_or(Value::None);
                let (l, u, s) = (part(lower), part(upper), part(step));
                Value::Slice(Box::new(l), Box::new(u), Box::new(s))
            }
            ExprKind::Call { func, args } => self.eval_call(e, func, args),
            ExprKind::BinOp { left, op, right } => {
                let a = self.eval(left);
                let b = self.eval(right);
                self.binop(
                    *op,
                    a,
                    b,
                    e.range.clone(),
                    left.range.clone(),
                    right.range.clone(),
                )
            }
            ExprKind::UnaryOp { op, operand } => {
                let v = self.eval(operand);
                self.unary(*op, v, e.range.clone())
            }
            ExprKind::BoolOp { op, values } => self.eval_boolop(*op, values),
            ExprKind::Compare {
                left,
                ops,
                comparators,
            } => self.eval_compare(e, left, ops, comparators),
            ExprKind::IfExp { test, body, orelse } => {
                let cond = self.eval(test);
                match self.truth(&cond) {
                    Some(true) => self.eval(body),
                    Some(false) => self.eval(orelse),
                    None => {
                        let a = self.eval(body);
                        let b = self.eval(orelse);
                        join_values(self, &a, &b)
                    }
                }
            }
            ExprKind::Tuple(items) => Value::tuple(self.eval_items(items)),
            ExprKind::List(items) => Value::list(self.eval_items(items)),
            ExprKind::Set(items) => {
                let _ = self.eval_items(items);
                Value::Unknown
            }
            ExprKind::Dict(entries) => {
                let mut out = Vec::new();
                for (k, v) in entries {
                    let value = self.eval(v);
                    match k {
                        Some(k) => {
                            let key = self.eval(k);
                            out.push((key, value));
                        }
                        None => {
                            if let Value::Dict(d) = value {
                                out.extend(d.borrow().iter().cloned());
                            }
                        }
                    }
                }
                Value::Dict(Rc::new(RefCell::new(out)))
            }
            ExprKind::Comprehension {
                kind,
                elt,
                generators,
            } => {
                let mut items = Vec::new();
                let complete = self.comprehend(generators, &mut |this| {
                    let v = this.eval(elt);
                    items.push(v);
                });
                match (kind, complete) {
                    (ast::ComprehensionKind::Set, _) => Value::Unknown,
                    (_, true) => Value::list(items),
                    (_, false) => Value::Unknown,
                }
            }
            ExprKind::DictComp {
                key,
                value,
                generators,
            } => {
                let mut items = Vec::new();
                let complete = self.comprehend(generators, &mut |this| {
                    let k = this.eval(key);
                    let v = this.eval(value);
                    items.push((k, v));
                });
                if complete {
                    Value::Dict(Rc::new(RefCell::new(items)))
                } else {
                    Value::Unknown
                }
            }
            ExprKind::Lambda { params, body } => {
                let def = ast::FunctionDef {
                    name: ast::Name {
                        id: "<lambda>".into(),
                        range: e.range.clone(),
                    },
                    params: params.clone(),
                    returns: None,
                    body: vec![ast::Stmt {
                        range: body.range.clone(),
                        kind: ast::StmtKind::Return(Some((**body).clone())),
                    }],
                    decorators: Vec::new(),
                    is_async: false,
                    range: e.range.clone(),
                };
                let f = self.make_function(Rc::new(def), None);
                Value::Function(f)
            }
            ExprKind::Starred(inner) | ExprKind::DoubleStarred(inner) | ExprKind::Await(inner) => {
                self.eval(inner)
            }
            ExprKind::NamedExpr { target, value } => {
                let v = self.eval(value);
                self.bind_name(&target.id, v.clone());
                v
            }
            ExprKind::Unknown => Value::Unknown,
        }
    }

    fn eval_items(&mut self, items: &[Expr]) -> Vec<Value> {
        let mut out = Vec::new();
        for item in items {
            if let ExprKind::Starred(inner) = &item.kind {
                let v = self.eval(inner);
                match self.iterate(&v) {
                    Some(vs) => out.extend(vs),
                    None => out.push(Value::Unknown),
                }
            } else {
                out.push(self.eval(item));
            }
        }
        out
    }

    /// Run `body` once per element of the comprehension's generators, in a
    /// scope of its own. Returns false when some iterable was not enumerable.
    fn comprehend(
        &mut self,
        generators: &[ast::Comprehension],
        body: &mut dyn FnMut(&mut Self),
    ) -> bool {
        let saved = self.snapshot_locals();
        let complete = self.comprehend_level(generators, body);
        self.restore_locals(saved);
        complete
    }

    fn comprehend_level(
        &mut self,
        generators: &[ast::Comprehension],
        body: &mut dyn FnMut(&mut Self),
    ) -> bool {
        let Some((first, rest)) = generators.split_first() else {
            body(self);
            return true;
        };
        let iterable = self.eval(&first.iter);
        let Some(items) = self.iterate(&iterable) else {
            // Still evaluate once so hover and diagnostics see the element expression.
            let element = self.element_of(&iterable);
            self.assign(&first.target, element, BindingKind::For);
            let _ = self.comprehend_level(rest, body);
            return false;
        };
        let mut complete = true;
        for item in items.into_iter().take(MAX_LOOP_ITERATIONS) {
            if self.out_of_budget() {
                return false;
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
                complete &= self.comprehend_level(rest, body);
            }
        }
        complete
    }

    fn eval_boolop(&mut self, op: ast::BoolOp, values: &[Expr]) -> Value {
        let mut last = Value::Unknown;
        let mut undecided: Option<Value> = None;
        for (i, e) in values.iter().enumerate() {
            let v = self.eval(e);
            let t = self.truth(&v);
            let is_last = i + 1 == values.len();
            let decided = match (op, t) {
                (ast::BoolOp::Or, Some(true)) | (ast::BoolOp::And, Some(false)) => true,
                (_, None) if !is_last => {
                    undecided = Some(match undecided {
                        Some(u) => join_values(self, &u, &v),
                        None => v.clone(),
                    });
                    false
                }
                _ => false,
            };
            last = v;
            if decided {
                break;
            }
        }
        match undecided {
            Some(u) => join_values(self, &u, &last),
            None => last,
        }
    }

    fn eval_compare(
        &mut self,
        e: &Expr,
        left: &Expr,
        ops: &[CmpOp],
        comparators: &[Expr],
    ) -> Value {
        // `x is None` must see whether `x` may be None.
        let identity = ops.iter().all(|op| matches!(op, CmpOp::Is | CmpOp::IsNot));
        let mut lhs = if identity {
            self.eval_maybe_none(left)
        } else {
            self.eval(left)
        };
        let mut result = Value::Bool(Some(true));
        for (op, rhs_e) in ops.iter().zip(comparators) {
            let rhs = if identity {
                self.eval_maybe_none(rhs_e)
            } else {
                self.eval(rhs_e)
            };
            let v = self.compare(*op, &lhs, &rhs, e.range.clone());
            result = match (&result, &v) {
                (Value::Bool(Some(true)), _) => v,
                (Value::Tensor(_), _) | (_, Value::Tensor(_)) => v,
                (Value::Bool(Some(false)), _) => result,
                _ => Value::Bool(None),
            };
            lhs = rhs;
        }
        result
    }

    fn compare(&mut self, op: CmpOp, a: &Value, b: &Value, range: TextRange) -> Value {
        if matches!(a, Value::Tensor(_)) || matches!(b, Value::Tensor(_)) {
            if matches!(op, CmpOp::Is | CmpOp::IsNot) {
                return Value::Bool(Some(matches!(op, CmpOp::IsNot)));
            }
            if matches!(op, CmpOp::In | CmpOp::NotIn) {
                return Value::Bool(None);
            }
            return rules::compare_op(self, a, b, range);
        }
        let answer: Option<bool> = match op {
            CmpOp::Is | CmpOp::IsNot => {
                let same = match (a, b) {
                    (Value::Optional(_), Value::None) | (Value::None, Value::Optional(_)) => None,
                    (Value::None, Value::None) => Some(true),
                    (Value::None, Value::Unknown | Value::Opaque(_))
                    | (Value::Unknown | Value::Opaque(_), Value::None) => None,
                    (Value::None, _) | (_, Value::None) => Some(false),
                    (Value::Bool(Some(x)), Value::Bool(Some(y))) => Some(x == y),
                    _ => None,
                };
                same.map(|s| if op == CmpOp::Is { s } else { !s })
            }
            CmpOp::Eq | CmpOp::NotEq => {
                let eq = self.values_equal(a, b);
                eq.map(|s| if op == CmpOp::Eq { s } else { !s })
            }
            CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE => {
                let num = |v: &Value| match v {
                    Value::Int(d) => d.as_const().map(|n| n as f64),
                    Value::Float(f) => *f,
                    Value::Bool(Some(b)) => Some(*b as i64 as f64),
                    _ => None,
                };
                match (num(a), num(b)) {
                    (Some(x), Some(y)) => Some(match op {
                        CmpOp::Lt => x < y,
                        CmpOp::LtE => x <= y,
                        CmpOp::Gt => x > y,
                        _ => x >= y,
                    }),
                    _ => None,
                }
            }
            CmpOp::In | CmpOp::NotIn => {
                let found = match b {
                    Value::Tuple(_) | Value::List(_) => {
                        let items = b.items().unwrap_or_default();
                        let mut any_unknown = false;
                        let mut found = false;
                        for item in &items {
                            match self.values_equal(a, item) {
                                Some(true) => found = true,
                                None => any_unknown = true,
                                _ => {}
                            }
                        }
                        if found {
                            Some(true)
                        } else if any_unknown {
                            None
                        } else {
                            Some(false)
                        }
                    }
                    Value::Dict(d) => {
                        let keys: Vec<Value> = d.borrow().iter().map(|(k, _)| k.clone()).collect();
                        let mut r = Some(false);
                        for k in &keys {
                            match self.values_equal(a, k) {
                                Some(true) => {
                                    r = Some(true);
                                    break;
                                }
                                None => r = None,
                                _ => {}
                            }
                        }
                        r
                    }
                    Value::Str(s) => match a {
                        Value::Str(x) => Some(s.contains(&**x)),
                        _ => None,
                    },
                    _ => None,
                };
                found.map(|f| if op == CmpOp::In { f } else { !f })
            }
        };
        Value::Bool(answer)
    }

    /// Python `==` on values the analysis knows; `None` when undecidable.
    pub(crate) fn values_equal(&mut self, a: &Value, b: &Value) -> Option<bool> {
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => {
                if self.env.known_equal(x, y) {
                    Some(true)
                } else if self.env.known_different(x, y) {
                    Some(false)
                } else {
                    None
                }
            }
            (Value::Int(x), Value::Float(Some(f))) | (Value::Float(Some(f)), Value::Int(x)) => {
                self.env.value(x).map(|n| n as f64 == *f)
            }
            (Value::Float(Some(x)), Value::Float(Some(y))) => Some(x == y),
            (Value::Str(x), Value::Str(y)) => Some(x == y),
            (Value::Bool(Some(x)), Value::Bool(Some(y))) => Some(x == y),
            (Value::None, Value::None) => Some(true),
            (
                Value::None,
                Value::Int(_) | Value::Str(_) | Value::Bool(Some(_)) | Value::Float(Some(_)),
            ) => Some(false),
            (
                Value::Int(_) | Value::Str(_) | Value::Bool(Some(_)) | Value::Float(Some(_)),
                Value::None,
            ) => Some(false),
            (Value::Str(_), Value::Int(_)) | (Value::Int(_), Value::Str(_)) => Some(false),
            (Value::Device(x), Value::Device(y)) => {
                if *x == Device::CudaOrCpu || *y == Device::CudaOrCpu {
                    None
                } else {
                    Some(x == y)
                }
            }
            (Value::DType(x), Value::DType(y)) => Some(x == y),
            (Value::Tuple(_) | Value::List(_), Value::Tuple(_) | Value::List(_)) => {
                let (xs, ys) = (a.items()?, b.items()?);
                if xs.len() != ys.len() {
                    return Some(false);
                }
                let mut all = Some(true);
                for (x, y) in xs.iter().zip(&ys) {
                    match self.values_equal(x, y) {
                        Some(false) => return Some(false),
                        None => all = None,
                        _ => {}
                    }
                }
                all
            }
            _ => None,
        }
    }

    pub(crate) fn binop(
        &mut self,
        op: BinOp,
        a: Value,
        b: Value,
        range: TextRange,
        left: TextRange,
        right: TextRange,
    ) -> Value {
        if matches!(a, Value::Tensor(_)) || matches!(b, Value::Tensor(_)) {
            return rules::binary_op(self, op, &a, &b, range, left, right);
        }
        let a = self.intify(a);
        let b = self.intify(b);
        match (&a, &b) {
            (Value::Int(x), Value::Int(y)) => match op {
                BinOp::Add => Value::Int(self.bounded(x.add(y))),
                BinOp::Sub => Value::Int(self.bounded(x.sub(y))),
                BinOp::Mul => Value::Int(self.bounded(x.mul(y))),
                BinOp::FloorDiv => match x.floordiv(y) {
                    Some(d) => Value::Int(self.bounded(d)),
                    None => Value::Unknown,
                },
                BinOp::Mod => match x.modulo(y) {
                    Some(d) => Value::Int(self.bounded(d)),
                    None => Value::Unknown,
                },
                BinOp::Div => match (x.as_const(), y.as_const()) {
                    (Some(p), Some(q)) if q != 0 => Value::Float(Some(p as f64 / q as f64)),
                    _ => Value::Float(None),
                },
                BinOp::Pow => match (x.as_const(), y.as_const()) {
                    (Some(p), Some(q)) if (0..=62).contains(&q) => match p.checked_pow(q as u32) {
                        Some(v) => Value::int(v),
                        None => Value::Unknown,
                    },
                    (Some(_), Some(_)) => Value::Float(None),
                    (_, Some(2)) => Value::Int(self.bounded(x.mul(x))),
                    _ => Value::Unknown,
                },
                BinOp::LShift | BinOp::RShift | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                    match (x.as_const(), y.as_const()) {
                        (Some(p), Some(q)) => Value::int(match op {
                            BinOp::LShift if (0..63).contains(&q) => p << q,
                            BinOp::RShift if (0..63).contains(&q) => p >> q,
                            BinOp::BitAnd => p & q,
                            BinOp::BitOr => p | q,
                            BinOp::BitXor => p ^ q,
                            _ => return Value::Unknown,
                        }),
                        _ => Value::Unknown,
                    }
                }
                BinOp::MatMul => Value::Unknown,
            },
            (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                let num = |v: &Value| match v {
                    Value::Int(d) => d.as_const().map(|n| n as f64),
                    Value::Float(f) => *f,
                    _ => None,
                };
                match (num(&a), num(&b)) {
                    (Some(x), Some(y)) => Value::Float(match op {
                        BinOp::Add => Some(x + y),
                        BinOp::Sub => Some(x - y),
                        BinOp::Mul => Some(x * y),
                        BinOp::Div if y != 0.0 => Some(x / y),
                        BinOp::FloorDiv if y != 0.0 => Some((x / y).floor()),
                        BinOp::Pow => Some(x.powf(y)),
                        _ => None,
                    }),
                    _ => Value::Float(None),
                }
            }
            (Value::Str(x), Value::Str(y)) if op == BinOp::Add => {
                Value::Str(Rc::from(format!("{x}{y}")))
            }
            (Value::Str(_), _) if op == BinOp::Mod => Value::Str(Rc::from("")),
            (Value::Tuple(_) | Value::List(_), Value::Tuple(_) | Value::List(_))
                if op == BinOp::Add =>
            {
                let mut items = a.items().unwrap_or_default();
                items.extend(b.items().unwrap_or_default());
                if matches!(a, Value::List(_)) {
                    Value::list(items)
                } else {
                    Value::tuple(items)
                }
            }
            (Value::Tuple(_) | Value::List(_), Value::Int(n))
            | (Value::Int(n), Value::Tuple(_) | Value::List(_))
                if op == BinOp::Mul =>
            {
                let seq = if matches!(a, Value::Int(_)) { &b } else { &a };
                match n.as_const() {
                    Some(k) if (0..=4096).contains(&k) => {
                        let items = seq.items().unwrap_or_default();
                        let mut out = Vec::new();
                        for _ in 0..k {
                            out.extend(items.iter().cloned());
                        }
                        if matches!(seq, Value::List(_)) {
                            Value::list(out)
                        } else {
                            Value::tuple(out)
                        }
                    }
                    _ => Value::Unknown,
                }
            }
            _ => Value::Unknown,
        }
    }

    /// Opaque values and bools used in arithmetic act as ints.
    fn intify(&mut self, v: Value) -> Value {
        match &v {
            Value::Opaque(name) => Value::Int(self.opaque_symbol(name)),
            Value::Bool(Some(b)) => Value::int(*b as i64),
            _ => v,
        }
    }

    /// Keep symbolic expressions small: one that grew past the limit (a loop
    /// multiplying a size again and again) is replaced by an unknown size.
    pub(crate) fn bounded(&mut self, d: Dim) -> Dim {
        if d.size() > 48 {
            self.env.anonymous()
        } else {
            d
        }
    }

    fn unary(&mut self, op: UnaryOp, v: Value, range: TextRange) -> Value {
        match (op, &v) {
            (_, Value::Tensor(_)) => rules::unary_op(self, op, &v, range),
            (UnaryOp::Not, _) => Value::Bool(self.truth(&v).map(|b| !b)),
            (UnaryOp::Neg, Value::Int(d)) => Value::Int(d.neg()),
            (UnaryOp::Neg, Value::Float(f)) => Value::Float(f.map(|f| -f)),
            (UnaryOp::Pos, Value::Int(_) | Value::Float(_)) => v,
            (UnaryOp::Invert, Value::Int(d)) => match d.as_const() {
                Some(n) => Value::int(!n),
                None => Value::Unknown,
            },
            (UnaryOp::Neg, Value::Opaque(name)) => Value::Int(self.opaque_symbol(name).neg()),
            _ => Value::Unknown,
        }
    }

    pub(crate) fn get_attr(&mut self, object: &Value, attr: &str, range: TextRange) -> Value {
        match object {
            Value::Tensor(t) => rules::tensor_attr(self, object, t, attr, range),
            Value::Path(p) => path_attr(p, attr),
            Value::Opaque(name) => Value::Opaque(Rc::from(format!("{name}.{attr}"))),
            Value::Instance(inst) => self.instance_attr(object, inst, attr),
            Value::Class(class) => match super::call::class_lookup(class, attr) {
                Some(Value::Tuple(t))
                    if t.len() == 2 && matches!(&t[0], Value::Str(s) if s.starts_with('@')) =>
                {
                    t[1].clone()
                }
                Some(v) => v,
                None => Value::Unknown,
            },
            Value::Super(inst, class) => {
                for base in &class.bases {
                    if let Value::Class(base) = base
                        && let Some(Value::Function(f)) = super::call::class_lookup(base, attr)
                    {
                        return Value::BoundMethod(inst.clone(), f);
                    }
                }
                // A subclass of a torch layer (`class MyConv(nn.Conv1d)`):
                // the layer part lives in the instance as `__torch_layer__`.
                if let Some(base) = super::call::torch_layer_base(class) {
                    return Value::BuiltinMethod(
                        Box::new(Value::tuple(vec![(**inst).clone(), Value::Str(base)])),
                        Rc::from(format!("__super__.{attr}")),
                    );
                }
                Value::BuiltinMethod(Box::new(Value::None), Rc::from(attr))
            }
            Value::Layer(layer) => rules::nn::layer_attr(self, object, layer, attr),
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
                "itemsize" => Value::int(match d {
                    DType::Bool | DType::UInt8 | DType::Int8 => 1,
                    DType::Int16 | DType::Float16 | DType::BFloat16 => 2,
                    DType::Int32 | DType::Float32 => 4,
                    DType::Int64 | DType::Float64 | DType::Complex64 => 8,
                    DType::Complex128 => 16,
                }),
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
            Value::Tuple(_)
            | Value::List(_)
            | Value::Dict(_)
            | Value::Str(_)
            | Value::SizeOfVar(..)
            | Value::Int(_) => Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr)),
            Value::FakeMode { .. } => {
                Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr))
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
        match super::call::class_lookup(&inst.class, attr) {
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
                        0..0,
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
                if let Some(Value::Layer(layer)) = layer {
                    return rules::nn::layer_attr(self, &Value::Layer(layer.clone()), &layer, attr);
                }
                if super::call::is_module_class(&inst.class) {
                    Value::BuiltinMethod(Box::new(object.clone()), Rc::from(attr))
                } else {
                    Value::Unknown
                }
            }
        }
    }

    pub(crate) fn set_attr(&mut self, object: &Value, attr: &str, value: Value) {
        self.epoch += 1;
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
            let mut attrs = inst.attrs.borrow_mut();
            if !attrs.contains_key(attr) {
                inst.order.borrow_mut().push(key.clone());
            }
            attrs.insert(key, value);
        }
    }

    pub(crate) fn get_item(
        &mut self,
        object: &Value,
        index: Vec<Value>,
        range: TextRange,
    ) -> Value {
        match object {
            Value::Tensor(t) => rules::index::index_tensor(self, t, &index, range),
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
                    Some(i) if i < 0 && (-i) as usize <= suffix.len() => {
                        Value::Int(suffix[suffix.len() - (-i) as usize].clone())
                    }
                    Some(i) if i >= 0 && suffix.is_empty() => {
                        Value::Int(self.var_dim(*var, i, "x"))
                    }
                    _ => Value::Int(self.env.anonymous()),
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
                            _ => Value::Unknown,
                        },
                        Value::None => object.clone(),
                        _ => Value::Unknown,
                    }
                }
                _ => Value::Unknown,
            },
            Value::Layer(layer) => rules::nn::container_item(self, layer, &index),
            Value::Instance(_) => {
                let method = self.get_attr(object, "__getitem__", range.clone());
                match method {
                    Value::BoundMethod(..) => self.call_value(&method, index, Vec::new(), range),
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
        if matches!(object, Value::List(_) | Value::Dict(_)) {
            self.epoch += 1;
        }
        match object {
            Value::List(items) => {
                if let [Value::Int(d)] = index.as_slice()
                    && let Some(i) = d.as_const()
                {
                    let mut items = items.borrow_mut();
                    let n = items.len() as i64;
                    let i = if i < 0 { i + n } else { i };
                    if (0..n).contains(&i) {
                        items[i as usize] = value;
                    }
                }
            }
            Value::Dict(d) => {
                if let [key] = index.as_slice() {
                    let entries = d.borrow().clone();
                    for (i, (k, _)) in entries.iter().enumerate() {
                        if self.values_equal(k, key) == Some(true) {
                            d.borrow_mut()[i].1 = value;
                            return;
                        }
                    }
                    d.borrow_mut().push((key.clone(), value));
                }
            }
            Value::Tensor(t) => rules::index::index_put(self, t, &index, &value, range),
            _ => {}
        }
    }

    /// The elements of an iterable the analysis can enumerate.
    pub(crate) fn iterate(&mut self, value: &Value) -> Option<Vec<Value>> {
        match value {
            Value::Tuple(_) | Value::List(_) => value.items(),
            Value::Dict(d) => Some(d.borrow().iter().map(|(k, _)| k.clone()).collect()),
            Value::Range(start, stop, step) => {
                let (a, b, s) = (start.as_const()?, stop.as_const()?, step.as_const()?);
                if s == 0 {
                    return None;
                }
                let count = if s > 0 {
                    (b - a + s - 1).max(0) / s
                } else {
                    (a - b - s - 1).max(0) / -s
                };
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
            Value::Str(s) if s.len() <= MAX_LOOP_ITERATIONS => Some(
                s.chars()
                    .map(|c| Value::Str(Rc::from(c.to_string())))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// A value standing for any element of an iterable we cannot enumerate.
    pub(crate) fn element_of(&mut self, value: &Value) -> Value {
        match value {
            Value::Range(..) => Value::Int(self.env.anonymous()),
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

    /// Record a tensor (or a size) bound to a name, for hints and naming.
    pub(crate) fn record_binding(
        &mut self,
        name: &str,
        target: &Expr,
        value: &Value,
        kind: BindingKind,
    ) {
        match value {
            Value::Tensor(t) => {
                let t = Rc::new(crate::value::Tensor {
                    shape: self.resolve_shape(&t.shape),
                    ..(**t).clone()
                });
                self.recorder.binding(name, target.range.clone(), kind, t);
            }
            Value::Int(d) => self.recorder.scalar(name, target.range.clone(), d.clone()),
            Value::Unknown | Value::Opaque(_) => {
                self.recorder.unknown_binding(name, target.range.clone())
            }
            _ => {}
        }
    }
}

/// The value of `module.attr` for a module path.
fn path_attr(path: &str, attr: &str) -> Value {
    match (path, attr) {
        ("math", "pi") => return Value::Float(Some(std::f64::consts::PI)),
        ("math", "e") => return Value::Float(Some(std::f64::consts::E)),
        ("math", "inf") => return Value::Float(Some(f64::INFINITY)),
        _ => {}
    }
    if path == "torch" {
        if let Some(d) = DType::from_attr(attr) {
            return Value::DType(d);
        }
    }
    Value::Path(Rc::from(format!("{path}.{attr}")))
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
