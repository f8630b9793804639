//! A small owned syntax tree of the Python subset the analysis follows.
//!
//! The tree is lowered from tree-sitter's concrete tree by `lower.rs`. Every
//! node keeps the byte range it came from so later layers can point at it.
//! Constructs the analysis has no use for are kept as `Other` / `Unknown`
//! nodes rather than dropped, so that ranges and nesting stay truthful even
//! on broken or half-typed input.

use std::ops::Range;
use std::rc::Rc;

/// A half-open range of byte offsets into the source text. Unlike
/// `std::ops::Range` it is `Copy`: ranges are passed around by value
/// everywhere, and a `.clone()` at every use said nothing.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TextRange {
    pub start: usize,
    pub end: usize,
}

impl TextRange {
    pub const fn new(start: usize, end: usize) -> TextRange {
        TextRange { start, end }
    }

    /// The empty range at `offset`.
    pub const fn empty(offset: usize) -> TextRange {
        TextRange::new(offset, offset)
    }

    pub const fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    pub const fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// Whether `offset` is inside (the end is not).
    pub const fn contains(&self, offset: &usize) -> bool {
        self.start <= *offset && *offset < self.end
    }

    /// As a `std` range, for slicing and iterating.
    pub const fn range(&self) -> Range<usize> {
        self.start..self.end
    }
}

/// Written as `std`'s ranges are (`3..7`), so messages and test output
/// read as before.
impl std::fmt::Debug for TextRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl From<Range<usize>> for TextRange {
    fn from(range: Range<usize>) -> TextRange {
        TextRange::new(range.start, range.end)
    }
}

impl From<TextRange> for Range<usize> {
    fn from(range: TextRange) -> Range<usize> {
        range.range()
    }
}

/// So that a test can write the range it expects as `3..7`.
impl PartialEq<Range<usize>> for TextRange {
    fn eq(&self, other: &Range<usize>) -> bool {
        self.start == other.start && self.end == other.end
    }
}

impl std::ops::RangeBounds<usize> for TextRange {
    fn start_bound(&self) -> std::ops::Bound<&usize> {
        std::ops::Bound::Included(&self.start)
    }

    fn end_bound(&self) -> std::ops::Bound<&usize> {
        std::ops::Bound::Excluded(&self.end)
    }
}

impl std::ops::Index<TextRange> for str {
    type Output = str;

    fn index(&self, range: TextRange) -> &str {
        &self[range.range()]
    }
}

/// A parsed file: its statements in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Module {
    pub body: Vec<Stmt>,
}

/// An identifier together with where it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Name {
    pub id: String,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub range: TextRange,
    pub kind: StmtKind,
}

impl Stmt {
    /// The blocks of statements a compound statement holds that run as
    /// part of the enclosing code (`if`/`for`/`while` bodies and `else`s,
    /// `with` bodies, `try` bodies, handlers, `else` and `finally`): not a
    /// function's or class's body, which callers treat as a scope of its own.
    pub fn nested_blocks(&self) -> Vec<&[Stmt]> {
        match &self.kind {
            StmtKind::If { body, orelse, .. }
            | StmtKind::For { body, orelse, .. }
            | StmtKind::While { body, orelse, .. } => vec![body, orelse],
            StmtKind::With { body, .. } => vec![body],
            StmtKind::Try {
                body,
                handlers,
                orelse,
                finalbody,
            } => {
                let mut blocks: Vec<&[Stmt]> = vec![body];
                blocks.extend(handlers.iter().map(|h| h.body.as_slice()));
                blocks.push(orelse);
                blocks.push(finalbody);
                blocks
            }
            _ => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Expr(Expr),
    /// `a = b = value`, `x: T = value` and a bare annotation `x: T`
    /// (then `value` is `None`). `targets` are in source order.
    Assign {
        targets: Vec<Expr>,
        annotation: Option<Expr>,
        value: Option<Expr>,
    },
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
    },
    FunctionDef(Rc<FunctionDef>),
    ClassDef(Rc<ClassDef>),
    Return(Option<Expr>),
    /// `elif` chains are nested `If`s inside `orelse`.
    If {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    For {
        target: Expr,
        iter: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    While {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    With {
        items: Vec<WithItem>,
        body: Vec<Stmt>,
    },
    Try {
        body: Vec<Stmt>,
        handlers: Vec<ExceptHandler>,
        orelse: Vec<Stmt>,
        finalbody: Vec<Stmt>,
    },
    Import(Vec<Alias>),
    /// `from .a.b import c as d`; `module` keeps its leading dots.
    ImportFrom {
        module: String,
        names: Vec<Alias>,
    },
    Assert {
        test: Expr,
        msg: Option<Expr>,
    },
    Raise(Option<Expr>),
    Delete(Vec<Expr>),
    Global(Vec<Name>),
    Pass,
    Break,
    Continue,
    /// Anything else (match statements, type aliases, syntax errors): the
    /// analysis steps over it.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WithItem {
    pub context: Expr,
    pub target: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExceptHandler {
    pub typ: Option<Expr>,
    pub name: Option<Name>,
    pub body: Vec<Stmt>,
}

/// One name of an import: `torch.nn` or `torch.nn as nn` (`*` for a star import).
#[derive(Debug, Clone, PartialEq)]
pub struct Alias {
    pub name: String,
    pub asname: Option<Name>,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionDef {
    pub name: Name,
    pub params: Vec<Param>,
    pub returns: Option<Expr>,
    pub body: Vec<Stmt>,
    pub decorators: Vec<Expr>,
    pub is_async: bool,
    /// A `yield` in the body (not in a nested function): calling it makes
    /// a generator.
    pub is_generator: bool,
    pub range: TextRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// An ordinary parameter (positional or keyword); `pos_only` marks those
    /// before a `/`.
    Normal { pos_only: bool },
    /// `*args`
    VarArgs,
    /// A parameter after `*` or `*args`.
    KwOnly,
    /// `**kwargs`
    VarKw,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: Name,
    pub kind: ParamKind,
    pub annotation: Option<Expr>,
    pub default: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClassDef {
    pub name: Name,
    pub bases: Vec<Expr>,
    pub keywords: Vec<(Name, Expr)>,
    pub body: Vec<Stmt>,
    pub decorators: Vec<Expr>,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub range: TextRange,
    pub kind: ExprKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Name(String),
    /// Integers that do not fit in an `i64` become `Float`.
    Int(i64),
    Float(f64),
    /// An imaginary literal (`1j`, `2.5J`): its imaginary part.
    Imaginary(f64),
    /// The value of a plain string literal; f-strings and concatenations
    /// with interpolation become `FString`.
    Str(String),
    /// An f-string: its text and the values it formats, in order.
    FString(Vec<FStringPart>),
    Bool(bool),
    NoneLit,
    Ellipsis,
    Attribute {
        value: Box<Expr>,
        attr: Name,
    },
    /// `value[a]` has one index, `value[a, b:c]` two. Slices appear as
    /// `ExprKind::Slice` elements.
    Subscript {
        value: Box<Expr>,
        index: Vec<Expr>,
    },
    Slice {
        lower: Option<Box<Expr>>,
        upper: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    Call {
        func: Box<Expr>,
        args: Vec<Arg>,
    },
    BinOp {
        left: Box<Expr>,
        op: BinOp,
        right: Box<Expr>,
    },
    UnaryOp {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    BoolOp {
        op: BoolOp,
        values: Vec<Expr>,
    },
    Compare {
        left: Box<Expr>,
        ops: Vec<CmpOp>,
        comparators: Vec<Expr>,
    },
    IfExp {
        test: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    Set(Vec<Expr>),
    /// `None` keys are `**mapping` entries.
    Dict(Vec<(Option<Expr>, Expr)>),
    /// List, set and generator comprehensions.
    Comprehension {
        kind: ComprehensionKind,
        elt: Box<Expr>,
        generators: Vec<Comprehension>,
    },
    DictComp {
        key: Box<Expr>,
        value: Box<Expr>,
        generators: Vec<Comprehension>,
    },
    Lambda {
        params: Vec<Param>,
        body: Box<Expr>,
    },
    Starred(Box<Expr>),
    DoubleStarred(Box<Expr>),
    Await(Box<Expr>),
    /// `yield value` or `yield from value`.
    Yield {
        value: Option<Box<Expr>>,
        from: bool,
    },
    NamedExpr {
        target: Name,
        value: Box<Expr>,
    },
    /// Anything the lowering does not model (syntax errors).
    Unknown,
}

/// A piece of an f-string.
#[derive(Debug, Clone, PartialEq)]
pub enum FStringPart {
    Text(String),
    /// `{value}`; `plain` when written with no conversion (`!r`), format
    /// spec (`:>3`) or `=`, so that it formats as `str(value)`.
    Value {
        value: Expr,
        plain: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComprehensionKind {
    List,
    Set,
    Generator,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comprehension {
    pub target: Expr,
    pub iter: Expr,
    pub ifs: Vec<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Positional(Expr),
    /// `*xs`
    Starred(Expr),
    Keyword(Name, Expr),
    /// `**kw`
    DoubleStarred(Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    MatMul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    LShift,
    RShift,
    BitAnd,
    BitOr,
    BitXor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    Is,
    IsNot,
    In,
    NotIn,
}

impl BinOp {
    /// The operator as Python writes it, for messages.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::MatMul => "@",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::LShift => "<<",
            BinOp::RShift => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
        }
    }
}
