//! Sizes that differ between the runs a site saw: one name per way they
//! differ, the code's own where it has one, else a size already named
//! times, plus or over a small number (`2*s3`), else a new `s` name.

use rustc_hash::FxHashMap;
use shapels_shapes::Dim;

use super::{Namer, PENDING, plus_small_constant};
use crate::report::{DimView, TensorInfo};

impl Namer<'_> {
    /// The name of a dim whose runs (made in `calls`) showed `values`:
    /// a mark until `names` hands out the names.
    pub(super) fn name(&mut self, values: Vec<u32>, calls: &[u32]) -> String {
        let id = match self.chosen.get(&values) {
            Some(id) => *id,
            None => {
                self.varying.push(Varying {
                    values: values.clone(),
                    by_call: Vec::new(),
                });
                self.chosen.insert(values.clone(), self.varying.len() - 1);
                self.varying.len() - 1
            }
        };
        // A call that ran the site twice (a loop) says nothing about which
        // run goes with which run of another site.
        let mut by_call: Vec<(u32, u32)> = calls.iter().copied().zip(values).collect();
        by_call.sort_unstable();
        let once = by_call.windows(2).all(|w| w[0].0 != w[1].0);
        let seen = &mut self.varying[id].by_call;
        if once && seen.len() < 4 && !seen.contains(&by_call) {
            seen.push(by_call);
        }
        format!("{PENDING}{id}:{}", self.scope)
    }

    /// How every varying dim is named, by its mark's number.
    fn names(&mut self) -> Vec<Naming> {
        let link = self.links();
        let mut names: Vec<Option<Naming>> = vec![None; self.varying.len()];
        // Sizes a variable of the code names pick their names before those
        // only a parameter does: a parameter of the same name elsewhere
        // (another block's `in_planes`) must not push them to a number.
        let by_assignment = |id: &usize| {
            matches!(
                self.candidates.get(&self.varying[link[*id]].values),
                Some((_, false))
            )
        };
        let (mut order, rest): (Vec<usize>, Vec<usize>) =
            (0..self.varying.len()).partition(by_assignment);
        order.extend(rest);
        let mut next_number: FxHashMap<String, usize> = FxHashMap::default();
        for id in order {
            let root = link[id];
            if let Some(name) = names[root].clone() {
                names[id] = Some(name);
                continue;
            }
            // A parameter's name already given to another size (two
            // blocks' `in_channels`) takes a number, shown without it in
            // the functions where no other size of that name shows; where
            // one does, `in_channels2` is a name nobody wrote, and the size
            // is shown nameless (see `scoped_names::unsuffix`).
            let (base, users, param) = match self.candidates.get(&self.varying[root].values) {
                Some((name, param)) => (name.clone(), true, *param),
                _ => {
                    // A size that is, in every call, a simple function of
                    // one already named (the map an interpolation doubles)
                    // is written as that: `2*s3` says what `s7` hides.
                    if let Some(related) = self.in_terms_of_named(root, &names) {
                        names[root] = Some(related.clone());
                        names[id] = Some(related);
                        continue;
                    }
                    ("s".to_string(), false, false)
                }
            };
            let mut name = base.clone();
            // Numbers go up from where the base's last one stopped: trying
            // each from 2 again made naming quadratic in the unnamed sizes
            // (`s2` ... `s200`), 2-3 % of a small model file's check.
            let k = next_number.entry(base.clone()).or_insert(1);
            while self.taken.contains(&name) || (base == "s" && name == "s") {
                *k += 1;
                name = format!("{base}{k}");
            }
            self.taken.insert(name.clone());
            if users && name != base {
                if param {
                    self.numbered_params.insert(name.clone());
                }
                self.numbered.insert(name.clone(), base);
            }
            names[root] = Some(Naming::Plain(name.clone()));
            names[id] = Some(Naming::Plain(name));
        }
        names
            .into_iter()
            .map(|n| n.unwrap_or(Naming::Plain(String::new())))
            .collect()
    }

    /// The text of varying dim `id` in the function numbered `scope`: the
    /// name the code there gives its values, where it gives one, else its
    /// name for the file (or the one it is written in terms of, so named).
    fn render(&self, names: &[Naming], id: usize, scope: usize) -> String {
        if let Some(own) = self
            .local_varying
            .get(scope)
            .and_then(|l| l.get(&self.varying[id].values))
        {
            return own.clone();
        }
        if let Some(axis) = self.axis_varying.get(scope).and_then(|axes| {
            let values = &self.varying[id].values;
            let capped = values.len() >= super::super::MAX_HITS;
            let mut runs = values.clone();
            runs.dedup();
            // Two axes that went the same way name neither.
            let mut naming = axes.iter().filter(|a| a.names(&runs, capped));
            naming.next().filter(|_| naming.next().is_none())
        }) {
            return axis.name.clone();
        }
        match &names[id] {
            Naming::Plain(name) => name.clone(),
            Naming::Related(base, relation) => {
                // A factor the runs share is shown by the names the
                // function gives its sizes, as a shape there is.
                let local = &self.local[scope];
                let factor = |d: &Dim| {
                    self.env
                        .display_with(d, &|s| local.get(&Dim::sym(s)).cloned())
                };
                relation.render(&self.render(names, *base, scope), &factor)
            }
            Naming::Product(a, b) => format!(
                "{}*{}",
                operand(&self.render(names, *a, scope)),
                operand(&self.render(names, *b, scope))
            ),
        }
    }

    /// The varying dim `v` written in terms of one already named, when in
    /// every call that ran both at some site it was that one times a
    /// small number, that one plus or minus a small number, or that one
    /// floor-divided by a small number.
    fn in_terms_of_named(&self, v: usize, names: &[Option<Naming>]) -> Option<Naming> {
        // Quadratic in the varying dims, as `links` is.
        if self.varying.len() > MAX_LINKED {
            return None;
        }
        let runs_of = |id: usize| self.varying[id].by_call.iter().filter(|r| r.len() >= 2);
        for mine in runs_of(v) {
            for (u, name) in names.iter().enumerate() {
                if u == v || name.is_none() {
                    continue;
                }
                for theirs in runs_of(u) {
                    if theirs.len() != mine.len()
                        || theirs.iter().zip(mine).any(|(a, b)| a.0 != b.0)
                    {
                        continue;
                    }
                    let pairs: Option<Vec<(&Dim, &Dim)>> = mine
                        .iter()
                        .zip(theirs)
                        .map(|(a, b)| Some((self.values.dim(a.1)?, self.values.dim(b.1)?)))
                        .collect();
                    if let Some(relation) = pairs.and_then(|p| simple_relation(&p)) {
                        return Some(Naming::Related(u, relation));
                    }
                }
            }
        }
        self.product_of_named(v, names)
    }

    /// The varying dim `v` as the product of two named ones, when in every
    /// call that ran all three it was their product: the `h*w` positions of
    /// an attention over a feature map whose height and width differ
    /// between calls. A product that holds only where a factor is 1 says
    /// nothing: in some call, neither factor may be 1.
    fn product_of_named(&self, v: usize, names: &[Option<Naming>]) -> Option<Naming> {
        let runs_of = |id: usize| self.varying[id].by_call.iter().filter(|r| r.len() >= 2);
        let one = Dim::konst(1);
        for mine in runs_of(v) {
            let same_calls = |r: &&Vec<(u32, u32)>| {
                r.len() == mine.len() && r.iter().zip(mine).all(|(a, b)| a.0 == b.0)
            };
            // The named dims seen in exactly the calls `mine` was, with
            // their values in those calls.
            let mut factors: Vec<(usize, Vec<&Dim>)> = Vec::new();
            for (u, name) in names.iter().enumerate() {
                if u == v || name.is_none() || factors.len() >= MAX_FACTORS {
                    continue;
                }
                if let Some(theirs) = runs_of(u).find(same_calls) {
                    let values: Option<Vec<&Dim>> =
                        theirs.iter().map(|(_, n)| self.values.dim(*n)).collect();
                    if let Some(values) = values {
                        factors.push((u, values));
                    }
                }
            }
            let wanted: Option<Vec<&Dim>> = mine.iter().map(|(_, n)| self.values.dim(*n)).collect();
            let wanted = wanted?;
            for (i, (a, of_a)) in factors.iter().enumerate() {
                for (b, of_b) in &factors[i..] {
                    let holds = wanted
                        .iter()
                        .zip(of_a.iter().zip(of_b))
                        .all(|(w, (x, y))| x.mul(y) == **w)
                        && of_a.iter().zip(of_b).any(|(x, y)| **x != one && **y != one);
                    if holds {
                        return Some(Naming::Product(*a, *b));
                    }
                }
            }
        }
        None
    }

    /// For every varying dim, the one whose name it takes (itself unless
    /// its runs are some of exactly one other's, with the same values).
    fn links(&self) -> Vec<usize> {
        let n = self.varying.len();
        let mut link: Vec<usize> = (0..n).collect();
        // Quadratic in the varying dims: a file with very many of them
        // keeps them apart rather than spend a keystroke's time on it.
        if n > MAX_LINKED {
            return link;
        }
        let widest = |v: &Varying| v.by_call.iter().map(Vec::len).max().unwrap_or(0);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|id| (std::cmp::Reverse(widest(&self.varying[*id])), *id));
        for (at, &id) in order.iter().enumerate() {
            let mut roots: Vec<usize> = order[..at]
                .iter()
                .filter(|&&other| {
                    self.varying[id].by_call.iter().any(|part| {
                        self.varying[other]
                            .by_call
                            .iter()
                            .any(|whole| part.len() < whole.len() && restricts(part, whole))
                    })
                })
                .map(|&other| link[other])
                .collect();
            roots.sort_unstable();
            roots.dedup();
            if let [root] = roots[..] {
                link[id] = root;
            }
        }
        link
    }
}

/// How a varying dim is named.
#[derive(Debug, Clone)]
enum Naming {
    /// A name of its own.
    Plain(String),
    /// A simple function of another varying dim's value (by its number).
    Related(usize, Relation),
    /// The product of two other varying dims' values (by their numbers).
    Product(usize, usize),
}

/// How one size follows from another in every run.
#[derive(Debug, Clone)]
enum Relation {
    Plus(i64),
    Times(i64),
    FloorDiv(i64),
    /// Times a size that is the same in every run: the rows `B*H` of a
    /// map's reshape where the runs differ in its height.
    Scaled(Dim),
}

impl Relation {
    /// The relation applied to the size shown as `name`; `factor` shows a
    /// size every run shares.
    fn render(&self, name: &str, factor: &dyn Fn(&Dim) -> String) -> String {
        match self {
            Relation::Plus(k) => plus_small_constant(name, &Dim::konst(*k)).unwrap_or_default(),
            Relation::Times(c) => format!("{c}*{}", operand(name)),
            Relation::FloorDiv(c) => format!("{} // {c}", operand(name)),
            Relation::Scaled(d) => {
                let shown = factor(d);
                // A factor of one name leads, as people write a batch
                // (`B*H`); a compound one follows in brackets.
                if operand(&shown) == shown {
                    format!("{shown}*{}", operand(name))
                } else {
                    format!("{}*({shown})", operand(name))
                }
            }
        }
    }
}

/// A shown size as an operand of `*` or `//`: bracketed unless one name.
fn operand(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        text.to_string()
    } else {
        format!("({text})")
    }
}

/// How each first size follows from its second, the same way in every
/// pair: `2*s`, `s + 1`, `s // 2`. Numbers alone relate by chance (`4`
/// and `7` are `2 + 2` and `5 + 2` of a batch of 2 and 5): some pair must
/// relate symbols.
fn simple_relation(pairs: &[(&Dim, &Dim)]) -> Option<Relation> {
    if pairs.iter().all(|(_, base)| base.is_const()) {
        return None;
    }
    let (first, base) = pairs.first()?;
    let holds = |f: &dyn Fn(&Dim) -> Option<Dim>| {
        pairs
            .iter()
            .all(|(mine, theirs)| f(theirs).is_some_and(|d| &d == *mine))
    };
    if let Some(k) = first.sub(base).as_const()
        && k != 0
        && k.abs() <= 16
        && holds(&|d| Some(d.add(&Dim::konst(k))))
    {
        return Some(Relation::Plus(k));
    }
    for c in 2..=16 {
        let factor = Dim::konst(c);
        if holds(&|d| Some(d.mul(&factor))) {
            return Some(Relation::Times(c));
        }
        if holds(&|d| d.floordiv(&factor)) {
            return Some(Relation::FloorDiv(c));
        }
    }
    // A symbolic factor must be one the runs share, and a size of its own
    // (not a number, which the loop above tried, nor a size of the base).
    if let Some(factor) = first.exact_div(base)
        && !factor.is_const()
        && pairs.iter().all(|(_, theirs)| !theirs.is_const())
        && holds(&|d| Some(d.mul(&factor)))
    {
        return Some(Relation::Scaled(factor));
    }
    None
}

/// Varying dims compared for shared names at most.
const MAX_LINKED: usize = 256;

/// Named dims tried as factors of a product at most: the pairs are
/// quadratic in them.
const MAX_FACTORS: usize = 32;

/// A dim that differed between runs.
pub(super) struct Varying {
    /// Its value in each run (numbered, see `Values`), in the order the
    /// runs came.
    values: Vec<u32>,
    /// Its value by the call each run was made in, sorted by call; one
    /// entry per site it was seen at (a few), when no call ran it twice.
    by_call: Vec<Vec<(u32, u32)>>,
}

/// Whether every call of `part` is one of `whole`'s, with the same value.
fn restricts(part: &[(u32, u32)], whole: &[(u32, u32)]) -> bool {
    part.iter().all(|(call, value)| {
        whole
            .binary_search_by_key(call, |(c, _)| *c)
            .is_ok_and(|i| whole[i].1 == *value)
    })
}

/// Replace the marks of varying dims in merged shapes by their names.
pub(in crate::record) fn name_varying(namer: &mut Namer<'_>, infos: &mut [&mut TensorInfo]) {
    if namer.varying.is_empty() {
        return;
    }
    let names = namer.names();
    for info in infos {
        for dim in info.shape.iter_mut().flatten() {
            if let DimView::Symbol(s) = dim
                && let Some(mark) = s.strip_prefix(PENDING)
                && let Some((id, scope)) = mark.split_once(':')
                && let (Ok(id), Ok(scope)) = (id.parse::<usize>(), scope.parse::<usize>())
            {
                *s = namer.render(&names, id, scope);
            }
        }
    }
}
