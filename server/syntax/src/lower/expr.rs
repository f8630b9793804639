//! Lowering of expressions, and of assignment targets (tree-sitter's
//! patterns), which share the `ast::Expr` type.

use tree_sitter::Node;

use super::stmt::binary_op;
use super::{
    Lowerer, MAX_DEPTH, all_children, error_child, field, field_children, first_named_child, kind,
    literal, named_children, unknown,
};
use crate::ast::{
    Arg, BoolOp, CmpOp, Comprehension, ComprehensionKind, Expr, ExprKind, FStringPart, TextRange,
    UnaryOp,
};

/// Whether `expr` knows a node kind, so that recovery code can tell an
/// expression from a stray token.
pub(super) fn is_expression_kind(kind: &str) -> bool {
    matches!(
        kind,
        "identifier"
            | "integer"
            | "float"
            | "string"
            | "concatenated_string"
            | "true"
            | "false"
            | "none"
            | "ellipsis"
            | "attribute"
            | "subscript"
            | "call"
            | "binary_operator"
            | "unary_operator"
            | "not_operator"
            | "boolean_operator"
            | "comparison_operator"
            | "conditional_expression"
            | "tuple"
            | "list"
            | "set"
            | "dictionary"
            | "list_comprehension"
            | "set_comprehension"
            | "generator_expression"
            | "dictionary_comprehension"
            | "lambda"
            | "await"
            | "yield"
            | "named_expression"
            | "parenthesized_expression"
    )
}

impl Lowerer<'_> {
    /// Lowers an expression or an assignment target. Parentheses are
    /// unwrapped: `(x)` lowers to `x` with the range of `x`.
    pub(super) fn expr(&mut self, node: Node<'_>) -> Expr {
        if node.is_missing() || self.depth >= MAX_DEPTH {
            return unknown(node.byte_range().into());
        }
        self.depth += 1;
        let expr = self.expr_kind(node);
        self.depth -= 1;
        expr
    }

    fn expr_kind(&mut self, node: Node<'_>) -> Expr {
        // `y = x @ ) w`: an operator with skipped tokens among its operands
        // would be a guess. Collections keep their other elements instead;
        // the broken one lowers to `Unknown` in its place.
        let collection = matches!(
            kind(node),
            "tuple"
                | "list"
                | "set"
                | "dictionary"
                | "expression_list"
                | "pattern_list"
                | "tuple_pattern"
                | "list_pattern"
        );
        if !collection && error_child(node).is_some() {
            return unknown(node.byte_range().into());
        }
        let kind = match kind(node) {
            "identifier" => ExprKind::Name(self.text(node).to_string()),
            "integer" => literal::integer(self.text(node)),
            "float" => literal::float(self.text(node)),
            "string" => match self.string(node) {
                Some(text) => ExprKind::Str(text),
                None => self
                    .fstring_parts(node)
                    .map_or(ExprKind::Unknown, ExprKind::FString),
            },
            "concatenated_string" => self.concatenated_string(node),
            "true" => ExprKind::Bool(true),
            "false" => ExprKind::Bool(false),
            "none" => ExprKind::NoneLit,
            "ellipsis" => ExprKind::Ellipsis,
            "attribute" => match field(node, "attribute") {
                Some(attr) => ExprKind::Attribute {
                    value: Box::new(self.field_expr(node, "object")),
                    attr: self.name(attr),
                },
                None => ExprKind::Unknown,
            },
            "subscript" => self.subscript(node),
            "slice" => self.slice(node),
            "call" => self.call(node),
            "binary_operator" => self.binary(node),
            "unary_operator" => self.unary(node),
            "not_operator" => ExprKind::UnaryOp {
                op: UnaryOp::Not,
                operand: Box::new(self.field_expr(node, "argument")),
            },
            "boolean_operator" => self.boolean(node),
            "comparison_operator" => self.comparison(node),
            "conditional_expression" => self.conditional(node),
            "expression_list" => ExprKind::Tuple(self.starred_elements(node)),
            "tuple" | "tuple_pattern" | "pattern_list" => {
                ExprKind::Tuple(self.starred_elements(node))
            }
            "list" | "list_pattern" => ExprKind::List(self.starred_elements(node)),
            "set" => ExprKind::Set(self.starred_elements(node)),
            "dictionary" => self.dictionary(node),
            "list_comprehension" => self.comprehension(node, ComprehensionKind::List),
            "set_comprehension" => self.comprehension(node, ComprehensionKind::Set),
            "generator_expression" => self.comprehension(node, ComprehensionKind::Generator),
            "dictionary_comprehension" => self.dict_comprehension(node),
            "lambda" => ExprKind::Lambda {
                params: self.params(field(node, "parameters")),
                body: Box::new(self.field_expr(node, "body")),
            },
            "list_splat" | "list_splat_pattern" => {
                ExprKind::Starred(Box::new(self.only_child(node)))
            }
            "dictionary_splat" | "dictionary_splat_pattern" => {
                ExprKind::DoubleStarred(Box::new(self.only_child(node)))
            }
            "await" => ExprKind::Await(Box::new(self.only_child(node))),
            "yield" => {
                self.yields += 1;
                let from = all_children(node).iter().any(|c| kind(*c) == "from");
                let value = named_children(node)
                    .into_iter()
                    .find(|c| !c.is_extra())
                    .map(|c| Box::new(self.expr(c)));
                ExprKind::Yield { value, from }
            }
            "named_expression" => match field(node, "name") {
                Some(name) => ExprKind::NamedExpr {
                    target: self.name(name),
                    value: Box::new(self.field_expr(node, "value")),
                },
                None => ExprKind::Unknown,
            },
            // Wrappers whose value is their single child: parentheses, and
            // the `type` node around annotations.
            "parenthesized_expression" | "parenthesized_list_splat" | "type" => {
                return self.only_child(node);
            }
            _ => ExprKind::Unknown,
        };
        Expr {
            range: node.byte_range().into(),
            kind,
        }
    }

    /// The single named child of a wrapper node, lowered.
    fn only_child(&mut self, node: Node<'_>) -> Expr {
        let child = first_named_child(node);
        self.expr_or_unknown(child, node.start_byte())
    }

    /// The elements of a tuple, list, set, expression list or target pattern.
    fn elements(&mut self, node: Node<'_>) -> Vec<Expr> {
        named_children(node)
            .into_iter()
            .map(|element| self.expr(element))
            .collect()
    }

    /// The elements of a display, each star moved out to the item: in a
    /// display of one starred call (`[*default(history, [])]`, `(*f(x),)`)
    /// tree-sitter-python reads the star as the callee's, `(*f)(x)`.
    fn starred_elements(&mut self, node: Node<'_>) -> Vec<Expr> {
        self.elements(node)
            .into_iter()
            .map(star_outermost)
            .collect()
    }

    /// The value of a plain string literal; `None` for f-strings and
    /// template strings, whose value is not known.
    fn string(&self, node: Node<'_>) -> Option<String> {
        let children = all_children(node);
        let start = children
            .iter()
            .find(|child| kind(**child) == "string_start")?;
        let prefix = literal::prefix(self.text(*start));
        if prefix.interpolated || children.iter().any(|child| kind(*child) == "interpolation") {
            return None;
        }
        // An unterminated string has no `string_end`; its body runs to the
        // end of the node.
        let end = children
            .iter()
            .find(|child| kind(**child) == "string_end" && !child.is_missing())
            .map_or(node.end_byte(), |end| end.start_byte());
        let body = self.source.get(start.end_byte()..end).unwrap_or("");
        Some(if prefix.raw {
            body.to_string()
        } else {
            literal::unescape(body)
        })
    }

    /// The text and values of an f-string, in order; `None` for a template
    /// string (`t"..."`), whose value is not a string.
    fn fstring_parts(&mut self, node: Node<'_>) -> Option<Vec<FStringPart>> {
        let children = all_children(node);
        let start = children
            .iter()
            .find(|child| kind(**child) == "string_start")?;
        let prefix = literal::prefix(self.text(*start));
        if prefix.template {
            return None;
        }
        let mut parts = Vec::new();
        for child in children {
            match kind(child) {
                "string_content" => {
                    // `{{` and `}}` stand for one brace in an f-string.
                    let text = self.text(child).replace("{{", "{").replace("}}", "}");
                    parts.push(FStringPart::Text(if prefix.raw {
                        text
                    } else {
                        literal::unescape(&text)
                    }));
                }
                "interpolation" => {
                    let Some(value) = field(child, "expression") else {
                        continue;
                    };
                    let plain = field(child, "type_conversion").is_none()
                        && field(child, "format_specifier").is_none()
                        && !all_children(child).iter().any(|c| kind(*c) == "=");
                    parts.push(FStringPart::Value {
                        value: self.expr(value),
                        plain,
                    });
                }
                _ => {}
            }
        }
        Some(parts)
    }

    /// `"a" "b"` joins into one literal; an f-string among the parts makes
    /// the whole an f-string.
    fn concatenated_string(&mut self, node: Node<'_>) -> ExprKind {
        let mut parts = Vec::new();
        let mut interpolated = false;
        for part in named_children(node) {
            match self.string(part) {
                Some(text) => parts.push(FStringPart::Text(text)),
                None => match self.fstring_parts(part) {
                    Some(more) => {
                        interpolated = true;
                        parts.extend(more);
                    }
                    None => return ExprKind::Unknown,
                },
            }
        }
        if interpolated {
            return ExprKind::FString(parts);
        }
        let text = parts
            .into_iter()
            .map(|part| match part {
                FStringPart::Text(text) => text,
                FStringPart::Value { .. } => String::new(),
            })
            .collect();
        ExprKind::Str(text)
    }

    /// `x[i]`, `x[a, b:c]`: each comma-separated part is one index.
    fn subscript(&mut self, node: Node<'_>) -> ExprKind {
        let value = Box::new(self.field_expr(node, "value"));
        let index = field_children(node, "subscript")
            .into_iter()
            .map(|part| self.expr(part))
            .collect();
        ExprKind::Subscript { value, index }
    }

    /// `a:b:c` with any part left out; the parts are told apart by the colons
    /// before them, since the grammar gives them no field names.
    fn slice(&mut self, node: Node<'_>) -> ExprKind {
        let mut parts: [Option<Box<Expr>>; 3] = [None, None, None];
        let mut colons = 0;
        for child in all_children(node) {
            if kind(child) == ":" {
                colons += 1;
            } else if child.is_named()
                && let Some(slot) = parts.get_mut(colons)
            {
                *slot = Some(Box::new(self.expr(child)));
            }
        }
        let [lower, upper, step] = parts;
        ExprKind::Slice { lower, upper, step }
    }

    fn call(&mut self, node: Node<'_>) -> ExprKind {
        let func = Box::new(self.field_expr(node, "function"));
        let args = match field(node, "arguments") {
            // `f(x for x in xs)`: the generator is the only argument.
            Some(generator) if kind(generator) == "generator_expression" => {
                vec![Arg::Positional(self.expr(generator))]
            }
            Some(arguments) => self.arguments(arguments),
            None => Vec::new(),
        };
        ExprKind::Call { func, args }
    }

    /// The arguments of a call or of a class's bases. A broken argument
    /// stays in place as an `Unknown` so that later arguments keep their
    /// positions.
    pub(super) fn arguments(&mut self, list: Node<'_>) -> Vec<Arg> {
        let mut args = Vec::new();
        for child in named_children(list) {
            let arg = match kind(child) {
                "list_splat" => Arg::Starred(self.only_child(child)),
                "dictionary_splat" => Arg::DoubleStarred(self.only_child(child)),
                "keyword_argument" => match field(child, "name") {
                    Some(name) => Arg::Keyword(self.name(name), self.field_expr(child, "value")),
                    None => Arg::Positional(unknown(child.byte_range().into())),
                },
                // `g(*f(x, []))` read as `g((*f)(x, []))` (see
                // `star_outermost`): the argument is the call's, spread.
                _ => match star_outermost(self.expr(child)) {
                    Expr {
                        kind: ExprKind::Starred(inner),
                        ..
                    } => Arg::Starred(*inner),
                    item => Arg::Positional(item),
                },
            };
            args.push(arg);
        }
        args
    }

    fn binary(&mut self, node: Node<'_>) -> ExprKind {
        let op = field(node, "operator").and_then(|op| binary_op(kind(op)));
        let Some(op) = op else {
            return ExprKind::Unknown;
        };
        ExprKind::BinOp {
            left: Box::new(self.field_expr(node, "left")),
            op,
            right: Box::new(self.field_expr(node, "right")),
        }
    }

    fn unary(&mut self, node: Node<'_>) -> ExprKind {
        let op = match field(node, "operator").map(kind) {
            Some("-") => UnaryOp::Neg,
            Some("+") => UnaryOp::Pos,
            Some("~") => UnaryOp::Invert,
            _ => return ExprKind::Unknown,
        };
        ExprKind::UnaryOp {
            op,
            operand: Box::new(self.field_expr(node, "argument")),
        }
    }

    /// `a and b and c` is one `BoolOp` with three values. tree-sitter nests
    /// the chain to the left; it is followed in a loop. A parenthesised
    /// operand stays nested, as in Python's own `ast`.
    fn boolean(&mut self, node: Node<'_>) -> ExprKind {
        let Some(op) = bool_op(node) else {
            return ExprKind::Unknown;
        };
        let mut rights = Vec::new();
        let mut current = node;
        let leftmost = loop {
            rights.push(field(current, "right"));
            match field(current, "left") {
                Some(left) if kind(left) == "boolean_operator" && bool_op(left) == Some(op) => {
                    current = left
                }
                left => break left,
            }
        };
        let mut values = vec![self.expr_or_unknown(leftmost, node.start_byte())];
        for right in rights.into_iter().rev() {
            values.push(self.expr_or_unknown(right, node.end_byte()));
        }
        ExprKind::BoolOp { op, values }
    }

    /// `a < b <= c`, `x not in y`, `x is not None`: operands are the named
    /// children, operators the tokens under the `operators` field.
    fn comparison(&mut self, node: Node<'_>) -> ExprKind {
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if super::is_trivia(child) {
                continue;
            }
            if child.is_named() {
                operands.push(child);
                continue;
            }
            let op = match kind(child) {
                "<" => CmpOp::Lt,
                "<=" => CmpOp::LtE,
                "==" => CmpOp::Eq,
                "!=" | "<>" => CmpOp::NotEq,
                ">=" => CmpOp::GtE,
                ">" => CmpOp::Gt,
                "in" => CmpOp::In,
                "not in" => CmpOp::NotIn,
                "is" => CmpOp::Is,
                "is not" => CmpOp::IsNot,
                _ => continue,
            };
            ops.push(op);
        }
        let mut operands = operands.into_iter();
        let left = Box::new(self.expr_or_unknown(operands.next(), node.start_byte()));
        let comparators: Vec<Expr> = operands.map(|operand| self.expr(operand)).collect();
        // Broken code can leave an operator without its operand; keep the pairs that are complete.
        ops.truncate(comparators.len());
        let comparators = comparators.into_iter().take(ops.len()).collect();
        ExprKind::Compare {
            left,
            ops,
            comparators,
        }
    }

    /// `body if test else orelse`; the grammar gives the three no field names.
    fn conditional(&mut self, node: Node<'_>) -> ExprKind {
        let mut parts = named_children(node).into_iter();
        let at = node.end_byte();
        let (body, test, orelse) = (parts.next(), parts.next(), parts.next());
        ExprKind::IfExp {
            body: Box::new(self.expr_or_unknown(body, at)),
            test: Box::new(self.expr_or_unknown(test, at)),
            orelse: Box::new(self.expr_or_unknown(orelse, at)),
        }
    }

    fn dictionary(&mut self, node: Node<'_>) -> ExprKind {
        let mut entries = Vec::new();
        for entry in named_children(node) {
            match kind(entry) {
                "pair" => {
                    let key = self.field_expr(entry, "key");
                    entries.push((Some(key), self.field_expr(entry, "value")));
                }
                "dictionary_splat" => entries.push((None, self.only_child(entry))),
                _ => entries.push((None, unknown(entry.byte_range().into()))),
            }
        }
        ExprKind::Dict(entries)
    }

    fn comprehension(&mut self, node: Node<'_>, kind: ComprehensionKind) -> ExprKind {
        let elt = Box::new(self.field_expr(node, "body"));
        ExprKind::Comprehension {
            kind,
            elt,
            generators: self.generators(node),
        }
    }

    fn dict_comprehension(&mut self, node: Node<'_>) -> ExprKind {
        let Some(pair) = field(node, "body") else {
            return ExprKind::Unknown;
        };
        ExprKind::DictComp {
            key: Box::new(self.field_expr(pair, "key")),
            value: Box::new(self.field_expr(pair, "value")),
            generators: self.generators(node),
        }
    }

    /// The `for` / `if` clauses of a comprehension; each `if` belongs to the
    /// `for` before it.
    fn generators(&mut self, node: Node<'_>) -> Vec<Comprehension> {
        let mut generators: Vec<Comprehension> = Vec::new();
        for clause in named_children(node) {
            match kind(clause) {
                "for_in_clause" => {
                    let target = self.field_expr(clause, "left");
                    let iter = match field_children(clause, "right").as_slice() {
                        [] => unknown(TextRange::new(clause.end_byte(), clause.end_byte())),
                        [single] => self.expr(*single),
                        // `for x in a, b` iterates over a tuple.
                        many => {
                            let range = many[0].start_byte()..many[many.len() - 1].end_byte();
                            let elements = many.iter().map(|element| self.expr(*element)).collect();
                            Expr {
                                range: range.into(),
                                kind: ExprKind::Tuple(elements),
                            }
                        }
                    };
                    generators.push(Comprehension {
                        target,
                        iter,
                        ifs: Vec::new(),
                    });
                }
                "if_clause" => {
                    let test = self.only_child(clause);
                    if let Some(generator) = generators.last_mut() {
                        generator.ifs.push(test);
                    }
                }
                _ => {}
            }
        }
        generators
    }
}

/// tree-sitter-python reads `*x.shape` in a tuple without brackets (`b, c,
/// device = *x.shape, x.device`) as `(*x).shape`, where Python reads
/// `*(x.shape)`, and `[*f(x)]` (a display of one starred call) as
/// `[(*f)(x)]`. This moves the star out of the attribute, subscript or call
/// chain to the item.
fn star_outermost(mut item: Expr) -> Expr {
    match unstar_base(&mut item) {
        Some(star) => Expr {
            range: TextRange::new(star, item.range.end),
            kind: ExprKind::Starred(Box::new(item)),
        },
        None => item,
    }
}

/// Replaces the starred base of a chain (`*x` of `(*x).shape[0]`) by what it
/// stars, so that each link starts where the starred value does; returns
/// where the star was.
fn unstar_base(expr: &mut Expr) -> Option<usize> {
    let base = match &mut expr.kind {
        ExprKind::Attribute { value, .. } | ExprKind::Subscript { value, .. } => value,
        ExprKind::Call { func, .. } => func,
        _ => return None,
    };
    let star = match &mut base.kind {
        ExprKind::Starred(inner) => {
            let star = base.range.start;
            let inner = std::mem::replace(
                inner.as_mut(),
                Expr {
                    range: TextRange::new(star, star),
                    kind: ExprKind::NoneLit,
                },
            );
            **base = inner;
            star
        }
        _ => unstar_base(base)?,
    };
    expr.range.start = base_start(expr);
    Some(star)
}

/// Where the innermost base of a chain starts.
fn base_start(expr: &Expr) -> usize {
    match &expr.kind {
        ExprKind::Attribute { value, .. } | ExprKind::Subscript { value, .. } => base_start(value),
        ExprKind::Call { func, .. } => base_start(func),
        _ => expr.range.start,
    }
}

fn bool_op(node: Node<'_>) -> Option<BoolOp> {
    match kind(field(node, "operator")?) {
        "and" => Some(BoolOp::And),
        "or" => Some(BoolOp::Or),
        _ => None,
    }
}
