//! How a `Dim` is written for a person: factored the way one would write it (`32*(H - 2)*(W - 2)`), or expanded for a count.

use std::fmt::Write as _;

use super::{Atom, Dim, Monomial, Repr, SymId, gcd};

impl Dim {
    /// The expression in Python syntax, with symbols spelled by `name`.
    /// Terms of higher degree come first, the constant last: `2*T + 1`,
    /// and within a degree the added terms before the subtracted ones;
    /// a polynomial that is a product of simple factors is written as one,
    /// the way a person would: `32*(H - 2)*(W - 2)`, not its expansion.
    pub fn display(&self, name: &dyn Fn(SymId) -> String) -> String {
        self.display_as(name, true)
    }

    /// `display`, as a sum of terms where no product of simple factors
    /// says it: a count reads best expanded (`3*n**2 + 3*n`), a size
    /// factored (`w*(w + h)`).
    pub fn display_expanded(&self, name: &dyn Fn(SymId) -> String) -> String {
        self.display_as(name, false)
    }

    fn display_as(&self, name: &dyn Fn(SymId) -> String, common_factor: bool) -> String {
        match &self.repr {
            Repr::Const(c) => return c.to_string(),
            Repr::Atom([Atom::Sym(id)]) => return name(*id),
            _ => {}
        }
        if let Some((scale, factors)) = self.factors() {
            let mut parts: Vec<String> = Vec::new();
            if scale != 1 {
                parts.push(scale.to_string());
            }
            for Factor { atom, shift, times } in factors {
                let factor = match shift {
                    0 => atom.display(name, true),
                    s if s < 0 => format!("({} - {})", atom.display(name, false), s.unsigned_abs()),
                    s => format!("({} + {s})", atom.display(name, false)),
                };
                // A size squared is written as one: `(s // 16 - 3)**2`
                // (a plain name as in a product of terms, `H*H`).
                match (shift, times) {
                    (_, 1) => parts.push(factor),
                    (0, n) => parts.extend(std::iter::repeat_n(factor, n)),
                    (_, n) => parts.push(format!("{factor}**{n}")),
                }
            }
            return parts.join("*");
        }
        // A size every term holds is written once, in front: `w*(w + h)`,
        // not `w*w + w*h`.
        if common_factor && let Some((common, rest)) = self.common_factor() {
            // A number all the rest's terms share goes in front too:
            // `3*n*(n + 1)`, not `n*(3*n + 3)`.
            let scale = rest.terms().map(|(_, c)| c.unsigned_abs()).fold(0u64, gcd);
            let scale = i64::try_from(scale).ok().filter(|g| *g > 1);
            let rest = match scale {
                Some(g) => rest.exact_div(&Dim::konst(g)).unwrap_or(rest),
                None => rest,
            };
            let mut parts: Vec<String> = scale.iter().map(i64::to_string).collect();
            parts.extend(common.iter().map(|atom| atom.display(name, true)));
            // A rest that is itself a product prints its own parentheses.
            let shown = rest.display(name);
            if rest.factors().is_some() {
                parts.push(shown);
            } else {
                parts.push(format!("({shown})"));
            }
            return parts.join("*");
        }
        let mut terms: Vec<(&[Atom], i64)> = self.terms().collect();
        // Within a degree, what is added comes before what is taken away,
        // as a person writes it: `H + 2*(k // 2) - k + 1`, not `-k + H + …`.
        terms.sort_by_key(|(m, c)| (std::cmp::Reverse(m.len()), *c < 0));
        let mut out = String::new();
        for (i, (mono, coeff)) in terms.iter().enumerate() {
            let coeff = *coeff;
            let (sign, magnitude) = if coeff < 0 {
                ("-", coeff.unsigned_abs())
            } else {
                ("+", coeff as u64)
            };
            if i == 0 {
                if sign == "-" {
                    out.push('-');
                }
            } else {
                let _ = write!(out, " {sign} ");
            }
            let mut factors: Vec<String> = Vec::new();
            if magnitude != 1 || mono.is_empty() {
                factors.push(magnitude.to_string());
            }
            // Unary minus binds tighter than `//` and `%` in Python: a
            // leading `-(b % 2)` keeps its parentheses.
            let leading_minus = i == 0 && sign == "-";
            for atom in mono.iter() {
                factors.push(atom.display(name, mono.len() > 1 || magnitude != 1 || leading_minus));
            }
            out.push_str(&factors.join("*"));
        }
        out
    }
}

/// One factor `(atom + shift)**times` of a product (see `Dim::factors`).
struct Factor<'a> {
    atom: &'a Atom,
    shift: i64,
    times: usize,
}

/// Most factors a product is looked for in (the check expands them all).
const MAX_FACTORS: usize = 6;

impl Dim {
    /// The atoms every term of a sum holds (as often as the term that holds
    /// them least), and the sum divided by them; `None` for a single term or
    /// when the terms share no atom.
    fn common_factor(&self) -> Option<(Monomial, Dim)> {
        if self.term_count() < 2 {
            return None;
        }
        let mut terms = self.terms();
        let mut common: Monomial = terms.next()?.0.to_vec();
        for (mono, _) in terms {
            let mut rest: Monomial = mono.to_vec();
            common.retain(|atom| match rest.iter().position(|a| a == atom) {
                Some(i) => {
                    rest.remove(i);
                    true
                }
                None => false,
            });
            if common.is_empty() {
                return None;
            }
        }
        let quotient = self.exact_div(&Dim::from_terms(vec![(common.clone(), 1)]))?;
        (quotient.term_count() >= 2).then_some((common, quotient))
    }

    /// The polynomial as `scale * (a1 + c1)**k1 * (a2 + c2)**k2 * ...`,
    /// each `a` a distinct atom, each `c` a constant and each `k` how often
    /// the atom is in the term of highest degree, when it is exactly that
    /// (and more than a single `a + c`): `64*(H//2)*(W//2) - 128*(H//2) -
    /// 128*(W//2) + 256` is `64*(H//2 - 2)*(W//2 - 2)`, `s*s - 6*s + 9`
    /// is `(s - 3)**2`.
    fn factors(&self) -> Option<(i64, Vec<Factor<'_>>)> {
        if self.term_count() < 2 {
            return None;
        }
        let scale = self.terms().map(|(_, c)| c.unsigned_abs()).fold(0u64, gcd);
        let scale = i64::try_from(scale).ok().filter(|g| *g > 0)?;
        // The factors are the atoms of the term of highest degree, with
        // coefficient `scale`.
        let (top, top_coeff) = self.terms().max_by_key(|(m, _)| m.len())?;
        if top_coeff != scale || top.is_empty() || top.len() > MAX_FACTORS {
            return None;
        }
        let coefficient = |mono: &[Atom]| -> i64 {
            self.terms()
                .find(|(m, _)| *m == mono)
                .map_or(0, |(_, c)| c / scale)
        };
        // Each atom with how often the top term holds it; equal atoms sit
        // side by side in a monomial.
        let mut groups: Vec<(&Atom, usize)> = Vec::new();
        for atom in top {
            match groups.last_mut() {
                Some((last, n)) if *last == atom => *n += 1,
                _ => groups.push((atom, 1)),
            }
        }
        // The term without one of an atom's `k` copies holds its shift `k`
        // times (one for each copy whose constant was taken).
        let mut factors: Vec<Factor<'_>> = Vec::new();
        for (atom, times) in groups {
            let at = top.iter().position(|a| a == atom)?;
            let mut rest: Vec<Atom> = top.to_vec();
            rest.remove(at);
            let c = coefficient(&rest);
            let k = i64::try_from(times).ok()?;
            if c % k != 0 {
                return None;
            }
            factors.push(Factor {
                atom,
                shift: c / k,
                times,
            });
        }
        if matches!(factors.as_slice(), [Factor { times: 1, .. }]) && scale == 1 {
            return None;
        }
        // Expanded, the product must give back every term exactly.
        let mut expanded = Dim::konst(scale);
        for f in &factors {
            let factor = Dim::atom(f.atom.clone()).add(&Dim::konst(f.shift));
            for _ in 0..f.times {
                expanded = expanded.mul(&factor);
            }
        }
        (expanded == *self).then_some((scale, factors))
    }
}

impl Atom {
    fn display(&self, name: &dyn Fn(SymId) -> String, in_product: bool) -> String {
        let operand = |d: &Dim| {
            let text = d.display(name);
            let compound = d.term_count() > 1
                || d.terms()
                    .any(|(m, _)| m.len() > 1 || m.iter().any(|a| !matches!(a, Atom::Sym(_))));
            let scaled = d.terms().any(|(_, c)| c != 1) && !d.is_const();
            if compound || scaled {
                format!("({text})")
            } else {
                text
            }
        };
        let text = match self {
            Atom::Sym(id) => return name(*id),
            Atom::FloorDiv(a, b) => format!("{} // {}", operand(a), operand(b)),
            Atom::Mod(a, b) => format!("{} % {}", operand(a), operand(b)),
            Atom::Min(a, b) => return format!("min({}, {})", a.display(name), b.display(name)),
            Atom::Max(a, b) => return format!("max({}, {})", a.display(name), b.display(name)),
        };
        if in_product {
            format!("({text})")
        } else {
            text
        }
    }
}
