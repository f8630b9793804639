//! Stated shapes: the shapes users write down, in every notation, read into one form.
//!
//! Users already write shapes in half a dozen notations: jaxtyping and
//! torchtyping annotations, `Annotated[Tensor, ...]`, Pyrefly's
//! `Tensor[[B, T]]`, docstrings and shape comments. Each notation family has
//! its own parser (`annotation`, `docstring`, `comment`); all of them give a
//! `StatedShape`, which the interpreter uses both as an input (a parameter
//! nobody passes gets the stated rank and names) and as a claim to check
//! (`claims`: a comment that disagrees with the inference, `shape-annotation`
//! and `shape-comment` at call sites and returns).

pub(crate) mod annotation;
pub(crate) mod claims;
pub(crate) mod comment;
pub(crate) mod docstring;

use std::fmt;

/// One dimension as a user wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StatedDim {
    /// A fixed size: `768`.
    Size(i64),
    /// A named size: `B`, `batch`, `config.n_embd`; the same name in one
    /// signature (or one comment) is the same size.
    Name(String),
    /// A size computed from named ones: `(h d)`, `dim+1`, `C // n_head`.
    Expr(DimExpr),
    /// A size nobody checks: jaxtyping's `_` and `_name`, torchtyping's
    /// `-1`, a comment's `?`. The name, when there is one, is for display.
    Anonymous(Option<String>),
    /// jaxtyping's `#name` (or `#3`): the size, or 1 (it broadcasts).
    Broadcast(Box<StatedDim>),
    /// Any number of dims: `*batch` (named: the same dims wherever the name
    /// recurs), `...`.
    Many(Option<String>),
}

/// A size expression over names: what jaxtyping evaluates in `"dim+1"` and
/// einops-style groups `"(h d)"` multiply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DimExpr {
    Int(i64),
    Name(String),
    Add(Box<DimExpr>, Box<DimExpr>),
    Sub(Box<DimExpr>, Box<DimExpr>),
    Mul(Box<DimExpr>, Box<DimExpr>),
    FloorDiv(Box<DimExpr>, Box<DimExpr>),
}

/// Which element types a stated shape admits: jaxtyping's `Float`, `Int`,
/// torchtyping's `float`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DTypeClass {
    /// Any floating-point dtype (`Float`, `Inexact` without complex).
    Float,
    /// Any integer dtype, signed or not (`Int`, `Integer`, `UInt`).
    Integer,
    /// Signed integers only (`Int`).
    SignedInteger,
    /// Unsigned integers only (`UInt`).
    UnsignedInteger,
    Bool,
    Complex,
    /// Exactly one dtype (`Float32`, `torch.int64`).
    Exact(crate::value::DType),
}

impl DTypeClass {
    /// Whether a tensor of `dtype` is admitted.
    pub(crate) fn admits(self, dtype: crate::value::DType) -> bool {
        use crate::value::DType::*;
        match self {
            DTypeClass::Float => matches!(dtype, Float16 | BFloat16 | Float32 | Float64),
            DTypeClass::Integer => matches!(
                dtype,
                UInt8 | UInt16 | UInt32 | UInt64 | Int8 | Int16 | Int32 | Int64
            ),
            DTypeClass::SignedInteger => matches!(dtype, Int8 | Int16 | Int32 | Int64),
            DTypeClass::UnsignedInteger => matches!(dtype, UInt8 | UInt16 | UInt32 | UInt64),
            DTypeClass::Bool => dtype == Bool,
            DTypeClass::Complex => matches!(dtype, Complex64 | Complex128),
            DTypeClass::Exact(d) => d == dtype,
        }
    }

    /// The dtype a made-up tensor of this class gets, when one is usual.
    pub(crate) fn default_dtype(self) -> Option<crate::value::DType> {
        use crate::value::DType;
        match self {
            DTypeClass::Float => Some(DType::Float32),
            DTypeClass::Integer | DTypeClass::SignedInteger => Some(DType::Int64),
            DTypeClass::Bool => Some(DType::Bool),
            DTypeClass::Exact(d) => Some(d),
            DTypeClass::UnsignedInteger | DTypeClass::Complex => None,
        }
    }

    /// How jaxtyping spells it, for messages.
    pub(crate) fn describe(self) -> String {
        match self {
            DTypeClass::Float => "a floating-point dtype".to_string(),
            DTypeClass::Integer => "an integer dtype".to_string(),
            DTypeClass::SignedInteger => "a signed integer dtype".to_string(),
            DTypeClass::UnsignedInteger => "an unsigned integer dtype".to_string(),
            DTypeClass::Bool => "dtype bool".to_string(),
            DTypeClass::Complex => "a complex dtype".to_string(),
            DTypeClass::Exact(d) => format!("dtype {}", d.name()),
        }
    }
}

/// A shape as a user stated it, with the element types it admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StatedShape {
    pub(crate) dims: Vec<StatedDim>,
    pub(crate) dtype: Option<DTypeClass>,
    /// jaxtyping's `*#batch`: the variadic dims of the parameters that
    /// share the name need only broadcast together (other counts of dims,
    /// size-1 dims), not be equal.
    pub(crate) many_broadcasts: bool,
}

impl StatedShape {
    pub(crate) fn new(dims: Vec<StatedDim>) -> StatedShape {
        StatedShape {
            dims,
            dtype: None,
            many_broadcasts: false,
        }
    }

    /// Where the one variadic entry is, if there is one.
    pub(crate) fn many_at(&self) -> Option<usize> {
        self.dims
            .iter()
            .position(|d| matches!(d, StatedDim::Many(_)))
    }

    /// Whether the shape is well formed: at most one variadic entry.
    fn valid(&self) -> bool {
        self.dims
            .iter()
            .filter(|d| matches!(d, StatedDim::Many(_)))
            .count()
            <= 1
    }
}

impl fmt::Display for DimExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Parenthesised wherever an operand is itself an operation: the
        // text is for messages, where being unambiguous beats being short.
        let operand = |e: &DimExpr| match e {
            DimExpr::Int(_) | DimExpr::Name(_) => e.to_string(),
            _ => format!("({e})"),
        };
        match self {
            DimExpr::Int(n) => write!(f, "{n}"),
            DimExpr::Name(n) => f.write_str(n),
            DimExpr::Add(a, b) => write!(f, "{} + {}", operand(a), operand(b)),
            DimExpr::Sub(a, b) => write!(f, "{} - {}", operand(a), operand(b)),
            DimExpr::Mul(a, b) => write!(f, "{}*{}", operand(a), operand(b)),
            DimExpr::FloorDiv(a, b) => write!(f, "{} // {}", operand(a), operand(b)),
        }
    }
}

impl fmt::Display for StatedDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatedDim::Size(n) => write!(f, "{n}"),
            StatedDim::Name(n) => f.write_str(n),
            StatedDim::Expr(e) => write!(f, "{e}"),
            StatedDim::Anonymous(Some(n)) => f.write_str(n),
            StatedDim::Anonymous(None) => f.write_str("_"),
            StatedDim::Broadcast(d) => write!(f, "#{d}"),
            StatedDim::Many(Some(n)) => write!(f, "*{n}"),
            StatedDim::Many(None) => f.write_str("..."),
        }
    }
}

impl fmt::Display for StatedShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.dims.iter().map(ToString::to_string).collect();
        write!(f, "[{}]", parts.join(", "))
    }
}

/// A size expression as written inside a dim: `dim+1`, `C // n_head`,
/// `(h d)` (juxtaposed factors multiply, as einops writes a merged axis),
/// `config.n_embd`. `None` for anything else: prose is not a size.
pub(crate) fn parse_dim_expr(text: &str) -> Option<DimExpr> {
    let tokens = tokenize(text)?;
    let mut parser = ExprParser { tokens, at: 0 };
    let e = parser.sum()?;
    (parser.at == parser.tokens.len()).then_some(e)
}

/// One dim token: a size, a name, or an expression over them.
pub(crate) fn parse_dim(text: &str) -> Option<StatedDim> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(n) = text.parse::<i64>() {
        return (n >= 0).then_some(StatedDim::Size(n));
    }
    match parse_dim_expr(text)? {
        DimExpr::Name(n) => Some(StatedDim::Name(n)),
        DimExpr::Int(n) => Some(StatedDim::Size(n)),
        e => Some(StatedDim::Expr(e)),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Int(i64),
    Name(String),
    Op(&'static str),
    Open,
    Close,
}

fn tokenize(text: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            out.push(Token::Int(digits.parse().ok()?));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            if name.ends_with('.') || name.contains("..") {
                return None;
            }
            out.push(Token::Name(name));
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            out.push(Token::Op("//"));
            i += 2;
        } else if let Some(op) = ["+", "-", "*"].into_iter().find(|op| op.starts_with(c)) {
            out.push(Token::Op(op));
            i += 1;
        } else if c == '(' {
            out.push(Token::Open);
            i += 1;
        } else if c == ')' {
            out.push(Token::Close);
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

struct ExprParser {
    tokens: Vec<Token>,
    at: usize,
}

impl ExprParser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn sum(&mut self) -> Option<DimExpr> {
        let mut left = self.product()?;
        while let Some(Token::Op(op @ ("+" | "-"))) = self.peek().cloned() {
            self.at += 1;
            let right = self.product()?;
            left = if op == "+" {
                DimExpr::Add(Box::new(left), Box::new(right))
            } else {
                DimExpr::Sub(Box::new(left), Box::new(right))
            };
        }
        Some(left)
    }

    fn product(&mut self) -> Option<DimExpr> {
        let mut left = self.atom()?;
        while let Some(Token::Op(op @ ("*" | "//"))) = self.peek().cloned() {
            self.at += 1;
            let right = self.atom()?;
            left = if op == "*" {
                DimExpr::Mul(Box::new(left), Box::new(right))
            } else {
                DimExpr::FloorDiv(Box::new(left), Box::new(right))
            };
        }
        Some(left)
    }

    fn atom(&mut self) -> Option<DimExpr> {
        match self.peek().cloned()? {
            Token::Int(n) => {
                self.at += 1;
                Some(DimExpr::Int(n))
            }
            Token::Name(n) => {
                self.at += 1;
                Some(DimExpr::Name(n))
            }
            Token::Open => {
                self.at += 1;
                // Inside a group, factors written side by side multiply:
                // `(h d)` is the merged axis of size h*d.
                let mut e = self.sum()?;
                while !matches!(self.peek(), Some(Token::Close)) {
                    let next = self.sum()?;
                    e = DimExpr::Mul(Box::new(e), Box::new(next));
                }
                self.at += 1;
                Some(e)
            }
            _ => None,
        }
    }
}

/// Splits `text` at top-level occurrences of `sep` (outside brackets and
/// string quotes).
pub(crate) fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                out.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_and_expressions() {
        assert_eq!(parse_dim("768"), Some(StatedDim::Size(768)));
        assert_eq!(parse_dim("B"), Some(StatedDim::Name("B".into())));
        assert_eq!(
            parse_dim("config.n_embd"),
            Some(StatedDim::Name("config.n_embd".into()))
        );
        assert_eq!(
            parse_dim("dim+1").map(|d| d.to_string()),
            Some("dim + 1".to_string())
        );
        assert_eq!(
            parse_dim("(h d)").map(|d| d.to_string()),
            Some("h*d".to_string())
        );
        assert_eq!(
            parse_dim("C // n_head").map(|d| d.to_string()),
            Some("C // n_head".to_string())
        );
        assert_eq!(parse_dim("see above"), None);
        assert_eq!(parse_dim("a, b"), None);
        assert_eq!(parse_dim("x-"), None);
    }

    #[test]
    fn top_level_split() {
        assert_eq!(
            split_top("Tensor, \"b, c\", f(a, b)", ','),
            vec!["Tensor", " \"b, c\"", " f(a, b)"]
        );
    }
}
