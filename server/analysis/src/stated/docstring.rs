//! Shapes stated in docstrings: Google, NumPy and torch's own `Shape:` sections.
//!
//! - Google: `x (Tensor): (N, C, H, W) input` or `x (Tensor): input of shape (B, T)`.
//! - NumPy: `x : Tensor, shape (N, C)` or `x : torch.Tensor of shape (N, C)`.
//! - torch: a `Shape:` section with `- Input: :math:`(N, C_{in}, H, W)``,
//!   whose LaTeX subscripts become names (`C_in`).
//! - Sphinx, as OpenAI's diffusion code writes it: `:param x: an [N x C x
//!   ...] Tensor of inputs.`, `:return: an [N x C x ...] Tensor`, and `a 1-D
//!   batch of timesteps` (one dim, the batch `N`).
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
    /// How the shape is written, for a fix that rewrites it alike: `(`
    /// or `[`, or ` x ` between sizes; `None` for words (`a 1-D batch`).
    pub(crate) style: Option<super::comment::Style>,
}

/// The label of what a `Returns:` section (or a `Shape:` section's
/// `Output:`) states: no parameter can be called `return`.
pub(crate) const RETURN_LABEL: &str = "return";

/// The section of a docstring a line is in, as far as shapes go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Parameters, or anything else: entries are labelled by their names.
    Other,
    /// torch's `Shape:`: `- Input:` and `- Output:` entries.
    Shape,
    /// `Returns:` (Google) or `Returns` over dashes (NumPy): the first
    /// line that states a shape states the return's.
    Returns,
}

/// The section a header line opens, if it is one: Google's `Args:`,
/// NumPy's `Returns` (its dashes are skipped as they come).
fn header(line: &str) -> Option<Section> {
    let word = line.strip_suffix(':').unwrap_or(line).trim();
    match word {
        "Shape" | "Shapes" => Some(Section::Shape),
        "Returns" | "Return" => Some(Section::Returns),
        "Args" | "Arguments" | "Parameters" | "Params" | "Keyword Args" | "Keyword Arguments"
        | "Raises" | "Yields" | "Example" | "Examples" | "Note" | "Notes" | "Attributes"
        | "References" | "See Also" | "Warning" | "Warnings" | "Todo" | "Other Parameters" => {
            Some(Section::Other)
        }
        _ => None,
    }
}

/// Every shape a docstring states, in order. A return's shape is
/// labelled `RETURN_LABEL`; a `Returns:` section that states more than one
/// shape (a tuple's parts) states none for the return as a whole.
pub(crate) fn read(doc: &str) -> Vec<DocEntry> {
    let mut out = Vec::new();
    let mut section = Section::Other;
    let mut returns = 0;
    for full in doc.split_inclusive('\n') {
        let offset = full.as_ptr() as usize - doc.as_ptr() as usize;
        let line = full.trim();
        if line.is_empty() || line.chars().all(|c| c == '-') {
            continue;
        }
        if let Some(next) = header(line) {
            section = next;
            continue;
        }
        let entry = line.strip_prefix("- ").or_else(|| line.strip_prefix("* "));
        if section == Section::Shape && entry.is_none() && line.ends_with(':') {
            section = Section::Other;
        }
        let sphinx = sphinx_field(line);
        // Outside a `Shape:` section, only a tensor's entry states a shape
        // (`scale (float): [0, 1]` is a range); a Sphinx field says so in
        // its words (`a 1-D batch`).
        if sphinx.is_none()
            && !(section == Section::Shape || line.contains("ensor") || line.contains("rray"))
        {
            continue;
        }
        let found = match sphinx {
            Some((label, rest)) => sphinx_shape(rest).map(|found| (label, rest, found)),
            None => {
                let line = entry.unwrap_or(line);
                let found = if section == Section::Returns {
                    // `Tensor: (N, L) pooled.`, `out : Tensor, shape (N, L)`,
                    // `torch.Tensor of shape (N, L)`.
                    let after_colon = line.split_once(':').map(|(_, rest)| rest);
                    after_colon
                        .and_then(shape_in)
                        .map(|found| (after_colon.unwrap_or(line), found))
                        .or_else(|| shape_in(line).map(|found| (line, found)))
                        .map(|(rest, found)| (RETURN_LABEL.to_string(), rest, found))
                } else {
                    label_and_rest(line).and_then(|(label, rest)| {
                        let label = match (section, label.as_str()) {
                            (Section::Shape, "Output") => RETURN_LABEL.to_string(),
                            _ => label,
                        };
                        shape_in(rest).map(|found| (label, rest, found))
                    })
                };
                found.map(|(label, rest, (shape, at, len, style))| {
                    (label, rest, (shape, at, len, Some(style)))
                })
            }
        };
        if let Some((label, rest, (shape, at, len, style))) = found {
            let start = rest.as_ptr() as usize - doc.as_ptr() as usize + at;
            debug_assert!(start >= offset);
            if label == RETURN_LABEL {
                returns += 1;
            }
            out.push(DocEntry {
                label,
                shape,
                span: start..start + len,
                style,
            });
        }
    }
    if returns > 1 {
        out.retain(|e| e.label != RETURN_LABEL);
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

/// `:param x: rest` (or `:param Tensor x: rest`) → `x` and rest;
/// `:return: rest` (or `:returns:`) → the return's label and rest.
fn sphinx_field(line: &str) -> Option<(String, &str)> {
    let field = line.strip_prefix(':')?;
    let (head, rest) = field.split_once(':')?;
    let mut words = head.split_whitespace();
    let label = match words.next()? {
        "param" | "parameter" | "arg" | "argument" => words.last()?.to_string(),
        "return" | "returns" if words.next().is_none() => RETURN_LABEL.to_string(),
        _ => return None,
    };
    crate::interp::is_identifier(&label).then_some((label, rest))
}

/// The shape a Sphinx field's description states, where its words open
/// with it (`an [N x C x ...] Tensor`, dims split by ` x `), or `a 1-D
/// batch`: one dim, the batch, `N`. With where it is written (the sizes
/// inside the brackets, which a fix rewrites alike), its length and style.
fn sphinx_shape(rest: &str) -> Option<SphinxShape> {
    let words = rest.trim_start();
    let after_article = ["an ", "a ", "the "]
        .iter()
        .find_map(|a| words.strip_prefix(a))
        .unwrap_or(words)
        .trim_start();
    let at = after_article.as_ptr() as usize - rest.as_ptr() as usize;
    if let Some(batch) = after_article
        .strip_prefix("1-D batch")
        .or_else(|| after_article.strip_prefix("1D batch"))
    {
        let len = after_article.len() - batch.len();
        let shape = StatedShape::new(vec![StatedDim::Name("N".to_string())]);
        return Some((shape, at, len, None));
    }
    // `a 1-D Tensor of N indices`: one dim, of the size the capital names.
    for prefix in [
        "1-D Tensor of ",
        "1-D tensor of ",
        "1D Tensor of ",
        "1D tensor of ",
    ] {
        let Some(tail) = after_article.strip_prefix(prefix) else {
            continue;
        };
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let capitals = name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if capitals {
            let len = prefix.len() + name.len();
            let shape = StatedShape::new(vec![StatedDim::Name(name)]);
            return Some((shape, at, len, None));
        }
    }
    if !after_article.starts_with('[') {
        return None;
    }
    let end = matching(after_article, '[', ']')?;
    let mut dims = Vec::new();
    for item in after_article[1..end].split(" x ") {
        dims.push(match item.trim() {
            "..." => StatedDim::Many(None),
            item => parse_dim(item)?,
        });
    }
    let shape = StatedShape::new(dims);
    let style = Some(super::comment::Style::Times(" x "));
    shape.valid().then_some((shape, at + 1, end - 1, style))
}

/// A Sphinx field's shape, where it is written, its length and style.
type SphinxShape = (StatedShape, usize, usize, Option<super::comment::Style>);

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
        // `(torch.Tensor)`, `(Tensor, optional)`: Google's type of an
        // entry, not a shape.
        if names_a_type(item) {
            return None;
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

/// Whether a parenthesised item names a type (`torch.Tensor`,
/// `np.ndarray`, `optional`) rather than a size.
fn names_a_type(item: &str) -> bool {
    let last = item.rsplit('.').next().unwrap_or(item);
    last.ends_with("Tensor")
        || matches!(
            last,
            "ndarray"
                | "int"
                | "float"
                | "bool"
                | "str"
                | "list"
                | "tuple"
                | "dict"
                | "optional"
                | "Optional"
        )
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
                "return [N, ..., H_out] @(N, *, H_{out})"
            ]
        );
        assert!(shown("Returns the sum (of everything).\nx: the input (a tensor)").is_empty());
        assert!(
            shown("Returns:\n  (torch.Tensor): Batched masks in BxCxHxW format, where (H, W)\n")
                .is_empty()
        );
    }

    #[test]
    fn sphinx_fields() {
        assert_eq!(
            shown(
                "Apply the block.\n\n:param x: an [N x C x ...] Tensor of features.\n\
                 :param emb: an [N x emb_channels] Tensor of embeddings.\n\
                 :param timesteps: a 1-D batch of timesteps.\n\
                 :param y: an [N] Tensor of labels, if class-conditional.\n\
                 :param use_conv: a bool determining if a convolution is applied.\n\
                 :return: an [N x C x ...] Tensor of outputs.\n"
            ),
            vec![
                "x [N, C, ...] @N x C x ...",
                "emb [N, emb_channels] @N x emb_channels",
                "timesteps [N] @1-D batch",
                "y [N] @N",
                "return [N, C, ...] @N x C x ...",
            ]
        );
        // Words about a shape, not a shape.
        assert!(shown(":param dims: determines if the signal is 1D, 2D, or 3D.\n").is_empty());
        assert!(shown(":param x: a list of [N x C] Tensors.\n").is_empty());
        // A 1-D tensor of a size a capital names, and of something else.
        assert_eq!(
            shown(":param timesteps: a 1-D Tensor of N indices, one per batch element.\n"),
            vec!["timesteps [N] @1-D Tensor of N"]
        );
        assert!(shown(":param idx: a 1-D Tensor of indices.\n").is_empty());
    }

    #[test]
    fn returns_sections() {
        assert_eq!(
            shown(
                "Args:\n    x (Tensor): (N, C, L) input.\n\nReturns:\n    Tensor: (N, L) pooled.\n"
            ),
            vec!["x [N, C, L] @(N, C, L)", "return [N, L] @(N, L)"]
        );
        assert_eq!(
            shown("Returns:\n    torch.Tensor of shape (B, T)\n"),
            vec!["return [B, T] @(B, T)"]
        );
        assert_eq!(
            shown("Returns\n-------\nout : Tensor, shape (N, D)\n    The rows.\n"),
            vec!["return [N, D] @(N, D)"]
        );
        // A tuple's parts: no shape for the return as a whole.
        assert!(shown("Returns:\n    Tensor: (B, V) logits.\n    Tensor: (B,) loss.\n").is_empty());
        // Prose and a parameter after the section are not the return.
        assert!(shown("Returns:\n    The sum (of everything).\n").is_empty());
        assert_eq!(
            shown("Returns:\n    the pooled rows.\nArgs:\n    x (Tensor): (N, D) rows.\n"),
            vec!["x [N, D] @(N, D)"]
        );
    }
}
