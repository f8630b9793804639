//! Recording what each binding saw, and merging runs into one shape per site.
//!
//! A line may run several times (a module called from two call sites, a
//! loop). Its hint is the anti-unification of every run: a dim that agrees
//! everywhere stays; a dim that differs becomes a symbol shared by every
//! place where it differed in the same way, named after a variable of the
//! user's that took the same values where there is one (`B`, `T`).

use rustc_hash::{FxHashMap, FxHashSet};
use std::rc::Rc;

use shapels_shapes::{Dim, ShapeEnv};
use shapels_syntax::ast::TextRange;

use crate::report::{Binding, BindingKind, DimView, ExprInfo, Origin, TensorInfo};
use crate::value::{Provenance, Shape, Tensor};

/// Runs kept per site: enough to see every context, bounded for memory.
const MAX_HITS: usize = 48;

struct Site {
    name: Rc<str>,
    range: TextRange,
    kind: BindingKind,
    hits: Vec<Rc<Tensor>>,
}

struct ScalarSite {
    name: String,
    hits: Vec<Dim>,
}

#[derive(Default)]
pub(crate) struct Recorder {
    sites: Vec<Site>,
    /// Sites by the start of their range (a few names may share one).
    index: FxHashMap<usize, Vec<usize>>,
    exprs: FxHashMap<(usize, usize), Vec<Rc<Tensor>>>,
    scalars: Vec<ScalarSite>,
    scalar_index: FxHashMap<usize, Vec<usize>>,
    /// Sites some run bound to an unknown value.
    unknown_runs: FxHashSet<(usize, Rc<str>)>,
    /// Where the annotation of an annotated name ends, by the name's start.
    annotations: FxHashMap<usize, usize>,
    /// What was recorded while a user call runs, so that a repeat of the
    /// call can record the same without running (see `interp::memo`).
    journal: Vec<Recorded>,
    /// How many calls are capturing into the journal.
    capturing: usize,
    /// The journal reached its bound and stopped taking entries.
    journal_full: bool,
    /// Runs on made-up inputs (library mode) are under way: a value such a
    /// run cannot follow says nothing about the runs that could, so it does
    /// not make their sites unknown.
    pub made_up: bool,
    /// Record only at sites no run has recorded yet. Set while library mode
    /// runs the methods forward did not reach: when `generate` calls the
    /// model on inputs it made up, the model's own run already said what
    /// its lines hold in general, and a second made-up run would only blur
    /// it (`T` and `T_2` become a nameless size).
    pub only_new_sites: bool,
    /// Tensor-valued expressions are recorded (for hover); when not, only
    /// bindings are.
    pub expressions: bool,
}

/// Entries the journal keeps at most (a bound on memory for runaway files).
const MAX_JOURNAL: usize = 200_000;

/// One thing recorded, kept to be recorded again (sites by number).
#[derive(Clone)]
pub(crate) enum Recorded {
    Binding(usize, Rc<Tensor>),
    Unknown(Rc<str>, usize),
    Expression(usize, usize, Rc<Tensor>),
    Scalar(usize, Dim),
}

impl Recorder {
    /// Start capturing what is recorded; returns the mark to end with.
    pub fn begin_capture(&mut self) -> usize {
        self.capturing += 1;
        self.journal.len()
    }

    /// Stop capturing; returns where in the journal the capture is. The
    /// journal is kept for the whole run, so the range stays valid.
    /// `None` when the journal could not hold all of it.
    pub fn end_capture(&mut self, mark: usize) -> Option<std::ops::Range<usize>> {
        self.capturing = self.capturing.saturating_sub(1);
        (!self.journal_full).then_some(mark..self.journal.len())
    }

    fn journal(&mut self, entry: impl FnOnce() -> Recorded) {
        if self.capturing == 0 {
            return;
        }
        if self.journal.len() >= MAX_JOURNAL {
            self.journal_full = true;
        } else {
            self.journal.push(entry());
        }
    }

    /// Record again what a call recorded before, each entry as `map` makes
    /// it (a repeat with new symbols renames them).
    pub fn replay(&mut self, recorded: std::ops::Range<usize>, map: impl Fn(Recorded) -> Recorded) {
        for i in recorded {
            let Some(r) = self.journal.get(i) else {
                break;
            };
            // An entry its site would drop, outside any capture, changes
            // nothing: skip it before renaming (sites in a loop fill up).
            if self.capturing == 0 && !self.would_take(r) {
                continue;
            }
            match map(r.clone()) {
                Recorded::Binding(site, tensor) => self.binding_hit(site, tensor),
                Recorded::Unknown(name, start) => self.unknown_at(name, start),
                Recorded::Expression(start, end, tensor) => self.expression_at(start, end, tensor),
                Recorded::Scalar(site, value) => self.scalar_hit(site, value),
            }
        }
    }

    /// Whether recording `r` would add a run to its site.
    fn would_take(&self, r: &Recorded) -> bool {
        let takes = |held: usize| takes_run(self.only_new_sites, held);
        match r {
            Recorded::Binding(site, _) => takes(self.sites[*site].hits.len()),
            Recorded::Expression(start, end, _) => {
                takes(self.exprs.get(&(*start, *end)).map_or(0, Vec::len))
            }
            Recorded::Scalar(site, _) => takes(self.scalars[*site].hits.len()),
            Recorded::Unknown(..) => true,
        }
    }

    pub fn binding(&mut self, name: &str, range: TextRange, kind: BindingKind, tensor: Rc<Tensor>) {
        let at = self.index.entry(range.start).or_default();
        let site = match at.iter().find(|i| *self.sites[**i].name == *name) {
            Some(i) => *i,
            None => {
                at.push(self.sites.len());
                self.sites.push(Site {
                    name: Rc::from(name),
                    range,
                    kind,
                    hits: Vec::new(),
                });
                self.sites.len() - 1
            }
        };
        self.binding_hit(site, tensor);
    }

    fn binding_hit(&mut self, site: usize, tensor: Rc<Tensor>) {
        self.journal(|| Recorded::Binding(site, tensor.clone()));
        let only_new = self.only_new_sites;
        let site = &mut self.sites[site];
        if takes_run(only_new, site.hits.len()) {
            site.hits.push(tensor);
        }
    }

    /// The name at `range` is annotated (`x: Tensor`); the annotation ends at
    /// `end`, where its hint goes.
    pub fn annotation(&mut self, range: &TextRange, end: usize) {
        self.annotations.insert(range.start, end);
    }

    /// A run where the name was bound to something the analysis could not
    /// follow: the site's shape is then not known for every run.
    pub fn unknown_binding(&mut self, name: &str, range: TextRange) {
        if !self.made_up {
            self.unknown_at(Rc::from(name), range.start);
        }
    }

    fn unknown_at(&mut self, name: Rc<str>, start: usize) {
        self.journal(|| Recorded::Unknown(name.clone(), start));
        self.unknown_runs.insert((start, name));
    }

    pub fn expression(&mut self, range: TextRange, tensor: Rc<Tensor>) {
        if self.expressions {
            self.expression_at(range.start, range.end, tensor);
        }
    }

    fn expression_at(&mut self, start: usize, end: usize, tensor: Rc<Tensor>) {
        self.journal(|| Recorded::Expression(start, end, tensor.clone()));
        let only_new = self.only_new_sites;
        let hits = self.exprs.entry((start, end)).or_default();
        if takes_run(only_new, hits.len()) {
            hits.push(tensor);
        }
    }

    pub fn scalar(&mut self, name: &str, range: TextRange, value: Dim) {
        let at = self.scalar_index.entry(range.start).or_default();
        let site = match at.iter().find(|i| self.scalars[**i].name == name) {
            Some(i) => *i,
            None => {
                at.push(self.scalars.len());
                self.scalars.push(ScalarSite {
                    name: name.to_string(),
                    hits: Vec::new(),
                });
                self.scalars.len() - 1
            }
        };
        self.scalar_hit(site, value);
    }

    fn scalar_hit(&mut self, site: usize, value: Dim) {
        self.journal(|| Recorded::Scalar(site, value.clone()));
        let only_new = self.only_new_sites;
        let site = &mut self.scalars[site];
        if takes_run(only_new, site.hits.len()) {
            site.hits.push(value);
        }
    }

    /// Merge the runs of every site into the user-facing results.
    pub fn finish(
        self,
        env: &ShapeEnv,
        resolve: &dyn Fn(&Shape) -> Shape,
        heads: FxHashMap<u32, Vec<Dim>>,
        static_shapes: bool,
    ) -> (Vec<Binding>, Vec<ExprInfo>) {
        let mut namer = Namer::new(env, &self.scalars);
        namer.static_shapes = static_shapes;
        namer.heads = heads;
        // Sites and expressions often saw the very same tensors (`x =
        // self.fc(x)` records one tensor for the name and the call): their
        // merge is the same, so it is done once.
        let mut merged: FxHashMap<Vec<*const Tensor>, TensorInfo> = FxHashMap::default();
        let mut merge_once = |hits: &[Rc<Tensor>], namer: &mut Namer<'_>| {
            let key: Vec<*const Tensor> = hits.iter().map(Rc::as_ptr).collect();
            merged
                .entry(key)
                .or_insert_with(|| merge(hits, env, resolve, namer))
                .clone()
        };
        let mut bindings: Vec<Binding> = self
            .sites
            .iter()
            .map(|site| {
                let mut tensor = merge_once(&site.hits, &mut namer);
                // Another run bound something unknown here: what the tensor
                // runs saw is not the whole story, so the shape is unknown.
                if self
                    .unknown_runs
                    .contains(&(site.range.start, site.name.clone()))
                {
                    tensor.shape = None;
                }
                Binding {
                    name: site.name.to_string(),
                    range: site.range.clone(),
                    hint_at: self
                        .annotations
                        .get(&site.range.start)
                        .copied()
                        .unwrap_or(site.range.end),
                    kind: site.kind,
                    tensor,
                }
            })
            .collect();
        bindings.sort_by(|a, b| (a.range.start, &a.name).cmp(&(b.range.start, &b.name)));
        // In source order, not the table's: the names merging hands out
        // must not depend on where in the file an expression sits, or an
        // edit that only moved code would rename its sizes.
        let mut recorded: Vec<_> = self.exprs.iter().collect();
        recorded.sort_unstable_by_key(|(range, _)| **range);
        let exprs: Vec<ExprInfo> = recorded
            .into_iter()
            .map(|((start, end), hits)| ExprInfo {
                range: *start..*end,
                tensor: merge_once(hits, &mut namer),
            })
            .collect();
        (bindings, exprs)
    }
}

/// Whether a site that holds `held` runs takes one more: up to `MAX_HITS`,
/// and only an empty site while only new sites record.
fn takes_run(only_new_sites: bool, held: usize) -> bool {
    held < MAX_HITS && !(only_new_sites && held > 0)
}

/// Names for dims that differ between runs.
struct Namer<'a> {
    env: &'a ShapeEnv,
    /// Per sequence of per-run values, the name chosen for it.
    chosen: FxHashMap<Vec<String>, String>,
    /// The user's int variables by their sequence of per-run values.
    candidates: FxHashMap<Vec<String>, String>,
    taken: FxHashSet<String>,
    /// Compound sizes the user gave a name (`head_dim = C // n_head`), shown
    /// by that name: it is what the code calls them.
    aliases: FxHashMap<Dim, String>,
    /// Known leading sizes of unrefined rank variables (`x.size(0)`).
    heads: FxHashMap<u32, Vec<Dim>>,
    static_shapes: bool,
    /// Memoised resolution and display: one file shows the same sizes often.
    resolved_cache: FxHashMap<Dim, Dim>,
    shown_cache: FxHashMap<Dim, String>,
    /// The facts the shape environment assumed, computed once.
    guard_facts: Vec<(Vec<shapels_shapes::SymId>, String)>,
}

impl<'a> Namer<'a> {
    fn new(env: &'a ShapeEnv, scalars: &[ScalarSite]) -> Namer<'a> {
        let mut candidates = FxHashMap::default();
        for s in scalars {
            if s.hits.len() < 2 || !names_a_size(&s.name) {
                continue;
            }
            let key: Vec<String> = s.hits.iter().map(|d| env.display(d)).collect();
            if key.iter().any(|k| k == "?") || key.iter().all(|k| k == &key[0]) {
                continue;
            }
            // Runs of 1s and 2s match too many sizes by chance (two models
            // built with `factor = 2 if bilinear else 1` and called on
            // batches of 1 and 2): only a size that says more names a dim.
            if key.iter().all(|k| matches!(k.as_str(), "0" | "1" | "2")) {
                continue;
            }
            candidates.entry(key).or_insert_with(|| s.name.clone());
        }
        let taken: FxHashSet<String> = (0..env.symbol_count() as u32)
            .filter_map(|i| env.info(shapels_shapes::SymId(i)).map(|s| s.name.clone()))
            .collect();
        let mut aliases = FxHashMap::default();
        for s in scalars {
            if !names_a_size(&s.name) || taken.contains(&s.name) {
                continue;
            }
            let resolved: Vec<Dim> = s.hits.iter().map(|d| env.resolve(d)).collect();
            let Some(first) = resolved.first() else {
                continue;
            };
            let compound = first.as_const().is_none() && first.as_sym().is_none();
            if compound && resolved.iter().all(|d| d == first) && !env.has_anonymous(first) {
                aliases
                    .entry(first.clone())
                    .or_insert_with(|| s.name.clone());
            }
        }
        Namer {
            env,
            chosen: FxHashMap::default(),
            candidates,
            taken,
            aliases,
            heads: FxHashMap::default(),
            static_shapes: false,
            guard_facts: env.guard_facts(),
            resolved_cache: FxHashMap::default(),
            shown_cache: FxHashMap::default(),
        }
    }

    /// The name the user gave a compound size, or a product of two such
    /// names (`h*w` for a flattened feature map after `b, c, h, w =
    /// x.shape`), rather than the expression they stand for.
    fn alias_of(&self, d: &Dim) -> Option<String> {
        if let Some(name) = self.aliases.get(d) {
            return Some(name.clone());
        }
        if d.is_const() || self.aliases.len() > 32 {
            return None;
        }
        let mut products: Vec<String> = Vec::new();
        for (a, na) in &self.aliases {
            for (b, nb) in &self.aliases {
                if na <= nb && a.mul(b) == *d {
                    products.push(format!("{na}*{nb}"));
                }
            }
        }
        products.into_iter().min()
    }

    fn resolved(&mut self, d: &Dim) -> Dim {
        if let Some(r) = self.resolved_cache.get(d) {
            return r.clone();
        }
        let r = self.env.resolve(d);
        self.resolved_cache.insert(d.clone(), r.clone());
        r
    }

    fn shown(&mut self, d: &Dim) -> String {
        if let Some(s) = self.shown_cache.get(d) {
            return s.clone();
        }
        let s = self.env.display(d);
        self.shown_cache.insert(d.clone(), s.clone());
        s
    }

    fn name(&mut self, key: Vec<String>) -> String {
        if let Some(n) = self.chosen.get(&key) {
            return n.clone();
        }
        let base = self
            .candidates
            .get(&key)
            .cloned()
            .unwrap_or_else(|| "s".to_string());
        let mut name = base.clone();
        let mut k = 1;
        while self.taken.contains(&name) || (base == "s" && name == "s") {
            k += 1;
            name = format!("{base}{k}");
        }
        self.taken.insert(name.clone());
        self.chosen.insert(key, name.clone());
        let _ = self.env;
        name
    }
}

/// Where a shape of unknown rank has its unknown dims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variadic {
    None,
    Lead,
    Trail,
}

fn merge(
    hits: &[Rc<Tensor>],
    env: &ShapeEnv,
    resolve: &dyn Fn(&Shape) -> Shape,
    namer: &mut Namer<'_>,
) -> TensorInfo {
    // A call repeated on the same inputs records the very same tensor each
    // time: one run says it all, except that there were several.
    if hits.len() > 1 && hits.iter().all(|h| Rc::ptr_eq(h, &hits[0])) {
        let mut info = merge(&hits[..1], env, resolve, namer);
        info.example = example(&hits[0], env);
        return info;
    }
    // Each run's shape: its dims, and where any number of further dims
    // stand: before them (known trailing dims, `[*, 768]`), after them (known
    // leading sizes of a tensor of unknown rank, `[N, *]`), or nowhere.
    let mut shapes: Vec<Option<(Variadic, Vec<Dim>)>> = Vec::with_capacity(hits.len());
    for (i, t) in hits.iter().enumerate() {
        // Runs of the same tensor (a repeated call) resolve alike.
        if i > 0 && Rc::ptr_eq(t, &hits[i - 1]) {
            let previous = shapes[i - 1].clone();
            shapes.push(previous);
            continue;
        }
        let shape = match resolve(&t.shape) {
            Shape::Known(d) => Some((
                Variadic::None,
                d.iter().map(|x| namer.resolved(x)).collect(),
            )),
            Shape::Tail(_, d) => Some((
                Variadic::Lead,
                d.iter().map(|x| namer.resolved(x)).collect(),
            )),
            Shape::Var(v) => {
                let head = namer.heads.get(&v).cloned().unwrap_or_default();
                if head.is_empty() {
                    None
                } else {
                    Some((
                        Variadic::Trail,
                        head.iter().map(|x| namer.resolved(x)).collect(),
                    ))
                }
            }
        };
        shapes.push(shape);
    }
    let shape = if shapes.iter().any(Option::is_none) || shapes.is_empty() {
        None
    } else {
        let mut shapes: Vec<(Variadic, Vec<Dim>)> = shapes.into_iter().flatten().collect();
        // A function used on tensors of several ranks (a helper that works
        // on the last dims, called on `[B, T, C]` and `[B, H, T, C]`): the
        // dims all runs have at the end, after a variadic head. The
        // shortest run's first dim goes into the head too, unless it is its
        // only dim (a vector's features, `[C]` and `[B, C]`): the longer
        // runs hold more dims before it, so it is a leading (batch-like)
        // dim, and lining it up with a dim of theirs would show a
        // coincidence (`[2, T, C]` and `[B, 2, T, C]`).
        if shapes.iter().all(|(v, _)| *v == Variadic::None)
            && shapes.iter().any(|(_, d)| d.len() != shapes[0].1.len())
        {
            let shortest = shapes.iter().map(|(_, d)| d.len()).min().unwrap_or(0);
            let kept = if shortest == 1 {
                1
            } else {
                shortest.saturating_sub(1)
            };
            for (variadic, dims) in &mut shapes {
                *variadic = Variadic::Lead;
                dims.drain(..dims.len() - kept);
            }
        }
        let variadic = shapes[0].0;
        let shapes: Vec<Vec<Dim>> = if shapes.iter().all(|(v, _)| *v == variadic) {
            shapes.into_iter().map(|(_, d)| d).collect()
        } else {
            Vec::new()
        };
        let rank = shapes.first().map(Vec::len).unwrap_or(0);
        // A variadic head alone says nothing about the shape.
        if shapes.is_empty()
            || shapes.iter().any(|s| s.len() != rank)
            || (rank == 0 && variadic != Variadic::None)
        {
            None
        } else {
            let lead =
                (variadic == Variadic::Lead).then(|| DimView::Variadic("*batch".to_string()));
            let trail =
                (variadic == Variadic::Trail).then(|| DimView::Variadic("*rest".to_string()));
            Some(
                lead.into_iter()
                    .chain((0..rank).map(|i| {
                        // Most lines run once or with one size: display it once.
                        let column: Vec<String> = if shapes.iter().all(|s| s[i] == shapes[0][i]) {
                            vec![namer.shown(&shapes[0][i])]
                        } else {
                            shapes.iter().map(|s| namer.shown(&s[i])).collect()
                        };
                        if column.iter().any(|c| c == "?") {
                            DimView::Unknown
                        } else if column.iter().all(|c| c == &column[0]) {
                            match shapes[0][i].as_const() {
                                Some(n) => DimView::Known(n),
                                None => DimView::Symbol(
                                    namer
                                        .alias_of(&shapes[0][i])
                                        .unwrap_or_else(|| column[0].clone()),
                                ),
                            }
                        } else {
                            // With static shapes there are no symbols for
                            // sizes that vary between runs, as in torch.
                            if namer.static_shapes {
                                DimView::Unknown
                            } else {
                                DimView::Symbol(namer.name(column))
                            }
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
        example,
        guards: {
            let symbols: Vec<shapels_shapes::SymId> = match resolve(&first.shape) {
                Shape::Known(d) | Shape::Tail(_, d) => {
                    d.iter().flat_map(|x| namer.resolved(x).symbols()).collect()
                }
                Shape::Var(_) => Vec::new(),
            };
            let mut facts: Vec<String> = namer
                .guard_facts
                .iter()
                .filter(|(syms, _)| syms.iter().any(|s| symbols.contains(s)))
                .map(|(_, text)| text.clone())
                .collect();
            facts.sort();
            facts.dedup();
            facts
        },
        notes: match &first.device {
            Some(crate::value::Device::CudaOrCpu) => {
                vec!["device is `cuda:0` when CUDA is available, else `cpu`".to_string()]
            }
            _ => Vec::new(),
        },
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
