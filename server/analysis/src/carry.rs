//! Carrying an analysis over an edit that cannot change it: typing in a
//! comment, blank lines, spacing between tokens. The analysis is a function
//! of the syntax tree and of the few pieces of text it reads besides (names
//! written as `config.n_embd`, shape comments, line numbers in messages);
//! when the edit only moved the tree and changed none of those pieces, the
//! earlier result holds with its ranges moved, and re-running it is waste.
//!
//! What a run read is recorded as it reads (`TextReads`), so the check is
//! exactly as wide as the dependency: a comment that states a parameter's
//! shape is read, and editing it runs the analysis again.

use shapels_syntax::{ByteEdit, ParsedFile, only_moved};

use crate::interp::shape_comments;
use crate::report::{FileAnalysis, TextRange};
use crate::stated::claims::comments_key;
use crate::text_reads::TextRead;
pub use crate::text_reads::TextReads;

impl TextReads {
    /// The reads at their places in the new text, when each still reads
    /// the same there.
    fn carried(&self, old_text: &str, new_text: &str, edit: ByteEdit) -> Option<TextReads> {
        let reads =
            self.reads
                .iter()
                .map(|read| match read {
                    TextRead::Text(range) => {
                        let moved = edit.move_range(range)?;
                        (old_text.get(range.range())? == new_text.get(moved.range())?)
                            .then_some(TextRead::Text(moved))
                    }
                    TextRead::ShapeComments(range, stated) => {
                        let moved = edit.move_range(range)?;
                        (shape_comments(new_text.get(moved.range())?) == *stated)
                            .then(|| TextRead::ShapeComments(moved, stated.clone()))
                    }
                    TextRead::StatedComments(key) => (comments_key(new_text) == *key)
                        .then(|| TextRead::StatedComments(key.clone())),
                    TextRead::StatedDocstring(range, key) => {
                        let moved = edit.move_range(range)?;
                        (crate::stated::docstring::key(new_text.get(moved.range())?) == *key)
                            .then(|| TextRead::StatedDocstring(moved, key.clone()))
                    }
                })
                .collect::<Option<Vec<_>>>()?;
        Some(TextReads { reads })
    }
}

/// The 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// `previous`, the analysis of `old_text` (parsed as `old`), as the
/// analysis of `new_text` (reparsed from it over `edit` as `new`) when the
/// edit changed nothing the analysis depends on; `None` when it may have,
/// and the analysis must run.
///
/// The result equals what analysing `new_text` gives (with the same
/// configuration and coverage as `previous`), ranges included.
/// The places of the ops a tensor's hover names move with the text; an
/// op inside the edited bytes loses its place (the edit touched no code,
/// so none is there).
fn move_sites(tensor: &mut crate::report::TensorInfo, edit: ByteEdit) {
    let sites = tensor
        .chain
        .iter_mut()
        .chain(tensor.guard_sites.iter_mut().flatten());
    for site in sites {
        site.at = site
            .at
            .and_then(|at| edit.move_range(&TextRange::new(at, at + 1)))
            .map(|r| r.start);
    }
    tensor.called_from = tensor
        .called_from
        .iter()
        .filter_map(|&at| {
            edit.move_range(&TextRange::new(at, at + 1))
                .map(|r| r.start)
        })
        .collect();
}

pub fn carry_over(
    previous: &FileAnalysis,
    (old_text, old): (&str, &ParsedFile),
    (new_text, new): (&str, &ParsedFile),
    edit: ByteEdit,
) -> Option<FileAnalysis> {
    let reads = previous.reads.as_ref()?;
    if !only_moved(old, new, edit) {
        return None;
    }
    let reads = reads.carried(old_text, new_text, edit)?;
    let mut carried = previous.clone();
    carried.reads = Some(reads);
    for binding in &mut carried.bindings {
        binding.range = edit.move_range(&binding.range)?;
        binding.hint_at = edit.move_end(binding.hint_at)?;
        move_sites(&mut binding.tensor, edit);
    }
    for expression in &mut carried.expressions {
        expression.range = edit.move_range(&expression.range)?;
        move_sites(&mut expression.tensor, edit);
    }
    for size in &mut carried.sizes {
        size.range = edit.move_range(&size.range)?;
        if size.scope.end != usize::MAX {
            size.scope = edit.move_range(&size.scope)?;
        }
    }
    for unknown in &mut carried.unknowns {
        unknown.range = edit.move_range(&unknown.range)?;
    }
    for diagnostic in &mut carried.diagnostics {
        diagnostic.range = edit.move_range(&diagnostic.range)?;
        for related in diagnostic.related.iter_mut().filter(|r| r.file.is_none()) {
            related.range = edit.move_range(&related.range)?;
        }
        for fix in &mut diagnostic.fixes {
            for (range, _) in &mut fix.edits {
                *range = edit.move_range(range)?;
            }
        }
    }
    Some(carried)
}
