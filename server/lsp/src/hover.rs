//! `textDocument/hover`: what is known of the tensor under the cursor.

use ropey::Rope;
use shapels_analysis::{FileAnalysis, TextRange};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use crate::position::PositionEncoding;
use crate::proto;
use crate::session::Session;

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
    let Some(analysis) = snapshot.analysis(session).await? else {
        return Ok(None);
    };
    let offset = proto::offset(&snapshot.text, position.position, encoding);
    // Lines as the user counts them (1-based), for the places hover names.
    let line_of =
        |at: usize| (at <= snapshot.text.len_bytes()).then(|| snapshot.text.byte_to_line(at) + 1);
    let (markdown, range) = if let Some(binding) = shapels_analysis::binding_at(&analysis, offset) {
        // The analysis with expressions says more of the same binding (the
        // chain of ops that made it); the keystroke analysis is the fallback.
        let fuller = snapshot.analysis_with_expressions(session).await?;
        let binding = fuller
            .as_deref()
            .and_then(|a| shapels_analysis::binding_at(a, offset))
            .filter(|b| b.range == binding.range && b.name == binding.name)
            .unwrap_or(binding);
        (
            link_lines(
                &binding.tensor.hover_markdown(Some(&binding.name), &line_of),
                position.text_document.uri.as_str(),
            ),
            binding.range,
        )
    } else {
        let Some(analysis) = snapshot.analysis_with_expressions(session).await? else {
            return Ok(None);
        };
        let expression = shapels_analysis::expression_at(&analysis, offset);
        let definition = shapels_analysis::definition_at(&analysis, offset);
        // A module under the cursor (`model`, `self.block`, a class's
        // name): its summary, worked out now. Not on a tensor expression
        // whose range is the word under the cursor: that is no module.
        let word = word_at(&snapshot.text, offset);
        let on_tensor = expression.is_some_and(|e| word.as_ref().is_some_and(|w| e.range == *w));
        // A keyword names no module: no summary run for it.
        let keyword = word.as_ref().is_some_and(|w| {
            snapshot
                .text
                .get_byte_slice(*w)
                .is_some_and(|s| PYTHON_KEYWORDS.contains(&s.to_string().as_str()))
        });
        if word.is_some() && !on_tensor && !keyword {
            let target = shapels_analysis::SummaryTarget::At(offset);
            let summary = snapshot.summary(session, target).await?;
            if let Some(summary) = summary
                && expression.is_none_or(|e| {
                    e.range.start <= summary.range.start && summary.range.end <= e.range.end
                })
            {
                return Ok(Some(Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: summary_markdown(&summary, definition),
                    }),
                    range: Some(proto::lsp_range(&snapshot.text, &summary.range, encoding)),
                }));
            }
            // An int size or a name the analysis cannot follow, inside a
            // tensor expression (`B` of `x.view(B, T, C)`): the name.
            if let Some(found) = named_value(&snapshot.text, &analysis, offset, encoding) {
                return Ok(Some(Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: found.0,
                    }),
                    range: Some(proto::lsp_range(&snapshot.text, &found.1, encoding)),
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
                (definition_markdown(&snapshot, def), def.range)
            }
            (Some(expr), def) => {
                let mut markdown = link_lines(
                    &expr.tensor.hover_markdown(None, &line_of),
                    position.text_document.uri.as_str(),
                );
                if let Some(def) = def {
                    markdown.push_str(&format!("- defined in `{}`\n", def.place()));
                }
                (markdown, expr.range)
            }
            (None, Some(def)) => (definition_markdown(&snapshot, def), def.range),
            (None, None) => match beyond_budget(&snapshot.text, &analysis, offset, encoding) {
                Some(found) => found,
                None => return Ok(None),
            },
        }
    };
    let mut markdown = markdown;
    if let Some(analysis) = snapshot.analysis_with_expressions(session).await? {
        markdown.push_str(&diagnostic_operands(&snapshot.text, &analysis, offset));
    }
    Ok(Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(proto::lsp_range(&snapshot.text, &range, encoding)),
    }))
}

/// The lines hover names where a tensor's ops were called (`(line 12)`,
/// `at line 15`) as links into the document (`uri#L12`), which editors open
/// at that line.
fn link_lines(markdown: &str, uri: &str) -> String {
    markdown
        .lines()
        .map(|line| {
            if !(line.starts_with("- made by ") || line.starts_with("- assumes ")) {
                return line.to_string();
            }
            let mut out = String::new();
            let mut rest = line;
            while let Some(i) = rest.find("line ") {
                let digits: String = rest[i + 5..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if digits.is_empty() {
                    out.push_str(&rest[..i + 5]);
                    rest = &rest[i + 5..];
                    continue;
                }
                out.push_str(&rest[..i]);
                out.push_str(&format!("[line {digits}]({uri}#L{digits})"));
                rest = &rest[i + 5 + digits.len()..];
            }
            out.push_str(rest);
            out
        })
        .map(|l| l + "\n")
        .collect()
}

/// Python's keywords, which hover never summarises.
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Operands listed at most per diagnostic.
const MAX_OPERANDS: usize = 6;

/// For each diagnostic under the cursor, the shapes of its operands: the
/// outermost tensor expressions inside its range (`x @ w`: `x` and `w`).
fn diagnostic_operands(text: &Rope, analysis: &FileAnalysis, offset: usize) -> String {
    let mut out = String::new();
    for diagnostic in analysis
        .diagnostics
        .iter()
        .filter(|d| d.range.start <= offset && offset <= d.range.end)
    {
        let range = &diagnostic.range;
        let inside: Vec<&shapels_analysis::ExprInfo> = analysis
            .expressions
            .iter()
            .filter(|e| range.start <= e.range.start && e.range.end <= range.end)
            .filter(|e| e.range != *range)
            .collect();
        let outermost: Vec<&&shapels_analysis::ExprInfo> = inside
            .iter()
            .filter(|e| {
                !inside.iter().any(|o| {
                    o.range != e.range
                        && o.range.start <= e.range.start
                        && e.range.end <= o.range.end
                })
            })
            .take(MAX_OPERANDS)
            .collect();
        if outermost.is_empty() {
            continue;
        }
        out.push_str(&format!("\n---\n`{}`: the operands\n", diagnostic.code));
        for e in outermost {
            let source = text
                .get_byte_slice(e.range)
                .map(|s| s.to_string())
                .unwrap_or_default();
            let source: String = source.split_whitespace().collect::<Vec<_>>().join(" ");
            let source = if source.chars().count() > 40 {
                format!("{}…", source.chars().take(39).collect::<String>())
            } else {
                source
            };
            out.push_str(&format!(
                "- `{source}`: `{}` {}\n",
                e.tensor.shape_label(),
                e.tensor.summary()
            ));
        }
    }
    out
}

/// A model summary for hover: the aligned table in a code block (editors
/// show it in a fixed-width font), the totals under it.
fn summary_markdown(
    summary: &shapels_analysis::ModelSummary,
    definition: Option<&shapels_analysis::Definition>,
) -> String {
    let mut out = format!("```text\n{}```\n", summary.to_text());
    // A class another file defines (`Block` of `Block(32)(x)`): where.
    if let Some(def) = definition {
        out.push_str(&format!("- defined in `{}`\n", def.place()));
    }
    out
}

/// A name another file defines: what it is called here and where it is.
fn definition_markdown(
    snapshot: &crate::snapshot::Snapshot,
    definition: &shapels_analysis::Definition,
) -> String {
    let name = snapshot
        .text
        .get_byte_slice(definition.range)
        .map(|s| s.to_string())
        .unwrap_or_default();
    format!("`{name}` — defined in `{}`", definition.place())
}

/// On a name bound to an int size (`B` of `B, T, C = x.size()`), what it
/// is bound to and where; on a name bound to something the analysis
/// cannot follow, why.
fn named_value(
    text: &Rope,
    analysis: &FileAnalysis,
    offset: usize,
    encoding: PositionEncoding,
) -> Option<(String, TextRange)> {
    let word = word_at(text, offset)?;
    let name = text.get_byte_slice(word)?.to_string();
    let line_of = |at: usize| proto::lsp_position(text, at, encoding).line + 1;
    let statement = |at: usize| {
        let line = text.byte_to_line(at.min(text.len_bytes()));
        text.get_line(line)
            .map(|l| l.to_string().trim().to_string())
            .unwrap_or_default()
    };
    if let Some(size) = shapels_analysis::size_named(analysis, &name, offset) {
        let mut out = format!(
            "```text\n{name}: int\n```\n- bound at line {}: `{}`\n",
            line_of(size.range.start),
            statement(size.range.start)
        );
        match size.values.as_slice() {
            [] => {}
            [one] if *one == name => {
                out.push_str("- any size: no call the analysis can read fixes it\n");
            }
            [one] => out.push_str(&format!("- value: `{one}`\n")),
            many => out.push_str(&format!(
                "- values, one per call: `{}`\n",
                many.join("`, `")
            )),
        }
        return Some((out, word));
    }
    let unknown = shapels_analysis::unknown_named(analysis, &name, offset)?;
    let out = format!(
        "`{name}`: shape unknown\n- {}\n- bound at line {}: `{}`\n",
        unknown.why,
        line_of(unknown.range.start),
        statement(unknown.range.start)
    );
    Some((out, word))
}

/// On a name the analysis knows nothing of, at or after the place where it
/// ran out of its step budget: why nothing is known there. Elsewhere an
/// unknown name is simply not a tensor, and gets no hover.
fn beyond_budget(
    text: &Rope,
    analysis: &FileAnalysis,
    offset: usize,
    encoding: PositionEncoding,
) -> Option<(String, TextRange)> {
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
fn word_at(text: &Rope, offset: usize) -> Option<TextRange> {
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
    (start < end).then(|| TextRange::new(text.char_to_byte(start), text.char_to_byte(end)))
}
