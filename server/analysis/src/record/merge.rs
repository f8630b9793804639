//! Merging the runs a site saw into one shape, naming the dims that differ.
//!
//! A dim that agrees in every run stays; a dim that differs becomes a symbol
//! shared by every place where it differed in the same way, named after a
//! variable of the user's that took the same values where there is one
//! (`B`, `T`). A dim seen in only some of the calls that ran another one,
//! with that one's value in each of them (a residual branch taken only
//! when a block downsamples), shares its symbol: in every call where both
//! ran, they were equal.

use rustc_hash::{FxHashMap, FxHashSet};
use std::rc::Rc;

use shapels_shapes::{Dim, ShapeEnv};

use crate::report::{DimView, OpSite, Origin, TensorInfo, TextRange};
use crate::value::{Provenance, Shape, Tensor};
use crate::workspace::is_local;

use super::ScalarSite;
use super::run_values::Values;

mod axis_names;
mod ranks;
mod varying_names;

use axis_names::{AxisRuns, axis_names_of_runs, of_telling_kind};
use ranks::{Variadic, line_up};
use varying_names::Varying;
pub(super) use varying_names::name_varying;

/// A mark that stands for a varying dim's name until every site is merged.
const PENDING: char = '\u{0}';

/// Names for dims that differ between runs.
pub(super) struct Namer<'a> {
    env: &'a ShapeEnv,
    /// Per sequence of per-run values, the varying dim that stands for it.
    chosen: FxHashMap<Vec<u32>, usize>,
    /// The varying dims met so far, in the order they were met.
    varying: Vec<Varying>,
    /// The user's int variables by their sequence of per-run values, and
    /// whether each is a parameter.
    candidates: FxHashMap<Vec<u32>, (String, bool)>,
    /// Per function (as `local`), its own int variables by their sequence
    /// of per-run values: in the function that binds it, a size that
    /// varies between runs is shown by the name the code there gives it
    /// (`C` after `B, N, C = x.shape`), not by another function's name for
    /// the same values (`out_features` of the block's MLP).
    local_varying: Vec<FxHashMap<Vec<u32>, String>>,
    /// Per function (as `local`), the einops axes written there by the
    /// sizes they took, run after run, runs in a row of one size counted
    /// once (see `axis_names_of_runs`).
    axis_varying: Vec<Vec<AxisRuns>>,
    /// Sizes as shown anywhere (`shown_anywhere`), numbered: runs' values
    /// are compared by number, not by their text.
    values: Values,
    taken: FxHashSet<String>,
    /// Per function (by the index of its range in `scopes`, the module's
    /// own code last), the sizes the code there gives a name: `B` for the
    /// caller's `b` after `B, T, C = x.size()`, `head_dim` for `C //
    /// n_head`. Inside the function they are shown by those names: that is
    /// what the code there calls them, whatever its callers call them.
    local: Vec<FxHashMap<Dim, String>>,
    /// The ranges of the analysed file's functions, sorted by start.
    scopes: Vec<TextRange>,
    /// Where the names of `local` are first bound (0: from the function's
    /// start): a size is written as a name plus or times something only
    /// after the name is bound (no `seq - 1` the line before `seq = …`).
    bound_at: FxHashMap<(usize, String), usize>,
    /// Where the site being merged starts.
    site: usize,
    /// The function the site being merged is in (see `local`).
    scope: usize,
    /// Known leading sizes of unrefined rank variables (`x.size(0)`).
    pub heads: FxHashMap<u32, Vec<Dim>>,
    /// Known trailing sizes of unrefined rank variables (`x.size(-1)`).
    pub tails: FxHashMap<u32, Vec<Dim>>,
    /// Names annotations gave rank variables (`*bs`), shown for them.
    pub variadic_names: FxHashMap<u32, std::rc::Rc<str>>,
    /// The rank variables of made-up inputs whose rank nothing fixed: a
    /// run on such an input, with nothing read of it, says nothing of the
    /// shape (see `merge`).
    pub made_up: FxHashSet<u32>,
    /// Per function (as `local`), the rank variables shown as the leading
    /// dims of shapes that end in known ones (`[*batch, C]`).
    pub lead_vars: FxHashMap<usize, FxHashSet<u32>>,
    pub static_shapes: bool,
    /// Memoised resolution and display: one file shows the same sizes often.
    resolved_cache: FxHashMap<Dim, Dim>,
    shown_cache: FxHashMap<(usize, Dim), String>,
    /// The facts the shape environment assumed, computed once, each with
    /// the op that assumed it.
    guard_facts: Vec<(
        Vec<shapels_shapes::SymId>,
        String,
        Option<shapels_shapes::GuardSite>,
    )>,
    /// Symbols by their shown name (see `with_local_names`).
    by_name: std::cell::OnceCell<FxHashMap<String, shapels_shapes::SymId>>,
    /// Names of varying dims numbered to tell them apart in the file
    /// (`n_ctx2`), each with the user's name it was numbered from: in a
    /// function where no other size takes that name, it is shown as such
    /// (see `scoped_names::unsuffix`).
    pub numbered: FxHashMap<String, String>,
    /// The names of `numbered` numbered from a parameter's name.
    pub numbered_params: FxHashSet<String>,
}

impl<'a> Namer<'a> {
    pub fn new(
        env: &'a ShapeEnv,
        scalars: &[ScalarSite],
        starts: &[usize],
        declared: &[(usize, String, Dim)],
        patterns: &[(usize, String, Dim)],
        pattern_runs: &super::PatternRuns,
        scopes: Vec<TextRange>,
    ) -> Namer<'a> {
        let mut candidates = FxHashMap::default();
        let mut values = Values::default();
        // A name the code gave a size it computed (`width = planes *
        // groups`) before a parameter that holds the same (`planes`).
        let assigned_first = || {
            let (assigned, params): (Vec<_>, Vec<_>) =
                scalars.iter().zip(starts).partition(|(s, _)| !s.param);
            assigned.into_iter().chain(params)
        };
        let mut local_varying: Vec<FxHashMap<Vec<u32>, String>> =
            vec![FxHashMap::default(); scopes.len() + 1];
        for (s, start) in assigned_first() {
            // The runs the function's sites show: a variable's values in
            // the calls, not those of a made-up run as well.
            let hits = of_telling_kind(&s.hits, &s.kinds);
            if hits.len() < 2 || !names_a_size(&s.name) {
                continue;
            }
            let key: Vec<String> = hits.iter().map(|d| env.display(d)).collect();
            if key.iter().any(|k| k == "?") || key.iter().all(|k| k == &key[0]) {
                continue;
            }
            // Runs of 1s and 2s match too many sizes by chance (two models
            // built with `factor = 2 if bilinear else 1` and called on
            // batches of 1 and 2): only a size that says more names a dim.
            if key.iter().all(|k| matches!(k.as_str(), "0" | "1" | "2")) {
                continue;
            }
            let key: Vec<u32> = key.into_iter().map(|k| values.number(k)).collect();
            let scope = scope_of(&scopes, *start);
            local_varying[scope]
                .entry(key.clone())
                .or_insert_with(|| s.name.clone());
            candidates
                .entry(key)
                .or_insert_with(|| (s.name.clone(), s.param));
        }
        let taken: FxHashSet<String> = (0..env.symbol_count() as u32)
            .filter_map(|i| env.info(shapels_shapes::SymId(i)).map(|s| s.name.clone()))
            .collect();
        let mut local: Vec<FxHashMap<Dim, String>> = vec![FxHashMap::default(); scopes.len() + 1];
        let mut bound_at: FxHashMap<(usize, String), usize> = FxHashMap::default();
        for (s, start) in assigned_first() {
            if !names_a_size(&s.name) {
                continue;
            }
            let resolved: Vec<Dim> = s.hits.iter().map(|d| env.resolve(d)).collect();
            let Some(first) = resolved.first() else {
                continue;
            };
            if first.is_const() || !resolved.iter().all(|d| d == first) || env.has_anonymous(first)
            {
                continue;
            }
            // A symbol of its own name needs no other.
            if first
                .as_sym()
                .and_then(|id| env.info(id))
                .is_some_and(|info| info.name == s.name)
            {
                continue;
            }
            let scope = scope_of(&scopes, *start);
            local[scope]
                .entry(first.clone())
                .or_insert_with(|| s.name.clone());
            bound_at.entry((scope, s.name.clone())).or_insert(*start);
        }
        // The names a generic function's annotations give its sizes
        // (`x: Float[Tensor, "batch token dim"]`) name them in it, also
        // once the code tied them to others (`batch` is `b*v*h*w` after a
        // `rearrange(x, "(b v h w) () c -> ...")`).
        for (start, name, dim) in declared {
            let resolved = env.resolve(dim);
            if resolved.is_const()
                || env.has_anonymous(&resolved)
                || resolved
                    .as_sym()
                    .and_then(|id| env.info(id))
                    .is_some_and(|info| info.name == *name)
            {
                continue;
            }
            let scope = scope_of(&scopes, *start);
            local[scope].entry(resolved).or_insert_with(|| name.clone());
            bound_at.insert((scope, name.clone()), 0);
        }
        // The axes an einops pattern names (`'b n (h d) -> b h n d'`) name,
        // in its function, the sizes nobody there named: a made-up size
        // (`N` is `b`) or one the code computed (`h*w + 1` is `n`), not one
        // a name already says (`heads` stays `heads`, not `h`).
        // A name given two sizes (a pattern mapped over queries and keys
        // of other lengths: `n` of each) names neither.
        let mut sizes_named: FxHashMap<(usize, &str), FxHashSet<Dim>> = FxHashMap::default();
        for (start, name, dim) in patterns {
            sizes_named
                .entry((scope_of(&scopes, *start), name.as_str()))
                .or_default()
                .insert(env.resolve(dim));
        }
        let ambiguous: FxHashSet<(usize, &str)> = sizes_named
            .iter()
            .filter(|(_, dims)| dims.len() > 1)
            .map(|(key, _)| *key)
            .collect();
        for (start, name, dim) in patterns {
            if ambiguous.contains(&(scope_of(&scopes, *start), name.as_str())) {
                continue;
            }
            let resolved = env.resolve(dim);
            let scope = scope_of(&scopes, *start);
            // A name the code there gives another size is that size's.
            if local[scope]
                .iter()
                .any(|(d, n)| n == name && *d != resolved)
            {
                continue;
            }
            // A size nobody could read (`(...)` of dims of unknown count)
            // is named by the pattern; an expression with one in it is not.
            let made_up = match resolved.as_sym() {
                Some(id) => env.info(id).is_some_and(|i| i.weak || i.anonymous),
                None => !resolved.is_const() && !env.has_anonymous(&resolved),
            };
            if !made_up {
                continue;
            }
            local[scope].entry(resolved).or_insert_with(|| name.clone());
            bound_at.entry((scope, name.clone())).or_insert(*start);
        }
        let axis_varying = axis_names_of_runs(
            env,
            pattern_runs,
            &scopes,
            &local,
            &local_varying,
            &mut values,
        );
        Namer {
            env,
            chosen: FxHashMap::default(),
            varying: Vec::new(),
            candidates,
            local_varying,
            axis_varying,
            values,
            taken,
            local,
            bound_at,
            scopes,
            scope: 0,
            site: 0,
            heads: FxHashMap::default(),
            made_up: FxHashSet::default(),
            tails: FxHashMap::default(),
            variadic_names: FxHashMap::default(),
            lead_vars: FxHashMap::default(),
            static_shapes: false,
            guard_facts: env.guard_facts(),
            resolved_cache: FxHashMap::default(),
            shown_cache: FxHashMap::default(),
            by_name: std::cell::OnceCell::new(),
            numbered: FxHashMap::default(),
            numbered_params: FxHashSet::default(),
        }
    }

    /// Merges that follow are of a site at `start`: shown with the names
    /// of the function it is in.
    pub fn enter_site(&mut self, start: usize) {
        self.scope = scope_of(&self.scopes, start);
        self.site = start;
    }

    /// Whether `var` is the one rank variable the function of the site
    /// being merged shows as the leading dims of its shapes: `[*batch]`
    /// then says which dims a tensor of it has.
    fn only_lead_var(&self, var: u32) -> bool {
        self.lead_vars
            .get(&self.scope)
            .is_some_and(|vars| vars.len() == 1 && vars.contains(&var))
    }

    /// The function a site at `start` is in.
    pub fn scope_at(&self, start: usize) -> usize {
        scope_of(&self.scopes, start)
    }

    /// A message's sizes by the names the function at `start` gives them
    /// (`T` for the caller's `T_2` after `B, T, C = x.shape`).
    pub fn with_local_names(&self, start: usize, text: &str) -> String {
        let local = &self.local[self.scope_at(start)];
        if local.is_empty() {
            return text.to_string();
        }
        // Built once per analysis, and only when a message needs it.
        let by_name = self.by_name.get_or_init(|| {
            (0..self.env.symbol_count() as u32)
                .filter_map(|i| {
                    let id = shapels_shapes::SymId(i);
                    self.env.info(id).map(|info| (info.name.clone(), id))
                })
                .collect()
        });
        let mut rename: FxHashMap<&str, &str> = FxHashMap::default();
        for name in super::scoped_names::names_in(text) {
            if let Some(id) = by_name.get(name)
                && let Some(alias) = local.get(&self.env.resolve(&Dim::sym(*id)))
            {
                rename.insert(name, alias.as_str());
            }
        }
        if rename.is_empty() {
            return text.to_string();
        }
        super::scoped_names::renamed(text, &rename)
    }

    /// Which names a site's shapes are shown with (for merges done once).
    pub fn scope(&self) -> usize {
        self.scope
    }

    /// Where the function the site being merged is in starts (`None` in
    /// the module's own code).
    pub fn scope_start(&self) -> Option<usize> {
        self.scopes.get(self.scope).map(|r| r.start)
    }

    /// The name the code around the site gave a size, or a product of two
    /// such names (`h*w` for a flattened feature map after `b, c, h, w =
    /// x.shape`), rather than the expression they stand for.
    fn alias_of(&self, d: &Dim) -> Option<String> {
        let local = &self.local[self.scope];
        if let Some(name) = local.get(d) {
            return Some(name.clone());
        }
        if d.is_const() || local.len() > 32 {
            return None;
        }
        let bound = |name: &String| {
            self.bound_at
                .get(&(self.scope, name.clone()))
                .is_none_or(|at| *at <= self.site)
        };
        // A named size and a constant (`num_patches + 1` for the class token).
        let mut shifted: Vec<String> = Vec::new();
        for (a, na) in local {
            if a.is_const() || !bound(na) {
                continue;
            }
            if let Some(text) = plus_small_constant(na, &d.sub(a)) {
                shifted.push(text);
            }
        }
        if let Some(best) = shifted.into_iter().min() {
            return Some(best);
        }
        // A product of two named sizes (`h*w` of a flattened map), or one
        // and a constant (`h*w + 4`: the map's positions and four memory
        // slots).
        let mut products: Vec<String> = Vec::new();
        let mut shifted_products: Vec<String> = Vec::new();
        for (a, na) in local {
            for (b, nb) in local {
                if na > nb || a.is_const() || b.is_const() || !bound(na) || !bound(nb) {
                    continue;
                }
                let product = a.mul(b);
                if product == *d {
                    products.push(format!("{na}*{nb}"));
                } else if products.is_empty()
                    && let Some(text) = plus_small_constant(&format!("{na}*{nb}"), &d.sub(&product))
                {
                    shifted_products.push(text);
                }
            }
        }
        products
            .into_iter()
            .min()
            .or_else(|| shifted_products.into_iter().min())
    }

    fn resolved(&mut self, d: &Dim) -> Dim {
        // Most sizes are numbers, which nothing resolves further: no need
        // to hash them.
        if d.as_const().is_some() {
            return d.clone();
        }
        if let Some(r) = self.resolved_cache.get(d) {
            return r.clone();
        }
        let r = self.env.resolve(d);
        self.resolved_cache.insert(d.clone(), r.clone());
        r
    }

    /// The size as the code around the site writes it: its symbols by the
    /// names given there.
    fn shown(&mut self, d: &Dim) -> String {
        if let Some(n) = d.as_const() {
            return n.to_string();
        }
        let key = (self.scope, d.clone());
        if let Some(s) = self.shown_cache.get(&key) {
            return s.clone();
        }
        let local = &self.local[self.scope];
        let s = self
            .env
            .display_with(d, &|id| local.get(&Dim::sym(id)).cloned());
        self.shown_cache.insert(key, s.clone());
        s
    }

    /// Runs on made-up inputs of several objects (each construction of a
    /// class) name their free sizes apart (`H`, `H_2`): where the runs'
    /// sizes differ only in which made-up sizes they are made of, they are
    /// one size for any input, shown by the names asked for (`2*H`).
    fn made_up_alike<'d>(&self, dims: impl Iterator<Item = &'d Dim>) -> Option<String> {
        let dims: Vec<Dim> = dims.map(|d| self.env.resolve(d)).collect();
        let symbols: Vec<Vec<shapels_shapes::SymId>> = dims.iter().map(Dim::symbols).collect();
        // Sizes every run shares (`model_args.dim` of a config all runs
        // read) are the same size in each. The ones that differ must have
        // names: a made-up input's (`H`, `H_2`), or a made-up object's
        // setting, which each object library mode builds names anew
        // (`cfg.width`, `cfg.width_2`).
        let shared = |s: &shapels_shapes::SymId| symbols.iter().all(|syms| syms.contains(s));
        let mut shown: Option<String> = None;
        for (d, syms) in dims.iter().zip(&symbols) {
            if syms.is_empty()
                || !syms
                    .iter()
                    .all(|s| shared(s) || self.env.info(*s).is_some_and(|i| !i.anonymous))
            {
                return None;
            }
            let text = self.env.display_with(d, &|id| {
                self.env.info(id).map(|i| {
                    if shared(&id) {
                        i.name.clone()
                    } else {
                        i.base.clone()
                    }
                })
            });
            match &shown {
                Some(before) if *before != text => return None,
                Some(_) => {}
                None => shown = Some(text),
            }
        }
        // A name the function gives another size (`N` of `B_, N, C =
        // x.shape`) would show two sizes as one.
        let own = |text: &String| {
            self.local[self.scope].values().any(|name| name == text)
                || self
                    .local_varying
                    .get(self.scope)
                    .is_some_and(|names| names.values().any(|name| name == text))
        };
        shown.filter(|text| !own(text))
    }

    /// The number of the size as shown by the names of its symbols (the
    /// same for every site: the values by which varying dims are
    /// compared).
    fn shown_anywhere(&mut self, d: &Dim) -> u32 {
        if let Some(n) = d.as_const() {
            return self.values.number_of_const(n);
        }
        if let Some(id) = self.values.by_dim.get(d) {
            return *id;
        }
        let id = self.values.number_dim(self.env.display(d), d);
        self.values.by_dim.insert(d.clone(), id);
        id
    }
}

/// `name + k` (or `name - k`) for a difference that is a small non-zero
/// constant `k`: a named size shifted by a few (`num_patches + 1`).
fn plus_small_constant(name: &str, difference: &Dim) -> Option<String> {
    let k = difference.as_const().filter(|k| *k != 0 && k.abs() <= 16)?;
    Some(if k > 0 {
        format!("{name} + {k}")
    } else {
        format!("{name} - {}", -k)
    })
}

/// The function a site at `start` is in: the innermost of `scopes` that
/// holds it, or `scopes.len()` for the module's own code.
fn scope_of(scopes: &[TextRange], start: usize) -> usize {
    // Functions nest: of those that start at or before `start`, the last
    // one that holds it is the innermost.
    let upto = scopes.partition_point(|r| r.start <= start);
    (0..upto)
        .rev()
        .find(|&i| start < scopes[i].end)
        .unwrap_or(scopes.len())
}

pub(super) fn merge(
    hits: &[Rc<Tensor>],
    calls: &[u32],
    env: &ShapeEnv,
    resolve: &dyn Fn(&Shape) -> Shape,
    namer: &mut Namer<'_>,
) -> TensorInfo {
    // A call repeated on the same inputs records the very same tensor each
    // time: one run says it all, except that there were several.
    if hits.len() > 1 && hits.iter().all(|h| Rc::ptr_eq(h, &hits[0])) {
        let mut info = merge(&hits[..1], &calls[..1], env, resolve, namer);
        info.example = example(&hits[0], env);
        return info;
    }
    // Each run's shape: its dims, and where any number of further dims
    // stand: before them (known trailing dims, `[*, 768]`), after them (known
    // leading sizes of a tensor of unknown rank, `[N, *]`), or nowhere.
    let mut shapes: Vec<Option<(Variadic, Vec<Dim>)>> = Vec::with_capacity(hits.len());
    // The names annotations gave the leading dims of the runs (`*bs`).
    let mut lead_names: Vec<Option<std::rc::Rc<str>>> = Vec::new();
    // Whether every run is only the leading dims its function shows
    // elsewhere (see `Namer::only_lead_var`).
    let mut only_shared_lead = true;
    // The runs on a made-up input that nothing in them said anything of
    // (a block whose first layer is an `Identity` in one of the objects
    // built): they leave the shape to the runs that know it.
    let mut silent: Vec<bool> = Vec::with_capacity(hits.len());
    for (i, t) in hits.iter().enumerate() {
        // Runs of the same tensor (a repeated call) resolve alike.
        if i > 0 && Rc::ptr_eq(t, &hits[i - 1]) {
            let previous = shapes[i - 1].clone();
            shapes.push(previous);
            silent.push(silent[i - 1]);
            continue;
        }
        silent.push(false);
        let shape = match resolve(&t.shape) {
            Shape::Known(d) => Some((
                Variadic::None,
                d.iter().map(|x| namer.resolved(x)).collect(),
            )),
            Shape::Tail(v, d) => {
                lead_names.push(namer.variadic_names.get(&v).cloned());
                Some((
                    Variadic::Lead,
                    d.iter().map(|x| namer.resolved(x)).collect(),
                ))
            }
            Shape::Var(v) => {
                let head = namer.heads.get(&v).cloned().unwrap_or_default();
                let tail = namer.tails.get(&v).cloned().unwrap_or_default();
                let name = namer.variadic_names.get(&v).cloned();
                let tail: Vec<Dim> = tail.iter().map(|x| namer.resolved(x)).collect();
                if head.is_empty() && tail.iter().any(|d| !namer.env.has_anonymous(d)) {
                    // Only the last sizes were read (`h, w = x.shape[-2:]`),
                    // shown when some have a name: `[*batch, ?, ?]` would
                    // say little more than nothing.
                    lead_names.push(name);
                    Some((Variadic::Lead, tail))
                } else if head.is_empty() && name.is_some() {
                    // The dims an annotation named (`*bs`) and nothing
                    // more: `[*bs]` says which, where `[*batch]` would not.
                    lead_names.push(name);
                    Some((Variadic::Lead, Vec::new()))
                } else if head.is_empty() && namer.only_lead_var(v) {
                    // The leading dims of the function's other shapes
                    // (`loss = (x - y).sum(-1)` of `x: [*batch, C]`).
                    lead_names.push(None);
                    shapes.push(Some((Variadic::Lead, Vec::new())));
                    continue;
                } else if head.is_empty() {
                    silent[i] = tail.is_empty() && namer.made_up.contains(&v);
                    None
                } else {
                    Some((
                        Variadic::Trail,
                        head.iter().map(|x| namer.resolved(x)).collect(),
                    ))
                }
            }
        };
        only_shared_lead = false;
        shapes.push(shape);
    }
    let kept_calls: Vec<u32>;
    let mut calls = calls;
    if silent.iter().any(|s| *s) && !silent.iter().all(|s| *s) {
        kept_calls = calls
            .iter()
            .zip(&silent)
            .filter(|(_, s)| !**s)
            .map(|(c, _)| *c)
            .collect();
        calls = &kept_calls;
        let mut quiet = silent.iter();
        shapes.retain(|_| !quiet.next().copied().unwrap_or(false));
    }
    let shape = if shapes.iter().any(Option::is_none) || shapes.is_empty() {
        None
    } else {
        let mut shapes: Vec<(Variadic, Vec<Dim>)> = shapes.into_iter().flatten().collect();
        line_up(&mut shapes);
        let variadic = shapes[0].0;
        let shapes: Vec<Vec<Dim>> = if shapes.iter().all(|(v, _)| *v == variadic) {
            shapes.into_iter().map(|(_, d)| d).collect()
        } else {
            Vec::new()
        };
        let rank = shapes.first().map(Vec::len).unwrap_or(0);
        // A variadic head alone says nothing about the shape.
        // One name for the leading dims of every run, when they all have it.
        let lead_name = match lead_names.split_first() {
            Some((Some(first), rest)) if rest.iter().all(|n| n.as_ref() == Some(first)) => {
                Some(first.clone())
            }
            _ => None,
        };
        if shapes.is_empty()
            || shapes.iter().any(|s| s.len() != rank)
            || (rank == 0 && variadic != Variadic::None && lead_name.is_none() && !only_shared_lead)
        {
            None
        } else {
            let lead = (variadic == Variadic::Lead).then(|| {
                DimView::Variadic(format!("*{}", lead_name.as_deref().unwrap_or("batch")))
            });
            let trail =
                (variadic == Variadic::Trail).then(|| DimView::Variadic("*rest".to_string()));
            // The names `made_up_alike` gave columns of this shape, with
            // the sizes they stand for: two columns of other sizes whose
            // made-up names share a base (`N` and `N_2` of a `view(-1, k,
            // C)`) are not both `N`.
            let mut alike: Vec<(String, Vec<u32>)> = Vec::new();
            Some(
                lead.into_iter()
                    .chain((0..rank).map(|i| {
                        let same = |namer: &mut Namer<'_>, shown: String| {
                            if shown == "?" {
                                return DimView::Unknown;
                            }
                            match shapes[0][i].as_const() {
                                Some(n) => DimView::Known(n),
                                None => {
                                    DimView::Symbol(namer.alias_of(&shapes[0][i]).unwrap_or(shown))
                                }
                            }
                        };
                        // Most lines run once or with one size: display it once.
                        if shapes.iter().all(|s| s[i] == shapes[0][i]) {
                            let shown = namer.shown(&shapes[0][i]);
                            return same(namer, shown);
                        }
                        let column: Vec<u32> =
                            shapes.iter().map(|s| namer.shown_anywhere(&s[i])).collect();
                        if column.iter().any(|c| namer.values.text(*c) == "?") {
                            DimView::Unknown
                        } else if column.iter().all(|c| *c == column[0]) {
                            let shown = namer.values.text(column[0]).to_string();
                            same(namer, shown)
                        } else if namer.static_shapes {
                            // With static shapes there are no symbols for
                            // sizes that vary between runs, as in torch.
                            DimView::Unknown
                        } else if let Some(free) = namer
                            .made_up_alike(shapes.iter().map(|s| &s[i]))
                            .filter(|free| {
                                !alike
                                    .iter()
                                    .any(|(name, sizes)| name == free && *sizes != column)
                            })
                        {
                            alike.push((free.clone(), column));
                            DimView::Symbol(free)
                        } else {
                            DimView::Symbol(namer.name(column, calls))
                        }
                    }))
                    .chain(trail)
                    .collect(),
            )
        }
    };
    let first = &hits[0];
    let example = if hits.len() == 1 {
        None
    } else {
        example(first, env)
    };
    let symbols: Vec<shapels_shapes::SymId> = match resolve(&first.shape) {
        Shape::Known(d) | Shape::Tail(_, d) => {
            d.iter().flat_map(|x| namer.resolved(x).symbols()).collect()
        }
        Shape::Var(_) => Vec::new(),
    };
    // The facts about this tensor's sizes, each once (the environment
    // says each once already), in a stable order, with what assumed it.
    let mut facts: Vec<(String, Option<OpSite>)> = namer
        .guard_facts
        .iter()
        .filter(|(syms, _, _)| syms.iter().any(|s| symbols.contains(s)))
        .map(|(_, text, at)| (text.clone(), at.as_ref().map(|a| site(&a.op, a.at))))
        .collect();
    facts.sort_by(|a, b| a.0.cmp(&b.0));
    facts.dedup_by(|a, b| a.0 == b.0);
    let (guards, guard_sites) = facts.into_iter().unzip();
    let why = why_unknown(first, shape.as_deref());
    TensorInfo {
        shape,
        dtype: if hits.iter().all(|t| t.dtype == first.dtype) {
            first.dtype.map(|d| d.name().to_string())
        } else {
            None
        },
        device: if hits.iter().all(|t| t.device == first.device) {
            first
                .device
                .as_ref()
                .filter(|d| **d != crate::value::Device::CudaOrCpu)
                .map(|d| d.name())
        } else {
            None
        },
        origin: match first.origin {
            Provenance::Fake => Origin::Fake,
            Provenance::Real => Origin::Real,
        },
        op: Some(first.op.to_string()),
        chain: chain_of(first),
        example,
        guards,
        guard_sites,
        notes: {
            let mut notes = match &first.device {
                Some(crate::value::Device::CudaOrCpu) => {
                    vec!["device is `cuda:0` when CUDA is available, else `cpu`".to_string()]
                }
                _ => Vec::new(),
            };
            notes.extend(why);
            notes
        },
        called_from: Vec::new(),
    }
}

/// Ops whose output size depends on the values of the input, not its
/// shape: torch cannot know it before running them either.
const DATA_DEPENDENT: &[&str] = &[
    "unique",
    "unique_consecutive",
    "nonzero",
    "argwhere",
    "masked_select",
    "bincount",
];

/// Why a size of the shape is `?`, when the op that made it says.
fn why_unknown(tensor: &Tensor, shape: Option<&[DimView]>) -> Option<String> {
    let unknown = shape.is_none_or(|dims| dims.contains(&DimView::Unknown));
    let op = tensor.op.rsplit('.').next().unwrap_or(&tensor.op);
    // The chain names the op as called (`torch.unique`, not `unique`).
    let called = tensor
        .trail
        .as_ref()
        .filter(|t| t.op.rsplit('.').next() == Some(op))
        .map_or(&tensor.op, |t| &t.op);
    (unknown && DATA_DEPENDENT.contains(&op))
        .then(|| format!("`?`: `{called}`: its size depends on the data"))
}

/// Steps of a chain read at most (the chain is bounded too).
const MAX_CHAIN: usize = 512;

/// The ops that made `tensor`, first to last, each where it was called.
fn chain_of(tensor: &Tensor) -> Vec<OpSite> {
    let mut steps = Vec::new();
    let mut at = tensor.trail.as_ref();
    while let Some(step) = at {
        if steps.len() >= MAX_CHAIN {
            break;
        }
        steps.push(site(&step.op, step.at));
        at = step.prev.as_ref();
    }
    steps.reverse();
    steps
}

/// An op called at a byte offset, which says no place when it is not one
/// of the analysed file.
fn site(op: &str, at: usize) -> OpSite {
    OpSite {
        op: op
            .strip_prefix("torch.nn.functional.")
            .map_or_else(|| op.to_string(), |f| format!("F.{f}")),
        at: is_local(&TextRange::new(at, at)).then_some(at),
    }
}

/// The concrete sizes of a run, shown next to a symbolic shape.
fn example(tensor: &Tensor, env: &ShapeEnv) -> Option<Vec<DimView>> {
    match &tensor.shape {
        Shape::Known(d) if d.iter().all(|x| env.value(x).is_some()) => Some(
            d.iter()
                .map(|x| DimView::Known(env.value(x).unwrap_or(0)))
                .collect(),
        ),
        _ => None,
    }
}

/// Whether a variable's name can name a size in a hint: an identifier, but
/// not `_`, which says the code does not care what it holds.
fn names_a_size(name: &str) -> bool {
    name != "_" && crate::interp::is_identifier(name)
}
