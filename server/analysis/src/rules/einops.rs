//! `torch.einsum` and einops (`rearrange`, `repeat`, `reduce`, `einsum`) with named axes.

use std::collections::HashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::ops::{check_inputs, out_known};
use super::shape::numel;
use crate::interp::Interp;
use crate::report::Severity;
use crate::value::{Tensor, Value};

/// `torch.einsum("bij,bjk->bik", a, b)` (operands may also come as one list).
pub(crate) fn einsum(interp: &mut Interp<'_>, args: &Args, range: TextRange) -> Value {
    let Some(eq) = args.str(0, "equation") else {
        return Value::Unknown;
    };
    let mut operands: Vec<Value> = args.pos[1..].to_vec();
    if let [single] = operands.as_slice()
        && let Some(items) = single.items()
    {
        operands = items;
    }
    let tensors: Vec<Rc<Tensor>> = operands
        .iter()
        .filter_map(|v| v.as_tensor().cloned())
        .collect();
    if tensors.len() != operands.len() || tensors.is_empty() {
        return Value::Unknown;
    }
    let Some(device) = check_inputs(interp, args, "einsum", range.clone()) else {
        return Value::Unknown;
    };
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let inputs: Vec<&str> = lhs.split(',').collect();
    if inputs.len() > tensors.len() {
        interp.report(
            range,
            Severity::Error,
            "einsum-shape",
            "einsum(): fewer operands were provided than specified in the equation".into(),
        );
        return Value::Unknown;
    }
    let mut sizes: HashMap<char, Dim> = HashMap::new();
    let mut counts: HashMap<char, usize> = HashMap::new();
    let mut ellipsis: Option<Vec<Dim>> = None;
    for (spec, t) in inputs.iter().zip(&tensors) {
        // The subscripts spell out the rank of an operand nobody knew the rank of.
        if !spec.contains("...") {
            let names: Vec<String> = spec.chars().map(|c| c.to_string()).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            interp.demand_rank(&t.shape, &names);
        }
    }
    for (i, (spec, t)) in inputs.iter().zip(&tensors).enumerate() {
        let Some(dims) = interp.dims(t) else {
            let shape = interp.fresh_rank_var();
            return Value::Tensor(Rc::new(interp.new_tensor(
                shape,
                t.dtype,
                device,
                "torch.einsum",
            )));
        };
        let has_ellipsis = spec.contains("...");
        let letters: Vec<char> = spec.replace("...", "").chars().collect();
        if (!has_ellipsis && letters.len() != dims.len())
            || (has_ellipsis && letters.len() > dims.len())
        {
            let message = format!(
                "einsum(): the number of subscripts in the equation ({}) does not match the number of dimensions ({}) for operand {i} and no ellipsis was given",
                letters.len(),
                dims.len()
            );
            interp.report(range, Severity::Error, "einsum-shape", message);
            return Value::Unknown;
        }
        let (before, after) = match spec.split_once("...") {
            Some((b, a)) => (b.chars().collect::<Vec<_>>(), a.chars().collect::<Vec<_>>()),
            None => (letters.clone(), Vec::new()),
        };
        let mut assign = |interp: &mut Interp<'_>, c: char, d: &Dim| -> bool {
            *counts.entry(c).or_insert(0) += 1;
            match sizes.get(&c) {
                Some(prev) if interp.is_one(prev) => {
                    sizes.insert(c, d.clone());
                    true
                }
                Some(prev) => {
                    if interp.is_one(d) {
                        return true;
                    }
                    if interp.env.known_different(prev, d) {
                        let message = format!(
                            "einsum(): subscript {c} has size {} for operand {i} which does not broadcast with previously seen size {}",
                            interp.fmt_dim(d),
                            interp.fmt_dim(prev)
                        );
                        interp.report(range.clone(), Severity::Error, "einsum-shape", message);
                        return false;
                    }
                    let prev = prev.clone();
                    let _ = interp.require_equal(&prev, d);
                    true
                }
                None => {
                    sizes.insert(c, d.clone());
                    true
                }
            }
        };
        for (c, d) in before.iter().zip(&dims) {
            if !assign(interp, *c, d) {
                return Value::Unknown;
            }
        }
        for (c, d) in after.iter().rev().zip(dims.iter().rev()) {
            if !assign(interp, *c, d) {
                return Value::Unknown;
            }
        }
        if has_ellipsis {
            let mid = dims[before.len()..dims.len() - after.len()].to_vec();
            ellipsis = Some(match ellipsis {
                Some(prev) if prev.len() >= mid.len() => prev,
                _ => mid,
            });
        }
    }
    let out_spec: Vec<String> = match rhs {
        Some(r) => {
            let mut parts = Vec::new();
            let mut rest = r.as_str();
            while !rest.is_empty() {
                if let Some(stripped) = rest.strip_prefix("...") {
                    parts.push("...".to_string());
                    rest = stripped;
                } else {
                    let c = rest.chars().next().unwrap_or(' ');
                    parts.push(c.to_string());
                    rest = &rest[c.len_utf8()..];
                }
            }
            parts
        }
        None => {
            let mut once: Vec<char> = counts
                .iter()
                .filter(|(_, n)| **n == 1)
                .map(|(c, _)| *c)
                .collect();
            once.sort();
            let mut parts: Vec<String> = Vec::new();
            if ellipsis.is_some() {
                parts.push("...".into());
            }
            parts.extend(once.into_iter().map(|c| c.to_string()));
            parts
        }
    };
    let mut out = Vec::new();
    for p in out_spec {
        if p == "..." {
            out.extend(ellipsis.clone().unwrap_or_default());
        } else {
            let c = p.chars().next().unwrap_or(' ');
            match sizes.get(&c) {
                Some(d) => out.push(d.clone()),
                None => return Value::Unknown,
            }
        }
    }
    let dtype = tensors[0].dtype;
    out_known(interp, &tensors[0], out, dtype, device, "torch.einsum")
}

/// One side of an einops pattern: axes, composite groups, an ellipsis, anonymous `1`s.
#[derive(Debug, Clone)]
enum Group {
    Axes(Vec<String>),
    Ellipsis,
}

fn parse_side(text: &str) -> Option<Vec<Group>> {
    let mut out = Vec::new();
    let mut chars = text.trim().chars().peekable();
    let mut current: Option<Vec<String>> = None;
    let mut word = String::new();
    let flush = |word: &mut String, current: &mut Option<Vec<String>>, out: &mut Vec<Group>| {
        if word.is_empty() {
            return;
        }
        let w = std::mem::take(word);
        if w == "..." || w == "…" {
            out.push(Group::Ellipsis);
            return;
        }
        match current {
            Some(g) => g.push(w),
            None => out.push(Group::Axes(vec![w])),
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '(' => {
                flush(&mut word, &mut current, &mut out);
                if current.is_some() {
                    return None;
                }
                current = Some(Vec::new());
            }
            ')' => {
                flush(&mut word, &mut current, &mut out);
                out.push(Group::Axes(current.take()?));
            }
            c if c.is_whitespace() => flush(&mut word, &mut current, &mut out),
            _ => word.push(c),
        }
        let _ = chars.peek();
    }
    flush(&mut word, &mut current, &mut out);
    if current.is_some() {
        return None;
    }
    Some(out)
}

/// `einops.rearrange / repeat / reduce / einsum`.
pub(crate) fn call(interp: &mut Interp<'_>, name: &str, args: Args, range: TextRange) -> Value {
    if name == "einsum" {
        // einops.einsum(x, y, "b i d, b j d -> b i j"): the pattern is last.
        let Some(Value::Str(pattern)) = args.pos.last().cloned() else {
            return Value::Unknown;
        };
        let tensors: Vec<Value> = args.pos[..args.pos.len() - 1].to_vec();
        let (lhs, rhs) = match pattern.split_once("->") {
            Some(p) => p,
            None => return Value::Unknown,
        };
        let mut letters: HashMap<String, char> = HashMap::new();
        let mut next = b'a';
        let mut convert = |side: &str| -> String {
            side.split(',')
                .map(|op| {
                    op.split_whitespace()
                        .map(|w| {
                            if w == "..." {
                                return "...".to_string();
                            }
                            letters
                                .entry(w.to_string())
                                .or_insert_with(|| {
                                    let c = next as char;
                                    next = next.saturating_add(1);
                                    c
                                })
                                .to_string()
                        })
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        let eq = format!("{}->{}", convert(lhs), convert(rhs));
        let mut pos = vec![Value::Str(Rc::from(eq))];
        pos.extend(tensors);
        return einsum(interp, &Args::new(pos, Vec::new()), range);
    }
    let Some(x) = args.tensor(0, "tensor") else {
        if let Some(items) = args.pos.first().and_then(|v| v.items())
            && name == "rearrange"
            && !items.is_empty()
        {
            // A list of tensors is stacked first.
            let stacked = super::ops::op(
                interp,
                "stack",
                Args::new(vec![Value::list(items)], Vec::new()),
                range.clone(),
            );
            let mut pos = vec![stacked];
            pos.extend(args.pos[1..].iter().cloned());
            return call(interp, name, Args::new(pos, args.kw), range);
        }
        return Value::Unknown;
    };
    let Some(pattern) = args.str(1, "pattern") else {
        return Value::Unknown;
    };
    let Some((lhs, rhs)) = pattern.split_once("->") else {
        return Value::Unknown;
    };
    let (Some(left), Some(right)) = (parse_side(lhs), parse_side(rhs)) else {
        interp.report(
            range,
            Severity::Error,
            "einops-pattern",
            format!("could not parse the einops pattern '{pattern}'"),
        );
        return Value::Unknown;
    };
    let Some(dims) = interp.dims(&x) else {
        let shape = interp.fresh_rank_var();
        return Value::Tensor(Rc::new(Tensor {
            shape,
            op: Rc::from(format!("einops.{name}")),
            made_at: None,
            ..(*x).clone()
        }));
    };
    let mut sizes: HashMap<String, Dim> = HashMap::new();
    for (k, v) in &args.kw {
        if let Some(d) = interp.as_dim(v) {
            sizes.insert(k.to_string(), d);
        }
    }
    let has_ellipsis = left.iter().any(|g| matches!(g, Group::Ellipsis));
    let fixed = left
        .iter()
        .filter(|g| !matches!(g, Group::Ellipsis))
        .count();
    if (!has_ellipsis && fixed != dims.len()) || fixed > dims.len() {
        let message = format!(
            "Wrong shape: expected {} dims. Received {}-dim tensor.",
            fixed,
            dims.len()
        );
        interp.report(range, Severity::Error, "einops-pattern", message);
        return Value::Unknown;
    }
    let mut ellipsis_dims: Vec<Dim> = Vec::new();
    let mut i = 0;
    for g in &left {
        match g {
            Group::Ellipsis => {
                let n = dims.len() - fixed;
                ellipsis_dims = dims[i..i + n].to_vec();
                i += n;
            }
            Group::Axes(axes) => {
                let d = dims[i].clone();
                i += 1;
                let unknown: Vec<&String> = axes
                    .iter()
                    .filter(|a| !sizes.contains_key(*a) && a.parse::<i64>().is_err())
                    .collect();
                let known: Vec<Dim> = axes
                    .iter()
                    .filter_map(|a| {
                        a.parse::<i64>()
                            .ok()
                            .map(Dim::konst)
                            .or_else(|| sizes.get(a).cloned())
                    })
                    .collect();
                match unknown.as_slice() {
                    [] => {
                        if interp.env.known_different(&numel(&known), &d) {
                            let message = format!(
                                "Shape mismatch, {} != {}",
                                interp.fmt_dim(&numel(&known)),
                                interp.fmt_dim(&d)
                            );
                            interp.report(range, Severity::Error, "einops-pattern", message);
                            return Value::Unknown;
                        }
                    }
                    [one] => {
                        let v = if known.is_empty() {
                            d
                        } else {
                            d.floordiv(&numel(&known))
                                .unwrap_or_else(|| interp.env.anonymous())
                        };
                        sizes.insert((*one).clone(), v);
                    }
                    _ => {
                        let message = format!(
                            "Could not infer sizes for {{{}}}",
                            unknown
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                        interp.report(range, Severity::Error, "einops-pattern", message);
                        return Value::Unknown;
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for g in &right {
        match g {
            Group::Ellipsis => out.extend(ellipsis_dims.iter().cloned()),
            Group::Axes(axes) => {
                let mut d = Dim::konst(1);
                for a in axes {
                    let size = match a.parse::<i64>() {
                        Ok(n) => Dim::konst(n),
                        Err(_) => match sizes.get(a) {
                            Some(s) => s.clone(),
                            None => {
                                let message = format!(
                                    "Unknown axis {a} on the right side of the pattern; give its size as a keyword"
                                );
                                interp.report(range, Severity::Error, "einops-pattern", message);
                                return Value::Unknown;
                            }
                        },
                    };
                    d = d.mul(&size);
                }
                out.push(d);
            }
        }
    }
    let device = x.device.clone();
    out_known(interp, &x, out, x.dtype, device, &format!("einops.{name}"))
}
