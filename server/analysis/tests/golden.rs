//! Every rule checked against real PyTorch: replays the golden cases that
//! `tests/golden/generate.py` recorded from torch (`tests/golden/cases/*.jsonl`)
//! through the analyzer.
//!
//! Each case is a snippet (setup lines + one expression line, after the shared
//! imports and any `imports` lines the case's family adds) and what torch
//! bound on the expression line (shape, dtype, device of each tensor) or the
//! exception it raised there. Outcomes:
//!
//! - exact: every binding matches (or torch raised and an error-severity
//!   diagnostic sits on the line);
//! - unknown: no binding, a `?`/variadic dim, no shape, dtype or device (allowed);
//! - wrong: a shape, dtype or device that differs from torch's, or a symbolic
//!   dim where torch's is concrete (fail);
//! - missed error: torch raised, no error diagnostic on the line (fail);
//! - false error: torch ran, the analyzer reports an error (fail).
//!
//! `tests/golden/known_wordings.txt` lists the caught errors whose message
//! does not start with torch's; it may only shrink too.
//!
//! `tests/golden/known_gaps.txt` lists the ids that fail today, one per line
//! with a reason. The test fails when an unlisted case fails, and when a
//! listed case no longer fails (so the list only shrinks). With
//! `SHAPELS_GOLDEN_WRITE_GAPS=1` the test rewrites the list to the current
//! failures, keeping the reasons already written.

#![allow(
    clippy::print_stdout,
    reason = "the coverage table is what this test reports"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use shapels_analysis::{Config, DimView, Severity, analyze};

const HEADER: &str = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\nif __name__ == \"__main__\":\n";

// ---------------------------------------------------------------- cases

#[derive(Debug, PartialEq, Eq, Clone, Copy, PartialOrd, Ord)]
enum Outcome {
    Exact,
    Unknown,
    Wrong,
    MissedError,
    FalseError,
    Panic,
}

impl Outcome {
    fn fails(self) -> bool {
        matches!(
            self,
            Outcome::Wrong | Outcome::MissedError | Outcome::FalseError | Outcome::Panic
        )
    }
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn dims(shape: &[DimView]) -> String {
    let parts: Vec<String> = shape
        .iter()
        .map(|d| match d {
            DimView::Known(n) => n.to_string(),
            DimView::Symbol(s) => s.clone(),
            DimView::Variadic(s) => format!("*{s}"),
            DimView::Unknown => "?".into(),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// Runs one case; returns the outcome and a one-line explanation.
fn run_case(case: &Json) -> (Outcome, String) {
    let setup: Vec<&str> = match case.get("setup") {
        Some(Json::Array(a)) => a.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    let expr = case
        .get("expr_line")
        .and_then(Json::as_str)
        .unwrap_or_default();
    // a family's own imports (`import einops`, ...) follow the shared ones; the
    // other families' snippets stay exactly the header
    let mut src = String::from(HEADER);
    if let Some(Json::Array(imports)) = case.get("imports") {
        let at = src.find("\n\n").map_or(0, |i| i + 1);
        let lines: String = imports
            .iter()
            .filter_map(Json::as_str)
            .map(|l| format!("{l}\n"))
            .collect();
        src.insert_str(at, &lines);
    }
    for line in &setup {
        src.push_str("    ");
        src.push_str(line);
        src.push('\n');
    }
    src.push_str("    ");
    let line_start = src.len();
    src.push_str(expr);
    let line_end = src.len();
    src.push('\n');

    let analysis = match std::panic::catch_unwind(|| analyze(&src, &Config::default())) {
        Ok(a) => a,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_default();
            return (Outcome::Panic, format!("analyzer panicked: {msg}"));
        }
    };
    let errors: Vec<_> = analysis
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    let on_line = |start: usize| (line_start..=line_end).contains(&start);

    if let Some(err) = case.get("error") {
        let early: Vec<_> = errors
            .iter()
            .filter(|d| d.range.start < line_start)
            .collect();
        if let Some(d) = early.first() {
            return (
                Outcome::FalseError,
                format!("error before the line: {}", d.message),
            );
        }
        let on = errors.iter().filter(|d| on_line(d.range.start));
        let torch = err
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let mut ours = None;
        // Python's own rendering (`KeyError: 3`) where the bare message says
        // nothing.
        let ty = err.get("type").and_then(Json::as_str).unwrap_or_default();
        let rendered = format!("{ty}: {}", torch.trim());
        for d in on {
            // Ours may add where the sizes come from after torch's words.
            if d.message.starts_with(torch.trim()) || d.message.starts_with(&rendered) {
                return (Outcome::Exact, String::new());
            }
            ours.get_or_insert_with(|| d.message.clone());
        }
        if let Some(ours) = ours {
            return (Outcome::Exact, format!("worded `{ours}`; torch: `{torch}`"));
        }
        let msg = err
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let mut short: String = msg.chars().take(90).collect();
        if short.len() < msg.len() {
            short.push('…');
        }
        return (Outcome::MissedError, format!("missed {ty}: {short}"));
    }

    if let Some(d) = errors.first() {
        return (
            Outcome::FalseError,
            format!(
                "false error: {}",
                d.message.chars().take(120).collect::<String>()
            ),
        );
    }
    let dd = matches!(case.get("data_dependent"), Some(Json::Bool(true)));
    let Some(Json::Object(expected)) = case.get("bindings") else {
        return (Outcome::Unknown, "no bindings recorded".into());
    };
    let mut outcome = Outcome::Exact;
    let mut notes = Vec::new();
    for (name, want) in expected {
        let Some(got) = analysis
            .bindings
            .iter()
            .rfind(|b| &b.name == name && on_line(b.range.start))
        else {
            outcome = outcome.max(Outcome::Unknown);
            continue;
        };
        let want_shape: Vec<i64> = match want.get("shape") {
            Some(Json::Array(a)) => a
                .iter()
                .map(|v| v.as_f64().map_or(-1, |n| n as i64))
                .collect(),
            _ => Vec::new(),
        };
        let want_s = format!(
            "[{}]",
            want_shape
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        match &got.tensor.shape {
            None => outcome = outcome.max(Outcome::Unknown),
            Some(shape) => {
                let variadic = shape.iter().any(|d| matches!(d, DimView::Variadic(_)));
                if variadic {
                    outcome = outcome.max(Outcome::Unknown);
                } else if shape.len() != want_shape.len() {
                    outcome = outcome.max(Outcome::Wrong);
                    notes.push(format!("{name} {} vs torch {want_s}", dims(shape)));
                } else {
                    for (d, w) in shape.iter().zip(&want_shape) {
                        match d {
                            DimView::Known(n) if n == w => {}
                            DimView::Unknown => outcome = outcome.max(Outcome::Unknown),
                            DimView::Symbol(_) if dd => outcome = outcome.max(Outcome::Unknown),
                            _ => {
                                outcome = outcome.max(Outcome::Wrong);
                                notes.push(format!("{name} {} vs torch {want_s}", dims(shape)));
                                break;
                            }
                        }
                    }
                }
            }
        }
        for (field, got_v) in [("dtype", &got.tensor.dtype), ("device", &got.tensor.device)] {
            let want_v = want.get(field).and_then(Json::as_str).unwrap_or_default();
            match got_v {
                None => outcome = outcome.max(Outcome::Unknown),
                Some(g) if g == want_v => {}
                Some(g) => {
                    outcome = outcome.max(Outcome::Wrong);
                    notes.push(format!("{name} {field} {g} vs torch {want_v}"));
                }
            }
        }
    }
    (outcome, notes.join("; "))
}

#[derive(Default)]
struct Counts {
    cases: usize,
    exact: usize,
    unknown: usize,
    gaps: usize,
    errors: usize,
    errors_caught: usize,
    /// Caught errors whose message starts with torch's own.
    errors_worded: usize,
}

#[test]
fn golden_cases_match_torch() {
    let dir = golden_dir();
    let gaps_path = dir.join("known_gaps.txt");
    let gaps_text = std::fs::read_to_string(&gaps_path).unwrap_or_default();
    // Caught errors we word differently from torch, today: may only shrink.
    let wordings_path = dir.join("known_wordings.txt");
    let known_wordings: BTreeSet<String> = std::fs::read_to_string(&wordings_path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    for line in gaps_text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (id, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        known.insert(id.to_string(), reason.trim().to_string());
    }

    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("cases"))
        .expect("tests/golden/cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden cases in {}", dir.display());

    // a panic is a failing outcome of its case, reported with the others
    std::panic::set_hook(Box::new(|_| {}));
    let mut counts: BTreeMap<String, Counts> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut failing: BTreeMap<String, String> = BTreeMap::new(); // id -> reason (current)
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    // id -> our message, for caught errors not in torch's words
    let mut misworded: BTreeMap<String, String> = BTreeMap::new();
    // names with at least one exactly matched (non-error) golden case
    let mut functions: BTreeSet<String> = BTreeSet::new();
    let mut layers: BTreeSet<String> = BTreeSet::new();
    for file in &files {
        let family = file.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(file).unwrap();
        let c = counts.entry(family.clone()).or_default();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let case = serde_json::from_str::<Json>(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", file.display(), n + 1));
            let id = case
                .get("id")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string();
            seen.insert(id.clone());
            c.cases += 1;
            let is_error = case.get("error").is_some();
            c.errors += usize::from(is_error);
            let (outcome, why) = run_case(&case);
            match outcome {
                Outcome::Exact => {
                    c.exact += 1;
                    c.errors_caught += usize::from(is_error);
                    if is_error && why.is_empty() {
                        c.errors_worded += 1;
                    } else if is_error {
                        misworded.insert(id.clone(), why.clone());
                    }
                    if !is_error {
                        covered(&case, &mut functions, &mut layers);
                    }
                }
                Outcome::Unknown => c.unknown += 1,
                _ => {}
            }
            let listed = known.contains_key(&id);
            if outcome.fails() {
                let kind = match outcome {
                    Outcome::Wrong => "wrong",
                    Outcome::MissedError => "missed-error",
                    Outcome::Panic => "panic",
                    _ => "false-error",
                };
                failing.insert(id.clone(), format!("{kind}: {why}"));
                if listed {
                    c.gaps += 1;
                } else {
                    let expr = case
                        .get("expr_line")
                        .and_then(Json::as_str)
                        .unwrap_or_default();
                    unexpected.push(format!("{id} [{kind}] `{expr}`: {why}"));
                }
            } else if listed {
                fixed.push(format!("{id} ({outcome:?}): listed as `{}`", known[&id]));
            }
        }
    }

    drop(std::panic::take_hook());
    let mut table = String::from(
        "family        cases  exact unknown  gaps  errors(caught, in torch's words)\n",
    );
    let mut total = Counts::default();
    for (fam, c) in &counts {
        let _ = writeln!(
            table,
            "{fam:<12} {:>6} {:>6} {:>7} {:>5}  {:>5} ({}, {})",
            c.cases, c.exact, c.unknown, c.gaps, c.errors, c.errors_caught, c.errors_worded
        );
        total.cases += c.cases;
        total.exact += c.exact;
        total.unknown += c.unknown;
        total.gaps += c.gaps;
        total.errors += c.errors;
        total.errors_caught += c.errors_caught;
        total.errors_worded += c.errors_worded;
    }
    let _ = writeln!(
        table,
        "{:<12} {:>6} {:>6} {:>7} {:>5}  {:>5} ({}, {})",
        "total",
        total.cases,
        total.exact,
        total.unknown,
        total.gaps,
        total.errors,
        total.errors_caught,
        total.errors_worded
    );
    println!("{table}");
    println!(
        "coverage: {} torch functions / Tensor methods and {} nn layers with an exact golden case",
        functions.len(),
        layers.len()
    );
    if std::env::var_os("SHAPELS_GOLDEN_LIST").is_some() {
        println!(
            "functions: {}",
            functions.iter().cloned().collect::<Vec<_>>().join(" ")
        );
        println!(
            "layers: {}",
            layers.iter().cloned().collect::<Vec<_>>().join(" ")
        );
    }

    let stale: Vec<&String> = known.keys().filter(|id| !seen.contains(*id)).collect();

    if std::env::var_os("SHAPELS_GOLDEN_WRITE_GAPS").is_some() {
        let mut out = String::from(
            "# Golden cases (tests/golden/cases) that the analyzer gets wrong today: `id reason`.\n\
             # Checked by server/analysis/tests/golden.rs; the list may only shrink.\n",
        );
        for (id, now) in &failing {
            let reason = known.get(id).filter(|r| !r.is_empty()).unwrap_or(now);
            let _ = writeln!(out, "{id} {reason}");
        }
        std::fs::write(&gaps_path, out).unwrap();
        println!("rewrote {} ({} gaps)", gaps_path.display(), failing.len());
        let mut out = String::from(
            "# Golden errors the analyzer catches but words differently from torch: `id our message`.\n\
             # Checked by server/analysis/tests/golden.rs; the list may only shrink.\n",
        );
        for (id, ours) in &misworded {
            let _ = writeln!(out, "{id} {}", ours.replace('\n', " "));
        }
        std::fs::write(&wordings_path, out).unwrap();
        println!(
            "rewrote {} ({} wordings)",
            wordings_path.display(),
            misworded.len()
        );
        return;
    }

    let mut report = String::new();
    if !unexpected.is_empty() {
        let _ = writeln!(
            report,
            "{} cases disagree with torch and are not in known_gaps.txt:",
            unexpected.len()
        );
        for u in unexpected
            .iter()
            .take(if std::env::var_os("SHAPELS_GOLDEN_ALL").is_some() {
                usize::MAX
            } else {
                60
            })
        {
            let _ = writeln!(report, "  {u}");
        }
        if unexpected.len() > 60 {
            let _ = writeln!(report, "  … and {} more", unexpected.len() - 60);
        }
    }
    if !fixed.is_empty() {
        let _ = writeln!(
            report,
            "{} cases in known_gaps.txt now pass; remove them:",
            fixed.len()
        );
        for f in fixed.iter().take(60) {
            let _ = writeln!(report, "  {f}");
        }
    }
    let new_wordings: Vec<_> = misworded
        .iter()
        .filter(|(id, _)| !known_wordings.contains(*id))
        .collect();
    if !new_wordings.is_empty() {
        let _ = writeln!(
            report,
            "{} caught errors are no longer in torch's words (not in known_wordings.txt):",
            new_wordings.len()
        );
        for (id, ours) in new_wordings.iter().take(60) {
            let _ = writeln!(report, "  {id}: {ours}");
        }
    }
    let worded_now: Vec<_> = known_wordings
        .iter()
        .filter(|id| !misworded.contains_key(*id))
        .collect();
    if !worded_now.is_empty() {
        let _ = writeln!(
            report,
            "{} ids in known_wordings.txt are now in torch's words (or no longer caught); remove them:",
            worded_now.len()
        );
        for id in worded_now.iter().take(60) {
            let _ = writeln!(report, "  {id}");
        }
    }
    if !stale.is_empty() {
        let _ = writeln!(
            report,
            "{} ids in known_gaps.txt name no case; remove them:",
            stale.len()
        );
        for s in stale.iter().take(20) {
            let _ = writeln!(report, "  {s}");
        }
    }
    // issue #4: the rule table covers >= 250 functions/methods and >= 60 layers,
    // each checked against torch by at least one golden case it gets exactly right
    if functions.len() < MIN_FUNCTIONS || layers.len() < MIN_LAYERS {
        let _ = writeln!(
            report,
            "coverage fell below the claim: {} functions/methods (want >= {MIN_FUNCTIONS}), {} layers (want >= {MIN_LAYERS})",
            functions.len(),
            layers.len()
        );
    }
    assert!(
        report.is_empty(),
        "{report}\n(SHAPELS_GOLDEN_WRITE_GAPS=1 rewrites known_gaps.txt)"
    );
}

const MIN_FUNCTIONS: usize = 250;
const MIN_LAYERS: usize = 60;

/// Calls that are not tensor ops of the rule table.
const NOT_OPS: &[&str] = &[
    "Tensor.size",
    "Tensor.dim",
    "Tensor.numel",
    "torch.device",
    "torch.Size",
    "torch.tensor",
];

/// Credit the names a case exercises: `torch.*`/`torch.linalg.*`/`F.*` calls and
/// `.method(` calls on the expression line, and `nn.Layer` classes built in the
/// setup as `var = nn.Layer(...)` whose `var(` is called on the expression line.
fn covered(case: &Json, functions: &mut BTreeSet<String>, layers: &mut BTreeSet<String>) {
    let expr = case
        .get("expr_line")
        .and_then(Json::as_str)
        .unwrap_or_default();
    let b = expr.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    for (i, _) in expr.match_indices('(') {
        let mut s = i;
        while s > 0 && (ident(b[s - 1]) || b[s - 1] == b'.') {
            s -= 1;
        }
        let path = &expr[s..i];
        let name = if let Some(rest) = path.strip_prefix("torch.") {
            format!("torch.{rest}")
        } else if let Some(rest) = path.strip_prefix("F.") {
            format!("F.{rest}")
        } else if let Some((_, m)) = path.rsplit_once('.') {
            if path.starts_with("nn.") || m.is_empty() {
                continue;
            }
            format!("Tensor.{m}")
        } else {
            continue;
        };
        if !NOT_OPS.contains(&name.as_str()) {
            functions.insert(name);
        }
    }
    if let Some(Json::Array(setup)) = case.get("setup") {
        for line in setup.iter().filter_map(Json::as_str) {
            let Some((var, rhs)) = line.split_once(" = nn.") else {
                continue;
            };
            let class: String = rhs
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let called = format!("{}(", var.trim());
            let is_call = expr
                .match_indices(&called)
                .any(|(k, _)| k == 0 || !ident(b[k - 1]));
            if is_call
                && !class.is_empty()
                && !["Sequential", "ModuleList", "ModuleDict"].contains(&class.as_str())
            {
                layers.insert(format!("nn.{class}"));
            }
        }
    }
}
