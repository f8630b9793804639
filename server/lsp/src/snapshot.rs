//! One version of one open document, and its analysis, computed at most once.
//!
//! A snapshot never changes: an edit or a configuration change makes a new
//! one. Everything that answers for a document (diagnostics, inlay hints,
//! hover) works from a single snapshot, so byte offsets from the analysis
//! always refer to the very text they are converted against, even when the
//! document has moved on meanwhile.
//!
//! A snapshot that is replaced is cancelled: analysis work queued for it and
//! not yet started is skipped, since a newer version is on its way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ropey::Rope;
use shapels_analysis::{Config, Coverage, FileAnalysis};
use tokio::sync::{OnceCell, oneshot};
use tower_lsp_server::ls_types::Uri;

use crate::session::Session;
use crate::worker::{CancelToken, Job, Outcome};

#[derive(Debug)]
pub(crate) struct Snapshot {
    pub(crate) uri: Uri,
    pub(crate) version: i32,
    pub(crate) text: Rope,
    pub(crate) config: Config,
    /// `extra-paths` of the document's settings, where its imports are
    /// looked for besides its folder and the workspace roots.
    pub(crate) import_paths: Arc<shapels_analysis::workspace::ImportPaths>,
    token: CancelToken,
    /// The analysis of `text` under `config`, bindings and diagnostics only;
    /// `None` inside when it panicked. A cancelled run stores nothing.
    analysis: OnceCell<Option<Arc<FileAnalysis>>>,
    /// The same with every tensor expression too, made only when a hover
    /// between names asks for it (see `Coverage`).
    with_expressions: OnceCell<Option<Arc<FileAnalysis>>>,
    /// Whether each quick fix, by diagnostic and fix index in `analysis`,
    /// made its diagnostic go away when tried (see `code_actions`): asked
    /// again as the cursor moves, it is tried once per version.
    pub(crate) fixes_tried: std::sync::Mutex<std::collections::HashMap<(usize, usize), bool>>,
    /// Whether a `textDocument/inlayHint` answer was already computed from this
    /// snapshot, in which case asking the client to refresh hints is pointless.
    hints_served: AtomicBool,
    /// When this version arrived: diagnostics wait for a pause in typing.
    pub(crate) created: std::time::Instant,
}

/// The snapshot was replaced by a newer one before its analysis ran: the
/// result would describe a text the client no longer has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cancelled;

/// A request about a superseded text answers LSP's ContentModified, which
/// tells the client to ask again (or not) without showing an error.
impl From<Cancelled> for tower_lsp_server::jsonrpc::Error {
    fn from(_: Cancelled) -> Self {
        tower_lsp_server::jsonrpc::Error::content_modified()
    }
}

impl Snapshot {
    pub(crate) fn new(
        uri: Uri,
        version: i32,
        text: Rope,
        config: Config,
        import_paths: Arc<shapels_analysis::workspace::ImportPaths>,
    ) -> Self {
        Snapshot {
            uri,
            version,
            text,
            config,
            import_paths,
            token: CancelToken::default(),
            analysis: OnceCell::new(),
            with_expressions: OnceCell::new(),
            fixes_tried: Default::default(),
            hints_served: AtomicBool::new(false),
            created: std::time::Instant::now(),
        }
    }

    /// Marks this snapshot as replaced; called by the document store.
    pub(crate) fn cancel(&self) {
        self.token.cancel();
    }

    /// The analysis of this snapshot (bindings and diagnostics), run by
    /// `workers` the first time anyone asks; concurrent callers share the
    /// one run. `Err(Cancelled)` when the snapshot was replaced before the
    /// run began.
    ///
    /// `OnceCell::get_or_try_init` is cancellation safe: when the caller that
    /// started the run is dropped (a cancelled request), the next caller
    /// starts it again, so no waiter is left without a result.
    pub(crate) async fn analysis(
        &self,
        session: &Session,
    ) -> Result<Option<Arc<FileAnalysis>>, Cancelled> {
        self.run(&self.analysis, Coverage::Bindings, session).await
    }

    /// [`Snapshot::analysis`] with every tensor-valued expression, for hover.
    pub(crate) async fn analysis_with_expressions(
        &self,
        session: &Session,
    ) -> Result<Option<Arc<FileAnalysis>>, Cancelled> {
        self.run(&self.with_expressions, Coverage::Expressions, session)
            .await
    }

    async fn run(
        &self,
        cell: &OnceCell<Option<Arc<FileAnalysis>>>,
        coverage: Coverage,
        session: &Session,
    ) -> Result<Option<Arc<FileAnalysis>>, Cancelled> {
        cell.get_or_try_init(|| async {
            if self.token.is_cancelled() {
                return Err(Cancelled);
            }
            let (reply, outcome) = oneshot::channel();
            // The other documents as they are now: this snapshot's analysis
            // sees them so (a change to one it imports makes a new snapshot).
            let imports = session.import_inputs(&self.uri, &self.import_paths);
            session.workers.submit(Job {
                uri: self.uri.clone(),
                version: self.version,
                text: self.text.clone(),
                config: self.config.clone(),
                coverage,
                imports,
                summary: None,
                token: self.token.clone(),
                reply,
            });
            match outcome.await {
                Ok(Outcome::Done(analysis)) => {
                    session.note_imports(&self.uri, &analysis.imports);
                    Ok(Some(Arc::new(analysis)))
                }
                Ok(Outcome::Failed | Outcome::Summary(_)) => Ok(None),
                Ok(Outcome::Cancelled) => Err(Cancelled),
                Err(_) => {
                    tracing::error!(
                        "the analysis worker for {} is gone; no result for version {}",
                        self.uri.as_str(),
                        self.version
                    );
                    Ok(None)
                }
            }
        })
        .await
        .cloned()
    }

    /// The analysis of `text`, this snapshot's text with a quick fix
    /// applied, as this snapshot's would be made (same configuration,
    /// imports and workers), under the document's name `as_uri` so that
    /// the document's own parse is left alone. `Err(Cancelled)` when this
    /// snapshot was replaced before the run began: the fix is moot.
    pub(crate) async fn analysis_of_edit(
        &self,
        session: &Session,
        as_uri: &Uri,
        text: Rope,
    ) -> Result<Option<FileAnalysis>, Cancelled> {
        match self.one_off(session, as_uri, text, None).await? {
            Some(Outcome::Done(analysis)) => Ok(Some(analysis)),
            Some(Outcome::Cancelled) => Err(Cancelled),
            _ => Ok(None),
        }
    }

    /// The model summary of the module `target` names in this snapshot,
    /// worked out now (a hover on a module asks for it; no keystroke does).
    pub(crate) async fn summary(
        &self,
        session: &Session,
        target: shapels_analysis::SummaryTarget,
    ) -> Result<Option<Box<shapels_analysis::ModelSummary>>, Cancelled> {
        let (uri, text) = (self.uri.clone(), self.text.clone());
        match self.one_off(session, &uri, text, Some(target)).await? {
            Some(Outcome::Summary(summary)) => Ok(summary),
            Some(Outcome::Cancelled) => Err(Cancelled),
            _ => Ok(None),
        }
    }

    /// A job run once, not kept in the snapshot (a quick fix's trial, a
    /// summary), with this snapshot's configuration, imports and cancel
    /// token; `None` when the worker is gone.
    async fn one_off(
        &self,
        session: &Session,
        uri: &Uri,
        text: Rope,
        summary: Option<shapels_analysis::SummaryTarget>,
    ) -> Result<Option<Outcome>, Cancelled> {
        if self.token.is_cancelled() {
            return Err(Cancelled);
        }
        let (reply, outcome) = oneshot::channel();
        let imports = session.import_inputs(&self.uri, &self.import_paths);
        session.workers.submit(Job {
            uri: uri.clone(),
            version: self.version,
            text,
            config: self.config.clone(),
            coverage: Coverage::Bindings,
            imports,
            summary,
            token: self.token.clone(),
            reply,
        });
        Ok(outcome.await.ok())
    }

    pub(crate) fn mark_hints_served(&self) {
        self.hints_served.store(true, Ordering::Relaxed);
    }

    pub(crate) fn hints_served(&self) -> bool {
        self.hints_served.load(Ordering::Relaxed)
    }
}
