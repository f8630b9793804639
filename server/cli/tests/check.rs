//! `shapels check` and `shapels hints` as a user runs them: exit codes,
//! the JSON contract, the text and GitHub formats, files that cannot be read,
//! the directory walk and configuration files.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use common::shapels;
use serde_json::Value;

const CLEAN: &str = "import torch\nx = torch.randn(8, 128)\n";
const MATMUL_ERROR: &str = "import torch\nx = torch.randn(8, 128)\ny = x @ torch.randn(5, 3)\n";

fn project(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, contents) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    shapels()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run shapels")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not JSON ({err}):\n{}\n{}",
            stdout(output),
            stderr(output)
        )
    })
}

fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn paths(report: &Value) -> Vec<&str> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect()
}

#[test]
fn clean_file_exits_0() {
    let dir = project(&[("model.py", CLEAN.as_bytes())]);
    let output = run(dir.path(), &["check", "model.py"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("All checks passed!"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn error_diagnostic_exits_1() {
    let dir = project(&[("model.py", MATMUL_ERROR.as_bytes())]);
    let output = run(dir.path(), &["check", "model.py"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let text = stdout(&output);
    let line = text
        .lines()
        .find(|l| l.contains("error[matmul-shape]"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.starts_with("model.py:3:"), "{line}");
    assert!(text.contains("Found 1 error in 1 file."), "{text}");
}

#[test]
fn usage_and_io_problems_exit_2() {
    let dir = project(&[("model.py", CLEAN.as_bytes())]);
    let missing = run(dir.path(), &["check", "model.py", "missing.py"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("missing.py"),
        "{}",
        stderr(&missing)
    );

    let no_paths = run(dir.path(), &["check"]);
    assert_eq!(no_paths.status.code(), Some(2));

    let bad_format = run(dir.path(), &["check", "--format", "xml", "model.py"]);
    assert_eq!(bad_format.status.code(), Some(2));

    let bad_config = run(
        dir.path(),
        &["check", "--config-file", "nope.toml", "model.py"],
    );
    assert_eq!(bad_config.status.code(), Some(2));
    assert!(
        stderr(&bad_config).contains("nope.toml"),
        "{}",
        stderr(&bad_config)
    );
}

#[test]
fn help_and_version_exit_0() {
    let help = shapels().arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    for command in ["lsp", "check", "hints"] {
        assert!(stdout(&help).contains(command), "{}", stdout(&help));
    }
    let version = shapels().arg("--version").output().unwrap();
    assert_eq!(
        stdout(&version).trim(),
        format!("shapels {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn json_follows_the_contract() {
    let source = "import torch\nx = torch.randn(8, 128)\ns = \"🎉\"; z = torch.zeros(2, 3, dtype=torch.int64)\ny = x @ torch.randn(5, 3)\n";
    let dir = project(&[("model.py", source.as_bytes())]);
    let output = run(dir.path(), &["check", "--format", "json", "model.py"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(keys(&report), BTreeSet::from(["version", "files"]));
    assert_eq!(report["version"], 1);
    let file = &report["files"][0];
    assert_eq!(
        keys(file),
        BTreeSet::from(["path", "bindings", "diagnostics"])
    );
    assert_eq!(file["path"], "model.py");

    let bindings = file["bindings"].as_array().unwrap();
    for binding in bindings {
        assert_eq!(
            keys(binding),
            BTreeSet::from([
                "line", "column", "name", "shape", "dtype", "device", "origin"
            ]),
            "{binding}"
        );
    }
    let x = bindings
        .iter()
        .find(|b| b["name"] == "x")
        .unwrap_or_else(|| panic!("{bindings:#?}"));
    assert_eq!(x["line"], 2);
    assert_eq!(x["column"], 1);
    assert_eq!(x["shape"], serde_json::json!([8, 128]));
    assert_eq!(x["dtype"], "float32");
    assert_eq!(x["device"], "cpu");
    // Built at module level, outside any fake mode, `x` is a real tensor;
    // the contract only fixes the spelling.
    assert!(x["origin"] == "real" || x["origin"] == "fake", "{x}");
    // The column counts code points: the emoji is one.
    let z = bindings
        .iter()
        .find(|b| b["name"] == "z")
        .unwrap_or_else(|| panic!("{bindings:#?}"));
    assert_eq!(
        (z["line"].as_i64(), z["column"].as_i64()),
        (Some(3), Some(10))
    );
    assert_eq!(z["dtype"], "int64");
    let mut seen = BTreeSet::new();
    for binding in bindings {
        assert!(
            seen.insert((binding["line"].as_i64(), binding["name"].as_str())),
            "duplicate {binding}"
        );
    }

    let diagnostics = file["diagnostics"].as_array().unwrap();
    let matmul = diagnostics
        .iter()
        .find(|d| d["code"] == "matmul-shape")
        .unwrap();
    assert_eq!(
        keys(matmul),
        BTreeSet::from([
            "line",
            "column",
            "end_line",
            "end_column",
            "severity",
            "code",
            "message"
        ])
    );
    assert_eq!(matmul["line"], 4);
    assert_eq!(matmul["severity"], "error");
    assert!(
        matmul["end_column"].as_i64() > matmul["column"].as_i64()
            || matmul["end_line"].as_i64() > Some(4)
    );
}

#[test]
fn github_format_annotates() {
    let dir = project(&[("model.py", MATMUL_ERROR.as_bytes())]);
    let output = run(dir.path(), &["check", "--format", "github", "model.py"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let line = text.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("::error file=model.py,line=3,col="),
        "{text}"
    );
    assert!(line.contains(",title=shapels(matmul-shape)::"), "{text}");
}

#[test]
fn non_utf8_file_is_reported_and_the_rest_checked() {
    let dir = project(&[
        ("good.py", CLEAN.as_bytes()),
        ("latin1.py", b"# caf\xe9\nx = 1\n"),
    ]);
    let output = run(dir.path(), &["check", "--format", "json", "."]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("latin1.py: not UTF-8"), "{err}");
    assert!(err.contains("line 1"), "{err}");
    assert_eq!(paths(&json(&output)), ["good.py"]);
}

#[test]
fn byte_order_mark_is_not_a_column() {
    let dir = project(&[("bom.py", format!("\u{feff}{CLEAN}").as_bytes())]);
    let output = run(dir.path(), &["check", "--format", "json", "bom.py"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    let x = &report["files"][0]["bindings"][0];
    assert_eq!(
        (x["line"].as_i64(), x["column"].as_i64()),
        (Some(2), Some(1)),
        "{report}"
    );
}

#[test]
fn directory_walk_honours_gitignore() {
    let dir = project(&[
        (".gitignore", b"ignored.py\nbuild/\n"),
        ("a.py", CLEAN.as_bytes()),
        ("ignored.py", CLEAN.as_bytes()),
        ("build/generated.py", CLEAN.as_bytes()),
        ("pkg/b.py", CLEAN.as_bytes()),
        ("pkg/.ignore", b"skip_me.py\n"),
        ("pkg/skip_me.py", CLEAN.as_bytes()),
        ("pkg/notes.txt", b"not python"),
        ("pkg/stub.pyi", b"x: int\n"),
        (".hidden/c.py", CLEAN.as_bytes()),
    ]);
    let output = run(dir.path(), &["check", "--format", "json", "."]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(paths(&json(&output)), ["a.py", "pkg/b.py"]);

    // A file named explicitly is checked even when ignored.
    let output = run(
        dir.path(),
        &["check", "--format", "json", "ignored.py", "pkg"],
    );
    assert_eq!(paths(&json(&output)), ["ignored.py", "pkg/b.py"]);
}

#[test]
fn hints_writes_shapes_after_names() {
    let dir = project(&[("model.py", CLEAN.as_bytes())]);
    let output = run(dir.path(), &["hints", "model.py"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "import torch\nx: [8, 128] = torch.randn(8, 128)\n"
    );

    let full = run(dir.path(), &["hints", "--detail", "full", "model.py"]);
    assert!(
        stdout(&full).contains("x: [8, 128] float32 cpu = "),
        "{}",
        stdout(&full)
    );
}

/// A name with an annotation gets its shape after the annotation, so the
/// line still reads as Python with a note: `x: torch.Tensor [8, 128]`.
#[test]
fn hints_follow_annotations() {
    let source = "import torch\n\n\ndef f(x: torch.Tensor):\n    y: torch.Tensor = x * 2\n    return y\n\n\nif __name__ == \"__main__\":\n    f(torch.randn(8, 128))\n";
    let dir = project(&[("model.py", source.as_bytes())]);
    let output = run(dir.path(), &["hints", "model.py"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("def f(x: torch.Tensor [8, 128]):"), "{text}");
    assert!(
        text.contains("    y: torch.Tensor [8, 128] = x * 2"),
        "{text}"
    );
}

#[test]
fn pyproject_problems_are_reported_by_key() {
    let dir = project(&[
        (
            "pyproject.toml",
            b"[tool.shapels]\nstatic_shapes = \"yes\"\nallow_non_fake_inputs = true\n",
        ),
        ("src/model.py", CLEAN.as_bytes()),
    ]);
    let output = run(dir.path(), &["check", "src"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("warning: invalid setting `tool.shapels.static_shapes`"),
        "{err}"
    );
    assert_eq!(
        err.matches("static_shapes").count(),
        1,
        "reported once: {err}"
    );
}

#[test]
fn broken_pyproject_exits_2() {
    let dir = project(&[
        ("pyproject.toml", b"[tool.shapels\n"),
        ("model.py", CLEAN.as_bytes()),
    ]);
    let output = run(dir.path(), &["check", "model.py"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("pyproject.toml"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn log_level_goes_to_stderr_only() {
    let dir = project(&[("model.py", CLEAN.as_bytes())]);
    let output = run(
        dir.path(),
        &[
            "--log-level",
            "debug",
            "check",
            "--format",
            "json",
            "model.py",
        ],
    );
    json(&output);
    let output = shapels()
        .args(["check", "--format", "json", "model.py"])
        .env("SHAPELS_LOG", "info")
        .current_dir(dir.path())
        .output()
        .unwrap();
    json(&output);
    assert!(stderr(&output).contains("checking"), "{}", stderr(&output));
}

#[test]
fn files_that_are_not_python_are_refused() {
    let dir = project(&[
        ("model.py", MATMUL_ERROR.as_bytes()),
        ("notes.txt", b"x = 1\n"),
        ("app.js", b"const x = 1;\n"),
        (
            "run",
            b"#!/usr/bin/env python3\nimport torch\nx = torch.ones(2)\n",
        ),
        ("README", b"x = 1\n"),
    ]);
    let output = run(
        dir.path(),
        &[
            "check",
            "--format",
            "json",
            "notes.txt",
            "app.js",
            "model.py",
        ],
    );
    // Refused with a message each, and the Python file still checked.
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("notes.txt: not a Python file"), "{err}");
    assert!(err.contains("app.js: not a Python file"), "{err}");
    assert_eq!(paths(&json(&output)), ["model.py"]);

    // Never "All checks passed" for a file that was not checked.
    let output = run(dir.path(), &["check", "notes.txt"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        !stdout(&output).contains("All checks passed"),
        "{}",
        stdout(&output)
    );

    // A script without an extension is Python when its first line says so.
    let output = run(dir.path(), &["check", "--format", "json", "run"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(paths(&json(&output)), ["run"]);
    let output = run(dir.path(), &["check", "README"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("README: not a Python file"));

    // `hints` refuses them too; stdin is Python by definition.
    let output = run(dir.path(), &["hints", "app.js"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("app.js: not a Python file"));
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
}

#[test]
fn syntax_errors_are_information_and_counted() {
    let broken = "import torch\nx = torch.randn(8, 128)\ny = x @ @ x\nz = x.sum(0)\n";
    let dir = project(&[
        ("broken.py", broken.as_bytes()),
        ("model.py", CLEAN.as_bytes()),
    ]);
    let output = run(dir.path(), &["check", "broken.py", "model.py"]);
    // Not an error exit: what torch would raise decides that.
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("broken.py:3:9: information[syntax-error] syntax error;"),
        "{text}"
    );
    assert!(
        text.contains(
            "Found 1 note in 2 files (1 syntax error in 1 file: the shapes after them may be \
             incomplete)."
        ),
        "{text}"
    );

    let output = run(dir.path(), &["check", "--format", "json", "broken.py"]);
    let report = json(&output);
    let diagnostics = report["files"][0]["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{report}");
    let d = &diagnostics[0];
    assert_eq!(
        (&d["code"], &d["severity"], &d["line"], &d["column"]),
        (
            &Value::from("syntax-error"),
            &Value::from("information"),
            &Value::from(3),
            &Value::from(9)
        ),
        "{report}"
    );
    // The lines around it are analysed: `z` has its shape.
    let bindings = report["files"][0]["bindings"].as_array().unwrap();
    assert!(
        bindings
            .iter()
            .any(|b| b["name"] == "z" && b["shape"] == serde_json::json!([128])),
        "{report}"
    );

    // `hints` prints the file and warns that it is incomplete.
    let output = run(dir.path(), &["hints", "broken.py"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("broken.py: 1 syntax error, the first on line 3"),
        "{}",
        stderr(&output)
    );
    assert!(
        stdout(&output).contains("z: [128] = x.sum(0)"),
        "{}",
        stdout(&output)
    );
}

/// A module-level constant meeting the main block's tensors: torch runs it.
const REAL_CONSTANT: &str = "\
import torch
MEAN = torch.tensor([0.4, 0.4, 0.4])
if __name__ == \"__main__\":
    y = torch.rand(2, 3) - MEAN
";

#[test]
fn strict_fake_inputs_come_from_the_flag_and_the_pyproject() {
    let dir = project(&[("model.py", REAL_CONSTANT.as_bytes())]);
    let quiet = stdout(&run(dir.path(), &["check", "model.py"]));
    assert!(!quiet.contains("real-fake-mix"), "{quiet}");
    let strict = stdout(&run(
        dir.path(),
        &["check", "--allow-non-fake-inputs=false", "model.py"],
    ));
    assert!(strict.contains("warning[real-fake-mix]"), "{strict}");
    let strict = project(&[
        ("model.py", REAL_CONSTANT.as_bytes()),
        (
            "pyproject.toml",
            b"[tool.shapels]\nallow_non_fake_inputs = false\n",
        ),
    ]);
    let text = stdout(&run(strict.path(), &["check", "model.py"]));
    assert!(text.contains("warning[real-fake-mix]"), "{text}");
}

#[test]
fn a_stub_wins_over_a_module_of_the_same_name() {
    // The user's wrapper over a CUDA extension sits next to the code that
    // imports it; the `stubs` folder describes it, and the stub wins (as
    // Pyright's `stubPath` does), in the file's folder and at the root.
    let dir = project(&[
        ("pyproject.toml", b"[tool.shapels]\nstubs = [\"typings\"]\n"),
        (
            "typings/fastops.pyi",
            b"from jaxtyping import Float\nfrom torch import Tensor\n\ndef pool(x: Float[Tensor, \"b n d\"]) -> Float[Tensor, \"b d\"]: ...\n",
        ),
        ("fastops.py", b"import fastops_cuda\n\n\ndef pool(x):\n    return fastops_cuda.pool(x)\n"),
        (
            "main.py",
            b"import torch\nfrom fastops import pool\n\ny = pool(torch.randn(2, 5, 3))\n",
        ),
    ]);
    let output = run(dir.path(), &["check", "--format", "json", "main.py"]);
    let report = json(&output);
    let bindings = report["files"][0]["bindings"].as_array().unwrap();
    let y = bindings
        .iter()
        .find(|b| b["name"] == "y")
        .expect("y has a shape");
    assert_eq!(y["shape"], serde_json::json!([2, 3]), "{report}");
}

#[test]
fn a_project_without_shapels_settings_imports_from_its_root() {
    // `pkg/a.py` imports `pkg.b` as its project runs it, from the folder
    // its `pyproject.toml` (with no `[tool.shapels]`) marks, while `check`
    // runs from another folder.
    let dir = project(&[
        ("proj/pyproject.toml", b"[project]\nname = \"proj\"\n"),
        ("proj/pkg/__init__.py", b""),
        ("proj/pkg/b.py", b"def f(x):\n    return x.sum(1)\n"),
        (
            "proj/pkg/a.py",
            b"import torch\nfrom pkg.b import f\n\ny = f(torch.randn(4, 3)) + torch.randn(5)\n",
        ),
        ("elsewhere/.keep", b""),
    ]);
    let file = dir.path().join("proj/pkg/a.py");
    let output = run(
        &dir.path().join("elsewhere"),
        &["check", "--format", "json", file.to_str().unwrap()],
    );
    let report = json(&output);
    let codes: Vec<&str> = report["files"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["broadcast-shape"], "{report}");
}

/// The shape of binding `name` in the report's entry for `path`.
fn shape_of<'a>(report: &'a Value, path: &str, name: &str) -> &'a Value {
    let file = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} is not in the report"));
    let binding = file["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no binding {name} in {path}"));
    &binding["shape"]
}

#[test]
fn files_named_together_find_imports_as_python_runs_each() {
    // `python a/model.py` finds `a/layers.py` (its own folder) and not
    // `b/helper.py`, even when `b/helper.py` is checked in the same run: a
    // file named on the command line does not make its folder a place
    // where other files' imports are found (a named folder does).
    let dir = project(&[
        (
            "a/model.py",
            b"import torch\nfrom layers import WIDTH\nfrom helper import HEIGHT\nx = torch.zeros(WIDTH)\ny = torch.zeros(HEIGHT)\n",
        ),
        ("a/layers.py", b"WIDTH = 3\n"),
        ("b/helper.py", b"HEIGHT = 4\n"),
    ]);
    let files = json(&run(
        dir.path(),
        &["check", "--format", "json", "a/model.py", "b/helper.py"],
    ));
    assert_eq!(shape_of(&files, "a/model.py", "x"), &serde_json::json!([3]));
    // `HEIGHT` is not found: `torch.zeros(HEIGHT)` may be of any rank.
    assert_eq!(shape_of(&files, "a/model.py", "y"), &Value::Null);
    let folders = json(&run(
        dir.path(),
        &["check", "--format", "json", "a/model.py", "b"],
    ));
    assert_eq!(
        shape_of(&folders, "a/model.py", "y"),
        &serde_json::json!([4])
    );
}
