//! Shape comments checked as claims: a comment on an assignment that the inference contradicts.
//!
//! This runs on the finished bindings, where every context a function ran
//! in is merged: a comment is checked against what the line binds in
//! general, not against one call. A comment is documentation, so the names
//! in it are the author's words for sizes; only what cannot be a renaming
//! contradicts the inference: another rank, another fixed size, one name for
//! two different known sizes, or the code's own name for a size written at
//! the place of another (`# y: (N, D)` where `y` is `[D, N]`). Each warning
//! carries a fix that rewrites the comment in its own notation.

use rustc_hash::FxHashMap;

use super::comment::{self, CommentClaim, comment_start};
use super::{DimExpr, StatedDim, StatedShape};
use crate::carry::TextReads;
use crate::code::Code;
use crate::report::{Binding, BindingKind, Diagnostic, DimView, Fix, Related, Severity};

/// Why an inferred shape is not the stated one, if it is not.
pub(crate) fn contradiction(claim: &StatedShape, inferred: &[DimView]) -> Option<String> {
    contradiction_in(claim, inferred, true, &|_| false)
}

/// `contradiction`; without `fixed_sizes`, a size the comment writes as a
/// number is not compared with a known one: inside a function, a known
/// size may be one call's (`# [n, 256, C]` in a model its one caller
/// builds with 4 levels), and the comment the function's in general.
/// A name `made_up` says the analysis made up (`N` of an input nobody
/// sized) is no name of the code's: a comment's `N` elsewhere does not
/// contradict it.
fn contradiction_in(
    claim: &StatedShape,
    inferred: &[DimView],
    fixed_sizes: bool,
    made_up: &dyn Fn(&str) -> bool,
) -> Option<String> {
    if inferred.iter().any(|d| matches!(d, DimView::Variadic(_))) {
        return None;
    }
    let fixed: Vec<&StatedDim> = claim
        .dims
        .iter()
        .filter(|d| !matches!(d, StatedDim::Many(_)))
        .collect();
    let pairs: Vec<(usize, &StatedDim, &DimView)> = match claim.many_at() {
        Some(at) => {
            if fixed.len() > inferred.len() {
                return Some(format!(
                    "it has {}, not at least {}",
                    crate::interp::dims_word(inferred.len()),
                    fixed.len()
                ));
            }
            let tail = claim.dims.len() - at - 1;
            let mut pairs: Vec<(usize, &StatedDim, &DimView)> =
                (0..at).map(|i| (i, &claim.dims[i], &inferred[i])).collect();
            for k in 0..tail {
                let i = inferred.len() - tail + k;
                pairs.push((i, &claim.dims[at + 1 + k], &inferred[i]));
            }
            pairs
        }
        None => {
            if claim.dims.len() != inferred.len() {
                return Some(format!(
                    "it has {}, not {}",
                    crate::interp::dims_word(inferred.len()),
                    claim.dims.len()
                ));
            }
            claim
                .dims
                .iter()
                .zip(inferred)
                .enumerate()
                .map(|(i, (c, d))| (i, c, d))
                .collect()
        }
    };
    let mut sizes: FxHashMap<&str, i64> = FxHashMap::default();
    for &(i, stated, dim) in &pairs {
        if !fixed_sizes && matches!(stated, StatedDim::Size(_) | StatedDim::Expr(_)) {
            continue;
        }
        if let Some(why) = dim_contradiction(i, stated, dim, &pairs, &mut sizes, made_up) {
            return Some(why);
        }
    }
    None
}

/// Why dim `i` is not `stated`, given what the other dims bound.
fn dim_contradiction<'a>(
    i: usize,
    stated: &'a StatedDim,
    dim: &DimView,
    pairs: &[(usize, &'a StatedDim, &DimView)],
    sizes: &mut FxHashMap<&'a str, i64>,
    made_up: &dyn Fn(&str) -> bool,
) -> Option<String> {
    match (stated, dim) {
        (StatedDim::Broadcast(_), DimView::Known(1)) => None,
        (StatedDim::Broadcast(inner), _) => dim_contradiction(i, inner, dim, pairs, sizes, made_up),
        (StatedDim::Size(n), DimView::Known(m)) if n != m => {
            Some(format!("dim {i} is {m}, not {n}"))
        }
        (StatedDim::Name(name), DimView::Known(m)) => match sizes.get(name.as_str()) {
            Some(earlier) if earlier != m => Some(format!(
                "`{name}` would be both {earlier} and {m} (dim {i})"
            )),
            _ => {
                sizes.insert(name, *m);
                None
            }
        },
        (StatedDim::Name(name), DimView::Symbol(s)) if s != name && !made_up(name) => {
            // The code's own name for another dim written here: the dims
            // are not where the comment says.
            let elsewhere = pairs.iter().find(|(j, c, d)| {
                *j != i
                    && matches!(d, DimView::Symbol(t) if t == name)
                    && !matches!(c, StatedDim::Name(n) if n == name)
            });
            elsewhere.map(|(j, _, _)| format!("dim {i} is `{s}`; `{name}` is dim {j}"))
        }
        (StatedDim::Expr(e), DimView::Known(m)) => match eval(e, sizes) {
            Some(v) if v != *m => Some(format!("dim {i} is {m}, not {e} = {v}")),
            _ => None,
        },
        _ => None,
    }
}

/// The value of an expression over sizes already bound, if they all are.
fn eval(e: &DimExpr, sizes: &FxHashMap<&str, i64>) -> Option<i64> {
    Some(match e {
        DimExpr::Int(n) => *n,
        DimExpr::Name(n) => *sizes.get(n.as_str())?,
        DimExpr::Add(a, b) => eval(a, sizes)?.checked_add(eval(b, sizes)?)?,
        DimExpr::Sub(a, b) => eval(a, sizes)?.checked_sub(eval(b, sizes)?)?,
        DimExpr::Mul(a, b) => eval(a, sizes)?.checked_mul(eval(b, sizes)?)?,
        DimExpr::FloorDiv(a, b) => {
            let d = eval(b, sizes)?;
            (d != 0).then_some(())?;
            shapels_shapes::floor_div_i64(eval(a, sizes)?, d)
        }
    })
}

/// The dims a rewritten comment states: the inferred ones, in the
/// comment's words where they still hold (a name the author gave a size
/// that is at the same place and not contradicted stays).
pub(crate) fn rewritten_dims(claim: &StatedShape, inferred: &[DimView]) -> Vec<String> {
    let labels: Vec<String> = inferred.iter().map(DimView::label).collect();
    if claim.many_at().is_some() || claim.dims.len() != inferred.len() {
        return labels;
    }
    let mut out = Vec::new();
    for (i, (stated, dim)) in claim.dims.iter().zip(inferred).enumerate() {
        let alone = StatedShape::new(vec![stated.clone()]);
        let keeps = matches!(stated, StatedDim::Name(_) | StatedDim::Expr(_))
            && contradiction(&alone, std::slice::from_ref(dim)).is_none()
            && !names_elsewhere(stated, i, inferred)
            && !matches!(dim, DimView::Symbol(s) if is_plain_name(s) && stated.to_string() != *s && claim_uses(claim, s));
        out.push(if keeps {
            stated.to_string()
        } else {
            labels[i].clone()
        });
    }
    out
}

/// Whether `stated` is a name the inference gives another dim.
fn names_elsewhere(stated: &StatedDim, i: usize, inferred: &[DimView]) -> bool {
    let StatedDim::Name(name) = stated else {
        return false;
    };
    inferred
        .iter()
        .enumerate()
        .any(|(j, d)| j != i && matches!(d, DimView::Symbol(s) if s == name))
}

fn is_plain_name(s: &str) -> bool {
    crate::interp::is_identifier(s)
}

fn claim_uses(claim: &StatedShape, name: &str) -> bool {
    claim
        .dims
        .iter()
        .any(|d| matches!(d, StatedDim::Name(n) if n == name))
}

/// Checks every shape comment on an assignment against what the line
/// binds, adding a `shape-comment` warning with a fix for each stale one,
/// and notes what was read of the comments so that editing one re-runs
/// the analysis.
pub(crate) fn check_comments(
    src: &str,
    functions: &[shapels_syntax::ast::TextRange],
    bindings: &mut [Binding],
    diagnostics: &mut Vec<Diagnostic>,
    reads: &mut TextReads,
    made_up: &dyn Fn(&str) -> bool,
) {
    let comments = comment_lines(src);
    reads.stated_comments(key_of(src, &comments));
    if comments.is_empty() {
        return;
    }
    let claim_at = |line_start: usize| {
        let i = comments.partition_point(|c| c.start < line_start);
        comments.get(i).filter(|c| c.start == line_start)
    };
    let mut by_line: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, b) in bindings.iter().enumerate() {
        if !matches!(b.kind, BindingKind::Assign | BindingKind::AugAssign)
            || b.range.end > src.len()
        {
            continue;
        }
        let line_start = src[..b.range.start].rfind('\n').map_or(0, |i| i + 1);
        match by_line.last_mut() {
            Some((start, group)) if *start == line_start => group.push(i),
            _ => by_line.push((line_start, vec![i])),
        }
    }
    let groups: FxHashMap<usize, Vec<usize>> = by_line.iter().cloned().collect();
    for (line_start, group) in by_line {
        let above = line_above(src, line_start)
            .and_then(|(start, _)| claim_at(start))
            // A comment between two assignments that agrees with the one
            // above it describes that one (`x = self.avgpool(x)`, then `# N
            // x 1024 x 1 x 1`, then `x = torch.flatten(x, 1)`, as
            // torchvision writes): it says nothing of the line below.
            .filter(|comment| !describes_line_above(src, comment, &groups, bindings, made_up));
        for comment in [claim_at(line_start), above].into_iter().flatten() {
            let claim = &comment.claim;
            let targets = claim_targets(claim, &group, bindings);
            if targets.is_empty() {
                continue;
            }
            for i in targets {
                let binding = &bindings[i];
                let in_function = functions
                    .iter()
                    .any(|f| f.start <= binding.range.start && binding.range.end <= f.end);
                if !check_one(
                    src,
                    comment.body_start,
                    claim,
                    binding,
                    !in_function,
                    diagnostics,
                    made_up,
                ) {
                    let names = comment_names(&claim.shape, binding);
                    bindings[i].tensor.notes.extend(names);
                }
            }
            // The trailing comment, when it is a shape, is the line's claim.
            break;
        }
    }
}

/// The bindings of a line's `group` a comment speaks of: the one binding,
/// or those its label names.
fn claim_targets(claim: &CommentClaim, group: &[usize], bindings: &[Binding]) -> Vec<usize> {
    match claim.label.as_deref() {
        Some("shape" | "shapes" | "size") | None if group.len() == 1 => group.to_vec(),
        Some(label) => group
            .iter()
            .copied()
            .filter(|i| bindings[*i].name == label)
            .collect(),
        None => Vec::new(),
    }
}

/// Whether the code line right above a comment-only line binds what the
/// comment states, without contradiction.
fn describes_line_above(
    src: &str,
    comment: &CommentLine,
    groups: &FxHashMap<usize, Vec<usize>>,
    bindings: &[Binding],
    made_up: &dyn Fn(&str) -> bool,
) -> bool {
    if comment.start == 0 {
        return false;
    }
    let end = comment.start - 1;
    let start = src[..end].rfind('\n').map_or(0, |i| i + 1);
    let Some(group) = groups.get(&start) else {
        return false;
    };
    claim_targets(&comment.claim, group, bindings)
        .iter()
        .any(|&i| {
            bindings[i].tensor.shape.as_ref().is_some_and(|inferred| {
                contradiction_in(&comment.claim.shape, inferred, false, made_up).is_none()
            })
        })
}

/// What an agreeing comment calls the sizes the inference derives, for
/// hover: `# (B, nh, T, hs)` on `[B, n_head, T, C // n_head]` says
/// `hs` is `C // n_head`.
fn comment_names(claim: &StatedShape, binding: &Binding) -> Vec<String> {
    let Some(inferred) = &binding.tensor.shape else {
        return Vec::new();
    };
    if claim.dims.len() != inferred.len() || claim.many_at().is_some() {
        return Vec::new();
    }
    claim
        .dims
        .iter()
        .zip(inferred)
        .filter_map(|(stated, dim)| match (stated, dim) {
            (StatedDim::Name(n), DimView::Symbol(s)) if n != s => {
                Some(format!("the comment calls {s} `{n}`"))
            }
            (StatedDim::Name(n), DimView::Known(k)) => Some(format!("the comment calls {k} `{n}`")),
            _ => None,
        })
        .collect()
}

fn check_one(
    src: &str,
    comment_at: usize,
    claim: &CommentClaim,
    binding: &Binding,
    fixed_sizes: bool,
    diagnostics: &mut Vec<Diagnostic>,
    made_up: &dyn Fn(&str) -> bool,
) -> bool {
    let Some(inferred) = &binding.tensor.shape else {
        return false;
    };
    let Some(why) = contradiction_in(&claim.shape, inferred, fixed_sizes, made_up) else {
        return false;
    };
    let span = comment_at + claim.span.start..comment_at + claim.span.end;
    let written = &src[span.clone()];
    let actual = binding.tensor.shape_label();
    let rewritten = comment::render(claim.style, &rewritten_dims(&claim.shape, inferred));
    let origin = binding
        .tensor
        .op
        .as_deref()
        .map_or_else(String::new, |op| format!(" (from `{op}`)"));
    diagnostics.push(Diagnostic {
        range: span.clone().into(),
        severity: Severity::Warning,
        code: Code::ShapeComment,
        message: format!(
            "the comment says `{}` is {written}, but it is {actual}: {why}",
            binding.name
        ),
        related: vec![Related::here(
            binding.range,
            format!("`{}` is {actual} here{origin}", binding.name),
        )],
        fixes: vec![Fix {
            title: format!("Change the comment to {rewritten}"),
            edits: vec![(span.into(), rewritten)],
        }],
    });
    true
}

/// The comment-only line right above the line starting at `line_start`.
fn line_above(src: &str, line_start: usize) -> Option<(usize, usize)> {
    if line_start == 0 {
        return None;
    }
    let end = line_start - 1;
    let start = src[..end].rfind('\n').map_or(0, |i| i + 1);
    src[start..end]
        .trim_start()
        .starts_with('#')
        .then_some((start, end))
}

/// The shape comment of a line, with where its text starts.
fn trailing(src: &str, line: std::ops::Range<usize>) -> Option<(usize, CommentClaim)> {
    let text = &src[line.clone()];
    let hash = comment_start(text)?;
    let body_start = line.start + hash + 1;
    let body = &src[body_start..line.end];
    // A second `#` starts another comment (`# (B, T)  # noqa`).
    let body = body.split('#').next().unwrap_or(body);
    Some((body_start, comment::read(body)?))
}

/// A line whose comment states a shape.
struct CommentLine {
    /// Where the line starts and ends (before its newline).
    start: usize,
    end: usize,
    /// Where the comment's text starts.
    body_start: usize,
    claim: CommentClaim,
}

/// The lines of a file whose comment states a shape, in order. Found from
/// the file's `#` characters, not by walking every line: most lines hold
/// none, and this runs at every keystroke.
fn comment_lines(src: &str) -> Vec<CommentLine> {
    let mut out: Vec<CommentLine> = Vec::new();
    let mut line_done = None;
    for (at, _) in src.match_indices('#') {
        let start = src[..at].rfind('\n').map_or(0, |i| i + 1);
        if line_done == Some(start) {
            continue;
        }
        line_done = Some(start);
        let end = src[at..].find('\n').map_or(src.len(), |i| at + i);
        if let Some((body_start, claim)) = trailing(src, start..end) {
            out.push(CommentLine {
                start,
                end,
                body_start,
                claim,
            });
        }
    }
    out
}

/// What the comments of a file state, as the check reads them: equal keys
/// mean the same claims, each on a code line or on a comment line followed
/// by the same kind of line (a blank line between a comment and the code
/// below parts them).
pub(crate) fn comments_key(src: &str) -> String {
    key_of(src, &comment_lines(src))
}

fn key_of(src: &str, comments: &[CommentLine]) -> String {
    use std::fmt::Write;
    let mut key = String::new();
    for c in comments {
        let own_line = src[c.start..c.end].trim_start().starts_with('#');
        let next = src.get(c.end + 1..).map(|rest| {
            let line_end = rest.find('\n').unwrap_or(rest.len());
            &rest[..line_end]
        });
        let next_is_code =
            next.is_some_and(|next| !next.trim().is_empty() && !next.trim_start().starts_with('#'));
        let _ = write!(key, "{own_line} {next_is_code} {:?};", c.claim);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn views(dims: &[&str]) -> Vec<DimView> {
        dims.iter()
            .map(|d| match d.parse::<i64>() {
                Ok(n) => DimView::Known(n),
                Err(_) if *d == "?" => DimView::Unknown,
                Err(_) => DimView::Symbol(d.to_string()),
            })
            .collect()
    }

    fn claim(text: &str) -> StatedShape {
        comment::read(text).expect("a shape").shape
    }

    #[test]
    fn contradictions() {
        let c = |text: &str, dims: &[&str]| contradiction(&claim(text), &views(dims));
        assert_eq!(c("(N, D)", &["N", "D"]), None);
        assert!(c("(N, D)", &["D", "N"]).is_some());
        assert_eq!(
            c("(B, nh, T, hs)", &["B", "n_head", "T", "C // n_head"]),
            None
        );
        assert!(c("(B, T, C)", &["B", "T"]).is_some());
        assert!(c("(B, 3)", &["B", "5"]).is_some());
        assert_eq!(c("(B, T)", &["4", "5"]), None);
        assert!(c("(T, T)", &["4", "5"]).is_some());
        assert_eq!(c("(..., C)", &["4", "5", "C"]), None);
        assert!(c("(..., 3)", &["4", "5", "6"]).is_some());
        assert_eq!(c("(B, ?)", &["B", "?"]), None);
        assert!(c("(B, 2*T)", &["3", "5"]).is_none());
    }

    #[test]
    fn rewritten_keeps_the_names_that_hold() {
        let r = |text: &str, dims: &[&str]| rewritten_dims(&claim(text), &views(dims)).join(", ");
        assert_eq!(r("(N, D)", &["D", "N"]), "D, N");
        assert_eq!(r("(B, 3)", &["8", "5"]), "B, 5");
        assert_eq!(
            r("(B, nh, T, 7)", &["B", "n_head", "T", "8"]),
            "B, nh, T, 8"
        );
        assert_eq!(r("(B, T, C)", &["B", "T"]), "B, T");
    }
}
