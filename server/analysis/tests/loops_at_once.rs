//! Running a loop's turns all at once (`interp::induction`) gives exactly
//! what running every turn gives — hints, hover, diagnostics, names of
//! sizes and what the analysis read — over every fixture and test-corpus
//! model; and it does run at once on the loops made for it. (The analysis
//! hover runs for expressions keeps chains of ops, which grow by a link a
//! turn: it runs every turn. A loop longer than the analysis runs turn by
//! turn has no such run to compare with: its fixtures hold it to torch.)

use shapels_analysis::{Config, Coverage, analyze_module, loops_run_at_once, set_loops_at_once};
use shapels_syntax::parse;

mod common;

use common::{python_files, shown};

/// Where two analyses part: the text around the first difference.
fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = a.floor_char_boundary(at.saturating_sub(300));
    let end = |s: &str| s.floor_char_boundary((at + 200).min(s.len()));
    format!(
        "at once: ...{}\none by one: ...{}",
        &a[from..end(a)],
        &b[from..end(b)]
    )
}

fn both_ways(text: &str) -> (String, String) {
    let file = parse(text);
    let config = Config::default();
    set_loops_at_once(true);
    let at_once = analyze_module(text, &file.module, &config, Coverage::Bindings);
    set_loops_at_once(false);
    let one_by_one = analyze_module(text, &file.module, &config, Coverage::Bindings);
    set_loops_at_once(true);
    (shown(&at_once), shown(&one_by_one))
}

#[test]
fn every_file_analyses_alike_either_way() {
    let mut differ = Vec::new();
    for path in python_files() {
        let text = std::fs::read_to_string(&path).expect("a fixture");
        let (at_once, one_by_one) = both_ways(&text);
        if at_once != one_by_one {
            differ.push(format!(
                "{}\n{}",
                path.display(),
                first_difference(&at_once, &one_by_one)
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "analyses differ on\n{}",
        differ.join("\n\n")
    );
}

#[test]
fn the_loops_made_for_it_run_at_once() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/interpreter/loop_turns_at_once.py");
    let text = std::fs::read_to_string(path).expect("the fixture");
    let before = loops_run_at_once();
    let (at_once, one_by_one) = both_ways(&text);
    assert!(
        at_once == one_by_one,
        "{}",
        first_difference(&at_once, &one_by_one)
    );
    // The short `generate`, the closure, the counted loop, the two at the
    // top level and the inner loop of `inner_loops` in its last turn (4
    // turns); the others are not the same in every turn. And the long
    // `generate` (100 turns), which runs at once in both analyses.
    assert_eq!(loops_run_at_once() - before, 6 + 2);
}
