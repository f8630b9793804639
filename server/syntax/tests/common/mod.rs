//! A Python-like rendering of the `ast` for tests: every compound expression
//! is parenthesised so nesting is visible, `?` is `Unknown` and `<other>` is
//! `StmtKind::Other`.

#![allow(dead_code)]

use std::fmt::Write;

use shapels_syntax::ast::*;

/// Renders a module, one statement per line, bodies indented by two spaces.
pub fn render(module: &Module) -> String {
    let mut out = String::new();
    stmts(&mut out, &module.body, 0);
    out
}

/// Parses `source` and renders its module.
pub fn lowered(source: &str) -> String {
    render(&shapels_syntax::parse(source).module)
}

/// Removes the common indentation of a multi-line expectation and its first
/// and last blank lines, so expectations can be written indented in tests.
pub fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.trim_start_matches('\n').trim_end().lines().collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min();
    let indent = indent.unwrap_or(0);
    let mut out = String::new();
    for line in lines {
        out.push_str(line.get(indent..).unwrap_or(""));
        out.push('\n');
    }
    out
}

fn stmts(out: &mut String, body: &[Stmt], depth: usize) {
    if body.is_empty() {
        line(out, depth, "<empty>");
    }
    for stmt in body {
        stmt_into(out, stmt, depth);
    }
}

fn line(out: &mut String, depth: usize, text: &str) {
    let _ = writeln!(out, "{}{}", "  ".repeat(depth), text);
}

fn stmt_into(out: &mut String, stmt: &Stmt, depth: usize) {
    match &stmt.kind {
        StmtKind::Expr(e) => line(out, depth, &expr(e)),
        StmtKind::Assign {
            targets,
            annotation,
            value,
        } => {
            let mut text = targets.iter().map(expr).collect::<Vec<_>>().join(" = ");
            if let Some(annotation) = annotation {
                let _ = write!(text, ": {}", expr(annotation));
            }
            if let Some(value) = value {
                let _ = write!(text, " = {}", expr(value));
            }
            line(out, depth, &text);
        }
        StmtKind::AugAssign { target, op, value } => line(
            out,
            depth,
            &format!("{} {}= {}", expr(target), op.symbol(), expr(value)),
        ),
        StmtKind::FunctionDef(def) => {
            for decorator in &def.decorators {
                line(out, depth, &format!("@{}", expr(decorator)));
            }
            let returns = def
                .returns
                .as_ref()
                .map(|r| format!(" -> {}", expr(r)))
                .unwrap_or_default();
            let asyncness = if def.is_async { "async " } else { "" };
            line(
                out,
                depth,
                &format!(
                    "{asyncness}def {}({}){returns}:{}",
                    def.name.id,
                    params(&def.params),
                    if def.is_generator {
                        "  # generator"
                    } else {
                        ""
                    }
                ),
            );
            stmts(out, &def.body, depth + 1);
        }
        StmtKind::ClassDef(class) => {
            for decorator in &class.decorators {
                line(out, depth, &format!("@{}", expr(decorator)));
            }
            let mut args: Vec<String> = class.bases.iter().map(expr).collect();
            args.extend(
                class
                    .keywords
                    .iter()
                    .map(|(k, v)| format!("{}={}", k.id, expr(v))),
            );
            line(
                out,
                depth,
                &format!("class {}({}):", class.name.id, args.join(", ")),
            );
            stmts(out, &class.body, depth + 1);
        }
        StmtKind::Return(value) => match value {
            Some(value) => line(out, depth, &format!("return {}", expr(value))),
            None => line(out, depth, "return"),
        },
        StmtKind::If { test, body, orelse } => {
            line(out, depth, &format!("if {}:", expr(test)));
            stmts(out, body, depth + 1);
            if !orelse.is_empty() {
                line(out, depth, "else:");
                stmts(out, orelse, depth + 1);
            }
        }
        StmtKind::For {
            target,
            iter,
            body,
            orelse,
        } => {
            line(
                out,
                depth,
                &format!("for {} in {}:", expr(target), expr(iter)),
            );
            stmts(out, body, depth + 1);
            if !orelse.is_empty() {
                line(out, depth, "else:");
                stmts(out, orelse, depth + 1);
            }
        }
        StmtKind::While { test, body, orelse } => {
            line(out, depth, &format!("while {}:", expr(test)));
            stmts(out, body, depth + 1);
            if !orelse.is_empty() {
                line(out, depth, "else:");
                stmts(out, orelse, depth + 1);
            }
        }
        StmtKind::With { items, body } => {
            let items: Vec<String> = items
                .iter()
                .map(|item| match &item.target {
                    Some(target) => format!("{} as {}", expr(&item.context), expr(target)),
                    None => expr(&item.context),
                })
                .collect();
            line(out, depth, &format!("with {}:", items.join(", ")));
            stmts(out, body, depth + 1);
        }
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finalbody,
        } => {
            line(out, depth, "try:");
            stmts(out, body, depth + 1);
            for handler in handlers {
                let mut head = "except".to_string();
                if let Some(typ) = &handler.typ {
                    let _ = write!(head, " {}", expr(typ));
                }
                if let Some(name) = &handler.name {
                    let _ = write!(head, " as {}", name.id);
                }
                line(out, depth, &format!("{head}:"));
                stmts(out, &handler.body, depth + 1);
            }
            if !orelse.is_empty() {
                line(out, depth, "else:");
                stmts(out, orelse, depth + 1);
            }
            if !finalbody.is_empty() {
                line(out, depth, "finally:");
                stmts(out, finalbody, depth + 1);
            }
        }
        StmtKind::Import(names) => line(out, depth, &format!("import {}", aliases(names))),
        StmtKind::ImportFrom { module, names } => line(
            out,
            depth,
            &format!("from {module} import {}", aliases(names)),
        ),
        StmtKind::Assert { test, msg } => match msg {
            Some(msg) => line(out, depth, &format!("assert {}, {}", expr(test), expr(msg))),
            None => line(out, depth, &format!("assert {}", expr(test))),
        },
        StmtKind::Raise(value) => match value {
            Some(value) => line(out, depth, &format!("raise {}", expr(value))),
            None => line(out, depth, "raise"),
        },
        StmtKind::Delete(targets) => line(out, depth, &format!("del {}", list(targets))),
        StmtKind::Global(names) => {
            let names: Vec<&str> = names.iter().map(|n| n.id.as_str()).collect();
            line(out, depth, &format!("global {}", names.join(", ")))
        }
        StmtKind::Pass => line(out, depth, "pass"),
        StmtKind::Break => line(out, depth, "break"),
        StmtKind::Continue => line(out, depth, "continue"),
        StmtKind::Other => line(out, depth, "<other>"),
    }
}

fn aliases(names: &[Alias]) -> String {
    let names: Vec<String> = names
        .iter()
        .map(|alias| match &alias.asname {
            Some(asname) => format!("{} as {}", alias.name, asname.id),
            None => alias.name.clone(),
        })
        .collect();
    names.join(", ")
}

/// Parameters as Python writes them, with `/` after positional-only ones
/// and a bare `*` before keyword-only ones that follow no `*args`.
pub fn params(params: &[Param]) -> String {
    let mut parts = Vec::new();
    let mut seen_star = false;
    for (i, param) in params.iter().enumerate() {
        let mut text = String::new();
        match param.kind {
            ParamKind::VarArgs => {
                seen_star = true;
                text.push('*');
            }
            ParamKind::VarKw => text.push_str("**"),
            ParamKind::KwOnly if !seen_star => {
                seen_star = true;
                parts.push("*".to_string());
            }
            _ => {}
        }
        text.push_str(&param.name.id);
        if let Some(annotation) = &param.annotation {
            let _ = write!(text, ": {}", expr(annotation));
        }
        if let Some(default) = &param.default {
            let _ = write!(text, "={}", expr(default));
        }
        parts.push(text);
        let pos_only = matches!(param.kind, ParamKind::Normal { pos_only: true });
        let next_pos_only = matches!(
            params.get(i + 1).map(|p| p.kind),
            Some(ParamKind::Normal { pos_only: true })
        );
        if pos_only && !next_pos_only {
            parts.push("/".to_string());
        }
    }
    parts.join(", ")
}

fn list(items: &[Expr]) -> String {
    items.iter().map(expr).collect::<Vec<_>>().join(", ")
}

fn generators(generators: &[Comprehension]) -> String {
    let mut out = String::new();
    for generator in generators {
        let _ = write!(
            out,
            " for {} in {}",
            expr(&generator.target),
            expr(&generator.iter)
        );
        for test in &generator.ifs {
            let _ = write!(out, " if {}", expr(test));
        }
    }
    out
}

/// Renders one expression.
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(id) => id.clone(),
        ExprKind::Int(value) => value.to_string(),
        ExprKind::Float(value) => format!("{value:?}"),
        ExprKind::Imaginary(value) => format!("{value:?}j"),
        ExprKind::Str(value) => format!("{value:?}"),
        ExprKind::FString(parts) => {
            let inner: String = parts
                .iter()
                .map(|part| match part {
                    FStringPart::Text(text) => format!("{text:?}").trim_matches('"').to_string(),
                    FStringPart::Value { value, plain: true } => format!("{{{}}}", expr(value)),
                    FStringPart::Value {
                        value,
                        plain: false,
                    } => format!("{{{}!?}}", expr(value)),
                })
                .collect();
            format!("f\"{inner}\"")
        }
        ExprKind::Bool(true) => "True".to_string(),
        ExprKind::Bool(false) => "False".to_string(),
        ExprKind::NoneLit => "None".to_string(),
        ExprKind::Ellipsis => "...".to_string(),
        ExprKind::Attribute { value, attr } => format!("{}.{}", expr(value), attr.id),
        ExprKind::Subscript { value, index } => format!("{}[{}]", expr(value), list(index)),
        ExprKind::Slice { lower, upper, step } => {
            let part = |p: &Option<Box<Expr>>| p.as_deref().map(expr).unwrap_or_default();
            match step {
                Some(_) => format!("{}:{}:{}", part(lower), part(upper), part(step)),
                None => format!("{}:{}", part(lower), part(upper)),
            }
        }
        ExprKind::Call { func, args } => {
            let args: Vec<String> = args
                .iter()
                .map(|arg| match arg {
                    Arg::Positional(value) => expr(value),
                    Arg::Starred(value) => format!("*{}", expr(value)),
                    Arg::Keyword(name, value) => format!("{}={}", name.id, expr(value)),
                    Arg::DoubleStarred(value) => format!("**{}", expr(value)),
                })
                .collect();
            format!("{}({})", expr(func), args.join(", "))
        }
        ExprKind::BinOp { left, op, right } => {
            format!("({} {} {})", expr(left), op.symbol(), expr(right))
        }
        ExprKind::UnaryOp { op, operand } => {
            let symbol = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Pos => "+",
                UnaryOp::Not => "not ",
                UnaryOp::Invert => "~",
            };
            format!("({symbol}{})", expr(operand))
        }
        ExprKind::BoolOp { op, values } => {
            let joiner = match op {
                BoolOp::And => " and ",
                BoolOp::Or => " or ",
            };
            format!(
                "({})",
                values.iter().map(expr).collect::<Vec<_>>().join(joiner)
            )
        }
        ExprKind::Compare {
            left,
            ops,
            comparators,
        } => {
            let mut text = format!("({}", expr(left));
            for (op, right) in ops.iter().zip(comparators) {
                let symbol = match op {
                    CmpOp::Eq => "==",
                    CmpOp::NotEq => "!=",
                    CmpOp::Lt => "<",
                    CmpOp::LtE => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::GtE => ">=",
                    CmpOp::Is => "is",
                    CmpOp::IsNot => "is not",
                    CmpOp::In => "in",
                    CmpOp::NotIn => "not in",
                };
                let _ = write!(text, " {symbol} {}", expr(right));
            }
            text.push(')');
            text
        }
        ExprKind::IfExp { test, body, orelse } => {
            format!("({} if {} else {})", expr(body), expr(test), expr(orelse))
        }
        ExprKind::Tuple(items) if items.len() == 1 => format!("({},)", expr(&items[0])),
        ExprKind::Tuple(items) => format!("({})", list(items)),
        ExprKind::List(items) => format!("[{}]", list(items)),
        ExprKind::Set(items) => format!("{{{}}}", list(items)),
        ExprKind::Dict(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(key, value)| match key {
                    Some(key) => format!("{}: {}", expr(key), expr(value)),
                    None => format!("**{}", expr(value)),
                })
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        ExprKind::Comprehension {
            kind,
            elt,
            generators: gens,
        } => {
            let (open, close) = match kind {
                ComprehensionKind::List => ('[', ']'),
                ComprehensionKind::Set => ('{', '}'),
                ComprehensionKind::Generator => ('(', ')'),
            };
            format!("{open}{}{}{close}", expr(elt), generators(gens))
        }
        ExprKind::DictComp {
            key,
            value,
            generators: gens,
        } => {
            format!("{{{}: {}{}}}", expr(key), expr(value), generators(gens))
        }
        ExprKind::Lambda { params: ps, body } => format!("(lambda {}: {})", params(ps), expr(body)),
        ExprKind::Starred(value) => format!("*{}", expr(value)),
        ExprKind::DoubleStarred(value) => format!("**{}", expr(value)),
        ExprKind::Await(value) => format!("(await {})", expr(value)),
        ExprKind::Yield { value, from } => {
            let keyword = if *from { "yield from" } else { "yield" };
            match value {
                Some(v) => format!("({keyword} {})", expr(v)),
                None => format!("({keyword})"),
            }
        }
        ExprKind::NamedExpr { target, value } => format!("({} := {})", target.id, expr(value)),
        ExprKind::Unknown => "?".to_string(),
    }
}
