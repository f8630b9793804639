//! Moving lowered statements by an edit's length: an incremental reparse
//! keeps the statements after the edited lines instead of lowering them
//! again, and only their byte ranges change; an edit inside one name or
//! number changes that leaf's text too (see `token`).
//!
//! Every match below is exhaustive on purpose: a node kind added to `ast`
//! does not compile until it says how its ranges move.

use std::cell::Cell;
use std::rc::Rc;

use crate::ByteEdit;
use crate::lower::literal;

use crate::ast::{
    Alias, Arg, ClassDef, Comprehension, ExceptHandler, Expr, ExprKind, FStringPart, FunctionDef,
    Name, Param, Stmt, StmtKind, TextRange, WithItem,
};

/// How ranges move: all by one distance (statements wholly after an edit),
/// or each as an edit of trivia moves it (`ByteEdit::move_range`), or not
/// at all, or as an edit inside one leaf moves them (`Token`).
///
/// The last two make copies to compare (`moved`), and leave out the text
/// of a string that stands as a statement of its own (a docstring): running
/// one has no effect, so what it says cannot change anything.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Move<'t> {
    By(isize),
    Over(ByteEdit),
    Still,
    Token(TokenEdit<'t>),
}

/// An edit inside one identifier or number (see `crate::token`): ranges
/// from the end of the edited bytes on move by its length, those before
/// stay, and the leaf at the token's new range takes its new text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenEdit<'t> {
    pub(crate) edit: ByteEdit,
    /// The new text of the file.
    pub(crate) text: &'t str,
    /// Where the token lies in the new text.
    pub(crate) token: TextRange,
    /// How many leaves took the new text: exactly one when the token is a
    /// leaf the tree holds (a name or a number), none when it is part of
    /// something else (a dotted import, a string).
    pub(crate) read: &'t Cell<u32>,
}

/// A copy of `stmt` with every range moved.
pub(crate) fn stmt(s: &Stmt, m: Move<'_>) -> Stmt {
    Stmt {
        range: range(&s.range, m),
        kind: stmt_kind(&s.kind, m),
    }
}

fn range(r: &TextRange, m: Move<'_>) -> TextRange {
    match m {
        Move::By(delta) => {
            let at = |p: usize| p.saturating_add_signed(delta);
            TextRange::new(at(r.start), at(r.end))
        }
        // A range with an end in the edited text has no place in the new
        // text: it becomes one that no real range equals.
        Move::Over(edit) => edit.move_range(r).unwrap_or(TextRange::empty(usize::MAX)),
        Move::Still => *r,
        Move::Token(t) => {
            let delta = t.edit.new_end_byte as isize - t.edit.old_end_byte as isize;
            let at = |p: usize| {
                if p >= t.edit.old_end_byte {
                    p.saturating_add_signed(delta)
                } else {
                    p
                }
            };
            TextRange::new(at(r.start), at(r.end))
        }
    }
}

fn stmts(body: &[Stmt], m: Move<'_>) -> Vec<Stmt> {
    body.iter().map(|s| stmt(s, m)).collect()
}

fn exprs(items: &[Expr], m: Move<'_>) -> Vec<Expr> {
    items.iter().map(|e| expr(e, m)).collect()
}

fn opt(e: &Option<Expr>, m: Move<'_>) -> Option<Expr> {
    e.as_ref().map(|e| expr(e, m))
}

fn boxed(e: &Expr, m: Move<'_>) -> Box<Expr> {
    Box::new(expr(e, m))
}

fn name(n: &Name, m: Move<'_>) -> Name {
    let range = range(&n.range, m);
    let id = match m {
        Move::Token(t) if range == t.token => {
            t.read.set(t.read.get() + 1);
            t.text[range.range()].to_string()
        }
        _ => n.id.clone(),
    };
    Name { id, range }
}

fn stmt_kind(kind: &StmtKind, m: Move<'_>) -> StmtKind {
    match kind {
        StmtKind::Expr(e) => StmtKind::Expr(match (&e.kind, m) {
            (ExprKind::Str(_), Move::Over(_) | Move::Still) => Expr {
                range: range(&e.range, m),
                kind: ExprKind::Str(String::new()),
            },
            _ => expr(e, m),
        }),
        StmtKind::Assign {
            targets,
            annotation,
            value,
        } => StmtKind::Assign {
            targets: exprs(targets, m),
            annotation: opt(annotation, m),
            value: opt(value, m),
        },
        StmtKind::AugAssign { target, op, value } => StmtKind::AugAssign {
            target: expr(target, m),
            op: *op,
            value: expr(value, m),
        },
        StmtKind::FunctionDef(f) => StmtKind::FunctionDef(Rc::new(function(f, m))),
        StmtKind::ClassDef(c) => StmtKind::ClassDef(Rc::new(class(c, m))),
        StmtKind::Return(e) => StmtKind::Return(opt(e, m)),
        StmtKind::If { test, body, orelse } => StmtKind::If {
            test: expr(test, m),
            body: stmts(body, m),
            orelse: stmts(orelse, m),
        },
        StmtKind::For {
            target,
            iter,
            body,
            orelse,
        } => StmtKind::For {
            target: expr(target, m),
            iter: expr(iter, m),
            body: stmts(body, m),
            orelse: stmts(orelse, m),
        },
        StmtKind::While { test, body, orelse } => StmtKind::While {
            test: expr(test, m),
            body: stmts(body, m),
            orelse: stmts(orelse, m),
        },
        StmtKind::With { items, body } => StmtKind::With {
            items: items
                .iter()
                .map(|i| WithItem {
                    context: expr(&i.context, m),
                    target: opt(&i.target, m),
                })
                .collect(),
            body: stmts(body, m),
        },
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finalbody,
        } => StmtKind::Try {
            body: stmts(body, m),
            handlers: handlers
                .iter()
                .map(|h| ExceptHandler {
                    typ: opt(&h.typ, m),
                    name: h.name.as_ref().map(|n| name(n, m)),
                    body: stmts(&h.body, m),
                })
                .collect(),
            orelse: stmts(orelse, m),
            finalbody: stmts(finalbody, m),
        },
        StmtKind::Import(aliases) => StmtKind::Import(self::aliases(aliases, m)),
        StmtKind::ImportFrom { module, names } => StmtKind::ImportFrom {
            module: module.clone(),
            names: aliases(names, m),
        },
        StmtKind::Assert { test, msg } => StmtKind::Assert {
            test: expr(test, m),
            msg: opt(msg, m),
        },
        StmtKind::Raise(e) => StmtKind::Raise(opt(e, m)),
        StmtKind::Delete(targets) => StmtKind::Delete(exprs(targets, m)),
        StmtKind::Global(names) => StmtKind::Global(names.iter().map(|n| name(n, m)).collect()),
        StmtKind::Pass => StmtKind::Pass,
        StmtKind::Break => StmtKind::Break,
        StmtKind::Continue => StmtKind::Continue,
        StmtKind::Other => StmtKind::Other,
    }
}

fn aliases(items: &[Alias], m: Move<'_>) -> Vec<Alias> {
    items
        .iter()
        .map(|a| Alias {
            name: a.name.clone(),
            asname: a.asname.as_ref().map(|n| name(n, m)),
            range: range(&a.range, m),
        })
        .collect()
}

fn params(items: &[Param], m: Move<'_>) -> Vec<Param> {
    items
        .iter()
        .map(|p| Param {
            name: name(&p.name, m),
            kind: p.kind,
            annotation: opt(&p.annotation, m),
            default: opt(&p.default, m),
        })
        .collect()
}

fn function(f: &FunctionDef, m: Move<'_>) -> FunctionDef {
    FunctionDef {
        name: name(&f.name, m),
        params: params(&f.params, m),
        returns: opt(&f.returns, m),
        body: stmts(&f.body, m),
        decorators: exprs(&f.decorators, m),
        is_async: f.is_async,
        is_generator: f.is_generator,
        range: range(&f.range, m),
    }
}

fn class(c: &ClassDef, m: Move<'_>) -> ClassDef {
    ClassDef {
        name: name(&c.name, m),
        bases: exprs(&c.bases, m),
        keywords: c
            .keywords
            .iter()
            .map(|(n, e)| (name(n, m), expr(e, m)))
            .collect(),
        body: stmts(&c.body, m),
        decorators: exprs(&c.decorators, m),
        range: range(&c.range, m),
    }
}

fn generators(items: &[Comprehension], m: Move<'_>) -> Vec<Comprehension> {
    items
        .iter()
        .map(|g| Comprehension {
            target: expr(&g.target, m),
            iter: expr(&g.iter, m),
            ifs: exprs(&g.ifs, m),
        })
        .collect()
}

fn expr(e: &Expr, m: Move<'_>) -> Expr {
    let range = range(&e.range, m);
    if let Move::Token(t) = m
        && range == t.token
    {
        let text = &t.text[range.range()];
        let kind = match &e.kind {
            ExprKind::Name(_) => Some(ExprKind::Name(text.to_string())),
            ExprKind::Int(_) | ExprKind::Float(_) if text.contains('.') => {
                Some(literal::float(text))
            }
            ExprKind::Int(_) | ExprKind::Float(_) => Some(literal::integer(text)),
            _ => None,
        };
        if let Some(kind) = kind {
            t.read.set(t.read.get() + 1);
            return Expr { range, kind };
        }
    }
    Expr {
        range,
        kind: expr_kind(&e.kind, m),
    }
}

fn expr_kind(kind: &ExprKind, m: Move<'_>) -> ExprKind {
    let opt_boxed = |e: &Option<Box<Expr>>| e.as_ref().map(|e| boxed(e, m));
    match kind {
        ExprKind::Name(n) => ExprKind::Name(n.clone()),
        ExprKind::Int(v) => ExprKind::Int(*v),
        ExprKind::Float(v) => ExprKind::Float(*v),
        ExprKind::Imaginary(v) => ExprKind::Imaginary(*v),
        ExprKind::Str(s) => ExprKind::Str(s.clone()),
        ExprKind::FString(parts) => ExprKind::FString(
            parts
                .iter()
                .map(|part| match part {
                    FStringPart::Text(text) => FStringPart::Text(text.clone()),
                    FStringPart::Value { value, plain } => FStringPart::Value {
                        value: expr(value, m),
                        plain: *plain,
                    },
                })
                .collect(),
        ),
        ExprKind::Bool(b) => ExprKind::Bool(*b),
        ExprKind::NoneLit => ExprKind::NoneLit,
        ExprKind::Ellipsis => ExprKind::Ellipsis,
        ExprKind::Attribute { value, attr } => ExprKind::Attribute {
            value: boxed(value, m),
            attr: name(attr, m),
        },
        ExprKind::Subscript { value, index } => ExprKind::Subscript {
            value: boxed(value, m),
            index: exprs(index, m),
        },
        ExprKind::Slice { lower, upper, step } => ExprKind::Slice {
            lower: opt_boxed(lower),
            upper: opt_boxed(upper),
            step: opt_boxed(step),
        },
        ExprKind::Call { func, args } => ExprKind::Call {
            func: boxed(func, m),
            args: args
                .iter()
                .map(|a| match a {
                    Arg::Positional(e) => Arg::Positional(expr(e, m)),
                    Arg::Starred(e) => Arg::Starred(expr(e, m)),
                    Arg::Keyword(n, e) => Arg::Keyword(name(n, m), expr(e, m)),
                    Arg::DoubleStarred(e) => Arg::DoubleStarred(expr(e, m)),
                })
                .collect(),
        },
        ExprKind::BinOp { left, op, right } => ExprKind::BinOp {
            left: boxed(left, m),
            op: *op,
            right: boxed(right, m),
        },
        ExprKind::UnaryOp { op, operand } => ExprKind::UnaryOp {
            op: *op,
            operand: boxed(operand, m),
        },
        ExprKind::BoolOp { op, values } => ExprKind::BoolOp {
            op: *op,
            values: exprs(values, m),
        },
        ExprKind::Compare {
            left,
            ops,
            comparators,
        } => ExprKind::Compare {
            left: boxed(left, m),
            ops: ops.clone(),
            comparators: exprs(comparators, m),
        },
        ExprKind::IfExp { test, body, orelse } => ExprKind::IfExp {
            test: boxed(test, m),
            body: boxed(body, m),
            orelse: boxed(orelse, m),
        },
        ExprKind::Tuple(items) => ExprKind::Tuple(exprs(items, m)),
        ExprKind::List(items) => ExprKind::List(exprs(items, m)),
        ExprKind::Set(items) => ExprKind::Set(exprs(items, m)),
        ExprKind::Dict(entries) => ExprKind::Dict(
            entries
                .iter()
                .map(|(k, v)| (opt(k, m), expr(v, m)))
                .collect(),
        ),
        ExprKind::Comprehension {
            kind,
            elt,
            generators: gens,
        } => ExprKind::Comprehension {
            kind: *kind,
            elt: boxed(elt, m),
            generators: generators(gens, m),
        },
        ExprKind::DictComp {
            key,
            value,
            generators: gens,
        } => ExprKind::DictComp {
            key: boxed(key, m),
            value: boxed(value, m),
            generators: generators(gens, m),
        },
        ExprKind::Lambda { params: ps, body } => ExprKind::Lambda {
            params: params(ps, m),
            body: boxed(body, m),
        },
        ExprKind::Starred(e) => ExprKind::Starred(boxed(e, m)),
        ExprKind::DoubleStarred(e) => ExprKind::DoubleStarred(boxed(e, m)),
        ExprKind::Await(e) => ExprKind::Await(boxed(e, m)),
        ExprKind::Yield { value, from } => ExprKind::Yield {
            value: value.as_ref().map(|v| boxed(v, m)),
            from: *from,
        },
        ExprKind::NamedExpr { target, value } => ExprKind::NamedExpr {
            target: name(target, m),
            value: boxed(value, m),
        },
        ExprKind::Unknown => ExprKind::Unknown,
    }
}
