//! Property tests: the canonical form evaluates like the expression it came from.

use proptest::prelude::*;
use shapels_shapes::{Dim, ShapeEnv, SymId, Unified, floor_div_i64};

/// A small expression tree, evaluated both directly and through `Dim`.
#[derive(Debug, Clone)]
enum E {
    Const(i64),
    Var(u32),
    Add(Box<E>, Box<E>),
    Sub(Box<E>, Box<E>),
    Mul(Box<E>, Box<E>),
    FloorDiv(Box<E>, i64),
    Mod(Box<E>, i64),
    DivSym(Box<E>, u32),
    /// `(k*a) // (k*v)`: a factor both sides share.
    DivScaled(Box<E>, i64, u32),
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![(-20i64..20).prop_map(E::Const), (0u32..3).prop_map(E::Var)];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Sub(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Mul(Box::new(a), Box::new(b))),
            (inner.clone(), prop_oneof![-5i64..-1, 1i64..6])
                .prop_map(|(a, d)| E::FloorDiv(Box::new(a), d)),
            (inner.clone(), prop_oneof![-5i64..-1, 1i64..6])
                .prop_map(|(a, d)| E::Mod(Box::new(a), d)),
            (inner.clone(), 0u32..3).prop_map(|(a, v)| E::DivSym(Box::new(a), v)),
            (inner, prop_oneof![-3i64..-1, 2i64..4], 0u32..3).prop_map(|(a, k, v)| E::DivScaled(
                Box::new(a),
                k,
                v
            )),
        ]
    })
}

fn eval(e: &E, vars: &[i64; 3]) -> Option<i64> {
    Some(match e {
        E::Const(c) => *c,
        E::Var(v) => vars[*v as usize],
        E::Add(a, b) => eval(a, vars)? + eval(b, vars)?,
        E::Sub(a, b) => eval(a, vars)? - eval(b, vars)?,
        E::Mul(a, b) => eval(a, vars)?.checked_mul(eval(b, vars)?)?,
        E::FloorDiv(a, d) => floor_div_i64(eval(a, vars)?, *d),
        E::Mod(a, d) => {
            let n = eval(a, vars)?;
            n - d * floor_div_i64(n, *d)
        }
        E::DivSym(a, v) => floor_div_i64(eval(a, vars)?, vars[*v as usize]),
        E::DivScaled(a, k, v) => {
            floor_div_i64(eval(a, vars)?.checked_mul(*k)?, k * vars[*v as usize])
        }
    })
}

fn to_dim(e: &E) -> Dim {
    match e {
        E::Const(c) => Dim::konst(*c),
        E::Var(v) => Dim::sym(SymId(*v)),
        E::Add(a, b) => to_dim(a).add(&to_dim(b)),
        E::Sub(a, b) => to_dim(a).sub(&to_dim(b)),
        E::Mul(a, b) => to_dim(a).mul(&to_dim(b)),
        E::FloorDiv(a, d) => to_dim(a).floordiv(&Dim::konst(*d)).unwrap(),
        E::Mod(a, d) => to_dim(a).modulo(&Dim::konst(*d)).unwrap(),
        E::DivSym(a, v) => to_dim(a).floordiv(&Dim::sym(SymId(*v))).unwrap(),
        E::DivScaled(a, k, v) => {
            let k = Dim::konst(*k);
            to_dim(a)
                .mul(&k)
                .floordiv(&Dim::sym(SymId(*v)).mul(&k))
                .unwrap()
        }
    }
}

proptest! {
    #[test]
    fn canonical_form_evaluates_like_the_expression(e in expr(), vars in prop::array::uniform3(1i64..9)) {
        let direct = eval(&e, &vars);
        let dim = to_dim(&e);
        let through = dim.eval(&|id| vars.get(id.0 as usize).copied());
        if let Some(direct) = direct {
            prop_assert_eq!(Some(direct), through, "{:?} -> {:?}", e, dim);
        }
    }

    #[test]
    fn display_is_python_that_evaluates_the_same(e in expr(), vars in prop::array::uniform3(1i64..9)) {
        let dim = to_dim(&e);
        let text = dim.display(&|id| ["a", "b", "c"][id.0 as usize].to_string());
        prop_assert!(!text.is_empty());
        let through = dim.eval(&|id| vars.get(id.0 as usize).copied());
        if let Some(value) = through {
            prop_assert_eq!(Python::eval(&text, &vars), Some(value), "{} = {:?}", text, dim);
        }
    }
}

/// Python's integer expressions as `display` writes them: `+ - * // %`,
/// `min`/`max`, parentheses, the names `a`, `b`, `c`.
struct Python<'a> {
    tokens: Vec<&'a str>,
    at: usize,
    vars: [i64; 3],
}

impl<'a> Python<'a> {
    fn eval(text: &'a str, vars: &[i64; 3]) -> Option<i64> {
        let mut tokens = Vec::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            let len = if c.is_whitespace() {
                rest = &rest[1..];
                continue;
            } else if rest.starts_with("//") {
                2
            } else if c.is_alphanumeric() {
                rest.find(|c: char| !c.is_alphanumeric())
                    .unwrap_or(rest.len())
            } else {
                1
            };
            tokens.push(&rest[..len]);
            rest = &rest[len..];
        }
        let mut p = Python {
            tokens,
            at: 0,
            vars: *vars,
        };
        let value = p.sum()?;
        (p.at == p.tokens.len()).then_some(value)
    }

    fn peek(&self) -> Option<&'a str> {
        self.tokens.get(self.at).copied()
    }

    fn sum(&mut self) -> Option<i64> {
        let mut value = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek() {
            self.at += 1;
            let rhs = self.product()?;
            value = if op == "+" {
                value.checked_add(rhs)?
            } else {
                value.checked_sub(rhs)?
            };
        }
        Some(value)
    }

    fn product(&mut self) -> Option<i64> {
        let mut value = self.unary()?;
        while let Some(op @ ("*" | "//" | "%")) = self.peek() {
            self.at += 1;
            let rhs = self.unary()?;
            value = match op {
                "*" => value.checked_mul(rhs)?,
                "//" if rhs != 0 => floor_div_i64(value, rhs),
                "%" if rhs != 0 => value - rhs * floor_div_i64(value, rhs),
                _ => return None,
            };
        }
        Some(value)
    }

    fn unary(&mut self) -> Option<i64> {
        if self.peek() == Some("-") {
            self.at += 1;
            return self.unary()?.checked_neg();
        }
        self.atom()
    }

    fn atom(&mut self) -> Option<i64> {
        let token = self.peek()?;
        self.at += 1;
        match token {
            "(" => {
                let value = self.sum()?;
                (self.peek()? == ")").then(|| self.at += 1)?;
                Some(value)
            }
            "min" | "max" => {
                (self.peek()? == "(").then(|| self.at += 1)?;
                let a = self.sum()?;
                (self.peek()? == ",").then(|| self.at += 1)?;
                let b = self.sum()?;
                (self.peek()? == ")").then(|| self.at += 1)?;
                Some(if token == "min" { a.min(b) } else { a.max(b) })
            }
            "a" => Some(self.vars[0]),
            "b" => Some(self.vars[1]),
            "c" => Some(self.vars[2]),
            number => number.parse().ok(),
        }
    }
}

/// A product of simple factors is shown as one, the way a person writes
/// it; a sum that is no such product keeps its terms.
#[test]
fn products_of_simple_factors_are_shown_factored() {
    let mut env = ShapeEnv::new();
    let h = env.symbol("H");
    let w = env.symbol("W");
    let two = Dim::konst(2);
    // flatten of [N, 32, H - 2, W - 2]
    let flat = Dim::konst(32).mul(&h.sub(&two)).mul(&w.sub(&two));
    assert_eq!(env.display(&flat), "32*(H - 2)*(W - 2)");
    let pooled = Dim::konst(64)
        .mul(&h.floordiv(&two).unwrap().sub(&two))
        .mul(&w.floordiv(&two).unwrap().sub(&two));
    assert_eq!(env.display(&pooled), "64*(H // 2 - 2)*(W // 2 - 2)");
    assert_eq!(env.display(&h.mul(&w)), "H*W");
    assert_eq!(
        env.display(&Dim::konst(3).mul(&h).add(&Dim::konst(6))),
        "3*(H + 2)"
    );
    assert_eq!(
        env.display(&Dim::konst(2).mul(&h).add(&Dim::konst(1))),
        "2*H + 1"
    );
    assert_eq!(env.display(&h.add(&w)), "H + W");
    assert_eq!(env.display(&h.mul(&w).add(&Dim::konst(1))), "H*W + 1");
    // A discriminator's last map of a square image, flattened with the
    // batch: a squared factor is written once.
    let b = env.symbol("B");
    let side = h.floordiv(&Dim::konst(16)).unwrap().sub(&Dim::konst(3));
    assert_eq!(env.display(&b.mul(&side).mul(&side)), "B*(H // 16 - 3)**2");
    assert_eq!(
        env.display(&h.mul(&h).mul(&w.sub(&Dim::konst(1)))),
        "H*H*(W - 1)"
    );
    // Not a square: the terms stay.
    assert_eq!(
        env.display(&h.mul(&h).sub(&Dim::konst(6).mul(&h)).add(&Dim::konst(8))),
        "H*H - 6*H + 8"
    );
}

/// Within a degree, added terms come before subtracted ones, as a person
/// writes a convolution's size: `H + 2*(k // 2) - k + 1`, not `-k + H + …`.
#[test]
fn added_terms_come_before_subtracted_ones() {
    let mut env = ShapeEnv::new();
    let h = env.symbol("H");
    let k = env.symbol("k");
    let two = Dim::konst(2);
    let padded = h
        .add(&two.mul(&k.floordiv(&two).unwrap()))
        .sub(&k)
        .add(&Dim::konst(1));
    assert_eq!(env.display(&padded), "H + 2*(k // 2) - k + 1");
    // Nothing added: the first term keeps its sign.
    assert_eq!(env.display(&h.neg().sub(&k)), "-H - k");
}

/// A size every term holds is written once in front (`w*(w + h)`, the
/// Longformer diagonal), with a number all the rest share before it; a
/// count (`display_count`) stays expanded, as people write parameters.
#[test]
fn common_factors_are_shown_in_front() {
    let mut env = ShapeEnv::new();
    let w = env.symbol("w");
    let h = env.symbol("h");
    let n = env.symbol("n");
    let one = Dim::konst(1);
    assert_eq!(env.display(&w.mul(&w).add(&w.mul(&h))), "w*(w + h)");
    assert_eq!(
        env.display(&w.mul(&w).add(&w.mul(&h)).add(&w)),
        "w*(w + h + 1)"
    );
    let count = Dim::konst(3).mul(&n).mul(&n).add(&Dim::konst(3).mul(&n));
    assert_eq!(env.display(&count), "3*n*(n + 1)");
    assert_eq!(env.display_count(&count), "3*n*n + 3*n");
    // The rest a product: no second pair of parentheses.
    let b = env.symbol("B");
    let hh = env.symbol("H");
    let ww = env.symbol("W");
    let product = b.mul(&hh.sub(&one)).mul(&ww.sub(&one)).mul(&b);
    assert_eq!(
        env.display(&product.add(&Dim::konst(0))),
        "B*B*(H - 1)*(W - 1)"
    );
    assert_eq!(env.display(&b.mul(&hh).mul(&ww).add(&b)), "B*(H*W + 1)");
}

#[test]
fn equal_expressions_compare_equal() {
    let t = Dim::sym(SymId(0));
    let two_t_plus_t = Dim::konst(2).mul(&t).add(&t);
    assert_eq!(two_t_plus_t, t.mul(&Dim::konst(3)));
    assert_eq!(t.mul(&Dim::konst(3)).display(&|_| "T".into()), "3*T");
}

#[test]
fn floor_division_by_a_divisor_of_every_term_is_exact() {
    let t = Dim::sym(SymId(0));
    let e = Dim::konst(2)
        .mul(&t)
        .add(&Dim::konst(1))
        .floordiv(&Dim::konst(2))
        .unwrap();
    assert_eq!(e, t);
}

/// `(H - p) // p + 1` is `H // p`: the multiple of a symbolic divisor
/// comes out of the division, so a patch count reads as users write it.
#[test]
fn floor_division_pulls_out_multiples_of_a_symbolic_divisor() {
    let mut env = ShapeEnv::new();
    let h = env.symbol("H");
    let p = env.symbol("patch_size");
    let patches = h.sub(&p).floordiv(&p).unwrap().add(&Dim::konst(1));
    assert_eq!(patches, h.floordiv(&p).unwrap());
    assert_eq!(env.display(&patches), "H // patch_size");
    // 2*p + H over p is H // p + 2; a term the divisor does not divide stays.
    let shifted = h.add(&p.mul(&Dim::konst(2))).floordiv(&p).unwrap();
    assert_eq!(env.display(&shifted), "H // patch_size + 2");
}

#[test]
fn divisibility_guard_cancels_floor_division() {
    let mut env = ShapeEnv::new();
    let c = env.symbol("C");
    let h = env.symbol("n_head");
    let back = c.floordiv(&h).unwrap().mul(&h);
    assert_ne!(env.resolve(&back), c);
    env.assume_divisible(&c, &h);
    assert_eq!(env.resolve(&back), c);
    assert_eq!(env.display(&c.floordiv(&h).unwrap()), "C // n_head");
}

/// A constant factor of both sides cancels: `(3*C) // (3*n_head)` is
/// `C // n_head`, and `(6*C + 4) // (2*h)` is `(3*C + 2) // h`; a factor of
/// one side only stays.
#[test]
fn common_factor_cancels_in_floor_division() {
    let mut env = ShapeEnv::new();
    let c = env.symbol("C");
    let h = env.symbol("n_head");
    let three = Dim::konst(3);
    let q = c.mul(&three).floordiv(&h.mul(&three)).unwrap();
    assert_eq!(env.display(&q), "C // n_head");
    let q = c
        .mul(&Dim::konst(6))
        .add(&Dim::konst(4))
        .floordiv(&h.mul(&Dim::konst(2)))
        .unwrap();
    assert_eq!(q, c.mul(&three).add(&Dim::konst(2)).floordiv(&h).unwrap());
    let q = c.mul(&three).floordiv(&h.mul(&Dim::konst(2))).unwrap();
    assert_ne!(q, c.floordiv(&h).unwrap());
    assert_eq!(env.display(&q), "(3*C) // (2*n_head)");
}

/// `assert width % (3 * heads) == 0` with `width` three channels wide:
/// `heads*((3*C) // (3*heads))` is `C`.
#[test]
fn divisibility_of_scaled_sizes_cancels_too() {
    let mut env = ShapeEnv::new();
    let c = env.symbol("C");
    let h = env.symbol("heads");
    let three = Dim::konst(3);
    let (width, split) = (c.mul(&three), h.mul(&three));
    let per_head = width.floordiv(&split).unwrap();
    assert_ne!(env.resolve(&per_head.mul(&h)), c);
    env.assume_divisible(&width, &split);
    assert_eq!(env.resolve(&per_head.mul(&h)), c);
}

/// `2*(D // 2)` is `D` once 2 divides `D`, and `6*(D // 2)` is `3*D`; an
/// odd multiple keeps the division.
#[test]
fn divisibility_guard_cancels_a_constant_divisor() {
    let mut env = ShapeEnv::new();
    let d = env.symbol("D");
    let half = d.floordiv(&Dim::konst(2)).unwrap();
    let twice = half.mul(&Dim::konst(2));
    assert_ne!(env.resolve(&twice), d);
    env.assume_divisible(&d, &Dim::konst(2));
    assert_eq!(env.resolve(&twice), d);
    assert_eq!(
        env.resolve(&half.mul(&Dim::konst(6))),
        d.mul(&Dim::konst(3))
    );
    assert_eq!(
        env.display(&env.resolve(&half.mul(&Dim::konst(3)))),
        "3*(D // 2)"
    );
}

/// The sizes a view keeps cancel out of the one it infers:
/// `B*T*H*D` over `2*B*T*H` is `D` halved.
#[test]
fn a_one_term_divisor_cancels_its_product() {
    let mut env = ShapeEnv::new();
    let [b, t, h, d] = ["B", "T", "H", "D"].map(|n| env.symbol(n));
    let total = b.mul(&t).mul(&h).mul(&d);
    let rest = b.mul(&t).mul(&h).mul(&Dim::konst(2));
    assert_eq!(total.cancel_term(&rest), Some((d.clone(), 2)));
    // A sum divides only when the product divides every term.
    assert_eq!(total.add(&d).cancel_term(&rest), None);
    assert_eq!(total.cancel_term(&rest.add(&Dim::konst(1))), None);
}

/// The sizes a view keeps and those it splits into cancel out of the one
/// it infers: `B*T*n_state` over `B*T*n_head` is `n_state` over `n_head`,
/// `3*C` over `3*n_head` is `C` over `n_head`; quotients stay out.
#[test]
fn shared_sizes_cancel_out_of_a_quotient() {
    let mut env = ShapeEnv::new();
    let [b, t, s, h, c] = ["B", "T", "n_state", "n_head", "C"].map(|n| env.symbol(n));
    let total = b.mul(&t).mul(&s);
    let rest = b.mul(&t).mul(&h);
    assert_eq!(total.cancel_shared(&rest), Some((s.clone(), h.clone())));
    let three = Dim::konst(3);
    assert_eq!(
        c.mul(&three).mul(&b).cancel_shared(&h.mul(&three).mul(&b)),
        Some((c.clone(), h.clone()))
    );
    let (num, den) = total.cancel_shared(&rest).expect("cancels");
    assert_eq!(
        env.display(&num.floordiv(&den).expect("a quotient")),
        "n_state // n_head"
    );
    // Nothing shared, nothing left to divide by, or a quotient in either.
    assert_eq!(s.cancel_shared(&h), None);
    assert_eq!(total.cancel_shared(&b.mul(&t)), None);
    let half = s.floordiv(&h).expect("a quotient");
    assert_eq!(total.cancel_shared(&b.mul(&half)), None);
    assert_eq!(b.mul(&half).cancel_shared(&b.mul(&h)), None);
}

/// `hid == 3*hid + emb` would make `emb` -2*hid: no size is negative, so
/// nothing is learned and the equality stays an assumption.
#[test]
fn unification_never_learns_a_size_that_cannot_be_positive() {
    let mut env = ShapeEnv::new();
    let hid = env.symbol("hid");
    let emb = env.symbol("emb");
    let wider = hid.mul(&Dim::konst(3)).add(&emb);
    assert_eq!(env.unify(&hid, &wider), Unified::Assumed);
    assert_eq!(env.resolve(&emb), emb);
    assert!(hid.neg().mul(&Dim::konst(2)).never_positive());
    assert!(!hid.sub(&emb).never_positive());
}

#[test]
fn unification_learns_and_contradicts() {
    let mut env = ShapeEnv::new();
    let c = env.symbol("C");
    assert_eq!(env.unify(&c, &Dim::konst(768)), Unified::Learned);
    assert_eq!(env.value(&c), Some(768));
    assert_eq!(env.unify(&c, &Dim::konst(512)), Unified::Contradiction);
    let b = env.symbol("B");
    let b2 = env.symbol("B");
    assert_eq!(env.display(&b2), "B_2");
    assert_eq!(env.unify(&b, &b2), Unified::Learned);
    assert_eq!(env.display(&b2), "B");
    let anon = env.anonymous();
    assert_eq!(env.display(&anon), "?");
    let t = env.symbol("T");
    assert_eq!(
        env.unify(&anon.mul(&Dim::konst(2)), &t.mul(&Dim::konst(2))),
        Unified::Learned
    );
    assert_eq!(env.display(&anon), "T");
}

/// Sizes are positive, so a factor both sides share cancels: a patch
/// embedding's `p1*p2*c == channels*p1*p2` says `c == channels`, and
/// `4*p == 5*p` cannot hold.
#[test]
fn unification_cancels_a_shared_factor() {
    let mut env = ShapeEnv::new();
    let p1 = env.symbol("p1");
    let p2 = env.symbol("p2");
    let channels = env.symbol("channels");
    let c = env.weak_symbol("c");
    let lhs = p1.mul(&p2).mul(&c);
    let rhs = channels.mul(&p1).mul(&p2);
    assert_eq!(env.unify(&lhs, &rhs), Unified::Learned);
    assert_eq!(env.display(&c), "channels");
    assert_eq!(
        env.unify(&p1.mul(&Dim::konst(4)), &p1.mul(&Dim::konst(5))),
        Unified::Contradiction
    );
}

#[test]
fn a_sum_divides_its_multiples_exactly() {
    // A flattened conv output's batch: N*16*(H//4 - 3)*(W//4 - 3) over
    // 16*(H//4 - 3)*(W//4 - 3), a sum once expanded, is N.
    let (n, h, w) = (Dim::sym(SymId(0)), Dim::sym(SymId(1)), Dim::sym(SymId(2)));
    let side = |d: &Dim| d.floordiv(&Dim::konst(4)).unwrap().sub(&Dim::konst(3));
    let features = Dim::konst(16).mul(&side(&h)).mul(&side(&w));
    let numel = n.mul(&features);
    assert_eq!(numel.floordiv(&features), Some(n.clone()));
    assert_eq!(numel.exact_div(&features), Some(n.clone()));
    // Not a multiple: no exact quotient (a one-term quotient would not
    // give it back).
    let other = numel.add(&Dim::konst(1));
    assert_eq!(other.exact_div(&features), None);
    let h_plus_one = h.add(&Dim::konst(1));
    assert_eq!(h.mul(&w).exact_div(&h_plus_one), None);
}

/// Strided layers in a row read as one division: a stride-2 convolution
/// (`(H + 2 - 3) // 2 + 1`) twice is `(H + 3) // 4`, not
/// `((H + 1) // 2 + 1) // 2`, and three times `(H + 7) // 8`.
#[test]
fn floor_divisions_in_a_row_are_one() {
    let mut env = ShapeEnv::new();
    let h = env.symbol("H");
    let conv = |x: &Dim| {
        x.add(&Dim::konst(2 - 3))
            .floordiv(&Dim::konst(2))
            .unwrap()
            .add(&Dim::konst(1))
    };
    let twice = conv(&conv(&h));
    assert_eq!(env.display(&twice), "(H + 3) // 4");
    assert_eq!(env.display(&conv(&twice)), "(H + 7) // 8");
    // Pooling by 2 after a stride-2 convolution: `((H + 1) // 2) // 2`.
    let pooled = conv(&h).floordiv(&Dim::konst(2)).unwrap();
    assert_eq!(env.display(&pooled), "(H + 1) // 4");
}

#[test]
fn learning_one_named_size_is_another_is_counted() {
    let mut env = ShapeEnv::new();
    let (inplanes, planes) = (env.symbol("inplanes"), env.symbol("planes"));
    let (n, fresh) = (env.weak_symbol("N"), env.anonymous());
    let before = env.named_merges();
    // A size tied to a number, or a nameless size to a named one, is no
    // lesson that two of the code's sizes are one.
    assert_eq!(env.unify(&planes, &Dim::from(64)), Unified::Learned);
    assert_eq!(env.unify(&fresh, &inplanes), Unified::Learned);
    assert_eq!(env.unify(&n, &inplanes), Unified::Learned);
    assert_eq!(env.named_merges(), before);
    let (width, heads) = (env.symbol("width"), env.symbol("heads"));
    assert_eq!(
        env.unify(&width, &heads.mul(&Dim::from(2))),
        Unified::Learned
    );
    assert_eq!(env.named_merges(), before + 1);
}
