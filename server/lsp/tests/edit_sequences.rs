//! Random edit sequences through the server's document store and its
//! incremental analysis (`shapels_lsp::testing`, the code `didChange` and the
//! analysis workers run): no panic, no hang, and after every edit the
//! incremental parse is exactly a fresh parse of the same text and the
//! analysis (run again, with calls taken from the last version, or carried
//! over) a fresh analysis, so the editor never shows something `shapels
//! check` would not.
//!
//! A bounded run that belongs in the normal test suite; `fuzz/` explores the
//! same ground without a bound.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use proptest::prelude::*;
use shapels_analysis::{Config, Coverage, add_syntax_errors, analyze_module};
use shapels_lsp::position::PositionEncoding;
use shapels_lsp::testing::{Change, EditSession, Parsed};
use shapels_syntax::{ParsedFile, parse};

/// Far above what a case takes in a debug build on a busy machine.
const CASE_TIME_LIMIT: Duration = Duration::from_secs(30);

/// Everything observable about a parse.
fn fingerprint(file: &ParsedFile) -> String {
    file.observable()
}

/// Pieces of Python, broken Python and awkward text.
const PIECES: &[&str] = &[
    "import torch\n",
    "x = torch.randn(8, 128)\n",
    "y = x @ w\n",
    "def f(a, *, b=1):\n    return a\n",
    "class M(nn.Module):\n    def forward(self, x):\n        return self.fc(x)\n",
    "if a:\n    b = 1\nelse:\n    b = 2\n",
    "q = x.view(8, 4, 32).transpose(0, 1)\n",
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
    "🎉",
    "\r\n",
    "\r",
    "#",
    "  # a note\n",
    ",",
    "x",
    " = ",
    ".",
    "\0",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(0..PIECES.len(), 0..12)
        .prop_map(|picks| picks.into_iter().map(|i| PIECES[i]).collect())
}

/// A content change with positions anywhere near the text, including past
/// the end of a line or of the document (clients do send those).
fn change() -> impl Strategy<Value = Change> {
    let position = (0u32..14, 0u32..40);
    prop_oneof![
        12 => (position.clone(), position, text()).prop_map(|((l0, c0), (l1, c1), text)| Change {
            range: Some([l0, c0, l1, c1]),
            text,
        }),
        1 => text().prop_map(|text| Change { range: None, text }),
    ]
}

fn encoding() -> impl Strategy<Value = PositionEncoding> {
    prop_oneof![
        Just(PositionEncoding::Utf8),
        Just(PositionEncoding::Utf16),
        Just(PositionEncoding::Utf32),
    ]
}

/// Opens `start`, applies each `didChange`, and after each one compares the
/// incremental parse with a fresh one and analyses; all on a thread of its
/// own, failing on a panic or on [`CASE_TIME_LIMIT`].
fn run_session(
    start: String,
    edits: Vec<Vec<Change>>,
    encoding: PositionEncoding,
) -> Result<(), TestCaseError> {
    let shown = format!("start {start:?}, edits {edits:?}, {encoding:?}");
    let (done, finished) = mpsc::channel();
    let worker = thread::Builder::new()
        .stack_size(16 * 1024 * 1024)
        .spawn(move || {
            let mut session = EditSession::open(&start, encoding);
            let mut mismatch = None;
            for (i, changes) in edits.iter().enumerate() {
                session.change(changes);
                let text = session.text();
                let Parsed { text: parsed_text, file, .. } = session.parse();
                if *parsed_text != text {
                    mismatch = Some(format!("after edit {i}: the parse is of another text"));
                    break;
                }
                if fingerprint(file) != fingerprint(&parse(&text)) {
                    mismatch = Some(format!(
                        "after edit {i}: the incremental parse of {text:?} differs from a fresh parse"
                    ));
                    break;
                }
                let Some(analysis) = session.analyze() else {
                    mismatch = Some(format!("after edit {i}: the analysis of {text:?} failed"));
                    break;
                };
                // Whether run again or carried over from the last version
                // (an edit in a comment), it is the analysis of this text.
                let parsed = parse(&text);
                let mut fresh = analyze_module(
                    &text,
                    &parsed.module,
                    &Config::default(),
                    Coverage::Expressions,
                );
                add_syntax_errors(&mut fresh, &parsed);
                if format!("{analysis:?}") != format!("{fresh:?}") {
                    mismatch = Some(format!(
                        "after edit {i}: the analysis of {text:?} differs from a fresh one"
                    ));
                    break;
                }
            }
            let _ = done.send(mismatch);
        })
        .expect("spawn a thread");
    match finished.recv_timeout(CASE_TIME_LIMIT) {
        Ok(None) => Ok(()),
        Ok(Some(mismatch)) => Err(TestCaseError::fail(format!("{mismatch}; {shown}"))),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let _ = worker.join();
            Err(TestCaseError::fail(format!("panicked on {shown}")))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(format!(
            "took over {CASE_TIME_LIMIT:?} on {shown}"
        ))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_edit_sequences(
        start in text(),
        edits in prop::collection::vec(prop::collection::vec(change(), 1..3), 1..10),
        encoding in encoding(),
    ) {
        run_session(start, edits, encoding)?;
    }
}

/// Typing a model file character by character and deleting it again, the
/// way an editor session goes: every intermediate text, broken or not.
#[test]
fn typing_a_file_and_deleting_it() {
    let model = "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(32, 8)\n\n    def forward(self, x):\n        return self.fc(x)  # é 🎉\n\nm = M()\ny = m(torch.randn(4, 32))\n";
    let mut typing = Vec::new();
    let (mut line, mut col) = (0u32, 0u32);
    for ch in model.chars() {
        typing.push(vec![Change {
            range: Some([line, col, line, col]),
            text: ch.to_string(),
        }]);
        if ch == '\n' {
            (line, col) = (line + 1, 0);
        } else {
            col += ch.len_utf16() as u32;
        }
    }
    // Then backspace from the end until the document is empty.
    let mut deleting = Vec::new();
    let mut rest: Vec<char> = model.chars().collect();
    while let Some(ch) = rest.pop() {
        let before: String = rest.iter().collect();
        let line = before.matches('\n').count() as u32;
        let col = before
            .rsplit('\n')
            .next()
            .map_or(0, |last| last.encode_utf16().count() as u32);
        let end = if ch == '\n' {
            [line + 1, 0]
        } else {
            [line, col + ch.len_utf16() as u32]
        };
        deleting.push(vec![Change {
            range: Some([line, col, end[0], end[1]]),
            text: String::new(),
        }]);
    }
    let edits: Vec<Vec<Change>> = typing.into_iter().chain(deleting).collect();
    if let Err(err) = run_session(String::new(), edits, PositionEncoding::Utf16) {
        panic!("{err}");
    }
}
