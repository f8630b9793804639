//! What `assert` statements teach: sizes equal (`assert x.shape[1] ==
//! self.channels`), a size divisible by another (`assert d % h == 0`), a
//! tensor's whole shape (`assert t.shape == (b, c)`) or its rank (`assert
//! x.ndim == 4`, timm's `_assert(x.ndim == 4, msg)`).

use shapels_shapes::Dim;
use shapels_syntax::ast::{self, Expr, ExprKind};

use super::Interp;
use crate::value::{Shape, Value};

impl Interp<'_> {
    /// Learn from `assert` what the user states as fact.
    pub(super) fn assume(&mut self, test: &Expr) {
        if let Some((left, right)) = super::control::equality(test) {
            if self.assume_rank(left, right) || self.assume_rank(right, left) {
                return;
            }
            // `assert a % b == 0` records divisibility; `assert a == b` unifies.
            if let ExprKind::BinOp {
                left: a,
                op: ast::BinOp::Mod,
                right: b,
            } = &left.kind
                && matches!(right.kind, ExprKind::Int(0))
            {
                let (va, vb) = (self.eval(a), self.eval(b));
                if let (Some(da), Some(db)) = (self.as_dim(&va), self.as_dim(&vb)) {
                    self.env.assume_divisible(&da, &db);
                }
                return;
            }
            // A size compared with a setting nobody passed (`assert
            // x.shape[1] == self.channels` in a made-up object) is that
            // setting: its name names the size.
            let (va, vb) = (self.eval(left), self.eval(right));
            if self.assume_sizes(&va, &vb)
                || self.assume_sizes(&vb, &va)
                || self.assume_same_shape(&va, &vb)
            {
                return;
            }
            if matches!(
                (&va, &vb),
                (Value::Int(_), Value::Int(_) | Value::Opaque(_))
                    | (Value::Opaque(_), Value::Int(_))
            ) && let (Some(da), Some(db)) = (self.as_dim(&va), self.as_dim(&vb))
                && !self.assume_multiple(&da, &db)
                && !self.assume_multiple(&db, &da)
            {
                let _ = self.env.unify(&da, &db);
            }
            return;
        }
        let _ = self.eval(test);
    }

    /// `assert self.head_dim * num_heads == embed_dim` with `head_dim =
    /// embed_dim // num_heads`: `embed_dim` is a multiple of `num_heads`,
    /// which is what the check says (a reshape to `num_heads` heads of
    /// `head_dim` then keeps every size). `true` when `product` is `whole`
    /// rounded down to a multiple of one of its symbols.
    fn assume_multiple(&mut self, product: &Dim, whole: &Dim) -> bool {
        let product = self.env.resolve(product);
        let whole = self.env.resolve(whole);
        for s in product.symbols() {
            let factor = Dim::sym(s);
            if factor == whole {
                continue;
            }
            let rounded = whole.floordiv(&factor).map(|q| q.mul(&factor));
            if rounded.is_some_and(|r| self.env.resolve(&r) == product) {
                self.env.assume_divisible(&whole, &factor);
                return true;
            }
        }
        false
    }

    /// `assert freqs_cis.shape == (x.shape[1], x.shape[-1])`: the tensor
    /// has those sizes, and a rank nobody knew is theirs. `false` when
    /// `shape` is no tensor's sizes or `sizes` no tuple of sizes (a list
    /// is never equal to a `torch.Size`).
    fn assume_sizes(&mut self, shape: &Value, sizes: &Value) -> bool {
        let Value::Tuple(wanted) = sizes else {
            return false;
        };
        let Some(wanted) = wanted
            .iter()
            .map(|v| self.as_dim(v))
            .collect::<Option<Vec<Dim>>>()
        else {
            return false;
        };
        let have: Vec<Dim> = match shape {
            Value::Tuple(items) => {
                let Some(dims) = items
                    .iter()
                    .map(|v| match v {
                        Value::Int(d) => Some(d.clone()),
                        _ => None,
                    })
                    .collect::<Option<Vec<Dim>>>()
                else {
                    return false;
                };
                dims
            }
            Value::SizeOfVar(var, tail) => match self.sizes_of_rank(*var, tail, wanted.len()) {
                Some(dims) => dims,
                None => return true,
            },
            _ => return false,
        };
        if have.len() == wanted.len() {
            for (a, b) in have.iter().zip(&wanted) {
                let _ = self.env.unify(a, b);
            }
        }
        true
    }

    /// `assert x_start.shape == x_t.shape` of two tensors of unknown rank:
    /// they have one shape, so both are shown alike and broadcasting one
    /// with the other keeps it. A shape of known dims gives the other its
    /// dims. `false` when either value is no tensor's sizes.
    fn assume_same_shape(&mut self, a: &Value, b: &Value) -> bool {
        let shape_of = |interp: &Self, v: &Value| match v {
            Value::SizeOfVar(var, tail) => Some(interp.resolve_shape(&Shape::of_sizes(*var, tail))),
            _ => None,
        };
        let (Some(sa), Some(sb)) = (shape_of(self, a), shape_of(self, b)) else {
            return false;
        };
        match (sa.tail(), sb.tail()) {
            (Some((va, ta)), Some((vb, tb))) => {
                // Only shapes that end in as many known dims line up dim
                // for dim without a guess at either rank.
                if ta.len() != tb.len() {
                    return true;
                }
                for (x, y) in ta.iter().zip(tb) {
                    let _ = self.env.unify(x, y);
                }
                if va != vb {
                    self.same_rank_var(va, vb);
                }
            }
            (None, Some(_)) => {
                if let Some(dims) = sa.dims() {
                    let dims = dims.to_vec();
                    self.adopt_shape(&sb, &dims);
                }
            }
            (Some(_), None) => {
                if let Some(dims) = sb.dims() {
                    let dims = dims.to_vec();
                    self.adopt_shape(&sa, &dims);
                }
            }
            (None, None) => {}
        }
        true
    }

    /// `assert x.ndim == 4` (or `x.dim()`, `len(x.shape)`) of a tensor of
    /// unknown rank: it has that many dims. `false` when `rank` reads no
    /// tensor's rank or `count` is no number.
    fn assume_rank(&mut self, rank: &Expr, count: &Expr) -> bool {
        let tensor = match &rank.kind {
            ExprKind::Attribute { value, attr } if attr.id == "ndim" => value,
            ExprKind::Call { func, args } if args.is_empty() => match &func.kind {
                ExprKind::Attribute { value, attr }
                    if matches!(attr.id.as_str(), "dim" | "ndimension") =>
                {
                    value
                }
                _ => return false,
            },
            ExprKind::Call { func, args } => match (&func.kind, args.as_slice()) {
                (ExprKind::Name(len), [ast::Arg::Positional(shape)]) if len == "len" => {
                    match &shape.kind {
                        ExprKind::Attribute { value, attr } if attr.id == "shape" => value,
                        ExprKind::Call { func, args } if args.is_empty() => match &func.kind {
                            ExprKind::Attribute { value, attr } if attr.id == "size" => value,
                            _ => return false,
                        },
                        _ => return false,
                    }
                }
                _ => return false,
            },
            _ => return false,
        };
        let Value::Int(n) = self.eval(count) else {
            return false;
        };
        let Some(n) = n.as_const().and_then(|n| usize::try_from(n).ok()) else {
            return false;
        };
        let Value::Tensor(t) = self.eval(tensor) else {
            return false;
        };
        let shape = self.resolve_shape(&t.shape);
        if let Value::SizeOfVar(var, tail) = crate::rules::size_value(&shape)
            && let Some(dims) = self.sizes_of_rank(var, &tail, n)
        {
            for d in &dims {
                if let Some(s) = self.env.resolve(d).as_sym()
                    && self.env.is_anonymous(s)
                {
                    self.asserted_dims.insert(s);
                }
            }
        }
        true
    }

    /// The sizes of a tensor of unknown rank (its rank variable's dims, then
    /// the known `tail`) when it has `n` dims, which fixes the rank; `None`
    /// when `n` is fewer than the known dims (the assert fails).
    fn sizes_of_rank(&mut self, var: u32, tail: &[Dim], n: usize) -> Option<Vec<Dim>> {
        let lead = n.checked_sub(tail.len())?;
        let mut dims = self.refine_rank(var, &vec![None; lead]).as_ref().clone();
        dims.extend(tail.iter().cloned());
        Some(dims)
    }

    /// `_assert(cond, message)`, `torch._assert(cond, message)`: an
    /// assert written as a call (timm's, for tracing), which states the
    /// same as `assert cond`. `true` when `e` is one, learned from.
    pub(super) fn assert_call(&mut self, e: &Expr) -> bool {
        let ExprKind::Call { func, args } = &e.kind else {
            return false;
        };
        let named = match &func.kind {
            ExprKind::Name(n) => n == "_assert",
            ExprKind::Attribute { attr, .. } => attr.id == "_assert",
            _ => false,
        };
        match (named, args.first()) {
            (true, Some(ast::Arg::Positional(test))) => {
                self.assume(test);
                true
            }
            _ => false,
        }
    }
}
