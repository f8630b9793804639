//! The fake-mode abstract interpreter: Python syntax in, shapes and diagnostics out.
//!
//! This crate does no I/O and never fails: `analyze` returns a
//! `FileAnalysis` of plain data with byte ranges, and anything it cannot
//! follow is `Unknown`.

mod carry;
mod interp;
mod record;
mod report;
mod rules;
mod value;

pub use carry::{TextReads, carry_over};
pub use interp::CallCache;
pub use report::*;

/// Analyse one Python file, expressions included. Never panics on any input.
pub fn analyze(source: &str, config: &Config) -> FileAnalysis {
    let parsed = shapels_syntax::parse(source);
    analyze_module(source, &parsed.module, config, Coverage::Expressions)
}

/// Analyse an already parsed module (the LSP keeps the tree between edits),
/// keeping what `coverage` asks for.
pub fn analyze_module(
    source: &str,
    module: &shapels_syntax::ast::Module,
    config: &Config,
    coverage: Coverage,
) -> FileAnalysis {
    let mut interp = interp::Interp::new(source, config);
    interp.recorder.expressions = coverage == Coverage::Expressions;
    interp.run_module(module);
    finish(interp, config)
}

/// `analyze_module` for one version of a file being edited: calls of the
/// last version's analysis that the edit cannot have changed are taken
/// from `previous` instead of run (a function edited runs again, with
/// every call that reaches it), and this version's calls are kept for the
/// next. The analysis equals `analyze_module`'s.
pub fn analyze_module_reusing(
    source: &str,
    module: &shapels_syntax::ast::Module,
    config: &Config,
    coverage: Coverage,
    previous: Option<&CallCache>,
) -> (FileAnalysis, CallCache) {
    let mut interp = interp::Interp::new(source, config);
    interp.recorder.expressions = coverage == Coverage::Expressions;
    interp.carry_calls(module, previous);
    interp.run_module(module);
    let calls = interp.carried_calls();
    (finish(interp, config), calls)
}

fn finish(mut interp: interp::Interp<'_>, config: &Config) -> FileAnalysis {
    // Where a run out of steps stopped depends on the file's length (its
    // budget), which any edit changes: such a result is never carried over.
    let carriable = !interp.report_budget_stop();
    let (bindings, expressions) = {
        let recorder = std::mem::take(&mut interp.recorder);
        let view = &interp;
        recorder.finish(
            &view.env,
            &|s| view.resolve_shape(s),
            view.var_heads(),
            config.static_shapes,
        )
    };
    let mut diagnostics = std::mem::take(&mut interp.diagnostics);
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end));
    FileAnalysis {
        bindings,
        expressions,
        diagnostics,
        reads: carriable.then(|| interp.reads.into_inner().finish()),
    }
}
