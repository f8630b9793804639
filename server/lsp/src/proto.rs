//! Conversion between shapels' byte offsets and LSP positions and ranges.
//!
//! This is the edge: the analysis and the document store speak byte offsets,
//! the protocol speaks `Position`s in the negotiated encoding.

use ropey::Rope;
use shapels_syntax::ast::TextRange;
use tower_lsp_server::ls_types::{Position, Range};

use crate::position::{self, LineCol, PositionEncoding};

pub(crate) fn lsp_position(text: &Rope, offset: usize, encoding: PositionEncoding) -> Position {
    let LineCol { line, col } = position::offset_to_position(text, offset, encoding);
    Position::new(line, col)
}

pub(crate) fn lsp_range(text: &Rope, range: &TextRange, encoding: PositionEncoding) -> Range {
    Range::new(
        lsp_position(text, range.start, encoding),
        lsp_position(text, range.end, encoding),
    )
}

pub(crate) fn offset(text: &Rope, position: Position, encoding: PositionEncoding) -> usize {
    position::position_to_offset(text, line_col(position), encoding)
}

pub(crate) fn offsets(text: &Rope, range: Range, encoding: PositionEncoding) -> TextRange {
    position::range_to_offsets(text, line_col(range.start), line_col(range.end), encoding).into()
}

fn line_col(position: Position) -> LineCol {
    LineCol {
        line: position.line,
        col: position.character,
    }
}
