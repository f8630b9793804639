//! What an analysis read of its text besides the syntax tree: plain data in its result.
//!
//! The interpreter notes each read as it makes it; `carry` checks them
//! against an edit to decide whether the result still holds.

use crate::report::TextRange;

/// What an analysis read of its text besides the syntax tree.
#[derive(Debug, Clone, Default)]
pub struct TextReads {
    pub(crate) reads: Vec<TextRead>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TextRead {
    /// The text of a range, as it was.
    Text(TextRange),
    /// The shapes a function's comments state (see `shape_comments`),
    /// which is all that the rest of its text is read for.
    ShapeComments(TextRange, Vec<(String, Vec<String>)>),
    /// The shape comments of the whole file (see
    /// `stated::claims::comments_key`), checked against the bindings.
    StatedComments(String),
    /// The shapes a function's docstring states (see
    /// `stated::docstring::key`), which is all its text is read for.
    StatedDocstring(TextRange, String),
}

impl TextReads {
    pub(crate) fn text(&mut self, range: TextRange) {
        self.reads.push(TextRead::Text(range));
    }

    pub(crate) fn shape_comments(&mut self, range: TextRange, stated: Vec<(String, Vec<String>)>) {
        self.reads.push(TextRead::ShapeComments(range, stated));
    }

    pub(crate) fn stated_docstring(&mut self, range: TextRange, key: String) {
        self.reads.push(TextRead::StatedDocstring(range, key));
    }

    pub(crate) fn stated_comments(&mut self, key: String) {
        self.reads.push(TextRead::StatedComments(key));
    }

    pub(crate) fn len(&self) -> usize {
        self.reads.len()
    }

    /// The reads made since there were `mark` of them.
    pub(crate) fn since(&self, mark: usize) -> TextReads {
        TextReads {
            reads: self.reads.get(mark..).unwrap_or_default().to_vec(),
        }
    }

    pub(crate) fn extend(&mut self, other: &TextReads) {
        self.reads.extend(other.reads.iter().cloned());
    }

    /// The reads with each range put where `place` says; `None` when one
    /// has no place.
    pub(crate) fn placed(
        &self,
        place: impl Fn(&TextRange) -> Option<TextRange>,
    ) -> Option<TextReads> {
        let reads = self
            .reads
            .iter()
            .map(|read| match read {
                TextRead::Text(range) => Some(TextRead::Text(place(range)?)),
                TextRead::ShapeComments(range, stated) => {
                    Some(TextRead::ShapeComments(place(range)?, stated.clone()))
                }
                TextRead::StatedComments(key) => Some(TextRead::StatedComments(key.clone())),
                TextRead::StatedDocstring(range, key) => {
                    Some(TextRead::StatedDocstring(place(range)?, key.clone()))
                }
            })
            .collect::<Option<Vec<_>>>()?;
        Some(TextReads { reads })
    }

    /// The reads without repeats: a function called a hundred times reads
    /// the same names a hundred times.
    pub(crate) fn finish(mut self) -> TextReads {
        self.reads.sort_by_key(|read| match read {
            TextRead::Text(r) => (0, r.start, r.end),
            TextRead::ShapeComments(r, _) => (2, r.start, r.end),
            TextRead::StatedComments(_) => (3, 0, 0),
            TextRead::StatedDocstring(r, _) => (4, r.start, r.end),
        });
        self.reads.dedup();
        self
    }
}
