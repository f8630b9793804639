//! What a call of a Tensor method needs before anything runs: the method
//! itself (`x.rsub(2)` is an `AttributeError`: `rsub` is a function of
//! `torch` only), and the parameters that have no default (`x.softmax()`,
//! `x.transpose(0)` are `TypeError`s from torch's argument parser).

use crate::value::{Kwargs, Value};

/// Functions of `torch` that `Tensor` has no method for, among those the
/// rule table knows (`hasattr(torch.Tensor, name)` is false in torch 2.15).
/// Names that other objects commonly have as methods (`concat`, `stack`,
/// `load`, `zeros`, `dropout`) are left out: an object the analysis takes
/// for a tensor (a made-up input named `tensor`) may be one of them.
const NOT_METHODS: &[&str] = &[
    "adaptive_avg_pool1d",
    "alpha_dropout",
    "avg_pool1d",
    "cdist",
    "celu",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "cumulative_trapezoid",
    "feature_alpha_dropout",
    "group_norm",
    "layer_norm",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "rms_norm",
    "rrelu",
    "rsub",
    "selu",
    "std_mean",
    "tensordot",
    "trapezoid",
    "trapz",
    "var_mean",
    "view_as_complex",
    "view_as_real",
];

/// torch's `AttributeError` for a method `Tensor` does not have.
pub(crate) fn not_a_method(name: &str) -> Option<String> {
    NOT_METHODS
        .contains(&name)
        .then(|| format!("'Tensor' object has no attribute '{name}'"))
}

/// Methods of one signature and the parameters after `self` it requires,
/// as torch's parser names them. Methods with several signatures (`movedim`,
/// `scatter`, `repeat_interleave`) answer with a list of them instead, and
/// are not here; nor are the names NumPy's arrays share (`transpose`,
/// `swapaxes`, `cumsum`, `cumprod`), which code written for both kinds of
/// array calls the NumPy way in a branch a tensor never takes
/// (`image.transpose(axes) if not is_torch else image.permute(*axes)` in
/// transformers' image transforms).
const REQUIRED: &[(&str, &[&str])] = &[
    ("softmax", &["dim"]),
    ("log_softmax", &["dim"]),
    ("cummax", &["dim"]),
    ("cummin", &["dim"]),
    ("logsumexp", &["dim"]),
    ("unsqueeze", &["dim"]),
    ("swapdims", &["dim0", "dim1"]),
    ("gather", &["dim", "index"]),
    ("index_select", &["dim", "index"]),
    ("select", &["dim", "index"]),
    ("chunk", &["chunks"]),
    ("roll", &["shifts"]),
    ("tile", &["dims"]),
    ("take_along_dim", &["indices"]),
    ("topk", &["k"]),
    ("kthvalue", &["k"]),
    ("unfold", &["dimension", "size", "step"]),
    ("index_add", &["dim", "index", "source"]),
    ("scatter_add", &["dim", "index", "src"]),
    ("renorm", &["p", "dim", "maxnorm"]),
];

/// Keywords these methods take besides their required parameters, and
/// NumPy's name for `dim`, which torch's parser also takes.
const OPTIONAL: &[&str] = &["dtype", "out", "keepdim", "largest", "sorted", "axis"];

/// Torch's message when the method `name`, given `positional` arguments
/// after `self` and `keywords`, leaves a required parameter out. The parser
/// lists every required parameter from the first one not given by position
/// (even those given by keyword), and says "arguments" for one and
/// "argument" for several. A keyword it might not know keeps it silent.
pub(crate) fn missing_required(
    name: &str,
    positional: &[Value],
    keywords: &Kwargs,
) -> Option<String> {
    let (_, required) = REQUIRED.iter().find(|(method, _)| *method == name)?;
    let given = |param: &str| {
        keywords
            .iter()
            .any(|(k, _)| &**k == param || (param == "dim" && &**k == "axis"))
    };
    if keywords
        .iter()
        .any(|(k, _)| !required.contains(&&**k) && !OPTIONAL.contains(&&**k))
    {
        return None;
    }
    let listed = required.get(positional.len()..)?;
    if listed.iter().all(|param| given(param)) {
        return None;
    }
    let names: Vec<String> = listed.iter().map(|p| format!("\"{p}\"")).collect();
    let noun = if listed.len() == 1 {
        "arguments"
    } else {
        "argument"
    };
    Some(format!(
        "{name}() missing {} required positional {noun}: {}",
        listed.len(),
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn lists_the_parameters_from_the_first_not_given_by_position() {
        let none: Kwargs = Vec::new();
        assert_eq!(
            missing_required("swapdims", &[Value::int(0)], &none).as_deref(),
            Some("swapdims() missing 1 required positional arguments: \"dim1\"")
        );
        assert_eq!(missing_required("transpose", &[], &none), None);
        let index: Kwargs = vec![(Rc::from("index"), Value::Unknown)];
        assert_eq!(
            missing_required("gather", &[], &index).as_deref(),
            Some("gather() missing 2 required positional argument: \"dim\", \"index\"")
        );
        let dim: Kwargs = vec![(Rc::from("dim"), Value::int(1))];
        assert_eq!(missing_required("softmax", &[], &dim), None);
        let axis: Kwargs = vec![(Rc::from("axis"), Value::int(1))];
        assert_eq!(missing_required("logsumexp", &[], &axis), None);
        let other: Kwargs = vec![(Rc::from("dims"), Value::int(1))];
        assert_eq!(missing_required("softmax", &[], &other), None);
        assert_eq!(missing_required("view", &[], &none), None);
    }
}
