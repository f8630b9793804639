//! Symbolic tensor sizes: `Dim` expressions and the `ShapeEnv` that names them.
//!
//! Pure data and algebra: no I/O, no knowledge of Python or of LSP.

mod dim;
mod env;

pub use dim::{Atom, Dim, SymId, floor_div_i64};
pub use env::{BranchFacts, Guard, GuardSite, ShapeEnv, SymbolInfo, Unified};
