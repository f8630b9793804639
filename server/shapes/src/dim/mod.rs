//! `Dim`: an integer expression over named symbols, kept in one canonical form.
//!
//! A `Dim` is a polynomial with integer coefficients whose variables are
//! atoms: symbols, and opaque `a // b`, `a % b`, `min`, `max` terms that
//! could not be simplified away. Polynomials are stored sorted and without
//! zero terms, so two expressions that are equal as polynomials compare
//! equal with `==` (`2*T + T` and `T*3` are the same value).
//!
//! Almost every size the analysis handles is a constant or a single symbol,
//! and sizes are cloned, hashed and compared all the time; so those two
//! forms are stored inline and only larger polynomials are allocated (and
//! then shared, so a clone is a reference count).

mod cancel;
mod display;

use std::cmp::Ordering;
use std::rc::Rc;

/// A symbol's identity inside one `ShapeEnv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SymId(pub u32);

/// A variable of the polynomial.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    Sym(SymId),
    FloorDiv(Box<Dim>, Box<Dim>),
    Mod(Box<Dim>, Box<Dim>),
    Min(Box<Dim>, Box<Dim>),
    Max(Box<Dim>, Box<Dim>),
}

/// A product of atoms (with repetition), sorted.
type Monomial = Vec<Atom>;

/// The stored form. Exactly one form stands for each polynomial, which is
/// what lets the derived `==` and `Hash` compare values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Repr {
    /// A constant, zero included.
    Const(i64),
    /// One atom with coefficient 1 (`T`, `H // 2`).
    Atom([Atom; 1]),
    /// Anything else: terms sorted by monomial, no zero coefficient.
    Poly(Rc<[(Monomial, i64)]>),
}

/// An integer expression in canonical polynomial form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dim {
    repr: Repr,
}

impl Default for Dim {
    fn default() -> Dim {
        Dim::konst(0)
    }
}

/// Ordered as the sorted sequence of its terms, whatever the stored form.
impl Ord for Dim {
    fn cmp(&self, other: &Dim) -> Ordering {
        self.terms().cmp(other.terms())
    }
}

impl PartialOrd for Dim {
    fn partial_cmp(&self, other: &Dim) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The terms of a polynomial in order: `(monomial, coefficient)`.
enum Terms<'a> {
    One(Option<(&'a [Atom], i64)>),
    Many(std::slice::Iter<'a, (Monomial, i64)>),
}

impl<'a> Iterator for Terms<'a> {
    type Item = (&'a [Atom], i64);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Terms::One(term) => term.take(),
            Terms::Many(iter) => iter.next().map(|(m, c)| (m.as_slice(), *c)),
        }
    }
}

impl Dim {
    pub fn konst(value: i64) -> Dim {
        Dim {
            repr: Repr::Const(value),
        }
    }

    pub fn sym(id: SymId) -> Dim {
        Dim::atom(Atom::Sym(id))
    }

    fn atom(atom: Atom) -> Dim {
        Dim {
            repr: Repr::Atom([atom]),
        }
    }

    fn terms(&self) -> Terms<'_> {
        match &self.repr {
            Repr::Const(0) => Terms::One(None),
            Repr::Const(c) => Terms::One(Some((&[], *c))),
            Repr::Atom(a) => Terms::One(Some((&a[..], 1))),
            Repr::Poly(terms) => Terms::Many(terms.iter()),
        }
    }

    fn term_count(&self) -> usize {
        match &self.repr {
            Repr::Const(0) => 0,
            Repr::Const(_) | Repr::Atom(_) => 1,
            Repr::Poly(terms) => terms.len(),
        }
    }

    /// The coefficient of the empty monomial.
    fn constant(&self) -> i64 {
        match &self.repr {
            Repr::Const(c) => *c,
            Repr::Atom(_) => 0,
            Repr::Poly(terms) => match terms.first() {
                Some((m, c)) if m.is_empty() => *c,
                _ => 0,
            },
        }
    }

    /// `(a, b, r)` when the expression is `a // b + r` with a positive
    /// constant `b`.
    fn floordiv_plus_constant(&self) -> Option<(&Dim, i64, i64)> {
        let Repr::Poly(terms) = &self.repr else {
            return None;
        };
        let [(constant, r), (mono, 1)] = &terms[..] else {
            return None;
        };
        let ([], [Atom::FloorDiv(a, b)]) = (constant.as_slice(), mono.as_slice()) else {
            return None;
        };
        let b = b.as_const().filter(|b| *b > 0)?;
        Some((a, b, *r))
    }

    /// The only term, when there is exactly one.
    fn single_term(&self) -> Option<(&[Atom], i64)> {
        if self.term_count() == 1 {
            self.terms().next()
        } else {
            None
        }
    }

    /// Build from terms sorted by monomial, each monomial once, no zero
    /// coefficient: picks the one stored form for the polynomial.
    fn from_sorted(mut terms: Vec<(Monomial, i64)>) -> Dim {
        match terms.len() {
            0 => Dim::konst(0),
            1 if terms[0].0.is_empty() => Dim::konst(terms[0].1),
            1 if terms[0].0.len() == 1 && terms[0].1 == 1 => {
                let (mut mono, _) = terms.pop().unwrap_or_default();
                match mono.pop() {
                    Some(atom) => Dim::atom(atom),
                    None => Dim::konst(0),
                }
            }
            _ => Dim {
                repr: Repr::Poly(Rc::from(terms)),
            },
        }
    }

    /// Build from terms in any order, with repeats and zeros.
    fn from_terms(mut terms: Vec<(Monomial, i64)>) -> Dim {
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Monomial, i64)> = Vec::with_capacity(terms.len());
        for (mono, coeff) in terms {
            match out.last_mut() {
                Some((last, c)) if *last == mono => *c = c.saturating_add(coeff),
                _ => out.push((mono, coeff)),
            }
        }
        out.retain(|(_, c)| *c != 0);
        Dim::from_sorted(out)
    }

    /// Every term with its coefficient mapped; `f` must not map to zero.
    fn map_coefficients(&self, f: impl Fn(i64) -> i64) -> Dim {
        Dim::from_sorted(self.terms().map(|(m, c)| (m.to_vec(), f(c))).collect())
    }

    /// The value when the expression has no symbols.
    pub fn as_const(&self) -> Option<i64> {
        match &self.repr {
            Repr::Const(c) => Some(*c),
            _ => None,
        }
    }

    /// The symbol when the expression is exactly one symbol.
    pub fn as_sym(&self) -> Option<SymId> {
        match &self.repr {
            Repr::Atom([Atom::Sym(id)]) => Some(*id),
            _ => None,
        }
    }

    /// Whether a `//` or `%` atom occurs at the top level of the polynomial.
    pub fn has_division(&self) -> bool {
        self.terms().any(|(m, _)| {
            m.iter()
                .any(|a| matches!(a, Atom::FloorDiv(..) | Atom::Mod(..)))
        })
    }

    pub fn is_const(&self) -> bool {
        self.as_const().is_some()
    }

    /// Whether a coefficient sits at a limit of `i64`. Arithmetic here
    /// saturates, so that is where a result that did not fit ends up; no
    /// size torch can hold is that large (its storage size would overflow),
    /// so callers take such a value for an unknown size rather than show it.
    pub fn overflowed(&self) -> bool {
        self.terms().any(|(_, c)| c == i64::MAX || c == i64::MIN)
    }

    /// A rough size measure, used to keep expressions bounded.
    pub fn size(&self) -> usize {
        self.terms()
            .map(|(m, _)| 1 + m.iter().map(Atom::size).sum::<usize>())
            .sum()
    }

    /// Every symbol the expression mentions, including inside opaque atoms.
    pub fn symbols(&self) -> Vec<SymId> {
        match &self.repr {
            Repr::Const(_) => Vec::new(),
            Repr::Atom([Atom::Sym(id)]) => vec![*id],
            _ => {
                let mut out = Vec::new();
                self.collect_symbols(&mut out);
                out.sort();
                out.dedup();
                out
            }
        }
    }

    /// Whether a symbol for which `f` holds is in the expression, inside
    /// opaque atoms too (without collecting them, as `symbols` does).
    pub fn mentions(&self, f: &dyn Fn(SymId) -> bool) -> bool {
        self.terms().any(|(mono, _)| {
            mono.iter().any(|atom| match atom {
                Atom::Sym(id) => f(*id),
                Atom::FloorDiv(a, b) | Atom::Mod(a, b) | Atom::Min(a, b) | Atom::Max(a, b) => {
                    a.mentions(f) || b.mentions(f)
                }
            })
        })
    }

    fn collect_symbols(&self, out: &mut Vec<SymId>) {
        for (mono, _) in self.terms() {
            for atom in mono {
                match atom {
                    Atom::Sym(id) => out.push(*id),
                    Atom::FloorDiv(a, b) | Atom::Mod(a, b) | Atom::Min(a, b) | Atom::Max(a, b) => {
                        a.collect_symbols(out);
                        b.collect_symbols(out);
                    }
                }
            }
        }
    }

    pub fn add(&self, other: &Dim) -> Dim {
        match (&self.repr, &other.repr) {
            (Repr::Const(a), Repr::Const(b)) => return Dim::konst(a.saturating_add(*b)),
            (_, Repr::Const(0)) => return self.clone(),
            (Repr::Const(0), _) => return other.clone(),
            _ => {}
        }
        // Merge the two sorted term lists.
        let mut out: Vec<(Monomial, i64)> =
            Vec::with_capacity(self.term_count() + other.term_count());
        let mut left = self.terms().peekable();
        let mut right = other.terms().peekable();
        loop {
            let order = match (left.peek(), right.peek()) {
                (Some(l), Some(r)) => l.0.cmp(r.0),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => break,
            };
            match order {
                Ordering::Less => {
                    let (m, c) = left.next().unwrap_or((&[], 0));
                    out.push((m.to_vec(), c));
                }
                Ordering::Greater => {
                    let (m, c) = right.next().unwrap_or((&[], 0));
                    out.push((m.to_vec(), c));
                }
                Ordering::Equal => {
                    let (m, a) = left.next().unwrap_or((&[], 0));
                    let (_, b) = right.next().unwrap_or((&[], 0));
                    let c = a.saturating_add(b);
                    if c != 0 {
                        out.push((m.to_vec(), c));
                    }
                }
            }
        }
        Dim::from_sorted(out)
    }

    pub fn neg(&self) -> Dim {
        match &self.repr {
            Repr::Const(c) => Dim::konst(c.saturating_neg()),
            _ => self.map_coefficients(i64::saturating_neg),
        }
    }

    pub fn sub(&self, other: &Dim) -> Dim {
        match (&self.repr, &other.repr) {
            (Repr::Const(a), Repr::Const(b)) => Dim::konst(a.saturating_sub(*b)),
            (_, Repr::Const(0)) => self.clone(),
            _ if self == other => Dim::konst(0),
            _ => self.add(&other.neg()),
        }
    }

    pub fn mul(&self, other: &Dim) -> Dim {
        match (&self.repr, &other.repr) {
            (Repr::Const(a), Repr::Const(b)) => return Dim::konst(a.saturating_mul(*b)),
            (Repr::Const(0), _) | (_, Repr::Const(0)) => return Dim::konst(0),
            (Repr::Const(1), _) => return other.clone(),
            (_, Repr::Const(1)) => return self.clone(),
            (Repr::Const(k), _) => return other.scaled(*k),
            (_, Repr::Const(k)) => return self.scaled(*k),
            _ => {}
        }
        let mut terms = Vec::with_capacity(self.term_count() * other.term_count());
        for (m1, c1) in self.terms() {
            for (m2, c2) in other.terms() {
                let mut mono: Monomial = m1.iter().chain(m2).cloned().collect();
                mono.sort();
                terms.push((mono, c1.saturating_mul(c2)));
            }
        }
        Dim::from_terms(terms)
    }

    /// Every coefficient times a nonzero constant.
    fn scaled(&self, k: i64) -> Dim {
        // A saturated product is never zero, so no term disappears.
        self.map_coefficients(|c| c.saturating_mul(k))
    }

    /// Python's `//` (floor division). `None` when dividing by zero.
    pub fn floordiv(&self, other: &Dim) -> Option<Dim> {
        if let Some(d) = other.as_const() {
            if d == 0 {
                return None;
            }
            if let Some(n) = self.as_const() {
                return Some(Dim::konst(floor_div_i64(n, d)));
            }
            if d == 1 {
                return Some(self.clone());
            }
            // Split into the part every coefficient of which `d` divides and the
            // constant remainder: floor((d*K + r) / d) = K + floor(r / d).
            let constant = self.constant();
            let rest_divisible = self.terms().all(|(m, c)| m.is_empty() || c % d == 0);
            if rest_divisible {
                let q = floor_div_i64(constant, d);
                let mut terms: Vec<(Monomial, i64)> = Vec::with_capacity(self.term_count());
                if q != 0 {
                    terms.push((Vec::new(), q));
                }
                terms.extend(
                    self.terms()
                        .filter(|(m, _)| !m.is_empty())
                        .map(|(m, c)| (m.to_vec(), c / d)),
                );
                return Some(Dim::from_sorted(terms));
            }
        }
        if let Some(quotient) = self.exact_div(other) {
            return Some(quotient);
        }
        // A constant factor of both sides cancels: (g*A) / (g*B) is A / B
        // exactly, so their floors agree. `(3*C) // (3*h)` reads `C // h`.
        if other.as_const().is_none()
            && let Some((a, b)) = self.without_common_factor(other)
        {
            return a.floordiv(&b);
        }
        // Pull out the terms a one-term divisor divides:
        // floor((A + q*b) / b) = floor(A / b) + q, so `(H - p) // p` is
        // `H // p - 1` and a patch count reads as users write it.
        if other.as_const().is_none()
            && let Some((divisor, dc)) = other.single_term()
            && dc != 0
        {
            let (whole, rest): (Vec<_>, Vec<_>) = self.terms().partition(|(m, c)| {
                c % dc == 0 && {
                    let mut left = m.to_vec();
                    divisor
                        .iter()
                        .all(|a| match left.iter().position(|x| x == a) {
                            Some(i) => {
                                left.remove(i);
                                true
                            }
                            None => false,
                        })
                }
            });
            if !whole.is_empty() && !rest.is_empty() {
                let whole =
                    Dim::from_terms(whole.into_iter().map(|(m, c)| (m.to_vec(), c)).collect());
                let rest =
                    Dim::from_terms(rest.into_iter().map(|(m, c)| (m.to_vec(), c)).collect());
                let q = whole.exact_div(other)?;
                return Some(rest.floordiv(other)?.add(&q));
            }
        }
        // floor(floor(a / b) / d) is floor(a / (b*d)) for positive b and d.
        if let (Some(d), Repr::Atom([Atom::FloorDiv(a, b)])) = (other.as_const(), &self.repr)
            && d > 0
            && let Some(bv) = b.as_const()
            && bv > 0
        {
            return a.floordiv(&Dim::konst(bv.saturating_mul(d)));
        }
        // With a constant between them too: floor((floor(a / b) + r) / d)
        // is floor((a + r*b) / (b*d)), since floor(a / b) + r is
        // floor((a + r*b) / b). Strided layers in a row read as one:
        // `((H + 1) // 2 + 1) // 2` is `(H + 3) // 4`.
        if let Some(d) = other.as_const()
            && d > 0
            && let Some((a, b, r)) = self.floordiv_plus_constant()
            && r != 0
            && let Some(rb) = r.checked_mul(b)
            && let Some(bd) = b.checked_mul(d)
        {
            return a.add(&Dim::konst(rb)).floordiv(&Dim::konst(bd));
        }
        // Pull whole multiples of a constant divisor out of the constant
        // term: floor((A - 2) / 2) + 1 is floor(A / 2), as users read it.
        if let Some(d) = other.as_const() {
            let q = floor_div_i64(self.constant(), d);
            if q != 0 {
                let rest = self.sub(&Dim::konst(q.saturating_mul(d)));
                return Some(rest.floordiv(other)?.add(&Dim::konst(q)));
            }
        }
        Some(Dim::atom(Atom::FloorDiv(
            Box::new(self.clone()),
            Box::new(other.clone()),
        )))
    }

    /// `self` and `other` with the constant factor greater than one that
    /// divides every coefficient of both taken out (`3*C` and `3*h` are
    /// `C` and `h`); `None` when there is none.
    pub fn without_common_factor(&self, other: &Dim) -> Option<(Dim, Dim)> {
        let common = self
            .terms()
            .chain(other.terms())
            .fold(0u64, |g, (_, c)| gcd(g, c.unsigned_abs()));
        let g = i64::try_from(common).ok().filter(|g| *g > 1)?;
        let divided =
            |d: &Dim| Dim::from_terms(d.terms().map(|(m, c)| (m.to_vec(), c / g)).collect());
        Some((divided(self), divided(other)))
    }

    /// Python's `%`. `None` when dividing by zero.
    pub fn modulo(&self, other: &Dim) -> Option<Dim> {
        if let Some(d) = other.as_const() {
            if d == 0 {
                return None;
            }
            if let Some(n) = self.as_const() {
                return Some(Dim::konst(n - d * floor_div_i64(n, d)));
            }
            if d == 1 {
                return Some(Dim::konst(0));
            }
            let constant = self.constant();
            if self.terms().all(|(m, c)| m.is_empty() || c % d == 0) {
                return Some(Dim::konst(constant - d * floor_div_i64(constant, d)));
            }
        }
        if self.exact_div(other).is_some() {
            return Some(Dim::konst(0));
        }
        if let Some(d) = other.as_const() {
            let q = floor_div_i64(self.constant(), d);
            if q != 0 {
                return self.sub(&Dim::konst(q.saturating_mul(d))).modulo(other);
            }
        }
        Some(Dim::atom(Atom::Mod(
            Box::new(self.clone()),
            Box::new(other.clone()),
        )))
    }

    pub fn minimum(&self, other: &Dim) -> Dim {
        self.extremum(other, i64::min, Atom::Min)
    }

    pub fn maximum(&self, other: &Dim) -> Dim {
        self.extremum(other, i64::max, Atom::Max)
    }

    /// `min`/`max`: folded when both are known or equal, else an atom with
    /// its operands in canonical order (so `min(a, b)` equals `min(b, a)`).
    /// Growth is bounded by the analysis, which swaps an expression whose
    /// `size` passes its limit for a fresh symbol.
    fn extremum(
        &self,
        other: &Dim,
        fold: fn(i64, i64) -> i64,
        atom: fn(Box<Dim>, Box<Dim>) -> Atom,
    ) -> Dim {
        match (self.as_const(), other.as_const()) {
            (Some(a), Some(b)) => Dim::konst(fold(a, b)),
            _ if self == other => self.clone(),
            _ => {
                let (a, b) = if self <= other {
                    (self, other)
                } else {
                    (other, self)
                };
                Dim::atom(atom(Box::new(a.clone()), Box::new(b.clone())))
            }
        }
    }

    /// Whether the expression is at most 0 whatever positive values its
    /// symbols take: every coefficient is at most 0 and every factor a plain
    /// symbol (`-2*hid`, `0`). No size can be such an expression.
    pub fn never_positive(&self) -> bool {
        self.terms()
            .all(|(mono, coeff)| coeff <= 0 && mono.iter().all(|atom| matches!(atom, Atom::Sym(_))))
    }

    /// Substitute symbols; atoms are re-simplified after substitution.
    pub fn substitute(&self, f: &mut dyn FnMut(SymId) -> Option<Dim>) -> Dim {
        if let Repr::Const(_) = self.repr {
            return self.clone();
        }
        let mut out = Dim::default();
        for (mono, coeff) in self.terms() {
            let mut product = Dim::konst(coeff);
            for atom in mono {
                let value = match atom {
                    Atom::Sym(id) => f(*id).unwrap_or_else(|| Dim::sym(*id)),
                    Atom::FloorDiv(a, b) => {
                        let (a, b) = (a.substitute(f), b.substitute(f));
                        a.floordiv(&b)
                            .unwrap_or_else(|| Dim::atom(Atom::FloorDiv(Box::new(a), Box::new(b))))
                    }
                    Atom::Mod(a, b) => {
                        let (a, b) = (a.substitute(f), b.substitute(f));
                        a.modulo(&b)
                            .unwrap_or_else(|| Dim::atom(Atom::Mod(Box::new(a), Box::new(b))))
                    }
                    Atom::Min(a, b) => a.substitute(f).minimum(&b.substitute(f)),
                    Atom::Max(a, b) => a.substitute(f).maximum(&b.substitute(f)),
                };
                product = product.mul(&value);
            }
            out = out.add(&product);
        }
        out
    }

    /// Evaluate under an assignment of every symbol; `None` when a symbol is
    /// missing or a division by zero happens.
    pub fn eval(&self, env: &dyn Fn(SymId) -> Option<i64>) -> Option<i64> {
        let mut total: i64 = 0;
        for (mono, coeff) in self.terms() {
            let mut product = coeff;
            for atom in mono {
                let v = match atom {
                    Atom::Sym(id) => env(*id)?,
                    Atom::FloorDiv(a, b) => {
                        let d = b.eval(env)?;
                        if d == 0 {
                            return None;
                        }
                        floor_div_i64(a.eval(env)?, d)
                    }
                    Atom::Mod(a, b) => {
                        let d = b.eval(env)?;
                        if d == 0 {
                            return None;
                        }
                        let n = a.eval(env)?;
                        n - d * floor_div_i64(n, d)
                    }
                    Atom::Min(a, b) => a.eval(env)?.min(b.eval(env)?),
                    Atom::Max(a, b) => a.eval(env)?.max(b.eval(env)?),
                };
                product = product.checked_mul(v)?;
            }
            total = total.checked_add(product)?;
        }
        Some(total)
    }
}

impl Atom {
    fn size(&self) -> usize {
        match self {
            Atom::Sym(_) => 1,
            Atom::FloorDiv(a, b) | Atom::Mod(a, b) | Atom::Min(a, b) | Atom::Max(a, b) => {
                1 + a.size() + b.size()
            }
        }
    }
}

/// The greatest common divisor (of sizes' coefficients).
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Python's floor division on integers (rounds toward negative infinity).
pub fn floor_div_i64(n: i64, d: i64) -> i64 {
    let q = n.wrapping_div(d);
    if (n % d != 0) && ((n < 0) != (d < 0)) {
        q - 1
    } else {
        q
    }
}

impl From<i64> for Dim {
    fn from(value: i64) -> Dim {
        Dim::konst(value)
    }
}
