//! Shapes stated in comments: `# (B, T, C)`, `# [B, T, C]`, `# B x T x C`, `# shape: (B, T)`.
//!
//! A comment is prose first: only a comment that is a shape and nothing
//! else is read (optionally labelled with the name it describes or
//! `shape:`, optionally the last of an arrow chain `(B, T) -> (B, T, C)`).
//! `# 3x3 conv`, `# (see above)` and `# keep it (B, T) for now` state
//! nothing. How the shape was written is kept, so that a stale comment can
//! be rewritten in its own notation.

use std::ops::Range;

use super::{StatedDim, StatedShape, parse_dim, split_top};

/// How a comment writes its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// `(B, T, C)`
    Paren,
    /// `[B, T, C]`
    Bracket,
    /// `B x T x C` (or `B × T × C`), with the separator as written.
    Times(&'static str),
}

/// A shape a comment states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommentClaim {
    /// `y` of `# y: (N, D)`, `shape` of `# shape: (B, T)`.
    pub(crate) label: Option<String>,
    pub(crate) shape: StatedShape,
    /// Where the shape is written, in bytes of the text given to `read`.
    pub(crate) span: Range<usize>,
    pub(crate) style: Style,
}

/// The shape a comment states, if the comment is one: `text` is what
/// follows the `#`, up to the next `#` if there is one.
pub(crate) fn read(text: &str) -> Option<CommentClaim> {
    let body_start = text.len() - text.trim_start().len();
    let body = text.trim();
    let (label, after_label) = split_label(body);
    let rest_start = body_start + (body.len() - after_label.len());
    // An arrow chain states what comes out last; everything before the
    // last arrow must be shapes too, or the comment is prose.
    let (claim_at, claim_text) = match after_label.rfind("->") {
        Some(arrow) => {
            let before = &after_label[..arrow];
            if !only_shapes(before) {
                return None;
            }
            (arrow + 2, &after_label[arrow + 2..])
        }
        None => (0, after_label),
    };
    let lead = claim_text.len() - claim_text.trim_start().len();
    let shape_text = claim_text.trim().trim_end_matches('.').trim_end();
    let start = rest_start + claim_at + lead;
    let span = start..start + shape_text.len();
    let (shape, style) = read_shape(shape_text, label.is_some())?;
    Some(CommentClaim {
        label,
        shape,
        span,
        style,
    })
}

/// `name: rest` → (`Some(name)`, `rest`); a label is a (dotted) identifier.
fn split_label(body: &str) -> (Option<String>, &str) {
    let Some(colon) = body.find(':') else {
        return (None, body);
    };
    let name = body[..colon].trim();
    let identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    if identifier {
        (Some(name.to_string()), body[colon + 1..].trim_start())
    } else {
        (None, body)
    }
}

/// Whether `text` holds only bracketed shapes and the operators between
/// them (`(B, nh, T, T) x (B, nh, T, hs)`).
fn only_shapes(text: &str) -> bool {
    let mut depth = 0i32;
    let mut groups = 0;
    let mut outside = String::new();
    for c in text.chars() {
        match c {
            '(' | '[' => {
                if depth == 0 {
                    groups += 1;
                }
                depth += 1;
            }
            ')' | ']' => depth -= 1,
            c if depth == 0 => outside.push(c),
            _ => {}
        }
    }
    depth == 0
        && groups > 0
        && outside
            .chars()
            .all(|c| matches!(c, ' ' | 'x' | '@' | '*' | ',' | '×' | '-' | '>'))
}

/// One whole shape: `(B, T)`, `[B, T]` or `B x T`.
fn read_shape(text: &str, labelled: bool) -> Option<(StatedShape, Style)> {
    let (open, close, style) = match text.chars().next()? {
        '(' => ('(', ')', Style::Paren),
        '[' => ('[', ']', Style::Bracket),
        _ => return times(text),
    };
    let inner = text.strip_prefix(open)?.strip_suffix(close)?;
    // The first bracket must close at the end: `(B, T) and (T, C)` is two.
    let mut depth = 0i32;
    for c in inner.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    let items: Vec<&str> = split_top(inner, ',').into_iter().map(str::trim).collect();
    let trailing_comma = items.len() > 1 && items.last().is_some_and(|i| i.is_empty());
    let items: Vec<&str> = match items.split_last() {
        Some((last, rest)) if last.is_empty() && !rest.is_empty() => rest.to_vec(),
        _ => items,
    };
    // `(N)` unlabelled is as likely an aside as a shape: a tuple needs a
    // comma, unless the comment says what it describes.
    if items.len() < 2 && !trailing_comma && !(labelled && style == Style::Bracket) {
        return None;
    }
    let dims = items
        .iter()
        .map(|item| comment_dim(item))
        .collect::<Option<Vec<_>>>()?;
    let shape = StatedShape::new(dims);
    shape.valid().then_some((shape, style))
}

/// `B x T x C`: at least two dims, one of them named (`3x3` is a kernel).
fn times(text: &str) -> Option<(StatedShape, Style)> {
    let sep = [" x ", " × ", "×"].into_iter().find(|s| text.contains(s))?;
    let parts: Vec<&str> = text.split(sep).map(str::trim).collect();
    if parts.len() < 2 {
        return None;
    }
    let dims = parts
        .iter()
        .map(|p| comment_dim(p))
        .collect::<Option<Vec<_>>>()?;
    if dims.iter().all(|d| matches!(d, StatedDim::Size(_))) {
        return None;
    }
    let shape = StatedShape::new(dims);
    shape.valid().then_some((shape, Style::Times(sep)))
}

/// One dim of a comment: a size, a name, an expression, `?`/`_` for one
/// nobody named, `...`/`*`/`*batch` for any number.
fn comment_dim(item: &str) -> Option<StatedDim> {
    match item {
        "..." | "*" | "…" => Some(StatedDim::Many(None)),
        "?" | "_" => Some(StatedDim::Anonymous(None)),
        _ if item.starts_with('*') && super::parse_dim(&item[1..]).is_some() => {
            Some(StatedDim::Many(Some(item[1..].trim().to_string())))
        }
        _ => parse_dim(item),
    }
}

/// A shape written in `style`: what a rewritten comment says.
pub(crate) fn render(style: Style, dims: &[String]) -> String {
    match style {
        Style::Paren if dims.len() == 1 => format!("({},)", dims[0]),
        Style::Paren => format!("({})", dims.join(", ")),
        Style::Bracket => format!("[{}]", dims.join(", ")),
        Style::Times(sep) => dims.join(sep),
    }
}

/// Where a line's comment starts: a `#` outside string quotes.
pub(crate) fn comment_start(line: &str) -> Option<usize> {
    // Most lines hold no `#` at all; a byte search says so without walking
    // their characters (every line of a file is asked, at every keystroke).
    line.find('#')?;
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return Some(i),
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Option<String> {
        read(text).map(|c| {
            format!(
                "{}{} @{}",
                c.label.map(|l| format!("{l}: ")).unwrap_or_default(),
                c.shape,
                &text[c.span]
            )
        })
    }

    #[test]
    fn notations() {
        assert_eq!(shown(" (B, T, C)").as_deref(), Some("[B, T, C] @(B, T, C)"));
        assert_eq!(shown(" [B, T, C]").as_deref(), Some("[B, T, C] @[B, T, C]"));
        assert_eq!(shown(" B x T x C").as_deref(), Some("[B, T, C] @B x T x C"));
        assert_eq!(
            shown(" shape: (B, T)").as_deref(),
            Some("shape: [B, T] @(B, T)")
        );
        assert_eq!(shown(" y: (N, D)").as_deref(), Some("y: [N, D] @(N, D)"));
        assert_eq!(
            shown(" (B, nh, T, hs)").as_deref(),
            Some("[B, nh, T, hs] @(B, nh, T, hs)")
        );
        assert_eq!(
            shown(" (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)").as_deref(),
            Some("[B, nh, T, hs] @(B, nh, T, hs)")
        );
        assert_eq!(shown(" (N,)").as_deref(), Some("[N] @(N,)"));
        assert_eq!(
            shown(" (B, C // n_head, ?)").as_deref(),
            Some("[B, C // n_head, _] @(B, C // n_head, ?)")
        );
    }

    #[test]
    fn prose_is_not_a_shape() {
        for prose in [
            " 3x3 conv",
            " 3 x 3",
            " (see above, and below)",
            " (optional)",
            " keep it (B, T) for now",
            " (B, T) and (T, C)",
            " TODO: fix this",
            " noqa: E501",
            " type: ignore",
            " hint: fine",
            " x: (bchw)",
            " B x T x C embeddings",
            " the (B, T) -> output",
        ] {
            assert_eq!(shown(prose), None, "{prose}");
        }
    }

    #[test]
    fn rendered_in_its_own_notation() {
        let dims = vec!["B".to_string(), "T".to_string()];
        assert_eq!(render(Style::Paren, &dims), "(B, T)");
        assert_eq!(render(Style::Bracket, &dims), "[B, T]");
        assert_eq!(render(Style::Times(" x "), &dims), "B x T");
        assert_eq!(render(Style::Paren, &dims[..1]), "(B,)");
    }
}
