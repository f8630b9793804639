//! One document driven through the server's own edit and analysis path,
//! synchronously and without a client: for fuzzing, property tests and
//! benchmarks, which must exercise exactly what the server runs.
//!
//! Edits go through the document store (`didChange`'s code, positions in
//! the chosen encoding, out-of-range positions clamped) and each analysis
//! through the parse cache the workers use (incremental reparse, fresh
//! parse of broken texts). Not a stable API.

use shapels_analysis::{Config, Coverage, FileAnalysis};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent, Uri};

use crate::documents::DocumentStore;
use crate::position::PositionEncoding;
use crate::worker::{Analyzer, ImportInputs, ImportState, Outcome, ParseCache};

pub use crate::worker::{Parsed, reparse_or_parse};

/// One content change of a `didChange`: `range` is `[start line, start
/// character, end line, end character]` in the session's encoding, or
/// `None` to replace the whole text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub range: Option<[u32; 4]>,
    pub text: String,
}

/// An open document and its analysis state.
pub struct EditSession {
    store: DocumentStore,
    cache: ParseCache,
    imports: ImportState,
    uri: Uri,
    version: i32,
    encoding: PositionEncoding,
    analyzer: Analyzer,
}

impl EditSession {
    /// Opens `text` as version 1, with the real analysis (taking calls
    /// from one version's analysis to the next, as the server does).
    pub fn open(text: &str, encoding: PositionEncoding) -> Self {
        Self::open_with(text, encoding, Analyzer::Reusing)
    }

    /// [`EditSession::open`] with the given analysis.
    pub fn open_with(text: &str, encoding: PositionEncoding, analyzer: Analyzer) -> Self {
        let uri: Uri = "untitled:session.py".parse().expect("a valid URI");
        let mut store = DocumentStore::default();
        store.open(uri.clone(), 1, text, Config::default(), Default::default());
        EditSession {
            store,
            cache: ParseCache::default(),
            imports: ImportState::default(),
            uri,
            version: 1,
            encoding,
            analyzer,
        }
    }

    /// Applies one `didChange` with these changes, in order.
    pub fn change(&mut self, changes: &[Change]) {
        self.version += 1;
        let changes: Vec<TextDocumentContentChangeEvent> = changes
            .iter()
            .map(|change| TextDocumentContentChangeEvent {
                range: change.range.map(|[l0, c0, l1, c1]| Range {
                    start: Position::new(l0, c0),
                    end: Position::new(l1, c1),
                }),
                range_length: None,
                text: change.text.clone(),
            })
            .collect();
        self.store
            .change(&self.uri, self.version, &changes, self.encoding);
    }

    /// The document's current text.
    pub fn text(&self) -> String {
        self.current_text()
    }

    /// The parse of the current text, made from the previous one as the
    /// server makes it.
    pub fn parse(&mut self) -> &Parsed {
        let text = self.current_text();
        self.cache.parse(&self.uri, text)
    }

    /// The analysis of the current text as the server computes it; `None`
    /// when the parse or the analysis panicked.
    pub fn analyze(&mut self) -> Option<FileAnalysis> {
        let text = self.current_text();
        match self.cache.analyze(
            &self.uri,
            text,
            (&Config::default(), Coverage::Expressions),
            (self.analyzer, &std::sync::atomic::AtomicBool::new(false)),
            (&ImportInputs::default(), &mut self.imports),
        ) {
            Outcome::Done(analysis) => Some(analysis),
            Outcome::Failed | Outcome::Cancelled | Outcome::Summary(_) => None,
        }
    }

    fn current_text(&self) -> String {
        self.store
            .get(&self.uri)
            .map(|snapshot| snapshot.text.to_string())
            .unwrap_or_default()
    }
}
