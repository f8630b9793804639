//! Shapes stated in docstrings: Google, NumPy and torch's own `Shape:` sections.
//!
//! - Google: `x (Tensor): (N, C, H, W) input` or `x (Tensor): input of shape (B, T)`.
//! - NumPy: `x : Tensor, shape (N, C)` or `x : torch.Tensor of shape (N, C)`.
//! - torch: a `Shape:` section with `- Input: :math:`(N, C_{in}, H, W)``,
//!   whose LaTeX subscripts become names (`C_in`).
//!
//! Each entry is a label as written (a parameter's name, or `Input`) and
//! the shape; which parameter a label means is the caller's business.

use super::{StatedDim, StatedShape, parse_dim, split_top};

/// A shape a docstring states for a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DocEntry {
    /// A parameter's name, or `Input` of a `Shape:` section.
    pub(crate) label: String,
    pub(crate) shape: StatedShape,
    /// Where the shape is written (its brackets included), in bytes of the
    /// docstring's text.
    pub(crate) span: std::ops::Range<usize>,
    /// The shape's brackets: `(` or `[`.
    pub(crate) style: super::comment::Style,
}

/// Every shape a docstring states, in order.
pub(crate) fn read(doc: &str) -> Vec<DocEntry> {
    let mut out = Vec::new();
    let mut in_shape_section = false;
    for full in doc.split_inclusive('\n') {
        let offset = full.as_ptr() as usize - doc.as_ptr() as usize;
        let line = full.trim();
        if line.is_empty() {
            continue;
        }
        if line.trim_end_matches(':') == "Shape" || line.trim_end_matches(':') == "Shapes" {
            in_shape_section = true;
            continue;
        }
        let entry = line.strip_prefix("- ").or_else(|| line.strip_prefix("* "));
        if in_shape_section && entry.is_none() && line.ends_with(':') {
            in_shape_section = false;
        }
        // Outside a `Shape:` section, only a tensor's entry states a shape
        // (`scale (float): [0, 1]` is a range).
        if !(in_shape_section || line.contains("ensor") || line.contains("rray")) {
            continue;
        }
        let line = entry.unwrap_or(line);
        let Some((label, rest)) = label_and_rest(line) else {
            continue;
        };
        if let Some((shape, at, len, style)) = shape_in(rest) {
            let start = rest.as_ptr() as usize - doc.as_ptr() as usize + at;
            debug_assert!(start >= offset);
            out.push(DocEntry {
                label,
                shape,
                span: start..start + len,
                style,
            });
        }
    }
    out
}

/// What a docstring states, as the analysis reads it: equal keys mean the
/// same shapes for the same labels (where in the text they are moves with
/// the text).
pub(crate) fn key(doc: &str) -> String {
    read(doc)
        .iter()
        .map(|e| format!("{} {:?} {:?};", e.label, e.shape, e.style))
        .collect()
}

/// `x (Tensor): rest`, `x : Tensor, rest`, `Input: rest` → label and rest.
fn label_and_rest(line: &str) -> Option<(String, &str)> {
    let end = line
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
        .map_or(line.len(), |(i, _)| i);
    let label = &line[..end];
    if label.is_empty() || label.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut rest = line[end..].trim_start();
    // Google's `(Tensor)` or `(torch.Tensor, optional)`.
    if rest.starts_with('(') {
        let close = rest.find(')')?;
        rest = rest[close + 1..].trim_start();
    }
    let rest = rest.strip_prefix(':')?;
    Some((label.to_string(), rest))
}

/// The shape a parameter's description states: one written first
/// (`(N, C) input`), or after the word "shape" (`Tensor of shape (N, C)`,
/// `shape (N, C)`, `shape: `[B, T]``).
fn shape_in(written: &str) -> Option<(StatedShape, usize, usize, super::comment::Style)> {
    let rest = written.trim_start();
    let after = match strip_markup(rest) {
        r if r.starts_with(['(', '[']) => r,
        _ => {
            let lower = rest.to_ascii_lowercase();
            let at = lower.find("shape")?;
            let mut r = &rest[at + "shape".len()..];
            r = r.trim_start_matches(|c: char| c == ':' || c == '=' || c.is_whitespace());
            r = r.strip_prefix("of").unwrap_or(r).trim_start();
            strip_markup(r)
        }
    };
    let open = after.chars().next()?;
    let (close, style) = match open {
        '(' => (')', super::comment::Style::Paren),
        '[' => (']', super::comment::Style::Bracket),
        _ => return None,
    };
    let at = after.as_ptr() as usize - written.as_ptr() as usize;
    let end = matching(after, open, close)?;
    let inner = latex_names(&after[1..end]);
    let mut dims = Vec::new();
    for item in split_top(&inner, ',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        dims.push(match item {
            "*" | "..." => StatedDim::Many(None),
            _ => parse_dim(item)?,
        });
    }
    if dims.is_empty() {
        return None;
    }
    let shape = StatedShape::new(dims);
    shape.valid().then_some((shape, at, end + 1, style))
}

/// Backticks and `:math:` before a shape.
fn strip_markup(text: &str) -> &str {
    let text = text.strip_prefix(":math:").unwrap_or(text);
    text.trim_start_matches('`')
}

/// Where the bracket opening `text` closes.
fn matching(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// LaTeX dims as names: `C_{in}` → `C_in`, `\text{batch}` → `batch`,
/// `\times` → `*`, `\ldots` → `...`.
fn latex_names(text: &str) -> String {
    let mut s = text.to_string();
    for (from, to) in [
        ("\\text", ""),
        ("\\mathrm", ""),
        ("\\mathbf", ""),
        ("\\_", "_"),
        ("\\times", "*"),
        ("\\ldots", "..."),
        ("\\dots", "..."),
        ("\\cdots", "..."),
        ("{", ""),
        ("}", ""),
    ] {
        s = s.replace(from, to);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(doc: &str) -> Vec<String> {
        read(doc)
            .into_iter()
            .map(|e| format!("{} {} @{}", e.label, e.shape, &doc[e.span]))
            .collect()
    }

    #[test]
    fn google_numpy_and_torch() {
        assert_eq!(
            shown("Args:\n    x (Tensor): (N, C, H, W) input images.\n    scale (float): factor."),
            vec!["x [N, C, H, W] @(N, C, H, W)"]
        );
        assert_eq!(
            shown("Args:\n    x (torch.Tensor): input of shape `(B, T)`."),
            vec!["x [B, T] @(B, T)"]
        );
        assert_eq!(
            shown("Parameters\n----------\nx : Tensor, shape (N, C)\n    The input.\n"),
            vec!["x [N, C] @(N, C)"]
        );
        assert_eq!(
            shown("Parameters\n----------\nx : torch.Tensor of shape (N, C)\n"),
            vec!["x [N, C] @(N, C)"]
        );
        assert_eq!(
            shown(
                "Shape:\n    - Input: :math:`(N, C_{in}, H, W)`\n    - Output: :math:`(N, *, H_{out})`"
            ),
            vec![
                "Input [N, C_in, H, W] @(N, C_{in}, H, W)",
                "Output [N, ..., H_out] @(N, *, H_{out})"
            ]
        );
        assert!(shown("Returns the sum (of everything).\nx: the input (a tensor)").is_empty());
    }
}
