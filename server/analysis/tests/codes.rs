//! Every diagnostic code is documented in the README and shown by a fixture.
//!
//! The codes are the `Code` enum, so the README's diagnostics table is
//! checked against it row by row (name, severities, meaning, example), and
//! each code's example fixture must expect it: a new code cannot ship
//! without its README row and an example that is a test.

use std::fs;
use std::path::{Path, PathBuf};

use shapels_analysis::{Code, Severity};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The example fixture of `code`, relative to tests/fixtures.
fn fixture(code: Code) -> String {
    format!("diagnostics/{}.py", code.name().replace('-', "_"))
}

/// The README row that documents `code`.
fn row(code: Code) -> String {
    let severities: Vec<&str> = code.severities().iter().map(|s| s.as_str()).collect();
    let fixture = fixture(code);
    format!(
        "| `{}` | {} | {} | [`{fixture}`](tests/fixtures/{fixture}) |",
        code.name(),
        severities.join(" / "),
        code.doc()
    )
}

#[test]
fn the_readme_table_is_the_code_enum() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let header = "| code | severity | meaning | example (a fixture test) |";
    let start = readme
        .find(header)
        .expect("the README has a diagnostics table");
    let table: Vec<&str> = readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let expected: Vec<String> = Code::ALL.iter().map(|c| row(*c)).collect();
    assert_eq!(
        table,
        expected,
        "the README's diagnostics table differs from `Code`; it should read:\n{}",
        expected.join("\n")
    );
}

#[test]
fn every_code_has_a_fixture_that_expects_it() {
    assert!(Code::ALL.len() >= 20, "only {} codes", Code::ALL.len());
    let mut problems = Vec::new();
    for code in Code::ALL {
        let path = root().join("tests/fixtures").join(fixture(*code));
        let text = fs::read_to_string(&path).unwrap_or_default();
        if !text.contains(&format!("[{}]", code.name())) {
            problems.push(format!("`{code}`: {} does not expect it", path.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_code_has_a_default_severity() {
    for code in Code::ALL {
        assert_eq!(code.severity(), code.severities()[0]);
        // Only what torch raises is an error; a warning is never the default
        // of a code that can also be an error.
        if code.severities().contains(&Severity::Error) {
            assert_eq!(code.severity(), Severity::Error, "{code}");
        }
    }
}
