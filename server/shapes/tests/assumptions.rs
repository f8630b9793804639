//! Equalities an op needs between two sizes the code named apart are kept
//! as assumptions (said as `shape-assumption` warnings), not learned; a
//! place whose size nobody named until the op solved it names nothing.

use std::rc::Rc;

use shapels_shapes::{Dim, ShapeEnv, Unified};

/// Scores `[tgt_len, src]` plus a causal mask `[T, T]`: broadcasting asks
/// `src == T`, then `tgt_len == T`.
fn add_causal_mask(env: &mut ShapeEnv, tgt_len: &Dim, src: &Dim, t: &Dim) -> Vec<(Dim, Dim)> {
    env.set_operands(vec![
        Rc::new(vec![tgt_len.clone(), src.clone()]),
        Rc::new(vec![t.clone(), t.clone()]),
    ]);
    env.unify(src, t);
    env.unify(tgt_len, t);
    env.set_operands(Vec::new());
    env.take_assumptions()
}

#[test]
fn two_sizes_the_code_named_apart_are_assumed_equal() {
    let mut env = ShapeEnv::new();
    let tgt_len = env.symbol("tgt_len");
    let src_len = env.symbol("src_len");
    let t = env.symbol("T");
    let found = add_causal_mask(&mut env, &tgt_len, &src_len, &t);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_ne!(env.resolve(&tgt_len), env.resolve(&t));
}

#[test]
fn a_size_only_this_op_named_keeps_nothing_apart() {
    // `src_len = keys.size(1)` of keys reshaped with `-1` from a cache the
    // analysis cannot see: an unknown size, named after the fact.
    let mut env = ShapeEnv::new();
    let tgt_len = env.symbol("tgt_len");
    let unknown = env.anonymous();
    let src_len = env.weak_symbol("src_len");
    assert!(matches!(env.unify(&unknown, &src_len), Unified::Learned));
    let t = env.symbol("T");
    let found = add_causal_mask(&mut env, &tgt_len, &unknown, &t);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(env.resolve(&tgt_len), env.resolve(&t));
}
