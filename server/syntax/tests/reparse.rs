//! Incremental reparsing gives exactly what a fresh parse gives.

mod common;

use proptest::prelude::*;
use shapels_syntax::{ByteEdit, edit_between, parse, reparse};

#[track_caller]
fn check_edit(old_text: &str, new_text: &str) {
    let old = parse(old_text);
    let edit = edit_between(old_text, new_text);
    let incremental = reparse(&old, old_text, new_text, edit);
    assert_eq!(
        incremental.observable(),
        parse(new_text).observable(),
        "{old_text:?} -> {new_text:?}"
    );
}

#[test]
fn typing_a_line_character_by_character() {
    let prefix = "import torch\n\ndef f(x):\n    ";
    let line = "y = torch.randn(8, 128) @ x.transpose(0, 1)  # é\n";
    let suffix = "    return y\n";
    let mut previous = format!("{prefix}{suffix}");
    let mut file = parse(&previous);
    for (end, _) in line.char_indices().skip(1).chain([(line.len(), ' ')]) {
        let next = format!("{prefix}{}{suffix}", &line[..end]);
        file = reparse(&file, &previous, &next, edit_between(&previous, &next));
        assert_eq!(
            file.observable(),
            parse(&next).observable(),
            "after typing {:?}",
            &line[..end]
        );
        previous = next;
    }
}

#[test]
fn edits_that_change_structure() {
    check_edit("x = 1\n", "x = (1\n");
    check_edit("x = (1\n", "x = (1)\n");
    check_edit("def f():\n    pass\n", "class A:\n    pass\n");
    check_edit("import numpy\n", "import torch\n");
    check_edit("if a:\n    x = 1\n", "if a:\nx = 1\n");
    check_edit("a = 'x'\n", "a = 'x\n");
    check_edit("x = 1\r\ny = 2\r\n", "x = 1\r\n\r\ny = 2\r\n");
    check_edit("", "x = torch.randn(2)\n");
    check_edit("x = torch.randn(2)\n", "");
}

/// A reparse keeps the statements and comments before the edited lines and
/// reads the rest again; what it keeps must be in the new text's offsets.
#[test]
fn edits_after_kept_statements() {
    check_edit(
        "x = torch.randn(8, 128)\n  #import torch\nB, ",
        "x = torch.randn(8, 128)\n  #  # x: (B, T)\n torch\nB, ",
    );
    check_edit(
        "import torch\n# a\nx = 1  # b\ny = 2\n# c\n",
        "import torch\n# a\nx = 12  # b\ny = 2\n# c\n",
    );
    check_edit(
        "a = 1\nb = 2  # (B, T)\nc = 3\n",
        "a = 1\nb = 2\nc = 3  # (B, T)\n",
    );
    check_edit("a = 1\n# x\n", "a = 1\n# x = '\n");
    // Statements after the edit are kept too, moved by the edit's length.
    check_edit(
        "a = 1\nb = 2\nclass C:\n    def f(self, x=[1]):\n        return x[0]\n",
        "a = 1\nb = 234\nclass C:\n    def f(self, x=[1]):\n        return x[0]\n",
    );
    check_edit(
        "import torch\nx = torch.randn(8, 128)\ny = x @ x.T  # (8, 8)\n",
        "import torch\nx = torch.randn(8)\ny = x @ x.T  # (8, 8)\n",
    );
    check_edit(
        "def f():\n    return 1\n\ng = 2\n",
        "def f():\n    return 12\n\ng = 2\n",
    );
}

#[test]
fn a_wrong_edit_falls_back_to_a_fresh_parse() {
    let old_text = "x = 1\ny = 2\n";
    let new_text = "x = 1\ny = 3\nz = 4\n";
    let old = parse(old_text);
    let wrong = ByteEdit {
        start_byte: 0,
        old_end_byte: 1,
        new_end_byte: 1,
    };
    let file = reparse(&old, old_text, new_text, wrong);
    assert_eq!(file.observable(), parse(new_text).observable());
    let out_of_range = ByteEdit {
        start_byte: 100,
        old_end_byte: 200,
        new_end_byte: 300,
    };
    let file = reparse(&old, old_text, new_text, out_of_range);
    assert_eq!(file.observable(), parse(new_text).observable());
    // `old` parsed from another text than the one given.
    let file = reparse(
        &parse("other\n"),
        old_text,
        new_text,
        edit_between(old_text, new_text),
    );
    assert_eq!(file.observable(), parse(new_text).observable());
}

/// Pieces of Python, some of them broken, to build texts and edits from.
const PIECES: &[&str] = &[
    "import torch\n",
    "x = torch.randn(8, 128)\n",
    "y = x @ w\n",
    "def f(a, *, b=1):\n    return a\n",
    "class M(nn.Module):\n    def forward(self, x):\n        return self.fc(x)\n",
    "if a:\n    b = 1\nelse:\n    b = 2\n",
    "(",
    ")",
    "[",
    ":",
    "\n",
    "    ",
    "'",
    "\"\"\"",
    "é",
    "日本",
    "\r\n",
    "#",
    "  # x: (B, T)\n",
    "# note\n",
    "s = '# not a comment'\n",
    ",",
    "x",
    " = ",
    ".",
    "\0",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// A chain of random edits, each reparsed from the previous result,
    /// always agrees with a fresh parse of the same text.
    #[test]
    fn random_edit_chains_match_fresh_parses(
        start in prop::collection::vec(0..PIECES.len(), 0..12),
        edits in prop::collection::vec((0.0f64..=1.0, 0usize..12, prop::option::of(0..PIECES.len())), 1..8),
    ) {
        let mut text: String = start.iter().map(|&i| PIECES[i]).collect();
        let mut file = parse(&text);
        for (at, delete, insert) in edits {
            let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let index = ((boundaries.len() - 1) as f64 * at) as usize;
            let start = boundaries[index];
            let end = boundaries[(index + delete).min(boundaries.len() - 1)];
            let inserted = insert.map_or("", |i| PIECES[i]);
            let new_text = format!("{}{inserted}{}", &text[..start], &text[end..]);
            let edit = ByteEdit { start_byte: start, old_end_byte: end, new_end_byte: start + inserted.len() };
            file = reparse(&file, &text, &new_text, edit);
            // tree-sitter's error recovery depends on the editing history, so
            // broken text may legitimately lower differently after edits (the
            // server reparses such texts from scratch). Valid text must agree.
            let fresh = parse(&new_text);
            if fresh.syntax_errors.is_empty() {
                prop_assert_eq!(file.observable(), fresh.observable());
            }
            text = new_text;
        }
    }
}
