//! What the recorder records, kept to be recorded again: a call taken from the memo, a loop's turns run at once, a call carried to the next version of the file.

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::runs::CALL_KINDS;
use super::{MAX_HITS, Recorder, takes_run};
use crate::report::BindingKind;
use crate::value::Tensor;

/// Where the recorder stood when deferring began (see `begin_deferring`).
pub(crate) struct DeferMark {
    journal: usize,
    full: bool,
    sites: usize,
    scalars: usize,
}

impl DeferMark {
    /// Where the journal ended: entries after it are the deferred ones.
    pub(crate) fn journal_len(&self) -> usize {
        self.journal
    }
}

/// Entries the journal keeps at most (a bound on memory for runaway files).
const MAX_JOURNAL: usize = 200_000;

/// The new calls of records recorded again: each call they were recorded
/// in gets one new number, the same for all its records.
#[derive(Default)]
struct Renewal(FxHashMap<u32, u32>);

impl Renewal {
    /// The new number of an old call, of the same kind.
    fn call(&mut self, old: u32, calls: &mut u32) -> u32 {
        *self.0.entry(old).or_insert_with(|| {
            *calls += 1;
            *calls | (old & CALL_KINDS)
        })
    }
}

/// One thing recorded, kept to be recorded again (sites by number).
#[derive(Clone)]
pub(crate) enum Recorded {
    Binding(usize, u32, Rc<Tensor>),
    /// A name bound to an unknown value; whether the run could read its inputs.
    Unknown(Rc<str>, usize, bool),
    Expression(usize, usize, u32, Rc<Tensor>),
    /// A size bound to a name, with the kind of run (`CALL_KINDS` bits).
    Scalar(usize, Dim, u32),
    /// Where the hint of an annotated name goes (`annotation`).
    Annotation(usize, usize),
    /// Why a name holds what the analysis cannot follow (`unknown_reason`).
    UnknownReason(Rc<str>, TextRange, Rc<str>),
    /// A call at the second offset reached the function starting at the
    /// first with inputs the analysis could read (`reached_from`).
    Reached(usize, usize),
    /// The size an einops axis took (`pattern_name`).
    Pattern(usize, Rc<str>, u32, Dim),
}

/// One thing recorded, with its site written out so that another run (of
/// the next version of the file, see `interp::memo::across`) can record it.
#[derive(Clone)]
pub(crate) enum Portable {
    Binding {
        name: Rc<str>,
        range: TextRange,
        kind: BindingKind,
        call: u32,
        tensor: Rc<Tensor>,
    },
    Unknown(Rc<str>, usize, bool),
    Expression(TextRange, u32, Rc<Tensor>),
    /// The name, where it starts, its value, whether it is a parameter and
    /// the kind of run that bound it (`CALL_KINDS` bits).
    Scalar(String, usize, Dim, bool, u32),
    Annotation(usize, usize),
    UnknownReason(Rc<str>, TextRange, Rc<str>),
    Reached(usize, usize),
    Pattern(usize, Rc<str>, u32, Dim),
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

    pub(super) fn journal(&mut self, entry: impl FnOnce() -> Recorded) {
        if self.capturing == 0 && self.deferring == 0 {
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
    /// Each call it recorded in is a new call now.
    pub fn replay(&mut self, recorded: std::ops::Range<usize>, map: impl Fn(Recorded) -> Recorded) {
        let mut renewal = Renewal::default();
        for i in recorded {
            let Some(r) = self.journal.get(i) else {
                break;
            };
            // An entry its site would drop, outside any capture, changes
            // nothing: skip it before renaming (sites in a loop fill up).
            if self.capturing == 0 && !self.would_take(r) {
                continue;
            }
            let r = map(r.clone());
            self.replay_one(r, &mut renewal);
        }
    }

    fn replay_one(&mut self, r: Recorded, renewal: &mut Renewal) {
        match r {
            Recorded::Binding(site, call, tensor) => {
                let call = renewal.call(call, &mut self.calls);
                self.binding_hit(site, call, tensor)
            }
            Recorded::Unknown(name, start, read) => self.unknown_at(name, start, read),
            Recorded::Expression(start, end, call, tensor) => {
                let call = renewal.call(call, &mut self.calls);
                self.expression_at(start, end, call, tensor)
            }
            Recorded::Scalar(site, value, kind) => self.scalar_hit(site, value, kind),
            Recorded::Annotation(start, end) => self.annotation_at(start, end),
            Recorded::UnknownReason(name, range, why) => {
                self.unknown_reason(&name, range, why.to_string())
            }
            Recorded::Reached(function, at) => self.reached_at(function, at),
            Recorded::Pattern(at, name, kind, dim) => self.pattern_run(at, name, kind, dim),
        }
    }

    /// Start deferring what is recorded (see `deferring`).
    pub fn begin_deferring(&mut self) -> DeferMark {
        self.deferring += 1;
        DeferMark {
            journal: self.journal.len(),
            full: self.journal_full,
            sites: self.sites.len(),
            scalars: self.scalars.len(),
        }
    }

    /// Stop deferring: what was recorded since `mark`, taken out of the
    /// journal (no capture may replay it as it is); `None` when the
    /// journal could not hold all of it.
    pub fn end_deferring(&mut self, mark: &DeferMark) -> Option<Vec<Recorded>> {
        self.deferring = self.deferring.saturating_sub(1);
        let full = std::mem::replace(&mut self.journal_full, mark.full);
        let taken = self.journal.split_off(mark.journal.min(self.journal.len()));
        (!full || mark.full).then_some(taken)
    }

    /// Forget the sites first met while deferring, when what was deferred
    /// is dropped: they hold no run, and no hint may come of them.
    pub fn drop_sites_since(&mut self, mark: &DeferMark) {
        for site in self.sites.drain(mark.sites..) {
            if let Some(at) = self.index.get_mut(&site.range.start) {
                at.retain(|i| *i < mark.sites);
            }
        }
        for start in self.scalar_starts.drain(mark.scalars..) {
            if let Some(at) = self.scalar_index.get_mut(&start) {
                at.retain(|i| *i < mark.scalars);
            }
        }
        self.scalars.truncate(mark.scalars);
    }

    /// Record entries deferred from one run standing for several loop
    /// turns, as one turn (`map` puts the turn's values in). Records of
    /// the call the loop runs in stay that call's; each call made inside
    /// the turn is a new call, as running the turn would make it.
    pub fn record_turn(
        &mut self,
        entries: &[Recorded],
        mut map: impl FnMut(usize, &Recorded) -> Recorded,
    ) {
        let mut renewal = Renewal::default();
        renewal.0.insert(self.call, self.call);
        for (i, r) in entries.iter().enumerate() {
            // A site holding all the runs it keeps never takes another, so
            // a capture replayed later would drop the entry too.
            if self.is_full(r)
                || (self.capturing == 0 && self.deferring == 0 && !self.would_take(r))
            {
                continue;
            }
            self.replay_one(map(i, r), &mut renewal);
        }
    }

    /// Whether the entry's site holds all the runs of its kind it keeps.
    fn is_full(&self, r: &Recorded) -> bool {
        match r {
            Recorded::Binding(site, call, _) => self.sites[*site].hits.full(*call),
            Recorded::Expression(start, end, call, _) => self
                .exprs
                .get(&(*start, *end))
                .is_some_and(|runs| runs.full(*call)),
            Recorded::Scalar(site, ..) => self.scalars[*site].hits.len() >= MAX_HITS,
            _ => false,
        }
    }

    /// What a call recorded (a range of the journal), each entry with its
    /// site written out; `None` when the journal could not hold it all.
    pub fn portable(&self, recorded: std::ops::Range<usize>) -> Option<Vec<Portable>> {
        let entries = self.journal.get(recorded)?;
        Some(
            entries
                .iter()
                .map(|r| match r {
                    Recorded::Binding(site, call, tensor) => {
                        let site = &self.sites[*site];
                        Portable::Binding {
                            name: site.name.clone(),
                            range: site.range,
                            kind: site.kind,
                            call: *call,
                            tensor: tensor.clone(),
                        }
                    }
                    Recorded::Unknown(name, start, read) => {
                        Portable::Unknown(name.clone(), *start, *read)
                    }
                    Recorded::Expression(start, end, call, tensor) => {
                        Portable::Expression(TextRange::new(*start, *end), *call, tensor.clone())
                    }
                    Recorded::Scalar(site, value, kind) => {
                        let start = self.scalar_starts[*site];
                        let site = &self.scalars[*site];
                        Portable::Scalar(site.name.clone(), start, value.clone(), site.param, *kind)
                    }
                    Recorded::Annotation(start, end) => Portable::Annotation(*start, *end),
                    Recorded::UnknownReason(name, range, why) => {
                        Portable::UnknownReason(name.clone(), *range, why.clone())
                    }
                    Recorded::Reached(function, at) => Portable::Reached(*function, *at),
                    Recorded::Pattern(at, name, kind, dim) => {
                        Portable::Pattern(*at, name.clone(), *kind, dim.clone())
                    }
                })
                .collect(),
        )
    }

    /// Record what a call of another run recorded, as `replay` does for
    /// this run's: each call it recorded in is a new call now.
    pub fn record_portable(&mut self, records: Vec<Portable>) {
        let mut renewal = Renewal::default();
        let outer = self.call;
        for r in records {
            match r {
                Portable::Binding {
                    name,
                    range,
                    kind,
                    call,
                    tensor,
                } => {
                    self.call = renewal.call(call, &mut self.calls);
                    self.binding(&name, range, kind, tensor);
                }
                Portable::Unknown(name, start, read) => self.unknown_at(name, start, read),
                Portable::Expression(range, call, tensor) => {
                    let call = renewal.call(call, &mut self.calls);
                    self.expression_at(range.start, range.end, call, tensor);
                }
                Portable::Scalar(name, start, value, param, kind) => {
                    self.scalar_of_kind(&name, TextRange::new(start, start), value, param, kind)
                }
                Portable::Annotation(start, end) => self.annotation_at(start, end),
                Portable::UnknownReason(name, range, why) => {
                    self.unknown_reason(&name, range, why.to_string())
                }
                Portable::Reached(function, at) => self.reached_at(function, at),
                Portable::Pattern(at, name, kind, dim) => self.pattern_run(at, name, kind, dim),
            }
        }
        self.call = outer;
    }

    /// Whether recording `r` would add a run to its site.
    fn would_take(&self, r: &Recorded) -> bool {
        match r {
            Recorded::Binding(site, call, _) => {
                self.sites[*site]
                    .hits
                    .takes(self.only_new_sites, *call, self.new_sites_entry())
            }
            Recorded::Expression(start, end, call, _) => self
                .exprs
                .get(&(*start, *end))
                .is_none_or(|runs| runs.takes(self.only_new_sites, *call, self.new_sites_entry())),
            Recorded::Scalar(site, ..) => {
                let site = &self.scalars[*site];
                takes_run(
                    self.only_new_sites,
                    site.hits.len(),
                    site.entry,
                    self.new_sites_entry(),
                )
            }
            Recorded::Reached(function, at) => self
                .reached
                .get(function)
                .is_none_or(|calls| calls.binary_search(at).is_err()),
            Recorded::Unknown(..)
            | Recorded::Annotation(..)
            | Recorded::UnknownReason(..)
            | Recorded::Pattern(..) => true,
        }
    }
}
