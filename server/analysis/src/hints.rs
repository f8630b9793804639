//! Inlay hints that stay readable: which bindings get one, and how a long
//! shape is shortened to fit.
//!
//! A model's forward rebinds `x` line after line, most often to the shape
//! it already had (`x = F.relu(x)`), and a symbolic shape can run to
//! `[B, n_head, T, C // n_head]` and longer. The settings here drop the
//! hints that tell nothing new and cut the long ones down; the full shape
//! always stays in the hint's tooltip and on hover.

use std::collections::HashMap;

use crate::report::{
    Binding, BindingKind, DimView, FileAnalysis, HintDetail, InlayHint, TensorInfo, TextRange,
};

/// Which bindings get a hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HintMode {
    /// Every binding of a tensor.
    #[default]
    All,
    /// Function parameters only: the shapes a function is run with.
    Parameters,
    /// Parameters, and bindings whose shape differs both from the last
    /// shape of the same name and from the binding just before: where the
    /// shape of the data changes.
    Changes,
}

/// How inlay hints are chosen and drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HintOptions {
    pub detail: HintDetail,
    pub mode: HintMode,
    /// No hint for a binding whose shape is the one the same name had at
    /// its previous binding (`x = F.relu(x)`).
    pub hide_repeats: bool,
    /// The longest label, in characters; longer ones are abbreviated (`0`:
    /// no limit).
    pub max_length: usize,
}

/// The inlay hints of the bindings whose hint places are inside `range`
/// (all when `None`), chosen and drawn as `options` say.
///
/// A tensor whose rank is unknown gets no hint: an empty `[...]` after every
/// name would be noise; hover still tells what is known.
pub fn inlay_hints_with(
    analysis: &FileAnalysis,
    range: Option<TextRange>,
    options: &HintOptions,
) -> Vec<InlayHint> {
    let mut ordered: Vec<&Binding> = analysis
        .bindings
        .iter()
        .filter(|b| b.tensor.shape.is_some())
        // `_` says the code does not care what it holds.
        .filter(|b| b.name != "_")
        .collect();
    ordered.sort_by_key(|b| b.hint_at);
    // What each binding follows is decided over the whole file, so that a
    // hint does not come and go with the range the editor asks for.
    let mut last_of_name: HashMap<&str, String> = HashMap::new();
    let mut last_any: Option<String> = None;
    let mut hints = Vec::new();
    for b in ordered {
        let shape = b.tensor.shape_label();
        let repeats = last_of_name.get(b.name.as_str()) == Some(&shape);
        let follows = last_any.as_ref() == Some(&shape);
        last_of_name.insert(&b.name, shape.clone());
        last_any = Some(shape);
        let is_param = b.kind == BindingKind::Param;
        let shown = match options.mode {
            HintMode::All => true,
            HintMode::Parameters => is_param,
            HintMode::Changes => is_param || !(repeats || follows),
        } && !(options.hide_repeats && repeats && !is_param);
        let in_range = range
            .as_ref()
            .is_none_or(|r| r.start <= b.hint_at && b.hint_at <= r.end);
        if shown && in_range {
            hints.push(hint(b, options));
        }
    }
    hints.sort_by_key(|h| h.offset);
    hints.dedup_by_key(|h| h.offset);
    hints
}

/// The hint of one binding.
fn hint(b: &Binding, options: &HintOptions) -> InlayHint {
    // After an annotation the shape follows it; after a bare name it reads
    // like one.
    let lead = if b.hint_at == b.range.end { ": " } else { " " };
    let extras: Vec<&str> = match options.detail {
        HintDetail::Full => [&b.tensor.dtype, &b.tensor.device]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect(),
        HintDetail::Shape => Vec::new(),
    };
    let full = label(lead, &b.tensor.shape_label(), &extras);
    let limit = options.max_length;
    if limit == 0 || full.chars().count() <= limit {
        return InlayHint {
            offset: b.hint_at,
            label: full,
            tooltip: b.tensor.summary(),
        };
    }
    InlayHint {
        offset: b.hint_at,
        label: abbreviated(lead, &b.tensor, &extras, limit),
        // What was cut is in the tooltip, whole.
        tooltip: format!("{}\n{}", b.tensor.shape_label(), b.tensor.summary()),
    }
}

fn label(lead: &str, shape: &str, extras: &[&str]) -> String {
    let mut out = format!("{lead}{shape}");
    for extra in extras {
        out.push(' ');
        out.push_str(extra);
    }
    out
}

/// A label of at most `limit` characters where that can be done: the dtype
/// and device go first, then the longest expressions become `…` one by
/// one, then the middle dims fold into one `…`, keeping the first and the
/// last, then any dim goes; a shape that still does not fit is `[…]` with
/// its rank (`[…×5]`).
fn abbreviated(lead: &str, tensor: &TensorInfo, extras: &[&str], limit: usize) -> String {
    let fits = |s: &str| s.chars().count() <= limit;
    let Some(dims) = &tensor.shape else {
        return format!("{lead}[…]");
    };
    let mut parts: Vec<String> = dims.iter().map(DimView::label).collect();
    let bracket = |parts: &[String]| format!("[{}]", parts.join(", "));
    // The dtype and device are dropped whole rather than cut.
    for kept in (0..extras.len()).rev() {
        let candidate = label(lead, &bracket(&parts), &extras[..kept]);
        if fits(&candidate) {
            return candidate;
        }
    }
    // Expressions first, the longest first: `C // n_head` says less per
    // character than `B` or `256`; then the middle dims fold into one `…`;
    // then any dim goes.
    let shorten = |parts: &mut Vec<String>, longer_than: usize| {
        let longest = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.chars().count() > longer_than)
            .max_by_key(|(i, p)| (p.chars().count(), std::cmp::Reverse(*i)))
            .map(|(i, _)| i);
        if let Some(i) = longest {
            parts[i] = "…".into();
        }
        longest.is_some()
    };
    loop {
        let candidate = label(lead, &bracket(&parts), &[]);
        if fits(&candidate) {
            return candidate;
        }
        if !shorten(&mut parts, 3) {
            break;
        }
    }
    if parts.len() > 3 {
        parts = vec![
            parts[0].clone(),
            "…".to_string(),
            parts[parts.len() - 1].clone(),
        ];
    }
    loop {
        let candidate = label(lead, &bracket(&parts), &[]);
        if fits(&candidate) {
            return candidate;
        }
        if !shorten(&mut parts, 1) {
            break;
        }
    }
    format!("{lead}[…×{}]", dims.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Origin;

    fn tensor(dims: &[&str]) -> TensorInfo {
        TensorInfo {
            shape: Some(
                dims.iter()
                    .map(|d| match d.parse::<i64>() {
                        Ok(n) => DimView::Known(n),
                        Err(_) => DimView::Symbol(d.to_string()),
                    })
                    .collect(),
            ),
            dtype: Some("float32".into()),
            device: Some("cpu".into()),
            origin: Origin::Fake,
            op: None,
            example: None,
            guards: Vec::new(),
            guard_sites: Vec::new(),
            chain: Vec::new(),
            notes: Vec::new(),
            called_from: Vec::new(),
        }
    }

    #[test]
    fn long_dims_go_first_then_the_middle() {
        let t = tensor(&["B", "n_head", "T", "C // n_head"]);
        assert_eq!(
            abbreviated(": ", &t, &[], 22),
            ": [B, n_head, T, …]",
            "the longest dim goes first"
        );
        assert_eq!(abbreviated(": ", &t, &[], 16), ": [B, …, T, …]");
        let wide = tensor(&["B", "T", "H", "W", "C", "D"]);
        assert_eq!(abbreviated(": ", &wide, &[], 12), ": [B, …, D]");
        assert_eq!(abbreviated(": ", &wide, &[], 8), ": […×6]");
        // Sizes are kept over the middle dims.
        let heads = tensor(&["B", "4", "T", "16"]);
        assert_eq!(abbreviated(": ", &heads, &[], 12), ": [B, …, 16]");
        assert_eq!(
            abbreviated(": ", &tensor(&["B", "T", "256"]), &[], 12),
            ": [B, T, …]"
        );
    }

    #[test]
    fn dtype_and_device_are_dropped_whole() {
        let t = tensor(&["8", "128"]);
        assert_eq!(
            abbreviated(": ", &t, &["float32", "cpu"], 21),
            ": [8, 128] float32"
        );
        assert_eq!(abbreviated(": ", &t, &["float32", "cpu"], 12), ": [8, 128]");
    }
}
