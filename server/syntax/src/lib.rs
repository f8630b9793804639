//! Python source text to a small typed syntax tree, through tree-sitter.
//!
//! This layer knows nothing of tensors or of LSP: it parses (and reparses
//! incrementally after edits), lowers tree-sitter's concrete tree into the
//! owned `ast`, and owns the tree-sitter queries in `queries/python`.

pub mod ast;
