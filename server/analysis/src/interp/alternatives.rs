//! Paths that torch refuses: one branch of an undecided `if`, one side of a
//! conditional expression, or one of several objects that may be called,
//! where an op fails contributes nothing to what the code after it sees.
//!
//! `if self.dims == 3: x = F.interpolate(x, (x.shape[2], x.shape[3] * 2,
//! x.shape[4] * 2))` cannot run for a 4-D `x`: the call that reaches it
//! with one takes the other branch. Joining both branches would give the
//! code after a tensor of unknown rank, which says less than torch knows.
//! What the failing path would raise is still reported, as a possibility.

use super::Interp;

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
