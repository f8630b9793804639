//! einops (`rearrange`, `repeat`, `reduce`, `einsum`) with named axes.
//!
//! `torch.einsum`, which `einops.einsum` comes down to, is a tensor op
//! (`ops/einsum.rs`).

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::Args;
use super::check::{RuleResult, ShapeError, Stop, check, raise};
use super::dtype::sum_dtype;
use super::ops::{out_known, out_shape};
use crate::code::Code;
use crate::rules::meta::Meta;
use crate::value::{DType, Shape, Tensor, Value};

/// One elementary axis of an einops pattern.
#[derive(Debug, Clone, PartialEq)]
enum Axis {
    Name(String),
    /// An anonymous axis of length > 1 (`2` in `(h 2)`); each one is distinct.
    Anon(i64),
    /// `...` inside parentheses (`(...)`, allowed on the right side only).
    Ellipsis,
}

/// One top-level entry of a pattern side: a composite group (a single axis,
/// `(h d)`, or `()` / `1` with no axes) or the bare ellipsis.
#[derive(Debug, Clone)]
enum Group {
    Axes(Vec<Axis>),
    Ellipsis,
}

/// One side of a pattern, as einops' `ParsedExpression` reads it.
#[derive(Debug, Clone)]
struct Side {
    groups: Vec<Group>,
    /// Named axes, in order of appearance.
    names: Vec<String>,
    has_ellipsis: bool,
    ellipsis_parenthesized: bool,
    has_anon: bool,
}

/// einops' axis-name rule: a Python identifier not starting or ending with `_`.
fn axis_name_error(name: &str, allow_underscore: bool) -> Option<String> {
    let mut chars = name.chars();
    let first = chars.next()?;
    let ident = (first.is_alphabetic() || first == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !ident {
        return Some(format!(
            "Invalid axis identifier: {name}\nnot a valid python identifier"
        ));
    }
    if (name.starts_with('_') || name.ends_with('_')) && !(allow_underscore && name == "_") {
        return Some(format!(
            "Invalid axis identifier: {name}\naxis name should should not start or end with underscore"
        ));
    }
    None
}

/// Parses one side; `Err` carries einops' message.
fn parse_side(text: &str, allow_underscore: bool, allow_duplicates: bool) -> Result<Side, String> {
    let mut side = Side {
        groups: Vec::new(),
        names: Vec::new(),
        has_ellipsis: false,
        ellipsis_parenthesized: false,
        has_anon: false,
    };
    let expr = text.replace("...", "…");
    if expr.contains('.') {
        return Err("Expression may contain dots only inside ellipsis (...)".into());
    }
    if expr.matches('…').count() > 1 {
        return Err(
            "Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor "
                .into(),
        );
    }
    let mut bracket: Option<Vec<Axis>> = None;
    let mut word = String::new();
    let flush = |word: &mut String,
                 bracket: &mut Option<Vec<Axis>>,
                 side: &mut Side|
     -> Result<(), String> {
        if word.is_empty() {
            return Ok(());
        }
        let w = std::mem::take(word);
        if side.names.contains(&w) && !allow_duplicates {
            return Err(format!(
                "Indexing expression contains duplicate dimension \"{w}\""
            ));
        }
        let axis = if w == "…" {
            side.has_ellipsis = true;
            if bracket.is_some() {
                side.ellipsis_parenthesized = true;
                Some(Axis::Ellipsis)
            } else {
                side.groups.push(Group::Ellipsis);
                None
            }
        } else if w.chars().all(|c| c.is_ascii_digit()) {
            match w.parse::<i64>() {
                Ok(1) => {
                    // `1` is an empty group outside parentheses, nothing inside
                    if bracket.is_none() {
                        side.groups.push(Group::Axes(Vec::new()));
                    }
                    None
                }
                Ok(n) if n > 1 => {
                    side.has_anon = true;
                    Some(Axis::Anon(n))
                }
                _ => {
                    return Err(format!(
                        "Anonymous axis should have positive length, not {w}"
                    ));
                }
            }
        } else {
            if let Some(reason) = axis_name_error(&w, allow_underscore) {
                return Err(reason);
            }
            side.names.push(w.clone());
            Some(Axis::Name(w))
        };
        if let Some(axis) = axis {
            match bracket {
                Some(g) => g.push(axis),
                None => side.groups.push(Group::Axes(vec![axis])),
            }
        }
        Ok(())
    };
    for c in expr.chars() {
        match c {
            '(' | ')' | ' ' => {
                flush(&mut word, &mut bracket, &mut side)?;
                if c == '(' {
                    if bracket.is_some() {
                        return Err(
                            "Axis composition is one-level (brackets inside brackets not allowed)"
                                .into(),
                        );
                    }
                    bracket = Some(Vec::new());
                } else if c == ')' {
                    match bracket.take() {
                        Some(g) => side.groups.push(Group::Axes(g)),
                        None => return Err("Brackets are not balanced".into()),
                    }
                }
            }
            c if c.is_alphanumeric() || c == '_' || c == '…' => word.push(c),
            _ => return Err(format!("Unknown character '{c}'")),
        }
    }
    if bracket.is_some() {
        return Err(format!("Imbalanced parentheses in expression: \"{text}\""));
    }
    flush(&mut word, &mut bracket, &mut side)?;
    Ok(side)
}

/// Python's rendering of a set of axis names: `{'h', 'w'}` (sorted here).
fn py_set(names: &[&String]) -> String {
    let mut v: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    v.sort();
    v.dedup();
    format!("{{{}}}", v.join(", "))
}

const REDUCTIONS: [&str; 7] = ["min", "max", "sum", "mean", "prod", "any", "all"];

/// The checks einops makes on a pattern alone, before it sees a tensor
/// (`_prepare_transformation_recipe`; the layers make them when built).
/// `Err` carries einops' message.
fn recipe(pattern: &str, operation: &str, axes_names: &[Rc<str>]) -> Result<(Side, Side), String> {
    let mut parts = pattern.split("->");
    let (Some(lhs), Some(rhs), None) = (parts.next(), parts.next(), parts.next()) else {
        let got = pattern.split("->").count();
        return Err(if got < 2 {
            format!("not enough values to unpack (expected 2, got {got})")
        } else {
            "too many values to unpack (expected 2)".into()
        });
    };
    let left = parse_side(lhs, false, false)?;
    let right = parse_side(rhs, false, false)?;
    if !left.has_ellipsis && right.has_ellipsis {
        return Err(format!(
            "Ellipsis found in right side, but not left side of a pattern {pattern}"
        ));
    }
    if left.has_ellipsis && left.ellipsis_parenthesized {
        return Err(format!(
            "Ellipsis inside parenthesis in the left side is not allowed: {pattern}"
        ));
    }
    let only_left: Vec<&String> = left
        .names
        .iter()
        .filter(|n| !right.names.contains(n))
        .collect();
    let only_right: Vec<&String> = right
        .names
        .iter()
        .filter(|n| !left.names.contains(n))
        .collect();
    let given = |n: &String| axes_names.iter().any(|k| **k == **n);
    match operation {
        "rearrange" => {
            if left.has_anon || right.has_anon {
                return Err("Non-unitary anonymous axes are not supported in rearrange (exception is length 1)".into());
            }
            if !only_left.is_empty() || !only_right.is_empty() {
                let both: Vec<&String> = only_left.iter().chain(&only_right).copied().collect();
                return Err(format!(
                    "Identifiers only on one side of expression (should be on both): {}",
                    py_set(&both)
                ));
            }
        }
        "repeat" => {
            if !only_left.is_empty() {
                return Err(format!(
                    "Unexpected identifiers on the left side of repeat: {}",
                    py_set(&only_left)
                ));
            }
            let no_size: Vec<&String> = only_right.iter().copied().filter(|n| !given(n)).collect();
            if !no_size.is_empty() {
                return Err(format!(
                    "Specify sizes for new axes in repeat: {}",
                    py_set(&no_size)
                ));
            }
        }
        op if REDUCTIONS.contains(&op) => {
            if !only_right.is_empty() {
                return Err(format!(
                    "Unexpected identifiers on the right side of reduce {op}: {}",
                    py_set(&only_right)
                ));
            }
        }
        op => {
            return Err(format!(
                "Unknown reduction {op}. Expect one of ('min', 'max', 'sum', 'mean', 'prod', 'any', 'all')."
            ));
        }
    }
    for k in axes_names {
        if axis_name_error(k, false).is_some() {
            return Err(format!("('Invalid name for an axis', '{k}')"));
        }
        let k = k.to_string();
        if !left.names.contains(&k) && !right.names.contains(&k) {
            return Err(format!("Axis {k} is not used in transform"));
        }
    }
    for g in &left.groups {
        if let Group::Axes(axes) = g {
            let unknown: Vec<&String> = axes
                .iter()
                .filter_map(|a| match a {
                    Axis::Name(n) if !given(n) => Some(n),
                    _ => None,
                })
                .collect();
            if unknown.len() > 1 {
                return Err(format!("Could not infer sizes for {}", py_set(&unknown)));
            }
        }
    }
    Ok((left, right))
}

/// `Rearrange(pattern, **sizes)` / `Reduce(pattern, reduction, **sizes)`
/// check their pattern when built.
pub(crate) fn check_layer(meta: &mut dyn Meta, kind: &str, args: &Args, range: TextRange) {
    let Some(pattern) = args.str(0, "pattern") else {
        return;
    };
    let operation: Rc<str> = match kind {
        "Rearrange" => Rc::from("rearrange"),
        _ => match args.get(1, "reduction") {
            Some(Value::Str(r)) => r.clone(),
            _ => return,
        },
    };
    let names: Vec<Rc<str>> = args
        .kw
        .iter()
        .map(|(k, _)| k.clone())
        .filter(|k| !matches!(&**k, "pattern" | "reduction"))
        .collect();
    if let Err(message) = recipe(&pattern, &operation, &names) {
        meta.report(range, Code::EinopsPattern, message);
    }
}

/// `einops.einsum(x, y, "b i d, b j d -> b i j")`: the pattern comes last;
/// axis names become letters and `torch.einsum` does the rest.
fn einops_einsum(meta: &mut dyn Meta, args: &Args, range: TextRange) -> Value {
    let Some(Value::Str(pattern)) = args.pos.last().cloned() else {
        return Value::Unknown;
    };
    let tensors: Vec<Value> = args.pos[..args.pos.len() - 1].to_vec();
    let report = |meta: &mut dyn Meta, message: String| {
        meta.report(range, Code::EinopsPattern, message);
        Value::Unknown
    };
    let Some((lhs, rhs)) = pattern.split_once("->") else {
        return report(meta, "Einsum pattern must contain '->'.".into());
    };
    if rhs.contains("->") {
        return report(meta, "too many values to unpack (expected 2)".into());
    }
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut letters: FxHashMap<String, char> = FxHashMap::default();
    let mut spell = |side: &Side, new_ok: bool| -> Result<String, String> {
        let mut out = String::new();
        for g in &side.groups {
            let axes = match g {
                Group::Ellipsis => {
                    out.push_str("...");
                    continue;
                }
                Group::Axes(axes) => axes,
            };
            let name = match axes.as_slice() {
                [Axis::Name(n)] => n,
                [] => return Err("Singleton () axes are not yet supported in einsum.".into()),
                [Axis::Anon(_)] => {
                    return Err("Anonymous axes are not yet supported in einsum.".into());
                }
                _ => return Err("Shape rearrangement is not yet supported in einsum.".into()),
            };
            let next = letters.len();
            let c = match letters.get(name) {
                Some(c) => *c,
                None if !new_ok => {
                    return Err(format!(
                        "Unknown axis {name} on right side of einsum {pattern}."
                    ));
                }
                None => {
                    let Some(&c) = LETTERS.get(next) else {
                        return Err("Too many axes in einsum.".into());
                    };
                    letters.insert(name.clone(), c as char);
                    c as char
                }
            };
            out.push(c);
        }
        Ok(out)
    };
    let mut left = Vec::new();
    for op in lhs.split(',') {
        match parse_side(op, true, true).and_then(|side| spell(&side, true)) {
            Ok(s) => left.push(s),
            Err(message) => return report(meta, message),
        }
    }
    let right = match parse_side(rhs, true, false).and_then(|side| spell(&side, false)) {
        Ok(s) => s,
        Err(message) => return report(meta, message),
    };
    let eq = format!("{}->{right}", left.join(","));
    let mut pos = vec![Value::Str(Rc::from(eq))];
    pos.extend(tensors);
    let result = super::ops::einsum(meta, &Args::new(pos, Vec::new()), range);
    meta.settle(range, result)
}

/// `einops.rearrange / repeat / reduce / einsum`.
pub(crate) fn call(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> Value {
    transform(meta, name, args, range, false)
}

/// The `Rearrange` / `Reduce` layers, as `rearrange` / `reduce`: the
/// layer applies its recipe with torch's own reductions, so torch's checks
/// speak where the function's are einops'.
pub(crate) fn call_layer(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> Value {
    transform(meta, name, args, range, true)
}

fn transform(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange, layer: bool) -> Value {
    let operation: Rc<str> = match name {
        "einsum" => return einops_einsum(meta, &args, range),
        "rearrange" | "repeat" => Rc::from(name),
        "reduce" => match args.get(2, "reduction") {
            Some(Value::Str(r)) => r.clone(),
            // a callable reduction, or one not known here
            _ => return Value::Unknown,
        },
        _ => return Value::Unknown,
    };
    let Some(x) = args.tensor(0, "tensor") else {
        return call_on_stacked(meta, name, args, range, layer);
    };
    let Some(pattern) = args.str(1, "pattern") else {
        return Value::Unknown;
    };
    // axis sizes given as keywords
    let axes_lengths: Vec<(Rc<str>, Value)> = args
        .kw
        .iter()
        .filter(|(k, _)| !matches!(&**k, "tensor" | "pattern" | "reduction"))
        .cloned()
        .collect();
    let call = Transform {
        name,
        at: range.start,
        layer,
        operation: &operation,
        x: &x,
        axes_lengths: &axes_lengths,
    };
    let result = call.apply(meta, &pattern);
    meta.settle(range, result)
}

/// A list of tensors in place of the tensor is stacked first, then
/// transformed; anything else has an unknown result.
fn call_on_stacked(
    meta: &mut dyn Meta,
    name: &str,
    args: Args,
    range: TextRange,
    layer: bool,
) -> Value {
    let Some(items) = args.get(0, "tensor").and_then(|v| v.items()) else {
        return Value::Unknown;
    };
    if items.is_empty() {
        return Value::Unknown;
    }
    let stacked = super::ops::op(
        meta,
        "stack",
        Args::new(vec![Value::list(items)], Vec::new()),
        range,
    );
    if stacked.as_tensor().is_none() {
        return Value::Unknown;
    }
    let mut pos = vec![stacked];
    pos.extend(args.pos.iter().skip(1).cloned());
    let kw = args
        .kw
        .into_iter()
        .filter(|(k, _)| &**k != "tensor")
        .collect();
    transform(meta, name, Args::new(pos, kw), range, layer)
}

/// One einops transformation of a tensor: `rearrange`, `repeat`, or
/// `reduce` by `operation` (`sum`, `mean`, …).
struct Transform<'a> {
    name: &'a str,
    /// Where the call is written.
    at: usize,
    /// Applied by a layer (`Reduce`), whose reductions are torch's.
    layer: bool,
    operation: &'a str,
    x: &'a Rc<Tensor>,
    /// The axis lengths given as keywords (`h=8`).
    axes_lengths: &'a [(Rc<str>, Value)],
}

impl Transform<'_> {
    /// The result of the transformation by `pattern`, as einops makes it:
    /// the recipe from the pattern, the input's rank checked, the axis
    /// sizes read from its dims, the output's dims from those sizes.
    fn apply(&self, meta: &mut dyn Meta, pattern: &str) -> RuleResult {
        let x = self.x;
        let names: Vec<Rc<str>> = self.axes_lengths.iter().map(|(k, _)| k.clone()).collect();
        let (left, right) = recipe(pattern, self.operation, &names)
            .map_err(|message| ShapeError::new(Code::EinopsPattern, message))?;
        let n_fixed = left
            .groups
            .iter()
            .filter(|g| !matches!(g, Group::Ellipsis))
            .count();
        if meta.dims(x).is_none() && !left.has_ellipsis {
            self.pin_rank(meta, &left);
        }
        let Some(dims) = meta.dims(x) else {
            if let Some(result) = self.apply_to_head(meta, &left, &right)? {
                return Ok(result);
            }
            if let Some(result) = self.apply_to_tail(meta, &left, &right, n_fixed)? {
                return Ok(result);
            }
            let shape = meta.fresh_rank_var();
            return Err(Stop::Give(Value::Tensor(Rc::new(Tensor {
                shape,
                op: Rc::from(format!("einops.{}", self.name)),
                made_at: None,
                ..(**x).clone()
            }))));
        };
        check_rank(&left, n_fixed, dims.len(), self.layer)?;
        let n_ellipsis = dims.len() - n_fixed;
        let (sizes, ellipsis_dims) = self.axis_sizes(meta, &left, &dims, n_ellipsis)?;
        // A layer's pattern is written where it is built, not where it runs.
        if !self.layer {
            for name in left.names.iter().chain(&right.names) {
                if let Some(d) = sizes.get(name.as_str()) {
                    meta.axis_named(self.at, name, d);
                }
            }
        }
        let Some(out) = output_dims(&right, &sizes, &ellipsis_dims) else {
            return Ok(Value::Unknown);
        };
        let reduced = left.names.iter().any(|n| !right.names.contains(n))
            || (left.has_ellipsis && !right.has_ellipsis && n_ellipsis > 0);
        let dtype = self.dtype(reduced)?;
        let device = x.device.clone();
        let op = format!("einops.{}", self.name);
        Ok(out_known(meta, x, out, dtype, device, &op))
    }

    /// An input of unknown rank whose last dims are known (`[*batch,
    /// bucket]`) under a pattern that starts with its ellipsis (`...
    /// bucket -> ... ()`): the ellipsis stands for the unknown leading dims
    /// and the known ones the pattern's axes leave, and the result keeps
    /// the unknown ones in front. `None` when the pattern reaches into the
    /// unknown dims (axes before the ellipsis, more axes than known dims).
    fn apply_to_tail(
        &self,
        meta: &mut dyn Meta,
        left: &Side,
        right: &Side,
        n_fixed: usize,
    ) -> Result<Option<Value>, Stop> {
        let leads = |side: &Side| matches!(side.groups.first(), Some(Group::Ellipsis));
        let mut resolved = meta.resolve_shape(&self.x.shape);
        // einops needs as many dims as the pattern names after a leading
        // ellipsis (`... c d`): the input has them, named as the pattern
        // names them.
        if leads(left)
            && !left.ellipsis_parenthesized
            && resolved
                .tail()
                .is_some_and(|(_, suffix)| suffix.len() < n_fixed)
        {
            let names = group_names(left);
            let names: Vec<&str> = names.iter().skip(1).map(String::as_str).collect();
            resolved = meta.demand_named_suffix(&resolved, &names);
            self.name_composite_dims_of(meta, left, &resolved);
        }
        let Some((var, suffix)) = resolved.tail() else {
            return Ok(None);
        };
        let usable = left.has_ellipsis
            && leads(left)
            && !left.ellipsis_parenthesized
            && (!right.has_ellipsis || leads(right) || right.ellipsis_parenthesized)
            && n_fixed <= suffix.len();
        if !usable {
            return Ok(None);
        }
        let n_known = suffix.len() - n_fixed;
        let (sizes, known_ellipsis) = self.axis_sizes(meta, left, suffix, n_known)?;
        let Some(mut out) = output_dims(right, &sizes, &known_ellipsis) else {
            return Ok(Some(Value::Unknown));
        };
        let merged = merge_unread_ellipsis(meta, right, &mut out);
        let reduced = left.names.iter().any(|n| !right.names.contains(n)) || !right.has_ellipsis;
        let dtype = self.dtype(reduced)?;
        let out: Vec<Dim> = out.into_iter().map(|d| meta.bounded(d)).collect();
        let shape = if right.has_ellipsis && merged.is_none() {
            super::tail::suffix_shape(var, out)
        } else {
            Shape::known(out)
        };
        let op = format!("einops.{}", self.name);
        let device = self.x.device.clone();
        Ok(Some(out_shape(meta, self.x, shape, dtype, device, &op)))
    }

    /// An input of unknown rank under a pattern that names its first dims
    /// and ends in the ellipsis (`b ... -> b`, `b ... -> b (...)`, the
    /// per-sample losses of diffusion code): the named dims are its first
    /// sizes, as `x.shape[0]` reads them, and `(...)` is one dim of unknown
    /// size. `None` when the result keeps the ellipsis as dims of its own.
    fn apply_to_head(
        &self,
        meta: &mut dyn Meta,
        left: &Side,
        right: &Side,
    ) -> Result<Option<Value>, Stop> {
        let Shape::Var(var) = meta.resolve_shape(&self.x.shape) else {
            return Ok(None);
        };
        let Some((Group::Ellipsis, head)) = left.groups.split_last() else {
            return Ok(None);
        };
        if right.has_ellipsis && !right.ellipsis_parenthesized {
            return Ok(None);
        }
        let mut sizes: FxHashMap<String, Dim> = FxHashMap::default();
        for (i, g) in head.iter().enumerate() {
            let Group::Axes(axes) = g else {
                return Ok(None);
            };
            let [Axis::Name(name)] = axes.as_slice() else {
                return Ok(None);
            };
            let d = meta.var_dim(var, i as i64);
            if let Some(len) = self.length_given(meta, name) {
                let _ = meta.env_mut().unify(&d, &len);
            }
            sizes.insert(name.clone(), d);
        }
        // Axes only the result has (`repeat`) are the lengths given.
        for name in &right.names {
            if !sizes.contains_key(name) {
                let Some(len) = self.length_given(meta, name) else {
                    return Ok(None);
                };
                sizes.insert(name.clone(), len);
            }
        }
        let Some(mut out) = output_dims(right, &sizes, &[]) else {
            return Ok(None);
        };
        merge_unread_ellipsis(meta, right, &mut out);
        if !self.layer {
            for (name, d) in &sizes {
                meta.axis_named(self.at, name, d);
            }
        }
        let reduced = !right.has_ellipsis || left.names.iter().any(|n| !right.names.contains(n));
        let dtype = self.dtype(reduced)?;
        let op = format!("einops.{}", self.name);
        let device = self.x.device.clone();
        Ok(Some(out_known(meta, self.x, out, dtype, device, &op)))
    }

    /// The pattern spells out the rank of an input nobody knew the rank
    /// of: its dims get the names of the pattern's groups.
    fn pin_rank(&self, meta: &mut dyn Meta, left: &Side) {
        let names = group_names(left);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        meta.demand_rank(&self.x.shape, &names);
        self.name_composite_dims(meta, left);
    }

    /// A group whose other axes have their lengths given (`(h p1)` with
    /// `p1=patch_size`) is that many times a free size named after the one
    /// axis left: `h*patch_size`, so `h` comes out as `h`.
    fn name_composite_dims(&self, meta: &mut dyn Meta, left: &Side) {
        let shape = self.x.shape.clone();
        self.name_composite_dims_of(meta, left, &shape);
    }

    /// `name_composite_dims` of the known dims of `shape`, matched with
    /// the pattern's groups from the end when its rank is unknown.
    fn name_composite_dims_of(&self, meta: &mut dyn Meta, left: &Side, shape: &Shape) {
        let (groups, dims): (&[Group], Vec<Dim>) = match meta.resolve_shape(shape) {
            Shape::Known(dims) => (&left.groups, dims.as_ref().clone()),
            Shape::Tail(_, suffix) if left.groups.len() > suffix.len() => (
                &left.groups[left.groups.len() - suffix.len()..],
                suffix.as_ref().clone(),
            ),
            _ => return,
        };
        for (g, d) in groups.iter().zip(dims.iter()) {
            let Group::Axes(axes) = g else { continue };
            // A single axis given its length (`b=b`) is that length.
            if let [Axis::Name(n)] = axes.as_slice() {
                if let Some(len) = self.length_given(meta, n) {
                    let _ = meta.env_mut().unify(d, &len);
                }
                continue;
            }
            if axes.len() < 2 {
                continue;
            }
            let mut free = Vec::new();
            let mut known = Dim::konst(1);
            for a in axes {
                match a {
                    Axis::Anon(n) => known = known.mul(&Dim::konst(*n)),
                    Axis::Name(n) => match self.length_given(meta, n) {
                        Some(len) => known = known.mul(&len),
                        None => free.push(n.clone()),
                    },
                    Axis::Ellipsis => {}
                }
            }
            if let [axis] = free.as_slice() {
                let made = meta.env_mut().weak_symbol(axis).mul(&known);
                let _ = meta.env_mut().unify(d, &made);
            } else if free.is_empty() {
                // Every length given: einops checks the dim is their product.
                let _ = meta.env_mut().unify(d, &known);
            }
        }
    }

    /// The length given as a keyword for the axis `name`, if it is a size.
    fn length_given(&self, meta: &mut dyn Meta, name: &str) -> Option<Dim> {
        self.axes_lengths
            .iter()
            .find(|(k, _)| **k == *name)
            .and_then(|(_, v)| meta.as_dim(v))
    }

    /// The size of every axis, the lengths given first, the others read
    /// from the input's `dims` (a group's one unknown axis is its dim over
    /// the others), and the dims the ellipsis stands for; torch's message
    /// when a dim does not fit its group.
    fn axis_sizes(
        &self,
        meta: &mut dyn Meta,
        left: &Side,
        dims: &[Dim],
        n_ellipsis: usize,
    ) -> Result<(FxHashMap<String, Dim>, Vec<Dim>), Stop> {
        let mut sizes: FxHashMap<String, Dim> = FxHashMap::default();
        for (k, v) in self.axes_lengths {
            let d = match meta.as_dim(v) {
                Some(d) => d,
                None => meta.env_mut().anonymous(),
            };
            sizes.insert(k.to_string(), d);
        }
        let mut ellipsis_dims: Vec<Dim> = Vec::new();
        let mut i = 0;
        for g in &left.groups {
            let axes = match g {
                Group::Ellipsis => {
                    ellipsis_dims = dims[i..i + n_ellipsis].to_vec();
                    i += n_ellipsis;
                    continue;
                }
                Group::Axes(axes) => axes,
            };
            let length = dims[i].clone();
            i += 1;
            group_sizes(meta, axes, length, &mut sizes)?;
        }
        Ok((sizes, ellipsis_dims))
    }

    /// The result's dtype: a reduction's own (`mean` needs floats; `sum`
    /// promotes integers; `any`/`all` give bools), else the input's.
    fn dtype(&self, reduced: bool) -> Result<Option<DType>, Stop> {
        let x = self.x;
        Ok(match (self.operation, x.dtype) {
            (_, None) => None,
            ("rearrange" | "repeat", d) => d,
            _ if !reduced => x.dtype,
            ("mean", Some(d)) if self.layer => {
                check!(
                    d.is_floating() || d.is_complex(),
                    Code::DtypeMismatch,
                    "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                    crate::rules::dtype::torch_name(d)
                );
                Some(d)
            }
            ("mean", Some(d)) => {
                check!(
                    d.is_floating(),
                    Code::DtypeMismatch,
                    "reduce_mean is not available for non-floating tensors"
                );
                Some(d)
            }
            ("sum" | "prod", d) => sum_dtype(d),
            ("any" | "all", Some(DType::UInt8)) => Some(DType::UInt8),
            ("any" | "all", Some(_)) => Some(DType::Bool),
            (_, d) => d,
        })
    }
}

/// The input has as many dims as the pattern's left side has groups, or
/// at least as many with an ellipsis. einops' functions say so; its layers
/// look the rank up among the recipes they prepared and fail with Python's
/// bare `KeyError: 3`, which the message quotes before explaining it.
fn check_rank(left: &Side, n_fixed: usize, rank: usize, layer: bool) -> Result<(), Stop> {
    let fits = if left.has_ellipsis {
        rank >= n_fixed
    } else {
        rank == n_fixed
    };
    let at_least = if left.has_ellipsis { ">=" } else { "" };
    check!(
        fits || layer,
        Code::EinopsPattern,
        "Wrong shape: expected {at_least}{n_fixed} dims. Received {rank}-dim tensor."
    );
    check!(
        fits,
        Code::EinopsPattern,
        "KeyError: {rank} (the layer's pattern takes {at_least}{n_fixed} dims; received a {rank}-dim tensor)"
    );
    Ok(())
}

/// Reads the sizes of one group's `axes` from its dim's `length`: the
/// product of their sizes must be it, and one axis of unknown size is what
/// the others leave of it (they must divide it).
fn group_sizes(
    meta: &mut dyn Meta,
    axes: &[Axis],
    length: Dim,
    sizes: &mut FxHashMap<String, Dim>,
) -> Result<(), Stop> {
    let mut unknown = None;
    let mut known = Dim::konst(1);
    for a in axes {
        match a {
            Axis::Anon(n) => known = known.mul(&Dim::konst(*n)),
            Axis::Name(n) => match sizes.get(n) {
                Some(d) => known = known.mul(d),
                None => unknown = Some(n.clone()),
            },
            Axis::Ellipsis => {}
        }
    }
    let Some(n) = unknown else {
        check!(
            !meta.env().known_different(&length, &known) && meta.require_equal(&length, &known),
            Code::EinopsPattern,
            "Shape mismatch, {} != {}",
            meta.fmt_dim(&length),
            meta.fmt_dim(&known)
        );
        return Ok(());
    };
    let size = if known.as_const() == Some(1) {
        length
    } else {
        let rem = length.modulo(&known).map(|r| meta.env().value(&r));
        match rem {
            Some(Some(0)) => {}
            Some(Some(_)) => {
                let message = format!(
                    "Shape mismatch, can't divide axis of length {} in chunks of {}",
                    meta.fmt_dim(&length),
                    meta.fmt_dim(&known)
                );
                return raise(Code::EinopsPattern, message);
            }
            // it divides, or einops raises at run time
            _ => meta.env_mut().assume_divisible(&length, &known),
        }
        length
            .floordiv(&known)
            .unwrap_or_else(|| meta.env_mut().anonymous())
    };
    sizes.insert(n, size);
    Ok(())
}

/// The output's dims from the pattern's right side: each group the
/// product of its axes' sizes. `None` for an axis of no known size.
fn output_dims(
    right: &Side,
    sizes: &FxHashMap<String, Dim>,
    ellipsis_dims: &[Dim],
) -> Option<Vec<Dim>> {
    let mut out = Vec::new();
    for g in &right.groups {
        match g {
            Group::Ellipsis => out.extend(ellipsis_dims.iter().cloned()),
            Group::Axes(axes) => {
                let mut d = Dim::konst(1);
                for a in axes {
                    match a {
                        Axis::Anon(n) => d = d.mul(&Dim::konst(*n)),
                        Axis::Ellipsis => {
                            for e in ellipsis_dims {
                                d = d.mul(e);
                            }
                        }
                        Axis::Name(n) => d = d.mul(sizes.get(n)?),
                    }
                }
                out.push(d);
            }
        }
    }
    Some(out)
}

/// `(v ...)` of an input of unknown rank merges dims nobody can count
/// into one: its size is unknown, and the result's rank is known. Returns
/// the index of that dim in `out` (the result's dims), if the pattern has
/// one.
fn merge_unread_ellipsis(meta: &mut dyn Meta, right: &Side, out: &mut [Dim]) -> Option<usize> {
    let merged = right.groups.iter().position(|g| match g {
        Group::Axes(axes) => axes.contains(&Axis::Ellipsis),
        Group::Ellipsis => false,
    })?;
    if let Some(d) = out.get_mut(merged) {
        *d = meta.env_mut().anonymous();
    }
    Some(merged)
}

/// The name of each top-level group of a pattern side, as a dim of the
/// input is named after it: an axis's name, a composite's names joined
/// (`h_d` for `(h d)`), `one` for `()`; nothing for the ellipsis.
fn group_names(side: &Side) -> Vec<String> {
    side.groups
        .iter()
        .map(|g| match g {
            Group::Axes(axes) => axes
                .iter()
                .map(|a| match a {
                    Axis::Name(n) => n.clone(),
                    Axis::Anon(k) => k.to_string(),
                    Axis::Ellipsis => String::new(),
                })
                .collect::<Vec<_>>()
                .join("_"),
            Group::Ellipsis => String::new(),
        })
        .map(|n| if n.is_empty() { "one".to_string() } else { n })
        .collect()
}
