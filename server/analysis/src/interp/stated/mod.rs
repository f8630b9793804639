//! Stated shapes in the run: annotations and docstrings as inputs, and as claims checked at calls, returns and annotated assignments.
//!
//! What the user wrote is read by `crate::stated`; here it meets the run.
//! A parameter nobody passes becomes a tensor of the stated shape (names
//! shared across one signature are one symbol; `inputs.rs`). A call passes its
//! arguments through the callee's annotations as jaxtyping's memo does:
//! each name is bound to the size it first meets, and a later size that is
//! known to differ, a wrong rank, a wrong fixed size or a wrong dtype is a
//! `shape-annotation` error at the annotation (beartype+jaxtyping would
//! raise there), with the argument's origin as related information. The
//! same memo checks the returned value against the return annotation.

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{ExprKind, FunctionDef, StmtKind};

use super::Interp;

mod inputs;
use crate::code::Code;
use crate::report::TextRange;
use crate::stated::{DimExpr, StatedDim, StatedShape};
use crate::value::{Function, Shape, Tensor, Value};

/// What the names of one call's annotations are bound to, as jaxtyping's
/// memo keeps them: single sizes, and the dims of each `*name`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Memo {
    pub(super) sizes: FxHashMap<String, Dim>,
    many: FxHashMap<String, Vec<Dim>>,
    /// The `*name`s some parameter wrote `*#name`: they broadcast wherever
    /// they recur (the return annotation's `*name` too).
    broadcast: Vec<String>,
}

/// The shape a parameter's docstring or annotation states, with whether it
/// is an annotation (a contract) or documentation.
pub(crate) struct ParamClaim {
    pub(crate) shape: StatedShape,
    /// The annotation, or where the docstring writes the shape.
    pub(crate) range: TextRange,
    pub(crate) annotation: bool,
    /// How a docstring writes the shape, for rewriting it.
    pub(crate) style: Option<crate::stated::comment::Style>,
}

impl Interp<'_> {
    /// Why `tensor` is not what `stated` says, binding names in `memo` as
    /// it goes; `None` when nothing contradicts it (unknown sizes never do).
    pub(crate) fn stated_mismatch(
        &mut self,
        stated: &StatedShape,
        tensor: &Tensor,
        memo: &mut Memo,
    ) -> Option<String> {
        if let (Some(class), Some(dtype)) = (stated.dtype, tensor.dtype)
            && !class.admits(dtype)
        {
            return Some(format!(
                "its dtype is {}, not {}",
                dtype.name(),
                class.describe()
            ));
        }
        // Only a shape the inference knows whole is held against an
        // annotation: leading dims it could not follow (`[*, n, 3]`) may
        // hide what it missed, and a false error is worse than a missed one.
        let dims = match self.resolve_shape(&tensor.shape) {
            Shape::Known(d) => d.to_vec(),
            Shape::Tail(..) | Shape::Var(_) => return None,
        };
        let many = stated.many_at();
        let fixed = stated.dims.len() - usize::from(many.is_some());
        // The pairs of a stated dim and the tensor's dim it describes.
        let mut pairs: Vec<(usize, &StatedDim, Dim)> = Vec::new();
        match many {
            None => {
                if fixed != dims.len() {
                    return Some(format!("it has {}, not {fixed}", dims_word(dims.len())));
                }
                pairs.extend(
                    stated
                        .dims
                        .iter()
                        .zip(dims.iter().cloned())
                        .enumerate()
                        .map(|(i, (s, d))| (i, s, d)),
                );
            }
            Some(at) => {
                if fixed > dims.len() {
                    return Some(format!(
                        "it has {}, not at least {fixed}",
                        dims_word(dims.len())
                    ));
                }
                let tail = stated.dims.len() - at - 1;
                for (i, (s, d)) in stated.dims[..at].iter().zip(&dims).enumerate() {
                    pairs.push((i, s, d.clone()));
                }
                for k in 0..tail {
                    let i = dims.len() - tail + k;
                    pairs.push((i, &stated.dims[at + 1 + k], dims[i].clone()));
                }
                if let StatedDim::Many(Some(name)) = &stated.dims[at] {
                    let inner = dims[at..dims.len() - tail].to_vec();
                    if let Some(why) = self.bind_many(name, inner, memo, stated.many_broadcasts) {
                        return Some(why);
                    }
                }
            }
        }
        for (i, s, d) in pairs {
            if let Some(why) = self.dim_mismatch(s, &d, memo) {
                return Some(format!("dim {i}: {why}"));
            }
        }
        None
    }

    /// Binds `*name` to `dims`, or says how they differ from what it was
    /// bound to. `broadcast` (jaxtyping's `*#name`): the dims need only
    /// broadcast with the earlier ones, aligned from the right; the name
    /// then stands for the longer of the two.
    fn bind_many(
        &mut self,
        name: &str,
        dims: Vec<Dim>,
        memo: &mut Memo,
        broadcast: bool,
    ) -> Option<String> {
        if broadcast && !memo.broadcast.iter().any(|n| n == name) {
            memo.broadcast.push(name.to_string());
        }
        let broadcast = broadcast || memo.broadcast.iter().any(|n| n == name);
        match memo.many.get(name) {
            Some(earlier) if broadcast => {
                let one = |d: &Dim| self.env.value(d) == Some(1);
                let clash = earlier
                    .iter()
                    .rev()
                    .zip(dims.iter().rev())
                    .any(|(a, b)| !one(a) && !one(b) && self.env.known_different(a, b));
                if clash {
                    return Some(format!(
                        "`*#{name}` is {} here, which does not broadcast with {} before",
                        self.show(&dims),
                        self.show(earlier)
                    ));
                }
                // What the two broadcast to: the longer's dims, each size
                // 1 taken over by the other's size there.
                let (long, short) = if dims.len() >= earlier.len() {
                    (&dims, earlier)
                } else {
                    (earlier, &dims)
                };
                let offset = long.len() - short.len();
                let merged: Vec<Dim> = long
                    .iter()
                    .enumerate()
                    .map(|(i, d)| match i.checked_sub(offset).map(|j| &short[j]) {
                        Some(other) if one(d) => other.clone(),
                        _ => d.clone(),
                    })
                    .collect();
                memo.many.insert(name.to_string(), merged);
                None
            }
            Some(earlier) => {
                let differ = earlier.len() != dims.len()
                    || earlier
                        .iter()
                        .zip(&dims)
                        .any(|(a, b)| self.env.known_different(a, b));
                differ.then(|| {
                    format!(
                        "`*{name}` is {} here but {} before",
                        self.show(&dims),
                        self.show(earlier)
                    )
                })
            }
            None => {
                memo.many.insert(name.to_string(), dims);
                None
            }
        }
    }

    fn dim_mismatch(&mut self, stated: &StatedDim, dim: &Dim, memo: &mut Memo) -> Option<String> {
        let shown = self.env.display(dim);
        match stated {
            StatedDim::Size(n) => self
                .env
                .known_different(dim, &Dim::konst(*n))
                .then(|| format!("the size is {shown}, not {n}")),
            StatedDim::Name(name) => match memo.sizes.get(name).cloned() {
                Some(earlier) => self.env.known_different(&earlier, dim).then(|| {
                    format!(
                        "`{name}` is {shown} here but {} before",
                        self.env.display(&earlier)
                    )
                }),
                None => {
                    memo.sizes.insert(name.clone(), dim.clone());
                    None
                }
            },
            StatedDim::Expr(e) => {
                let sizes = memo.sizes.clone();
                let value = self.stated_expr(e, &mut |_, n| sizes.get(n).cloned())?;
                self.env.known_different(&value, dim).then(|| {
                    format!(
                        "the size is {shown}, not {e} = {}",
                        self.env.display(&value)
                    )
                })
            }
            StatedDim::Broadcast(inner) => {
                if self.env.value(dim) == Some(1) {
                    return None;
                }
                self.dim_mismatch(inner, dim, memo)
            }
            StatedDim::Anonymous(_) | StatedDim::Many(_) => None,
        }
    }

    /// Whether the function's annotations are checked when it runs, so
    /// that a contradiction raises: a stub (it states what the code it
    /// stands for does), a checking decorator on it or on its class
    /// (`@jaxtyped(typechecker=beartype)`, `@beartype`, `@typechecked`),
    /// or an import hook in its module or in the analysed file
    /// (`install_import_hook`, `beartype_this_package`). Otherwise an
    /// annotation is documentation the code runs past.
    pub(crate) fn annotations_enforced(&self, f: &Function) -> bool {
        const CHECKERS: &[&str] = &["jaxtyped", "beartype", "typechecked", "typecheck"];
        const HOOKS: &[&str] = &[
            "install_import_hook",
            "beartype_this_package",
            "beartype_package",
            "beartype_all",
        ];
        if is_stub(&f.def) || self.in_stub_file(&f.def.range) {
            return true;
        }
        let checks = |decorators: &[shapels_syntax::ast::Expr]| {
            decorators.iter().any(|d| {
                let text = self.text(&d.range);
                CHECKERS.iter().any(|c| text.contains(c))
            })
        };
        if checks(&f.def.decorators) {
            return true;
        }
        let class = f.owner.as_ref().and_then(std::rc::Weak::upgrade);
        if class
            .as_ref()
            .and_then(|c| c.def.as_ref())
            .is_some_and(|def| checks(&def.decorators))
        {
            return true;
        }
        // The hook scan is not noted as a read of the text: a hook added
        // above a function whose result the next version takes over (see
        // `carry`) changes its reports' severity from the next full run.
        let hooked = |text: &str| HOOKS.iter().any(|h| text.contains(h));
        hooked(self.src) || hooked(self.module_text(&f.def.range))
    }

    /// Whether this annotation was reported already (another call, another
    /// size): one report per annotation is enough to point at it. What the
    /// report would have done to the run (torch raised) still holds.
    fn reported_here(&mut self, range: &TextRange, code: Code) -> bool {
        let here = self
            .diagnostics
            .iter()
            .any(|d| d.range == *range && d.code == code);
        if here && code == Code::ShapeAnnotation && self.uncertain == 0 {
            self.mark_raised();
        }
        here
    }

    fn show(&self, dims: &[Dim]) -> String {
        let parts: Vec<String> = dims.iter().map(|d| self.env.display(d)).collect();
        format!("[{}]", parts.join(", "))
    }

    fn show_tensor(&self, t: &Tensor) -> String {
        match self.resolve_shape(&t.shape) {
            Shape::Known(d) => self.show(&d),
            Shape::Tail(_, d) => {
                let mut parts = vec!["*".to_string()];
                parts.extend(d.iter().map(|d| self.env.display(d)));
                format!("[{}]", parts.join(", "))
            }
            Shape::Var(_) => "[...]".to_string(),
        }
    }

    /// Checks a call's arguments against the callee's stated parameter
    /// shapes: annotations as contracts (`shape-annotation`), docstrings
    /// as documentation (`shape-comment`). Returns the memo the return
    /// annotation is checked with, and whether the call raised (an
    /// annotation refused an argument on every path).
    pub(crate) fn check_arguments(
        &mut self,
        f: &Rc<Function>,
        arguments: &[(usize, Value)],
        defaulted: &[usize],
        report: bool,
    ) -> (Memo, Memo, bool) {
        let mut refused = false;
        let mut memo = Memo::default();
        let mut doc_memo = Memo::default();
        // A default the call left alone is not checked: beartype checks
        // what is passed.
        for (i, value) in arguments.iter().filter(|(i, _)| !defaulted.contains(i)) {
            let param = &f.def.params[*i];
            let tensor = match value {
                Value::Tensor(t) => t.clone(),
                Value::Optional(inner) => match inner.as_ref() {
                    Value::Tensor(t) => t.clone(),
                    _ => continue,
                },
                _ => continue,
            };
            let Some(claim) = self.param_claim(&f.def, &param.name.id) else {
                continue;
            };
            let memo = if claim.annotation {
                &mut memo
            } else {
                &mut doc_memo
            };
            // A module's `forward` documents what every caller passes it;
            // a helper's docstring, the use it was written for (diffusers'
            // sincos embedding documents `pos: (M,)` and is called with a
            // 2-D `timestep` where diffusion forcing is on). An annotation
            // is a contract either way.
            let module_input = f.owner.is_some() && f.def.name.id == "forward";
            if claim.annotation || module_input {
                self.settle_made_up_rank(&claim.shape, &tensor, memo);
            }
            let Some(why) = self.stated_mismatch(&claim.shape, &tensor, memo) else {
                continue;
            };
            let enforced = claim.annotation && self.annotations_enforced(f);
            if enforced && report {
                refused |= self.uncertain == 0;
            }
            let code = if claim.annotation {
                Code::ShapeAnnotation
            } else {
                Code::ShapeComment
            };
            if !report || self.reported_here(&claim.range, code) {
                continue;
            }
            let written = self.text(&claim.range).to_string();
            let related = tensor
                .made_at
                .map(|r| {
                    (
                        r,
                        format!("the argument is {} here", self.show_tensor(&tensor)),
                    )
                })
                .into_iter()
                .collect();
            if claim.annotation {
                self.report_as(
                    claim.range,
                    annotation_severity(enforced),
                    Code::ShapeAnnotation,
                    format!(
                        "`{}` is annotated {written}, but this call passes {}: {why}",
                        param.name.id,
                        self.show_tensor(&tensor)
                    ),
                    related,
                );
            } else {
                let fixes = self.docstring_fix(&claim, &tensor).into_iter().collect();
                self.report_with_fixes(
                    claim.range,
                    crate::report::Severity::Warning,
                    Code::ShapeComment,
                    format!(
                        "the docstring says `{}` is {written}, but this call passes {}: {why}",
                        param.name.id,
                        self.show_tensor(&tensor)
                    ),
                    related,
                    fixes,
                );
            }
        }
        (memo, doc_memo, refused)
    }

    /// A docstring's shape rewritten to what a call passes, in the
    /// docstring's words where they still hold.
    fn docstring_fix(&self, claim: &ParamClaim, tensor: &Tensor) -> Option<crate::report::Fix> {
        let style = claim.style?;
        let Shape::Known(dims) = self.resolve_shape(&tensor.shape) else {
            return None;
        };
        let views: Vec<crate::report::DimView> = dims
            .iter()
            .map(|d| match self.env.value(d) {
                Some(n) => crate::report::DimView::Known(n),
                None => match self.env.display(d) {
                    s if s == "?" => crate::report::DimView::Unknown,
                    s => crate::report::DimView::Symbol(s),
                },
            })
            .collect();
        let rewritten = crate::stated::comment::render(
            style,
            &crate::stated::claims::rewritten_dims(&claim.shape, &views),
        );
        Some(crate::report::Fix {
            title: format!("Change the docstring to {rewritten}"),
            edits: vec![(claim.range, rewritten)],
        })
    }

    /// Checks a returned value against the function's return annotation,
    /// or else against the return shape its docstring states.
    pub(crate) fn check_return(&mut self, value: &Value, at: &TextRange) {
        let Some(f) = self.frames.last().and_then(|fr| fr.function.clone()) else {
            return;
        };
        let Some(returns) = &f.def.returns else {
            self.check_documented_return(&f.def, value, at);
            return;
        };
        if crate::stated::annotation::read(self.text(&returns.range)).is_none() {
            self.check_documented_return(&f.def, value, at);
            return;
        }
        let Some((written, shown, why)) = self.annotation_mismatch(&returns.range, value) else {
            return;
        };
        let severity = annotation_severity(self.annotations_enforced(&f));
        self.report_as(
            returns.range,
            severity,
            Code::ShapeAnnotation,
            format!("the return is annotated {written}, but {shown} is returned: {why}"),
            vec![((*at), format!("returns {shown} here"))],
        );
    }

    /// Checks a returned tensor against the docstring's `Returns:` shape
    /// (or its `Shape:` section's `Output:`), with the names the call's
    /// arguments bound to the docstring's parameter shapes. Documentation,
    /// not a contract: a `shape-comment` warning with a fix rewriting it.
    fn check_documented_return(&mut self, def: &FunctionDef, value: &Value, at: &TextRange) {
        let Value::Tensor(tensor) = value else {
            return;
        };
        // Read once per function: a function returns many times.
        let key = def as *const FunctionDef as usize;
        let documented = match self.documented_returns.get(&key) {
            Some(known) => known.clone(),
            None => {
                let found = self.docstring(def).and_then(|(doc_range, doc)| {
                    crate::stated::docstring::read(doc)
                        .into_iter()
                        .find(|e| e.label == crate::stated::docstring::RETURN_LABEL)
                        .map(|e| {
                            let range: TextRange = (doc_range.start + e.span.start
                                ..doc_range.start + e.span.end)
                                .into();
                            (e.shape, range, e.style)
                        })
                });
                self.documented_returns.insert(key, found.clone());
                found
            }
        };
        let Some((shape, range, style)) = documented else {
            return;
        };
        let claim = ParamClaim {
            shape,
            range,
            annotation: false,
            style,
        };
        let mut memo = self.doc_memos.last().cloned().unwrap_or_default();
        let Some(why) = self.stated_mismatch(&claim.shape, tensor, &mut memo) else {
            return;
        };
        if self.reported_here(&claim.range, Code::ShapeComment) {
            return;
        }
        let written = self.text(&claim.range).to_string();
        let shown = self.show_tensor(tensor);
        let fixes = self
            .documented_return_fix(&claim, tensor, &memo)
            .into_iter()
            .collect();
        self.report_with_fixes(
            claim.range,
            crate::report::Severity::Warning,
            Code::ShapeComment,
            format!("the docstring says the return is {written}, but {shown} is returned: {why}"),
            vec![(*at, format!("returns {shown} here"))],
            fixes,
        );
    }

    /// A documented return rewritten to what is returned, each size by the
    /// name the docstring's parameters gave it (`(N, C)` for `[2, 3]` of
    /// `x (Tensor): (N, C, L)` given `[2, 3, 4]`) where one name has it.
    fn documented_return_fix(
        &self,
        claim: &ParamClaim,
        tensor: &Tensor,
        memo: &Memo,
    ) -> Option<crate::report::Fix> {
        let style = claim.style?;
        let Shape::Known(dims) = self.resolve_shape(&tensor.shape) else {
            return None;
        };
        let named: Vec<(&String, i64)> = memo
            .sizes
            .iter()
            .filter_map(|(name, d)| Some((name, self.env.value(d)?)))
            .collect();
        let words: Vec<String> = dims
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let Some(n) = self.env.value(d) else {
                    return self.env.display(d);
                };
                if let Some(StatedDim::Name(stated)) = claim.shape.dims.get(i)
                    && named.iter().any(|(name, v)| *name == stated && *v == n)
                {
                    return stated.clone();
                }
                let mut having = named.iter().filter(|(_, v)| *v == n);
                match (having.next(), having.next()) {
                    (Some((name, _)), None) => (*name).clone(),
                    _ => n.to_string(),
                }
            })
            .collect();
        let rewritten = crate::stated::comment::render(style, &words);
        Some(crate::report::Fix {
            title: format!("Change the docstring to {rewritten}"),
            edits: vec![(claim.range, rewritten)],
        })
    }

    /// What an annotation (at `annotation`) says that `value` contradicts:
    /// the annotation as written, the value shown, and why; `None` when
    /// it agrees, is no shape, or was reported there already.
    fn annotation_mismatch(
        &mut self,
        annotation: &TextRange,
        value: &Value,
    ) -> Option<(String, String, String)> {
        let Value::Tensor(tensor) = value else {
            return None;
        };
        let text = self.text(annotation);
        let stated = crate::stated::annotation::read(text)?;
        let written = text.to_string();
        let mut memo = self.stated_memos.last().cloned().unwrap_or_default();
        let why = self.stated_mismatch(&stated, tensor, &mut memo)?;
        if self.reported_here(annotation, Code::ShapeAnnotation) {
            return None;
        }
        Some((written, self.show_tensor(tensor), why))
    }

    /// Checks the value of an annotated assignment (`ids: Int[Tensor, "n"]
    /// = ...`) against its annotation, with the names of the enclosing
    /// call's memo.
    pub(crate) fn check_annotated(
        &mut self,
        annotation: &TextRange,
        value: &Value,
        at: &TextRange,
    ) {
        let Some((written, shown, why)) = self.annotation_mismatch(annotation, value) else {
            return;
        };
        let enforced = self
            .frames
            .last()
            .and_then(|fr| fr.function.clone())
            .is_some_and(|f| self.annotations_enforced(&f));
        self.report_as(
            *annotation,
            annotation_severity(enforced),
            Code::ShapeAnnotation,
            format!("annotated {written}, but the value is {shown}: {why}"),
            vec![((*at), format!("the value is {shown} here"))],
        );
    }
}

/// `1 dim`, `3 dims`.
pub(crate) fn dims_word(n: usize) -> String {
    if n == 1 {
        "1 dim".to_string()
    } else {
        format!("{n} dims")
    }
}

/// Whether a function is a stub: its body is nothing but `...`, `pass`
/// and a docstring (a `.pyi` file's functions, a declaration).
pub(crate) fn is_stub(def: &FunctionDef) -> bool {
    def.body.iter().all(|s| match &s.kind {
        StmtKind::Pass => true,
        StmtKind::Expr(e) => matches!(e.kind, ExprKind::Ellipsis | ExprKind::Str(_)),
        _ => false,
    })
}

impl Interp<'_> {
    /// What a call of a stub does: a stub `__init__` keeps its arguments
    /// as attributes (so `forward`'s annotation can name them), any other
    /// stub returns a tensor of its return annotation's shape, its names
    /// bound as the arguments bound them, then as the instance's
    /// attributes, then as new sizes.
    pub(crate) fn run_stub(&mut self, f: &Rc<Function>) -> Option<Value> {
        let locals = self.frames.last()?.locals.clone();
        let receiver = f
            .owner
            .as_ref()
            .and_then(|_| f.def.params.first())
            .and_then(|p| locals.borrow().get(p.name.id.as_str()).cloned());
        if f.def.name.id == "__init__" {
            let receiver = receiver?;
            for param in f.def.params.iter().skip(1) {
                let value = locals.borrow().get(param.name.id.as_str()).cloned();
                if let Some(value) = value {
                    self.set_attr(&receiver, &param.name.id, value);
                }
            }
            return None;
        }
        let returns = f.def.returns.as_ref()?;
        let stated = crate::stated::annotation::read(self.text(&returns.range))?;
        let memo = self.stated_memos.last().cloned().unwrap_or_default();
        let mut symbols: FxHashMap<String, Dim> = memo.sizes.clone();
        self.stated_ranks.clear();
        let mut names: Vec<String> = Vec::new();
        collect_names(&stated, &mut names);
        for name in names {
            if symbols.contains_key(&name) {
                continue;
            }
            if let Some(receiver) = &receiver
                && let Value::Int(d) = self.get_attr(receiver, &name, returns.range)
            {
                symbols.insert(name, d);
            }
        }
        // The result is where the inputs are.
        let device =
            f.def
                .params
                .iter()
                .find_map(|p| match locals.borrow().get(p.name.id.as_str()) {
                    Some(Value::Tensor(t)) => Some(t.device.clone()),
                    _ => None,
                });
        let value = self.stated_tensor_with(&stated, &mut symbols, &memo.many, &f.def.name.id);
        Some(match (value, device) {
            (Value::Tensor(t), Some(device)) => Value::Tensor(Rc::new(Tensor {
                device,
                op: Rc::from(f.def.name.id.as_str()),
                ..(*t).clone()
            })),
            (value, _) => value,
        })
    }
}

/// The names a stated shape uses, its expressions' included.
fn collect_names(stated: &StatedShape, out: &mut Vec<String>) {
    fn expr(e: &DimExpr, out: &mut Vec<String>) {
        match e {
            DimExpr::Int(_) => {}
            DimExpr::Name(n) => out.push(n.clone()),
            DimExpr::Add(a, b)
            | DimExpr::Sub(a, b)
            | DimExpr::Mul(a, b)
            | DimExpr::FloorDiv(a, b) => {
                expr(a, out);
                expr(b, out);
            }
        }
    }
    fn dim(d: &StatedDim, out: &mut Vec<String>) {
        match d {
            StatedDim::Name(n) => out.push(n.clone()),
            StatedDim::Expr(e) => expr(e, out),
            StatedDim::Broadcast(inner) => dim(inner, out),
            _ => {}
        }
    }
    for d in &stated.dims {
        dim(d, out);
    }
}

/// A contradicted annotation is an error where it is checked (the code
/// raises there) and a warning where nothing checks it.
fn annotation_severity(enforced: bool) -> crate::report::Severity {
    if enforced {
        crate::report::Severity::Error
    } else {
        crate::report::Severity::Warning
    }
}
