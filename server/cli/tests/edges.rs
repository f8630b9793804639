//! `shapels check` and `shapels hints` at the edges: files that are not
//! files, sizes known before reading, configuration files that are not
//! what they seem, names that are not UTF-8, and long files against the
//! step budget.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::shapels;
use serde_json::Value;

/// Generous for a debug build on a busy machine; a read that never ends
/// goes far past it.
const RUN_TIME_LIMIT: Duration = Duration::from_secs(60);

/// Runs `shapels args` in `dir`, killing it if it runs past the limit.
fn run(dir: &Path, args: &[&str]) -> Output {
    let child = shapels()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run shapels");
    let pid = child.id();
    let started = Instant::now();
    let (done, finished) = std::sync::mpsc::channel();
    let waiter = thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = done.send(());
        output
    });
    if finished.recv_timeout(RUN_TIME_LIMIT).is_err() {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        panic!(
            "shapels {args:?} still running after {:?}",
            started.elapsed()
        );
    }
    waiter.join().unwrap().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const CLEAN: &str = "import torch\nx = torch.randn(8, 128)\n";

#[cfg(unix)]
#[test]
fn a_named_pipe_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("mkfifo")
        .arg(dir.path().join("pipe.py"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    std::fs::write(dir.path().join("model.py"), CLEAN).unwrap();
    for args in [&["check", "pipe.py"][..], &["hints", "pipe.py"]] {
        let output = run(dir.path(), args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("pipe.py: not a regular file (a named pipe)"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // Found by the walk, it is not a Python file to check at all.
    let output = run(dir.path(), &["check", "."]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("(1 file)"), "{}", stdout(&output));
}

#[cfg(unix)]
#[test]
fn devices_are_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.py"), CLEAN).unwrap();
    let output = run(dir.path(), &["check", "/dev/zero"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("/dev/zero: not a regular file (a device)"),
        "{}",
        stderr(&output)
    );
    let output = run(
        dir.path(),
        &["check", "--config-file", "/dev/zero", "model.py"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot read /dev/zero: not a regular file"),
        "{}",
        stderr(&output)
    );
}

/// A sparse 1 GiB file is declined from its size alone, and stdin that
/// never ends is read no further than the limit.
#[test]
fn sizes_are_known_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("generated.py")).unwrap();
    file.set_len(1024 * 1024 * 1024).unwrap();
    std::fs::write(dir.path().join("model.py"), CLEAN).unwrap();
    let output = run(dir.path(), &["check", "."]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "warning: generated.py: 1024.0 MiB, more than the 4 MiB shapels analyses; skipped"
        ),
        "{}",
        stderr(&output)
    );

    let mut child = shapels()
        .args(["hints", "-"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let line = b"x = 1\n".repeat(10_000);
        let started = Instant::now();
        // Until the reader stops reading (a broken pipe), or far past
        // the limit if it never does.
        while started.elapsed() < RUN_TIME_LIMIT {
            if stdin.write_all(&line).is_err() {
                return true;
            }
        }
        false
    });
    let output = child.wait_with_output().unwrap();
    assert!(writer.join().unwrap(), "shapels hints - read on and on");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("stdin: more than the 4 MiB shapels analyses"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_toml_error_quotes_a_short_line() {
    let dir = tempfile::tempdir().unwrap();
    let long_line = format!(
        "[tool.shapels]\nstatic_shapes = \"{}\n",
        "a".repeat(200_000)
    );
    std::fs::write(dir.path().join("pyproject.toml"), long_line).unwrap();
    std::fs::write(dir.path().join("model.py"), CLEAN).unwrap();
    let output = run(dir.path(), &["check", "model.py"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("cannot parse"), "{err}");
    assert!(err.len() < 2_000, "{} bytes on stderr", err.len());
    // Only the configuration was broken: every path was checked.
    assert!(
        !stdout(&output).contains("some paths could not be checked"),
        "{}",
        stdout(&output)
    );
    assert!(
        stdout(&output).contains("All checks passed!"),
        "{}",
        stdout(&output)
    );

    let output = run(dir.path(), &["check", "model.py", "missing.py"]);
    assert!(
        stdout(&output).contains("some paths could not be checked"),
        "{}",
        stdout(&output)
    );
}

#[cfg(unix)]
#[test]
fn file_names_that_are_not_utf8_are_kept_whole() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
    std::fs::write(
        dir.path().join(name),
        "import torch\nx = torch.randn(2, 3)\ny = x @ x\n",
    )
    .unwrap();
    let output = run(dir.path(), &["check", "--format", "json", "."]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["files"][0]["path"], "caf\\xE9.py");
    assert!(
        stderr(&output).contains("the file name is not UTF-8"),
        "{}",
        stderr(&output)
    );
    let output = run(dir.path(), &["check", "--format", "github", "."]);
    assert!(
        stdout(&output).contains("file=caf\\xE9.py,"),
        "{}",
        stdout(&output)
    );
}

/// The case of the issue: 40,000 lines, more than the old fixed budget
/// could run, with an error on the last one.
#[test]
fn a_long_file_is_checked_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = String::from("import torch\n");
    for i in 0..40_000 {
        source.push_str(&format!("x{i} = torch.randn(3, 3)\n"));
    }
    source.push_str("y = x39999 @ torch.randn(4, 4)\n");
    std::fs::write(dir.path().join("long.py"), source).unwrap();
    let output = run(dir.path(), &["check", "long.py"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("long.py:40002:5: error[matmul-shape]"),
        "{}",
        stdout(&output)
    );
    assert!(!stdout(&output).contains("analysis-budget"));
}

#[test]
fn running_out_of_the_step_budget_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let source = "import torch\nn = 0\nfor a in range(64):\n    for b in range(64):\n        for c in range(64):\n            for d in range(64):\n                n = n + 1\ny = torch.randn(2, 3) @ torch.randn(4, 5)\n";
    std::fs::write(dir.path().join("loops.py"), source).unwrap();
    let output = run(dir.path(), &["check", "loops.py"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(
            "loops.py:7:17: information[analysis-budget] analysis stopped here: step budget of"
        ),
        "{text}"
    );
    assert!(text.contains("shapes below are unknown"), "{text}");
    assert!(text.contains("Found 1 note in 1 file."), "{text}");
}
