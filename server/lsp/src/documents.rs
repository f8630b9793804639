//! The open documents: their text, version and current snapshot.
//!
//! Edits are applied here, synchronously, by the notification handlers.
//! tower-lsp-server runs handlers concurrently, but it creates and first polls
//! their futures in the order the messages arrived; the handlers therefore
//! take the store's lock and apply an edit before their first `.await`, which
//! keeps `didChange` strictly ordered per document (and across documents)
//! without a queue of our own. A version that does not increase is logged as
//! a client bug but still applied: the edits are all the text we have.
//!
//! Whenever a snapshot stops being its document's current one (an edit, a
//! configuration change, a close, a second open), it is cancelled here, so
//! that analysis work not yet started for it is skipped.

use std::collections::HashMap;
use std::sync::Arc;

use shapels_analysis::workspace::ImportPaths;

use ropey::Rope;
use shapels_analysis::Config;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use crate::files::OverlayFiles;
use crate::position::PositionEncoding;
use crate::proto;
use crate::snapshot::Snapshot;

#[derive(Debug, Default)]
pub(crate) struct DocumentStore {
    documents: HashMap<Uri, Arc<Snapshot>>,
    /// The text of documents that other documents' analyses read as
    /// imported modules, made once per version of each (ropes are what
    /// edits need; the analysis wants one string).
    texts: HashMap<Uri, (i32, Arc<str>)>,
}

impl DocumentStore {
    /// Opens (or re-opens, replacing) a document and returns its first snapshot.
    pub(crate) fn open(
        &mut self,
        uri: Uri,
        version: i32,
        text: &str,
        config: Config,
        import_paths: Arc<ImportPaths>,
    ) -> Arc<Snapshot> {
        let snapshot = Arc::new(Snapshot::new(
            uri.clone(),
            version,
            Rope::from_str(text),
            config,
            import_paths,
        ));
        if let Some(previous) = self.documents.insert(uri, snapshot.clone()) {
            previous.cancel();
            tracing::warn!(
                "didOpen for {} which was already open; replacing it",
                snapshot.uri.as_str()
            );
        }
        snapshot
    }

    /// Applies the edits of one `didChange`, in order, and returns the new
    /// snapshot; `None` when the document is not open.
    pub(crate) fn change(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: &[TextDocumentContentChangeEvent],
        encoding: PositionEncoding,
    ) -> Option<Arc<Snapshot>> {
        let current = self.documents.get(uri)?;
        if version <= current.version {
            tracing::warn!(
                "didChange for {} goes from version {} to {version}; applying it anyway",
                uri.as_str(),
                current.version
            );
        }
        // Cloning a rope is O(1) and edits copy only the nodes they touch,
        // so older snapshots still being analysed keep their own text.
        let mut text = current.text.clone();
        for change in changes {
            apply_change(&mut text, change, encoding);
        }
        let snapshot = Arc::new(Snapshot::new(
            uri.clone(),
            version,
            text,
            current.config.clone(),
            current.import_paths.clone(),
        ));
        current.cancel();
        self.documents.insert(uri.clone(), snapshot.clone());
        Some(snapshot)
    }

    pub(crate) fn close(&mut self, uri: &Uri) -> bool {
        self.texts.remove(uri);
        match self.documents.remove(uri) {
            Some(snapshot) => {
                snapshot.cancel();
                true
            }
            None => false,
        }
    }

    pub(crate) fn get(&self, uri: &Uri) -> Option<Arc<Snapshot>> {
        self.documents.get(uri).cloned()
    }

    pub(crate) fn contains(&self, uri: &Uri) -> bool {
        self.documents.contains_key(uri)
    }

    /// Whether `snapshot` is still what its document holds; a result computed
    /// from any other snapshot is stale.
    pub(crate) fn is_current(&self, snapshot: &Arc<Snapshot>) -> bool {
        self.documents
            .get(&snapshot.uri)
            .is_some_and(|current| Arc::ptr_eq(current, snapshot))
    }

    /// Gives every document whose configuration changed a new snapshot (same
    /// text and version) and returns those snapshots, to be analysed again.
    pub(crate) fn reconfigure(
        &mut self,
        config_for: impl Fn(&Uri) -> (Config, Arc<ImportPaths>),
    ) -> Vec<Arc<Snapshot>> {
        let mut changed = Vec::new();
        for (uri, snapshot) in &mut self.documents {
            let (config, import_paths) = config_for(uri);
            if config != snapshot.config || import_paths != snapshot.import_paths {
                snapshot.cancel();
                *snapshot = Arc::new(Snapshot::new(
                    uri.clone(),
                    snapshot.version,
                    snapshot.text.clone(),
                    config,
                    import_paths,
                ));
                changed.push(snapshot.clone());
            }
        }
        changed
    }

    /// Gives these documents new snapshots of the same text, version and
    /// configuration, to be analysed again: something they import changed.
    pub(crate) fn refresh(&mut self, uris: &[Uri]) -> Vec<Arc<Snapshot>> {
        let mut refreshed = Vec::new();
        for uri in uris {
            if let Some(snapshot) = self.documents.get_mut(uri) {
                snapshot.cancel();
                *snapshot = Arc::new(Snapshot::new(
                    uri.clone(),
                    snapshot.version,
                    snapshot.text.clone(),
                    snapshot.config.clone(),
                    snapshot.import_paths.clone(),
                ));
                refreshed.push(snapshot.clone());
            }
        }
        refreshed
    }

    /// The open documents that are files, other than `except`, as the
    /// analysis reads them when it imports them: their unsaved text wins
    /// over the disk.
    pub(crate) fn overlay(&mut self, except: &Uri) -> OverlayFiles {
        let mut open = HashMap::new();
        for (uri, snapshot) in &self.documents {
            if uri == except || !uri.as_str().starts_with("file:") {
                continue;
            }
            let Some(path) = uri.to_file_path() else {
                continue;
            };
            let text = match self.texts.get(uri) {
                Some((version, text)) if *version == snapshot.version => text.clone(),
                _ => {
                    let text: Arc<str> = Arc::from(snapshot.text.to_string());
                    self.texts
                        .insert(uri.clone(), (snapshot.version, text.clone()));
                    text
                }
            };
            open.insert(path.into_owned(), text);
        }
        OverlayFiles { open }
    }

    /// The open documents, by URI.
    pub(crate) fn uris(&self) -> Vec<Uri> {
        self.documents.keys().cloned().collect()
    }
}

/// Applies one content change: a whole new text when it has no range,
/// otherwise a replacement of the range, clamped to the document.
pub(crate) fn apply_change(
    text: &mut Rope,
    change: &TextDocumentContentChangeEvent,
    encoding: PositionEncoding,
) {
    let Some(range) = change.range else {
        *text = Rope::from_str(&change.text);
        return;
    };
    let bytes = proto::offsets(text, range, encoding);
    let start = text.byte_to_char(bytes.start);
    let end = text.byte_to_char(bytes.end);
    text.remove(start..end);
    text.insert(start, &change.text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    fn edit(start: (u32, u32), end: (u32, u32), text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(
                Position::new(start.0, start.1),
                Position::new(end.0, end.1),
            )),
            range_length: None,
            text: text.to_string(),
        }
    }

    fn full(text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: text.to_string(),
        }
    }

    fn apply_all(
        initial: &str,
        changes: &[TextDocumentContentChangeEvent],
        encoding: PositionEncoding,
    ) -> String {
        let mut rope = Rope::from_str(initial);
        for change in changes {
            apply_change(&mut rope, change, encoding);
        }
        rope.to_string()
    }

    #[test]
    fn incremental_edits_apply_in_order() {
        let changes = [
            edit((0, 0), (0, 1), "xx"),
            edit((0, 2), (0, 2), "y"),
            edit((1, 0), (1, 0), "# "),
        ];
        assert_eq!(
            apply_all("x = 1\nz = 2\n", &changes, PositionEncoding::Utf16),
            "xxy = 1\n# z = 2\n"
        );
    }

    #[test]
    fn full_change_replaces_everything() {
        let changes = [
            edit((0, 0), (0, 1), "q"),
            full("new\n"),
            edit((0, 3), (0, 3), "er"),
        ];
        assert_eq!(
            apply_all("old\n", &changes, PositionEncoding::Utf16),
            "newer\n"
        );
    }

    #[test]
    fn edit_after_an_emoji_in_each_encoding() {
        let text = "s = \"🎉\"; x = 1\n";
        // `1` is UTF-16 column 14, UTF-8 column 16.
        assert_eq!(
            apply_all(
                text,
                &[edit((0, 14), (0, 15), "2")],
                PositionEncoding::Utf16
            ),
            "s = \"🎉\"; x = 2\n"
        );
        assert_eq!(
            apply_all(text, &[edit((0, 16), (0, 17), "2")], PositionEncoding::Utf8),
            "s = \"🎉\"; x = 2\n"
        );
    }

    #[test]
    fn edit_across_crlf_lines() {
        let text = "a = 1\r\nb = 2\r\nc = 3\r\n";
        assert_eq!(
            apply_all(
                text,
                &[edit((0, 5), (2, 0), "\r\n")],
                PositionEncoding::Utf16
            ),
            "a = 1\r\nc = 3\r\n"
        );
    }

    #[test]
    fn out_of_range_edits_clamp() {
        let changes = [edit((0, 99), (7, 7), "!"), edit((9, 0), (9, 0), "?")];
        assert_eq!(
            apply_all("ab\ncd", &changes, PositionEncoding::Utf16),
            "ab!?"
        );
    }

    #[test]
    fn reversed_range_inserts_at_start() {
        assert_eq!(
            apply_all("abc", &[edit((0, 2), (0, 1), "X")], PositionEncoding::Utf8),
            "abXc"
        );
    }
}
