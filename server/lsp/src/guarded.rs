//! Running the analysis so that a bug in it costs one result, not the process.
//!
//! The analysis promises never to panic, but it is a large interpreter over
//! arbitrary user code, and an editor session must survive the day it breaks
//! that promise. Both the server and `shapels check` call it through here.

use std::panic::{AssertUnwindSafe, catch_unwind};

use shapels_analysis::{Config, FileAnalysis};

/// An analysis entry point: `shapels_analysis::analyze`, or a stand-in in tests.
pub type Analyzer = fn(&str, &Config) -> FileAnalysis;

/// Analyses `source`, or returns `None` (after logging the panic message)
/// when the analysis panics. `name` identifies the file in the log.
pub fn analyze(name: &str, source: &str, config: &Config) -> Option<FileAnalysis> {
    analyze_with(shapels_analysis::analyze, name, source, config)
}

/// [`analyze`] with the given analysis.
pub fn analyze_with(
    analyzer: Analyzer,
    name: &str,
    source: &str,
    config: &Config,
) -> Option<FileAnalysis> {
    // The analysis holds no state across calls, so nothing it leaves half
    // updated can be observed after the unwind: asserting unwind safety is sound.
    match catch_unwind(AssertUnwindSafe(|| analyzer(source, config))) {
        Ok(analysis) => Some(analysis),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            tracing::error!("the analysis panicked on {name}: {message}");
            None
        }
    }
}
