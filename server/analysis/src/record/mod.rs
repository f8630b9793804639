//! Recording what each binding saw, and merging runs into one shape per site.
//!
//! A line may run several times (a module called from two call sites, a
//! loop). Its hint is the anti-unification of every run (see `merge`); each
//! run is recorded with the call of a user function it was made in, so that
//! dims of different lines can be compared call by call.

use rustc_hash::{FxHashMap, FxHashSet};
use std::rc::Rc;

use shapels_shapes::{Dim, ShapeEnv};
use shapels_syntax::ast::TextRange;

use crate::report::{Binding, BindingKind, Diagnostic, ExprInfo, TensorInfo};
use crate::value::{Shape, Tensor};
use crate::workspace::is_local;

mod journal;
mod merge;
mod own_runs;
mod run_values;
mod runs;
mod scoped_names;

pub(crate) use journal::{Portable, Recorded};
use merge::{Namer, merge, name_varying};
use runs::{
    CALL_KINDS, DECLARED_CALL, FOR_ANY_INPUT, FOR_DECLARED_INPUT, MADE_UP_CALL, RunKind, Runs,
    UNREADABLE_CALL,
};

/// What merging the runs needs to know of the finished analysis.
pub(crate) struct FinishView<'a> {
    pub env: &'a ShapeEnv,
    pub resolve: &'a dyn Fn(&Shape) -> Shape,
    /// Known leading sizes of unrefined rank variables (`x.size(0)`).
    pub heads: FxHashMap<u32, Vec<Dim>>,
    /// Known trailing sizes of unrefined rank variables (`x.size(-1)`).
    pub tails: FxHashMap<u32, Vec<Dim>>,
    /// Names annotations gave rank variables (`*bs`).
    pub variadic_names: FxHashMap<u32, std::rc::Rc<str>>,
    /// The rank variables of made-up inputs whose rank nothing fixed.
    pub made_up: FxHashSet<u32>,
    pub static_shapes: bool,
    /// Where an offset of another file is (`enc.py:5`).
    pub place: &'a dyn Fn(usize) -> Option<String>,
    /// The file's functions, sorted by start: the scopes sizes are named in.
    pub scopes: Vec<TextRange>,
}

/// Runs kept per site: enough to see every context, bounded for memory.
pub(super) const MAX_HITS: usize = 48;

/// Each einops axis, by where its pattern is written and its name, with
/// the kind of run (`CALL_KINDS` bits) and the size of each of its runs.
pub(super) type PatternRuns = FxHashMap<(usize, Rc<str>), Vec<(u32, Dim)>>;

/// Sizes kept per einops axis: a pattern mapped over three tensors runs
/// thrice a call.
pub(super) const MAX_PATTERN_RUNS: usize = 3 * MAX_HITS;

/// Einops axes (and their sizes, see `pattern_names`) kept per file.
const MAX_PATTERN_AXES: usize = 4096;

struct Site {
    name: Rc<str>,
    range: TextRange,
    kind: BindingKind,
    hits: Runs,
}

struct ScalarSite {
    name: String,
    hits: Vec<Dim>,
    /// Per hit, whether a function's run of its own made it (see
    /// `own_runs`), which decides whether it counts.
    own: Vec<bool>,
    /// Per hit, the kind of run that made it (`RunKind`'s bits of its
    /// call): the sites of a function keep the runs of one kind where
    /// calls and made-up runs both reached it, and so does a variable's
    /// naming of their sizes (see `telling_kind`).
    kinds: Vec<u32>,
    /// A function's parameter, not an assignment: a name the code chose for
    /// a size it computes is the better name where both fit.
    param: bool,
    /// As `Runs::entry`.
    entry: u32,
}

impl ScalarSite {
    /// Keep only the hits of a function's own run (`own`), or only the
    /// others: what `own_runs` decided its lines show.
    fn keep_own(&mut self, own: bool) {
        let mut of = self.own.iter();
        self.hits.retain(|_| of.next() == Some(&own));
        let mut of = self.own.iter();
        self.kinds.retain(|_| of.next() == Some(&own));
        self.own.retain(|o| *o == own);
    }
}

#[derive(Default)]
pub(crate) struct Recorder {
    /// Names bound to unknown values, and why (see `unknown_reason`).
    pub unknown_reasons: Vec<crate::report::UnknownName>,
    sites: Vec<Site>,
    /// Sites by the start of their range (a few names may share one).
    index: FxHashMap<usize, Vec<usize>>,
    exprs: FxHashMap<(usize, usize), Runs>,
    scalars: Vec<ScalarSite>,
    scalar_index: FxHashMap<usize, Vec<usize>>,
    /// Where each scalar site starts, by number.
    scalar_starts: Vec<usize>,
    /// Sites some run bound to an unknown value, and whether one such run
    /// could read its inputs (otherwise all were unreadable calls).
    unknown_runs: FxHashMap<(usize, Rc<str>), bool>,
    /// Where the annotation of an annotated name ends, by the name's start.
    annotations: FxHashMap<usize, usize>,
    /// What was recorded while a user call runs, so that a repeat of the
    /// call can record the same without running (see `interp::memo`).
    journal: Vec<Recorded>,
    /// How many calls are capturing into the journal.
    capturing: usize,
    /// The journal reached its bound and stopped taking entries.
    journal_full: bool,
    /// Loop turns run once for all of them are under way (see
    /// `interp::induction`): what they record is only journaled, to be
    /// recorded once per turn when the run holds for every turn, or
    /// dropped when it does not.
    deferring: u32,
    /// Runs on made-up inputs (library mode) are under way: a value such a
    /// run cannot follow says nothing about the runs that could, so it does
    /// not make their sites unknown.
    pub made_up: bool,
    /// Library mode is about to run a function declared generic on its
    /// declared shapes: the next call entered is that run.
    pub declared: bool,
    /// Record only at sites no run has recorded yet. Set while library mode
    /// runs the methods forward did not reach: when `generate` calls the
    /// model on inputs it made up, the model's own run already said what
    /// its lines hold in general, and a second made-up run would only blur
    /// it (`T` and `T_2` become a nameless size).
    pub only_new_sites: bool,
    /// Library mode's entries while only new sites record, numbered from 1
    /// (see `begin_entry_of_new_sites`).
    entries_of_new_sites: u32,
    /// Tensor-valued expressions are recorded (for hover); when not, only
    /// bindings are.
    pub expressions: bool,
    /// Runs whose records nobody reads are under way (see
    /// `Interp::forward_for_any_input`): nothing is recorded.
    pub muted: u32,
    /// A function's run of its own is under way (see `own_runs`): only
    /// what its own lines hold is recorded, not what the functions it
    /// calls hold for its made-up inputs, which would blur their runs.
    pub own_only: Option<TextRange>,
    /// Functions whose annotations declare them generic in their sizes
    /// (see `Runs::generic`), by their ranges.
    generic_bodies: Vec<TextRange>,
    /// The functions of `generic_bodies` that no annotation declared
    /// generic: their own made-up run is shown (see `show_own_run`).
    own_bodies: Vec<TextRange>,
    /// Own runs that hold for some settings only (see `drop_own_run`).
    own_dropped: Vec<TextRange>,
    /// The sizes a generic function's annotations name, with where the
    /// function's parameters start: they name those sizes in it.
    declared_names: Vec<(usize, String, Dim)>,
    /// The sizes einops patterns name (`n` of `'b n (h d)'`), with where
    /// each pattern is written, in the order met, each once.
    pattern_names: Vec<(usize, String, Dim)>,
    pattern_names_seen: FxHashSet<(usize, String, Dim)>,
    /// Each einops axis (by where its pattern is written and its name)
    /// with the size it took in each run, in the order the runs came: the
    /// name of a size that differs between calls (`b` of `'b n d'`), as a
    /// variable's values are (see `ScalarSite`).
    pattern_runs: PatternRuns,
    /// Per function (by where it starts), where the calls that ran it on
    /// inputs the analysis could read are, sorted (see `reached_from`).
    reached: FxHashMap<usize, Vec<usize>>,
    /// The call of a user function being run (0 for the module's code).
    call: u32,
    /// Calls numbered so far.
    calls: u32,
}

/// The runs a merge was made of, and the function whose names it shows.
type MergeKey = (usize, Vec<(*const Tensor, u32)>);

impl Recorder {
    /// The function at `range` is declared generic in its sizes: its lines
    /// show its run on the declared shapes (see `Runs::generic`).
    pub fn declare_generic(&mut self, range: TextRange) {
        if is_local(&range) && !self.generic_bodies.contains(&range) {
            self.generic_bodies.push(range);
        }
    }

    /// A size a generic function's annotation names (`batch` of
    /// `Float[Tensor, "batch token dim"]`), in the function starting at `start`.
    pub fn declared_name(&mut self, start: usize, name: &str, dim: Dim) {
        if self.takes_site(&TextRange::new(start, start))
            && !self
                .declared_names
                .iter()
                .any(|(s, n, _)| *s == start && n == name)
        {
            self.declared_names.push((start, name.to_string(), dim));
        }
    }

    /// A size an einops pattern written at `at` names (see `Meta::axis_named`).
    pub fn pattern_name(&mut self, at: usize, name: &str, dim: Dim) {
        if !self.takes_site(&TextRange::new(at, at)) {
            return;
        }
        if self.pattern_names.len() < MAX_PATTERN_AXES
            && self
                .pattern_names_seen
                .insert((at, name.to_string(), dim.clone()))
        {
            self.pattern_names.push((at, name.to_string(), dim.clone()));
        }
        self.pattern_run(at, Rc::from(name), self.call & CALL_KINDS, dim);
    }

    fn pattern_run(&mut self, at: usize, name: Rc<str>, kind: u32, dim: Dim) {
        self.journal(|| Recorded::Pattern(at, name.clone(), kind, dim.clone()));
        if self.deferring > 0 {
            return;
        }
        let runs = self.pattern_runs.len();
        match self.pattern_runs.get_mut(&(at, name.clone())) {
            Some(hits) if hits.len() < MAX_PATTERN_RUNS => hits.push((kind, dim)),
            Some(_) => {}
            None if runs < MAX_PATTERN_AXES => {
                self.pattern_runs.insert((at, name), vec![(kind, dim)]);
            }
            None => {}
        }
    }

    /// Library mode runs another method while only new sites record: the
    /// sites it records first take all its runs (a loop's turns), not the
    /// first alone.
    pub fn begin_entry_of_new_sites(&mut self) {
        self.entries_of_new_sites += 1;
    }

    /// The entry that records now while only new sites do, or 0.
    fn new_sites_entry(&self) -> u32 {
        if self.only_new_sites {
            self.entries_of_new_sites
        } else {
            0
        }
    }

    /// Whether the function at `range` is declared generic: library mode
    /// runs it on its declared shapes even when calls reached it.
    pub fn declared_generic(&self, range: &TextRange) -> bool {
        self.generic_bodies.contains(range)
    }

    /// Whether `start` is inside a function declared generic.
    fn in_generic(&self, start: usize) -> bool {
        self.generic_bodies
            .iter()
            .any(|r| r.start <= start && start < r.end)
    }

    /// Whether something recorded at `range` is kept: it is in the
    /// analysed file (an imported file's hints are its own), and no run
    /// whose records nobody reads is under way (see `muted`).
    fn takes_site(&self, range: &TextRange) -> bool {
        self.muted == 0 && is_local(range) && self.in_own_run(range)
    }

    /// Whether the lines at `range` record what runs now: a callee run in
    /// another function's run of its own (see `own_only`) does not show.
    pub fn shows_lines_at(&self, range: &TextRange) -> bool {
        self.takes_site(range)
    }

    /// Whether `range` is in the function whose own run is under way, if
    /// one is (see `own_only`).
    fn in_own_run(&self, range: &TextRange) -> bool {
        self.own_only
            .is_none_or(|body| body.start <= range.start && range.start < body.end)
    }

    /// A user function's body starts running: what it records is that
    /// call's. `unreadable` when the call was given a value the analysis
    /// could not follow. Returns the call to go back to when it ends.
    pub fn enter_call(&mut self, unreadable: bool) -> u32 {
        self.calls += 1;
        let mut call = self.calls & !CALL_KINDS;
        if unreadable {
            call |= UNREADABLE_CALL;
        }
        if self.made_up {
            call |= MADE_UP_CALL;
        }
        // Only the generic function's own call runs on its declared shapes:
        // the calls it makes are made-up runs like any other.
        if std::mem::take(&mut self.declared) {
            call |= DECLARED_CALL;
        }
        std::mem::replace(&mut self.call, call)
    }

    pub fn leave_call(&mut self, outer: u32) {
        self.call = outer;
    }

    /// A call at `at` runs the function at `function` on inputs the
    /// analysis can read: the function's lines are shown for that call
    /// (hover says "for the call at line 88").
    pub fn reached_from(&mut self, function: TextRange, at: TextRange) {
        if self.made_up || !self.takes_site(&function) || !is_local(&at) || at.is_empty() {
            return;
        }
        self.reached_at(function.start, at.start);
    }

    fn reached_at(&mut self, function: usize, at: usize) {
        self.journal(|| Recorded::Reached(function, at));
        if self.deferring > 0 {
            return;
        }
        let calls = self.reached.entry(function).or_default();
        if let Err(i) = calls.binary_search(&at) {
            calls.insert(i, at);
        }
    }

    pub fn binding(&mut self, name: &str, range: TextRange, kind: BindingKind, tensor: Rc<Tensor>) {
        // Code of an imported file runs in this analysis, but its hints
        // belong to that file's own.
        if !self.takes_site(&range) {
            return;
        }
        let at = self.index.entry(range.start).or_default();
        let site = match at.iter().find(|i| *self.sites[**i].name == *name) {
            Some(i) => *i,
            None => {
                let generic = self.in_generic(range.start);
                let at = self.index.entry(range.start).or_default();
                at.push(self.sites.len());
                self.sites.push(Site {
                    name: Rc::from(name),
                    range,
                    kind,
                    hits: Runs {
                        generic,
                        ..Runs::default()
                    },
                });
                self.sites.len() - 1
            }
        };
        self.binding_hit(site, self.call, tensor);
    }

    fn binding_hit(&mut self, site: usize, call: u32, tensor: Rc<Tensor>) {
        self.journal(|| Recorded::Binding(site, call, tensor.clone()));
        if self.deferring > 0 {
            return;
        }
        let (only_new, entry) = (self.only_new_sites, self.new_sites_entry());
        let site = &mut self.sites[site];
        if site.hits.takes(only_new, call, entry) {
            site.hits.push(tensor, call, entry);
        }
    }

    /// The name at `range` is annotated (`x: Tensor`); the annotation ends at
    /// `end`, where its hint goes.
    pub fn annotation(&mut self, range: &TextRange, end: usize) {
        if !is_local(range) {
            return;
        }
        self.annotation_at(range.start, end);
    }

    fn annotation_at(&mut self, start: usize, end: usize) {
        self.journal(|| Recorded::Annotation(start, end));
        if self.deferring > 0 {
            return;
        }
        self.annotations.insert(start, end);
    }

    /// Why the name bound at `range` holds something the analysis cannot
    /// follow (see `interp::unknowns`).
    pub fn unknown_reason(&mut self, name: &str, range: TextRange, why: String) {
        if self.muted > 0 || !self.in_own_run(&range) {
            return;
        }
        // Journaled, so that a call taken from the memo or from the last
        // version explains its names too.
        self.journal(|| Recorded::UnknownReason(Rc::from(name), range, Rc::from(why.as_str())));
        if self.deferring == 0
            && self.unknown_reasons.len() < 4096
            && !self
                .unknown_reasons
                .iter()
                .any(|u| u.range == range && u.name == name)
        {
            self.unknown_reasons.push(crate::report::UnknownName {
                name: name.to_string(),
                range,
                why,
            });
        }
    }

    /// A run where the name was bound to something the analysis could not
    /// follow: the site's shape is then not known for every run.
    pub fn unknown_binding(&mut self, name: &str, range: TextRange) {
        if !self.made_up && self.takes_site(&range) {
            let read = RunKind::of(self.call) == RunKind::Read;
            self.unknown_at(Rc::from(name), range.start, read);
        }
    }

    fn unknown_at(&mut self, name: Rc<str>, start: usize, read: bool) {
        self.journal(|| Recorded::Unknown(name.clone(), start, read));
        if self.deferring > 0 {
            return;
        }
        *self.unknown_runs.entry((start, name)).or_insert(false) |= read;
    }

    pub fn expression(&mut self, range: TextRange, tensor: Rc<Tensor>) {
        if self.expressions && self.takes_site(&range) {
            self.expression_at(range.start, range.end, self.call, tensor);
        }
    }

    fn expression_at(&mut self, start: usize, end: usize, call: u32, tensor: Rc<Tensor>) {
        self.journal(|| Recorded::Expression(start, end, call, tensor.clone()));
        if self.deferring > 0 {
            return;
        }
        let (only_new, entry) = (self.only_new_sites, self.new_sites_entry());
        let generic = !self.generic_bodies.is_empty() && self.in_generic(start);
        let hits = self.exprs.entry((start, end)).or_insert_with(|| Runs {
            generic,
            ..Runs::default()
        });
        if hits.takes(only_new, call, entry) {
            hits.push(tensor, call, entry);
        }
    }

    pub fn scalar(&mut self, name: &str, range: TextRange, value: Dim, param: bool) {
        self.scalar_of_kind(name, range, value, param, self.call & CALL_KINDS);
    }

    /// `scalar`, bound in a run of the kind `kind` (`CALL_KINDS` bits).
    fn scalar_of_kind(&mut self, name: &str, range: TextRange, value: Dim, param: bool, kind: u32) {
        // Another file's names do not name this file's sizes.
        if !self.takes_site(&range) {
            return;
        }
        let at = self.scalar_index.entry(range.start).or_default();
        let site = match at.iter().find(|i| self.scalars[**i].name == name) {
            Some(i) => *i,
            None => {
                at.push(self.scalars.len());
                self.scalar_starts.push(range.start);
                self.scalars.push(ScalarSite {
                    name: name.to_string(),
                    hits: Vec::new(),
                    own: Vec::new(),
                    kinds: Vec::new(),
                    param,
                    entry: 0,
                });
                self.scalars.len() - 1
            }
        };
        self.scalar_hit(site, value, kind);
    }

    fn scalar_hit(&mut self, site: usize, value: Dim, kind: u32) {
        self.journal(|| Recorded::Scalar(site, value.clone(), kind));
        if self.deferring > 0 {
            return;
        }
        let (only_new, entry) = (self.only_new_sites, self.new_sites_entry());
        let site = &mut self.scalars[site];
        if takes_run(only_new, site.hits.len(), site.entry, entry) {
            if site.hits.is_empty() {
                site.entry = entry;
            }
            site.hits.push(value);
            site.own.push(self.own_only.is_some());
            site.kinds.push(kind);
        }
    }

    /// Merge the runs of every site into the user-facing results; the
    /// diagnostics' messages get the names the hints around them use.
    /// The names bound to int sizes, with what each run bound them to, for
    /// hover (an analysis that records expressions only).
    pub fn sizes(&self, env: &ShapeEnv, scopes: &[TextRange]) -> Vec<crate::report::SizeBinding> {
        if !self.expressions {
            return Vec::new();
        }
        self.scalars
            .iter()
            .zip(&self.scalar_starts)
            .map(|(site, start)| {
                let mut values: Vec<String> = Vec::new();
                for hit in &site.hits {
                    let shown = env.display(hit);
                    if !values.contains(&shown) {
                        values.push(shown);
                    }
                }
                let scope = scopes
                    .iter()
                    .filter(|r| r.start <= *start && *start < r.end)
                    .min_by_key(|r| r.end - r.start)
                    .cloned()
                    .unwrap_or(TextRange::new(0, usize::MAX));
                crate::report::SizeBinding {
                    name: site.name.clone(),
                    range: (*start..*start + site.name.len()).into(),
                    scope,
                    values,
                }
            })
            .collect()
    }

    pub fn finish(
        mut self,
        view: &FinishView<'_>,
        diagnostics: &mut [Diagnostic],
    ) -> (Vec<Binding>, Vec<ExprInfo>) {
        let FinishView {
            env,
            resolve,
            static_shapes,
            place,
            ..
        } = *view;
        self.settle_own_runs(env, resolve);
        let (heads, scopes) = (view.heads.clone(), view.scopes.clone());
        let variadic_names = view.variadic_names.clone();
        let mut namer = Namer::new(
            env,
            &self.scalars,
            &self.scalar_starts,
            &self.declared_names,
            &self.pattern_names,
            &self.pattern_runs,
            scopes,
        );

        namer.static_shapes = static_shapes;
        namer.heads = heads;
        namer.tails = view.tails.clone();
        namer.variadic_names = variadic_names;
        namer.made_up = view.made_up.clone();
        // Per function, the rank variables shown as the leading dims of a
        // shape that ends in known ones (`x: [*batch, C]`): where one alone
        // is, `[*batch]` says which dims a tensor has (`x.sum(-1)`).
        for site in &self.sites {
            let scope = namer.scope_at(site.range.start);
            for t in &site.hits.tensors {
                if let Shape::Tail(v, dims) = resolve(&t.shape)
                    && !dims.is_empty()
                {
                    namer.lead_vars.entry(scope).or_default().insert(v);
                }
            }
        }
        // Sites and expressions often saw the very same tensors (`x =
        // self.fc(x)` records one tensor for the name and the call): their
        // merge is the same, so it is done once.
        let mut merged: FxHashMap<MergeKey, TensorInfo> = FxHashMap::default();
        let reached = &self.reached;
        // Whether the innermost function shown for its own run around
        // `at` is one no annotation declared generic (see `show_own_run`).
        let own_run_at = |at: usize| {
            self.generic_bodies
                .iter()
                .filter(|r| r.start <= at && at < r.end)
                .max_by_key(|r| r.start)
                .is_some_and(|r| self.own_bodies.contains(r))
        };
        let mut merge_once = |hits: &Runs, read_unknown: bool, namer: &mut Namer<'_>| {
            let (tensors, calls, note) = hits.telling(read_unknown);
            let key: Vec<(*const Tensor, u32)> = tensors
                .iter()
                .map(Rc::as_ptr)
                .zip(calls.iter().copied())
                .collect();
            merged
                .entry((namer.scope(), key))
                .or_insert_with(|| {
                    let mut info = merge(&tensors, &calls, env, resolve, namer);
                    // Shown for the calls made: hover says which.
                    if note.is_none()
                        && let Some(calls) = namer.scope_start().and_then(|f| reached.get(&f))
                    {
                        info.called_from = calls.clone();
                    }
                    if let Some(note) = note {
                        let own = note == FOR_DECLARED_INPUT
                            && namer.scope_start().is_some_and(&own_run_at);
                        info.notes
                            .push(if own { own_runs::FOR_OWN_INPUT } else { note }.to_string());
                    }
                    // A tensor another file made says where (`enc.py:5`).
                    if let Some(at) = tensors.first().and_then(|t| t.made_at.as_ref())
                        && let Some(place) = place(at.start)
                    {
                        info.notes.push(format!("made in `{place}`"));
                    }
                    info
                })
                .clone()
        };
        let mut bindings: Vec<Binding> = self
            .sites
            .iter()
            .map(|site| {
                namer.enter_site(site.range.start);
                let unknown = self
                    .unknown_runs
                    .get(&(site.range.start, site.name.clone()))
                    .copied();
                let mut tensor = merge_once(&site.hits, unknown == Some(true), &mut namer);
                // Another run bound something unknown here: what the tensor
                // runs saw is not the whole story, so the shape is unknown.
                // Unless only calls with unreadable inputs did, and runs on
                // made-up inputs say what the site holds for any input.
                let made_up_only = unknown == Some(false)
                    && site.hits.counts[RunKind::Read as usize] == 0
                    && site.hits.counts[RunKind::MadeUp as usize] > 0;
                if unknown.is_some() && !made_up_only {
                    tensor.shape = None;
                }
                // Assumptions say sizes as the shape around them does.
                for guard in &mut tensor.guards {
                    *guard = namer.with_local_names(site.range.start, guard);
                }
                Binding {
                    name: site.name.to_string(),
                    range: site.range,
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
        let mut exprs: Vec<ExprInfo> = recorded
            .into_iter()
            .map(|((start, end), hits)| {
                namer.enter_site(*start);
                let mut tensor = merge_once(hits, false, &mut namer);
                for guard in &mut tensor.guards {
                    *guard = namer.with_local_names(*start, guard);
                }
                ExprInfo {
                    range: TextRange::new(*start, *end),
                    tensor,
                }
            })
            .collect();
        let mut infos: Vec<&mut TensorInfo> = bindings
            .iter_mut()
            .map(|b| &mut b.tensor)
            .chain(exprs.iter_mut().map(|e| &mut e.tensor))
            .collect();
        name_varying(&mut namer, &mut infos);
        let mut scoped: Vec<(usize, &mut TensorInfo)> = bindings
            .iter_mut()
            .map(|b| (namer.scope_at(b.range.start), &mut b.tensor))
            .chain(
                exprs
                    .iter_mut()
                    .map(|e| (namer.scope_at(e.range.start), &mut e.tensor)),
            )
            .collect();
        // Messages say sizes the way hints around them do.
        let mut messages: Vec<(usize, &mut String)> = diagnostics
            .iter_mut()
            .filter(|d| is_local(&d.range))
            .map(|d| {
                d.message = namer.with_local_names(d.range.start, &d.message);
                (namer.scope_at(d.range.start), &mut d.message)
            })
            .collect();
        scoped_names::unsuffix(
            env,
            &namer.numbered,
            &namer.numbered_params,
            &mut scoped,
            &mut messages,
        );
        for (_, info) in &mut scoped {
            scoped_names::say_free_sizes(info, FOR_ANY_INPUT);
            scoped_names::say_free_sizes(info, FOR_DECLARED_INPUT);
            scoped_names::say_free_sizes(info, own_runs::FOR_OWN_INPUT);
        }
        (bindings, exprs)
    }
}

/// Whether a site that holds `held` runs takes one more: up to `MAX_HITS`,
/// and only an empty site while only new sites record.
fn takes_run(only_new_sites: bool, held: usize, site_entry: u32, entry: u32) -> bool {
    held < MAX_HITS && (!(only_new_sites && held > 0) || (entry != 0 && site_entry == entry))
}
