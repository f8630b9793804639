//! `parse_on_two_threads` gives what `parse` gives: on every Python file of
//! the repository's tests, and on texts made to cut in awkward places (cut
//! whatever their size, through `parse_in_two_parts`).

use std::path::{Path, PathBuf};

use shapels_syntax::{ParsedFile, parse, parse_in_two_parts, parse_on_two_threads};

/// The parts of a parse an analysis reads.
fn assert_same(text: &str, two: &ParsedFile, one: &ParsedFile, what: &str) {
    assert_eq!(two.module, one.module, "{what}: the syntax trees differ");
    assert_eq!(two.comments, one.comments, "{what}: the comments differ");
    assert_eq!(
        two.syntax_errors, one.syntax_errors,
        "{what}: the errors differ"
    );
    assert_eq!(two.source_len, text.len(), "{what}");
}

/// Whether the text was joined from two parts (a whole parse keeps its tree).
fn was_cut(parsed: &ParsedFile) -> bool {
    parsed.tree.is_none()
}

fn python_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            python_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

#[test]
fn every_test_file_parses_the_same_on_two_threads() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let mut files = Vec::new();
    python_files(&tests, &mut files);
    files.sort();
    let mut cut = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let two = parse_in_two_parts(&text);
        assert_same(&text, &two, &parse(&text), &path.display().to_string());
        cut += usize::from(was_cut(&two));
    }
    // Most model files are large enough to be cut; if none were, this test
    // would compare the plain parse with itself.
    assert!(
        cut >= 50,
        "only {cut} of {} files were parsed in two parts",
        files.len()
    );
}

/// A text of `n` small functions, each with a comment and a non-ASCII
/// string, large enough to be cut.
fn functions(n: usize, line_end: &str) -> String {
    (0..n)
        .map(|i| {
            format!(
                "def f{i}(x):  # größe {i}{line_end}    y = x.view(-1, {i})  # (B, {i}){line_end}    return y, \"→\"{line_end}{line_end}"
            )
        })
        .collect()
}

#[test]
fn a_large_file_is_cut_and_joined_at_the_offsets_of_the_whole() {
    for line_end in ["\n", "\r\n"] {
        let text = functions(120, line_end);
        let two = parse_on_two_threads(&text);
        assert!(was_cut(&two));
        assert_same(&text, &two, &parse(&text), "functions");
        // The joined module starts where the second part does.
        let last = two.module.body.last().expect("statements");
        assert!(last.range.end <= text.len() && last.range.start > text.len() / 2);
    }
}

#[test]
fn a_small_file_is_parsed_whole() {
    let text = functions(3, "\n");
    let two = parse_on_two_threads(&text);
    assert!(!was_cut(&two));
    assert_same(&text, &two, &parse(&text), "small");
    // A 5 KB model is parsed faster on the thread that analyses it than in
    // two parts (see `two_threads::MIN_BYTES`), though it could be cut.
    let text = functions(60, "\n");
    assert!(text.len() > 4 * 1024 && text.len() < 8 * 1024);
    assert!(!was_cut(&parse_on_two_threads(&text)));
    assert!(was_cut(&parse_in_two_parts(&text)));
}

#[test]
fn decorators_stay_with_their_definition() {
    let text: String = (0..80)
        .map(|i| format!("@torch.no_grad()\n@staticmethod\ndef g{i}(x):\n    return x\n\n"))
        .collect();
    let two = parse_in_two_parts(&text);
    assert!(was_cut(&two));
    assert_same(&text, &two, &parse(&text), "decorators");
}

#[test]
fn a_cut_inside_a_docstring_falls_back_to_the_whole_parse() {
    // Every line that opens a definition near the middle is inside one
    // long string, so any cut there leaves the first part's string open.
    let head = functions(20, "\n");
    let inside: String = (0..60)
        .map(|i| format!("def example{i}(x):\n    return x\n"))
        .collect();
    let text = format!(
        "{head}DOC = \"\"\"\n{inside}\"\"\"\n{}",
        functions(20, "\n")
    );
    let two = parse_in_two_parts(&text);
    assert!(!was_cut(&two), "a cut inside the string must not be taken");
    assert_same(&text, &two, &parse(&text), "docstring");
    assert!(two.syntax_errors.is_empty());
}

#[test]
fn a_cut_inside_brackets_or_a_continuation_falls_back() {
    // A matrix product continued at column 0 (`@` opens a line there, as a
    // decorator would) inside parentheses, or after a backslash.
    let products: String = (0..120).map(|i| format!("@ w{i}\n")).collect();
    let continued: String = (0..120).map(|i| format!("@ w{i} \\\n")).collect();
    for (open, inside, close) in [
        ("y = (x\n", products.as_str(), ")\n"),
        ("y = x \\\n", continued.as_str(), "@ w\n"),
    ] {
        let text = format!(
            "{}{open}{inside}{close}{}",
            functions(8, "\n"),
            functions(8, "\n")
        );
        // A cut inside the expression would read `@ w60` as a decorator;
        // one elsewhere, or none, gives the whole parse's tree.
        let two = parse_in_two_parts(&text);
        assert_same(&text, &two, &parse(&text), open);
        assert!(two.syntax_errors.is_empty(), "{open}");
    }
}

#[test]
fn broken_code_reads_as_the_whole_parse_reads_it() {
    for broken in [
        "def broken(:\n    pass\n",
        "x = (1,\n",
        "class C\n    pass\n",
    ] {
        let text = format!("{}{broken}{}", functions(40, "\n"), functions(40, "\n"));
        let two = parse_in_two_parts(&text);
        assert!(!two.syntax_errors.is_empty(), "{broken}");
        assert_same(&text, &two, &parse(&text), broken);
    }
}

#[test]
fn clauses_at_column_zero_are_never_a_cut() {
    // `else`, `except` and `finally` at column 0 continue the statement
    // before them: a cut there would split one statement in two.
    let body = functions(30, "\n");
    let text = format!(
        "if x:\n    pass\nelse:\n    pass\n{body}try:\n    pass\nexcept E:\n    pass\nfinally:\n    pass\n{body}"
    );
    let two = parse_in_two_parts(&text);
    assert_same(&text, &two, &parse(&text), "clauses");
}
