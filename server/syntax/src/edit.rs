//! Text edits in byte offsets, and their translation into tree-sitter's
//! `InputEdit` (which also wants row/column points).

use tree_sitter::{InputEdit, Point};

use crate::ast::TextRange;

/// One contiguous replacement: the old text's bytes `start_byte..old_end_byte`
/// became the new text's bytes `start_byte..new_end_byte`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteEdit {
    pub start_byte: usize,
    pub old_end_byte: usize,
    pub new_end_byte: usize,
}

/// The smallest single edit that turns `old_text` into `new_text`: what lies
/// between their common prefix and common suffix.
///
/// Useful when a caller only has the texts before and after, and also to
/// fold several edits (one LSP `didChange` with many changes) into one
/// reparse. The offsets are on character boundaries of both texts.
pub fn edit_between(old_text: &str, new_text: &str) -> ByteEdit {
    let (old, new) = (old_text.as_bytes(), new_text.as_bytes());
    let mut prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    while !(old_text.is_char_boundary(prefix) && new_text.is_char_boundary(prefix)) {
        prefix -= 1;
    }
    let room = old.len().min(new.len()) - prefix;
    let mut suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !(old_text.is_char_boundary(old.len() - suffix)
        && new_text.is_char_boundary(new.len() - suffix))
    {
        suffix -= 1;
    }
    ByteEdit {
        start_byte: prefix,
        old_end_byte: old.len() - suffix,
        new_end_byte: new.len() - suffix,
    }
}

impl ByteEdit {
    /// tree-sitter's form of the edit, or `None` when the edit does not
    /// describe how `old_text` became `new_text` (out of range, or the text
    /// outside the edited span differs), in which case the caller should
    /// parse from scratch rather than trust an incremental parse.
    pub(crate) fn to_input_edit(self, old_text: &str, new_text: &str) -> Option<InputEdit> {
        let ByteEdit {
            start_byte,
            old_end_byte,
            new_end_byte,
        } = self;
        let consistent = start_byte <= old_end_byte
            && start_byte <= new_end_byte
            && old_end_byte <= old_text.len()
            && new_end_byte <= new_text.len()
            && old_text.len() - old_end_byte == new_text.len() - new_end_byte
            && old_text.as_bytes()[..start_byte] == new_text.as_bytes()[..start_byte]
            && old_text.as_bytes()[old_end_byte..] == new_text.as_bytes()[new_end_byte..];
        consistent.then(|| InputEdit {
            start_byte,
            old_end_byte,
            new_end_byte,
            start_position: point_at(old_text, start_byte),
            old_end_position: point_at(old_text, old_end_byte),
            new_end_position: point_at(new_text, new_end_byte),
        })
    }
}

impl ByteEdit {
    /// Where a range of the old text lies in the new one, when the edit
    /// replaced only what lies between ranges (whitespace, a comment):
    /// ends before the edit stay, starts after it move by its length. A
    /// range with either end inside the replaced bytes has no such place.
    ///
    /// At a pure insertion point a range that ends there stays before the
    /// inserted text and a range that starts there moves after it, which
    /// is where ranges go when what was inserted belongs to neither.
    pub fn move_range(&self, range: &TextRange) -> Option<TextRange> {
        let start = if range.start < self.start_byte {
            range.start
        } else if range.start >= self.old_end_byte {
            self.moved(range.start)?
        } else {
            return None;
        };
        let end = self.move_end(range.end)?;
        (start <= end).then_some(TextRange::new(start, end))
    }

    /// Where an insertion point (a hint's place after a name) moves: as the
    /// end of a range does.
    pub fn move_end(&self, offset: usize) -> Option<usize> {
        if offset <= self.start_byte {
            Some(offset)
        } else if offset > self.old_end_byte {
            self.moved(offset)
        } else {
            None
        }
    }

    fn moved(&self, offset: usize) -> Option<usize> {
        (offset - self.old_end_byte).checked_add(self.new_end_byte)
    }
}

/// tree-sitter's point of a byte offset: rows end at `\n` (so `\r\n` counts
/// once) and columns count bytes, as the parser does.
fn point_at(text: &str, byte: usize) -> Point {
    let before = &text.as_bytes()[..byte.min(text.len())];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |newline| newline + 1);
    Point {
        row,
        column: before.len() - line_start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(old: &str, new: &str, expected: (usize, usize, usize)) {
        let edit = edit_between(old, new);
        assert_eq!(
            (edit.start_byte, edit.old_end_byte, edit.new_end_byte),
            expected,
            "{old:?} -> {new:?}"
        );
        let rebuilt = format!(
            "{}{}{}",
            &old[..edit.start_byte],
            &new[edit.start_byte..edit.new_end_byte],
            &old[edit.old_end_byte..]
        );
        assert_eq!(rebuilt, new);
        assert!(edit.to_input_edit(old, new).is_some());
    }

    #[test]
    fn edits_between_texts() {
        check("abc", "abc", (3, 3, 3));
        check("abc", "abxc", (2, 2, 3));
        check("abc", "ac", (1, 2, 1));
        check("", "x", (0, 0, 1));
        check("x", "", (0, 1, 0));
        check("aaa", "aa", (2, 3, 2));
        // `é` and `è` share their first byte; the edit must not split them.
        check("xéy", "xèy", (1, 3, 3));
        check("日本", "日日本", (3, 3, 6));
    }

    #[test]
    fn points_count_bytes_and_newlines() {
        assert_eq!(point_at("ab\ncd", 4), Point { row: 1, column: 1 });
        assert_eq!(point_at("a\r\nb", 3), Point { row: 1, column: 0 });
        assert_eq!(point_at("é\nx", 2), Point { row: 0, column: 2 });
        assert_eq!(point_at("x", 0), Point { row: 0, column: 0 });
    }

    #[test]
    fn inconsistent_edits_are_refused() {
        let bad = ByteEdit {
            start_byte: 1,
            old_end_byte: 2,
            new_end_byte: 2,
        };
        assert!(bad.to_input_edit("abc", "axc").is_some());
        assert!(bad.to_input_edit("abc", "xyc").is_none());
        assert!(bad.to_input_edit("abc", "axcd").is_none());
        let out_of_range = ByteEdit {
            start_byte: 5,
            old_end_byte: 9,
            new_end_byte: 9,
        };
        assert!(out_of_range.to_input_edit("abc", "abc").is_none());
        let backwards = ByteEdit {
            start_byte: 2,
            old_end_byte: 1,
            new_end_byte: 1,
        };
        assert!(backwards.to_input_edit("abc", "abc").is_none());
    }
}
