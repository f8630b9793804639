//! `textDocument/hover`: what is known of the tensor under the cursor.

use std::sync::Arc;

use ropey::Rope;
use shapels_analysis::FileAnalysis;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use crate::position::PositionEncoding;
use crate::proto;
use crate::session::Session;
use crate::snapshot::Cancelled;

/// On a bound name, the binding (with its name); elsewhere, the innermost
/// tensor expression under the cursor, from an analysis that records
/// expressions (made for this version on the first such hover).
pub(crate) async fn hover(session: &Session, params: HoverParams) -> Result<Option<Hover>> {
    let position = params.text_document_position_params;
    // Taken before the first `.await`: see `inlay_hints::inlay_hint`.
    let Some(snapshot) = session.snapshot(&position.text_document.uri) else {
        return Ok(None);
    };
    let encoding = session.flags().encoding;
    let Some(analysis) = answerable(snapshot.analysis(session).await)? else {
        return Ok(None);
    };
    let offset = proto::offset(&snapshot.text, position.position, encoding);
    let (markdown, range) = if let Some(binding) = shapels_analysis::binding_at(&analysis, offset) {
        (
            binding.tensor.hover_markdown(Some(&binding.name)),
            binding.range.clone(),
        )
    } else {
        let Some(analysis) = answerable(snapshot.analysis_with_expressions(session).await)? else {
            return Ok(None);
        };
        let expression = shapels_analysis::expression_at(&analysis, offset);
        let definition = shapels_analysis::definition_at(&analysis, offset);
        // A module under the cursor (`model`, `self.block`, a class's
        // name): its summary, worked out now. Not on a tensor expression
        // whose range is the word under the cursor: that is no module.
        let word = word_at(&snapshot.text, offset);
        let on_tensor = expression.is_some_and(|e| word.as_ref().is_some_and(|w| e.range == *w));
        if word.is_some() && !on_tensor {
            let target = shapels_analysis::SummaryTarget::At(offset);
            let summary = snapshot
                .summary(session, target)
                .await
                .map_err(|Cancelled| Error::content_modified())?;
            if let Some(summary) = summary
                && expression.is_none_or(|e| {
                    e.range.start <= summary.range.start && summary.range.end <= e.range.end
                })
            {
                return Ok(Some(Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: summary_markdown(&summary),
                    }),
                    range: Some(proto::lsp_range(&snapshot.text, &summary.range, encoding)),
                }));
            }
        }
        match (expression, definition) {
            // The name of something another file defines, inside a larger
            // tensor expression (`Block` of `Block(32)(x)`): the name is
            // what the cursor is on.
            (Some(expr), Some(def))
                if def.range.start > expr.range.start || def.range.end < expr.range.end =>
            {
                (definition_markdown(&snapshot, def), def.range.clone())
            }
            (Some(expr), def) => {
                let mut markdown = expr.tensor.hover_markdown(None);
                if let Some(def) = def {
                    markdown.push_str(&format!("- defined in `{}`\n", def.place()));
                }
                (markdown, expr.range.clone())
            }
            (None, Some(def)) => (definition_markdown(&snapshot, def), def.range.clone()),
            (None, None) => match beyond_budget(&snapshot.text, &analysis, offset, encoding) {
                Some(found) => found,
                None => return Ok(None),
            },
        }
    };
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(proto::lsp_range(&snapshot.text, &range, encoding)),
    }))
}

/// A model summary for hover: the aligned table in a code block (editors
/// show it in a fixed-width font), the totals under it.
fn summary_markdown(summary: &shapels_analysis::ModelSummary) -> String {
    format!("```text\n{}```\n", summary.to_text())
}

/// An analysis to answer from; `None` when it panicked. When the document
/// changed before the analysis began, the answer would be about a text the
/// client no longer has: LSP's ContentModified tells the client to ask
/// again (or not), without showing an error.
fn answerable(
    analysis: std::result::Result<Option<Arc<FileAnalysis>>, Cancelled>,
) -> Result<Option<Arc<FileAnalysis>>> {
    analysis.map_err(|Cancelled| Error::content_modified())
}

/// A name another file defines: what it is called here and where it is.
fn definition_markdown(
    snapshot: &crate::snapshot::Snapshot,
    definition: &shapels_analysis::Definition,
) -> String {
    let name = snapshot
        .text
        .get_byte_slice(definition.range.clone())
        .map(|s| s.to_string())
        .unwrap_or_default();
    format!("`{name}` — defined in `{}`", definition.place())
}

/// On a name the analysis knows nothing of, at or after the place where it
/// ran out of its step budget: why nothing is known there. Elsewhere an
/// unknown name is simply not a tensor, and gets no hover.
fn beyond_budget(
    text: &Rope,
    analysis: &FileAnalysis,
    offset: usize,
    encoding: PositionEncoding,
) -> Option<(String, std::ops::Range<usize>)> {
    let stop = shapels_analysis::budget_stop(analysis)?;
    if offset < stop.range.start {
        return None;
    }
    let word = word_at(text, offset)?;
    let line = proto::lsp_position(text, stop.range.start, encoding).line + 1;
    let markdown = format!(
        "Shape unknown: the analysis stopped at line {line}, where its step budget ran out \
         (`{}`), before it got here.",
        shapels_analysis::Code::AnalysisBudget
    );
    Some((markdown, word))
}

/// The byte range of the identifier under or just before `offset`.
fn word_at(text: &Rope, offset: usize) -> Option<std::ops::Range<usize>> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let at = text.byte_to_char(offset.min(text.len_bytes()));
    let mut start = at;
    while start > 0 && is_word(text.char(start - 1)) {
        start -= 1;
    }
    let mut end = at;
    while end < text.len_chars() && is_word(text.char(end)) {
        end += 1;
    }
    (start < end).then(|| text.char_to_byte(start)..text.char_to_byte(end))
}
