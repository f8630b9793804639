//! Quotients that cancel: a divisor sharing sizes with the dividend, or dividing it exactly.

use super::{Atom, Dim, gcd};

impl Dim {
    /// For a one-term divisor `c*m` (`2*B*T*H`) whose product of sizes `m`
    /// divides every term of `self`: `self / m` and `c`, so that
    /// `self // other` is `(self / m) // c` for positive sizes (`B*T*H*D`
    /// over `2*B*T*H` is `D // 2`). `None` for any other divisor.
    pub fn cancel_term(&self, other: &Dim) -> Option<(Dim, i64)> {
        let (atoms, c) = other.single_term()?;
        if c <= 0 {
            return None;
        }
        if atoms.is_empty() {
            return Some((self.clone(), c));
        }
        let m = Dim::from_terms(vec![(atoms.to_vec(), 1)]);
        Some((self.exact_div(&m)?, c))
    }

    /// For a one-term divisor (`B*T*n_head`): `self` and the divisor with
    /// the sizes they share divided out (`B*T*n_state` over it is
    /// `n_state` over `n_head`), when at least one was and the divisor
    /// keeps plain sizes only; `None` otherwise. `self // other` is then the
    /// first over the second for positive sizes.
    pub fn cancel_shared(&self, other: &Dim) -> Option<(Dim, Dim)> {
        let (atoms, c) = other.single_term()?;
        if c <= 0 {
            return None;
        }
        let mut num = self.clone();
        let mut kept = Vec::new();
        let mut cancelled = false;
        for atom in atoms {
            let factor = Dim::from_terms(vec![(vec![atom.clone()], 1)]);
            match num.exact_div(&factor) {
                Some(q) => {
                    num = q;
                    cancelled = true;
                }
                None => kept.push(atom.clone()),
            }
        }
        // A quotient holding quotients (`hidden // heads` left in the
        // divisor, `(H // ws)*(W // ws)` in the dividend) is not a size
        // anyone writes: only sums of products of plain sizes.
        let plain = |atoms: &[Atom]| atoms.iter().all(|a| matches!(a, Atom::Sym(_)));
        if !cancelled
            || kept.is_empty()
            || num.as_const().is_some()
            || !plain(&kept)
            || !num.terms().all(|(atoms, _)| plain(atoms))
        {
            return None;
        }
        // A number both share cancels too: `3*C` over `3*n_head` is `C`
        // over `n_head`.
        let shared = num
            .terms()
            .fold(c.unsigned_abs(), |g, (_, k)| gcd(g, k.unsigned_abs()))
            .max(1) as i64;
        Some((
            num.map_coefficients(|k| k / shared),
            Dim::from_terms(vec![(kept, c / shared)]),
        ))
    }

    /// `self / other` when `other` is a single monomial that divides every
    /// term of `self` exactly.
    pub fn exact_div(&self, other: &Dim) -> Option<Dim> {
        let Some((divisor, dc)) = other.single_term() else {
            return self.exact_div_by_sum(other);
        };
        if dc == 0 || self.term_count() == 0 {
            return None;
        }
        let mut terms = Vec::with_capacity(self.term_count());
        for (mono, coeff) in self.terms() {
            if coeff % dc != 0 {
                return None;
            }
            let mut rest = mono.to_vec();
            for atom in divisor {
                let pos = rest.iter().position(|a| a == atom)?;
                rest.remove(pos);
            }
            terms.push((rest, coeff / dc));
        }
        Some(Dim::from_terms(terms))
    }

    /// `self / other` for a divisor of several terms, when the quotient is
    /// one term: `N*16*(H//4 - 3)*(W//4 - 3)` over `16*(H//4 - 3)*(W//4 - 3)`
    /// (expanded, a sum) is `N`. Each term of `self` over the divisor's
    /// first term is a candidate, kept only if times the divisor it gives
    /// `self` back exactly.
    fn exact_div_by_sum(&self, other: &Dim) -> Option<Dim> {
        const MAX_TERMS: usize = 64;
        if other.term_count() < 2 || self.term_count() > MAX_TERMS {
            return None;
        }
        let (first, fc) = other.terms().next()?;
        if fc == 0 {
            return None;
        }
        for (mono, coeff) in self.terms() {
            if coeff % fc != 0 {
                continue;
            }
            let mut rest = mono.to_vec();
            if !first
                .iter()
                .all(|atom| match rest.iter().position(|a| a == atom) {
                    Some(pos) => {
                        rest.remove(pos);
                        true
                    }
                    None => false,
                })
            {
                continue;
            }
            let candidate = Dim::from_terms(vec![(rest, coeff / fc)]);
            if candidate.mul(other) == *self {
                return Some(candidate);
            }
        }
        None
    }

    /// Rewrite `(a // b) * b` to `a` and `a % b` to `0` wherever
    /// `divisible(a, b)` says `b` divides `a` (a guard the analysis recorded).
    pub fn cancel_exact_div(&self, divisible: &dyn Fn(&Dim, &Dim) -> bool) -> Dim {
        let mut out = Dim::default();
        for (mono, coeff) in self.terms() {
            let mut rest: Vec<Atom> = mono.to_vec();
            let mut product = Dim::konst(coeff);
            let mut i = 0;
            while i < rest.len() {
                let replaced = match &rest[i] {
                    Atom::Mod(a, b) if divisible(a, b) => Some((Dim::konst(0), Vec::new(), 1)),
                    Atom::FloorDiv(a, b) if divisible(a, b) => {
                        // The divisor must be a monomial whose atoms all occur
                        // in the rest, and its coefficient must divide the
                        // term's (`2*(D // 2)` is `D` when 2 divides `D`).
                        match b.single_term() {
                            Some((bm, dc))
                                if dc > 0 && product.as_const().is_some_and(|p| p % dc == 0) =>
                            {
                                let mut others: Vec<Atom> = rest.clone();
                                others.remove(i);
                                let mut ok = true;
                                for atom in bm {
                                    match others.iter().position(|x| x == atom) {
                                        Some(p) => {
                                            others.remove(p);
                                        }
                                        None => ok = false,
                                    }
                                }
                                if ok {
                                    Some(((**a).clone(), others, dc))
                                } else {
                                    None
                                }
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                };
                match replaced {
                    Some((value, others, _))
                        if value == Dim::konst(0)
                            && others.is_empty()
                            && matches!(rest[i], Atom::Mod(..)) =>
                    {
                        product = Dim::konst(0);
                        rest.clear();
                    }
                    Some((value, others, dc)) => {
                        product = product
                            .floordiv(&Dim::konst(dc))
                            .unwrap_or_else(|| product.clone())
                            .mul(&value);
                        rest = others;
                        i = 0;
                    }
                    None => i += 1,
                }
            }
            out = out.add(&product.mul(&Dim::from_sorted(vec![(rest, 1)])));
        }
        out
    }
}
