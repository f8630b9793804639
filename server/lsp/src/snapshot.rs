//! One version of one open document, and its analysis, computed at most once.
//!
//! A snapshot never changes: an edit or a configuration change makes a new
//! one. Everything that answers for a document (diagnostics, inlay hints,
//! hover) works from a single snapshot, so byte offsets from the analysis
//! always refer to the very text they are converted against, even when the
//! document has moved on meanwhile.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ropey::Rope;
use shapels_analysis::{Config, FileAnalysis};
use tokio::sync::OnceCell;
use tower_lsp_server::ls_types::Uri;

use crate::guarded::{self, Analyzer};

#[derive(Debug)]
pub(crate) struct Snapshot {
    pub(crate) uri: Uri,
    pub(crate) version: i32,
    pub(crate) text: Rope,
    pub(crate) config: Config,
    analyzer: Analyzer,
    /// The analysis of `text` under `config`; `None` inside when it panicked.
    analysis: OnceCell<Option<Arc<FileAnalysis>>>,
    /// Whether a `textDocument/inlayHint` answer was already computed from this
    /// snapshot, in which case asking the client to refresh hints is pointless.
    hints_served: AtomicBool,
}

impl Snapshot {
    pub(crate) fn new(
        uri: Uri,
        version: i32,
        text: Rope,
        config: Config,
        analyzer: Analyzer,
    ) -> Self {
        Snapshot {
            analyzer,
            uri,
            version,
            text,
            config,
            analysis: OnceCell::new(),
            hints_served: AtomicBool::new(false),
        }
    }

    /// The analysis of this snapshot, run on the blocking pool the first time
    /// anyone asks; concurrent callers share the one run.
    ///
    /// `OnceCell::get_or_init` is cancellation safe: when the caller that
    /// started the run is dropped (a cancelled request), the next caller
    /// starts it again, so no waiter is left without a result.
    pub(crate) async fn analysis(&self) -> Option<Arc<FileAnalysis>> {
        self.analysis
            .get_or_init(|| async {
                let name = self.uri.as_str().to_string();
                let text = self.text.clone();
                let config = self.config.clone();
                let analyzer = self.analyzer;
                let started = std::time::Instant::now();
                let result = tokio::task::spawn_blocking(move || {
                    guarded::analyze_with(analyzer, &name, &text.to_string(), &config)
                })
                .await;
                match result {
                    Ok(analysis) => {
                        tracing::debug!(
                            "analysed {} version {} in {:?}",
                            self.uri.as_str(),
                            self.version,
                            started.elapsed()
                        );
                        analysis.map(Arc::new)
                    }
                    Err(err) => {
                        // `guarded::analyze` already catches panics; a join
                        // error here means the runtime is shutting down.
                        tracing::warn!("analysis of {} did not complete: {err}", self.uri.as_str());
                        None
                    }
                }
            })
            .await
            .clone()
    }

    pub(crate) fn mark_hints_served(&self) {
        self.hints_served.store(true, Ordering::Relaxed);
    }

    pub(crate) fn hints_served(&self) -> bool {
        self.hints_served.load(Ordering::Relaxed)
    }
}
