//! The data-driven test of the whole analysis: every `tests/fixtures/**/*.py`
//! file carries the inlay hints and diagnostics it should produce as comments.
//!
//! ```python
//! # shapels: allow_non_fake_inputs=true, static_shapes=true
//! x = torch.randn(8, 128)  # hint: [8, 128]
//! q, k = x.split(64, dim=1)  # hint: q [8, 64]; k [8, 64]
//! def f(x, w):  # hint: x [B, 128]; w [128, 10]
//! # error[matmul-shape]: "cannot be multiplied"
//! y = x @ x  # and a comment of the code's own
//! ```
//!
//! - `hint: SHAPE` lists the inlay hints of a line, in source order, as
//!   `name SHAPE` joined by `; `; with a single hint the name may be left
//!   out, and a line with more than one hint or with parameters (the `def`
//!   line) always names them.
//! - `error[code]`, `warning[code]`, `info[code]`, `hint[code]` expect a
//!   diagnostic starting on that line, optionally with `: "text"` that its
//!   message must contain.
//! - Several expectations on a line are separated by two spaces or `  #`.
//!   A comment on its own line applies to the next line that is neither
//!   blank nor a comment; a trailing comment applies to its own line. Other
//!   comments are left alone.
//! - A first-line `# shapels: key=value, ...` sets the analysis `Config`.
//!
//! Every hint or diagnostic that is not expected, and every expectation
//! that is not met, is a failure; all of them are listed before the test
//! fails. `SHAPELS_UPDATE_FIXTURES=1 cargo test -p shapels-analysis --test
//! fixtures` rewrites the expectations of the lines that disagree to what
//! the analysis now says, keeping the code and the other comments.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use shapels_analysis::{
    BindingKind, Config, FileAnalysis, HintDetail, Severity, analyze, inlay_hints,
};

// ---------------------------------------------------------------------------
// Expectations and how they are written.

/// One named shape of a `hint:` expectation.
#[derive(Debug, Clone, PartialEq)]
struct HintItem {
    name: Option<String>,
    shape: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Expectation {
    Hints(Vec<HintItem>),
    Diagnostic {
        severity: Severity,
        code: String,
        message: Option<String>,
    },
}

/// The words that start a diagnostic expectation, longest spelling first
/// where one is a prefix of another.
const SEVERITIES: &[(&str, Severity)] = &[
    ("error", Severity::Error),
    ("warning", Severity::Warning),
    ("information", Severity::Information),
    ("info", Severity::Information),
    ("hint", Severity::Hint),
];

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information => "info",
        Severity::Hint => "hint",
    }
}

impl fmt::Display for HintItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{name} {}", self.shape),
            None => f.write_str(&self.shape),
        }
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expectation::Hints(items) => {
                let items: Vec<String> = items.iter().map(HintItem::to_string).collect();
                write!(f, "hint: {}", items.join("; "))
            }
            Expectation::Diagnostic {
                severity,
                code,
                message,
            } => {
                write!(f, "{}[{code}]", severity_word(*severity))?;
                match message {
                    Some(message) => write!(
                        f,
                        ": \"{}\"",
                        message.replace('\\', "\\\\").replace('"', "\\\"")
                    ),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Expectations as written in a comment: `# a  # b`.
fn render(expectations: &[Expectation]) -> String {
    let parts: Vec<String> = expectations.iter().map(|e| format!("# {e}")).collect();
    parts.join("  ")
}

/// One comment split into the text kept as written and the expectations.
#[derive(Debug, Default, PartialEq)]
struct Comment {
    /// Segments that are not expectations, each starting with `#`.
    prose: Vec<String>,
    expectations: Vec<Expectation>,
    /// Expectations that could not be read.
    problems: Vec<String>,
}

fn starts_expectation(text: &str) -> bool {
    text.starts_with("hint:")
        || SEVERITIES.iter().any(|(word, _)| {
            text.strip_prefix(word)
                .is_some_and(|rest| rest.starts_with('['))
        })
}

/// Splits a comment (from its `#`) into prose and expectations.
fn parse_comment(text: &str) -> Comment {
    let mut comment = Comment::default();
    let mut rest = text.trim_end();
    while let Some(after_hash) = rest.strip_prefix('#') {
        let body = after_hash.trim_start();
        if starts_expectation(body) {
            rest = parse_expectations(body, &mut comment);
        } else {
            // Prose runs to the next `  #`.
            let end = rest[1..].find("  #").map_or(rest.len(), |i| i + 1);
            comment.prose.push(rest[..end].trim_end().to_string());
            rest = rest[end..].trim_start();
        }
    }
    comment
}

/// Reads expectations separated by two spaces until the end or the next
/// `#`, and returns the text from that `#` on.
fn parse_expectations<'a>(mut text: &'a str, comment: &mut Comment) -> &'a str {
    let mut first = true;
    loop {
        let trimmed = text.trim_start();
        let gap = text.len() - trimmed.len();
        text = trimmed;
        if text.is_empty() || text.starts_with('#') {
            return text;
        }
        if std::mem::take(&mut first) || gap >= 2 {
            if starts_expectation(text) {
                match parse_one(text) {
                    Ok((expectation, used)) => {
                        comment.expectations.push(expectation);
                        text = &text[used..];
                        continue;
                    }
                    Err(problem) => comment.problems.push(problem),
                }
                return "";
            }
        }
        comment
            .problems
            .push(format!("cannot read expectation at {text:?}"));
        return "";
    }
}

/// Reads one expectation at the start of `text`; returns it and the bytes used.
fn parse_one(text: &str) -> Result<(Expectation, usize), String> {
    if let Some(after) = text.strip_prefix("hint:") {
        // The hint runs to two spaces followed by `#` or another expectation.
        let mut end = after.len();
        for (i, _) in after.match_indices("  ") {
            let next = after[i..].trim_start();
            if next.starts_with('#') || starts_expectation(next) {
                end = i;
                break;
            }
        }
        let items = parse_hint_items(&after[..end])?;
        return Ok((Expectation::Hints(items), "hint:".len() + end));
    }
    let open = text.find('[').ok_or("expected `[code]`")?;
    let close = text
        .find(']')
        .ok_or_else(|| format!("unclosed `[` in {text:?}"))?;
    let word = &text[..open];
    let severity = SEVERITIES
        .iter()
        .find(|(w, _)| *w == word)
        .map(|(_, s)| *s)
        .ok_or("unknown severity")?;
    let code = &text[open + 1..close];
    if code.is_empty()
        || !code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!("bad diagnostic code {code:?}"));
    }
    let mut used = close + 1;
    let mut message = None;
    if let Some(after) = text[used..].strip_prefix(':') {
        let quoted = after.trim_start();
        let (value, length) = parse_quoted(quoted)?;
        message = Some(value);
        used += 1 + (after.len() - quoted.len()) + length;
    }
    Ok((
        Expectation::Diagnostic {
            severity,
            code: code.to_string(),
            message,
        },
        used,
    ))
}

/// A `"..."` string with `\"` and `\\` escapes; returns its value and length.
fn parse_quoted(text: &str) -> Result<(String, usize), String> {
    let body = text
        .strip_prefix('"')
        .ok_or_else(|| format!("expected a quoted message at {text:?}"))?;
    let mut value = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((value, 1 + i + 1)),
            '\\' => match chars.next() {
                Some((_, escaped)) => value.push(escaped),
                None => break,
            },
            c => value.push(c),
        }
    }
    Err(format!("unterminated message in {text:?}"))
}

/// `[8, 10]`, or `q [8, 10]; k [8, 10]`.
fn parse_hint_items(text: &str) -> Result<Vec<HintItem>, String> {
    let mut items = Vec::new();
    for item in text.split(';').map(str::trim) {
        let open = item
            .find('[')
            .ok_or_else(|| format!("hint {item:?} has no `[shape]`"))?;
        let name = item[..open].trim();
        let name = (!name.is_empty()).then(|| name.to_string());
        let shape = item[open..].trim();
        // The shape is one bracketed list: `[8] error[x]` is two things
        // written with one space between them.
        let mut depth = 0i32;
        for (i, c) in shape.char_indices() {
            depth += match c {
                '[' => 1,
                ']' => -1,
                _ => 0,
            };
            if depth == 0 && i + 1 != shape.len() {
                return Err(format!("cannot read hint shape {shape:?}"));
            }
        }
        if depth != 0 {
            return Err(format!("unbalanced brackets in hint shape {shape:?}"));
        }
        items.push(HintItem {
            name,
            shape: shape.to_string(),
        });
    }
    Ok(items)
}

// ---------------------------------------------------------------------------
// A fixture file: its lines, comments and expectations.

/// A comment of the file and what it says.
#[derive(Debug)]
struct CommentAt {
    line: usize,
    /// Where the comment starts in the file.
    start: usize,
    /// Alone on its line (applies to a later line) or after code.
    own_line: bool,
    parts: Comment,
    /// The line its expectations apply to.
    target: Option<usize>,
}

/// The expectations of one line, gathered from its comments.
#[derive(Debug, Default)]
struct Expected {
    expectations: Vec<Expectation>,
    /// Some of them are written on lines of their own above the line.
    from_own_line: bool,
}

#[derive(Debug)]
struct Fixture {
    text: String,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
    comments: Vec<CommentAt>,
    expected: BTreeMap<usize, Expected>,
    config: Config,
    /// Problems with the fixture itself, by line.
    problems: Vec<(usize, String)>,
}

impl Fixture {
    fn new(text: String) -> Fixture {
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&s| s <= text.len())
            .collect();
        let parsed = shapels_syntax::parse(&text);
        let mut fixture = Fixture {
            text,
            line_starts,
            comments: Vec::new(),
            expected: BTreeMap::new(),
            config: Config::default(),
            problems: Vec::new(),
        };
        let mut comment_lines = BTreeSet::new();
        for range in &parsed.comments {
            let line = fixture.line_of(range.start);
            let own_line = fixture.text[fixture.line_starts[line]..range.start]
                .trim()
                .is_empty();
            if own_line {
                comment_lines.insert(line);
            }
            let parts = parse_comment(&fixture.text[range.clone()]);
            fixture.comments.push(CommentAt {
                line,
                start: range.start,
                own_line,
                parts,
                target: None,
            });
        }
        let targets: Vec<Option<usize>> = fixture
            .comments
            .iter()
            .map(|comment| match comment.own_line {
                true => (comment.line + 1..fixture.line_starts.len()).find(|&line| {
                    !comment_lines.contains(&line) && !fixture.line_text(line).trim().is_empty()
                }),
                false => Some(comment.line),
            })
            .collect();
        for (comment, target) in fixture.comments.iter_mut().zip(targets) {
            comment.target = target;
        }
        for comment in &fixture.comments {
            for problem in &comment.parts.problems {
                fixture.problems.push((comment.line, problem.clone()));
            }
            if comment.parts.expectations.is_empty() {
                continue;
            }
            let Some(target) = comment.target else {
                fixture
                    .problems
                    .push((comment.line, "expectation applies to no line".to_string()));
                continue;
            };
            let expected = fixture.expected.entry(target).or_default();
            expected
                .expectations
                .extend(comment.parts.expectations.iter().cloned());
            expected.from_own_line |= comment.own_line;
        }
        fixture.read_config();
        fixture
    }

    /// Reads `# shapels: key=value, ...` from the first line.
    fn read_config(&mut self) {
        let first = self.line_text(0).trim().to_string();
        let Some(settings) = first.strip_prefix("# shapels:") else {
            return;
        };
        for setting in settings.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
            let value = match value.trim() {
                "true" => true,
                "false" => false,
                other => {
                    self.problems
                        .push((0, format!("`{key}` wants true or false, not {other:?}")));
                    continue;
                }
            };
            match key.trim() {
                "allow_non_fake_inputs" => self.config.allow_non_fake_inputs = value,
                "allow_fallback_kernels" => self.config.allow_fallback_kernels = value,
                "static_shapes" => self.config.static_shapes = value,
                other => self
                    .problems
                    .push((0, format!("unknown setting `{other}`"))),
            }
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// A line without its line ending.
    fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line];
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |&next| next);
        self.text[start..end]
            .trim_end_matches('\n')
            .trim_end_matches('\r')
    }
}

// ---------------------------------------------------------------------------
// What the analysis says, by line.

/// One inlay hint as the fixtures see it.
#[derive(Debug, Clone, PartialEq)]
struct ActualHint {
    name: String,
    shape: String,
    is_param: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct ActualDiagnostic {
    severity: Severity,
    code: String,
    message: String,
}

#[derive(Debug, Default, PartialEq)]
struct Actual {
    hints: Vec<ActualHint>,
    diagnostics: Vec<ActualDiagnostic>,
}

fn actual_by_line(fixture: &Fixture, analysis: &FileAnalysis) -> BTreeMap<usize, Actual> {
    let mut by_line: BTreeMap<usize, Actual> = BTreeMap::new();
    for hint in inlay_hints(analysis, None, HintDetail::Shape) {
        let binding = analysis
            .bindings
            .iter()
            .find(|b| b.range.end == hint.offset && b.tensor.shape.is_some());
        let (name, start, is_param) = match binding {
            Some(b) => (b.name.clone(), b.range.start, b.kind == BindingKind::Param),
            None => ("?".to_string(), hint.offset, false),
        };
        let shape = hint
            .label
            .strip_prefix(": ")
            .unwrap_or(&hint.label)
            .to_string();
        by_line
            .entry(fixture.line_of(start))
            .or_default()
            .hints
            .push(ActualHint {
                name,
                shape,
                is_param,
            });
    }
    let mut diagnostics: Vec<_> = analysis.diagnostics.iter().collect();
    diagnostics.sort_by_key(|d| (d.range.start, d.severity));
    for d in diagnostics {
        let actual = ActualDiagnostic {
            severity: d.severity,
            code: d.code.to_string(),
            message: d.message.clone(),
        };
        by_line
            .entry(fixture.line_of(d.range.start))
            .or_default()
            .diagnostics
            .push(actual);
    }
    by_line
}

/// The hints of a line as an expectation: names are left out only for a
/// single hint that is not a parameter.
fn hint_expectation(hints: &[ActualHint]) -> Option<Expectation> {
    if hints.is_empty() {
        return None;
    }
    let named = hints.len() > 1 || hints.iter().any(|h| h.is_param);
    let items = hints
        .iter()
        .map(|h| HintItem {
            name: named.then(|| h.name.clone()),
            shape: h.shape.clone(),
        })
        .collect();
    Some(Expectation::Hints(items))
}

fn same_shape(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
        || a.replace(char::is_whitespace, "") == b.replace(char::is_whitespace, "")
}

/// Compares a line's expectations with what the analysis says. Returns
/// whether they agree, and the expectations that would make them agree
/// (keeping the message texts of expectations that still hold).
fn reconcile(expected: &[Expectation], actual: &Actual) -> (bool, Vec<Expectation>) {
    let expected_hints: Vec<&HintItem> = expected
        .iter()
        .filter_map(|e| match e {
            Expectation::Hints(items) => Some(items),
            Expectation::Diagnostic { .. } => None,
        })
        .flatten()
        .collect();
    let hints_agree = expected_hints.len() == actual.hints.len()
        && expected_hints.iter().zip(&actual.hints).all(|(e, a)| {
            same_shape(&e.shape, &a.shape) && e.name.as_ref().is_none_or(|name| *name == a.name)
        });
    let mut updated: Vec<Expectation> = hint_expectation(&actual.hints).into_iter().collect();
    let mut unused: Vec<(Severity, &str, Option<&str>)> = expected
        .iter()
        .filter_map(|e| match e {
            Expectation::Diagnostic {
                severity,
                code,
                message,
            } => Some((*severity, code.as_str(), message.as_deref())),
            Expectation::Hints(_) => None,
        })
        .collect();
    let mut diagnostics_agree = true;
    for d in &actual.diagnostics {
        let found = unused.iter().position(|(severity, code, message)| {
            *severity == d.severity
                && *code == d.code
                && message.is_none_or(|m| d.message.contains(m))
        });
        let message = match found {
            Some(index) => unused.remove(index).2.map(str::to_string),
            None => {
                diagnostics_agree = false;
                None
            }
        };
        updated.push(Expectation::Diagnostic {
            severity: d.severity,
            code: d.code.clone(),
            message,
        });
    }
    (
        hints_agree && diagnostics_agree && unused.is_empty(),
        updated,
    )
}

/// What the analysis said on a line, with whole messages, for failure reports.
fn describe_actual(actual: &Actual) -> String {
    let mut parts: Vec<String> = hint_expectation(&actual.hints)
        .iter()
        .map(|e| format!("# {e}"))
        .collect();
    for d in &actual.diagnostics {
        let full = Expectation::Diagnostic {
            severity: d.severity,
            code: d.code.clone(),
            message: Some(d.message.clone()),
        };
        parts.push(format!("# {full}"));
    }
    if parts.is_empty() {
        "nothing".to_string()
    } else {
        parts.join("  ")
    }
}

// ---------------------------------------------------------------------------
// Rewriting a fixture's expectations.

/// The fixture's text with the expectations of the `changed` lines replaced.
/// Every other line, and all code and prose comments, are kept byte for byte.
fn rewrite(fixture: &Fixture, changed: &BTreeMap<usize, Vec<Expectation>>) -> String {
    let mut own_line_comments: BTreeMap<usize, &CommentAt> = BTreeMap::new();
    let mut trailing_comments: BTreeMap<usize, &CommentAt> = BTreeMap::new();
    for comment in &fixture.comments {
        if comment.own_line {
            own_line_comments.insert(comment.line, comment);
        } else {
            trailing_comments.insert(comment.line, comment);
        }
    }
    let mut out = String::new();
    for line in 0..fixture.line_starts.len() {
        let start = fixture.line_starts[line];
        let end = fixture
            .line_starts
            .get(line + 1)
            .map_or(fixture.text.len(), |&next| next);
        let whole = &fixture.text[start..end];
        let content = fixture.line_text(line);
        let ending = &whole[content.len()..];
        let indent = &content[..content.len() - content.trim_start().len()];

        if let Some(comment) = own_line_comments.get(&line)
            && !comment.parts.expectations.is_empty()
            && comment
                .target
                .is_some_and(|target| changed.contains_key(&target))
        {
            // The expectations move to the target line; prose stays.
            if !comment.parts.prose.is_empty() {
                out.push_str(&format!(
                    "{indent}{}{ending}",
                    comment.parts.prose.join("  ")
                ));
            }
            continue;
        }
        let Some(new) = changed.get(&line) else {
            out.push_str(whole);
            continue;
        };
        let own_line = fixture.expected.get(&line).is_some_and(|e| e.from_own_line);
        if own_line && !new.is_empty() {
            out.push_str(&format!("{indent}{}{ending}", render(new)));
        }
        let (code, prose) = match trailing_comments.get(&line) {
            Some(comment) => (
                &fixture.text[start..comment.start],
                comment.parts.prose.clone(),
            ),
            None => (content, Vec::new()),
        };
        let mut rebuilt = code.trim_end().to_string();
        if !prose.is_empty() {
            rebuilt.push_str("  ");
            rebuilt.push_str(&prose.join("  "));
        }
        if !own_line && !new.is_empty() {
            rebuilt.push_str("  ");
            rebuilt.push_str(&render(new));
        }
        // A line with nothing to change keeps its exact spacing.
        if rebuilt.trim_end() == content.trim_end() {
            rebuilt = content.to_string();
        }
        out.push_str(&rebuilt);
        out.push_str(ending);
    }
    out
}

// ---------------------------------------------------------------------------
// The test.

fn fixture_paths(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            fixture_paths(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "py") {
            out.push(path);
        }
    }
}

/// Checks one fixture: the failure lines, and the rewritten text when the
/// expectations disagree with the analysis.
fn check_fixture(name: &str, text: String) -> (Vec<String>, Option<String>) {
    let fixture = Fixture::new(text);
    let mut failures: Vec<String> = fixture
        .problems
        .iter()
        .map(|(line, problem)| format!("{name}:{}: {problem}", line + 1))
        .collect();
    let analysis = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        analyze(&fixture.text, &fixture.config)
    }));
    let Ok(analysis) = analysis else {
        failures.push(format!("{name}: the analysis panicked"));
        return (failures, None);
    };
    let actual = actual_by_line(&fixture, &analysis);
    let lines: BTreeSet<usize> = actual
        .keys()
        .chain(fixture.expected.keys())
        .copied()
        .collect();
    let mut changed = BTreeMap::new();
    let nothing = Actual::default();
    for line in lines {
        let expected = fixture
            .expected
            .get(&line)
            .map_or(&[][..], |e| &e.expectations);
        let actual = actual.get(&line).unwrap_or(&nothing);
        let (agree, updated) = reconcile(expected, actual);
        if !agree {
            let written = if expected.is_empty() {
                "nothing".to_string()
            } else {
                render(expected)
            };
            failures.push(format!(
                "{name}:{}: expected {written} / got {}",
                line + 1,
                describe_actual(actual)
            ));
            changed.insert(line, updated);
        }
    }
    let rewritten = (!changed.is_empty()).then(|| rewrite(&fixture, &changed));
    (failures, rewritten)
}

#[test]
fn fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let update = std::env::var_os("SHAPELS_UPDATE_FIXTURES").is_some_and(|v| v == "1");
    let mut paths = Vec::new();
    fixture_paths(&root, &mut paths);
    paths.sort();
    assert!(!paths.is_empty(), "no fixtures under {}", root.display());
    let mut failures = Vec::new();
    let mut updated = Vec::new();
    for path in &paths {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (file_failures, rewritten) = check_fixture(&format!("tests/fixtures/{name}"), text);
        match rewritten {
            Some(new_text) if update => {
                std::fs::write(path, new_text)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                updated.push(name);
                // Expectation mismatches are fixed by the rewrite; problems
                // with the fixture itself still fail.
                failures.extend(
                    file_failures
                        .into_iter()
                        .filter(|f| !f.contains(": expected ")),
                );
            }
            _ => failures.extend(file_failures),
        }
    }
    for name in &updated {
        eprintln!("updated tests/fixtures/{name}");
    }
    if !failures.is_empty() {
        panic!(
            "{} fixture mismatch(es) in {} file(s):\n{}\n(run with SHAPELS_UPDATE_FIXTURES=1 to accept the actual output)",
            failures.len(),
            paths.len(),
            failures.join("\n")
        );
    }
}

// ---------------------------------------------------------------------------
// Tests of the runner itself.

mod runner {
    use super::*;

    fn hint(name: Option<&str>, shape: &str) -> HintItem {
        HintItem {
            name: name.map(str::to_string),
            shape: shape.to_string(),
        }
    }

    fn diag(severity: Severity, code: &str, message: Option<&str>) -> Expectation {
        Expectation::Diagnostic {
            severity,
            code: code.to_string(),
            message: message.map(str::to_string),
        }
    }

    #[test]
    fn comment_parsing() {
        let c = parse_comment("# hint: [8, 10]");
        assert_eq!(
            c.expectations,
            [Expectation::Hints(vec![hint(None, "[8, 10]")])]
        );
        assert!(c.prose.is_empty() && c.problems.is_empty());

        let c = parse_comment("# hint: q [8, 10]; k [B, T // 2]");
        assert_eq!(
            c.expectations,
            [Expectation::Hints(vec![
                hint(Some("q"), "[8, 10]"),
                hint(Some("k"), "[B, T // 2]")
            ])]
        );

        let c = parse_comment(
            r#"# error[matmul-shape]: "cannot be \"multiplied\""  # warning[device-mismatch]"#,
        );
        assert_eq!(
            c.expectations,
            [
                diag(
                    Severity::Error,
                    "matmul-shape",
                    Some("cannot be \"multiplied\"")
                ),
                diag(Severity::Warning, "device-mismatch", None)
            ]
        );

        let c = parse_comment("# hint: [8]  error[x]  info[y]  information[z]  hint[w]");
        assert_eq!(
            c.expectations,
            [
                Expectation::Hints(vec![hint(None, "[8]")]),
                diag(Severity::Error, "x", None),
                diag(Severity::Information, "y", None),
                diag(Severity::Information, "z", None),
                diag(Severity::Hint, "w", None),
            ]
        );

        // A message may hold what would otherwise separate expectations.
        let c = parse_comment(r#"# error[x]: "a  # b"  # hint: [1]"#);
        assert_eq!(
            c.expectations,
            [
                diag(Severity::Error, "x", Some("a  # b")),
                Expectation::Hints(vec![hint(None, "[1]")])
            ]
        );

        // Prose before, between and after expectations is kept apart.
        let c = parse_comment("# (B, T, C)  # hint: [B, T, C]  # noqa: E501");
        assert_eq!(c.prose, ["# (B, T, C)", "# noqa: E501"]);
        assert_eq!(
            c.expectations,
            [Expectation::Hints(vec![hint(None, "[B, T, C]")])]
        );

        let c = parse_comment("# a hint: is not an expectation here");
        assert_eq!(c.prose, ["# a hint: is not an expectation here"]);
        assert!(c.expectations.is_empty());

        let c = parse_comment("# shapels: static_shapes=true");
        assert!(c.expectations.is_empty() && c.problems.is_empty());
    }

    #[test]
    fn malformed_expectations_are_problems() {
        for text in [
            "# error[x]: unquoted",
            "# error[x]: \"unterminated",
            "# error[]",
            "# error[bad code]",
            "# hint: 8, 10",
            "# warning[x] trailing words",
            "# hint: [8] error[x]",
        ] {
            assert!(
                !parse_comment(text).problems.is_empty(),
                "{text:?} should be a problem"
            );
        }
    }

    #[test]
    fn expectations_attach_to_lines() {
        let text = "\
# shapels: allow_non_fake_inputs=true, static_shapes=true
import torch
# hint: [8]

# just prose
x = torch.randn(8)
s = '# hint: [not a comment]'
y = x  # hint: [8]  # error[e]
def f(a, b):  # hint: a [1]; b [2]
    pass
# error[dangling]
";
        let fixture = Fixture::new(text.to_string());
        assert!(fixture.config.allow_non_fake_inputs && fixture.config.static_shapes);
        assert!(fixture.config.allow_fallback_kernels);
        let lines: Vec<usize> = fixture.expected.keys().copied().collect();
        assert_eq!(lines, [5, 7, 8]);
        assert!(fixture.expected[&5].from_own_line);
        assert_eq!(fixture.expected[&7].expectations.len(), 2);
        assert!(!fixture.expected[&7].from_own_line);
        assert_eq!(
            fixture.problems,
            [(10, "expectation applies to no line".to_string())]
        );

        let bad = Fixture::new("# shapels: static_shapes=yes, fast=true\n".to_string());
        assert_eq!(bad.problems.len(), 2);
    }

    fn actual(hints: &[(&str, &str, bool)], diagnostics: &[(Severity, &str, &str)]) -> Actual {
        Actual {
            hints: hints
                .iter()
                .map(|(name, shape, is_param)| ActualHint {
                    name: name.to_string(),
                    shape: shape.to_string(),
                    is_param: *is_param,
                })
                .collect(),
            diagnostics: diagnostics
                .iter()
                .map(|(severity, code, message)| ActualDiagnostic {
                    severity: *severity,
                    code: code.to_string(),
                    message: message.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn reconciling_expected_and_actual() {
        let single = actual(&[("y", "[8, 10]", false)], &[]);
        assert!(reconcile(&[Expectation::Hints(vec![hint(None, "[8, 10]")])], &single).0);
        assert!(
            reconcile(
                &[Expectation::Hints(vec![hint(Some("y"), "[8,10]")])],
                &single
            )
            .0
        );
        assert!(
            !reconcile(
                &[Expectation::Hints(vec![hint(Some("z"), "[8, 10]")])],
                &single
            )
            .0
        );
        assert!(!reconcile(&[Expectation::Hints(vec![hint(None, "[8, 11]")])], &single).0);
        assert!(!reconcile(&[], &single).0);

        let (agree, updated) = reconcile(
            &[],
            &actual(&[("q", "[1]", false), ("k", "[2]", false)], &[]),
        );
        assert!(!agree);
        assert_eq!(render(&updated), "# hint: q [1]; k [2]");
        let (_, updated) = reconcile(&[], &actual(&[("x", "[1]", true)], &[]));
        assert_eq!(render(&updated), "# hint: x [1]");

        let diagnostics = actual(
            &[],
            &[(
                Severity::Error,
                "matmul-shape",
                "mat1 and mat2 shapes cannot be multiplied",
            )],
        );
        assert!(
            reconcile(
                &[diag(
                    Severity::Error,
                    "matmul-shape",
                    Some("cannot be multiplied")
                )],
                &diagnostics
            )
            .0
        );
        assert!(reconcile(&[diag(Severity::Error, "matmul-shape", None)], &diagnostics).0);
        assert!(
            !reconcile(
                &[diag(Severity::Warning, "matmul-shape", None)],
                &diagnostics
            )
            .0
        );
        assert!(
            !reconcile(
                &[diag(Severity::Error, "matmul-shape", Some("broadcast"))],
                &diagnostics
            )
            .0
        );
        assert!(
            !reconcile(
                &[
                    diag(Severity::Error, "matmul-shape", None),
                    diag(Severity::Error, "matmul-shape", None)
                ],
                &diagnostics
            )
            .0
        );
        assert!(
            !reconcile(
                &[diag(Severity::Error, "device-mismatch", None)],
                &Actual::default()
            )
            .0
        );

        // A message that still holds is kept by the update; a wrong one is dropped.
        let both = actual(
            &[],
            &[
                (Severity::Error, "a", "first text"),
                (Severity::Error, "b", "second text"),
            ],
        );
        let (agree, updated) = reconcile(
            &[
                diag(Severity::Error, "a", Some("first")),
                diag(Severity::Error, "b", Some("wrong")),
            ],
            &both,
        );
        assert!(!agree);
        assert_eq!(render(&updated), "# error[a]: \"first\"  # error[b]");
    }

    /// Runs the rewrite of `text` as if the analysis had said `actual`.
    fn rewritten(text: &str, actual: BTreeMap<usize, Actual>) -> String {
        let fixture = Fixture::new(text.to_string());
        let lines: BTreeSet<usize> = actual
            .keys()
            .chain(fixture.expected.keys())
            .copied()
            .collect();
        let mut changed = BTreeMap::new();
        let nothing = Actual::default();
        for line in lines {
            let expected = fixture
                .expected
                .get(&line)
                .map_or(&[][..], |e| &e.expectations);
            let (agree, updated) = reconcile(expected, actual.get(&line).unwrap_or(&nothing));
            if !agree {
                changed.insert(line, updated);
            }
        }
        rewrite(&fixture, &changed)
    }

    #[test]
    fn rewriting_trailing_expectations() {
        let text = "\
import torch
x = torch.randn(8, 128)  # hint: [8, 127]
y = x @ x  # (B, T)  # error[old-code]: \"old\"
z = x   # keep  this   spacing
w = 1  # hint: [1]
";
        let actual = BTreeMap::from([
            (1, actual(&[("x", "[8, 128]", false)], &[])),
            (
                2,
                actual(
                    &[("y", "[8, 8]", false)],
                    &[(
                        Severity::Error,
                        "matmul-shape",
                        "shapes cannot be multiplied",
                    )],
                ),
            ),
            (3, actual(&[("z", "[8, 128]", false)], &[])),
        ]);
        assert_eq!(
            rewritten(text, actual),
            "\
import torch
x = torch.randn(8, 128)  # hint: [8, 128]
y = x @ x  # (B, T)  # hint: [8, 8]  # error[matmul-shape]
z = x  # keep  this   spacing  # hint: [8, 128]
w = 1
"
        );
    }

    #[test]
    fn rewriting_own_line_expectations_and_crlf() {
        let text =
            "x = 1\r\n    # hint: [1]\r\n    # prose\r\n    y = f(x)\r\nz = 2  # unchanged\r\n";
        let actual = BTreeMap::from([(
            3,
            actual(&[("y", "[2]", false)], &[(Severity::Warning, "w", "text")]),
        )]);
        assert_eq!(
            rewritten(text, actual),
            "x = 1\r\n    # prose\r\n    # hint: [2]  # warning[w]\r\n    y = f(x)\r\nz = 2  # unchanged\r\n"
        );
    }

    #[test]
    fn rewriting_keeps_agreeing_files_byte_for_byte() {
        let text = "x = f()  # hint: [1]   \n# hint: [2]\ny = g()\n";
        let actual = BTreeMap::from([
            (0, actual(&[("x", "[1]", false)], &[])),
            (2, actual(&[("y", "[2]", false)], &[])),
        ]);
        assert_eq!(rewritten(text, actual), text);
    }

    #[test]
    fn fixture_check_reports_each_disagreeing_line() {
        // The analysis of this text binds nothing that could match `[7]`.
        let (failures, rewritten) = check_fixture("t.py", "x = 1  # hint: [7]\n".to_string());
        assert_eq!(failures, ["t.py:1: expected # hint: [7] / got nothing"]);
        assert_eq!(rewritten.as_deref(), Some("x = 1\n"));
    }
}
