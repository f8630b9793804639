//! Quick-fix proposals: the edits that would make a diagnostic go away, made
//! by the rule that finds the problem, from the places the code was written.
//!
//! A rule offers a fix (`Meta::offer_fix`) just before it reports; the
//! report of the same code takes it (`Meta::take_fixes`, called by the
//! interpreter's `report_as`). Every fix is a proposal: the language server applies it, re-analyses and offers only
//! those after which the diagnostic is gone, so a fix here may be wrong in a
//! corner case but must never be unsafe to propose.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{Arg, Expr, ExprKind, TextRange};

use crate::code::Code;
use crate::report::Fix;
use crate::rules::meta::Meta;
use crate::rules::nn::{Forward, LayerDef};
use crate::value::{Layer, Value};

/// Where the parts of one call were written: the call, the method name of
/// `x.view(...)`, and each argument. Kept by layers (their construction),
/// and by the interpreter for the call being made (`Meta::written_call`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrittenCall {
    pub call: TextRange,
    /// What is called: `self.fc` of `self.fc(x)`.
    pub callee: TextRange,
    /// The attribute called, when the callee is one (`view` of `x.view(..)`).
    pub method: Option<TextRange>,
    pub pos: Vec<TextRange>,
    pub kw: Vec<(Rc<str>, TextRange)>,
}

impl WrittenCall {
    /// The call's parts; `None` when an argument is unpacked (`*sizes`,
    /// `**kwargs`), which leaves no argument at a place of its own.
    pub(crate) fn of(call: &Expr, func: &Expr, args: &[Arg]) -> Option<WrittenCall> {
        let mut pos = Vec::new();
        let mut kw = Vec::new();
        for arg in args {
            match arg {
                Arg::Positional(e) => pos.push(e.range),
                Arg::Keyword(name, e) => kw.push((Rc::from(name.id.as_str()), e.range)),
                Arg::Starred(_) | Arg::DoubleStarred(_) => return None,
            }
        }
        let method = match &func.kind {
            ExprKind::Attribute { attr, .. } => Some(attr.range),
            _ => None,
        };
        Some(WrittenCall {
            call: call.range,
            callee: func.range,
            method,
            pos,
            kw,
        })
    }

    /// Where the keyword argument `name`, else the positional one at
    /// `index`, was written.
    pub(crate) fn arg(&self, index: usize, name: &str) -> Option<&TextRange> {
        self.kw
            .iter()
            .find(|(k, _)| &**k == name)
            .map(|(_, r)| r)
            .or_else(|| self.pos.get(index))
    }

    /// Where the argument for a layer constructor's parameter was written.
    pub(crate) fn setting(&self, def: &LayerDef, name: &str) -> Option<&TextRange> {
        def.argument(name, &self.pos, &self.kw)
    }
}

/// The constructor argument of a layer that must equal a size of its input
/// (`in_features` of a Linear, `in_channels` of a Conv, ...), set to the
/// size `input` has, when the two are known to differ: the fix for the
/// diagnostic its forward reports, under the code it returns.
pub(crate) fn layer_size_fix(
    meta: &mut dyn Meta,
    layer: &Layer,
    input: &Value,
) -> Option<(Code, Fix)> {
    let written = layer.written.clone()?;
    let Value::Tensor(x) = input else {
        return None;
    };
    let dims = meta.dims(x)?;
    let kind = &*layer.kind;
    let def = layer.def()?;
    let (code, name, actual): (Code, &str, Dim) = match def.forward {
        Forward::Linear => (Code::LinearShape, "in_features", dims.last()?.clone()),
        Forward::Conv if !kind.starts_with("ConvTranspose") => {
            let n = def.spatial;
            let channels = match dims.len() {
                l if l == n + 2 => &dims[1],
                l if l == n + 1 => &dims[0],
                _ => return None,
            };
            (Code::ConvInput, "in_channels", channels.clone())
        }
        Forward::BatchNorm if def.has_param("num_features") => {
            (Code::LayerInput, "num_features", dims.get(1)?.clone())
        }
        // Only a single normalized size: a tuple's fix is a tuple.
        Forward::LayerNorm if matches!(layer.setting("normalized_shape"), Some(Value::Int(_))) => {
            (Code::LayerInput, "normalized_shape", dims.last()?.clone())
        }
        Forward::Rnn => (Code::LayerInput, "input_size", dims.last()?.clone()),
        _ => return None,
    };
    let expected = meta.as_dim(layer.setting(name)?)?;
    if !meta.env().known_different(&actual, &expected) {
        return None;
    }
    let text = meta.fmt_dim(&actual);
    let site = *written.setting(def, name)?;
    let src = meta.local_text(&site).map(|_| meta.src())?;
    if !is_size_expression(&text) || !names_written_before(src, site.start, &text) {
        return None;
    }
    Some((
        code,
        Fix {
            title: format!("Set `{name}` of the {kind} to {text}"),
            edits: vec![(site, text)],
        },
    ))
}

/// A layer called on an input on another device than its weight: the
/// input goes to the weight's device (`self.fc(x.to(self.fc.weight.device))`),
/// when the layer is called by a plain name and has a `weight`.
pub(crate) fn layer_device_fix(
    meta: &mut dyn Meta,
    layer: &Layer,
    input: Option<&Value>,
    call: &TextRange,
) -> Option<Fix> {
    let Some(Value::Tensor(x)) = input else {
        return None;
    };
    let has_weight = layer.def().is_some_and(|d| d.has_weight);
    let (Some(from), Some(to)) = (&x.device, &*layer.device.borrow()) else {
        return None;
    };
    if !has_weight || from == to {
        return None;
    }
    let written = meta.written_call(call)?;
    let input_at = *written.pos.first()?;
    let (Some(input), Some(callee)) =
        (meta.local_text(&input_at), meta.local_text(&written.callee))
    else {
        return None;
    };
    if !is_postfix(input) || !is_dotted_name(callee) {
        return None;
    }
    Some(Fix {
        title: format!("Move `{input}` to the device of `{callee}`"),
        edits: vec![(
            TextRange::new(input_at.end, input_at.end),
            format!(".to({callee}.weight.device)"),
        )],
    })
}

/// `view` of a tensor whose dims are not consecutive in memory: `reshape`
/// (copies only when it must), or `.contiguous()` before the `view`.
pub(crate) fn offer_view_fixes(meta: &mut dyn Meta, call: &TextRange) {
    let Some(written) = meta.written_call(call) else {
        return;
    };
    let Some(method) = written.method else {
        return;
    };
    if meta.local_text(&method) != Some("view") {
        return;
    }
    meta.offer_fix(
        Code::ViewStride,
        Fix {
            title: "Use `reshape` instead of `view`".into(),
            edits: vec![(method, "reshape".into())],
        },
    );
    meta.offer_fix(
        Code::ViewStride,
        Fix {
            title: "Make the tensor contiguous before `view`".into(),
            edits: vec![(
                TextRange::new(method.start, method.start),
                "contiguous().".into(),
            )],
        },
    );
}

/// Two operands of a binary operator on different devices: `moved` (at
/// `moved_at`) goes to the device of the operand written at `other_at`,
/// when that one is a plain name (`x`, `self.bias`).
pub(crate) fn offer_device_fix(meta: &mut dyn Meta, moved_at: &TextRange, other_at: &TextRange) {
    let (Some(moved), Some(other)) = (meta.local_text(moved_at), meta.local_text(other_at)) else {
        return;
    };
    if !is_postfix(moved) || !is_dotted_name(other) {
        return;
    }
    let fix = Fix {
        title: format!("Move `{moved}` to the device of `{other}`"),
        edits: vec![(
            TextRange::new(moved_at.end, moved_at.end),
            format!(".to({other}.device)"),
        )],
    };
    meta.offer_fix(Code::DeviceMismatch, fix);
}

/// A cross entropy over `(B, T, V)` logits with `(B, T)` targets: both
/// flattened over their leading dims, `logits.view(-1, V)` and
/// `targets.view(-1)`, as language models write it.
pub(crate) fn offer_flatten_loss_fix(
    meta: &mut dyn Meta,
    call: &TextRange,
    classes: &Dim,
    contiguous: (bool, bool),
) {
    let Some(written) = meta.written_call(call) else {
        return;
    };
    let (Some(input_at), Some(target_at)) = (
        written.arg(0, "input").cloned(),
        written.arg(1, "target").cloned(),
    ) else {
        return;
    };
    let (Some(input), Some(target)) = (meta.local_text(&input_at), meta.local_text(&target_at))
    else {
        return;
    };
    if !is_postfix(input) || !is_postfix(target) {
        return;
    }
    let classes = match meta.env().value(classes) {
        Some(n) => n.to_string(),
        None => format!("{input}.size(-1)"),
    };
    // `view` of a transposed tensor raises; `reshape` does what is meant.
    let flatten = |contiguous: bool| if contiguous { "view" } else { "reshape" };
    let fix = Fix {
        title: format!(
            "Flatten to `{input}.{}(-1, {classes})` and `{target}.{}(-1)`",
            flatten(contiguous.0),
            flatten(contiguous.1)
        ),
        edits: vec![
            (
                TextRange::new(input_at.end, input_at.end),
                format!(".{}(-1, {classes})", flatten(contiguous.0)),
            ),
            (
                TextRange::new(target_at.end, target_at.end),
                format!(".{}(-1)", flatten(contiguous.1)),
            ),
        ],
    };
    meta.offer_fix(Code::LossShape, fix);
}

/// A size as the analysis prints it that is also Python (`12544`,
/// `4*n_embd`), not a placeholder (`?`, `*batch`).
fn is_size_expression(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || "_.+-*/%() ".contains(c))
}

/// Whether every name in `expression` is written in the function that
/// holds `at` (or in the module before it) before `at`: a size in the
/// user's names is only a fix where those names exist.
fn names_written_before(src: &str, at: usize, expression: &str) -> bool {
    let before = &src[..at.min(src.len())];
    let start = before.rfind("def ").unwrap_or(0);
    let scope = &before[start..];
    let words: Vec<&str> = scope
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    expression
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_alphabetic() || c == '_'))
        .all(|w| words.contains(&w))
}

/// `x`, `self.w`, `f(x)[0]`: an expression a method can be called on as
/// written, without parentheses around it.
fn is_postfix(text: &str) -> bool {
    if !text.starts_with(|c: char| c.is_alphabetic() || c == '_') {
        return false;
    }
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            // Strings could hide brackets; a fix is not worth the risk.
            '"' | '\'' | '#' | '\n' => return false,
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == '.') => return false,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

/// `x`, `self.bias`: a name whose `.device` can be read as written.
fn is_dotted_name(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|part| {
            part.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postfix_expressions() {
        assert!(is_postfix("x"));
        assert!(is_postfix("self.fc(x)[0]"));
        assert!(is_postfix("f(a + b)"));
        assert!(!is_postfix("a + b"));
        assert!(!is_postfix("-x"));
        assert!(!is_postfix("f(')')"));
    }

    #[test]
    fn names_must_be_in_the_function() {
        let src = "def f(n_embd):\n    nn.Linear(3, 4)\n";
        let at = src.find("3,").unwrap();
        assert!(names_written_before(src, at, "4*n_embd"));
        assert!(!names_written_before(src, at, "4*d_model"));
        assert!(names_written_before(src, at, "12544"));
    }
}
