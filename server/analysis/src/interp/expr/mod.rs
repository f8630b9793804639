//! Expressions: names, literals, operators, attributes, subscripts, containers.
//!
//! This file evaluates an expression by its kind; operators and comparisons,
//! attributes, subscripts, and iteration (with comprehensions) have files of
//! their own.

mod attributes;
mod iteration;
mod operators;
mod subscripts;

use std::rc::Rc;

use shapels_syntax::ast::{self, Expr, ExprKind, FStringPart};

use super::{Interp, MAX_EXPR_DEPTH, join_all};
use crate::mutation::Shared;
use crate::report::BindingKind;
use crate::rules::names::NameSet;
use crate::value::Value;
use iteration::Comprehended;

pub(crate) use iteration::range_len;
pub(crate) use subscripts::slice_indices;

/// Python built-ins the interpreter models; any other global name is unknown.
static BUILTINS: NameSet = NameSet::new(&[
    "len",
    "range",
    "int",
    "float",
    "complex",
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
]);

impl Interp<'_> {
    /// `builtins.{name}`, made once per run: code names `len` and `range`
    /// in every loop.
    fn builtin_path(&mut self, name: &str) -> Rc<str> {
        if let Some(path) = self.builtin_paths.get(name) {
            return path.clone();
        }
        let path: Rc<str> = Rc::from(format!("builtins.{name}"));
        self.builtin_paths.insert(name.to_string(), path.clone());
        path
    }

    pub(crate) fn eval(&mut self, e: &Expr) -> Value {
        // A value that may be None is used as what it is when it is not:
        // only an `is None` test sees the difference (`eval_maybe_none`),
        // and a user function it is passed to (`eval_passed`).
        match self.eval_passed(e) {
            Value::Optional(inner) => *inner,
            v => v,
        }
    }

    /// An argument of a call to the user's code: a value that may be None
    /// stays so, since the callee's own `is None` tests cannot decide it
    /// either; its expression shows what it is when given.
    pub(crate) fn eval_passed(&mut self, e: &Expr) -> Value {
        let v = self.eval_maybe_none(e);
        let given = match &v {
            Value::Optional(inner) => &**inner,
            v => v,
        };
        match given {
            Value::Tensor(t) => self.recorder.expression(e.range, t.clone()),
            Value::Instance(_) | Value::Layer(_) if self.summary.is_some() => {
                self.summary_seen(&e.range, given)
            }
            _ => {}
        }
        v
    }

    /// `Block` in `Block(dim)`, after `from layers import Block`: hover
    /// says where it is defined. Only the file's own global of that name
    /// is meant, not a local that shadows it.
    fn note_imported_name(&mut self, e: &Expr, name: &str, value: &Value) {
        if !self.in_main_module()
            || self.frame().locals.borrow().contains_key(name) && !self.frame().is_module
        {
            return;
        }
        if let Some((file, bound)) = self.imported_names.get(name).cloned() {
            self.note_definition(&e.range, value, Some((file, &bound)));
        }
    }

    /// Evaluate without unwrapping a value that may be None.
    fn eval_maybe_none(&mut self, e: &Expr) -> Value {
        if !self.tick_at(&e.range) || self.expr_depth > MAX_EXPR_DEPTH {
            self.cut_from(0);
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
                Some(v) => {
                    if self.recorder.expressions && !self.imported_names.is_empty() {
                        self.note_imported_name(e, name, &v);
                    }
                    v
                }
                None if BUILTINS.contains(name) => Value::Path(self.builtin_path(name)),
                None => Value::Unknown,
            },
            ExprKind::Int(n) => Value::int(*n),
            ExprKind::Float(f) => Value::Float(Some(*f)),
            ExprKind::Imaginary(_) => Value::Complex,
            ExprKind::Str(s) => Value::Str(Rc::from(s.as_str())),
            ExprKind::FString(parts) => self.format_string(parts),
            ExprKind::Bool(b) => Value::Bool(Some(*b)),
            ExprKind::NoneLit => Value::None,
            ExprKind::Ellipsis => Value::Ellipsis,
            ExprKind::Attribute { value, attr } => {
                let object = self.eval(value);
                let v = self.get_attr(&object, &attr.id, e.range);
                if let Value::Module(ns) = &object
                    && let Some(file) = ns.file.filter(|f| *f != 0)
                {
                    self.note_definition(&attr.range, &v, Some((file, &attr.id)));
                }
                v
            }
            ExprKind::Subscript { value, index } => {
                let object = self.eval(value);
                let indices: Vec<Value> = index.iter().map(|i| self.eval(i)).collect();
                if reads_sizes(value) {
                    self.check_size_index(&object, &indices, e.range);
                }
                self.get_item(&object, indices, e.range)
            }
            ExprKind::Slice { lower, upper, step } => {
                let mut part =
                    |p: &Option<Box<Expr>>| p.as_ref().map(|x| self.eval(x)).unwrap_or(Value::None);
                let (l, u, s) = (part(lower), part(upper), part(step));
                Value::Slice(Box::new(l), Box::new(u), Box::new(s))
            }
            ExprKind::Call { func, args } => self.eval_call(e, func, args),
            ExprKind::BinOp { .. } | ExprKind::UnaryOp { .. }
                if let Some(n) = literal_int(e, LITERAL_DEPTH) =>
            {
                // Python's int is exact: `2**63 - 1` is an `i64` although
                // `2**63` is not, so literal arithmetic is done in `i128`;
                // a result that still does not fit is an int of unknown size.
                match i64::try_from(n) {
                    Ok(n) => Value::int(n),
                    Err(_) => Value::Int(self.env.anonymous()),
                }
            }
            ExprKind::BinOp { left, op, right } => {
                let a = self.eval(left);
                let b = self.eval(right);
                if *op == ast::BinOp::Add
                    && let Some(open) = open_concat(&a, &b, right)
                {
                    return open;
                }
                self.binop(*op, a, b, e.range, left.range, right.range)
            }
            ExprKind::UnaryOp { op, operand } => {
                let v = self.eval(operand);
                self.unary(*op, v, e.range)
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
                    // Either side may be the one that runs: what only one
                    // side would raise is reported as a possibility, as for
                    // an undecided `if`.
                    None => {
                        self.uncertain += 1;
                        let a = self.run_alternative(|interp| interp.eval(body));
                        let b = self.run_alternative(|interp| interp.eval(orelse));
                        self.uncertain -= 1;
                        // A side torch refuses gives nothing (see `alternatives`).
                        self.join_working(vec![a, b])
                    }
                }
            }
            ExprKind::Tuple(items) | ExprKind::List(items)
                if matches!(items.first().map(|e| &e.kind), Some(ExprKind::Starred(_))) =>
            {
                self.eval_led_by_star(items, matches!(e.kind, ExprKind::List(_)))
            }
            ExprKind::Tuple(items) => self.eval_items(items).map_or(Value::Unknown, Value::tuple),
            ExprKind::List(items) => self.eval_items(items).map_or(Value::Unknown, Value::list),
            // A set is kept as the list of its distinct items, as `set(...)`
            // keeps it (`norm_layer in {BatchNormAct2d, GroupNormAct}`).
            ExprKind::Set(items) => match self.eval_items(items) {
                Some(items) => {
                    self.call_builtin("set", vec![Value::list(items)], Vec::new(), e.range)
                }
                None => Value::Unknown,
            },
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
                Value::Dict(Rc::new(Shared::new(out)))
            }
            ExprKind::Comprehension {
                kind,
                elt,
                generators,
            } => {
                let mut items = Vec::new();
                let ran = self.comprehend(generators, &mut |this| {
                    let v = this.eval(elt);
                    items.push(v);
                });
                match (kind, ran) {
                    (ast::ComprehensionKind::Set, Comprehended::All) => {
                        self.call_builtin("set", vec![Value::list(items)], Vec::new(), e.range)
                    }
                    (ast::ComprehensionKind::Set, _) => Value::Unknown,
                    (_, Comprehended::All) => Value::list(items),
                    // Run over an iterable of unknown length, the element was
                    // evaluated on a made-up item: it stands for all of them.
                    (_, Comprehended::Partly { count }) => match join_all(self, &items) {
                        Value::Unknown => Value::Unknown,
                        element => Value::Many(Rc::new(element), count),
                    },
                }
            }
            ExprKind::DictComp {
                key,
                value,
                generators,
            } => {
                let mut items = Vec::new();
                let ran = self.comprehend(generators, &mut |this| {
                    let k = this.eval(key);
                    let v = this.eval(value);
                    items.push((k, v));
                });
                if ran == Comprehended::All {
                    Value::Dict(Rc::new(Shared::new(items)))
                } else {
                    Value::Unknown
                }
            }
            ExprKind::Lambda { params, body } => {
                let def = ast::FunctionDef {
                    name: ast::Name {
                        id: "<lambda>".into(),
                        range: e.range,
                    },
                    params: params.clone(),
                    returns: None,
                    body: vec![ast::Stmt {
                        range: body.range,
                        kind: ast::StmtKind::Return(Some((**body).clone())),
                    }],
                    decorators: Vec::new(),
                    is_async: false,
                    is_generator: false,
                    range: e.range,
                };
                let f = self.make_function(Rc::new(def), None);
                Value::Function(f)
            }
            ExprKind::Starred(inner) | ExprKind::DoubleStarred(inner) | ExprKind::Await(inner) => {
                self.eval(inner)
            }
            ExprKind::Yield { value, from } => {
                let v = value.as_ref().map_or(Value::None, |e| self.eval(e));
                // `yield from items` gives each of them; of an iterable the
                // analysis cannot list, any element.
                let given = match (from, v.items()) {
                    (false, _) => vec![v],
                    (true, Some(items)) => items,
                    (true, None) => vec![self.element_of(&v)],
                };
                self.frame().yields.extend(given);
                // What the consumer sends back is not followed.
                Value::Unknown
            }
            ExprKind::NamedExpr { target, value } => {
                let v = self.eval(value);
                self.bind_name(&target.id, v.clone());
                v
            }
            ExprKind::Unknown => Value::Unknown,
        }
    }

    /// `(*batch, n)` where `batch` holds the leading sizes of a tensor of
    /// unknown rank (`*batch, c = x.shape`): those sizes, then `n`, as
    /// `x.shape[:-1] + (n,)` gives them. Other sequences as usual.
    fn eval_led_by_star(&mut self, items: &[Expr], list: bool) -> Value {
        let (Some(first), rest) = (items.first(), items.get(1..).unwrap_or_default()) else {
            return Value::Unknown;
        };
        let ExprKind::Starred(inner) = &first.kind else {
            return Value::Unknown;
        };
        let lead = self.eval(inner);
        self.led_by(lead, rest, list)
    }

    /// A display's value from its first item's, evaluated already (the
    /// sequence a starred first item spreads), and the items after it.
    pub(super) fn led_by(&mut self, lead: Value, rest: &[Expr], list: bool) -> Value {
        if let Value::SizeOfVar(var, suffix) = &lead {
            let mut dims = suffix.as_ref().clone();
            let mut known = true;
            for item in rest {
                let v = match &item.kind {
                    ExprKind::Starred(_) => {
                        known = false;
                        let _ = self.eval(item);
                        continue;
                    }
                    _ => self.eval(item),
                };
                match self.as_dim(&v) {
                    Some(d) if known => dims.push(d),
                    _ => known = false,
                }
            }
            return if known {
                Value::SizeOfVar(*var, Rc::new(dims))
            } else {
                Value::Unknown
            };
        }
        let head = self.iterate(&lead);
        let tail = self.eval_items(rest);
        let (Some(mut out), Some(tail)) = (head, tail) else {
            return Value::Unknown;
        };
        out.extend(tail);
        if list {
            Value::list(out)
        } else {
            Value::tuple(out)
        }
    }

    /// The items of a tuple or list display; `None` when a starred item's
    /// length is unknown (`(*x.shape[:-1], -1, d)` of a tensor of unknown
    /// rank), as then is the display's. Every item is evaluated either way.
    fn eval_items(&mut self, items: &[Expr]) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        let mut known = true;
        for item in items {
            if let ExprKind::Starred(inner) = &item.kind {
                let v = self.eval(inner);
                match self.iterate(&v) {
                    Some(vs) => out.extend(vs),
                    None => known = false,
                }
            } else {
                out.push(self.eval(item));
            }
        }
        known.then_some(out)
    }

    /// Record a tensor (or a size) bound to a name, for hints and naming.
    /// An f-string's value when every value it formats is known and plain
    /// (`f"stage{i}"`, names of layers made in a loop); a string of unknown
    /// text otherwise.
    /// Every value is evaluated either way, as Python does.
    fn format_string(&mut self, parts: &[FStringPart]) -> Value {
        let mut text = String::new();
        let mut known = true;
        for part in parts {
            match part {
                FStringPart::Text(t) => text.push_str(t),
                FStringPart::Value { value, plain } => {
                    let value = self.eval(value);
                    match crate::interp::call::strings::plain_text(&value) {
                        Some(s) if *plain => text.push_str(&s),
                        _ => known = false,
                    }
                }
            }
        }
        if known {
            Value::Str(Rc::from(text))
        } else {
            Value::Text
        }
    }

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
                self.recorder.binding(name, target.range, kind, t);
            }
            Value::Int(d) => self.recorder.scalar(name, target.range, d.clone(), false),
            // `model = Net()`, `self.block = Block(dim)`: hover on the name
            // summarises the module.
            Value::Instance(_) | Value::Layer(_) if self.summary.is_some() => {
                self.summary_seen(&target.range, value)
            }
            Value::Unknown | Value::Opaque(_) => {
                self.recorder.unknown_binding(name, target.range);
                if matches!(value, Value::Unknown) {
                    self.explain_unknown_binding(name, &target.range, kind);
                }
            }
            _ => {}
        }
    }
}

/// How deep `literal_int` looks into an expression.
const LITERAL_DEPTH: u32 = 32;

/// The value of an expression made only of int literals and integer
/// arithmetic (`2**63 - 1`, `-(2**63)`), computed exactly, or `None` (a
/// name, a float, a division, a result past `i128`, or nesting past
/// `depth`).
fn literal_int(e: &Expr, depth: u32) -> Option<i128> {
    use shapels_syntax::ast::{BinOp, UnaryOp};
    let depth = depth.checked_sub(1)?;
    match &e.kind {
        ExprKind::Int(n) => Some(i128::from(*n)),
        ExprKind::UnaryOp { op, operand } => {
            let v = literal_int(operand, depth)?;
            match op {
                UnaryOp::Neg => v.checked_neg(),
                UnaryOp::Pos => Some(v),
                UnaryOp::Invert => Some(!v),
                UnaryOp::Not => None,
            }
        }
        ExprKind::BinOp { left, op, right } => {
            let (a, b) = (literal_int(left, depth)?, literal_int(right, depth)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::FloorDiv if b != 0 => {
                    let q = a.checked_div(b)?;
                    Some(if a % b != 0 && (a < 0) != (b < 0) {
                        q - 1
                    } else {
                        q
                    })
                }
                BinOp::Mod if b != 0 => a.checked_rem(b).map(|r| {
                    if r != 0 && (r < 0) != (b < 0) {
                        r + b
                    } else {
                        r
                    }
                }),
                BinOp::Pow => a.checked_pow(u32::try_from(b).ok()?),
                BinOp::LShift => {
                    a.checked_mul(1i128 << u32::try_from(b).ok().filter(|&b| b < 126)?)
                }
                BinOp::RShift => Some(a >> u32::try_from(b).ok()?.min(127)),
                BinOp::BitAnd => Some(a & b),
                BinOp::BitOr => Some(a | b),
                BinOp::BitXor => Some(a ^ b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `tuple(inputs) + tuple(self.parameters())`: known items followed by a
/// sequence the analysis cannot read (`tuple(...)` or `list(...)` of an
/// unknown value, a list of unknown length) are a tuple open at its end,
/// whose known items stay readable (`args[:length]`). Only a sequence is
/// taken for one: `(1, 2) + x` of an unknown `x` may be a tensor.
fn open_concat(a: &Value, b: &Value, right: &Expr) -> Option<Value> {
    let known = match a {
        Value::OpenTuple(items) => return Some(Value::OpenTuple(items.clone())),
        Value::Tuple(_) | Value::List(_) => a.items()?,
        _ => return None,
    };
    let sequence = match b {
        Value::Many(..) | Value::OpenTuple(_) => true,
        Value::Unknown => matches!(
            &right.kind,
            ExprKind::Call { func, .. }
                if matches!(&func.kind, ExprKind::Name(n) if matches!(n.as_str(), "tuple" | "list"))
        ),
        _ => false,
    };
    let extra = match b {
        Value::OpenTuple(items) => items.as_ref().clone(),
        _ => Vec::new(),
    };
    (sequence && !known.is_empty()).then(|| {
        let mut items = known;
        items.extend(extra);
        Value::OpenTuple(Rc::new(items))
    })
}

/// Whether an expression reads a tensor's sizes as a tuple: `x.shape`,
/// `x.size()`. Other tuples of ints (`tuple(t.tolist())`) hold values
/// whose count the analysis may not know as surely.
fn reads_sizes(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Attribute { attr, .. } => attr.id.as_str() == "shape",
        ExprKind::Call { func, args } => {
            args.is_empty()
                && matches!(&func.kind, ExprKind::Attribute { attr, .. } if attr.id.as_str() == "size")
        }
        _ => false,
    }
}
