//! The plain-data result of analysing a file: bindings, hovers, diagnostics.
//!
//! Everything here speaks in byte offsets into the analysed text; the LSP and
//! CLI layers convert to their own coordinates.

pub use crate::code::Code;
/// A half-open byte range into the analysed source.
pub use shapels_syntax::ast::TextRange;

/// The flags of the fake mode the analysis plays when user code builds none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// A real tensor meeting a tensor of the analysis' own mode (the main
    /// block, functions run on made-up inputs) is silently faked (true, the
    /// default: torch runs such code outside any fake mode) or reported
    /// (false: the strict view, for code that is to run under a
    /// `FakeTensorMode` or `torch.export`). A mode the user's code enters
    /// keeps its own flag.
    pub allow_non_fake_inputs: bool,
    /// An op with no shape rule is silently unknown (true) or reported (false).
    pub allow_fallback_kernels: bool,
    /// Sizes that call sites make concrete are specialised (true) or stay symbolic (false).
    pub static_shapes: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            allow_non_fake_inputs: true,
            allow_fallback_kernels: true,
            static_shapes: false,
        }
    }
}

/// What an analysis keeps besides bindings and diagnostics.
///
/// Recording every tensor-valued expression costs a fifth of an analysis
/// and serves only hover between names, so the server leaves it out of the
/// analysis it runs on every keystroke and asks for it when a hover needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coverage {
    /// Bindings and diagnostics: what hints, diagnostics and `check` use.
    Bindings,
    /// Also every tensor-valued expression (`FileAnalysis::expressions`).
    #[default]
    Expressions,
}

/// Everything the analysis learned about one file.
#[derive(Debug, Clone, Default)]
pub struct FileAnalysis {
    /// One entry per (statement, bound name), in source order.
    pub bindings: Vec<Binding>,
    /// Tensor-valued expressions, for hover; nested ranges are allowed.
    /// Empty unless the analysis ran with `Coverage::Expressions`.
    pub expressions: Vec<ExprInfo>,
    pub diagnostics: Vec<Diagnostic>,
    /// What the analysis read of the text beyond the syntax tree, so that
    /// an edit that changed none of it can carry this result over
    /// (`carry_over`); `None` when it cannot be carried.
    pub reads: Option<crate::text_reads::TextReads>,
    /// The user's files whose code the analysis had at hand through
    /// imports (see `workspace`): a change to any of them can change it.
    pub imports: Vec<std::path::PathBuf>,
    /// Names of this file that stand for something another file defines,
    /// for hover to say where. Empty unless the analysis ran with
    /// `Coverage::Expressions`.
    pub definitions: Vec<Definition>,
    /// Names bound to int sizes (`B, T, C = x.size()`), for hover. Empty
    /// unless the analysis ran with `Coverage::Expressions`.
    pub sizes: Vec<SizeBinding>,
    /// Names bound to values the analysis cannot follow, and why, for
    /// hover. Empty unless the analysis ran with `Coverage::Expressions`.
    pub unknowns: Vec<UnknownName>,
}

/// A name bound to a value the analysis cannot follow, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    pub name: String,
    /// The name as written where it is bound.
    pub range: TextRange,
    /// `` `torchvision.models.resnet18`: from `torchvision`, outside the workspace ``.
    pub why: String,
}

/// Why the name at `offset` (bound there, or used after it is bound) holds
/// nothing the analysis can follow, when it knows.
pub fn unknown_named<'a>(
    analysis: &'a FileAnalysis,
    name: &str,
    offset: usize,
) -> Option<&'a UnknownName> {
    analysis
        .unknowns
        .iter()
        .filter(|u| u.name == name && u.range.start <= offset)
        .max_by_key(|u| u.range.start)
}

/// A name bound to an int size, and what it is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeBinding {
    pub name: String,
    /// The name as written where it is bound.
    pub range: TextRange,
    /// The function it is bound in (the whole file at the top level).
    pub scope: TextRange,
    /// What it is bound to, each value once: `8`, `n_embd // n_head`, `?`.
    pub values: Vec<String>,
}

/// The size binding that `name` at `offset` refers to: the last one of
/// that name bound at or before `offset` in the innermost function around it.
pub fn size_named<'a>(
    analysis: &'a FileAnalysis,
    name: &str,
    offset: usize,
) -> Option<&'a SizeBinding> {
    analysis
        .sizes
        .iter()
        .filter(|s| s.name == name && s.range.start <= offset)
        .filter(|s| s.scope.start <= offset && offset <= s.scope.end)
        .max_by_key(|s| (s.scope.start, s.range.start))
}

/// A name written in the analysed file for something another file of the
/// user's defines (`Block` of `from layers import Block`, `E.HIDDEN`).
#[derive(Debug, Clone)]
pub struct Definition {
    /// Where the name is written in the analysed file.
    pub range: TextRange,
    pub file: std::sync::Arc<OtherFile>,
    /// The definition in `file`'s text.
    pub target: TextRange,
}

impl Definition {
    /// `layers.py:12`, by the file's name and the definition's line.
    pub fn place(&self) -> String {
        let line = self.file.text.as_bytes()[..self.target.start.min(self.file.text.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        let name = self.file.path.file_name().map_or_else(
            || self.file.path.display().to_string(),
            |n| n.display().to_string(),
        );
        format!("{name}:{line}")
    }
}

/// The definition whose name range contains `offset`.
pub fn definition_at(analysis: &FileAnalysis, offset: usize) -> Option<&Definition> {
    analysis
        .definitions
        .iter()
        .find(|d| d.range.start <= offset && offset <= d.range.end)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingKind {
    Assign,
    AugAssign,
    For,
    With,
    Param,
}

/// A name that a statement binds to a tensor.
#[derive(Debug, Clone)]
pub struct Binding {
    /// `x`, `self.fc`, or one name of a tuple target.
    pub name: String,
    /// The range of the name as written.
    pub range: TextRange,
    /// Where the hint goes: right after the name, or after the annotation
    /// when the name has one (`x: Tensor` reads `x: Tensor [B, T]`, not
    /// `x: [B, T]: Tensor`).
    pub hint_at: usize,
    pub kind: BindingKind,
    pub tensor: TensorInfo,
}

/// A tensor-valued expression and what is known of it.
#[derive(Debug, Clone)]
pub struct ExprInfo {
    pub range: TextRange,
    pub tensor: TensorInfo,
}

/// One dimension as shown to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimView {
    Known(i64),
    /// A symbolic size in Python syntax: `B`, `C // n_head`, `config.n_embd`.
    Symbol(String),
    /// Any number of dims (`*batch`, `...`).
    Variadic(String),
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Fake,
    Real,
}

/// The user-facing facts about one abstract tensor.
#[derive(Debug, Clone)]
pub struct TensorInfo {
    /// `None` when even the rank is unknown.
    pub shape: Option<Vec<DimView>>,
    /// torch's spelling (`float32`), `None` when unknown.
    pub dtype: Option<String>,
    /// torch's spelling (`cpu`, `cuda:0`), `None` when unknown.
    pub device: Option<String>,
    pub origin: Origin,
    /// The op that produced the tensor (`torch.randn`, `nn.Linear`, `view`).
    pub op: Option<String>,
    /// The ops that made it, first to last, each where it was called;
    /// empty unless the analysis recorded expressions (see `Coverage`).
    pub chain: Vec<OpSite>,
    /// A concrete shape seen at a call site, when the shown shape is symbolic.
    pub example: Option<Vec<DimView>>,
    /// Guards the analysis assumed, in Python syntax (`C == 768`).
    pub guards: Vec<String>,
    /// For each guard, the op that assumed it, where known.
    pub guard_sites: Vec<Option<OpSite>>,
    /// Extra notes for hover, e.g. that a device is cpu-or-cuda, or why a
    /// size is `?` (`torch.unique`: its size depends on the data).
    pub notes: Vec<String>,
    /// Where the calls are whose inputs the shape was worked out for,
    /// sorted, when it is in a function such calls reached: hover says "for
    /// the call at line 88". Empty in the module's own code and for a
    /// shape shown for any input.
    pub called_from: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// A problem found in the file.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub range: TextRange,
    pub severity: Severity,
    /// A stable code, e.g. `matmul-shape` (`Code::name`).
    pub code: Code,
    pub message: String,
    /// Where an operand's shape or device came from, where torch raises.
    pub related: Vec<Related>,
    /// Edits that would make the problem go away, offered as quick fixes.
    /// Each is a proposal: the language server re-analyses the edited text
    /// and offers only those after which this diagnostic is gone.
    pub fixes: Vec<Fix>,
}

/// A quick fix: a title and text edits in the analysed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What the editor shows: "Change `in_features` to 12544".
    pub title: String,
    /// Byte ranges of the analysed text and their replacements; ranges do
    /// not overlap.
    pub edits: Vec<(TextRange, String)>,
}

/// A place that explains a diagnostic: in the analysed file, or in a file
/// it imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    /// Byte offsets into the analysed text, or into `file`'s.
    pub range: TextRange,
    pub message: String,
    /// The imported file the range is in; `None` for the analysed file.
    pub file: Option<std::sync::Arc<OtherFile>>,
}

impl Related {
    pub fn here(range: TextRange, message: impl Into<String>) -> Related {
        Related {
            range,
            message: message.into(),
            file: None,
        }
    }
}

/// An imported file that a diagnostic points into: its path, and its text
/// (for the positions an editor wants).
#[derive(Clone, PartialEq, Eq)]
pub struct OtherFile {
    pub path: std::path::PathBuf,
    pub text: std::sync::Arc<str>,
}

impl std::fmt::Debug for OtherFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OtherFile({})", self.path.display())
    }
}

impl DimView {
    /// The dim as Python-ish text: `8`, `B`, `?`, `*batch`.
    pub fn label(&self) -> String {
        match self {
            DimView::Known(n) => n.to_string(),
            DimView::Symbol(s) | DimView::Variadic(s) => s.clone(),
            DimView::Unknown => "?".to_string(),
        }
    }
}

impl TensorInfo {
    /// The shape as the hint shows it: `[8, 128]`, `[B, ?]`, `[?...]`.
    pub fn shape_label(&self) -> String {
        match &self.shape {
            None => "[...]".to_string(),
            Some(dims) => {
                let parts: Vec<String> = dims.iter().map(DimView::label).collect();
                format!("[{}]", parts.join(", "))
            }
        }
    }
}

/// An op and where it was called: a step of a chain of ops, or what
/// assumed a guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSite {
    /// `Linear`, `view`, `@`, `torch.unique`; for the start of a chain, what
    /// made its first tensor (`x` for an argument).
    pub op: String,
    /// The byte offset of the call; `None` when it is not in the analysed file.
    pub at: Option<usize>,
}

impl OpSite {
    /// `` `view` (line 17) ``, or `` `x` `` without a place.
    fn say(&self, line_of: &dyn Fn(usize) -> Option<usize>) -> String {
        match self.at.and_then(line_of) {
            Some(line) => format!("`{}` (line {line})", self.op),
            None => format!("`{}`", self.op),
        }
    }
}

/// Steps of a chain shown before it is collapsed.
const CHAIN_SHOWN: usize = 5;

/// A chain of ops as hover says it: `` `x` → `Linear` (line 9) → `view` (line 10) ``,
/// with the middle of a long one left out.
fn chain_text(chain: &[OpSite], line_of: &dyn Fn(usize) -> Option<usize>) -> String {
    let step = |s: &OpSite| s.say(line_of);
    let shown: Vec<String> = if chain.len() > CHAIN_SHOWN {
        let mut v: Vec<String> = chain[..2].iter().map(step).collect();
        v.push(format!("… {} more …", chain.len() - 4));
        v.extend(chain[chain.len() - 2..].iter().map(step));
        v
    } else {
        chain.iter().map(step).collect()
    };
    shown.join(" → ")
}

/// The innermost tensor expression whose range contains `offset`.
pub fn expression_at(analysis: &FileAnalysis, offset: usize) -> Option<&ExprInfo> {
    analysis
        .expressions
        .iter()
        .filter(|e| e.range.start <= offset && offset <= e.range.end)
        .min_by_key(|e| e.range.end - e.range.start)
}

/// Where the analysis stopped because its step budget ran out, if it did.
pub fn budget_stop(analysis: &FileAnalysis) -> Option<&Diagnostic> {
    analysis
        .diagnostics
        .iter()
        .find(|d| d.code == Code::AnalysisBudget)
}

/// The binding whose name range contains `offset`.
pub fn binding_at(analysis: &FileAnalysis, offset: usize) -> Option<&Binding> {
    analysis
        .bindings
        .iter()
        .find(|b| b.range.start <= offset && offset <= b.range.end)
}

/// An inlay hint to draw right after a bound name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    /// The byte offset the hint is drawn at (the end of the name).
    pub offset: usize,
    /// What is drawn: `: [8, 128]`.
    pub label: String,
    /// Shown on hover over the hint: dtype, device, origin.
    pub tooltip: String,
}

/// How much an inlay hint says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HintDetail {
    /// `: [8, 128]`
    #[default]
    Shape,
    /// `: [8, 128] float32 cuda:0`
    Full,
}

/// The inlay hints of the bindings whose names end inside `range` (all
/// when `None`), every one shown in full; see `hints::inlay_hints_with`
/// for the settings that thin them out.
pub fn inlay_hints(
    analysis: &FileAnalysis,
    range: Option<TextRange>,
    detail: HintDetail,
) -> Vec<InlayHint> {
    crate::hints::inlay_hints_with(
        analysis,
        range,
        &crate::hints::HintOptions {
            detail,
            ..Default::default()
        },
    )
}

impl TensorInfo {
    /// One line: `float32 on cpu, fake`.
    pub fn summary(&self) -> String {
        format!(
            "{} on {}, {}",
            self.dtype.as_deref().unwrap_or("unknown dtype"),
            self.device.as_deref().unwrap_or("unknown device"),
            match self.origin {
                Origin::Fake => "fake",
                Origin::Real => "real",
            }
        )
    }

    /// A Markdown hover text: shape, dtype, device, origin, the ops that
    /// made it, the guards it rests on; `line_of` gives the (1-based) line
    /// of an offset of the analysed text.
    pub fn hover_markdown(
        &self,
        name: Option<&str>,
        line_of: &dyn Fn(usize) -> Option<usize>,
    ) -> String {
        let mut out = String::from("```text\n");
        if let Some(name) = name {
            out.push_str(name);
            out.push_str(": ");
        }
        out.push_str(&format!("Tensor{}\n```\n", self.shape_label()));
        out.push_str(&format!(
            "- dtype: `{}`\n",
            self.dtype.as_deref().unwrap_or("?")
        ));
        out.push_str(&format!(
            "- device: `{}`\n",
            self.device.as_deref().unwrap_or("?")
        ));
        out.push_str(&format!(
            "- {}\n",
            match self.origin {
                Origin::Fake => "fake tensor (no data)",
                Origin::Real => "real tensor (made outside the fake mode)",
            }
        ));
        if self.chain.len() > 1 {
            out.push_str(&format!("- made by {}\n", chain_text(&self.chain, line_of)));
        } else if let Some(op) = &self.op {
            out.push_str(&format!("- from `{op}`\n"));
        }
        if let Some(example) = &self.example {
            let dims: Vec<String> = example.iter().map(DimView::label).collect();
            out.push_str(&format!("- at a call site: `[{}]`\n", dims.join(", ")));
        }
        // Each assumption once, with the op that made it where known:
        // `- assumes `C == 768` — Linear at line 12`.
        for (i, guard) in self.guards.iter().enumerate() {
            let site = self.guard_sites.get(i).cloned().flatten();
            match (&site, site.as_ref().and_then(|s| s.at).and_then(line_of)) {
                (Some(site), Some(line)) => out.push_str(&format!(
                    "- assumes `{guard}` — `{}` at line {line}\n",
                    site.op
                )),
                (Some(site), None) => {
                    out.push_str(&format!("- assumes `{guard}` — `{}`\n", site.op))
                }
                (None, _) => out.push_str(&format!("- assumes `{guard}`\n")),
            }
        }
        if let Some(calls) = calls_text(&self.called_from, line_of) {
            out.push_str(&format!("- {calls}\n"));
        }
        for note in &self.notes {
            out.push_str(&format!("- {note}\n"));
        }
        out
    }
}

/// Which calls a shape was worked out for: "for the call at line 88", or
/// "for the calls at lines 12, 40 and 88" (at most four named, the rest
/// counted).
pub fn calls_text(calls: &[usize], line_of: &dyn Fn(usize) -> Option<usize>) -> Option<String> {
    const NAMED: usize = 4;
    let mut lines: Vec<usize> = calls.iter().filter_map(|&at| line_of(at)).collect();
    lines.sort_unstable();
    lines.dedup();
    let shown: Vec<String> = lines.iter().take(NAMED).map(usize::to_string).collect();
    let more = lines.len().saturating_sub(NAMED);
    match shown.as_slice() {
        [] => None,
        [line] => Some(format!("for the call at line {line}")),
        [rest @ .., last] if more == 0 => Some(format!(
            "for the calls at lines {} and {last}",
            rest.join(", ")
        )),
        _ => Some(format!(
            "for the calls at lines {} and {more} more",
            shown.join(", ")
        )),
    }
}
