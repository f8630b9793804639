//! The imports a module makes, wherever they are written (at the top, in a
//! function, under `try:` or `if TYPE_CHECKING:`): what `load` follows
//! before the analysis runs.

use shapels_syntax::ast::{self, Stmt, StmtKind};

/// One import statement's module and what it takes from it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ImportSpec {
    /// The number of leading dots (0 for an absolute import).
    pub(crate) level: u32,
    /// The dotted name after the dots (empty in `from . import x`).
    pub(crate) module: String,
    pub(crate) kind: ImportKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ImportKind {
    /// `import a.b.c` (with or without `as`).
    Import,
    /// `from m import a, b` (`*` for a star import).
    From(Vec<String>),
}

/// Splits `..a.b` into its level and dotted name.
pub(crate) fn split_level(module: &str) -> (u32, &str) {
    let dotted = module.trim_start_matches('.');
    ((module.len() - dotted.len()) as u32, dotted)
}

/// Every import of a module, in source order.
pub(crate) fn imports(module: &ast::Module) -> Vec<ImportSpec> {
    let mut out = Vec::new();
    walk(&module.body, &mut out);
    out
}

fn walk(body: &[Stmt], out: &mut Vec<ImportSpec>) {
    for stmt in body {
        match &stmt.kind {
            StmtKind::Import(aliases) => {
                for alias in aliases {
                    out.push(ImportSpec {
                        level: 0,
                        module: alias.name.clone(),
                        kind: ImportKind::Import,
                    });
                }
            }
            StmtKind::ImportFrom { module, names } => {
                let (level, dotted) = split_level(module);
                out.push(ImportSpec {
                    level,
                    module: dotted.to_string(),
                    kind: ImportKind::From(names.iter().map(|a| a.name.clone()).collect()),
                });
            }
            StmtKind::FunctionDef(f) => walk(&f.body, out),
            StmtKind::ClassDef(c) => walk(&c.body, out),
            // `if TYPE_CHECKING:` imports are for type checkers: Python
            // never runs them (a library's `__init__.py` imports all of
            // itself there).
            StmtKind::If { test, orelse, .. } if is_type_checking(test) => walk(orelse, out),
            _ => {
                for block in stmt.nested_blocks() {
                    walk(block, out);
                }
            }
        }
    }
}

/// `TYPE_CHECKING` or `typing.TYPE_CHECKING`: false whenever Python runs.
pub(crate) fn is_type_checking(test: &ast::Expr) -> bool {
    match &test.kind {
        ast::ExprKind::Name(n) => n == "TYPE_CHECKING",
        ast::ExprKind::Attribute { attr, .. } => attr.id == "TYPE_CHECKING",
        _ => false,
    }
}
