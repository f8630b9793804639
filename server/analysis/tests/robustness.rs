//! The analysis on arbitrary input: bytes, and soups of Python tokens that
//! look like model code without being it. Every case must finish, without a
//! panic, well within a generous time bound (the interpreter's step budget
//! and depth limits are what make that true; this checks them).
//!
//! A bounded run of a few hundred cases, so that it belongs in the normal
//! test suite; the `fuzz/` harness explores the same ground without a bound.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use proptest::prelude::*;
use shapels_analysis::{Config, HintDetail, analyze, binding_at, expression_at, inlay_hints};

/// Far above what any case takes, even in a debug build on a busy machine:
/// only a hang (or a budget that stopped working) gets near it.
const CASE_TIME_LIMIT: Duration = Duration::from_secs(20);

/// Runs the whole analysis surface on `source` in a thread of its own, and
/// fails if that panics or takes longer than [`CASE_TIME_LIMIT`].
fn analyze_within_limit(source: String) -> Result<(), TestCaseError> {
    let (done, finished) = mpsc::channel();
    let shown = format!("{source:?}");
    // A stack like the language server's workers: the question is whether
    // the analysis hangs or panics, not how it fares on a small stack.
    let worker = thread::Builder::new()
        .stack_size(16 * 1024 * 1024)
        .spawn(move || {
            let analysis = analyze(&source, &Config::default());
            let strict = Config {
                allow_fallback_kernels: false,
                static_shapes: true,
                ..Config::default()
            };
            analyze(&source, &strict);
            inlay_hints(&analysis, None, HintDetail::Full);
            for offset in [0, source.len() / 2, source.len()] {
                binding_at(&analysis, offset);
                expression_at(&analysis, offset);
            }
            for binding in &analysis.bindings {
                binding
                    .tensor
                    .hover_markdown(Some(&binding.name), &|_| None);
            }
            let _ = done.send(());
        })
        .expect("spawn a thread");
    match finished.recv_timeout(CASE_TIME_LIMIT) {
        Ok(()) => Ok(()),
        // The sender was dropped without a send: the thread panicked.
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let _ = worker.join();
            Err(TestCaseError::fail(format!(
                "the analysis panicked on {shown}"
            )))
        }
        // The thread cannot be stopped; it is left behind, and the test fails.
        Err(mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(format!(
            "the analysis took over {CASE_TIME_LIMIT:?} on {shown}"
        ))),
    }
}

/// Tokens of model code, broken code and odd text, to be strung together.
const TOKENS: &[&str] = &[
    "import torch\n",
    "import torch.nn as nn\n",
    "import torch.nn.functional as F\n",
    "from einops import rearrange\n",
    "from dataclasses import dataclass\n",
    "@dataclass\n",
    "class M(nn.Module):\n",
    "def __init__(self, n):\n",
    "def forward(self, x):\n",
    "def f(*args, **kw):\n",
    "super().__init__()\n",
    "self.fc = nn.Linear(n, 4 * n)\n",
    "setattr(self, f\"l{n}\", nn.Linear(n, n))\n",
    "f\"{x!r:>{n}}{{\"",
    "torch.distributions.Normal(x, 1.0).sample((n,))",
    "torch.stft(x, n, return_complex=True)",
    "ys.append(x)\n",
    "for t in range(n):\n",
    "torch.stack(ys, dim=1)",
    "self.conv = nn.Conv2d(3, n, 3, padding=1)\n",
    "self.blocks = nn.ModuleList([M(n) for _ in range(3)])\n",
    "return self.fc(x)\n",
    "return x\n",
    "x = torch.randn(8, 64, 32)\n",
    "x = torch.zeros(2, 3, dtype=torch.long, device='cuda')\n",
    "B, T, C = x.size()\n",
    "y = x.view(B, T, 4, C // 4).transpose(1, 2)\n",
    "y = x @ x.transpose(-2, -1)\n",
    "y = torch.cat([x, x], dim=-1)\n",
    "y = F.softmax(y, dim=-1)\n",
    "y = rearrange(x, 'b t (h d) -> b h t d', h=4)\n",
    "y = torch.einsum('bij,bjk->bik', x, x)\n",
    "y = x[:, None, ..., -1:]\n",
    "y = x.reshape(-1, -1)\n",
    "m = M(32)\n",
    "m = m(m(x))\n",
    "for i in range(10**9):\n",
    "while True:\n",
    "if x.shape[0] > 2:\n",
    "else:\n",
    "with torch.no_grad():\n",
    "try:\n",
    "except Exception as e:\n",
    "lambda a: a @ a\n",
    "x = f(f, f)\n",
    "def f(x): return f(x)\n",
    "class A(A): pass\n",
    "x.y.z = x\n",
    "x += x\n",
    "del x\n",
    "global x\n",
    "yield x\n",
    "await x\n",
    "x = [x for x in x if x]\n",
    "x = {k: v for k, v in x.items()}\n",
    "if __name__ == '__main__':\n",
    "    ",
    "        ",
    "\t",
    "\n",
    "\r\n",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "=",
    "@",
    "*",
    "**",
    "-1",
    "0",
    "9999999999999999999999999",
    "1e308",
    "x",
    "self",
    "torch",
    "'",
    "\"\"\"",
    "#",
    "# (B, T, C)\n",
    "\\\n",
    "\0",
    "é",
    "日本",
    "🎉",
    "\u{feff}",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(0..TOKENS.len(), 0..120)
        .prop_map(|picks| picks.into_iter().map(|i| TOKENS[i]).collect())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        // A failure is reported with its input; nothing is written into the
        // source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic_or_hang(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        analyze_within_limit(String::from_utf8_lossy(&bytes).into_owned())?;
    }

    #[test]
    fn python_token_soup_never_panics_or_hangs(source in soup()) {
        analyze_within_limit(source)?;
    }
}

/// Inputs that once needed care, or that are easy to get wrong: each must
/// give a result (with unknown shapes where nothing can be known).
#[test]
fn special_inputs() {
    let deep = 5_000;
    let cases = [
        String::new(),
        "\0".repeat(100),
        "import torch\nx = torch.randn(2, 3)\0\ny = x @ x\0\n".to_string(),
        format!(
            "import torch\nx = {}1{}\n",
            "(".repeat(deep),
            ")".repeat(deep)
        ),
        format!(
            "import torch\nx = {}{}\n",
            "[".repeat(deep),
            "]".repeat(deep)
        ),
        format!(
            "import torch\nx = {}{}\n",
            "{".repeat(deep),
            "}".repeat(deep)
        ),
        format!(
            "import torch\nx = {}torch.randn(2, 3){}\n",
            "torch.relu(".repeat(deep),
            ")".repeat(deep)
        ),
        format!("import torch\nx = {}torch.randn(2)\n", "-".repeat(deep)),
        format!("import torch\nx = {}torch.randn(2)\n", "not ".repeat(deep)),
        format!(
            "import torch\nx = torch.randn(2){}\n",
            " + torch.randn(2)".repeat(deep)
        ),
        format!(
            "import torch\nx = torch.randn(2){}\n",
            ".relu()".repeat(deep)
        ),
        format!("import torch\nx = torch.randn(2){}\n", "[0]".repeat(deep)),
        format!(
            "import torch\nx = {}torch.randn(2)\n",
            "lambda: ".repeat(deep)
        ),
        format!("import torch\nx = {}1\n", "1 if x else ".repeat(deep)),
        format!("{}x = 1\n", "@d\n".repeat(deep)),
        // Blocks nested 5,000 deep with one-space indentation (12 MB with
        // four spaces, which the servers decline before parsing).
        (0..deep)
            .map(|depth| format!("{}if x:\n", " ".repeat(depth)))
            .chain([format!("{}y = torch.randn(2)\n", " ".repeat(deep))])
            .collect(),
        (0..deep)
            .map(|depth| format!("{}def f{depth}(x):\n", " ".repeat(depth)))
            .chain([format!("{}return torch.randn(2)\n", " ".repeat(deep))])
            .collect(),
    ];
    for source in cases {
        let shown: String = source.chars().take(60).collect();
        if let Err(err) = analyze_within_limit(source) {
            panic!("{shown:?}...: {err}");
        }
    }
}

/// The JSON string at the start of `text` (its opening quote first),
/// unescaped, and how many bytes it takes; enough JSON for these files.
fn json_string_at(text: &str) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = text.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, i + 1)),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// The string value of `"key":"..."` in one JSON line (a golden case's
/// `expr_line`).
fn json_string(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!("\"{key}\":\""))? + key.len() + 3;
    json_string_at(&line[start..]).map(|(s, _)| s)
}

/// The strings of `"key":["...", ...]` in one JSON line (a case's `setup`).
fn json_strings(line: &str, key: &str) -> Vec<String> {
    let Some(start) = line.find(&format!("\"{key}\":[")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut rest = &line[start + key.len() + 4..];
    while let Some((item, used)) = rest
        .starts_with('"')
        .then(|| json_string_at(rest))
        .flatten()
    {
        out.push(item);
        rest = rest[used..].trim_start_matches(',');
    }
    out
}

/// The top-level arguments of the first call on `line`, as byte ranges.
fn call_arguments(line: &str) -> Vec<std::ops::Range<usize>> {
    let Some(open) = line.find('(') else {
        return Vec::new();
    };
    let mut depth = 0;
    let mut start = open + 1;
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices().skip_while(|(i, _)| *i <= open) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') if depth == 0 => {
                if line[start..i].trim().is_empty() {
                    return out;
                }
                out.push(start..i);
                return out;
            }
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    Vec::new()
}

/// A golden case's snippet: its setup lines and the line under test.
struct GoldenCase {
    file: std::path::PathBuf,
    setup: Vec<String>,
    expr: String,
}

/// The first few golden cases of each callee (their arguments differ:
/// `F.unfold(x, 3)`, `F.unfold(x, kernel_size=2, stride=2)`).
fn golden_cases_per_callee(most: usize) -> Vec<GoldenCase> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/cases");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .expect("the golden cases")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a golden file");
        for line in text.lines() {
            let Some(expr) = json_string(line, "expr_line") else {
                continue;
            };
            let callee: String = expr
                .split('(')
                .next()
                .unwrap_or("")
                .rsplit(['=', ' '])
                .next()
                .unwrap_or("")
                .to_string();
            let count = seen.entry(callee).or_insert(0);
            *count += 1;
            if *count > most {
                continue;
            }
            out.push(GoldenCase {
                file: file.clone(),
                setup: json_strings(line, "setup"),
                expr,
            });
        }
    }
    out
}

/// The imports every generated case starts with.
const CASE_IMPORTS: &str = "import math\nimport torch\nimport torch.nn as nn\n\
     import torch.nn.functional as F\nfrom einops import rearrange, reduce, repeat\n";

/// Every rule the golden cases exercise, called with each argument made
/// something the analysis cannot read: an unknown value, a tuple of them,
/// a made-up parameter, `None`, a negative or a huge number. A rule may say
/// the result is unknown or report an error; it must not panic. (Depth Pro's
/// `F.unfold(..., stride=(s, s))` with `s` from an unknown helper did.)
#[test]
fn every_rule_with_unreadable_arguments() {
    let replacements = ["u", "(u, u)", "o", "None", "-5", "10**12", "p"];
    let mut cases = 0;
    for GoldenCase { file, setup, expr } in golden_cases_per_callee(6) {
        let args = call_arguments(&expr);
        let mut variants = Vec::new();
        for range in &args {
            let arg = &expr[range.clone()];
            // Keep a keyword's name; replace its value.
            let value_at = match arg.find('=') {
                Some(eq) if !arg[eq..].starts_with("==") => range.start + eq + 1,
                _ => range.start,
            };
            for r in replacements {
                variants.push(format!("{} {r}{}", &expr[..value_at], &expr[range.end..]));
            }
        }
        let mut body =
            format!("{CASE_IMPORTS}from helpers import unknown\n\n\ndef case(o, p: int):\n");
        for (i, variant) in variants.iter().enumerate() {
            // Each variant in a function of its own, so that one error
            // does not stop the others.
            if i > 0 {
                body.push_str(&format!("\n\ndef case{i}(o, p: int):\n"));
            }
            for s in &setup {
                body.push_str(&format!("    {s}\n"));
            }
            body.push_str("    u = unknown()\n");
            body.push_str(&format!("    {variant}\n"));
        }
        cases += variants.len();
        // Once as a library (each function on made-up inputs), once run
        // from a main block with concrete ones.
        let mut main = body.clone();
        main.push_str("\n\nif __name__ == \"__main__\":\n    case(3, 4)\n");
        for i in 1..variants.len() {
            main.push_str(&format!("    case{i}(3, 4)\n"));
        }
        for source in [body, main] {
            if let Err(err) = analyze_within_limit(source) {
                panic!("{}: {expr}: {err}", file.display());
            }
        }
    }
    assert!(
        cases > 1000,
        "only {cases} variants: were the golden cases found?"
    );
}

/// Every rule the golden cases exercise, with each tensor of the setup
/// replaced by one of an odd rank, size or dtype: 0-d, empty, a vector, five
/// dims, an int, a bool, a complex matrix. A rule's own indexing is easy to
/// get wrong there (`transpose` of a 0-d tensor, `cosine_similarity` of two,
/// a batch of matrices times a vector all panicked). Torch may raise; the
/// analysis must not panic.
#[test]
fn every_rule_on_inputs_of_odd_ranks() {
    let replacements = [
        "torch.tensor(1.5)",
        "torch.zeros(0)",
        "torch.randn(5)",
        "torch.randn(2, 3, 4, 5, 6)",
        "torch.tensor(3)",
        "torch.tensor(True)",
        "torch.randn(2, 0, 3)",
        "torch.randn(1, 1)",
        "torch.randn(3, 3, dtype=torch.complex64)",
    ];
    let mut cases = 0;
    for GoldenCase { file, setup, expr } in golden_cases_per_callee(6) {
        let mut body = CASE_IMPORTS.to_string();
        let mut calls = String::new();
        for (i, line) in setup.iter().enumerate() {
            // Only the setup's tensors: `x = torch.randn(2, 3)`, not layers.
            let Some((name, value)) = line.split_once(" = ") else {
                continue;
            };
            if !value.starts_with("torch.")
                || !name.chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            for r in replacements {
                let n = cases;
                cases += 1;
                body.push_str(&format!("\n\ndef case{n}():\n"));
                for (j, s) in setup.iter().enumerate() {
                    if j == i {
                        body.push_str(&format!("    {name} = {r}\n"));
                    } else {
                        body.push_str(&format!("    {s}\n"));
                    }
                }
                body.push_str(&format!("    {expr}\n"));
                calls.push_str(&format!("    case{n}()\n"));
            }
        }
        if calls.is_empty() {
            continue;
        }
        body.push_str(&format!("\n\nif __name__ == \"__main__\":\n{calls}"));
        if let Err(err) = analyze_within_limit(body) {
            panic!("{}: {expr}: {err}", file.display());
        }
    }
    assert!(
        cases > 10_000,
        "only {cases} variants: were the golden cases found?"
    );
}
