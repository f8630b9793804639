//! The diagnostic codes: each one's stable kebab-case name, severity and meaning.
//!
//! As ty declares its lints, every code the analysis can report is one
//! variant here, so a report cannot misspell a code and the README's
//! diagnostics table is checked against this list (tests/codes.rs), not
//! against a scan of the sources. The names are the JSON contract.

use std::fmt;

use crate::report::Severity;

/// Declares `Code` with its name, its severities (the default first) and
/// its meaning, the doc comment, which is also the README table's column.
macro_rules! codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal, [$($severity:ident),+];)+) => {
        /// A diagnostic code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Code {
            /// Every code, in the README table's order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            /// The stable kebab-case name (`matmul-shape`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)+
                }
            }

            /// The severities it is reported with, the default first.
            pub fn severities(self) -> &'static [Severity] {
                match self {
                    $(Code::$variant => &[$(Severity::$severity),+],)+
                }
            }

            /// What it means, in one line (the README table's column).
            pub fn doc(self) -> &'static str {
                match self {
                    $(Code::$variant => concat!($($doc),+).trim_ascii(),)+
                }
            }
        }
    };
}

codes! {
    /// `@`/`matmul`/`mm`/`bmm`/`cdist`/SDPA inner sizes differ
    MatmulShape = "matmul-shape", [Error];
    /// input of `nn.Linear`/`F.linear` has the wrong last size
    LinearShape = "linear-shape", [Error];
    /// operands do not broadcast (also in-place ops that would grow `self`)
    BroadcastShape = "broadcast-shape", [Error];
    /// `view`/`reshape`/`unflatten` element count, or a `-1` that cannot be inferred
    ViewSize = "view-size", [Error];
    /// `view` of a transposed or permuted tensor whose dims are not consecutive in memory (needs `.contiguous()` or `reshape`)
    ViewStride = "view-stride", [Error];
    /// `cat` on tensors whose other dims or ranks differ
    CatShape = "cat-shape", [Error];
    /// `stack` on tensors of different shapes
    StackShape = "stack-shape", [Error];
    /// `split` sizes that do not add up to the dim
    SplitSize = "split-size", [Error];
    /// a `dim` argument outside `[-n, n-1]`
    DimOutOfRange = "dim-out-of-range", [Error];
    /// an int index past a known size; too many indices; `topk` k too large;
    /// `x.shape[k]` past the rank
    IndexOutOfRange = "index-out-of-range", [Error];
    /// mask or index tensor shapes that do not fit
    IndexShape = "index-shape", [Error];
    /// `expand` to an incompatible size
    ExpandShape = "expand-shape", [Error];
    /// `repeat` with fewer repeats than dims
    RepeatDims = "repeat-dims", [Error];
    /// `permute` with the wrong number of dims or duplicates
    PermuteDims = "permute-dims", [Error];
    /// conv input channels, rank, or a kernel larger than the padded input
    ConvInput = "conv-input", [Error];
    /// a transposed conv asked for an `output_size` it cannot produce
    ConvOutputSize = "conv-output-size", [Error];
    /// pooling input rank, padding over half the kernel, or an output size below 1
    PoolInput = "pool-input", [Error];
    /// input sizes of LayerNorm, BatchNorm, GroupNorm, LSTM/GRU/RNN, MultiheadAttention, Transformer layers, PixelShuffle/PixelUnshuffle (sizes the factor must divide)
    LayerInput = "layer-input", [Error];
    /// a layer built with impossible settings (`embed_dim % num_heads`, groups, `padding='same'` with stride)
    LayerConfig = "layer-config", [Error];
    /// `cross_entropy`/`nll_loss`/BCE input and target shapes disagree
    LossShape = "loss-shape", [Error];
    /// `mse_loss`/`l1_loss` target shape differs and silently broadcasts
    LossBroadcast = "loss-broadcast", [Warning];
    /// `F.pad` with an odd or too long padding list, or a mode the input rank does not allow
    PadSize = "pad-size", [Error];
    /// `F.interpolate` without (or with both) `size` and `scale_factor`, or a mode for another rank
    InterpolateSize = "interpolate-size", [Error];
    /// `F.glu` on a dim of odd size
    GluSize = "glu-size", [Error];
    /// `einsum` subscripts that do not match the operands
    EinsumShape = "einsum-shape", [Error];
    /// an einops pattern that does not fit the tensor
    EinopsPattern = "einops-pattern", [Error];
    /// integer tensors required (embedding indices, class targets), mixed dtypes in matmul and layers, float means of ints
    DtypeMismatch = "dtype-mismatch", [Error];
    /// an op eager torch does not implement for this dtype (`softmax` of an int tensor)
    DtypeUnsupported = "dtype-unsupported", [Error];
    /// torch refuses the call before any kernel runs (a `TypeError`): a number where the op wants a tensor first (`torch.maximum(2, x)`), or keywords none of its signatures takes together (`torch.sort(x, 1, stable=True)`), or a method called without an argument it requires (`x.softmax()`); or a method `Tensor` does not have (`x.rsub(2)`, an `AttributeError`)
    ArgumentType = "argument-type", [Error];
    /// a factory called with a negative size, or `arange` with a step of zero or one that runs away from its end
    NegativeSize = "negative-size", [Error];
    /// tensors on different devices meet at an op (cpu vs cuda, with torch's 0-dim cpu exemption); a cpu-or-cuda tensor meeting a cpu one fails whenever CUDA is available
    DeviceMismatch = "device-mismatch", [Error];
    /// a real tensor (module-level global, `torch.load`, built outside the mode) meets fake ones of a user's `FakeTensorMode` (an error, unless the mode allows non-fake inputs), or, in the strict view (`allow_non_fake_inputs = false`), the analysis' own fake tensors (a warning)
    RealFakeMix = "real-fake-mix", [Error, Warning];
    /// tensors of two different `FakeTensorMode` scopes meet
    FakeModeMix = "fake-mode-mix", [Error];
    /// `x.to(dev)` / `x.cuda()` as a statement: the result is thrown away
    DiscardedTo = "discarded-to", [Warning];
    /// an op with no shape rule, only when `allow_fallback_kernels = false`
    UnsupportedOp = "unsupported-op", [Warning];
    /// code tree-sitter cannot parse (the span it marks as an error, or where it assumed a missing token): the analysis skips it, so shapes after it may be incomplete; `shapels check` counts these in its summary
    SyntaxError = "syntax-error", [Information];
    /// in a function shown for any input, an op works only if two sizes the code keeps apart are equal (`scores @ v` with `v` never split into heads needs `n_heads == B`; a `Linear(dim, dim)` on `x.transpose(1, 2)` needs `T == dim`): almost always a bug; the sizes keep their own names
    ShapeAssumption = "shape-assumption", [Warning];
    /// the analysis ran out of its step budget (400,000 steps plus 4 per byte of the file) here: shapes after this point are unknown, and hover on them says why
    AnalysisBudget = "analysis-budget", [Information];
    /// a tensor contradicts the shape or dtype its annotation states (jaxtyping, torchtyping, `Annotated`, Pyrefly `Tensor[[...]]`, stubs): an argument at a call site (as beartype+jaxtyping raise), sizes one name binds across the parameters of one call (jaxtyping's memo), a returned value, an annotated assignment; a warning where nothing checks the annotations when the code runs (no `@jaxtyped`/`@beartype`/`@typechecked`, no import hook in the module or the analysed file), as the code then runs on
    ShapeAnnotation = "shape-annotation", [Error, Warning];
    /// a shape comment (`# (B, T, C)`, `# B x T x C`, `# y: [N, D]`) or docstring shape that the inference contradicts: another rank, another fixed size, or the code's own names in other places; a quick fix rewrites the comment in its own notation
    ShapeComment = "shape-comment", [Warning];
}

impl Code {
    /// The severity it is reported with unless the report says otherwise.
    pub fn severity(self) -> Severity {
        self.severities()[0]
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Tests and callers may compare a code with its name.
impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let name = code.name();
            assert!(seen.insert(name), "{name} twice");
            assert!(
                name.split('-').count() >= 2
                    && name
                        .split('-')
                        .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
                "{name} is not kebab-case"
            );
            assert!(
                !code.doc().is_empty() && !code.doc().contains('\n'),
                "{name}'s doc"
            );
        }
    }
}
