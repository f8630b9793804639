//! Conversion between byte offsets and (line, column) positions in a negotiated encoding.
//!
//! Everything inside shapels speaks byte offsets into UTF-8 text. Editors
//! speak `(line, character)` pairs where `character` counts UTF-16 code units
//! unless the client and server agreed on UTF-8 during `initialize`; the CLI
//! reports columns in Unicode code points. This module is the only place
//! that converts, and it never panics: a position past the end of a line or
//! of the document is clamped, as the LSP specification asks.
//!
//! Lines end at `\n`, `\r\n` or `\r`, exactly the line terminators of the
//! LSP specification (ropey is built without `unicode_lines` for this).

use std::ops::Range;

use ropey::Rope;

/// What a column counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    /// UTF-8 code units (bytes).
    Utf8,
    /// UTF-16 code units: the LSP default, and what most editors use.
    #[default]
    Utf16,
    /// Unicode code points, as `shapels check` reports columns.
    Utf32,
}

/// A zero-based line and a zero-based column in some [`PositionEncoding`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// The byte range of line `line`'s content, without its terminator.
///
/// `line` must be a valid line index of `rope`.
fn line_content(rope: &Rope, line: usize) -> Range<usize> {
    let start = rope.line_to_byte(line);
    let mut end = if line + 1 < rope.len_lines() {
        rope.line_to_byte(line + 1)
    } else {
        rope.len_bytes()
    };
    // The terminator is at most two bytes (`\r\n`), and it is ASCII, so
    // looking at raw bytes is safe even when the line holds multibyte text.
    if end > start && rope.byte(end - 1) == b'\n' {
        end -= 1;
        if end > start && rope.byte(end - 1) == b'\r' {
            end -= 1;
        }
    } else if end > start && rope.byte(end - 1) == b'\r' {
        end -= 1;
    }
    start..end
}

/// The largest char boundary at or before `offset`, clamped to the text.
fn floor_char_boundary(rope: &Rope, offset: usize) -> usize {
    let offset = offset.min(rope.len_bytes());
    rope.char_to_byte(rope.byte_to_char(offset))
}

/// The position of a byte offset. Offsets past the end map to the end of the
/// text; an offset inside a multibyte character maps to that character's start.
pub fn offset_to_position(rope: &Rope, offset: usize, encoding: PositionEncoding) -> LineCol {
    let offset = floor_char_boundary(rope, offset);
    let line = rope.byte_to_line(offset);
    let content = line_content(rope, line);
    // An offset between `\r` and `\n` (or on the terminator itself) belongs
    // to the end of the line's content: LSP has no position inside a line break.
    let offset = offset.min(content.end);
    let col = match encoding {
        PositionEncoding::Utf8 => offset - content.start,
        PositionEncoding::Utf16 => {
            rope.char_to_utf16_cu(rope.byte_to_char(offset))
                - rope.char_to_utf16_cu(rope.byte_to_char(content.start))
        }
        PositionEncoding::Utf32 => rope.byte_to_char(offset) - rope.byte_to_char(content.start),
    };
    LineCol {
        line: saturate(line),
        col: saturate(col),
    }
}

/// The byte offset of a position. A line past the end maps to the end of the
/// text, a column past the end of its line to the end of the line's content,
/// and a column inside a character (a byte inside a UTF-8 sequence, a lone
/// half of a UTF-16 surrogate pair) to that character's start.
pub fn position_to_offset(rope: &Rope, position: LineCol, encoding: PositionEncoding) -> usize {
    let line = position.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let content = line_content(rope, line);
    let col = position.col as usize;
    match encoding {
        PositionEncoding::Utf8 => floor_char_boundary(rope, content.start + col.min(content.len())),
        PositionEncoding::Utf16 => {
            let start = rope.char_to_utf16_cu(rope.byte_to_char(content.start));
            let end = rope.char_to_utf16_cu(rope.byte_to_char(content.end));
            let char_idx = rope.utf16_cu_to_char((start + col).min(end));
            rope.char_to_byte(char_idx)
        }
        PositionEncoding::Utf32 => {
            let start = rope.byte_to_char(content.start);
            let end = rope.byte_to_char(content.end);
            rope.char_to_byte((start + col).min(end))
        }
    }
}

/// The byte range of a pair of positions; a reversed pair is taken as empty
/// at its start rather than rejected, so a confused client cannot panic us.
pub fn range_to_offsets(
    rope: &Rope,
    start: LineCol,
    end: LineCol,
    encoding: PositionEncoding,
) -> Range<usize> {
    let start = position_to_offset(rope, start, encoding);
    let end = position_to_offset(rope, end, encoding);
    start..end.max(start)
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const UTF8: PositionEncoding = PositionEncoding::Utf8;
    const UTF16: PositionEncoding = PositionEncoding::Utf16;
    const UTF32: PositionEncoding = PositionEncoding::Utf32;

    fn lc(line: u32, col: u32) -> LineCol {
        LineCol { line, col }
    }

    /// Every char boundary maps to a position and back to itself, in every encoding.
    fn assert_round_trips(text: &str) {
        let rope = Rope::from_str(text);
        for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let on_terminator = matches!(text.as_bytes().get(offset), Some(b'\n'))
                && offset > 0
                && text.as_bytes()[offset - 1] == b'\r';
            if on_terminator {
                // Between `\r` and `\n` is not a position; it maps to the line end.
                continue;
            }
            for encoding in [UTF8, UTF16, UTF32] {
                let pos = offset_to_position(&rope, offset, encoding);
                assert_eq!(
                    position_to_offset(&rope, pos, encoding),
                    offset,
                    "{text:?} at {offset} in {encoding:?}"
                );
            }
        }
    }

    #[test]
    fn ascii_positions() {
        let rope = Rope::from_str("ab\ncd\n");
        assert_eq!(offset_to_position(&rope, 0, UTF16), lc(0, 0));
        assert_eq!(offset_to_position(&rope, 4, UTF16), lc(1, 1));
        assert_eq!(offset_to_position(&rope, 6, UTF16), lc(2, 0));
        assert_eq!(position_to_offset(&rope, lc(1, 2), UTF16), 5);
    }

    #[test]
    fn utf16_counts_surrogate_pairs_as_two_units() {
        // "🎉" is 4 bytes in UTF-8, 2 units in UTF-16, 1 code point.
        let text = "s = \"🎉\"; x = 1";
        let rope = Rope::from_str(text);
        let x = text.find('x').unwrap();
        assert_eq!(x, 12);
        assert_eq!(offset_to_position(&rope, x, UTF8), lc(0, 12));
        assert_eq!(offset_to_position(&rope, x, UTF16), lc(0, 10));
        assert_eq!(offset_to_position(&rope, x, UTF32), lc(0, 9));
        assert_eq!(position_to_offset(&rope, lc(0, 10), UTF16), x);
        assert_eq!(position_to_offset(&rope, lc(0, 12), UTF8), x);
        assert_eq!(position_to_offset(&rope, lc(0, 9), UTF32), x);
    }

    #[test]
    fn column_inside_a_character_rounds_down_to_its_start() {
        let text = "a🎉b";
        let rope = Rope::from_str(text);
        // UTF-16 column 2 is between the two halves of the surrogate pair.
        assert_eq!(position_to_offset(&rope, lc(0, 2), UTF16), 1);
        // UTF-8 column 3 is inside the 4-byte sequence.
        assert_eq!(position_to_offset(&rope, lc(0, 3), UTF8), 1);
        // A byte offset inside the sequence maps to the character's start.
        assert_eq!(offset_to_position(&rope, 2, UTF16), lc(0, 1));
    }

    #[test]
    fn two_byte_and_three_byte_characters() {
        // "é" is 2 bytes / 1 unit, "中" 3 bytes / 1 unit.
        let text = "é中x";
        let rope = Rope::from_str(text);
        assert_eq!(offset_to_position(&rope, 5, UTF16), lc(0, 2));
        assert_eq!(offset_to_position(&rope, 5, UTF8), lc(0, 5));
        assert_eq!(position_to_offset(&rope, lc(0, 2), UTF16), 5);
    }

    #[test]
    fn crlf_is_one_line_break() {
        let text = "a = 1\r\nbé = 2\r\n";
        let rope = Rope::from_str(text);
        assert_eq!(rope.len_lines(), 3);
        let b = text.find('b').unwrap();
        assert_eq!(offset_to_position(&rope, b, UTF16), lc(1, 0));
        // The `\r` and the `\n` are both the end of line 0.
        assert_eq!(offset_to_position(&rope, 5, UTF16), lc(0, 5));
        assert_eq!(offset_to_position(&rope, 6, UTF16), lc(0, 5));
        // A column past the content stops before the terminator.
        assert_eq!(position_to_offset(&rope, lc(0, 99), UTF16), 5);
        assert_eq!(position_to_offset(&rope, lc(1, 99), UTF8), text.len() - 2);
        assert_eq!(position_to_offset(&rope, lc(2, 0), UTF16), text.len());
    }

    #[test]
    fn lone_cr_is_a_line_break() {
        let rope = Rope::from_str("a\rb");
        assert_eq!(offset_to_position(&rope, 2, UTF16), lc(1, 0));
        assert_eq!(position_to_offset(&rope, lc(1, 1), UTF16), 3);
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let text = "x🎉\ny";
        let rope = Rope::from_str(text);
        assert_eq!(position_to_offset(&rope, lc(0, 100), UTF16), 5);
        assert_eq!(position_to_offset(&rope, lc(7, 3), UTF16), text.len());
        assert_eq!(
            position_to_offset(&rope, lc(u32::MAX, u32::MAX), UTF8),
            text.len()
        );
        assert_eq!(offset_to_position(&rope, 1_000, UTF16), lc(1, 1));
        let empty = Rope::new();
        assert_eq!(position_to_offset(&empty, lc(3, 3), UTF16), 0);
        assert_eq!(offset_to_position(&empty, 3, UTF16), lc(0, 0));
    }

    #[test]
    fn reversed_range_is_empty() {
        let rope = Rope::from_str("abc\ndef");
        assert_eq!(range_to_offsets(&rope, lc(1, 2), lc(0, 1), UTF16), 6..6);
    }

    #[test]
    fn round_trips() {
        for text in [
            "",
            "x = torch.randn(8, 128)\n",
            "s = \"🎉\"; x = torch.randn(8, 128)\r\ny = x\r\n",
            "名前 = 1\n\n\u{2028}after\u{0085}\u{000C}\n",
            "a\rb\r\nc\n\r",
            "👩‍👩‍👧 = \"é\"\n",
        ] {
            assert_round_trips(text);
        }
    }

    #[test]
    fn unicode_separators_are_not_line_breaks() {
        // U+2028, U+0085 and form feed are ordinary characters to LSP.
        let text = "a\u{2028}b\u{0085}c\u{000C}d";
        let rope = Rope::from_str(text);
        assert_eq!(rope.len_lines(), 1);
        assert_eq!(offset_to_position(&rope, text.len(), UTF16), lc(0, 7));
    }
}
