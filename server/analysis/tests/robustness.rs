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
                binding.tensor.hover_markdown(Some(&binding.name));
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
