//! Operators on values: `and`/`or`, comparisons, `==`, arithmetic, and unary operators.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{self, BinOp, CmpOp, Expr, TextRange, UnaryOp};

use crate::interp::{Interp, join_all, join_values};
use crate::rules;
use crate::value::{Device, Value};

impl Interp<'_> {
    pub(super) fn eval_boolop(&mut self, op: ast::BoolOp, values: &[Expr]) -> Value {
        let mut last = Value::Unknown;
        let mut undecided: Option<Value> = None;
        // Whether every undecided operand before the last was a flag or a
        // value nothing is known of, named or not (`args.ema` of a parsed
        // command line).
        let mut only_flags = true;
        for (i, e) in values.iter().enumerate() {
            let v = self.eval(e);
            let t = self.truth(&v);
            let is_last = i + 1 == values.len();
            let decided = match (op, t) {
                (ast::BoolOp::Or, Some(true)) | (ast::BoolOp::And, Some(false)) => true,
                (_, None) if !is_last => {
                    // An undecided flag is the result only where it ends
                    // the evaluation: true for `or`, false for `and`. So
                    // `attn_last or layer is None` is true when the second
                    // is.
                    let picked = match &v {
                        Value::Bool(None) => Value::Bool(Some(op == ast::BoolOp::Or)),
                        v => v.clone(),
                    };
                    only_flags &= matches!(v, Value::Bool(_) | Value::Unknown | Value::Opaque(_));
                    undecided = Some(match undecided {
                        Some(u) => join_values(self, &u, &picked),
                        None => picked,
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
            // Where the evaluation stops at a flag that ends it (`False`
            // for `and`), every path gives a value of that truth: an
            // undecided operand is the result only where it ends the
            // evaluation too. So `args.ema and not exists(topk)` is false
            // wherever `topk` is given.
            Some(_)
                if only_flags
                    && matches!(last, Value::Bool(Some(b)) if b == (op == ast::BoolOp::Or)) =>
            {
                last
            }
            Some(u) => join_values(self, &u, &last),
            None => last,
        }
    }

    pub(super) fn eval_compare(
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
            let v = self.compare(*op, &lhs, &rhs, e.range);
            result = match (&result, &v) {
                (Value::Bool(Some(true)), _) => v,
                (Value::Tensor(_), _) | (_, Value::Tensor(_)) => v,
                (Value::Bool(Some(false)), _) => result,
                (Value::Unknown, _) | (_, Value::Unknown) => Value::Unknown,
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
            return rules::compare_op(self, op, a, b, range);
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
                    // The turn of a loop run all at once against a size:
                    // decided when every turn decides it alike.
                    _ => match (a, b) {
                        (Value::Int(x), Value::Int(y)) => {
                            let decided =
                                self.env.range_of(&x.sub(y)).and_then(|(lo, hi)| match op {
                                    CmpOp::Lt if hi < 0 || lo >= 0 => Some(hi < 0),
                                    CmpOp::LtE if hi <= 0 || lo > 0 => Some(hi <= 0),
                                    CmpOp::Gt if lo > 0 || hi <= 0 => Some(lo > 0),
                                    CmpOp::GtE if lo >= 0 || hi < 0 => Some(lo >= 0),
                                    _ => None,
                                });
                            if decided.is_none() {
                                self.undecided_by_turn(&[x, y]);
                            }
                            decided
                        }
                        _ => None,
                    },
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
        // An undecided comparison of a value the analysis cannot see may be
        // a tensor's, which is a tensor, not a Python bool (`probs <= 0.5`
        // passed on to `torch.logical_and`).
        let ordering = !matches!(op, CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn);
        if answer.is_none() && ordering && (may_be_tensor(a) || may_be_tensor(b)) {
            return Value::Unknown;
        }
        Value::Bool(answer)
    }

    /// `dims == 3` of a made-up `dims=2`: a choice among 1-, 2- and 3-D
    /// code, decided by the default (see `mode_defaults`).
    fn mode_selected(&self, selector: &Dim, constant: &Dim) -> Option<bool> {
        let k = constant.as_const().filter(|k| (1..=3).contains(k))?;
        let id = self.env.resolve(selector).as_sym()?;
        self.mode_defaults.get(&id).map(|default| *default == k)
    }

    /// Python `==` on values the analysis knows; `None` when undecidable.
    pub(crate) fn values_equal(&mut self, a: &Value, b: &Value) -> Option<bool> {
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => {
                if self.env.known_equal(x, y) {
                    Some(true)
                } else if self.env.known_different(x, y) {
                    Some(false)
                } else if self.undecided_by_turn(&[x, y]) {
                    None
                } else {
                    self.mode_selected(x, y)
                        .or_else(|| self.mode_selected(y, x))
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
                Value::Int(_)
                | Value::Str(_)
                | Value::Text
                | Value::Bool(Some(_))
                | Value::Float(Some(_)),
            ) => Some(false),
            (
                Value::Int(_)
                | Value::Str(_)
                | Value::Text
                | Value::Bool(Some(_))
                | Value::Float(Some(_)),
                Value::None,
            ) => Some(false),
            (Value::Str(_) | Value::Text, Value::Int(_))
            | (Value::Int(_), Value::Str(_) | Value::Text) => Some(false),
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
            // Classes and functions compare by identity: the same class of
            // the user's, the same torch class or function by its path
            // (`norm_layer in _NORM_ACT_TYPES`, `act is nn.ReLU`).
            (Value::Class(x), Value::Class(y)) => Some(Rc::ptr_eq(x, y)),
            (Value::Function(x), Value::Function(y)) => Some(Rc::ptr_eq(x, y)),
            // Two paths may name one object (`torch.nn.modules.conv.Conv2d`
            // is `torch.nn.Conv2d`); torch's classes by their public
            // names are apart.
            (Value::Path(x), Value::Path(y)) if x == y => Some(true),
            (Value::Path(x), Value::Path(y))
                if crate::interp::call::names_torch_class(x)
                    && crate::interp::call::names_torch_class(y)
                    && !x.contains(".modules.")
                    && !y.contains(".modules.") =>
            {
                Some(false)
            }
            (Value::Class(_), Value::Path(_) | Value::Function(_) | Value::None)
            | (Value::Path(_) | Value::Function(_) | Value::None, Value::Class(_))
            | (Value::Function(_), Value::Path(_) | Value::None)
            | (Value::Path(_) | Value::None, Value::Function(_)) => Some(false),
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
        // A number of either kind (see `join_values`): the result of each,
        // joined, so that `scale * x` keeps `x`'s shape whatever `scale` is.
        if let Some(options) = number_options(&a).or_else(|| number_options(&b)) {
            let on_left = matches!(a, Value::Either(_));
            let results: Vec<Value> = options
                .iter()
                .map(|option| {
                    let (x, y) = if on_left {
                        (option.clone(), b.clone())
                    } else {
                        (a.clone(), option.clone())
                    };
                    self.binop(op, x, y, range, left, right)
                })
                .collect();
            return join_all(self, &results);
        }
        if matches!(a, Value::Tensor(_)) || matches!(b, Value::Tensor(_)) {
            let (a, b) = (self.number_if_known(a), self.number_if_known(b));
            let at = range;
            let symbol = op.symbol();
            let symbol: Rc<str> = Rc::from(symbol);
            let outer = self.env.set_site(Some(shapels_shapes::GuardSite {
                op: symbol.clone(),
                at: range.start,
            }));
            let start = range.start;
            let result = self.with_operands(&[&a, &b], &at, |interp| {
                rules::binary_op(interp, op, &a, &b, range, left, right)
            });
            self.env.set_site(outer);
            let input = if matches!(a, Value::Tensor(_)) {
                &a
            } else {
                &b
            };
            return self.extend_trail(result, Some(input), &symbol, start);
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
                    // Python's int does not overflow: a power past `i64` is
                    // an int of unknown size, not an unknown value.
                    (Some(p), Some(q)) if q >= 0 => {
                        match u32::try_from(q).ok().and_then(|q| p.checked_pow(q)) {
                            Some(v) => Value::int(v),
                            None => Value::Int(self.env.anonymous()),
                        }
                    }
                    (Some(_), Some(_)) => Value::Float(None),
                    (_, Some(q)) if (0..=4).contains(&q) => {
                        let power = (0..q).fold(Dim::konst(1), |acc, _| acc.mul(x));
                        Value::Int(self.bounded(power))
                    }
                    (_, Some(q)) if q < 0 => Value::Float(None),
                    // An int to a power no small polynomial says (`2 **
                    // log2_size`, `n ** 8`) is an int when the exponent
                    // cannot be negative; with an exponent of unknown sign
                    // it may be an int or a float.
                    _ if y.neg().never_positive() => Value::Int(self.env.anonymous()),
                    _ => Value::Unknown,
                },
                BinOp::LShift | BinOp::RShift | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                    match (x.as_const(), y.as_const()) {
                        (Some(p), Some(q)) => Value::int(match op {
                            BinOp::LShift if (0..64).contains(&q) => {
                                match i64::try_from(i128::from(p) << q) {
                                    Ok(v) => v,
                                    Err(_) => return Value::Int(self.env.anonymous()),
                                }
                            }
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
            // Python's arithmetic with a complex number is complex; it has no
            // floor division, modulo or bit operations.
            _ if a.is_number()
                && b.is_number()
                && (matches!(a, Value::Complex) || matches!(b, Value::Complex)) =>
            {
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Pow => {
                        Value::Complex
                    }
                    _ => Value::Unknown,
                }
            }
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
            // `x.size()[:-1] + (heads, head_size)` of a tensor of unknown
            // rank: the leading sizes, then the known ones.
            (Value::SizeOfVar(var, suffix), Value::Tuple(items)) if op == BinOp::Add => {
                let mut dims = suffix.as_ref().clone();
                for item in items.iter() {
                    match self.as_dim(item) {
                        Some(d) => dims.push(d),
                        None => return Value::Unknown,
                    }
                }
                Value::SizeOfVar(*var, Rc::new(dims))
            }
            (Value::Str(x), Value::Str(y)) if op == BinOp::Add => {
                Value::Str(Rc::from(format!("{x}{y}")))
            }
            // `"..." % args` and joins with a string of unknown text: some
            // string, its text not known.
            (Value::Str(_) | Value::Text, _) if op == BinOp::Mod => Value::Text,
            (Value::Str(_) | Value::Text, Value::Str(_) | Value::Text) if op == BinOp::Add => {
                Value::Text
            }
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

    /// An opaque value a torch call already took as a size is that number
    /// (with a tensor, any other opaque value could be a tensor too).
    fn number_if_known(&mut self, v: Value) -> Value {
        if matches!(v, Value::Opaque(_)) {
            // Whether it is known to be a number depends on earlier calls.
            self.across_unstable();
        }
        match &v {
            Value::Opaque(name) if self.opaque_numbers.contains(name) => {
                Value::Int(self.opaque_symbol(name))
            }
            _ => v,
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
    /// multiplying a size again and again) is replaced by an unknown size,
    /// and so is one whose arithmetic overflowed `i64` (`n * n * n`).
    pub(crate) fn bounded(&mut self, d: Dim) -> Dim {
        if d.size() > 48 || d.overflowed() {
            self.env.anonymous()
        } else {
            d
        }
    }

    pub(super) fn unary(&mut self, op: UnaryOp, v: Value, range: TextRange) -> Value {
        if let Some(options) = number_options(&v) {
            let results: Vec<Value> = options
                .iter()
                .map(|option| self.unary(op, option.clone(), range))
                .collect();
            return join_all(self, &results);
        }
        match (op, &v) {
            (_, Value::Tensor(_)) => rules::unary_op(self, op, &v, range),
            (UnaryOp::Not, _) => Value::Bool(self.truth(&v).map(|b| !b)),
            (UnaryOp::Neg, Value::Int(d)) => Value::Int(self.bounded(d.neg())),
            (UnaryOp::Neg, Value::Float(f)) => Value::Float(f.map(|f| -f)),
            (UnaryOp::Pos, Value::Int(_) | Value::Float(_)) => v,
            (UnaryOp::Neg | UnaryOp::Pos, Value::Complex) => v,
            (UnaryOp::Invert, Value::Int(d)) => match d.as_const() {
                Some(n) => Value::int(!n),
                None => Value::Unknown,
            },
            (UnaryOp::Neg, Value::Opaque(name)) => Value::Int(self.opaque_symbol(name).neg()),
            _ => Value::Unknown,
        }
    }
}

/// The alternatives of a number of either kind (`Value::Either` of numbers).
fn number_options(v: &Value) -> Option<Rc<Vec<Value>>> {
    match v {
        Value::Either(options) if options.iter().all(Value::is_number) => Some(options.clone()),
        _ => None,
    }
}

/// Whether a value the analysis cannot see through may be a tensor.
fn may_be_tensor(v: &Value) -> bool {
    match v {
        Value::Unknown | Value::Opaque(_) => true,
        Value::Optional(inner) => matches!(**inner, Value::Tensor(_)) || may_be_tensor(inner),
        Value::Either(options) => options
            .iter()
            .any(|o| matches!(o, Value::Tensor(_)) || may_be_tensor(o)),
        _ => false,
    }
}
