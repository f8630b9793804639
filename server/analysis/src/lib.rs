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
        reads: Some(interp.reads.into_inner().finish()),
    }
}
