//! Moving lowered statements by an edit's length: an incremental reparse
//! keeps the statements after the edited lines instead of lowering them
//! again, and only their byte ranges change.
//!
//! Every match below is exhaustive on purpose: a node kind added to `ast`
//! does not compile until it says how its ranges move.

use std::rc::Rc;

use crate::ast::{
    Alias, Arg, ClassDef, Comprehension, ExceptHandler, Expr, ExprKind, FunctionDef, Name, Param,
    Stmt, StmtKind, TextRange, WithItem,
};

/// A copy of `stmt` with every range moved by `delta` bytes.
pub(crate) fn stmt(s: &Stmt, delta: isize) -> Stmt {
    Stmt {
        range: range(&s.range, delta),
        kind: stmt_kind(&s.kind, delta),
    }
}

fn range(r: &TextRange, delta: isize) -> TextRange {
    let at = |p: usize| p.saturating_add_signed(delta);
    at(r.start)..at(r.end)
}

fn stmts(body: &[Stmt], delta: isize) -> Vec<Stmt> {
    body.iter().map(|s| stmt(s, delta)).collect()
}

fn exprs(items: &[Expr], delta: isize) -> Vec<Expr> {
    items.iter().map(|e| expr(e, delta)).collect()
}

fn opt(e: &Option<Expr>, delta: isize) -> Option<Expr> {
    e.as_ref().map(|e| expr(e, delta))
}

fn boxed(e: &Expr, delta: isize) -> Box<Expr> {
    Box::new(expr(e, delta))
}

fn name(n: &Name, delta: isize) -> Name {
    Name {
        id: n.id.clone(),
        range: range(&n.range, delta),
    }
}

fn stmt_kind(kind: &StmtKind, delta: isize) -> StmtKind {
    match kind {
        StmtKind::Expr(e) => StmtKind::Expr(expr(e, delta)),
        StmtKind::Assign {
            targets,
            annotation,
            value,
        } => StmtKind::Assign {
            targets: exprs(targets, delta),
            annotation: opt(annotation, delta),
            value: opt(value, delta),
        },
        StmtKind::AugAssign { target, op, value } => StmtKind::AugAssign {
            target: expr(target, delta),
            op: *op,
            value: expr(value, delta),
        },
        StmtKind::FunctionDef(f) => StmtKind::FunctionDef(Rc::new(function(f, delta))),
        StmtKind::ClassDef(c) => StmtKind::ClassDef(Rc::new(class(c, delta))),
        StmtKind::Return(e) => StmtKind::Return(opt(e, delta)),
        StmtKind::If { test, body, orelse } => StmtKind::If {
            test: expr(test, delta),
            body: stmts(body, delta),
            orelse: stmts(orelse, delta),
        },
        StmtKind::For {
            target,
            iter,
            body,
            orelse,
        } => StmtKind::For {
            target: expr(target, delta),
            iter: expr(iter, delta),
            body: stmts(body, delta),
            orelse: stmts(orelse, delta),
        },
        StmtKind::While { test, body, orelse } => StmtKind::While {
            test: expr(test, delta),
            body: stmts(body, delta),
            orelse: stmts(orelse, delta),
        },
        StmtKind::With { items, body } => StmtKind::With {
            items: items
                .iter()
                .map(|i| WithItem {
                    context: expr(&i.context, delta),
                    target: opt(&i.target, delta),
                })
                .collect(),
            body: stmts(body, delta),
        },
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finalbody,
        } => StmtKind::Try {
            body: stmts(body, delta),
            handlers: handlers
                .iter()
                .map(|h| ExceptHandler {
                    typ: opt(&h.typ, delta),
                    name: h.name.as_ref().map(|n| name(n, delta)),
                    body: stmts(&h.body, delta),
                })
                .collect(),
            orelse: stmts(orelse, delta),
            finalbody: stmts(finalbody, delta),
        },
        StmtKind::Import(aliases) => StmtKind::Import(self::aliases(aliases, delta)),
        StmtKind::ImportFrom { module, names } => StmtKind::ImportFrom {
            module: module.clone(),
            names: aliases(names, delta),
        },
        StmtKind::Assert { test, msg } => StmtKind::Assert {
            test: expr(test, delta),
            msg: opt(msg, delta),
        },
        StmtKind::Raise(e) => StmtKind::Raise(opt(e, delta)),
        StmtKind::Delete(targets) => StmtKind::Delete(exprs(targets, delta)),
        StmtKind::Global(names) => StmtKind::Global(names.iter().map(|n| name(n, delta)).collect()),
        StmtKind::Pass => StmtKind::Pass,
        StmtKind::Break => StmtKind::Break,
        StmtKind::Continue => StmtKind::Continue,
        StmtKind::Other => StmtKind::Other,
    }
}

fn aliases(items: &[Alias], delta: isize) -> Vec<Alias> {
    items
        .iter()
        .map(|a| Alias {
            name: a.name.clone(),
            asname: a.asname.as_ref().map(|n| name(n, delta)),
            range: range(&a.range, delta),
        })
        .collect()
}

fn params(items: &[Param], delta: isize) -> Vec<Param> {
    items
        .iter()
        .map(|p| Param {
            name: name(&p.name, delta),
            kind: p.kind,
            annotation: opt(&p.annotation, delta),
            default: opt(&p.default, delta),
        })
        .collect()
}

fn function(f: &FunctionDef, delta: isize) -> FunctionDef {
    FunctionDef {
        name: name(&f.name, delta),
        params: params(&f.params, delta),
        returns: opt(&f.returns, delta),
        body: stmts(&f.body, delta),
        decorators: exprs(&f.decorators, delta),
        is_async: f.is_async,
        range: range(&f.range, delta),
    }
}

fn class(c: &ClassDef, delta: isize) -> ClassDef {
    ClassDef {
        name: name(&c.name, delta),
        bases: exprs(&c.bases, delta),
        keywords: c
            .keywords
            .iter()
            .map(|(n, e)| (name(n, delta), expr(e, delta)))
            .collect(),
        body: stmts(&c.body, delta),
        decorators: exprs(&c.decorators, delta),
        range: range(&c.range, delta),
    }
}

fn generators(items: &[Comprehension], delta: isize) -> Vec<Comprehension> {
    items
        .iter()
        .map(|g| Comprehension {
            target: expr(&g.target, delta),
            iter: expr(&g.iter, delta),
            ifs: exprs(&g.ifs, delta),
        })
        .collect()
}

fn expr(e: &Expr, delta: isize) -> Expr {
    Expr {
        range: range(&e.range, delta),
        kind: expr_kind(&e.kind, delta),
    }
}

fn expr_kind(kind: &ExprKind, delta: isize) -> ExprKind {
    let opt_boxed = |e: &Option<Box<Expr>>| e.as_ref().map(|e| boxed(e, delta));
    match kind {
        ExprKind::Name(n) => ExprKind::Name(n.clone()),
        ExprKind::Int(v) => ExprKind::Int(*v),
        ExprKind::Float(v) => ExprKind::Float(*v),
        ExprKind::Str(s) => ExprKind::Str(s.clone()),
        ExprKind::FString => ExprKind::FString,
        ExprKind::Bool(b) => ExprKind::Bool(*b),
        ExprKind::NoneLit => ExprKind::NoneLit,
        ExprKind::Ellipsis => ExprKind::Ellipsis,
        ExprKind::Attribute { value, attr } => ExprKind::Attribute {
            value: boxed(value, delta),
            attr: name(attr, delta),
        },
        ExprKind::Subscript { value, index } => ExprKind::Subscript {
            value: boxed(value, delta),
            index: exprs(index, delta),
        },
        ExprKind::Slice { lower, upper, step } => ExprKind::Slice {
            lower: opt_boxed(lower),
            upper: opt_boxed(upper),
            step: opt_boxed(step),
        },
        ExprKind::Call { func, args } => ExprKind::Call {
            func: boxed(func, delta),
            args: args
                .iter()
                .map(|a| match a {
                    Arg::Positional(e) => Arg::Positional(expr(e, delta)),
                    Arg::Starred(e) => Arg::Starred(expr(e, delta)),
                    Arg::Keyword(n, e) => Arg::Keyword(name(n, delta), expr(e, delta)),
                    Arg::DoubleStarred(e) => Arg::DoubleStarred(expr(e, delta)),
                })
                .collect(),
        },
        ExprKind::BinOp { left, op, right } => ExprKind::BinOp {
            left: boxed(left, delta),
            op: *op,
            right: boxed(right, delta),
        },
        ExprKind::UnaryOp { op, operand } => ExprKind::UnaryOp {
            op: *op,
            operand: boxed(operand, delta),
        },
        ExprKind::BoolOp { op, values } => ExprKind::BoolOp {
            op: *op,
            values: exprs(values, delta),
        },
        ExprKind::Compare {
            left,
            ops,
            comparators,
        } => ExprKind::Compare {
            left: boxed(left, delta),
            ops: ops.clone(),
            comparators: exprs(comparators, delta),
        },
        ExprKind::IfExp { test, body, orelse } => ExprKind::IfExp {
            test: boxed(test, delta),
            body: boxed(body, delta),
            orelse: boxed(orelse, delta),
        },
        ExprKind::Tuple(items) => ExprKind::Tuple(exprs(items, delta)),
        ExprKind::List(items) => ExprKind::List(exprs(items, delta)),
        ExprKind::Set(items) => ExprKind::Set(exprs(items, delta)),
        ExprKind::Dict(entries) => ExprKind::Dict(
            entries
                .iter()
                .map(|(k, v)| (opt(k, delta), expr(v, delta)))
                .collect(),
        ),
        ExprKind::Comprehension {
            kind,
            elt,
            generators: gens,
        } => ExprKind::Comprehension {
            kind: *kind,
            elt: boxed(elt, delta),
            generators: generators(gens, delta),
        },
        ExprKind::DictComp {
            key,
            value,
            generators: gens,
        } => ExprKind::DictComp {
            key: boxed(key, delta),
            value: boxed(value, delta),
            generators: generators(gens, delta),
        },
        ExprKind::Lambda { params: ps, body } => ExprKind::Lambda {
            params: params(ps, delta),
            body: boxed(body, delta),
        },
        ExprKind::Starred(e) => ExprKind::Starred(boxed(e, delta)),
        ExprKind::DoubleStarred(e) => ExprKind::DoubleStarred(boxed(e, delta)),
        ExprKind::Await(e) => ExprKind::Await(boxed(e, delta)),
        ExprKind::NamedExpr { target, value } => ExprKind::NamedExpr {
            target: name(target, delta),
            value: boxed(value, delta),
        },
        ExprKind::Unknown => ExprKind::Unknown,
    }
}
