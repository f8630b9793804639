//! Tensors of unknown rank: rank variables, what ops learn of them (`B, T, C = x.size()`, a layer's demand for four dims), and their sizes read before.

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;

use super::Interp;
use crate::rules::shape::changed_at;
use crate::value::Shape;

impl Interp<'_> {
    /// A new rank variable (a tensor of unknown rank).
    pub fn fresh_rank_var(&mut self) -> Shape {
        self.rank_vars.push(None);
        Shape::Var((self.rank_vars.len() - 1) as u32)
    }

    /// The shape with a refined rank variable replaced by its dims.
    pub fn resolve_shape(&self, shape: &Shape) -> Shape {
        let (mut var, mut suffix): (u32, Vec<Dim>) = match shape {
            Shape::Known(_) => return shape.clone(),
            Shape::Var(v) => (*v, Vec::new()),
            Shape::Tail(v, dims) => (*v, dims.as_ref().clone()),
        };
        // Refinements never form cycles; the bound only guards against bugs.
        for _ in 0..32 {
            if let Some(Some(dims)) = self.rank_vars.get(var as usize) {
                let mut all = dims.as_ref().clone();
                all.extend(suffix);
                return Shape::known(all);
            }
            match self.tail_vars.get(&var) {
                Some((inner, known)) => {
                    let mut s = known.as_ref().clone();
                    s.extend(suffix);
                    suffix = s;
                    var = *inner;
                }
                None => break,
            }
        }
        // Another's dims with some of its first ones changed, once that
        // one's are known.
        if let Some(dims) = self.sibling_dims(var) {
            let mut all = dims;
            all.extend(suffix);
            return Shape::known(all);
        }
        if suffix.is_empty() {
            Shape::Var(var)
        } else {
            Shape::Tail(var, Rc::new(suffix))
        }
    }

    /// The dims of the sibling variable `var` (see `sibling_shape`) when
    /// those of the variable it is made from are known.
    fn sibling_dims(&self, var: u32) -> Option<Vec<Dim>> {
        let (base, changes) = self.sibling_vars.get(&var)?;
        let Shape::Known(dims) = self.resolve_shape(&Shape::Var(*base)) else {
            return None;
        };
        let mut dims = dims.as_ref().clone();
        for (i, d) in changes.iter() {
            *dims.get_mut(*i)? = d.clone();
        }
        Some(dims)
    }

    /// A tensor of `shape`'s rank and dims but those at `changes`, first
    /// dims counted from 0, which take the sizes given: `x[:, :k]` or
    /// `torch.cat((a, x), dim=1)` of `x` of unknown rank. Of a known
    /// shape, those dims are changed; of one of unknown rank, it is a new
    /// rank variable that becomes that shape's dims, changed, once they
    /// are known, and gives them its rank when its own are known first (a
    /// convolution further on). `None` for a shape that ends in known dims
    /// (`[*batch, C]`), where counting from the start is not possible.
    pub fn sibling_shape(&mut self, shape: &Shape, changes: &[(usize, Dim)]) -> Option<Shape> {
        match self.resolve_shape(shape) {
            Shape::Known(dims) => {
                let mut dims = dims.as_ref().clone();
                for (i, d) in changes {
                    *dims.get_mut(*i)? = d.clone();
                }
                Some(Shape::known(dims))
            }
            Shape::Tail(..) => None,
            Shape::Var(v) => {
                // Made from another's dims in turn: from those, with both
                // changes (the later win).
                let (base, mut all) = match self.sibling_vars.get(&v) {
                    Some((base, earlier)) => (*base, earlier.as_ref().clone()),
                    None => (v, Vec::new()),
                };
                for (i, d) in changes {
                    all.retain(|(j, _)| j != i);
                    all.push((*i, d.clone()));
                }
                all.sort_by_key(|(i, _)| *i);
                if all.is_empty() {
                    return Some(Shape::Var(base));
                }
                let Shape::Var(w) = self.fresh_rank_var() else {
                    return None;
                };
                self.sibling_vars.insert(w, (base, Rc::new(all)));
                Some(Shape::Var(w))
            }
        }
    }

    /// `var`, a tensor of unknown rank made from no other, is found to be
    /// `base`'s dims changed at `changes`: `torch.cat((c, x), dim=1)`
    /// needs `c` of `x`'s rank and dims but the joined one. Sizes read of
    /// it before are `base`'s. False where `var` is no such variable.
    pub fn adopt_sibling(&mut self, var: u32, base: u32, changes: Vec<(usize, Dim)>) -> bool {
        if var == base
            || self.sibling_vars.contains_key(&var)
            || self.resolve_shape(&Shape::Var(var)) != Shape::Var(var)
            || self.sibling_base(base).0 == var
        {
            return false;
        }
        let read: Vec<(i64, Dim)> = self
            .var_dims
            .iter()
            .filter(|((v, i), _)| *v == var && *i >= 0)
            .map(|((_, i), d)| (*i, d.clone()))
            .collect();
        for (i, d) in read {
            if !changes.iter().any(|(j, _)| *j as i64 == i) {
                let theirs = self.var_dim_unnamed(base, i);
                let _ = self.env.unify(&d, &theirs);
            }
        }
        self.sibling_vars.insert(var, (base, Rc::new(changes)));
        self.sibling_adoptions.push((var, self.rank_journals.len()));
        self.epoch.bump();
        true
    }

    /// Takes back what the undecided branch just ended learned of which
    /// variables are siblings (see `adopt_sibling`).
    pub(crate) fn drop_branch_adoptions(&mut self) {
        let depth = self.rank_journals.len();
        while let Some(&(var, at)) = self.sibling_adoptions.last() {
            if at <= depth {
                break;
            }
            self.sibling_adoptions.pop();
            self.sibling_vars.remove(&var);
            self.epoch.bump();
        }
    }

    /// Dim `index` (a first dim) of the sibling variable `var`: the variable
    /// it is made from, and the size its changes give that dim, if they do.
    /// `None` for other variables, or a dim counted from the end.
    fn sibling_read(&self, var: u32, index: i64) -> Option<(u32, Option<Dim>)> {
        let at = usize::try_from(index).ok()?;
        let (base, changes) = self.sibling_vars.get(&var)?;
        Some((*base, changed_at(changes, at)))
    }

    /// The variable a sibling variable is made from (itself for others),
    /// with the dims it changes.
    pub(crate) fn sibling_base(&self, var: u32) -> (u32, super::DimChanges) {
        match self.sibling_vars.get(&var) {
            Some((base, changes)) => (*base, changes.clone()),
            None => (var, Rc::new(Vec::new())),
        }
    }

    /// Give a shape of unknown rank the dims an op proved it has (input and
    /// target of a loss that needs one shape).
    pub fn adopt_shape(&mut self, shape: &Shape, dims: &[Dim]) {
        match self.resolve_shape(shape) {
            Shape::Var(v) => {
                self.set_rank(v, Rc::new(dims.to_vec()));
            }
            Shape::Tail(v, suffix) if suffix.len() <= dims.len() => {
                let head = dims.len() - suffix.len();
                for (a, b) in suffix.iter().zip(&dims[head..]) {
                    let _ = self.env.unify(a, b);
                }
                self.set_rank(v, Rc::new(dims[..head].to_vec()));
            }
            _ => {}
        }
    }

    /// Make sure a shape of unknown rank ends in at least `k` known dims,
    /// minting them (made-up names, or the sizes read of them before) when
    /// it does not yet; returns the resolved shape.
    pub fn demand_suffix(&mut self, shape: &Shape, k: usize) -> Shape {
        self.demand_suffix_as(shape, k, None)
    }

    /// `demand_suffix` for as many dims as `names`, new ones named so.
    pub fn demand_named_suffix(&mut self, shape: &Shape, names: &[&str]) -> Shape {
        self.demand_suffix_as(shape, names.len(), Some(names))
    }

    fn demand_suffix_as(&mut self, shape: &Shape, k: usize, names: Option<&[&str]>) -> Shape {
        let resolved = self.resolve_shape(shape);
        let Some((var, suffix)) = resolved.tail() else {
            return resolved;
        };
        if suffix.len() >= k {
            return resolved;
        }
        let missing = k - suffix.len();
        let inner = self.rank_vars.len() as u32;
        self.rank_vars.push(None);
        // These are real sizes of the tensor, just not known yet: give them
        // made-up names (a user's name replaces one when they are unified),
        // counted from the end: `T` and `C` for the last two, as in [B, T, C].
        // A last size read before (`c = x.size(-1)`) is the same size.
        let dims: Vec<Dim> = (0..missing)
            .map(|i| {
                let from_end = k - i;
                let name = match (names, from_end) {
                    (Some(names), _) => names[i].to_string(),
                    (None, 1) => "C".to_string(),
                    (None, 2) => "T".to_string(),
                    (None, n) => format!("d{n}"),
                };
                let earlier = self
                    .var_dims
                    .get(&(var, i as i64 - missing as i64))
                    .cloned();
                self.conventional_or(earlier, &name)
            })
            .collect();
        self.set_tail(var, inner, Rc::new(dims));
        self.resolve_shape(shape)
    }

    /// Makes two rank variables one: the leading dims of two inputs an op
    /// needs alike (`cat` along a trailing dim). Only when exactly one of
    /// them has a name an annotation gave it (`*bs`): two names the user
    /// wrote apart (`*bs`, `*b2`) stay apart, and two made-up ones say too
    /// little to be worth joining (their made-up sizes would read `C + C`).
    /// False when they stay apart.
    pub fn same_leading_dims(&mut self, a: u32, b: u32) -> bool {
        let root = |interp: &Self, v: u32| match interp.resolve_shape(&Shape::Var(v)) {
            Shape::Var(w) => Some(w),
            _ => None,
        };
        let (Some(a), Some(b)) = (root(self, a), root(self, b)) else {
            return false;
        };
        if a == b {
            return true;
        }
        let (named_a, named_b) = (self.rank_name_of(a), self.rank_name_of(b));
        if named_a.is_some() == named_b.is_some() {
            return false;
        }
        // The named one stays the root, so that its name is shown.
        let (alias, kept) = if named_a.is_some() { (b, a) } else { (a, b) };
        self.set_tail(alias, kept, Rc::new(Vec::new()));
        self.epoch.bump();
        true
    }

    /// Makes two unrefined rank variables one, where the user stated that
    /// their tensors have one shape: sizes read of either before are the
    /// same sizes. Variables made from one another's dims (`sibling_shape`)
    /// are left apart, as joining them would make one of its own parts.
    pub(crate) fn same_rank_var(&mut self, a: u32, b: u32) {
        let linked = |interp: &Self, x: u32, y: u32| {
            interp.sibling_vars.contains_key(&x) || interp.sibling_base(y).0 == x
        };
        // The variable with an annotation's name, or else the older one,
        // stays the root, so that its names are shown.
        let (alias, kept) =
            if self.rank_name_of(b).is_some() || (self.rank_name_of(a).is_none() && b < a) {
                (a, b)
            } else {
                (b, a)
            };
        if linked(self, alias, kept) || linked(self, kept, alias) {
            return;
        }
        let read: Vec<(i64, Dim)> = self
            .var_dims
            .iter()
            .filter(|((v, _), _)| *v == alias)
            .map(|((_, i), d)| (*i, d.clone()))
            .collect();
        for (i, d) in read {
            let theirs = self.var_dim_unnamed(kept, i);
            let _ = self.env.unify(&theirs, &d);
        }
        self.set_tail(alias, kept, Rc::new(Vec::new()));
        self.epoch.bump();
    }

    /// For each rank variable never refined, the sizes read from its first
    /// dims (`x.size(0)`, `len(x)`), in order while they are contiguous.
    /// The names annotations gave rank variables, by the variable each
    /// now resolves to (a `*bs` whose last dims became known lives on in
    /// the variable of the dims before them). The first name given wins.
    pub fn variadic_names(&self) -> FxHashMap<u32, Rc<str>> {
        let mut named: Vec<(&u32, &Rc<str>)> = self.rank_names.iter().collect();
        named.sort_unstable();
        let mut out: FxHashMap<u32, Rc<str>> = FxHashMap::default();
        for (&v, name) in named {
            if let Some((w, _)) = self.resolve_shape(&Shape::Var(v)).tail() {
                out.entry(w).or_insert_with(|| name.clone());
            }
        }
        out
    }

    /// The size read earlier at index `i` of a rank variable now found to
    /// have `rank` dims: read from the front (`x.size(1)`) or, counted from
    /// the end, from the back (`x.size(-1)`).
    pub(crate) fn read_before(&self, var: u32, i: i64, rank: i64) -> Option<Dim> {
        self.var_dims
            .get(&(var, i))
            .or_else(|| self.var_dims.get(&(var, i - rank)))
            .cloned()
    }

    /// The rank variables of made-up inputs that nothing refined, by the
    /// variable each now resolves to.
    pub fn open_made_up_ranks(&self) -> rustc_hash::FxHashSet<u32> {
        self.var_sources
            .keys()
            .filter_map(|&v| match self.resolve_shape(&Shape::Var(v)) {
                Shape::Var(w) => Some(w),
                _ => None,
            })
            .collect()
    }

    pub fn var_heads(&self) -> FxHashMap<u32, Vec<Dim>> {
        let mut out: FxHashMap<u32, Vec<Dim>> = FxHashMap::default();
        for &(v, _) in self.var_dims.keys() {
            if out.contains_key(&v) || !matches!(self.resolve_shape(&Shape::Var(v)), Shape::Var(_))
            {
                continue;
            }
            let mut head = Vec::new();
            while let Some(d) = self.var_dims.get(&(v, head.len() as i64)) {
                head.push(d.clone());
            }
            out.insert(v, head);
        }
        out
    }

    /// For each rank variable never refined, the sizes read from its last
    /// dims (`x.size(-1)`, `h, w = x.shape[-2:]`), in order, as many as are
    /// contiguous from the end.
    pub fn var_tails(&self) -> FxHashMap<u32, Vec<Dim>> {
        let mut out: FxHashMap<u32, Vec<Dim>> = FxHashMap::default();
        for &(v, i) in self.var_dims.keys() {
            if i >= 0
                || out.contains_key(&v)
                || !matches!(self.resolve_shape(&Shape::Var(v)), Shape::Var(_))
            {
                continue;
            }
            let mut tail = Vec::new();
            while let Some(d) = self.var_dims.get(&(v, -(tail.len() as i64) - 1)) {
                tail.push(d.clone());
            }
            tail.reverse();
            out.insert(v, tail);
        }
        out
    }

    /// `x.size(i)` of a tensor whose rank is unknown: one named symbol per
    /// (tensor, index), so repeated reads agree.
    pub fn var_dim(&mut self, var: u32, index: i64) -> Dim {
        if let Some(d) = self.var_dims.get(&(var, index)) {
            return d.clone();
        }
        if let Some((base, changed)) = self.sibling_read(var, index) {
            return changed.unwrap_or_else(|| self.var_dim(base, index));
        }
        // Counted from the end, dims are named as `demand_suffix` names
        // them (`x.size(-1)` is `C`): a name must be an identifier. A later
        // dim is named after the input it is of (`idx_1`); of a tensor no
        // input is (the result of an op of unknown rank) it is nobody's:
        // `x_2` would name another tensor.
        let name = match index {
            0 => "N".to_string(),
            -1 => "C".to_string(),
            -2 => "T".to_string(),
            i if i < 0 => format!("d{}", -i),
            i => match self.var_sources.get(&var) {
                Some(source) => format!("{source}_{i}"),
                None => return self.var_dim_unnamed(var, index),
            },
        };
        let name = if name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            name
        } else {
            format!("d{index}")
        };
        let d = self.env.weak_symbol(&name);
        self.var_dims.insert((var, index), d.clone());
        d
    }

    /// `x.size(i)` of a tensor whose rank is unknown, as `var_dim` reads
    /// it, but a size nobody named when it is new.
    pub fn var_dim_unnamed(&mut self, var: u32, index: i64) -> Dim {
        if let Some(d) = self.var_dims.get(&(var, index)) {
            return d.clone();
        }
        if let Some((base, changed)) = self.sibling_read(var, index) {
            return changed.unwrap_or_else(|| self.var_dim_unnamed(base, index));
        }
        let d = self.env.anonymous();
        self.var_dims.insert((var, index), d.clone());
        d
    }

    /// The last `k` sizes of a tensor of unknown rank, in order, as
    /// `var_dim_unnamed` reads them (`h, w = x.shape[-2:]`).
    pub fn last_sizes_unnamed(&mut self, var: u32, k: usize) -> Vec<Dim> {
        (1..=k as i64)
            .rev()
            .map(|i| self.var_dim_unnamed(var, -i))
            .collect()
    }

    /// The size a rank variable's dim was read as before, or a new one of
    /// the conventional name (`C` for the last); a size read before and
    /// still nobody's takes that name.
    fn conventional_or(&mut self, earlier: Option<Dim>, name: &str) -> Dim {
        match earlier {
            Some(d)
                if self
                    .env
                    .resolve(&d)
                    .as_sym()
                    .is_some_and(|s| self.env.is_anonymous(s)) =>
            {
                let named = self.env.weak_symbol(name);
                let _ = self.env.unify(&named, &d);
                named
            }
            Some(d) => d,
            None => self.env.weak_symbol(name),
        }
    }

    /// Give an unknown-rank tensor the rank an op demands, with dims named
    /// after their conventional meaning (`N, C, H, W` for images). An earlier
    /// `x.size(i)` keeps its symbol.
    pub fn demand_rank(&mut self, shape: &Shape, names: &[&str]) {
        let resolved = self.resolve_shape(shape);
        let v = match &resolved {
            // Sizes only an assert of the rank made take the names the op
            // gives them, as the dims of an unknown rank would.
            Shape::Known(dims) if dims.len() == names.len() && !self.asserted_dims.is_empty() => {
                for (d, name) in dims.iter().zip(names) {
                    if self
                        .env
                        .resolve(d)
                        .as_sym()
                        .is_some_and(|s| self.asserted_dims.contains(&s))
                    {
                        let _ = self.conventional_or(Some(d.clone()), name);
                    }
                }
                return;
            }
            Shape::Known(_) => return,
            Shape::Tail(inner, known) => {
                if names.len() >= known.len() {
                    self.demand_rank(&Shape::Var(*inner), &names[..names.len() - known.len()]);
                }
                return;
            }
            Shape::Var(v) => *v,
        };
        let v = &v;
        let n = names.len() as i64;
        let dims: Vec<Dim> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let i = i as i64;
                let earlier = self.read_before(*v, i, n);
                self.conventional_or(earlier, name)
            })
            .collect();
        self.set_rank(*v, Rc::new(dims));
    }

    /// Fix the rank of an unknown-rank shape, naming the new dims.
    pub fn refine_rank(&mut self, var: u32, names: &[Option<String>]) -> Rc<Vec<Dim>> {
        let var = match self.resolve_shape(&Shape::Var(var)) {
            Shape::Known(dims) => return dims,
            Shape::Tail(inner, known) if names.len() >= known.len() => {
                let head = self.refine_rank(inner, &names[..names.len() - known.len()]);
                let mut all = head.as_ref().clone();
                all.extend(known.iter().cloned());
                return Rc::new(all);
            }
            Shape::Tail(..) => {
                return Rc::new(names.iter().map(|_| self.env.anonymous()).collect());
            }
            Shape::Var(v) => v,
        };
        let count = names.len() as i64;
        // `*batch` (a jaxtyping group, a docstring's `...`) found to be one
        // dim is that dim's name, as a person would write it.
        let group = match names {
            [None] => self.rank_name_of(var),
            _ => None,
        };
        let dims: Vec<Dim> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let earlier = self.read_before(var, i as i64, count);
                let fresh = match (n, &group) {
                    (Some(name), _) => self.env.symbol(name),
                    (None, Some(name)) => self.env.weak_symbol(name),
                    (None, None) => self.env.anonymous(),
                };
                if let Some(e) = earlier {
                    let _ = self.env.unify(&fresh, &e);
                }
                fresh
            })
            .collect();
        let dims = Rc::new(dims);
        self.set_rank(var, dims.clone());
        dims
    }

    /// The name an annotation gave the rank variable `var` resolves to.
    pub(crate) fn rank_name_of(&self, var: u32) -> Option<Rc<str>> {
        self.rank_names
            .iter()
            .filter(|(v, _)| match self.resolve_shape(&Shape::Var(**v)) {
                Shape::Var(w) | Shape::Tail(w, _) => w == var,
                Shape::Known(_) => false,
            })
            .min_by_key(|(v, _)| **v)
            .map(|(_, name)| name.clone())
    }

    /// Fix the dims of a rank variable, noting the value before in the
    /// innermost undecided branch (see `rank_journals`).
    pub(crate) fn set_rank(&mut self, var: u32, dims: Rc<Vec<Dim>>) {
        if var as usize >= self.rank_vars.len() {
            return;
        }
        let sibling = self
            .sibling_vars
            .get(&var)
            .cloned()
            .filter(|(_, changes)| changes.iter().all(|(i, _)| *i < dims.len()));
        // A sibling variable's changed dims are what they were made: the
        // names an op gives its new dims (`H` of a convolution's input)
        // name nothing else.
        if let Some((_, changes)) = &sibling {
            for (i, d) in changes.iter() {
                let _ = self.env.unify(&dims[*i], d);
            }
        }
        self.journal_rank(var);
        self.rank_vars[var as usize] = Some(dims.clone());
        self.epoch.bump();
        // Its rank is that of the variable it is made from, whose dims are
        // its own but the changed ones; sizes read of those before (`x[:,
        // 1:]` read `x.size(1)`) are those dims.
        if let Some((base, changes)) = sibling
            && self.resolve_shape(&Shape::Var(base)) == Shape::Var(base)
        {
            let n = dims.len() as i64;
            let mut base_dims = dims.as_ref().clone();
            for (i, d) in base_dims.iter_mut().enumerate() {
                let earlier = self.read_before(base, i as i64, n);
                let changed = changes.iter().any(|(j, _)| *j == i);
                match (earlier, changed) {
                    (Some(e), true) => *d = e,
                    (None, true) => *d = self.env.anonymous(),
                    (Some(e), false) => {
                        let _ = self.env.unify(&e, d);
                    }
                    (None, false) => {}
                }
            }
            self.set_rank(base, Rc::new(base_dims));
        }
    }

    /// Note that a rank variable ends in `dims` after those of `inner`,
    /// its state before noted as for `set_rank`.
    pub(crate) fn set_tail(&mut self, var: u32, inner: u32, dims: Rc<Vec<Dim>>) {
        self.journal_rank(var);
        self.tail_vars.insert(var, (inner, dims));
    }

    /// Notes a rank variable's state in the innermost undecided branch's
    /// journal, the first time the branch refines it.
    fn journal_rank(&mut self, var: u32) {
        let state = self.rank_state(var);
        if let Some(journal) = self.rank_journals.last_mut()
            && !journal.iter().any(|(v, _)| *v == var)
        {
            journal.push((var, state));
        }
    }

    /// A rank variable's dims, when all of them are known now.
    pub(crate) fn rank_dims(&self, var: u32) -> Option<Rc<Vec<Dim>>> {
        match self.resolve_shape(&Shape::Var(var)) {
            Shape::Known(dims) => Some(dims),
            _ => None,
        }
    }

    /// What is known of a rank variable now.
    pub(crate) fn rank_state(&self, var: u32) -> super::RankState {
        (
            self.rank_vars.get(var as usize).cloned().flatten(),
            self.tail_vars.get(&var).cloned(),
        )
    }

    /// Puts a rank variable back in a state noted before.
    pub(crate) fn restore_rank_state(&mut self, var: u32, (dims, tail): super::RankState) {
        if let Some(slot) = self.rank_vars.get_mut(var as usize) {
            *slot = dims;
        }
        let changed = match tail {
            Some(tail) => self.tail_vars.insert(var, tail.clone()).as_ref() != Some(&tail),
            None => self.tail_vars.remove(&var).is_some(),
        };
        // Memoised results note how many trailing dims are known (see
        // `memo::Stamp`): one taken back and another given alike would
        // count the same, so a change is made known.
        if changed {
            self.epoch.bump();
        }
    }
}
