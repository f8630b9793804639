//! Stated shapes as inputs: a parameter nobody passes becomes a tensor of the shape its annotation or docstring states.

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{ExprKind, FunctionDef, ParamKind, StmtKind};

use super::ParamClaim;
use crate::interp::Interp;
use crate::report::TextRange;
use crate::rules::meta::Meta;
use crate::stated::{DimExpr, StatedDim, StatedShape};
use crate::value::{Shape, Value};

impl Interp<'_> {
    /// The shape a parameter's annotation, or else the function's
    /// docstring, states.
    pub(crate) fn param_claim(&self, def: &FunctionDef, name: &str) -> Option<ParamClaim> {
        let param = def.params.iter().find(|p| p.name.id == name)?;
        if let Some(annotation) = &param.annotation {
            let text = self.text(&annotation.range);
            if let Some(shape) = crate::stated::annotation::read(text) {
                return Some(ParamClaim {
                    shape,
                    range: annotation.range,
                    annotation: true,
                    style: None,
                });
            }
        }
        let (doc_range, doc) = self.docstring(def)?;
        let tensor_params: Vec<&str> = def
            .params
            .iter()
            .filter(|p| !matches!(p.name.id.as_str(), "self" | "cls"))
            .filter(|p| matches!(p.kind, ParamKind::Normal { .. } | ParamKind::KwOnly))
            .map(|p| p.name.id.as_str())
            .collect();
        crate::stated::docstring::read(doc)
            .into_iter()
            .find(|entry| {
                entry.label == name
                    // torch's `Shape:` sections call the first input `Input`.
                    || (entry.label == "Input" && tensor_params.first() == Some(&name))
            })
            .map(|entry| ParamClaim {
                shape: entry.shape,
                range: (doc_range.start + entry.span.start..doc_range.start + entry.span.end)
                    .into(),
                annotation: false,
                style: entry.style,
            })
    }

    /// Whether a parameter's annotation declares the function generic in
    /// its sizes: a named size, a size expression or a variadic entry
    /// (`x: Float[Tensor, "b t d"]`, `Tensor[[B, T]]`), which say the
    /// function is written for any size there. Fixed sizes and anonymous
    /// ones (`"_ 3"`) name nothing the hints could show. Docstrings and
    /// comments document one use; they do not count.
    pub(crate) fn declares_generic(&self, def: &FunctionDef) -> bool {
        def.params.iter().any(|param| {
            param.annotation.as_ref().is_some_and(|annotation| {
                crate::stated::annotation::read(self.text(&annotation.range)).is_some_and(|shape| {
                    shape
                        .dims
                        .iter()
                        .any(|d| !matches!(d, StatedDim::Size(_) | StatedDim::Anonymous(_)))
                })
            })
        })
    }

    /// A function's docstring: its range and text.
    pub(super) fn docstring<'a>(&'a self, def: &FunctionDef) -> Option<(TextRange, &'a str)> {
        let first = def.body.first()?;
        let StmtKind::Expr(e) = &first.kind else {
            return None;
        };
        if !matches!(e.kind, ExprKind::Str(_)) {
            return None;
        }
        // Only the shapes it states are read, not its words: typing in a
        // docstring leaves the analysis as it was (see `carry`).
        let text = self.source(&e.range);
        if crate::workspace::is_local(&e.range) {
            self.reads
                .borrow_mut()
                .stated_docstring(e.range, crate::stated::docstring::key(text));
        }
        Some((e.range, text))
    }

    /// A tensor of the stated shape, for a parameter nobody passes. A
    /// stated size of 0 makes nothing up: an empty tensor is no input a
    /// model's code is written for, and such a claim is mostly a slip for a
    /// 0-d tensor (`sigma: Float[Tensor, "0"]` called with a scalar tensor),
    /// which would spread sizes of 0 through every line it meets.
    pub(crate) fn stated_tensor(
        &mut self,
        stated: &StatedShape,
        symbols: &mut FxHashMap<String, Dim>,
        name: &str,
    ) -> Value {
        if stated.dims.iter().any(|d| matches!(d, StatedDim::Size(0))) {
            return Value::Unknown;
        }
        self.stated_tensor_with(stated, symbols, &FxHashMap::default(), name)
    }

    /// `stated_tensor`, with the dims `*name` entries stand for where known.
    pub(super) fn stated_tensor_with(
        &mut self,
        stated: &StatedShape,
        symbols: &mut FxHashMap<String, Dim>,
        many: &FxHashMap<String, Vec<Dim>>,
        name: &str,
    ) -> Value {
        let shape = self.stated_shape(stated, symbols, many);
        let dtype = stated.dtype.and_then(|d| d.default_dtype());
        Value::Tensor(Rc::new(self.new_tensor(shape, dtype, None, name)))
    }

    fn stated_shape(
        &mut self,
        stated: &StatedShape,
        symbols: &mut FxHashMap<String, Dim>,
        many: &FxHashMap<String, Vec<Dim>>,
    ) -> Shape {
        let mut dims = Vec::new();
        let mut known_many = false;
        for (i, d) in stated.dims.iter().enumerate() {
            match d {
                // `*batch` bound by the arguments: the dims it stood for.
                StatedDim::Many(Some(n)) if many.contains_key(n) => {
                    dims.extend(many[n].iter().cloned());
                    known_many = true;
                }
                StatedDim::Many(_) if i == 0 => {}
                // Dims before a variadic entry that ends the shape (`[N x C
                // x ...]`) are the first sizes of a tensor of open rank, as
                // `x.size(0)` read from one would be; before one in the
                // middle, the rank stays open.
                StatedDim::Many(_) if i + 1 == stated.dims.len() => {
                    let var = self.fresh_rank_var();
                    if let Shape::Var(v) = var {
                        for (k, d) in dims.into_iter().enumerate() {
                            self.var_dims.insert((v, k as i64), d);
                        }
                    }
                    return var;
                }
                StatedDim::Many(_) => return self.fresh_rank_var(),
                d => match self.stated_dim(d, symbols) {
                    Some(dim) => dims.push(dim),
                    None => dims.push(self.env.anonymous()),
                },
            }
        }
        if stated.many_at() == Some(0) && !known_many {
            // `*batch` in two parameters of one signature is one rank
            // variable: the same leading dims.
            let name = match &stated.dims[0] {
                StatedDim::Many(Some(n)) => Some(n.clone()),
                _ => None,
            };
            if let Some(v) = name.as_ref().and_then(|n| self.stated_ranks.get(n)) {
                return Shape::Tail(*v, Rc::new(dims));
            }
            let Shape::Var(v) = self.fresh_rank_var() else {
                return Shape::known(dims);
            };
            if let Some(n) = name {
                self.rank_names.insert(v, Rc::from(n.as_str()));
                self.stated_ranks.insert(n, v);
            }
            return Shape::Tail(v, Rc::new(dims));
        }
        Shape::known(dims)
    }

    /// A made-up input of unknown rank (a parameter of a function run for
    /// any input, whose own code says nothing of its rank) passed where the
    /// callee's annotation or docstring states a shape of fixed rank takes
    /// that shape: the callee's words are all that is known of it, as they
    /// would be had the callee itself been run for any input. A name the
    /// call's other arguments already bound (`N` of `x: [N x C x ...]`) is
    /// their size; any other is a new size of that name, which a name the
    /// caller's code gives it outranks. A tensor some code made is never
    /// reshaped by a claim: only where nothing at all is known of the rank
    /// does documentation fill it in. Only the function the input was made
    /// up for hands it on so: what a callee deeper down states is what the
    /// functions between pass it, not what the input is.
    pub(super) fn settle_made_up_rank(
        &mut self,
        stated: &StatedShape,
        tensor: &crate::value::Tensor,
        memo: &mut super::Memo,
    ) {
        let Shape::Var(var) = self.resolve_shape(&tensor.shape) else {
            return;
        };
        if self.made_up_depth.get(&var).map(|d| d + 1) != Some(self.frames.len())
            || stated
                .dims
                .iter()
                .any(|d| matches!(d, StatedDim::Many(_) | StatedDim::Size(0)))
        {
            return;
        }
        let mut dims = Vec::with_capacity(stated.dims.len());
        for d in &stated.dims {
            let dim = match d {
                // The callee's word for a size is weaker than a name the
                // caller's own code gives it (`channels` of the layer the
                // input meets first).
                StatedDim::Name(n) if !memo.sizes.contains_key(n) => {
                    let dim = self.env.weak_symbol(n);
                    memo.sizes.insert(n.clone(), dim.clone());
                    dim
                }
                d => self
                    .stated_dim(d, &mut memo.sizes)
                    .unwrap_or_else(|| self.env.anonymous()),
            };
            dims.push(dim);
        }
        // Sizes read of the input before (`emb.size(0)`) are these dims.
        let n = dims.len() as i64;
        for (i, dim) in dims.iter().enumerate() {
            let i = i as i64;
            if let Some(earlier) = self.read_before(var, i, n) {
                let _ = self.env.unify(&earlier, dim);
            }
        }
        self.set_rank(var, Rc::new(dims));
    }

    fn stated_dim(&mut self, d: &StatedDim, symbols: &mut FxHashMap<String, Dim>) -> Option<Dim> {
        match d {
            StatedDim::Size(n) => Some(Dim::konst(*n)),
            StatedDim::Name(n) => Some(self.named(n, symbols)),
            StatedDim::Expr(e) => {
                self.stated_expr(e, &mut |interp, n| Some(interp.named(n, symbols)))
            }
            StatedDim::Anonymous(Some(n)) => Some(self.env.symbol(n)),
            StatedDim::Anonymous(None) => Some(self.env.anonymous()),
            StatedDim::Broadcast(inner) => self.stated_dim(inner, symbols),
            StatedDim::Many(_) => None,
        }
    }

    fn named(&mut self, name: &str, symbols: &mut FxHashMap<String, Dim>) -> Dim {
        if let Some(d) = symbols.get(name) {
            return d.clone();
        }
        let d = self.env.symbol(name);
        symbols.insert(name.to_string(), d.clone());
        d
    }

    pub(super) fn stated_expr(
        &mut self,
        e: &DimExpr,
        name: &mut dyn FnMut(&mut Self, &str) -> Option<Dim>,
    ) -> Option<Dim> {
        Some(match e {
            DimExpr::Int(n) => Dim::konst(*n),
            DimExpr::Name(n) => name(self, n)?,
            DimExpr::Add(a, b) => self.stated_expr(a, name)?.add(&self.stated_expr(b, name)?),
            DimExpr::Sub(a, b) => self.stated_expr(a, name)?.sub(&self.stated_expr(b, name)?),
            DimExpr::Mul(a, b) => self.stated_expr(a, name)?.mul(&self.stated_expr(b, name)?),
            DimExpr::FloorDiv(a, b) => self
                .stated_expr(a, name)?
                .floordiv(&self.stated_expr(b, name)?)?,
        })
    }
}
