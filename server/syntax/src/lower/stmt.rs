//! Lowering of statements, definitions, parameters and imports.

use std::rc::Rc;

use tree_sitter::Node;

use super::{
    Lowerer, MAX_DEPTH, field, field_children, first_named_child, kind, named_children, unknown,
};
use crate::ast::{
    Alias, Arg, BinOp, ClassDef, ExceptHandler, Expr, ExprKind, FunctionDef, Name, Param,
    ParamKind, Stmt, StmtKind, TextRange, WithItem,
};

/// Whether a node kind is one of the grammar's statements, so that a
/// statement found inside an `ERROR` node can be lowered as usual.
pub(super) fn is_statement_kind(kind: &str) -> bool {
    matches!(
        kind,
        "expression_statement"
            | "import_statement"
            | "import_from_statement"
            | "future_import_statement"
            | "print_statement"
            | "assert_statement"
            | "return_statement"
            | "delete_statement"
            | "raise_statement"
            | "pass_statement"
            | "break_statement"
            | "continue_statement"
            | "global_statement"
            | "nonlocal_statement"
            | "exec_statement"
            | "type_alias_statement"
            | "if_statement"
            | "for_statement"
            | "while_statement"
            | "try_statement"
            | "with_statement"
            | "function_definition"
            | "class_definition"
            | "decorated_definition"
            | "match_statement"
    )
}

impl Lowerer<'_> {
    /// The statements among the children of `parent` (a `module` or a `block`).
    pub(super) fn statements(&mut self, parent: Node<'_>) -> Vec<Stmt> {
        let mut out = Vec::new();
        for child in named_children(parent) {
            self.statement(child, &mut out);
        }
        out
    }

    fn block(&mut self, block: Option<Node<'_>>) -> Vec<Stmt> {
        block
            .map(|block| self.statements(block))
            .unwrap_or_default()
    }

    /// The body of a compound statement (`def`, `class`, `if`, ...), with
    /// what can be recovered from `ERROR` nodes that tree-sitter left
    /// between the header's `:` and the block. While a line of a function
    /// is being typed, its statements often end up there, outside the
    /// (then empty) block.
    fn suite(&mut self, node: Node<'_>, name: &'static str) -> Vec<Stmt> {
        let mut body = self.block(field(node, name));
        if !node.has_error() {
            return body;
        }
        let children = super::all_children(node);
        let Some(colon) = children.iter().position(|child| kind(*child) == ":") else {
            return body;
        };
        let mut recovered = Vec::new();
        for error in children[colon..].iter().filter(|child| child.is_error()) {
            self.recover(*error, &mut recovered);
        }
        if !recovered.is_empty() {
            body.extend(recovered);
            body.sort_by_key(|stmt| stmt.range.start);
        }
        body
    }

    /// Lowers one statement node into `out`; an `ERROR` node may yield
    /// several statements, or none.
    pub(super) fn statement(&mut self, node: Node<'_>, out: &mut Vec<Stmt>) {
        let range = node.byte_range();
        if self.depth >= MAX_DEPTH {
            out.push(Stmt {
                range: range.into(),
                kind: StmtKind::Other,
            });
            return;
        }
        self.depth += 1;
        if node.is_error() {
            self.recover(node, out);
        } else {
            let kind = self.statement_kind(node);
            out.push(Stmt {
                range: range.into(),
                kind,
            });
        }
        self.depth -= 1;
    }

    fn statement_kind(&mut self, node: Node<'_>) -> StmtKind {
        match kind(node) {
            "expression_statement" => self.expression_statement(node),
            "return_statement" => {
                StmtKind::Return(first_named_child(node).map(|value| self.expr(value)))
            }
            "pass_statement" => StmtKind::Pass,
            "break_statement" => StmtKind::Break,
            "continue_statement" => StmtKind::Continue,
            "delete_statement" => StmtKind::Delete(self.delete_targets(node)),
            "raise_statement" => self.raise(node),
            "global_statement" | "nonlocal_statement" => StmtKind::Global(
                named_children(node)
                    .into_iter()
                    .map(|name| self.name(name))
                    .collect(),
            ),
            "assert_statement" => self.assert(node),
            "import_statement" => StmtKind::Import(self.import_names(node)),
            "import_from_statement" => self.import_from(node),
            "future_import_statement" => StmtKind::ImportFrom {
                module: "__future__".to_string(),
                names: self.import_names(node),
            },
            "if_statement" => self.if_statement(node),
            "for_statement" => StmtKind::For {
                target: self.field_expr(node, "left"),
                iter: self.field_expr(node, "right"),
                body: self.suite(node, "body"),
                orelse: self.else_body(field(node, "alternative")),
            },
            "while_statement" => StmtKind::While {
                test: self.field_expr(node, "condition"),
                body: self.suite(node, "body"),
                orelse: self.else_body(field(node, "alternative")),
            },
            "with_statement" => self.with_statement(node),
            "try_statement" => self.try_statement(node),
            "function_definition" => self.function(node, Vec::new()),
            "class_definition" => self.class(node, Vec::new()),
            "decorated_definition" => self.decorated(node),
            // Recovery can leave a bare expression where a statement belongs.
            kind if super::expr::is_expression_kind(kind) => StmtKind::Expr(self.expr(node)),
            _ => StmtKind::Other,
        }
    }

    fn expression_statement(&mut self, node: Node<'_>) -> StmtKind {
        // Stray tokens that recovery attached to the statement are left out.
        let children: Vec<Node<'_>> = named_children(node)
            .into_iter()
            .filter(|child| !child.is_error())
            .collect();
        match children.as_slice() {
            [] => StmtKind::Other,
            [single] => match kind(*single) {
                "assignment" => self.assignment(*single),
                "augmented_assignment" => self.augmented_assignment(*single),
                _ => StmtKind::Expr(self.expr(*single)),
            },
            // `a, b` without brackets: the statement is a tuple.
            many => {
                let elements = many.iter().map(|element| self.expr(*element)).collect();
                StmtKind::Expr(Expr {
                    range: node.byte_range().into(),
                    kind: ExprKind::Tuple(elements),
                })
            }
        }
    }

    /// `a = b = value`, `x: T = value`, `x: T`. Chains nest to the right in
    /// tree-sitter; they are followed in a loop so a long chain costs no stack.
    fn assignment(&mut self, node: Node<'_>) -> StmtKind {
        let annotation = field(node, "type").map(|annotation| self.expr(annotation));
        let mut targets = Vec::new();
        let mut current = node;
        loop {
            if let Some(left) = field(current, "left") {
                targets.push(self.expr(left));
            }
            match field(current, "right") {
                None => {
                    return StmtKind::Assign {
                        targets,
                        annotation,
                        value: None,
                    };
                }
                Some(right)
                    if kind(right) == "assignment"
                        && field(right, "type").is_none()
                        && field(right, "right").is_some() =>
                {
                    current = right;
                }
                // `y = x @ \nz = 1` parses as `y = 1` with the skipped
                // `x @ z =` in an `ERROR` before the value: the value is
                // then unknown, not `1`.
                Some(right) => {
                    let value = match super::error_child(current) {
                        Some(error) => {
                            unknown(TextRange::new(error.start_byte(), right.end_byte()))
                        }
                        None => self.expr(right),
                    };
                    return StmtKind::Assign {
                        targets,
                        annotation,
                        value: Some(value),
                    };
                }
            }
        }
    }

    fn augmented_assignment(&mut self, node: Node<'_>) -> StmtKind {
        let operator = field(node, "operator").map(|op| self.text(op).trim_end_matches('='));
        let Some(op) = operator.and_then(binary_op) else {
            return StmtKind::Other;
        };
        StmtKind::AugAssign {
            target: self.field_expr(node, "left"),
            op,
            value: self.field_expr(node, "right"),
        }
    }

    fn delete_targets(&mut self, node: Node<'_>) -> Vec<Expr> {
        let Some(targets) = first_named_child(node) else {
            return Vec::new();
        };
        if kind(targets) == "expression_list" {
            named_children(targets)
                .into_iter()
                .map(|target| self.expr(target))
                .collect()
        } else {
            vec![self.expr(targets)]
        }
    }

    /// `raise`, `raise E`, `raise E from cause` (the cause is not kept).
    fn raise(&mut self, node: Node<'_>) -> StmtKind {
        let cause = field(node, "cause").map(|cause| cause.id());
        let exception = named_children(node)
            .into_iter()
            .find(|child| Some(child.id()) != cause);
        StmtKind::Raise(exception.map(|exception| self.expr(exception)))
    }

    fn assert(&mut self, node: Node<'_>) -> StmtKind {
        let mut parts = named_children(node).into_iter();
        let test = self.expr_or_unknown(parts.next(), node.end_byte());
        let msg = parts.next().map(|msg| self.expr(msg));
        StmtKind::Assert { test, msg }
    }

    fn if_statement(&mut self, node: Node<'_>) -> StmtKind {
        let test = self.field_expr(node, "condition");
        let body = self.suite(node, "consequence");
        let alternatives = field_children(node, "alternative");
        let orelse = self.elif_chain(&alternatives, node.end_byte());
        StmtKind::If { test, body, orelse }
    }

    /// Turns `elif` / `else` clauses into nested `If`s inside `orelse`. The
    /// clauses are a flat list in tree-sitter but nest in the `ast`, so each
    /// one counts a level of depth, and the chain is assembled from its end
    /// without recursion.
    fn elif_chain(&mut self, clauses: &[Node<'_>], end: usize) -> Vec<Stmt> {
        let saved_depth = self.depth;
        let mut elifs = Vec::new();
        let mut orelse = Vec::new();
        for clause in clauses {
            match kind(*clause) {
                "elif_clause" if self.depth >= MAX_DEPTH => {
                    orelse = vec![Stmt {
                        range: TextRange::new(clause.start_byte(), end),
                        kind: StmtKind::Other,
                    }];
                    break;
                }
                "elif_clause" => {
                    self.depth += 1;
                    let test = self.field_expr(*clause, "condition");
                    let body = self.block(field(*clause, "consequence"));
                    elifs.push((clause.start_byte(), test, body));
                }
                "else_clause" => orelse = self.block(field(*clause, "body")),
                _ => {}
            }
        }
        self.depth = saved_depth;
        for (start, test, body) in elifs.into_iter().rev() {
            orelse = vec![Stmt {
                range: TextRange::new(start, end),
                kind: StmtKind::If { test, body, orelse },
            }];
        }
        orelse
    }

    fn else_body(&mut self, clause: Option<Node<'_>>) -> Vec<Stmt> {
        self.block(clause.and_then(|clause| field(clause, "body")))
    }

    fn with_statement(&mut self, node: Node<'_>) -> StmtKind {
        let clause = named_children(node)
            .into_iter()
            .find(|child| kind(*child) == "with_clause");
        let items = clause.map(named_children).unwrap_or_default();
        let items = items
            .into_iter()
            .filter(|item| kind(*item) == "with_item")
            .filter_map(|item| field(item, "value"))
            .map(|value| {
                let (context, target) = self.as_pattern(value);
                WithItem { context, target }
            })
            .collect();
        StmtKind::With {
            items,
            body: self.suite(node, "body"),
        }
    }

    /// Splits `value as target` (an `as_pattern`) into its two sides; any
    /// other expression has no target.
    fn as_pattern(&mut self, node: Node<'_>) -> (Expr, Option<Expr>) {
        if kind(node) != "as_pattern" {
            return (self.expr(node), None);
        }
        let context = self.expr_or_unknown(first_named_child(node), node.start_byte());
        let target = field(node, "alias").map(|alias| {
            // The alias is wrapped in an `as_pattern_target` node.
            let inner = first_named_child(alias);
            self.expr_or_unknown(inner, alias.start_byte())
        });
        (context, target)
    }

    fn try_statement(&mut self, node: Node<'_>) -> StmtKind {
        let body = self.block(field(node, "body"));
        let (mut handlers, mut orelse, mut finalbody) = (Vec::new(), Vec::new(), Vec::new());
        for clause in named_children(node) {
            match kind(clause) {
                "except_clause" | "except_group_clause" => {
                    handlers.push(self.except_clause(clause))
                }
                "else_clause" => orelse = self.block(field(clause, "body")),
                "finally_clause" => finalbody = self.block(find_block(clause)),
                _ => {}
            }
        }
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finalbody,
        }
    }

    /// `except E as e:`, `except* E:`, `except (A, B):`, bare `except:`.
    fn except_clause(&mut self, clause: Node<'_>) -> ExceptHandler {
        let body = self.block(find_block(clause));
        let values = field_children(clause, "value");
        let (typ, name) = match values.as_slice() {
            [] => (None, None),
            [value] => {
                let (typ, target) = self.as_pattern(*value);
                let alias = field(clause, "alias").map(|alias| self.expr(alias));
                (Some(typ), target.or(alias))
            }
            // Python 2's `except A, B:`.
            many => {
                let range = many[0].start_byte()..many[many.len() - 1].end_byte();
                let elements = many.iter().map(|value| self.expr(*value)).collect();
                (
                    Some(Expr {
                        range: range.into(),
                        kind: ExprKind::Tuple(elements),
                    }),
                    None,
                )
            }
        };
        let name = name.and_then(|name| match name.kind {
            ExprKind::Name(id) => Some(Name {
                id,
                range: name.range,
            }),
            _ => None,
        });
        ExceptHandler { typ, name, body }
    }

    fn function(&mut self, node: Node<'_>, decorators: Vec<Expr>) -> StmtKind {
        let Some(name) = field(node, "name") else {
            return StmtKind::Other;
        };
        let params = self.params(field(node, "parameters"));
        let returns = field(node, "return_type").map(|returns| self.expr(returns));
        // The body's own `yield`s (not a nested function's) make a generator.
        let outer = std::mem::take(&mut self.yields);
        let body = self.suite(node, "body");
        let is_generator = self.yields > 0;
        self.yields = outer;
        let def = FunctionDef {
            name: self.name(name),
            params,
            returns,
            body,
            decorators,
            is_async: node.child(0).is_some_and(|first| kind(first) == "async"),
            is_generator,
            range: node.byte_range().into(),
        };
        StmtKind::FunctionDef(Rc::new(def))
    }

    fn class(&mut self, node: Node<'_>, decorators: Vec<Expr>) -> StmtKind {
        let Some(name) = field(node, "name") else {
            return StmtKind::Other;
        };
        let (mut bases, mut keywords) = (Vec::new(), Vec::new());
        if let Some(superclasses) = field(node, "superclasses") {
            for arg in self.arguments(superclasses) {
                match arg {
                    Arg::Positional(base) => bases.push(base),
                    Arg::Keyword(name, value) => keywords.push((name, value)),
                    Arg::Starred(value) => bases.push(Expr {
                        range: value.range,
                        kind: ExprKind::Starred(Box::new(value)),
                    }),
                    Arg::DoubleStarred(value) => bases.push(Expr {
                        range: value.range,
                        kind: ExprKind::DoubleStarred(Box::new(value)),
                    }),
                }
            }
        }
        let def = ClassDef {
            name: self.name(name),
            bases,
            keywords,
            body: self.suite(node, "body"),
            decorators,
            range: node.byte_range().into(),
        };
        StmtKind::ClassDef(Rc::new(def))
    }

    /// `@decorator` lines before a `def` or `class`. The statement's range
    /// covers the decorators; the definition's own range starts at `def` /
    /// `class`.
    fn decorated(&mut self, node: Node<'_>) -> StmtKind {
        let decorators = named_children(node)
            .into_iter()
            .filter(|child| kind(*child) == "decorator")
            .map(|decorator| {
                let inner = first_named_child(decorator);
                self.expr_or_unknown(inner, decorator.end_byte())
            })
            .collect();
        match field(node, "definition") {
            Some(def) if kind(def) == "function_definition" => self.function(def, decorators),
            Some(def) if kind(def) == "class_definition" => self.class(def, decorators),
            _ => StmtKind::Other,
        }
    }

    /// The parameters of a `def` (`parameters`) or a `lambda` (`lambda_parameters`).
    pub(super) fn params(&mut self, node: Option<Node<'_>>) -> Vec<Param> {
        let Some(node) = node else {
            return Vec::new();
        };
        let mut params: Vec<Param> = Vec::new();
        // After `*` or `*args`, ordinary parameters are keyword-only.
        let mut keyword_only = false;
        for child in named_children(node) {
            let normal = if keyword_only {
                ParamKind::KwOnly
            } else {
                ParamKind::Normal { pos_only: false }
            };
            let param = match kind(child) {
                "identifier" => Some(Param {
                    name: self.name(child),
                    kind: normal,
                    annotation: None,
                    default: None,
                }),
                // `typed_parameter` has no `name` field: its first child is
                // the name, possibly inside a `*` or `**` pattern.
                "typed_parameter" => first_named_child(child).and_then(|inner| {
                    let annotation = field(child, "type").map(|t| self.expr(t));
                    let (name, kind) = match kind(inner) {
                        "identifier" => (inner, normal),
                        "list_splat_pattern" => (first_named_child(inner)?, ParamKind::VarArgs),
                        "dictionary_splat_pattern" => (first_named_child(inner)?, ParamKind::VarKw),
                        _ => return None,
                    };
                    Some(Param {
                        name: self.name(name),
                        kind,
                        annotation,
                        default: None,
                    })
                }),
                "default_parameter" | "typed_default_parameter" => {
                    // Python 2's tuple parameters `(a, b)=x` are skipped.
                    let name = field(child, "name").filter(|name| kind(*name) == "identifier");
                    name.map(|name| Param {
                        name: self.name(name),
                        kind: normal,
                        annotation: field(child, "type").map(|t| self.expr(t)),
                        default: Some(self.field_expr(child, "value")),
                    })
                }
                "list_splat_pattern" => first_named_child(child).map(|name| Param {
                    name: self.name(name),
                    kind: ParamKind::VarArgs,
                    annotation: None,
                    default: None,
                }),
                "dictionary_splat_pattern" => first_named_child(child).map(|name| Param {
                    name: self.name(name),
                    kind: ParamKind::VarKw,
                    annotation: None,
                    default: None,
                }),
                "keyword_separator" => {
                    keyword_only = true;
                    None
                }
                "positional_separator" => {
                    for param in &mut params {
                        if let ParamKind::Normal { pos_only } = &mut param.kind {
                            *pos_only = true;
                        }
                    }
                    None
                }
                _ => None,
            };
            if let Some(param) = param {
                keyword_only |= param.kind == ParamKind::VarArgs;
                params.push(param);
            }
        }
        params
    }

    /// The names of `import a.b as c, d` and of `from m import (x as y, z)`.
    fn import_names(&mut self, node: Node<'_>) -> Vec<Alias> {
        let mut names = Vec::new();
        for child in field_children(node, "name") {
            let alias = match kind(child) {
                "dotted_name" => Alias {
                    name: self.dotted_name(child),
                    asname: None,
                    range: child.byte_range().into(),
                },
                "aliased_import" => Alias {
                    name: field(child, "name")
                        .map(|name| self.dotted_name(name))
                        .unwrap_or_default(),
                    asname: field(child, "alias").map(|alias| self.name(alias)),
                    range: child.byte_range().into(),
                },
                _ => continue,
            };
            names.push(alias);
        }
        names
    }

    fn import_from(&mut self, node: Node<'_>) -> StmtKind {
        let module = match field(node, "module_name") {
            Some(module) if kind(module) == "relative_import" => named_children(module)
                .into_iter()
                .map(|part| match kind(part) {
                    "import_prefix" => self.text(part).chars().filter(|&c| c == '.').collect(),
                    _ => self.dotted_name(part),
                })
                .collect(),
            Some(module) => self.dotted_name(module),
            None => String::new(),
        };
        let mut names = self.import_names(node);
        if let Some(star) = named_children(node)
            .into_iter()
            .find(|child| kind(*child) == "wildcard_import")
        {
            names.push(Alias {
                name: "*".to_string(),
                asname: None,
                range: star.byte_range().into(),
            });
        }
        StmtKind::ImportFrom { module, names }
    }

    /// `torch . nn` is legal Python; the name is kept without the spaces.
    fn dotted_name(&self, node: Node<'_>) -> String {
        let parts: Vec<&str> = named_children(node)
            .into_iter()
            .map(|part| self.text(part))
            .collect();
        parts.join(".")
    }
}

/// The `block` child of a clause that has no `body` field (`except`, `finally`).
fn find_block(clause: Node<'_>) -> Option<Node<'_>> {
    named_children(clause)
        .into_iter()
        .find(|child| kind(*child) == "block")
}

/// The operator of a binary or augmented operation, from its Python spelling.
pub(super) fn binary_op(symbol: &str) -> Option<BinOp> {
    Some(match symbol {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "@" => BinOp::MatMul,
        "/" => BinOp::Div,
        "//" => BinOp::FloorDiv,
        "%" => BinOp::Mod,
        "**" => BinOp::Pow,
        "<<" => BinOp::LShift,
        ">>" => BinOp::RShift,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        "^" => BinOp::BitXor,
        _ => return None,
    })
}
