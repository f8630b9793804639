//! A document opened and edited through the language server's own document
//! store and incremental analysis (`shapels_lsp::testing`): positions in any
//! encoding, in or out of range, text of any kind. Nothing may panic, and
//! after every edit the incremental parse must be exactly a fresh parse of
//! the same text, and the analysis a fresh analysis (the editor must show
//! what `shapels check` would).

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use shapels_lsp::position::PositionEncoding;
use shapels_lsp::testing::{Change, EditSession};

#[derive(Debug, Arbitrary)]
struct Input {
    start: String,
    encoding: u8,
    edits: Vec<Vec<Edit>>,
}

#[derive(Debug, Arbitrary)]
struct Edit {
    /// `None` replaces the whole text.
    range: Option<(u8, u8, u8, u8)>,
    text: String,
    /// Whether to analyse after this `didChange` (parsing is always checked).
    analyze: bool,
}

fuzz_target!(|input: Input| {
    let encoding = match input.encoding % 3 {
        0 => PositionEncoding::Utf8,
        1 => PositionEncoding::Utf16,
        _ => PositionEncoding::Utf32,
    };
    let mut session = EditSession::open(&input.start, encoding);
    for changes_in in input.edits.iter().take(32) {
        let changes: Vec<Change> = changes_in
            .iter()
            .take(4)
            .map(|edit| Change {
                range: edit
                    .range
                    .map(|(l0, c0, l1, c1)| [l0 as u32 % 16, c0 as u32, l1 as u32 % 16, c1 as u32]),
                text: edit.text.clone(),
            })
            .collect();
        session.change(&changes);
        let text = session.text();
        let parsed = session.parse();
        assert_eq!(parsed.text, text);
        assert_eq!(
            parsed.file.observable(),
            shapels_syntax::parse(&text).observable(),
            "incremental parse differs from a fresh one for {text:?}"
        );
        if changes_in.iter().take(4).any(|edit| edit.analyze) {
            let analysis = session.analyze().expect("the analysis ran");
            // Run again or carried over from the last version, it is the
            // analysis of this text.
            let fresh = shapels_analysis::analyze_module(
                &text,
                &shapels_syntax::parse(&text).module,
                &shapels_analysis::Config::default(),
                shapels_analysis::Coverage::Expressions,
            );
            assert_eq!(
                format!("{analysis:?}"),
                format!("{fresh:?}"),
                "the analysis differs from a fresh one for {text:?}"
            );
        }
    }
});
