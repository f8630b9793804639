//! Why a name holds nothing the analysis can follow, for hover: a call
//! into a package outside the workspace, a `DataLoader`'s batches.
//!
//! Names inside functions are explained too: the notes go through the
//! recorder's journal, so a call taken from the memo or from the last
//! version (see `memo`) explains its names as a run of it would.

use std::rc::Rc;

use shapels_syntax::ast::{Expr, ExprKind, TextRange};

use super::Interp;

/// Packages whose calls the analysis models (or knows to be plain numbers).
const MODELLED: &[&str] = &["torch", "builtins", "math", "numpy", "einops", "functools"];

/// Why calling `path` gave a value the analysis cannot follow.
fn why_call_unknown(path: &str) -> String {
    let root = path.split('.').next().unwrap_or(path);
    if path.ends_with("DataLoader") {
        format!("`{path}`: its dataset's samples are not followed")
    } else if !MODELLED.contains(&root) {
        format!("`{path}`: from `{root}`, outside the workspace (not analysed)")
    } else {
        format!("`{path}`: no shape rule for it")
    }
}

impl Interp<'_> {
    /// A call of `path` at `range` gave an unknown value: note why, for a
    /// name the statement binds it to.
    pub(crate) fn note_unknown_call(&mut self, path: &str, range: &TextRange) {
        if self.recorder.expressions && crate::workspace::is_local(range) {
            self.last_unknown = Some((*range, Rc::from(why_call_unknown(path))));
        }
    }

    /// `for target in iter`: a loop over a name known to hold something
    /// unknown binds its targets to what that holds.
    pub(crate) fn note_unknown_loop(&mut self, iter: &Expr) {
        if !self.recorder.expressions {
            return;
        }
        self.loop_unknown = match &iter.kind {
            ExprKind::Name(name) => self
                .unknown_names
                .get(name.as_str())
                .map(|why| Rc::from(format!("an item of `{}`: {why}", name))),
            _ => None,
        };
    }

    /// Why `name`, bound at `target`, holds an unknown value, when a call
    /// of the same statement says; noted for hover.
    pub(crate) fn explain_unknown_binding(
        &mut self,
        name: &str,
        target: &TextRange,
        kind: crate::report::BindingKind,
    ) {
        if !self.recorder.expressions || !crate::workspace::is_local(target) {
            return;
        }
        let why = if kind == crate::report::BindingKind::For {
            self.loop_unknown.clone()
        } else {
            self.last_unknown.as_ref().and_then(|(call, why)| {
                // The call is on the right of this target, in the same statement.
                let between = self.src.get(target.end..call.start)?;
                (call.start >= target.end && !between.contains('\n')).then(|| why.clone())
            })
        };
        if let Some(why) = why {
            self.unknown_names.insert(Rc::from(name), why.clone());
            self.recorder.unknown_reason(name, *target, why.to_string());
        }
    }
}
