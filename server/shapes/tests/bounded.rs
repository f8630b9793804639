//! The bounded symbol (a loop's turn run once for all turns): `range_of`
//! gives exactly the least and greatest value an expression takes over the
//! range, and the comparisons built on it decide only what every value
//! decides alike.

use proptest::prelude::*;
use shapels_shapes::{Dim, ShapeEnv, Unified};

/// An expression of the bounded symbol `t`.
#[derive(Debug, Clone)]
enum E {
    Const(i64),
    Turn,
    Add(Box<E>, Box<E>),
    Mul(Box<E>, Box<E>),
    FloorDiv(Box<E>, i64),
    Mod(Box<E>, i64),
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![(-9i64..10).prop_map(E::Const), Just(E::Turn)];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Mul(Box::new(a), Box::new(b))),
            (inner.clone(), 1i64..5).prop_map(|(a, d)| E::FloorDiv(Box::new(a), d)),
            (inner, 1i64..5).prop_map(|(a, d)| E::Mod(Box::new(a), d)),
        ]
    })
}

fn value(e: &E, t: i64) -> i64 {
    match e {
        E::Const(c) => *c,
        E::Turn => t,
        E::Add(a, b) => value(a, t) + value(b, t),
        E::Mul(a, b) => value(a, t) * value(b, t),
        E::FloorDiv(a, d) => shapels_shapes::floor_div_i64(value(a, t), *d),
        E::Mod(a, d) => value(a, t).rem_euclid(*d),
    }
}

fn dim(e: &E, turn: &Dim) -> Dim {
    match e {
        E::Const(c) => Dim::konst(*c),
        E::Turn => turn.clone(),
        E::Add(a, b) => dim(a, turn).add(&dim(b, turn)),
        E::Mul(a, b) => dim(a, turn).mul(&dim(b, turn)),
        E::FloorDiv(a, d) => {
            let a = dim(a, turn);
            a.floordiv(&Dim::konst(*d)).unwrap_or(a)
        }
        E::Mod(a, d) => {
            let a = dim(a, turn);
            a.modulo(&Dim::konst(*d)).unwrap_or(a)
        }
    }
}

proptest! {
    #[test]
    fn range_of_is_the_least_and_greatest_value(e in expr(), lo in 0i64..5, len in 0i64..300) {
        let mut env = ShapeEnv::new();
        let turn = env.anonymous();
        let hi = lo + len;
        env.bound(turn.as_sym().expect("a symbol"), lo, hi);
        let d = dim(&e, &turn);
        // Only where building the dim kept the expression's meaning (a
        // division `Dim` declines is left as its dividend above).
        let exact = (lo..=hi).all(|t| d.eval(&|_| Some(t)) == Some(value(&e, t)));
        prop_assume!(exact);
        if let Some((least, greatest)) = env.range_of(&d) {
            let values: Vec<i64> = (lo..=hi).map(|t| value(&e, t)).collect();
            prop_assert_eq!(least, *values.iter().min().expect("a value"));
            prop_assert_eq!(greatest, *values.iter().max().expect("a value"));
        } else {
            // Undecided only for a long range of an expression that is not
            // linear.
            prop_assert!(len >= 128);
        }
    }
}

#[test]
fn comparisons_over_the_range() {
    let mut env = ShapeEnv::new();
    let turn = env.anonymous();
    env.bound(turn.as_sym().expect("a symbol"), 1, 15);
    let size = turn.add(&Dim::konst(1));
    // `t + 1` lies in 2..=16: never 1, never 17, sometimes 8.
    assert!(env.known_different(&size, &Dim::konst(1)));
    assert!(env.known_different(&size, &Dim::konst(17)));
    assert!(!env.known_different(&size, &Dim::konst(8)));
    assert!(!env.known_equal(&size, &Dim::konst(8)));
    assert_eq!(env.unify(&size, &Dim::konst(1)), Unified::Contradiction);
    let facts = env.facts();
    // Equal for one turn only: a guard, never a replacement of the turn.
    assert_eq!(env.unify(&size, &Dim::konst(8)), Unified::Assumed);
    assert!(env.facts() > facts);
    assert!(!env.known_equal(&turn, &Dim::konst(7)));
    // With the bound gone the turn is a free size again.
    env.unbound();
    assert_eq!(env.range_of(&size), None);
    assert!(!env.known_different(&size, &Dim::konst(1)));
}
