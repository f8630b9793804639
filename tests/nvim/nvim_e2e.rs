//! End-to-end test in a real, headless Neovim (>= 0.11).
//!
//! Each test runs `nvim --headless --clean -l tests/nvim/e2e.lua` against the
//! `shapels` binary of this build, with the plugin in `editors/nvim` on the
//! runtimepath, and asserts on the JSON report the script writes: one entry
//! per check, with what was expected and what was seen.
//!
//! Neovim is found through `SHAPELS_NVIM`, else at `.venv-test/bin/nvim` in
//! the repository (where `scripts/test` installs it). When there is none, the
//! test fails if `SHAPELS_REQUIRE_NVIM=1` or `CI` is set, so that CI can never
//! pass by not running it, and is otherwise skipped with a loud message so a
//! plain `cargo test` still works on a machine without Neovim. A Neovim that
//! is named but missing, or too old, always fails.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// A whole run takes about a second; a failing one, where every wait times
/// out, under half a minute. Anything past this is a hang (a server that
/// never answers `shutdown`, a Neovim waiting for input) and fails the test.
const TIMEOUT: Duration = Duration::from_secs(180);

/// The oldest Neovim with `vim.lsp.config` / `vim.lsp.enable`.
const MIN_NVIM: (u32, u32) = (0, 11);

#[test]
fn neovim_default_position_encodings() {
    // Neovim offers utf-8, utf-16 and utf-32 and the server picks one.
    run_scenario("default");
}

#[test]
fn neovim_utf16_only() {
    // Only utf-16 is offered, as VS Code does: the emoji edits then check
    // that the server counts UTF-16 code units.
    run_scenario("utf-16");
}

#[test]
fn neovim_finds_the_project_venv() {
    // No `cmd` is configured: the plugin finds the project's
    // `.venv/bin/shapels` (where `pip install shapels` puts it), before a
    // `shapels` on PATH.
    run_scenario("venv");
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("editors/nvim/lsp/shapels.lua").is_file())
        .expect("no ancestor of CARGO_MANIFEST_DIR holds editors/nvim/lsp/shapels.lua")
        .to_path_buf()
}

/// Whether an environment variable is set to something other than empty,
/// `0` or `false` (CI systems spell "true" in several ways).
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        !v.is_empty() && v != "0" && v != "false"
    })
}

/// The Neovim to run: `Ok(None)` when none is installed, `Err` when one was
/// named or installed but cannot be used (that is a broken setup, never a
/// reason to skip).
fn find_nvim(root: &Path) -> Result<Option<PathBuf>, String> {
    let nvim = match std::env::var_os("SHAPELS_NVIM").filter(|v| !v.is_empty()) {
        Some(path) => {
            let path = PathBuf::from(path);
            if !path.is_file() {
                return Err(format!("SHAPELS_NVIM={} does not exist", path.display()));
            }
            path
        }
        None => {
            let path = root.join(".venv-test/bin/nvim");
            if !path.is_file() {
                return Ok(None);
            }
            path
        }
    };
    let output = Command::new(&nvim)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {} --version: {e}", nvim.display()))?;
    let first_line = String::from_utf8_lossy(&output.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    // `NVIM v0.11.4`, possibly followed by a build suffix (`-dev-...`).
    let version: Vec<u32> = first_line
        .trim_start_matches("NVIM v")
        .split(['.', '-', '+'])
        .take(2)
        .map(|part| part.parse().unwrap_or(0))
        .collect();
    match version[..] {
        [major, minor] if (major, minor) >= MIN_NVIM => Ok(Some(nvim)),
        _ => Err(format!(
            "{} reports {first_line:?}; Neovim {}.{} or newer is needed",
            nvim.display(),
            MIN_NVIM.0,
            MIN_NVIM.1
        )),
    }
}

/// The Neovim to run, or `None` after a loud skip message; panics when
/// Neovim is required or the one found is unusable.
fn nvim_or_skip(root: &Path) -> Option<PathBuf> {
    let hint = "`./scripts/test` installs Neovim into .venv-test/ and sets SHAPELS_NVIM.";
    match find_nvim(root) {
        Ok(Some(nvim)) => Some(nvim),
        Err(why) => panic!("Neovim end-to-end test cannot run: {why}.\n{hint}"),
        Ok(None) if env_flag("SHAPELS_REQUIRE_NVIM") || env_flag("CI") => panic!(
            "Neovim end-to-end test cannot run: SHAPELS_NVIM is not set and there is no \
             {}.\nNeovim is required because SHAPELS_REQUIRE_NVIM or CI is set. {hint}",
            root.join(".venv-test/bin/nvim").display()
        ),
        Ok(None) => {
            // Written to the stderr handle rather than with eprintln!, which
            // the test harness captures: a skip must be seen without
            // --nocapture.
            let banner = "!".repeat(72);
            let _ = writeln!(
                std::io::stderr(),
                "\n{banner}\n!! SKIPPED: Neovim end-to-end test: no SHAPELS_NVIM and no .venv-test/bin/nvim.\n\
                 !! {hint}\n{banner}"
            );
            None
        }
    }
}

fn run_scenario(mode: &str) {
    let root = repo_root();
    let Some(nvim) = nvim_or_skip(&root) else {
        return;
    };

    // A scratch project per scenario: the two tests run in parallel, and the
    // script edits its buffer. The pyproject.toml makes this directory the
    // project root that `root_markers` finds, so the client never climbs
    // into the repository, and gives the server a `[tool.shapels]` to read.
    let work = scratch(&format!("nvim-e2e-{mode}"));
    let file = work.join("model.py");
    fs::copy(root.join("tests/nvim/fixtures/model.py"), &file).expect("copy the fixture");
    // In `venv` mode the project's `.venv/bin/shapels` is a script that
    // notes each start and runs this build's binary, and PATH starts with
    // a `shapels` that notes its start and fails: the plugin must take the
    // first and never the second.
    let venv_ran = work.join("venv-shapels-ran");
    let decoy_ran = work.join("path-shapels-ran");
    let mut path_env = std::env::var_os("PATH").unwrap_or_default();
    if mode == "venv" {
        let venv_bin = work.join(".venv/bin");
        write_script(
            &venv_bin.join("shapels"),
            &format!(
                "#!/bin/sh\necho \"$@\" >>'{}'\nexec '{}' \"$@\"\n",
                venv_ran.display(),
                env!("CARGO_BIN_EXE_shapels")
            ),
        );
        let decoy_dir = work.join("decoy-bin");
        write_script(
            &decoy_dir.join("shapels"),
            &format!(
                "#!/bin/sh\necho \"$@\" >>'{}'\nexit 1\n",
                decoy_ran.display()
            ),
        );
        let mut dirs = vec![decoy_dir];
        dirs.extend(std::env::split_paths(&path_env));
        path_env = std::env::join_paths(dirs).expect("a PATH without odd characters");
    }
    run_script(
        &nvim,
        &root,
        "e2e.lua",
        &work,
        &[file.as_os_str(), mode.as_ref()],
        mode,
        &path_env,
    );
    if mode == "venv" {
        let ran = fs::read_to_string(&venv_ran).unwrap_or_default();
        assert!(
            ran.lines().any(|line| line == "lsp"),
            "the project's .venv/bin/shapels was never started as a server (its log: {ran:?})"
        );
        assert!(
            !decoy_ran.exists(),
            "the `shapels` on PATH was started although the project's .venv has one"
        );
    }
}

/// Writes an executable shell script, making its directory.
fn write_script(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a script in a directory"))
        .expect("create its directory");
    fs::write(path, text).expect("write the script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("make it executable");
    }
}

#[test]
fn neovim_two_file_package() {
    // A package whose `model.py` imports `layers.py`: the error caused in
    // one file shows in the other, and an edit of one reaches the other.
    let root = repo_root();
    let Some(nvim) = nvim_or_skip(&root) else {
        return;
    };
    let work = scratch("nvim-e2e-package");
    let package = root.join("tests/nvim/fixtures/package/pkg");
    fs::create_dir_all(work.join("pkg")).expect("create pkg/");
    for entry in fs::read_dir(&package).expect("the package fixture") {
        let path = entry.expect("a directory entry").path();
        fs::copy(
            &path,
            work.join("pkg")
                .join(path.file_name().expect("a file name")),
        )
        .expect("copy the package fixture");
    }
    run_script(
        &nvim,
        &root,
        "workspace.lua",
        &work,
        &[work.as_os_str()],
        "package",
        &std::env::var_os("PATH").unwrap_or_default(),
    );
}

/// A fresh scratch project: a `pyproject.toml` makes it the root that the
/// client's `root_markers` find.
fn scratch(name: &str) -> PathBuf {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).expect("create the scratch directory");
    fs::write(
        work.join("pyproject.toml"),
        "[project]\nname = \"nvim-e2e\"\n\n[tool.shapels]\n",
    )
    .expect("write pyproject.toml");
    work
}

/// Runs `tests/nvim/SCRIPT SHAPELS REPO ARGS... REPORT-or-as-the-script-wants`
/// in a headless Neovim inside `work`, and asserts that every check of the
/// report it writes passed. `mode` names the run in messages.
fn run_script(
    nvim: &Path,
    root: &Path,
    script: &str,
    work: &Path,
    args: &[&std::ffi::OsStr],
    mode: &str,
    path_env: &std::ffi::OsStr,
) {
    let report_path = work.join("report.json");
    let stdout_path = work.join("nvim.stdout");
    let stderr_path = work.join("nvim.stderr");

    let mut command = Command::new(nvim);
    command
        .args(["--headless", "--clean", "-l"])
        .arg(root.join("tests/nvim").join(script))
        .arg(env!("CARGO_BIN_EXE_shapels"))
        .arg(root);
    // e2e.lua takes FILE REPORT MODE, workspace.lua DIR REPORT.
    match args {
        [first, rest @ ..] => {
            command.arg(first).arg(&report_path).args(rest);
        }
        [] => {
            command.arg(&report_path);
        }
    }
    command
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).expect("create nvim.stdout"))
        .stderr(File::create(&stderr_path).expect("create nvim.stderr"));
    // Keep Neovim's state (its LSP log above all) inside the scratch
    // directory, and keep a developer's own Neovim out of the picture.
    for (var, dir) in [
        ("XDG_CONFIG_HOME", "xdg/config"),
        ("XDG_DATA_HOME", "xdg/data"),
        ("XDG_STATE_HOME", "xdg/state"),
        ("XDG_CACHE_HOME", "xdg/cache"),
    ] {
        command.env(var, work.join(dir));
    }
    command
        .env("PATH", path_env)
        .env_remove("NVIM_APPNAME")
        .env_remove("NVIM")
        .env_remove("VIMINIT");

    let started = Instant::now();
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", nvim.display()));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for nvim") {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "Neovim ({mode}) did not finish within {} s and was killed.\n{}",
                TIMEOUT.as_secs(),
                outputs(&stdout_path, &stderr_path, work)
            );
        }
        thread::sleep(Duration::from_millis(50));
    };
    let elapsed = started.elapsed();

    let text = fs::read_to_string(&report_path).unwrap_or_else(|e| {
        panic!(
            "Neovim ({mode}) exited with {status} and wrote no report ({}: {e}).\n{}",
            report_path.display(),
            outputs(&stdout_path, &stderr_path, work)
        )
    });
    let report: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the report is not JSON ({e}): {text}"));
    let checks = report["checks"].as_array().cloned().unwrap_or_default();

    // The whole list goes to stderr (shown with --nocapture or on failure),
    // so a partial pass is visible too.
    eprintln!(
        "Neovim {} ({mode}, {:.1} s, position encoding {}):",
        report["nvim"].as_str().unwrap_or("?"),
        elapsed.as_secs_f64(),
        report["observed"]["offset_encoding"]
    );
    let mut failures = Vec::new();
    for check in &checks {
        let name = check["name"].as_str().unwrap_or("?");
        let ok = check["ok"].as_bool().unwrap_or(false);
        eprintln!("  {} {name}", if ok { "ok  " } else { "FAIL" });
        if !ok {
            failures.push(format!(
                "  - {name}\n      {}",
                check["detail"].as_str().unwrap_or("")
            ));
        }
    }

    if checks.is_empty() {
        panic!(
            "Neovim ({mode}) ran no checks.\n{}",
            outputs(&stdout_path, &stderr_path, work)
        );
    }
    if !failures.is_empty() {
        let log_tail: Vec<&str> = report["observed"]["lsp_log_tail"]
            .as_array()
            .map(|lines| lines.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        panic!(
            "{} of {} Neovim checks failed ({mode} position encodings):\n{}\n\n\
             Server capabilities: {}\nDiagnostics on open: {}\n\
             Full report: {}\nLast lines of Neovim's LSP log:\n    {}",
            failures.len(),
            checks.len(),
            failures.join("\n"),
            report["observed"]["capabilities"],
            report["observed"]["diagnostics_on_open"],
            report_path.display(),
            log_tail.join("\n    ")
        );
    }
    assert!(
        status.success(),
        "every check passed but Neovim ({mode}) exited with {status}.\n{}",
        outputs(&stdout_path, &stderr_path, work)
    );
}

/// What Neovim printed, for a failure message.
fn outputs(stdout: &Path, stderr: &Path, work: &Path) -> String {
    let read = |path: &Path| fs::read_to_string(path).unwrap_or_default();
    format!(
        "--- nvim stdout ---\n{}\n--- nvim stderr ---\n{}\n(scratch directory: {})",
        read(stdout),
        read(stderr),
        work.display()
    )
}
