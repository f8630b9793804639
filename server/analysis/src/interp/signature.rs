//! What an uncalled function's parameters are, read from the function itself.
//!
//! In library mode nothing calls a function, so its arguments are made up.
//! Two sources say what they are: how the body uses each parameter (`x.view`,
//! `x @ w` and `torch.exp(x)` make it a tensor), and shape comments the
//! author wrote (`# a: (N, D), b: (M, D) -> (N, M)`), which also give the
//! tensor its rank and names its dims.

use rustc_hash::FxHashMap;

use shapels_shapes::Dim;
use shapels_syntax::ast::{Arg, BinOp, Expr, ExprKind, FStringPart, FunctionDef, Stmt, StmtKind};

use super::Interp;

/// Tensor attributes and methods: a parameter used with one is a tensor
/// (unless it is also used as a module, see `MODULE_MEMBERS`). `.device`
/// and `.dtype` are not among them: Hugging Face models have them too.
const TENSOR_MEMBERS: &[&str] = &[
    "shape",
    "size",
    "dim",
    "ndim",
    "view",
    "reshape",
    "transpose",
    "permute",
    "T",
    "mT",
    "contiguous",
    "unsqueeze",
    "squeeze",
    "flatten",
    "unflatten",
    "clamp",
    "exp",
    "log",
    "sum",
    "mean",
    "max",
    "min",
    "softmax",
    "log_softmax",
    "masked_fill",
    "float",
    "long",
    "half",
    "int",
    "bool",
    "chunk",
    "split",
    "expand",
    "expand_as",
    "repeat",
    "numel",
    "matmul",
    "argmax",
    "argmin",
    "abs",
    "sqrt",
    "pow",
    "norm",
    "type_as",
    "detach",
    "clone",
    "narrow",
    "gather",
    "index_select",
    "cumsum",
    "topk",
    "sort",
    "unbind",
    "var",
    "std",
    "sigmoid",
    "tanh",
    "relu",
    "view_as",
    "reshape_as",
    "new_zeros",
    "new_ones",
    "new_full",
    "new_empty",
    "is_cuda",
    "bmm",
    "mm",
    "t",
    "flip",
    "roll",
    "movedim",
    "tril",
    "triu",
    "scatter",
    "masked_select",
    "nonzero",
    "any",
    "all",
    "item",
    "tolist",
];

/// Members only modules have: a parameter used with one is a module, even
/// where it shares a cast with tensors (`model.half()`).
const MODULE_MEMBERS: &[&str] = &[
    "parameters",
    "named_parameters",
    "buffers",
    "named_buffers",
    "modules",
    "named_modules",
    "children",
    "named_children",
    "state_dict",
    "load_state_dict",
    "eval",
    "train",
    "zero_grad",
    "apply",
    "register_buffer",
    "register_forward_hook",
];

/// Torch functions that make tensors rather than take them first.
const FACTORIES: &[&str] = &[
    "zeros",
    "ones",
    "empty",
    "full",
    "randn",
    "rand",
    "randint",
    "arange",
    "linspace",
    "logspace",
    "eye",
    "tensor",
    "as_tensor",
    "device",
    "manual_seed",
    "randperm",
    "Size",
    "from_numpy",
];

impl Interp<'_> {
    /// Parameters the body uses as tensors.
    pub(crate) fn tensor_params(&self, def: &FunctionDef) -> Vec<String> {
        let names: Vec<&str> = def.params.iter().map(|p| p.name.id.as_str()).collect();
        let mut found: Vec<String> = Vec::new();
        let derived = array_locals(&def.body);
        let mut arrays: Vec<String> = Vec::new();
        let mut visit = |e: &Expr| {
            let mut mark = |inner: &Expr| {
                if let ExprKind::Name(n) = &inner.kind
                    && names.contains(&n.as_str())
                    && !found.contains(n)
                {
                    found.push(n.clone());
                }
            };
            // Arrays reaching a torch op (`torch.sum(w * (t[..., 1:] -
            // t[..., :-1]))`) are tensors: numpy arrays are refused there.
            // Their methods say less: numpy has `.sum()` too.
            let mut mark_arrays = |inner: &Expr| array_names(inner, &derived, &mut arrays);
            match &e.kind {
                ExprKind::Attribute { value, attr }
                    if TENSOR_MEMBERS.contains(&attr.id.as_str()) =>
                {
                    mark(value)
                }
                ExprKind::BinOp {
                    left,
                    op: BinOp::MatMul,
                    right,
                } => {
                    mark(left);
                    mark(right);
                }
                ExprKind::Call { func, args } => {
                    let first = args.iter().find_map(|a| match a {
                        Arg::Positional(e) => Some(e),
                        _ => None,
                    });
                    let callee = self.text(&func.range);
                    let last = callee.rsplit('.').next().unwrap_or("");
                    // A class (`torch.nn.Embedding(vocab, dim)`, `torch.Size`)
                    // takes sizes and settings, not a tensor; so does
                    // `torch.device`.
                    let constructor =
                        last.starts_with(|c: char| c.is_ascii_uppercase()) || last == "device";
                    let torch_op = (callee.starts_with("torch.") || callee.starts_with("F."))
                        && !FACTORIES.contains(&last)
                        && !constructor;
                    // `self.layer(x)`: a module's input is a tensor.
                    let layer_call =
                        callee.starts_with("self.") && callee.matches('.').count() == 1;
                    if let Some(first) = first
                        && (torch_op || layer_call)
                    {
                        mark(first);
                    }
                    if torch_op {
                        for a in args {
                            if let Arg::Positional(e) = a {
                                mark_arrays(e);
                            }
                        }
                    }
                    if callee.ends_with("einsum") {
                        for a in args.iter().skip(1) {
                            if let Arg::Positional(e) = a {
                                mark(e);
                            }
                        }
                    }
                }
                _ => {}
            }
        };
        for stmt in &def.body {
            walk_stmt(stmt, &mut visit);
        }
        for n in arrays {
            if names.contains(&n.as_str()) && !found.contains(&n) {
                found.push(n);
            }
        }
        // A parameter the body calls (`model(x)`) or uses as a module
        // (`model.eval()`) is not a tensor, whatever else it shares with
        // tensors (`model.float()`).
        let mut called: Vec<String> = Vec::new();
        let mut calls = |e: &Expr| {
            let used = match &e.kind {
                ExprKind::Call { func, .. } => Some(&**func),
                ExprKind::Attribute { value, attr }
                    if MODULE_MEMBERS.contains(&attr.id.as_str()) =>
                {
                    Some(&**value)
                }
                _ => None,
            };
            if let Some(used) = used
                && let ExprKind::Name(n) = &used.kind
                && names.contains(&n.as_str())
            {
                called.push(n.clone());
            }
        };
        for stmt in &def.body {
            walk_stmt(stmt, &mut calls);
        }
        found.retain(|n| !called.contains(n));
        found
    }

    /// Shapes of parameters stated in comments inside the function:
    /// `# x: (batch, seq, d_model)` or `# a: [N, D]`. Dims named alike in one
    /// function share a symbol; `...` or `*` makes the comment unusable.
    pub(crate) fn comment_shapes(&mut self, def: &FunctionDef) -> FxHashMap<String, Vec<Dim>> {
        let mut out = FxHashMap::default();
        // Only what the comments state is read, not the whole text: an
        // edit elsewhere in the function leaves it as it was.
        let stated = shape_comments(self.source(&def.range));
        if crate::workspace::is_local(&def.range) {
            self.reads
                .borrow_mut()
                .shape_comments(def.range, stated.clone());
        }
        let params: Vec<&str> = def.params.iter().map(|p| p.name.id.as_str()).collect();
        let mut symbols: FxHashMap<String, Dim> = FxHashMap::default();
        for (name, dims) in stated {
            if !params.contains(&name.as_str()) || out.contains_key(&name) {
                continue;
            }
            let mut shape = Vec::new();
            let mut usable = true;
            for token in dims {
                if let Ok(n) = token.parse::<i64>() {
                    shape.push(Dim::konst(n));
                } else if is_identifier(&token) {
                    let d = symbols
                        .entry(token.clone())
                        .or_insert_with(|| self.env.symbol(&token))
                        .clone();
                    shape.push(d);
                } else {
                    usable = false;
                }
            }
            if usable {
                out.insert(name, shape);
            }
        }
        out
    }
}

/// Parameters used only to pick a dim (`x.mean(dim=dim)`): their default is
/// which dims the function works on, not a size, and is kept as given.
pub(crate) fn dim_params(def: &FunctionDef) -> Vec<String> {
    let names: Vec<&str> = def.params.iter().map(|p| p.name.id.as_str()).collect();
    let mut as_dim: Vec<String> = Vec::new();
    let mut elsewhere: Vec<String> = Vec::new();
    let mut visit = |e: &Expr| match &e.kind {
        ExprKind::Call { args, .. } => {
            for a in args {
                if let Arg::Keyword(k, v) = a
                    && matches!(
                        k.id.as_str(),
                        "dim" | "axis" | "dims" | "start_dim" | "end_dim"
                    )
                    && let ExprKind::Name(n) = &v.kind
                    && names.contains(&n.as_str())
                {
                    as_dim.push(n.clone());
                }
            }
        }
        ExprKind::Name(n) if names.contains(&n.as_str()) => elsewhere.push(n.clone()),
        _ => {}
    };
    for stmt in &def.body {
        walk_stmt(stmt, &mut visit);
    }
    // Every occurrence is also visited as a plain name: a parameter is a
    // dim selector when all its occurrences are the keyword uses.
    as_dim
        .iter()
        .filter(|n| {
            elsewhere.iter().filter(|m| m == n).count() == as_dim.iter().filter(|m| m == n).count()
        })
        .cloned()
        .collect()
}

/// Whether the function calls one of the named classes (a model factory).
pub(crate) fn instantiates_any(def: &FunctionDef, classes: &[std::rc::Rc<str>]) -> bool {
    !instantiated(def, classes).is_empty()
}

/// Which of `classes` the function calls by name (builds), by index.
pub(crate) fn instantiated(def: &FunctionDef, classes: &[std::rc::Rc<str>]) -> Vec<usize> {
    let mut found: Vec<usize> = Vec::new();
    let mut visit = |e: &Expr| {
        if let ExprKind::Call { func, .. } = &e.kind
            && let ExprKind::Name(n) = &func.kind
            && let Some(i) = classes.iter().position(|c| **c == **n)
            && !found.contains(&i)
        {
            found.push(i);
        }
    };
    for stmt in &def.body {
        walk_stmt(stmt, &mut visit);
    }
    found
}

/// Every `name: (dims)` stated in a comment among a function's first
/// lines, in order, as written.
pub(crate) fn shape_comments(text: &str) -> Vec<(String, Vec<String>)> {
    text.lines()
        .take(64)
        .filter_map(|line| {
            crate::stated::comment::comment_start(line).map(|hash| &line[hash + 1..])
        })
        .flat_map(parse_shape_comment)
        .collect()
}

/// `a: (N, D), b: (M, D) -> (N, M)` → `[("a", ["N","D"]), ("b", ["M","D"])]`.
fn parse_shape_comment(comment: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let bytes: Vec<char> = comment.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        // An identifier followed by `:` and an opening bracket.
        if bytes[i].is_alphabetic() || bytes[i] == '_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_alphanumeric() || bytes[i] == '_') {
                i += 1;
            }
            let name: String = bytes[start..i].iter().collect();
            let mut j = i;
            while j < bytes.len() && bytes[j] == ' ' {
                j += 1;
            }
            if j < bytes.len() && bytes[j] == ':' {
                j += 1;
                while j < bytes.len() && bytes[j] == ' ' {
                    j += 1;
                }
                if j < bytes.len() && (bytes[j] == '(' || bytes[j] == '[') {
                    let close = if bytes[j] == '(' { ')' } else { ']' };
                    if let Some(end) = bytes[j + 1..].iter().position(|c| *c == close) {
                        let inner: String = bytes[j + 1..j + 1 + end].iter().collect();
                        let dims: Vec<String> = inner
                            .split(',')
                            .map(|t| t.trim().to_string())
                            .filter(|t| !t.is_empty())
                            .collect();
                        // `(bchw)` is not a tuple (letters of one dims
                        // string, einops style); `(N,)` and `[N]` are.
                        let tuple = close == ']' || inner.contains(',') || dims.is_empty();
                        if tuple {
                            out.push((name, dims));
                        }
                        i = j + 1 + end + 1;
                        continue;
                    }
                }
            }
            continue;
        }
        i += 1;
    }
    out
}

/// A Python identifier (names made from it are valid dim expressions).
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// Whether a subscript's index can only index an array: an `...`, a new
/// axis, or a slice among several indices (`t[..., 1:]`, `x[:, None]`,
/// `x[:, 0]`). A dict's tuple key (`cache[layer, step]`) is none of these.
fn indexes_an_array(index: &[Expr]) -> bool {
    index.iter().any(|i| {
        matches!(i.kind, ExprKind::Ellipsis | ExprKind::NoneLit)
            || (index.len() > 1 && matches!(i.kind, ExprKind::Slice { .. }))
    })
}

/// Names an expression indexes as arrays on its way into an op, through
/// arithmetic and tensor methods: `t` in `(t[..., 1:] + t[..., :-1]) / 2`.
/// A local made from such indexing (`derived`) stands for the names it was
/// made from. A bare name in the arithmetic says nothing: it may be a
/// number (`alpha * x`).
fn array_names(e: &Expr, derived: &FxHashMap<String, Vec<String>>, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Name(n) => {
            if let Some(sources) = derived.get(n) {
                out.extend(sources.iter().cloned());
            }
        }
        ExprKind::Subscript { value, index } => {
            if let ExprKind::Name(n) = &value.kind
                && indexes_an_array(index)
            {
                out.push(n.clone());
            }
            array_names(value, derived, out);
        }
        ExprKind::BinOp { left, right, .. } => {
            array_names(left, derived, out);
            array_names(right, derived, out);
        }
        ExprKind::UnaryOp { operand, .. } => array_names(operand, derived, out),
        ExprKind::Call { func, .. } => {
            if let ExprKind::Attribute { value, attr } = &func.kind
                && TENSOR_MEMBERS.contains(&attr.id.as_str())
            {
                array_names(value, derived, out);
            }
        }
        _ => {}
    }
}

/// Locals a function makes by indexing arrays (`ut = (t[..., 1:] + t[...,
/// :-1]) / 2`), each with the names it was made from, so that `ut` reaching
/// a tensor op says `t` is a tensor.
fn array_locals(body: &[Stmt]) -> FxHashMap<String, Vec<String>> {
    let mut derived: FxHashMap<String, Vec<String>> = FxHashMap::default();
    fn visit(body: &[Stmt], derived: &mut FxHashMap<String, Vec<String>>) {
        for stmt in body {
            match &stmt.kind {
                StmtKind::Assign {
                    targets,
                    value: Some(value),
                    ..
                } if targets.len() == 1 => {
                    if let ExprKind::Name(n) = &targets[0].kind {
                        let mut sources = Vec::new();
                        array_names(value, derived, &mut sources);
                        if !sources.is_empty() {
                            sources.sort();
                            sources.dedup();
                            derived.entry(n.clone()).or_default().extend(sources);
                        }
                    }
                }
                _ => {
                    for block in stmt.nested_blocks() {
                        visit(block, derived);
                    }
                }
            }
        }
    }
    visit(body, &mut derived);
    derived
}

/// Visit every expression of a statement, nested blocks included.
pub(crate) fn walk_stmt(stmt: &Stmt, f: &mut dyn FnMut(&Expr)) {
    let block = |body: &[Stmt], f: &mut dyn FnMut(&Expr)| {
        for s in body {
            walk_stmt(s, f);
        }
    };
    match &stmt.kind {
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) | StmtKind::Raise(Some(e)) => walk_expr(e, f),
        StmtKind::Assign { targets, value, .. } => {
            for t in targets {
                walk_expr(t, f);
            }
            if let Some(v) = value {
                walk_expr(v, f);
            }
        }
        StmtKind::AugAssign { target, value, .. } => {
            walk_expr(target, f);
            walk_expr(value, f);
        }
        StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
            walk_expr(test, f);
            block(body, f);
            block(orelse, f);
        }
        StmtKind::For {
            target,
            iter,
            body,
            orelse,
        } => {
            walk_expr(target, f);
            walk_expr(iter, f);
            block(body, f);
            block(orelse, f);
        }
        StmtKind::With { items, body } => {
            for item in items {
                walk_expr(&item.context, f);
            }
            block(body, f);
        }
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finalbody,
        } => {
            block(body, f);
            for h in handlers {
                block(&h.body, f);
            }
            block(orelse, f);
            block(finalbody, f);
        }
        StmtKind::Assert { test, .. } => walk_expr(test, f),
        _ => {}
    }
}

/// Visit an expression and everything inside it.
pub(crate) fn walk_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Attribute { value, .. }
        | ExprKind::Starred(value)
        | ExprKind::DoubleStarred(value)
        | ExprKind::Await(value) => walk_expr(value, f),
        ExprKind::Subscript { value, index } => {
            walk_expr(value, f);
            for i in index {
                walk_expr(i, f);
            }
        }
        ExprKind::Slice { lower, upper, step } => {
            for p in [lower, upper, step].into_iter().flatten() {
                walk_expr(p, f);
            }
        }
        ExprKind::Call { func, args } => {
            walk_expr(func, f);
            for a in args {
                match a {
                    Arg::Positional(e)
                    | Arg::Starred(e)
                    | Arg::Keyword(_, e)
                    | Arg::DoubleStarred(e) => walk_expr(e, f),
                }
            }
        }
        ExprKind::BinOp { left, right, .. } => {
            walk_expr(left, f);
            walk_expr(right, f);
        }
        ExprKind::UnaryOp { operand, .. } => walk_expr(operand, f),
        ExprKind::BoolOp { values, .. }
        | ExprKind::Tuple(values)
        | ExprKind::List(values)
        | ExprKind::Set(values) => {
            for v in values {
                walk_expr(v, f);
            }
        }
        ExprKind::Compare {
            left, comparators, ..
        } => {
            walk_expr(left, f);
            for c in comparators {
                walk_expr(c, f);
            }
        }
        ExprKind::IfExp { test, body, orelse } => {
            walk_expr(test, f);
            walk_expr(body, f);
            walk_expr(orelse, f);
        }
        ExprKind::FString(parts) => {
            for part in parts {
                if let FStringPart::Value { value, .. } = part {
                    walk_expr(value, f);
                }
            }
        }
        ExprKind::Dict(entries) => {
            for (k, v) in entries {
                if let Some(k) = k {
                    walk_expr(k, f);
                }
                walk_expr(v, f);
            }
        }
        ExprKind::Comprehension {
            elt, generators, ..
        } => {
            walk_expr(elt, f);
            for g in generators {
                walk_expr(&g.iter, f);
                for c in &g.ifs {
                    walk_expr(c, f);
                }
            }
        }
        ExprKind::NamedExpr { value, .. } => walk_expr(value, f),
        _ => {}
    }
}
