//! Functions shown for a run of their own when the made-up runs that reached them disagree.
//!
//! Library mode runs a model on made-up inputs, and the model runs its
//! parts: a block it uses at four widths is reached four times, each run
//! with sizes of the model's naming. Merged, those runs differ in every
//! size, and the block's lines would show names nobody wrote (`s2`). Such
//! a block runs once more on made-up inputs of its own, as if no call had
//! reached it, and shows that run (`x: [N, dim, H, W]`) — unless that run
//! shows less than the others did (a parameter only a caller's tensor
//! gives a rank), holds for some settings only (it learned that two sizes
//! the code named apart are one), or some call that reached the block is
//! no instance of it (a default that picks one case, `out_channels=None`):
//! then the callers' runs are shown as before.

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::{Dim, ShapeEnv, SymId};
use shapels_syntax::ast::TextRange;

use super::runs::{DECLARED_CALL, MADE_UP_CALL, Runs};
use super::{BindingKind, Recorder};
use crate::value::{Shape, Tensor};
use crate::workspace::is_local;

/// The hover note of a shape shown for a function's own run.
pub(super) const FOR_OWN_INPUT: &str =
    "for any input: the calls that reach this code are themselves on made-up inputs";

/// How much a site that shows nothing weighs against one unknown size.
const NOTHING: usize = 4;

impl Recorder {
    /// The function at `range` was reached only by runs on made-up inputs
    /// that passed it differently shaped tensors: its lines show a run of
    /// its own on made-up inputs, as a function declared generic shows its
    /// run on the declared shapes (see `Runs::generic`).
    pub fn show_own_run(&mut self, range: TextRange) {
        if !is_local(&range) || self.generic_bodies.contains(&range) {
            return;
        }
        self.generic_bodies.push(range);
        self.own_bodies.push(range);
        self.mark_generic(range, true);
    }

    /// Whether the function at `range` shows a run of its own.
    pub fn shows_own_run(&self, range: &TextRange) -> bool {
        self.own_bodies.contains(range)
    }

    /// Whether the sites and expressions in `range` show their function's
    /// own run (see `Runs::generic`).
    fn mark_generic(&mut self, range: TextRange, generic: bool) {
        let inside = |start: usize| range.start <= start && start < range.end;
        for site in &mut self.sites {
            if inside(site.range.start) {
                site.hits.generic = generic;
            }
        }
        for ((start, _), hits) in &mut self.exprs {
            if inside(*start) {
                hits.generic = generic;
            }
        }
    }

    /// The function at `range` showed a run of its own that holds only
    /// for some settings (see `Interp::keep_own_run_if_general`): its
    /// lines show the runs that reached it.
    pub fn drop_own_run(&mut self, range: TextRange) {
        if self.own_bodies.contains(&range) && !self.own_dropped.contains(&range) {
            self.own_dropped.push(range);
        }
    }

    /// The tensors runs on made-up inputs bound to the parameter whose name
    /// starts at `start`, or `None` when another kind of run bound it too
    /// (a call the analysis could read, or could not follow).
    pub fn made_up_params(&self, start: usize) -> Option<Vec<Rc<Tensor>>> {
        let mut tensors = Vec::new();
        for &i in self.index.get(&start).into_iter().flatten() {
            let site = &self.sites[i];
            if site.kind != BindingKind::Param {
                continue;
            }
            // Library mode's runs, also those given a value they could not
            // follow (a made-up model's timestep embedding).
            if site.hits.calls.iter().any(|c| c & MADE_UP_CALL == 0) || site.hits.declared > 0 {
                return None;
            }
            tensors.extend(site.hits.tensors.iter().cloned());
        }
        Some(tensors)
    }

    /// Keeps each function's own run where it shows at least as much as
    /// the runs that reached it, over all the function's sites; elsewhere
    /// the function's sites show those runs, as if it had not run alone.
    pub(super) fn settle_own_runs(&mut self, env: &ShapeEnv, resolve: &dyn Fn(&Shape) -> Shape) {
        for body in std::mem::take(&mut self.own_bodies) {
            let inside = |start: usize| body.start <= start && start < body.end;
            let sites = self.sites.iter().filter(|s| inside(s.range.start));
            let runs: Vec<&Runs> = sites.map(|s| &s.hits).collect();
            let (mut own, mut others) = (0, 0);
            for hits in runs.iter().filter(|h| h.declared > 0) {
                let (mine, theirs): (Vec<_>, Vec<_>) = hits
                    .tensors
                    .iter()
                    .zip(&hits.calls)
                    .partition(|(_, c)| *c & DECLARED_CALL != 0);
                own += vagueness(mine.into_iter().map(|(t, _)| t), env, resolve);
                others += vagueness(theirs.into_iter().map(|(t, _)| t), env, resolve);
            }
            let keep = own <= others
                && !self.own_dropped.contains(&body)
                && self.calls_are_instances(&inside, env, resolve);
            // The sizes the code names there count for the runs shown.
            for (site, start) in self.scalars.iter_mut().zip(&self.scalar_starts) {
                if inside(*start) && site.own.contains(&keep) {
                    site.keep_own(keep);
                }
            }
            if keep {
                self.own_bodies.push(body);
                continue;
            }
            self.generic_bodies.retain(|r| *r != body);
            self.mark_generic(body, false);
        }
    }
}

impl Recorder {
    /// Whether every call that reached the function (its sites, by
    /// `inside`) is an instance of its own run: the own run's sizes, a
    /// size per name, give each call's where both are known. A run of its
    /// own made with a default that picks one case (`out_channels=None`,
    /// which the code makes `in_channels`) says `conv1` keeps the width,
    /// which the calls that double it contradict: it is not shown then.
    fn calls_are_instances(
        &self,
        inside: &dyn Fn(usize) -> bool,
        env: &ShapeEnv,
        resolve: &dyn Fn(&Shape) -> Shape,
    ) -> bool {
        let known = |t: &Tensor| match resolve(&t.shape) {
            Shape::Known(dims) => Some(dims.iter().map(|d| env.resolve(d)).collect::<Vec<Dim>>()),
            _ => None,
        };
        // Per site, the own run's sizes (when it ran the site once) and
        // each call's (when that call ran it once).
        let mut pairs: FxHashMap<u32, Vec<SitePair>> = FxHashMap::default();
        for site in self.sites.iter().filter(|s| inside(s.range.start)) {
            let hits = &site.hits;
            let mut own = hits
                .tensors
                .iter()
                .zip(&hits.calls)
                .filter(|(_, c)| *c & DECLARED_CALL != 0);
            let (Some((mine, _)), None) = (own.next(), own.next()) else {
                continue;
            };
            let Some(mine) = known(mine) else {
                continue;
            };
            let mut by_call: FxHashMap<u32, Vec<&Rc<Tensor>>> = FxHashMap::default();
            for (t, c) in hits.tensors.iter().zip(&hits.calls) {
                if c & DECLARED_CALL == 0 {
                    by_call.entry(*c).or_default().push(t);
                }
            }
            for (call, tensors) in by_call {
                if let [theirs] = tensors.as_slice()
                    && let Some(theirs) = known(theirs)
                {
                    pairs.entry(call).or_default().push((mine.clone(), theirs));
                }
            }
        }
        pairs.values().all(|sites| instance_of(sites, env))
    }
}

/// A site's sizes in the own run and in one call.
type SitePair = (Vec<Dim>, Vec<Dim>);

/// Whether one call's sizes are the own run's with its names given values:
/// the same rank at every site, each name of the own run one size of the
/// call's throughout, and each other size of the own run, its names given
/// those values, the call's. A size either side does not know matches all.
fn instance_of(sites: &[SitePair], env: &ShapeEnv) -> bool {
    let mut given: FxHashMap<SymId, Dim> = FxHashMap::default();
    let mut compound: Vec<(&Dim, &Dim)> = Vec::new();
    for (mine, theirs) in sites {
        if mine.len() != theirs.len() {
            return false;
        }
        for (m, t) in mine.iter().zip(theirs) {
            if env.has_anonymous(m) || env.has_anonymous(t) {
                continue;
            }
            match m.as_sym() {
                Some(s) => match given.get(&s) {
                    Some(before) if before != t => return false,
                    Some(_) => {}
                    None => {
                        given.insert(s, t.clone());
                    }
                },
                None => compound.push((m, t)),
            }
        }
    }
    compound.into_iter().all(|(m, t)| {
        if m.symbols().iter().any(|s| !given.contains_key(s)) {
            return true;
        }
        let value = m.substitute(&mut |s| given.get(&s).cloned());
        env.resolve(&value) == *t || env.known_equal(&value, t)
    })
}

/// How little a site's runs say: a site that shows nothing (no run, an
/// unknown rank, runs of several ranks) weighs `NOTHING`; otherwise each
/// size some run does not know weighs one. A size that differs between
/// runs is not counted: merged, it is named (by a variable of the user's
/// that took the same values, or by a name nobody wrote), not unknown, and
/// an own run that knows as much is preferred for its names.
fn vagueness<'a>(
    tensors: impl Iterator<Item = &'a Rc<Tensor>>,
    env: &ShapeEnv,
    resolve: &dyn Fn(&Shape) -> Shape,
) -> usize {
    let mut shapes: Vec<Vec<Dim>> = Vec::new();
    for t in tensors {
        match resolve(&t.shape) {
            Shape::Known(dims) => shapes.push(dims.iter().map(|d| env.resolve(d)).collect()),
            _ => return NOTHING,
        }
    }
    let Some(first) = shapes.first() else {
        return NOTHING;
    };
    if shapes.iter().any(|s| s.len() != first.len()) {
        return NOTHING;
    }
    (0..first.len())
        .filter(|&i| shapes.iter().any(|s| env.has_anonymous(&s[i])))
        .count()
}
