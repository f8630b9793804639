//! The runs a site held, each with the call it was made in, and the kinds
//! of run (calls the analysis could read, calls it could not, made-up
//! inputs) that decide which of them say what the site holds.

use std::rc::Rc;

use super::MAX_HITS;
use crate::value::Tensor;

/// The hover note of a shape no readable call reaches (library mode).
pub(super) const FOR_ANY_INPUT: &str =
    "for any input: no call the analysis can read reaches this code";

/// The hover note of a shape in a function whose annotations declare it
/// generic: shown for any input they admit, not for the calls made.
pub(super) const FOR_DECLARED_INPUT: &str =
    "for any input its annotations admit: the function is declared generic in its sizes";

/// The tensors a site or an expression held, each with the call it was
/// held in.
#[derive(Default)]
pub(super) struct Runs {
    pub(super) tensors: Vec<Rc<Tensor>>,
    pub(super) calls: Vec<u32>,
    /// How many runs of each kind (see `RunKind`) it holds.
    pub(super) counts: [usize; 3],
    /// How many of them are runs on a generic function's declared shapes.
    pub(super) declared: usize,
    /// In a function whose annotations declare it generic in its sizes
    /// (`x: Float[Tensor, "b t d"]`): its run on inputs of the declared
    /// shapes says what the lines hold, whatever the calls pass.
    pub(super) generic: bool,
    /// The entry of library mode that recorded its first run while only
    /// new sites recorded (0: another): that entry's further runs (a
    /// loop's turns) are taken too.
    pub(super) entry: u32,
}

impl Runs {
    pub(super) fn push(&mut self, tensor: Rc<Tensor>, call: u32, entry: u32) {
        if self.counts[RunKind::Read as usize] + self.counts[RunKind::MadeUp as usize] == 0 {
            self.entry = entry;
        }
        self.counts[RunKind::of(call) as usize] += 1;
        self.declared += usize::from(call & DECLARED_CALL != 0);
        self.tensors.push(tensor);
        self.calls.push(call);
    }

    /// Whether it holds `MAX_HITS` runs of `call`'s kind.
    pub(super) fn full(&self, call: u32) -> bool {
        self.counts[RunKind::of(call) as usize] >= MAX_HITS
    }

    /// Whether it takes one more run of `call`'s kind: up to `MAX_HITS` of
    /// each kind, and while only new sites record, only when no run that
    /// could read its inputs recorded here yet, or the runs here are the
    /// `entry`'s own (see `Recorder::begin_entry_of_new_sites`).
    pub(super) fn takes(&self, only_new_sites: bool, call: u32, entry: u32) -> bool {
        if self.full(call) {
            return false;
        }
        if !only_new_sites {
            return true;
        }
        // A declared-generic function's run on its declared shapes is what
        // it shows, even where the calls that reached it recorded first.
        if self.generic && call & DECLARED_CALL != 0 {
            return self.declared == 0;
        }
        self.counts[RunKind::Read as usize] + self.counts[RunKind::MadeUp as usize] == 0
            || (entry != 0 && self.entry == entry)
    }

    /// The runs that say what the site holds (see `RunKind`), as
    /// (tensors, calls), and the hover note they need: none for the calls
    /// made, one saying the shape holds for any input for made-up runs.
    pub(super) fn telling(
        &self,
        read_unknown: bool,
    ) -> (Vec<Rc<Tensor>>, Vec<u32>, Option<&'static str>) {
        let read = self.counts[RunKind::Read as usize] > 0 || read_unknown;
        let others =
            self.counts[RunKind::Unreadable as usize] + self.counts[RunKind::MadeUp as usize];
        // A function whose annotations declare it generic: the runs on the
        // declared shapes are what it means.
        if self.generic && self.declared > 0 {
            let (mut tensors, mut calls) = (Vec::new(), Vec::new());
            for (t, c) in self.tensors.iter().zip(&self.calls) {
                if c & DECLARED_CALL != 0 {
                    tensors.push(t.clone());
                    calls.push(*c);
                }
            }
            return (tensors, calls, Some(FOR_DECLARED_INPUT));
        }
        // A function's own run that `own_runs` found to show less than the
        // runs that reached it is not shown.
        // Where only that run went, it is all there is to show.
        if self.declared > 0 {
            if self.declared == self.tensors.len() {
                return (
                    self.tensors.clone(),
                    self.calls.clone(),
                    Some(FOR_ANY_INPUT),
                );
            }
            let mut rest = Runs::default();
            for (t, c) in self.tensors.iter().zip(&self.calls) {
                if c & DECLARED_CALL == 0 {
                    rest.push(t.clone(), *c, 0);
                }
            }
            return rest.telling(read_unknown);
        }
        // Calls with inputs the analysis can read say what the lines hold;
        // runs on made-up inputs (a caller that no readable call reaches)
        // would only blur them into sizes nobody named.
        let keep: Option<RunKind> = if read && self.counts[RunKind::Read as usize] > 0 && others > 0
        {
            Some(RunKind::Read)
        } else if read || self.counts[RunKind::MadeUp as usize] == 0 {
            None
        } else {
            Some(RunKind::MadeUp)
        };
        let note = |kind: RunKind| (kind == RunKind::MadeUp).then_some(FOR_ANY_INPUT);
        match keep {
            None => (self.tensors.clone(), self.calls.clone(), None),
            Some(kind) => {
                let (mut tensors, mut calls) = (Vec::new(), Vec::new());
                for (t, c) in self.tensors.iter().zip(&self.calls) {
                    if RunKind::of(*c) == kind {
                        tensors.push(t.clone());
                        calls.push(*c);
                    }
                }
                (tensors, calls, note(kind))
            }
        }
    }
}

/// How a run of a function came about, which decides whose runs say what
/// its lines hold. A function reached by calls the analysis can read (the
/// module's own code, a call with known arguments) is shown for those
/// calls; one reached only by calls with inputs it cannot read (a batch of
/// a `DataLoader`, an argparse value) is shown for any input, as library
/// mode runs it with made-up inputs: the unreadable runs say nothing then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunKind {
    Read = 0,
    /// A call given a value the analysis could not follow.
    Unreadable = 1,
    /// A library-mode run on made-up inputs.
    MadeUp = 2,
}

/// Which of a function's runs its sites show, by the kinds of the runs
/// that reached it, as `Runs::telling` chooses between calls and made-up
/// runs, for a variable's or an axis's runs: `Some(kind)` keeps that
/// kind's runs alone, `None` all. (The lines of a function declared
/// generic show its run on its declared shapes, named by its annotations;
/// that run is not told apart here.)
pub(super) fn telling_kind(kinds: &[u32]) -> Option<RunKind> {
    let count = |kind: RunKind| kinds.iter().filter(|k| RunKind::of(**k) == kind).count();
    let (read, made_up) = (count(RunKind::Read), count(RunKind::MadeUp));
    if read > 0 && read < kinds.len() {
        Some(RunKind::Read)
    } else if read == 0 && made_up > 0 && made_up < kinds.len() {
        Some(RunKind::MadeUp)
    } else {
        None
    }
}

/// Call numbers carry their run's kind in their top bits, so that a record
/// says it wherever it travels (memo replays, calls carried to the next
/// version of the file).
pub(super) const UNREADABLE_CALL: u32 = 1 << 31;
pub(super) const MADE_UP_CALL: u32 = 1 << 30;
/// The made-up run of a function declared generic, on its declared shapes
/// (not the calls it makes): what the function's own lines show.
pub(super) const DECLARED_CALL: u32 = 1 << 29;
pub(super) const CALL_KINDS: u32 = UNREADABLE_CALL | MADE_UP_CALL | DECLARED_CALL;

impl RunKind {
    pub(super) fn of(call: u32) -> RunKind {
        if call & UNREADABLE_CALL != 0 {
            RunKind::Unreadable
        } else if call & MADE_UP_CALL != 0 {
            RunKind::MadeUp
        } else {
            RunKind::Read
        }
    }
}
