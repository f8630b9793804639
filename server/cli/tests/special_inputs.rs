//! Inputs at the edges, through the real binary: NUL bytes, text that is not
//! UTF-8, nesting 5,000 deep, and a 10 MB file. Each gets a result or a
//! clear message, never a crash (exit code 101, or a signal) or a hang.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::{Server, capabilities, shapels};
use serde_json::{Value, json};

/// Generous for a debug build on a busy machine; a hang goes far past it.
const RUN_TIME_LIMIT: Duration = Duration::from_secs(60);

fn check(dir: &Path, file: &str, contents: &[u8]) -> (Output, Value) {
    std::fs::write(dir.join(file), contents).unwrap();
    let started = Instant::now();
    let output = shapels()
        .args(["check", "--format", "json", file])
        .current_dir(dir)
        .output()
        .expect("run shapels check");
    assert!(
        started.elapsed() < RUN_TIME_LIMIT,
        "{file}: took {:?}",
        started.elapsed()
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("internal error"),
        "{file}: {stderr}"
    );
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{file}: no JSON report ({err}); stderr: {stderr}"));
    (output, report)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Python refuses a file with a NUL byte in it; shapels reads what it can
/// around one: what a NUL breaks is unknown, the rest is analysed.
#[test]
fn nul_bytes_make_what_they_touch_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let source = b"import torch\nx = torch.randn(2, 3)\ny = x @ x.T\0\nz = torch.zeros(4)\n# \0 in a comment\nw = torch.ones(5)\n\0";
    let (output, report) = check(dir.path(), "nul.py", source);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let bindings = report["files"][0]["bindings"].as_array().unwrap();
    let shape_of = |name: &str| {
        bindings
            .iter()
            .find(|b| b["name"] == name)
            .map(|b| b["shape"].clone())
    };
    assert_eq!(shape_of("x"), Some(json!([2, 3])), "{bindings:?}");
    assert_eq!(shape_of("w"), Some(json!([5])), "{bindings:?}");
}

#[test]
fn text_that_is_not_utf8_is_named_with_where_it_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let (output, report) = check(dir.path(), "latin1.py", b"import torch\n# caf\xe9\n");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("latin1.py: not UTF-8 (invalid byte on line 2"),
        "{}",
        stderr(&output)
    );
    assert_eq!(report["files"], json!([]));
    // Overlong encodings, lone surrogates and truncated sequences alike.
    for bytes in [
        &b"x = '\xc0\xaf'\n"[..],
        b"x = '\xed\xa0\x80'\n",
        b"x = '\xe6\x97",
    ] {
        let (output, _) = check(dir.path(), "bad.py", bytes);
        assert_eq!(output.status.code(), Some(2), "{bytes:?}");
        assert!(stderr(&output).contains("bad.py: not UTF-8"), "{bytes:?}");
    }
}

#[test]
fn nesting_5000_deep_gives_a_result() {
    let deep = 5_000;
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        format!("x = {}1{}\n", "(".repeat(deep), ")".repeat(deep)),
        format!("x = {}{}\n", "[".repeat(deep), "]".repeat(deep)),
        format!(
            "x = {}torch.randn(2, 3){}\n",
            "torch.relu(".repeat(deep),
            ")".repeat(deep)
        ),
        format!("x = torch.randn(2, 3){}\n", ".relu()".repeat(deep)),
        format!("x = torch.randn(2){}\n", " + torch.randn(2)".repeat(deep)),
        format!("x = {}torch.randn(2)\n", "-".repeat(deep)),
        // Blocks: 2,000 deep, since 5,000 would be 12 MB of indentation,
        // over the size shapels analyses (the analysis' own tests take
        // blocks 5,000 deep).
        (0..2_000)
            .map(|depth| format!("{}if x:\n", " ".repeat(depth)))
            .chain([format!("{}y = torch.randn(2)\n", " ".repeat(2_000))])
            .collect(),
    ];
    for (i, case) in cases.iter().enumerate() {
        let source = format!("import torch\nx = torch.randn(2, 3)\n{case}");
        let (output, report) = check(dir.path(), &format!("deep{i}.py"), source.as_bytes());
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "case {i}: {}",
            stderr(&output)
        );
        // What comes before the deep part is still understood.
        assert_eq!(
            report["files"][0]["bindings"][0]["shape"],
            json!([2, 3]),
            "case {i}"
        );
    }
}

/// One file is checked on the main thread when its stack may grow as far as
/// an analysis thread's; under a hard stack limit that forbids it, on a
/// thread of its own as before. Both give the same report for code nested
/// 5,000 deep.
#[test]
#[cfg(target_os = "linux")]
fn nesting_5000_deep_under_a_low_stack_limit_gives_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let source = format!(
        "import torch\nx = torch.randn(2, 3)\ny = {}torch.randn(2, 3){}\n",
        "torch.relu(".repeat(5_000),
        ")".repeat(5_000)
    );
    std::fs::write(dir.path().join("deep.py"), &source).unwrap();
    let run = |limit: &str| {
        // The shell sets both limits to 8 MiB, under the 17 MiB the main
        // thread would need, before it runs shapels.
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{limit}exec \"$0\" check --format json deep.py"))
            .arg(env!("CARGO_BIN_EXE_shapels"))
            .current_dir(dir.path())
            .output()
            .expect("run shapels check through sh");
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{limit}: {}",
            stderr(&output)
        );
        serde_json::from_slice::<Value>(&output.stdout).expect("a JSON report")
    };
    let low = run("ulimit -S -s 8192 && ulimit -H -s 8192 && ");
    let usual = run("");
    assert_eq!(low["files"][0]["bindings"], usual["files"][0]["bindings"]);
    assert_eq!(low["files"][0]["bindings"][0]["shape"], json!([2, 3]));
}

/// 10 MB of model code: over the size shapels analyses, so it is skipped
/// at once with a warning that says why, and the other files are checked.
#[test]
fn a_10_mb_file_is_skipped_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let model = include_str!("../../analysis/benches/data/gpt.py");
    let big = model.repeat(10 * 1024 * 1024 / model.len() + 1);
    std::fs::write(dir.path().join("big.py"), &big).unwrap();
    std::fs::write(
        dir.path().join("small.py"),
        "import torch\nx = torch.randn(2)\n",
    )
    .unwrap();
    let started = Instant::now();
    let output = shapels()
        .args(["check", "--format", "json", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(started.elapsed() < RUN_TIME_LIMIT);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("warning: big.py: 10.0 MiB, more than the 4 MiB shapels analyses; skipped"),
        "{}",
        stderr(&output)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["files"].as_array().unwrap().len(), 1);
    assert_eq!(report["files"][0]["path"], "small.py");

    // `hints` names the file it cannot do.
    let output = shapels()
        .args(["hints", "big.py"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("big.py: 10.0 MiB"),
        "{}",
        stderr(&output)
    );

    // The server says so once, and answers with nothing rather than stall.
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    let uri = "untitled:big.py";
    server.open(uri, 1, &big);
    let message = server.wait_for("a message about the size", |m| {
        m["method"] == "window/showMessage"
    });
    assert!(
        message["params"]["message"]
            .as_str()
            .unwrap()
            .contains("more than the 4 MiB shapels analyses"),
        "{message}"
    );
    assert_eq!(server.diagnostics(uri)["diagnostics"], json!([]));
    assert_eq!(server.inlay_hints(uri), Vec::<Value>::new());
    assert!(server.shutdown_and_exit().success());
}
