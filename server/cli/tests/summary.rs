//! `shapels summary`: the fixtures of tests/summary, each with its text
//! output (tests/summary/NAME.txt; `SHAPELS_BLESS=1` rewrites them after a
//! change meant to alter them) and, for the models torch can run, the
//! parameter totals torchinfo gives (tests/summary/fixtures-torchinfo.json,
//! written by `scripts/check-summary record`, never by hand).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::shapels;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/summary")
}

fn run(args: &[&str]) -> Output {
    shapels().args(args).output().expect("run shapels")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn python_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "the summary fixtures are missing");
    files
}

#[test]
fn text_output_matches_the_snapshots() {
    let bless = std::env::var_os("SHAPELS_BLESS").is_some();
    for file in python_fixtures() {
        let output = run(&["summary", file.to_str().unwrap()]);
        assert!(output.status.success(), "{}: {output:?}", file.display());
        let text = stdout(&output);
        let snapshot = file.with_extension("txt");
        if bless {
            std::fs::write(&snapshot, &text).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&snapshot)
            .unwrap_or_else(|_| panic!("no {}: run with SHAPELS_BLESS=1", snapshot.display()));
        assert_eq!(text, expected, "{}", file.display());
    }
}

#[test]
fn parameter_totals_match_torchinfo() {
    let golden: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("fixtures-torchinfo.json")).unwrap(),
    )
    .unwrap();
    let mut checked = 0;
    for model in golden["models"].as_array().unwrap() {
        let (Some(class), Some(total)) = (
            model["class"].as_str(),
            model["torchinfo_total_params"].as_i64(),
        ) else {
            continue;
        };
        let file = fixtures().join(model["file"].as_str().unwrap());
        let target = format!("{}:{class}", file.display());
        let output = run(&["summary", &target, "--format", "json"]);
        assert!(output.status.success(), "{target}: {output:?}");
        let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(summary["total_params"], total, "{target}");
        assert_eq!(
            summary["trainable_params"], model["torchinfo_trainable_params"],
            "{target}"
        );
        checked += 1;
    }
    assert!(checked >= 3, "torchinfo's goldens cover too few fixtures");
}

#[test]
fn input_sizes_from_the_command_line() {
    let file = fixtures().join("conv_stack.py");
    let target = format!("{}:AutoEncoder", file.display());
    let output = run(&[
        "summary",
        &target,
        "--input",
        "1,3,64,64",
        "--format",
        "json",
    ]);
    assert!(output.status.success(), "{output:?}");
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["input"], "[1, 3, 64, 64]");
    assert_eq!(summary["input_from_code"], true);
    assert_eq!(summary["layers"][0]["output"], "[1, 3, 64, 64]");
    assert_eq!(summary["layers"][1]["name"], "encoder");
    assert_eq!(summary["layers"][1]["output"], "[1, 32, 32, 32]");
    // One forward on that input: every built-in layer's output, in float32.
    let expected: i64 = 4 * (2 * 16 * 64 * 64 + 3 * 32 * 32 * 32 + 8 * 64 * 64 + 3 * 64 * 64);
    assert_eq!(summary["activation_bytes"], expected);
}

#[test]
fn markdown_is_a_table() {
    let file = fixtures().join("frozen_mlp.py");
    let output = run(&["summary", file.to_str().unwrap(), "--format", "markdown"]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("| Layer (type) | Output shape | Param # |"),
        "{text}"
    );
    assert!(
        text.contains(
            "| \u{a0}\u{a0}`(embed): Embedding(1000, 64)` | `[8, 16, 64]` | (64,000) frozen |"
        ),
        "{text}"
    );
    assert!(text.contains("- Total params: `97,477`"), "{text}");
}

#[test]
fn what_cannot_be_summarised_exits_2() {
    let file = fixtures().join("frozen_mlp.py");
    let missing = format!("{}:NoSuchClass", file.display());
    let output = run(&["summary", &missing]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no module class `NoSuchClass`"));
    let output = run(&["summary", "no-such-file.py"]);
    assert_eq!(output.status.code(), Some(2));
    let output = run(&["summary", file.to_str().unwrap(), "--input", "8,x"]);
    assert_eq!(output.status.code(), Some(2));
}
