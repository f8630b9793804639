//! `ShapeEnv`: the symbols of one analysis, their names, and what is known of them.
//!
//! Like torch's ShapeEnv it mints symbols named after their sources, records
//! the guards the analysis had to assume, and learns replacements when two
//! sizes are found equal (a symbol found equal to 768 is 768 from then on).
//! A guard that contradicts what is known is reported to the caller.

use rustc_hash::FxHashMap;

use crate::dim::{Dim, SymId};

/// What the environment knows of one symbol.
#[derive(Debug, Clone)]
pub struct SymbolInfo {
    /// The name shown to the user (unique within the environment).
    pub name: String,
    /// The name asked for, before it was made unique (`B` for `B_2`).
    pub base: String,
    /// An anonymous symbol stands for a size nobody named; it is shown as `?`.
    pub anonymous: bool,
    /// A conventional name the analysis made up (`N`, `H`); a name from the
    /// user's code wins over it when the two are found equal.
    pub weak: bool,
}

/// The outcome of asserting that two sizes are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unified {
    /// They were already known equal.
    Equal,
    /// They are equal from now on (a replacement was learned).
    Learned,
    /// They cannot be equal: both sides are known and differ.
    Contradiction,
    /// Nothing could be concluded; the equality is kept as a guard.
    Assumed,
}

/// A fact the analysis had to assume, in Python syntax for hover.
#[derive(Debug, Clone)]
pub struct Guard {
    pub lhs: Dim,
    pub rhs: Dim,
    /// Assumed by an op that then failed: torch never got to assume it,
    /// so it is shown nowhere (it still counts as a fact learned, so
    /// `generation` only grows).
    pub void: bool,
    /// The op that assumed it, as the analysis named it (see `set_site`).
    pub site: Option<GuardSite>,
}

/// Where a guard was assumed: the op (`Linear`, `view`, `@`) and the byte
/// offset of its call in the analysed text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardSite {
    pub op: std::rc::Rc<str>,
    pub at: usize,
}

#[derive(Debug, Clone, Default)]
pub struct ShapeEnv {
    symbols: Vec<SymbolInfo>,
    replacements: FxHashMap<SymId, Dim>,
    divisible: Vec<(Dim, Dim)>,
    guards: Vec<Guard>,
    name_counts: FxHashMap<String, u32>,
    /// The shapes of the operands of the op being run (see `set_operands`).
    operands: Vec<std::rc::Rc<Vec<Dim>>>,
    /// Sizes nobody named, or named only by convention, that the op being
    /// run solved (see `named_apart`).
    solved_by_op: Vec<SymId>,
    /// Equalities of two named sizes of one operand that ops needed, in
    /// the order met (see `take_assumptions`).
    assumptions: Vec<(Dim, Dim)>,
    /// Per open branch (innermost last), the symbols it learned a
    /// replacement for: a branch the analysis cannot decide must not teach
    /// its alternative, nor the code after both, what only it showed.
    branches: Vec<Vec<SymId>>,
    /// Twice the replacements taken back when branches closed, so that
    /// `facts` only grows.
    retracted: usize,
    /// The op running now, which guards assumed now are put down to.
    site: Option<GuardSite>,
    /// A symbol known to lie in a range of integers, both ends included:
    /// the turn of a loop the analysis runs once for all of its turns
    /// (`for _ in range(16)`). Comparisons it alone decides are decided.
    bounded: Option<(SymId, i64, i64)>,
    /// See `named_merges`.
    named_merges: usize,
}

/// The replacements one branch learned, as `close_branch` hands them back.
#[derive(Debug, Default)]
pub struct BranchFacts(Vec<(SymId, Dim)>);

/// Ranges of the bounded symbol shorter than this are tried value by
/// value (see `range_of`).
const BOUNDED_POINTS: i64 = 128;

/// How many rounds of substitution `resolve` applies; replacements never
/// form cycles, so this only bounds pathological chains.
const RESOLVE_ROUNDS: usize = 16;

impl ShapeEnv {
    pub fn new() -> ShapeEnv {
        ShapeEnv::default()
    }

    /// A new symbol named after its source. Names are unique: a second `B`
    /// that is not known to be the first becomes `B_2`.
    pub fn symbol(&mut self, name: &str) -> Dim {
        self.named(name, false)
    }

    /// A symbol with a made-up conventional name (`N`, `C`, `H`, `W`).
    pub fn weak_symbol(&mut self, name: &str) -> Dim {
        self.named(name, true)
    }

    fn named(&mut self, name: &str, weak: bool) -> Dim {
        let count = self.name_counts.entry(name.to_string()).or_insert(0);
        *count += 1;
        let unique = if *count == 1 {
            name.to_string()
        } else {
            format!("{name}_{count}")
        };
        self.push(SymbolInfo {
            name: unique,
            base: name.to_string(),
            anonymous: false,
            weak,
        })
    }

    /// A size nobody named (shown as `?`).
    pub fn anonymous(&mut self) -> Dim {
        let name = format!("_{}", self.symbols.len());
        self.push(SymbolInfo {
            name,
            base: String::new(),
            anonymous: true,
            weak: true,
        })
    }

    /// A new symbol made the way `id` was, with the name running the code
    /// that made `id` again would give it (`B_3` after `B_2`): a memoised
    /// call that made symbols replays with fresh ones.
    pub fn remint(&mut self, id: SymId) -> Dim {
        match self.info(id) {
            Some(info) if !info.anonymous => {
                let (base, weak) = (info.base.clone(), info.weak);
                self.named(&base, weak)
            }
            _ => self.anonymous(),
        }
    }

    fn push(&mut self, info: SymbolInfo) -> Dim {
        let id = SymId(self.symbols.len() as u32);
        self.symbols.push(info);
        Dim::sym(id)
    }

    pub fn info(&self, id: SymId) -> Option<&SymbolInfo> {
        self.symbols.get(id.0 as usize)
    }

    pub fn is_anonymous(&self, id: SymId) -> bool {
        self.info(id).is_none_or(|s| s.anonymous)
    }

    /// The expression with every learned replacement applied.
    pub fn resolve(&self, dim: &Dim) -> Dim {
        // Most sizes are constants or symbols nothing replaced: nothing to do.
        if dim.is_const()
            || dim
                .as_sym()
                .is_some_and(|s| !self.replacements.contains_key(&s))
            || (self.replacements.is_empty() && !dim.has_division())
        {
            return dim.clone();
        }
        let mut current = dim.clone();
        for _ in 0..RESOLVE_ROUNDS {
            if !current
                .symbols()
                .iter()
                .any(|s| self.replacements.contains_key(s))
            {
                break;
            }
            current = current.substitute(&mut |id| self.replacements.get(&id).cloned());
        }
        if self.divisible.is_empty() || !current.has_division() {
            current
        } else {
            current.cancel_exact_div(&|a, b| self.divisible.iter().any(|(x, y)| x == a && y == b))
        }
    }

    /// Whether the resolved expression mentions an anonymous symbol.
    pub fn has_anonymous(&self, dim: &Dim) -> bool {
        self.resolve(dim)
            .symbols()
            .into_iter()
            .any(|s| self.is_anonymous(s))
    }

    /// The resolved value when it is a known integer.
    pub fn value(&self, dim: &Dim) -> Option<i64> {
        self.resolve(dim).as_const()
    }

    /// A count in Python syntax, expanded (`Dim::display_expanded`); `?`
    /// when an anonymous symbol is involved.
    pub fn display_count(&self, dim: &Dim) -> String {
        self.shown(dim, false)
    }

    /// Python syntax for the user; `?` when an anonymous symbol is involved.
    pub fn display(&self, dim: &Dim) -> String {
        self.shown(dim, true)
    }

    fn shown(&self, dim: &Dim, factored: bool) -> String {
        let resolved = self.resolve(dim);
        if resolved.symbols().into_iter().any(|s| self.is_anonymous(s)) {
            return "?".to_string();
        }
        let name = |id| {
            self.info(id)
                .map(|s| s.name.clone())
                .unwrap_or_else(|| "?".to_string())
        };
        if factored {
            resolved.display(&name)
        } else {
            resolved.display_expanded(&name)
        }
    }

    /// `display`, with some symbols spelled otherwise (the names a
    /// function gives sizes it reads: `B` for the caller's `b`).
    pub fn display_with(&self, dim: &Dim, rename: &dyn Fn(SymId) -> Option<String>) -> String {
        let resolved = self.resolve(dim);
        // A size nobody could read shows as `?`, unless the caller names it.
        if resolved
            .symbols()
            .into_iter()
            .any(|s| self.is_anonymous(s) && rename(s).is_none())
        {
            return "?".to_string();
        }
        resolved.display(&|id| {
            rename(id).unwrap_or_else(|| {
                self.info(id)
                    .map(|s| s.name.clone())
                    .unwrap_or_else(|| "?".to_string())
            })
        })
    }

    /// Whether the two sizes are known to be equal.
    pub fn known_equal(&self, a: &Dim, b: &Dim) -> bool {
        let (a, b) = (self.resolve(a), self.resolve(b));
        a == b || (self.bounded.is_some() && self.range_of(&a.sub(&b)) == Some((0, 0)))
    }

    /// Whether the two sizes are known to differ (their difference is a
    /// non-zero constant, or never zero over the bounded symbol's range).
    pub fn known_different(&self, a: &Dim, b: &Dim) -> bool {
        let diff = self.resolve(a).sub(&self.resolve(b));
        match diff.as_const() {
            Some(d) => d != 0,
            None => self
                .range_of(&diff)
                .is_some_and(|(lo, hi)| lo > 0 || hi < 0),
        }
    }

    /// An equality that holds for some turns of a bounded loop only: kept as
    /// a guard (which the run that assumed it sees as a new fact), never
    /// learned as a replacement of the turn's symbol.
    fn assume_bounded(&mut self, lhs: Dim, rhs: Dim) -> Unified {
        self.guards.push(Guard {
            lhs,
            rhs,
            void: false,
            site: self.site.clone(),
        });
        Unified::Assumed
    }

    /// From now on `s` lies in `lo..=hi` (see `bounded`); one symbol at a
    /// time.
    pub fn bound(&mut self, s: SymId, lo: i64, hi: i64) {
        self.bounded = Some((s, lo, hi));
    }

    /// Whether `dim` mentions the bounded symbol (see `bounded`).
    pub fn mentions_bounded(&self, dim: &Dim) -> bool {
        self.bounded
            .is_some_and(|(s, _, _)| self.resolve(dim).symbols().contains(&s))
    }

    /// The bounded symbol is a free size again.
    pub fn unbound(&mut self) {
        self.bounded = None;
    }

    /// The least and the greatest value of `dim` while the bounded symbol
    /// runs over its range, when no other symbol is in it: every value is
    /// tried for short ranges, the two ends for a linear expression.
    /// `None` whenever no symbol is bounded.
    pub fn range_of(&self, dim: &Dim) -> Option<(i64, i64)> {
        let (s, lo, hi) = self.bounded?;
        let dim = self.resolve(dim);
        if let Some(c) = dim.as_const() {
            return Some((c, c));
        }
        if dim.symbols().iter().any(|other| *other != s) {
            return None;
        }
        let at = |v: i64| dim.eval(&|id| (id == s).then_some(v));
        let points: Vec<i64> = if hi - lo < BOUNDED_POINTS {
            (lo..=hi).collect()
        } else {
            // Linear when one step up always adds the same constant.
            let next = dim.substitute(&mut |id| (id == s).then(|| Dim::sym(s).add(&Dim::konst(1))));
            next.sub(&dim).as_const()?;
            vec![lo, hi]
        };
        let mut range: Option<(i64, i64)> = None;
        for p in points {
            let v = at(p)?;
            range = Some(range.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
        }
        range
    }

    /// Whether `a` and `b` differ for every choice of positive sizes:
    /// known different, or their difference is a sum of products of sizes
    /// all of one sign (`4*B*H*W` and `3*B*H*W` differ by `B*H*W`).
    pub fn differ_for_positive_sizes(&self, a: &Dim, b: &Dim) -> bool {
        let diff = self.resolve(a).sub(&self.resolve(b));
        diff != Dim::konst(0) && (diff.never_positive() || diff.neg().never_positive())
    }

    /// Assert `a == b`: learn a replacement when one side can be solved for,
    /// report a contradiction when both sides are known and differ.
    pub fn unify(&mut self, a: &Dim, b: &Dim) -> Unified {
        let (ra, rb) = (self.resolve(a), self.resolve(b));
        if ra == rb {
            return Unified::Equal;
        }
        let diff = ra.sub(&rb);
        if diff.is_const() {
            return Unified::Contradiction;
        }
        // Over the bounded symbol's range the two are equal always or never:
        // nothing to learn about the symbol, which stands for every turn.
        if let Some((lo, hi)) = self.range_of(&diff) {
            return if (lo, hi) == (0, 0) {
                Unified::Equal
            } else if lo > 0 || hi < 0 {
                Unified::Contradiction
            } else {
                self.assume_bounded(ra, rb)
            };
        }
        // Two different sizes of one operand, both named by the code (`T`
        // and `dim` of `x.transpose(1, 2)` after `C == dim`, `B` and
        // `n_heads` of attention scores): equal only by accident, so the
        // equality is assumed, said, and not learned, which would rename
        // one size to the other all over the function.
        if self.named_apart(&ra, &rb) {
            self.guards.push(Guard {
                lhs: ra.clone(),
                rhs: rb.clone(),
                void: false,
                site: self.site.clone(),
            });
            self.assumptions.push((ra, rb));
            return Unified::Assumed;
        }
        // Prefer to solve for an anonymous symbol, then for the newest named
        // one, so the user's older names survive.
        let mut candidates: Vec<SymId> = diff.symbols();
        let weak = |s: &SymId| self.info(*s).is_none_or(|i| i.weak);
        candidates.sort_by_key(|s| (!self.is_anonymous(*s), !weak(s), std::cmp::Reverse(s.0)));
        for s in candidates {
            if let Some(solution) = solve_linear(&diff, s) {
                // A size is positive: `n == 2*n` does not make `n` zero, nor
                // `hid == 3*hid + emb` make `emb` -2*hid; such a path is
                // impossible. Keep it as an assumption.
                if solution.symbols().contains(&s) || solution.never_positive() {
                    continue;
                }
                self.learn(s, solution);
                return Unified::Learned;
            }
        }
        // A factor both sides share cancels, sizes being positive:
        // `p1*p2*c == channels*p1*p2` (a patch embedding's LayerNorm) says
        // `c == channels`.
        for s in ra.symbols() {
            if !rb.symbols().contains(&s) {
                continue;
            }
            let factor = Dim::sym(s);
            if let (Some(qa), Some(qb)) = (ra.exact_div(&factor), rb.exact_div(&factor)) {
                return self.unify(&qa, &qb);
            }
        }
        self.guards.push(Guard {
            lhs: ra,
            rhs: rb,
            void: false,
            site: self.site.clone(),
        });
        Unified::Assumed
    }

    /// The op about to run, replacing (and returning) the one before: what
    /// the guards it assumes are put down to.
    pub fn set_site(&mut self, site: Option<GuardSite>) -> Option<GuardSite> {
        std::mem::replace(&mut self.site, site)
    }

    /// The operands of the op about to run, replacing (and returning) the
    /// ones before: equalities between two of the code's named sizes that
    /// stand at different places of one of them are assumptions (see
    /// `unify`).
    /// The shapes of the operands of the op being run (see `set_operands`).
    pub fn operands(&self) -> &[std::rc::Rc<Vec<Dim>>] {
        &self.operands
    }

    pub fn set_operands(
        &mut self,
        operands: Vec<std::rc::Rc<Vec<Dim>>>,
    ) -> Vec<std::rc::Rc<Vec<Dim>>> {
        self.solved_by_op.clear();
        std::mem::replace(&mut self.operands, operands)
    }

    /// Whether ops made assumptions since they were last taken.
    pub fn has_assumptions(&self) -> bool {
        !self.assumptions.is_empty()
    }

    /// The assumptions ops made since the last call, each once.
    pub fn take_assumptions(&mut self) -> Vec<(Dim, Dim)> {
        std::mem::take(&mut self.assumptions)
    }

    /// Whether `a` and `b` are sizes at two different places of one
    /// operand, both made of names the code gave (a made-up conventional
    /// name, as for a square matrix's two dims, is no such name).
    fn named_apart(&self, a: &Dim, b: &Dim) -> bool {
        if self.operands.is_empty() || a.is_const() || b.is_const() {
            return false;
        }
        let named = |d: &Dim| {
            d.symbols()
                .iter()
                .all(|s| self.info(*s).is_some_and(|i| !i.weak && !i.anonymous))
        };
        if !named(a) || !named(b) {
            return false;
        }
        // A place whose size nobody named until this op solved it (`?`
        // of `[B, H, T, ?] + mask[S, S]`, now `S`) does not keep `S` apart
        // from the size beside it: the code named only one of them.
        let named_before = |d: &Dim| !self.solved_by_op_through(d, RESOLVE_ROUNDS);
        self.operands.iter().any(|shape| {
            let at = |x: &Dim| {
                shape
                    .iter()
                    .position(|d| named_before(d) && self.resolve(d) == *x)
            };
            matches!((at(a), at(b)), (Some(i), Some(j)) if i != j)
        })
    }

    /// Whether `d`, followed through what earlier ops learned, reaches a
    /// size nobody named until the op being run solved it.
    fn solved_by_op_through(&self, d: &Dim, rounds: usize) -> bool {
        d.symbols().into_iter().any(|s| {
            self.solved_by_op.contains(&s)
                || (rounds > 0
                    && self
                        .replacements
                        .get(&s)
                        .is_some_and(|r| self.solved_by_op_through(r, rounds - 1)))
        })
    }

    /// A mark to give `void_guards_since`: the guards assumed so far.
    pub fn guard_mark(&self) -> usize {
        self.guards.len()
    }

    /// The guards assumed since `mark` came from a computation that
    /// failed: no longer shown as assumptions.
    pub fn void_guards_since(&mut self, mark: usize) {
        for g in self.guards.iter_mut().skip(mark) {
            g.void = true;
        }
    }

    /// Record that `b` divides `a` (from `assert a % b == 0`).
    pub fn assume_divisible(&mut self, a: &Dim, b: &Dim) {
        let (ra, rb) = (self.resolve(a), self.resolve(b));
        // Of two numbers it says nothing (and would make every checked
        // constructor, `assert n_embd % n_head == 0`, learn a fact).
        if ra.as_const().is_some() && rb.as_const().is_some() {
            return;
        }
        // `3*C` divisible by `3*h` is `C` divisible by `h`, which is what
        // `h*(C // h)` asks (floor division cancels the factor too).
        let (ra, rb) = match ra.without_common_factor(&rb) {
            Some((a, b)) if b.as_const().is_none() => (a, b),
            _ => (ra, rb),
        };
        if !self.divisible.contains(&(ra.clone(), rb.clone())) {
            self.divisible.push((ra, rb));
        }
    }

    /// Guards recorded so far, as Python text (`C == 768`).
    pub fn guards(&self) -> Vec<String> {
        self.guards
            .iter()
            .filter(|g| !g.void)
            .map(|g| format!("{} == {}", self.display(&g.lhs), self.display(&g.rhs)))
            .collect()
    }

    /// The facts assumed about any of `symbols`, as Python text for hover:
    /// equalities that could not be decided and divisibility (`C % n_head == 0`).
    pub fn guards_for(&self, symbols: &[SymId]) -> Vec<String> {
        let touches = |d: &Dim| {
            self.resolve(d)
                .symbols()
                .iter()
                .any(|s| symbols.contains(s))
        };
        let mut out: Vec<String> = Vec::new();
        for g in self.guards.iter().filter(|g| !g.void) {
            if touches(&g.lhs) || touches(&g.rhs) {
                out.push(format!(
                    "{} == {}",
                    self.display(&g.lhs),
                    self.display(&g.rhs)
                ));
            }
        }
        for (a, b) in &self.divisible {
            if touches(a) || touches(b) {
                out.push(format!("{} % {} == 0", self.display(a), self.display(b)));
            }
        }
        out.retain(|g| !g.contains('?'));
        out.sort();
        out.dedup();
        out
    }

    /// Every assumed fact once, with the symbols it mentions and the op
    /// that assumed it, for callers that look facts up for many shapes (see
    /// `guards_for`). Facts are said simply: `a == b` and `b == a` are one,
    /// and `C == n_head*(C // n_head)` is `C % n_head == 0`.
    pub fn guard_facts(&self) -> Vec<(Vec<SymId>, String, Option<GuardSite>)> {
        let mut out: Vec<(Vec<SymId>, String, Option<GuardSite>)> = Vec::new();
        for g in self.guards.iter().filter(|g| !g.void) {
            let (lhs, rhs) = (self.resolve(&g.lhs), self.resolve(&g.rhs));
            let mut syms = lhs.symbols();
            syms.extend(rhs.symbols());
            let text = self.say_equal(&lhs, &rhs);
            out.push((syms, text, g.site.clone()));
        }
        for (a, b) in &self.divisible {
            let mut syms = self.resolve(a).symbols();
            syms.extend(self.resolve(b).symbols());
            out.push((
                syms,
                format!("{} % {} == 0", self.display(a), self.display(b)),
                None,
            ));
        }
        out.retain(|(_, text, _)| !text.contains('?') && !text.is_empty());
        let mut seen: Vec<String> = Vec::new();
        out.retain(|(_, text, _)| {
            let fresh = !seen.contains(text);
            seen.push(text.clone());
            fresh
        });
        out
    }

    /// `a == b` in its simplest words, the same whichever side is which;
    /// empty when it says nothing (both sides the same once displayed).
    fn say_equal(&self, a: &Dim, b: &Dim) -> String {
        // `x == k*(x // k)` holds exactly when `k` divides `x`.
        for (x, y) in [(a, b), (b, a)] {
            for s in y.symbols().into_iter().chain(x.symbols()) {
                let k = Dim::sym(s);
                if let Some(q) = x.floordiv(&k)
                    && q.mul(&k) == *y
                    && q.has_division()
                {
                    return format!("{} % {} == 0", self.display(x), self.display(&k));
                }
            }
        }
        let (left, right) = (self.display(a), self.display(b));
        if left == right {
            return String::new();
        }
        // One order for both ways round: the shorter side last (`C == 768`).
        if (right.len(), &right) > (left.len(), &left) {
            format!("{right} == {left}")
        } else {
            format!("{left} == {right}")
        }
    }

    /// The number of symbols minted so far.
    /// Grows whenever the environment learns anything (a symbol, a
    /// replacement, a guard, a divisibility): equal generations mean equal
    /// environments, so work done under one still holds.
    pub fn generation(&self) -> usize {
        self.symbols.len() + self.facts()
    }

    /// Grows whenever the environment learns a fact about symbols it has
    /// (a replacement, a guard, a divisibility); a new symbol is no fact
    /// about the others, so what was derived before still holds.
    pub fn facts(&self) -> usize {
        self.replacements.len() + self.retracted + self.guards.len() + self.divisible.len()
    }

    /// How many times a size the code named was learned to be made of
    /// another it named (`planes` is `inplanes`): a run that learns such a
    /// thing holds only for some settings of its sizes.
    pub fn named_merges(&self) -> usize {
        self.named_merges
    }

    fn learn(&mut self, s: SymId, solution: Dim) {
        if let Some(branch) = self.branches.last_mut() {
            branch.push(s);
        }
        let named = |id: SymId| self.info(id).is_some_and(|i| !i.weak && !i.anonymous);
        if named(s) && solution.symbols().into_iter().any(named) {
            self.named_merges += 1;
        }
        if !self.operands.is_empty() && self.info(s).is_none_or(|i| i.weak) {
            self.solved_by_op.push(s);
        }
        self.replacements.insert(s, solution);
    }

    /// Start one of the alternatives of a condition the analysis cannot
    /// decide.
    pub fn open_branch(&mut self) {
        self.branches.push(Vec::new());
    }

    /// End the innermost branch: what it learned is taken back and handed
    /// to the caller, which keeps it through `keep` where the paths after
    /// the condition all learned it.
    pub fn close_branch(&mut self) -> BranchFacts {
        let learned = self.branches.pop().unwrap_or_default();
        let mut facts = Vec::with_capacity(learned.len());
        for s in learned {
            if let Some(d) = self.replacements.remove(&s) {
                facts.push((s, d));
            }
        }
        self.retracted += 2 * facts.len();
        BranchFacts(facts)
    }

    /// Keep what one path learned (the only one that goes on), or what
    /// both learned alike.
    pub fn keep(&mut self, a: BranchFacts, b: Option<BranchFacts>) {
        for (s, d) in a.0 {
            let agreed = b.as_ref().is_none_or(|b| self.learned_alike(s, &d, b));
            // A replacement taken back may have been made moot by what
            // the other branch learned (a cycle must never form).
            if agreed
                && !self.replacements.contains_key(&s)
                && !self.resolve(&d).symbols().contains(&s)
            {
                self.learn(s, d);
            }
        }
    }

    /// Keep what every one of several paths learned alike (each path's
    /// facts from `close_branch`); with one path, what it learned.
    pub fn keep_common(&mut self, mut paths: Vec<BranchFacts>) {
        if paths.len() <= 1 {
            if let Some(only) = paths.pop() {
                self.keep(only, None);
            }
            return;
        }
        let first = paths.remove(0);
        let common: Vec<(SymId, Dim)> = first
            .0
            .into_iter()
            .filter(|(s, d)| paths.iter().all(|other| self.learned_alike(*s, d, other)))
            .collect();
        self.keep(BranchFacts(common), None);
    }

    /// Whether `other` learned `s` as `d` too, alike as they stand now:
    /// each path may have fixed a rank with sizes of its own, made one
    /// since (`C` of either branch found to be `channels`).
    fn learned_alike(&self, s: SymId, d: &Dim, other: &BranchFacts) -> bool {
        other.0.iter().any(|(t, e)| {
            (*t == s && e == d)
                || (self.resolve(&Dim::sym(*t)) == self.resolve(&Dim::sym(s))
                    && self.resolve(e) == self.resolve(d))
        })
    }

    pub fn symbol_count(&self) -> usize {
        self.symbols.len()
    }
}

/// Solve `diff == 0` for `s` when `s` occurs only as a plain linear term
/// whose coefficient divides the rest exactly.
fn solve_linear(diff: &Dim, s: SymId) -> Option<Dim> {
    let target = Dim::sym(s);
    // Try coefficient ±1 and small ones by probing: diff = c*s + rest.
    for c in [1i64, -1, 2, -2, 3, -3, 4, -4] {
        let rest = diff.sub(&target.mul(&Dim::konst(c)));
        if rest.symbols().contains(&s) {
            continue;
        }
        // c*s + rest = 0  =>  s = -rest / c, exact division only.
        let neg = rest.neg();
        if c == 1 {
            return Some(neg);
        }
        if c == -1 {
            return Some(rest);
        }
        let q = neg.floordiv(&Dim::konst(c))?;
        if q.mul(&Dim::konst(c)) == neg {
            return Some(q);
        }
        return None;
    }
    None
}
