//! `Dim`: an integer expression over named symbols, kept in one canonical form.
//!
//! A `Dim` is a polynomial with integer coefficients whose variables are
//! atoms: symbols, and opaque `a // b`, `a % b`, `min`, `max` terms that
//! could not be simplified away. Polynomials are stored sorted and without
//! zero terms, so two expressions that are equal as polynomials compare
//! equal with `==` (`2*T + T` and `T*3` are the same value).

use std::collections::BTreeMap;
use std::fmt::Write as _;

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

/// An integer expression in canonical polynomial form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dim {
    /// Monomial -> coefficient; the empty monomial is the constant term.
    terms: BTreeMap<Monomial, i64>,
}

impl Dim {
    pub fn konst(value: i64) -> Dim {
        let mut terms = BTreeMap::new();
        if value != 0 {
            terms.insert(Vec::new(), value);
        }
        Dim { terms }
    }

    pub fn sym(id: SymId) -> Dim {
        Dim::atom(Atom::Sym(id))
    }

    fn atom(atom: Atom) -> Dim {
        let mut terms = BTreeMap::new();
        terms.insert(vec![atom], 1);
        Dim { terms }
    }

    /// The value when the expression has no symbols.
    pub fn as_const(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// The symbol when the expression is exactly one symbol.
    pub fn as_sym(&self) -> Option<SymId> {
        if self.terms.len() != 1 {
            return None;
        }
        let (mono, coeff) = self.terms.iter().next()?;
        match (mono.as_slice(), coeff) {
            ([Atom::Sym(id)], 1) => Some(*id),
            _ => None,
        }
    }

    /// Whether a `//` or `%` atom occurs at the top level of the polynomial.
    pub fn has_division(&self) -> bool {
        self.terms.keys().any(|m| {
            m.iter()
                .any(|a| matches!(a, Atom::FloorDiv(..) | Atom::Mod(..)))
        })
    }

    pub fn is_const(&self) -> bool {
        self.as_const().is_some()
    }

    /// A rough size measure, used to keep expressions bounded.
    pub fn size(&self) -> usize {
        self.terms
            .keys()
            .map(|m| 1 + m.iter().map(Atom::size).sum::<usize>())
            .sum()
    }

    /// Every symbol the expression mentions, including inside opaque atoms.
    pub fn symbols(&self) -> Vec<SymId> {
        let mut out = Vec::new();
        self.collect_symbols(&mut out);
        out.sort();
        out.dedup();
        out
    }

    fn collect_symbols(&self, out: &mut Vec<SymId>) {
        for mono in self.terms.keys() {
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
        let mut terms = self.terms.clone();
        for (mono, coeff) in &other.terms {
            let entry = terms.entry(mono.clone()).or_insert(0);
            *entry = entry.saturating_add(*coeff);
            if *entry == 0 {
                terms.remove(mono);
            }
        }
        Dim { terms }
    }

    pub fn neg(&self) -> Dim {
        Dim {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| (m.clone(), c.saturating_neg()))
                .collect(),
        }
    }

    pub fn sub(&self, other: &Dim) -> Dim {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &Dim) -> Dim {
        let mut out = Dim::default();
        for (m1, c1) in &self.terms {
            for (m2, c2) in &other.terms {
                let mut mono = m1.clone();
                mono.extend(m2.iter().cloned());
                mono.sort();
                let mut terms = BTreeMap::new();
                terms.insert(mono, c1.saturating_mul(*c2));
                out = out.add(&Dim { terms });
            }
        }
        out
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
            let constant = self.terms.get(&Vec::new()).copied().unwrap_or(0);
            let rest_divisible = self.terms.iter().all(|(m, c)| m.is_empty() || c % d == 0);
            if rest_divisible {
                let mut terms: BTreeMap<Monomial, i64> = self
                    .terms
                    .iter()
                    .filter(|(m, _)| !m.is_empty())
                    .map(|(m, c)| (m.clone(), c / d))
                    .collect();
                let q = floor_div_i64(constant, d);
                if q != 0 {
                    terms.insert(Vec::new(), q);
                }
                return Some(Dim { terms });
            }
        }
        if let Some(quotient) = self.exact_div(other) {
            return Some(quotient);
        }
        // floor(floor(a / b) / d) is floor(a / (b*d)) for positive b and d.
        if let (Some(d), true) = (other.as_const(), self.terms.len() == 1)
            && d > 0
            && let Some((mono, 1)) = self.terms.iter().next()
            && let [Atom::FloorDiv(a, b)] = mono.as_slice()
            && let Some(bv) = b.as_const()
            && bv > 0
        {
            return a.floordiv(&Dim::konst(bv.saturating_mul(d)));
        }
        // Pull whole multiples of a constant divisor out of the constant
        // term: floor((A - 2) / 2) + 1 is floor(A / 2), as users read it.
        if let Some(d) = other.as_const() {
            let constant = self.terms.get(&Vec::new()).copied().unwrap_or(0);
            let q = floor_div_i64(constant, d);
            if q != 0 {
                let rest = self.sub(&Dim::konst(q.saturating_mul(d)));
                return Some(rest.floordiv(other)?.add(&Dim::konst(q)));
            }
        }
        Some(self.opaque(Atom::FloorDiv(
            Box::new(self.clone()),
            Box::new(other.clone()),
        )))
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
            let constant = self.terms.get(&Vec::new()).copied().unwrap_or(0);
            if self.terms.iter().all(|(m, c)| m.is_empty() || c % d == 0) {
                return Some(Dim::konst(constant - d * floor_div_i64(constant, d)));
            }
        }
        if self.exact_div(other).is_some() {
            return Some(Dim::konst(0));
        }
        if let Some(d) = other.as_const() {
            let constant = self.terms.get(&Vec::new()).copied().unwrap_or(0);
            let q = floor_div_i64(constant, d);
            if q != 0 {
                return self.sub(&Dim::konst(q.saturating_mul(d))).modulo(other);
            }
        }
        Some(self.opaque(Atom::Mod(Box::new(self.clone()), Box::new(other.clone()))))
    }

    pub fn minimum(&self, other: &Dim) -> Dim {
        self.extremum(other, i64::min, Atom::Min)
    }

    pub fn maximum(&self, other: &Dim) -> Dim {
        self.extremum(other, i64::max, Atom::Max)
    }

    /// `min`/`max`: folded when both are known or equal, else an atom with
    /// its operands in canonical order (so `min(a, b)` equals `min(b, a)`).
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
                self.opaque(atom(Box::new(a.clone()), Box::new(b.clone())))
            }
        }
    }

    /// Wrap an opaque atom. Growth is bounded by the analysis, which swaps
    /// an expression whose `size` passes its limit for a fresh symbol.
    fn opaque(&self, atom: Atom) -> Dim {
        Dim::atom(atom)
    }

    /// `self / other` when `other` is a single monomial that divides every
    /// term of `self` exactly.
    fn exact_div(&self, other: &Dim) -> Option<Dim> {
        if other.terms.len() != 1 || self.terms.is_empty() {
            return None;
        }
        let (divisor, dc) = other.terms.iter().next()?;
        if *dc == 0 {
            return None;
        }
        let mut terms = BTreeMap::new();
        for (mono, coeff) in &self.terms {
            if coeff % dc != 0 {
                return None;
            }
            let mut rest = mono.clone();
            for atom in divisor {
                let pos = rest.iter().position(|a| a == atom)?;
                rest.remove(pos);
            }
            terms.insert(rest, coeff / dc);
        }
        Some(Dim { terms })
    }

    /// Substitute symbols; atoms are re-simplified after substitution.
    pub fn substitute(&self, f: &mut dyn FnMut(SymId) -> Option<Dim>) -> Dim {
        let mut out = Dim::default();
        for (mono, coeff) in &self.terms {
            let mut product = Dim::konst(*coeff);
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
        for (mono, coeff) in &self.terms {
            let mut product = *coeff;
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

    /// The expression in Python syntax, with symbols spelled by `name`.
    /// Terms of higher degree come first, the constant last: `2*T + 1`.
    pub fn display(&self, name: &dyn Fn(SymId) -> String) -> String {
        if self.terms.is_empty() {
            return "0".to_string();
        }
        let mut terms: Vec<(&Monomial, &i64)> = self.terms.iter().collect();
        terms.sort_by_key(|(m, _)| std::cmp::Reverse(m.len()));
        let mut out = String::new();
        for (i, (mono, coeff)) in terms.iter().enumerate() {
            let coeff = **coeff;
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
            for atom in mono.iter() {
                factors.push(atom.display(name, mono.len() > 1 || magnitude != 1));
            }
            out.push_str(&factors.join("*"));
        }
        out
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

    fn display(&self, name: &dyn Fn(SymId) -> String, in_product: bool) -> String {
        let operand = |d: &Dim| {
            let text = d.display(name);
            let compound = d.terms.len() > 1
                || d.terms
                    .keys()
                    .any(|m| m.len() > 1 || m.iter().any(|a| !matches!(a, Atom::Sym(_))));
            let scaled = d.terms.values().any(|c| *c != 1) && !d.is_const();
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

impl Dim {
    /// Rewrite `(a // b) * b` to `a` and `a % b` to `0` wherever
    /// `divisible(a, b)` says `b` divides `a` (a guard the analysis recorded).
    pub fn cancel_exact_div(&self, divisible: &dyn Fn(&Dim, &Dim) -> bool) -> Dim {
        let mut out = Dim::default();
        for (mono, coeff) in &self.terms {
            let mut rest: Vec<Atom> = mono.clone();
            let mut product = Dim::konst(*coeff);
            let mut i = 0;
            while i < rest.len() {
                let replaced = match &rest[i] {
                    Atom::Mod(a, b) if divisible(a, b) => Some((Dim::konst(0), Vec::new())),
                    Atom::FloorDiv(a, b) if divisible(a, b) => {
                        // The divisor must be a monomial whose atoms all occur in the rest.
                        match b.terms.iter().next() {
                            Some((bm, 1)) if b.terms.len() == 1 => {
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
                                    Some(((**a).clone(), others))
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
                    Some((value, others))
                        if value == Dim::konst(0)
                            && others.is_empty()
                            && matches!(rest[i], Atom::Mod(..)) =>
                    {
                        product = Dim::konst(0);
                        rest.clear();
                    }
                    Some((value, others)) => {
                        product = product.mul(&value);
                        rest = others;
                        i = 0;
                    }
                    None => i += 1,
                }
            }
            let mut terms = BTreeMap::new();
            terms.insert(rest, 1);
            out = out.add(&product.mul(&Dim { terms }));
        }
        out
    }
}
