//! The model summary, statically: a torchinfo-style table of a module's
//! layers (nested as `print(model)` shows them), each layer's output shape
//! for the input the analysis has, parameter counts and memory totals.
//!
//! It is worked out on request (a hover, `shapels summary`), by a run of
//! the interpreter that notes every module call (see `log`): the analysis
//! that runs on every keystroke notes none of it.

mod build;
pub(crate) mod log;
mod names;
mod render;
mod tree;

use shapels_syntax::ast::TextRange;

use crate::report::Config;
use crate::workspace::ModuleGraph;

/// Which module to summarise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryTarget {
    /// The module under a byte offset of the file: a module-valued name or
    /// attribute (`model`, `self.block`), a constructor call, or a class's name.
    At(usize),
    /// A class of the file, by name.
    Class(String),
    /// The model of the file: the module its top level calls, else the
    /// last module class it defines.
    Model,
}

/// A number the summary shows: concrete, symbolic, or unknown (`?`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// `1024`, `3*n_embd**2 + 3*n_embd`, or `?`.
    pub text: String,
    /// The number, when it is one.
    pub value: Option<i64>,
}

impl Count {
    pub fn is_known(&self) -> bool {
        self.text != "?"
    }
}

/// One row: a module of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRow {
    /// Nesting depth, 0 for the summarised module.
    pub depth: usize,
    /// The name its parent registered it under (`0`, `fc`); `None` for the root.
    pub name: Option<String>,
    /// What `print(model)` says of it: `Linear(768, 3072)`, `Block`.
    pub layer: String,
    /// The output of its first call in the summarised forward (`[16, 64]`),
    /// `None` when that forward did not call it.
    pub output: Option<String>,
    /// How many times that forward called it.
    pub calls: usize,
    /// Its parameters, its children's included, each shared one once.
    pub params: Count,
    /// All of its parameters are frozen (`requires_grad_(False)`).
    pub frozen: bool,
}

/// Parameter bytes for one dtype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DTypeBytes {
    pub dtype: String,
    pub bytes: Count,
}

/// A model summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSummary {
    /// The summarised module's class (`GPT`, `Sequential`).
    pub model: String,
    /// The byte range of what the summary was asked for (for hover).
    pub range: TextRange,
    /// The input of the summarised forward (`[16, 3, 224, 224]`, `[B, T]`);
    /// `None` when no call ran.
    pub input: Option<String>,
    /// Whether the input came from a call in the code (or `--input`),
    /// rather than made up from the signature (library mode).
    pub input_from_code: bool,
    pub rows: Vec<SummaryRow>,
    pub total_params: Count,
    pub trainable_params: Count,
    pub frozen_params: Count,
    pub param_bytes: Vec<DTypeBytes>,
    /// The bytes of the outputs of every built-in layer call in the
    /// summarised forward (see `ACTIVATION_DEFINITION`).
    pub activation_bytes: Count,
    /// torchinfo's "forward/backward pass size" for the same forward:
    /// twice the output bytes of the calls of layers with parameters.
    pub torchinfo_pass_bytes: Count,
    /// What the summary could not know, and why.
    pub notes: Vec<String>,
}

/// What `activation_bytes` counts, for the reader of a summary.
pub const ACTIVATION_DEFINITION: &str = "activations: the bytes of the output of every call of a built-in layer in one forward (containers and functional ops not counted; torchinfo's forward/backward pass size is twice this, over layers with parameters)";

/// Summarise the module `target` names, in the file `source` whose imports
/// `modules` holds. `input` replaces the input the analysis has with a
/// concrete shape. `None` when the target names no module.
pub fn summarize(
    source: &str,
    module: &shapels_syntax::ast::Module,
    config: &Config,
    modules: &ModuleGraph,
    target: &SummaryTarget,
    input: Option<&[i64]>,
) -> Option<ModelSummary> {
    build::summarize(source, module, config, modules, target, input)
}
