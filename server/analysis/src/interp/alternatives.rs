//! Paths that torch refuses: one branch of an undecided `if`, one side of a
//! conditional expression, or one of several objects that may be called,
//! where an op fails contributes nothing to what the code after it sees.
//!
//! `if self.dims == 3: x = F.interpolate(x, (x.shape[2], x.shape[3] * 2,
//! x.shape[4] * 2))` cannot run for a 4-D `x`: the call that reaches it
//! with one takes the other branch. Joining both branches would give the
//! code after a tensor of unknown rank, which says less than torch knows.
//! What the failing path would raise is still reported, as a possibility.

use super::{Interp, join_all};
use crate::value::Value;
use shapels_shapes::BranchFacts;

/// One alternative being run: the count of undecided branches its own
/// code runs under, and whether an op there certainly raised.
pub(crate) struct Alternative {
    level: u32,
    pub(super) raised: bool,
}

impl Interp<'_> {
    /// Run one alternative of an undecided choice (with `uncertain`
    /// already counting it); says whether torch raises on its path.
    pub(crate) fn run_alternative<T>(&mut self, run: impl FnOnce(&mut Self) -> T) -> (T, bool) {
        self.alternatives.push(Alternative {
            level: self.uncertain,
            raised: false,
        });
        let out = run(self);
        let raised = self.alternatives.pop().is_some_and(|a| a.raised);
        (out, raised)
    }

    /// `run_alternative` in a branch of the size environment: what the
    /// alternative learns of sizes holds on its path only. A joined object
    /// that stands for a module list's first block and the others
    /// (`Conv3d(in_ch, out_ch)` or `Identity()` as its shortcut) must not
    /// fix `in_ch` for the others by running one of them.
    pub(crate) fn run_alternative_apart<T>(
        &mut self,
        run: impl FnOnce(&mut Self) -> T,
    ) -> (T, bool, BranchFacts) {
        self.env.open_branch();
        let (out, raised) = self.run_alternative(run);
        let facts = self.env.close_branch();
        (out, raised, facts)
    }

    /// After alternatives ran apart: what every one torch did not refuse
    /// learned alike holds from here on (nothing, when it refused them
    /// all, as after an `if` whose branches both raise).
    pub(crate) fn keep_facts_of_working<T>(
        &mut self,
        results: Vec<(T, bool, BranchFacts)>,
    ) -> Vec<(T, bool)> {
        let mut working = Vec::new();
        let mut out = Vec::with_capacity(results.len());
        for (value, raised, facts) in results {
            if !raised {
                working.push(facts);
            }
            out.push((value, raised));
        }
        self.env.keep_common(working);
        out
    }

    /// What one of several alternatives gives (`results`: each one's value
    /// and whether torch refused it): the join of those torch did not
    /// refuse. When it refused them all, every path raises here, and all
    /// are joined, as code after a certain error runs on.
    pub(crate) fn join_working(&mut self, results: Vec<(Value, bool)>) -> Value {
        let all_raised = !results.is_empty() && results.iter().all(|(_, raised)| *raised);
        if all_raised {
            self.raise_on_path();
        }
        let given: Vec<Value> = results
            .into_iter()
            .filter(|(_, raised)| all_raised || !raised)
            .map(|(v, _)| v)
            .collect();
        join_all(self, &given)
    }

    /// An op raised on the current path. Inside an alternative, that path
    /// ends; in code every path runs, the function's remaining code does
    /// not run either. A failure after an early `return` (a path of the
    /// function but not the whole alternative) ends nothing.
    pub(crate) fn raise_on_path(&mut self) {
        if self.uncertain == 0 {
            self.mark_raised();
            return;
        }
        if let Some(top) = self.alternatives.last_mut()
            && top.level == self.uncertain
        {
            top.raised = true;
        }
    }

    /// Whether the current alternative raised so far, to be put back after
    /// code whose failures are caught (`try` with handlers).
    pub(crate) fn path_raised(&self) -> Option<bool> {
        self.alternatives
            .last()
            .filter(|a| a.level == self.uncertain)
            .map(|a| a.raised)
    }

    /// Put back what `path_raised` said.
    pub(crate) fn restore_path_raised(&mut self, raised: Option<bool>) {
        if let (Some(raised), Some(top)) = (raised, self.alternatives.last_mut())
            && top.level == self.uncertain
        {
            top.raised = raised;
        }
    }
}
