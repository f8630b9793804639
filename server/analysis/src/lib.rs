//! The fake-mode abstract interpreter: Python syntax in, shapes and diagnostics out.
//!
//! This crate does no I/O and never fails: `analyze` returns a
//! `FileAnalysis` of plain data with byte ranges, and anything it cannot
//! follow is `Unknown`.

mod carry;
mod code;
mod hints;
mod interp;
mod mutation;
pub mod quick_fix;
mod record;
mod report;
mod rules;
mod stated;
mod summary;
mod syntax_errors;
mod text_reads;
mod value;
pub mod workspace;

pub use carry::{TextReads, carry_over};
pub use hints::{HintMode, HintOptions, inlay_hints_with};
pub use interp::CallCache;
pub use report::*;
pub use summary::{
    ACTIVATION_DEFINITION, Count, DTypeBytes, ModelSummary, SummaryRow, SummaryTarget, summarize,
};
pub use syntax_errors::add_syntax_errors;
pub use workspace::ModuleGraph;

thread_local! {
    static LOOPS_AT_ONCE: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    static LOOPS_RUN_AT_ONCE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Whether loops of many turns may run all their turns at once (see
/// `interp::induction`); on unless a test turns it off on its thread, to
/// hold the result to that of running every turn. Loops longer than the
/// analysis runs turn by turn may run at once either way: there is no
/// turn-by-turn run of them to hold them to.
#[doc(hidden)]
pub fn set_loops_at_once(on: bool) {
    LOOPS_AT_ONCE.with(|cell| cell.set(on));
}

pub(crate) fn loops_at_once() -> bool {
    LOOPS_AT_ONCE.with(std::cell::Cell::get)
}

/// How many loops ran their turns at once on this thread so far (for the
/// test that holds them to running every turn).
#[doc(hidden)]
pub fn loops_run_at_once() -> u64 {
    LOOPS_RUN_AT_ONCE.with(std::cell::Cell::get)
}

pub(crate) fn count_loop_run_at_once() {
    LOOPS_RUN_AT_ONCE.with(|count| count.set(count.get() + 1));
}

/// Analyse one Python file, expressions included, with a diagnostic for
/// each syntax error. Never panics on any input.
pub fn analyze(source: &str, config: &Config) -> FileAnalysis {
    let parsed = shapels_syntax::parse(source);
    let mut analysis = analyze_module(source, &parsed.module, config, Coverage::Expressions);
    add_syntax_errors(&mut analysis, &parsed);
    analysis
}

/// Analyse an already parsed module (the LSP keeps the tree between edits),
/// keeping what `coverage` asks for. Imports of the user's modules name
/// nothing: see `analyze_module_in`.
pub fn analyze_module(
    source: &str,
    module: &shapels_syntax::ast::Module,
    config: &Config,
    coverage: Coverage,
) -> FileAnalysis {
    analyze_module_in(source, module, config, coverage, &ModuleGraph::empty())
}

/// `analyze_module` for a file whose imports of the user's own modules
/// `modules` holds (see `workspace::load`): their code runs where the file
/// imports it, as if it were written here, and what it gets wrong is
/// reported where this file calls it.
pub fn analyze_module_in(
    source: &str,
    module: &shapels_syntax::ast::Module,
    config: &Config,
    coverage: Coverage,
    modules: &ModuleGraph,
) -> FileAnalysis {
    let mut interp = interp::Interp::new(source, config, modules);
    interp.recorder.expressions = coverage == Coverage::Expressions;
    interp.run_module(module);
    finish(interp, config, module)
}

/// `analyze_module_in` for one version of a file being edited: calls of
/// the last version's analysis that the edit cannot have changed are taken
/// from `previous` instead of run (a function edited runs again, with
/// every call that reaches it), and this version's calls are kept for the
/// next. The analysis equals `analyze_module_in`'s. `previous` must come
/// from an analysis with the same imported files (`ModuleGraph::fingerprint`):
/// a carried call may have run their code.
pub fn analyze_module_reusing(
    source: &str,
    module: &shapels_syntax::ast::Module,
    config: &Config,
    coverage: Coverage,
    previous: Option<&CallCache>,
    modules: &ModuleGraph,
) -> (FileAnalysis, CallCache) {
    let never = std::sync::atomic::AtomicBool::new(false);
    analyze_module_cancellable(source, module, config, coverage, previous, modules, &never)
        .expect("an analysis nobody cancels runs to its end")
}

/// `analyze_module_reusing` that stops soon after `cancel` is set (the
/// language server sets it when the document changes under the run): then
/// there is no result, and no calls to carry either, since a stopped run's
/// calls did not all finish.
pub fn analyze_module_cancellable(
    source: &str,
    module: &shapels_syntax::ast::Module,
    config: &Config,
    coverage: Coverage,
    previous: Option<&CallCache>,
    modules: &ModuleGraph,
    cancel: &std::sync::atomic::AtomicBool,
) -> Option<(FileAnalysis, CallCache)> {
    let mut interp = interp::Interp::new(source, config, modules);
    interp.cancel = Some(cancel);
    interp.recorder.expressions = coverage == Coverage::Expressions;
    interp.carry_calls(module, previous);
    interp.run_module(module);
    if interp.cancelled {
        return None;
    }
    let calls = interp.carried_calls();
    Some((finish(interp, config, module), calls))
}

fn finish(
    mut interp: interp::Interp<'_>,
    config: &Config,
    module: &shapels_syntax::ast::Module,
) -> FileAnalysis {
    // Where a run out of steps stopped depends on the file's length (its
    // budget), which any edit changes: such a result is never carried over.
    let carriable = !interp.report_budget_stop();
    let mut diagnostics = std::mem::take(&mut interp.diagnostics);
    let scopes = function_ranges(module);
    let sizes = interp.recorder.sizes(&interp.env, &scopes);
    let unknowns = std::mem::take(&mut interp.recorder.unknown_reasons);
    let (mut bindings, expressions) = {
        let recorder = std::mem::take(&mut interp.recorder);
        let view = &interp;
        recorder.finish(
            &record::FinishView {
                env: &view.env,
                resolve: &|s| view.resolve_shape(s),
                heads: view.var_heads(),
                tails: view.var_tails(),
                variadic_names: view.variadic_names(),
                made_up: view.open_made_up_ranks(),
                static_shapes: config.static_shapes,
                place: &|offset| view.modules.place(offset),
                scopes: scopes.clone(),
            },
            &mut diagnostics,
        )
    };
    // Whether a name is one the analysis made up for a size nobody named
    // (`N`, `H`): a shape comment's own `N` is not that one. Asked only
    // where a comment seems to put a name elsewhere, so a scan will do.
    let env = &interp.env;
    let made_up = |name: &str| {
        (0..env.symbol_count() as u32)
            .filter_map(|i| env.info(shapels_shapes::SymId(i)))
            .any(|info| info.weak && !info.anonymous && (info.name == name || info.base == name))
    };
    stated::claims::check_comments(
        interp.src,
        &scopes,
        &mut bindings,
        &mut diagnostics,
        &mut interp.reads.borrow_mut(),
        &made_up,
    );
    let definitions = interp.public_definitions();
    interp.release_modules();
    diagnostics.sort_by_key(|d| (d.range.start, d.range.end));
    FileAnalysis {
        bindings,
        expressions,
        diagnostics,
        reads: carriable.then(|| interp.reads.into_inner().finish()),
        imports: interp
            .modules
            .dependencies()
            .into_iter()
            .map(|(path, _)| path.to_path_buf())
            .collect(),
        definitions,
        sizes,
        unknowns,
    }
}

/// The ranges of every function of the file (methods, nested functions
/// and lambdas included), sorted by start: the scopes sizes are named in.
fn function_ranges(module: &shapels_syntax::ast::Module) -> Vec<TextRange> {
    use shapels_syntax::ast::{Stmt, StmtKind};
    fn walk(body: &[Stmt], out: &mut Vec<TextRange>) {
        for stmt in body {
            match &stmt.kind {
                StmtKind::FunctionDef(f) => {
                    out.push(f.range);
                    walk(&f.body, out);
                }
                StmtKind::ClassDef(c) => walk(&c.body, out),
                _ => {
                    for block in stmt.nested_blocks() {
                        walk(block, out);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&module.body, &mut out);
    out.sort_by_key(|r| r.start);
    out
}
