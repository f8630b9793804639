//! Edits inside one name or number are reparsed without the parser (see
//! the crate's `token` module), and give exactly what a fresh parse gives,
//! also for the edits after them, which the parser reparses from the tree
//! such an edit left.

use shapels_syntax::{ByteEdit, parse, parser_runs, reparse};

const MODEL: &str = "\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, n_embd, ratio=4, p=0.1):
        super().__init__()
        self.fc = nn.Linear(n_embd, ratio * n_embd)  # (B, T, 4*C)
        self.drop = nn.Dropout(p)

    def forward(self, x, scale=1.5):
        B, T, C = x.size()
        y = self.drop(self.fc(x)) * scale
        return y.view(B, T, 4, C)


if __name__ == \"__main__\":
    block = Block(32)
    out = block(torch.randn(2, 8, 32))
";

/// Types `typed` at `at` one character at a time, each keystroke reparsed
/// from the last; returns how many of them ran the parser.
fn type_at(text: &str, at: usize, typed: &str) -> (String, u64) {
    let mut text = text.to_string();
    let mut file = parse(&text);
    let mut runs = 0;
    for (i, c) in typed.char_indices() {
        let pos = at + i;
        let next = format!("{}{c}{}", &text[..pos], &text[pos..]);
        let edit = ByteEdit {
            start_byte: pos,
            old_end_byte: pos,
            new_end_byte: pos + c.len_utf8(),
        };
        let before = parser_runs();
        file = reparse(&file, &text, &next, edit);
        runs += parser_runs() - before;
        assert_eq!(
            file.observable(),
            parse(&next).observable(),
            "typing {c:?} at {pos} of:\n{next}"
        );
        text = next;
    }
    (text, runs)
}

#[test]
fn typing_inside_names_and_numbers_skips_the_parser() {
    let after = |anchor: &str| MODEL.find(anchor).expect("anchor") + anchor.len();
    // Inside a name, a parameter, an attribute, a keyword default and a
    // number (each parse above made one run of its own, not counted).
    for (anchor, typed) in [
        ("n_emb", "ed_x"),
        ("self.dr", "op_ou"),
        ("ratio=4", "0"),
        ("p=0.", "25"),
        ("scale=1", "0"),
        ("Block(3", "2"),
        ("randn(2, 8, 3", "33"),
        ("block = Blo", "ck"),
        ("        B, T", "T"),
    ] {
        let (_, runs) = type_at(MODEL, after(anchor), typed);
        assert_eq!(runs, 0, "typing {typed:?} after {anchor:?} ran the parser");
    }
}

#[test]
fn edits_that_change_a_token_run_the_parser() {
    let after = |anchor: &str| MODEL.find(anchor).expect("anchor") + anchor.len();
    // A name that becomes a keyword, a number that becomes a float or a
    // name, a dot, a space, an edit at a name's first byte, a comment.
    for (at, typed) in [
        (
            after("        y = self.drop(self.fc(x)) * scale\n        return y"),
            "ield",
        ),
        (after("ratio=4"), "."),
        (after("ratio=4"), "e"),
        (after("Block(32"), "x"),
        (after("n_embd"), " "),
        (MODEL.find("ratio *").expect("anchor"), "z"),
        (after("# (B, T"), "X"),
    ] {
        let (_, runs) = type_at(MODEL, at, typed);
        assert!(runs > 0, "typing {typed:?} at {at} did not run the parser");
    }
}

/// Deleting inside a token, and a chain of token edits and other edits
/// in turn, agree with fresh parses at every step.
#[test]
fn chains_of_token_edits_and_other_edits_match_fresh_parses() {
    let mut text = MODEL.to_string();
    let mut file = parse(&text);
    let steps: [(&str, &str, &str); 8] = [
        ("n_embd, ratio", "n_embd", "n_emb"),
        ("self.drop = ", "drop", "dropout"),
        ("ratio=4", "4", "44"),
        ("self.fc(x)", "self.fc(x)", "self.fc(x + 1)"),
        ("p=0.1", "0.1", "0.15"),
        ("scale=1.5", "scale", "scal"),
        ("Block(32)", "32", "3"),
        ("return y", "return y", "return  y"),
    ];
    for (anchor, old, new) in steps {
        let start = text.find(anchor).expect("anchor") + anchor.find(old).expect("old part");
        let next = format!("{}{new}{}", &text[..start], &text[start + old.len()..]);
        let common = old
            .bytes()
            .zip(new.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let tail = old[common..]
            .bytes()
            .rev()
            .zip(new[common..].bytes().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let edit = ByteEdit {
            start_byte: start + common,
            old_end_byte: start + old.len() - tail,
            new_end_byte: start + new.len() - tail,
        };
        file = reparse(&file, &text, &next, edit);
        assert_eq!(
            file.observable(),
            parse(&next).observable(),
            "{old:?} -> {new:?}"
        );
        text = next;
    }
}
