//! The `shapels` that the PyPI wheel installs, run as a user runs it.
//!
//! scripts/test builds the wheel with maturin, installs it into a fresh
//! virtual environment and names the installed binary in
//! `SHAPELS_WHEEL_BIN`; these tests run `shapels check` and a language
//! server session from it. Without that variable they fail when
//! `SHAPELS_REQUIRE_WHEEL=1` or `CI` is set, and are otherwise skipped with
//! a loud message, so that a plain `cargo test` works without Python.

mod common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use common::{Server, capabilities};
use serde_json::Value;

const SOURCE: &str = "import torch\nx = torch.randn(8, 128)\ny = x @ torch.randn(5, 3)\n";

/// Whether an environment variable is set to something other than empty,
/// `0` or `false`.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        !v.is_empty() && v != "0" && v != "false"
    })
}

/// The installed binary, checked to be the wheel's and not this build's;
/// `None` after a loud skip message.
fn wheel_binary() -> Option<PathBuf> {
    let hint = "`./scripts/test` builds the wheel, installs it into target/wheel-venv/ \
                and sets SHAPELS_WHEEL_BIN.";
    let Some(path) = std::env::var_os("SHAPELS_WHEEL_BIN").filter(|v| !v.is_empty()) else {
        if env_flag("SHAPELS_REQUIRE_WHEEL") || env_flag("CI") {
            panic!("the wheel test cannot run: SHAPELS_WHEEL_BIN is not set. {hint}");
        }
        // Written to the stderr handle rather than with eprintln!, which the
        // test harness captures: a skip must be seen without --nocapture.
        let banner = "!".repeat(72);
        let _ = writeln!(
            std::io::stderr(),
            "\n{banner}\n!! SKIPPED: the PyPI wheel test: no SHAPELS_WHEEL_BIN.\n!! {hint}\n{banner}"
        );
        return None;
    };
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "SHAPELS_WHEEL_BIN={} does not exist",
        path.display()
    );
    // What pip installed sits in the environment's scripts directory, next
    // to its python; a binary anywhere else was not installed from a wheel.
    let bin_dir = path.parent().expect("the binary's directory");
    assert!(
        bin_dir.join("python").exists() && bin_dir.join("../pyvenv.cfg").is_file(),
        "{} is not in the bin/ of a virtual environment",
        path.display()
    );
    // A copy, not a link back to the build this test comes from.
    let build = Path::new(env!("CARGO_BIN_EXE_shapels"));
    assert_ne!(
        fs::canonicalize(&path).ok(),
        fs::canonicalize(build).ok(),
        "SHAPELS_WHEEL_BIN is the cargo build's binary, not an installed one"
    );
    Some(path)
}

#[test]
fn the_installed_binary_checks_a_file() {
    let Some(shapels) = wheel_binary() else {
        return;
    };
    let version = std::process::Command::new(&shapels)
        .arg("--version")
        .output()
        .expect("run shapels --version");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("shapels {}", env!("CARGO_PKG_VERSION"))
    );

    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("model.py"), SOURCE).unwrap();
    let output = std::process::Command::new(&shapels)
        .args(["check", "model.py"])
        .current_dir(dir.path())
        .output()
        .expect("run shapels check");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "an error exits 1:\n{stdout}");
    assert!(
        stdout.contains("model.py:3:5: error[matmul-shape]"),
        "{stdout}"
    );
    assert!(stdout.contains("Found 1 error in 1 file."), "{stdout}");
}

/// Whether an ELF executable names a program interpreter (`PT_INTERP`,
/// the dynamic loader); `None` when the file is no 64-bit little-endian ELF.
fn elf_needs_loader(binary: &[u8]) -> Option<bool> {
    if binary.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let u16_at = |at: usize| Some(u16::from_le_bytes(binary.get(at..at + 2)?.try_into().ok()?));
    let phoff = u64::from_le_bytes(binary.get(0x20..0x28)?.try_into().ok()?) as usize;
    let (entry_size, entries) = (usize::from(u16_at(0x36)?), usize::from(u16_at(0x38)?));
    const PT_INTERP: u32 = 3;
    Some((0..entries).any(|i| {
        let at = phoff + i * entry_size;
        binary
            .get(at..at + 4)
            .is_some_and(|t| u32::from_le_bytes(t.try_into().unwrap()) == PT_INTERP)
    }))
}

#[test]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn the_installed_binary_is_linked_statically() {
    let Some(shapels) = wheel_binary() else {
        return;
    };
    // scripts/test builds the wheel as releases are built on Linux: no
    // loader to start, a third of a millisecond off every run.
    let binary = fs::read(&shapels).expect("read the installed binary");
    assert_eq!(
        elf_needs_loader(&binary),
        Some(false),
        "{} names a program interpreter: not linked statically",
        shapels.display()
    );
    // The test's own build is linked dynamically: the check can tell.
    let build = fs::read(env!("CARGO_BIN_EXE_shapels")).expect("read this build's binary");
    assert_eq!(elf_needs_loader(&build), Some(true));
}

#[test]
fn the_installed_binary_serves_lsp() {
    let Some(shapels) = wheel_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("file://{}/model.py", dir.path().display());
    let mut server = Server::start_program(&shapels, Some(dir.path()));
    let init = server.initialize(capabilities(false), Value::Null);
    assert_eq!(init["serverInfo"]["name"], "shapels");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));

    server.open(&uri, 1, SOURCE);
    let published = server.diagnostics(&uri);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics
            .iter()
            .any(|d| d["code"] == "matmul-shape" && d["range"]["start"]["line"] == 2),
        "no matmul-shape diagnostic on line 3: {diagnostics:#?}"
    );
    let hints = server.inlay_hints(&uri);
    assert!(
        hints.iter().any(|h| h["label"] == ": [8, 128]"),
        "no `: [8, 128]` hint: {hints:#?}"
    );
    assert!(server.shutdown_and_exit().success());
}
