//! The layer registry: one entry per built-in `torch.nn` layer class.
//!
//! As torch registers one meta function per op, each layer the analysis
//! knows is one `LayerDef` here: its constructor signature (so an argument
//! is bound by name or position once, never by an index written at the use),
//! whether it holds submodules, how many spatial dims it works on, which
//! checks its weights take part in, the parameters its constructor makes,
//! and its forward rule. Adding a layer is one entry plus its fixture or
//! golden line; no other list names layers.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use crate::rules::meta::Meta;
use crate::value::{DType, Layer, Value};

pub(crate) use super::layer_table::LAYERS;

/// What submodules a layer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// No submodules: `children()` is empty.
    Leaf,
    /// `Sequential`, `ModuleList`, `ModuleDict` and the parameter
    /// containers: its children are what it was given.
    Container,
    /// Submodules torch builds inside (`MultiheadAttention.out_proj`, a
    /// Transformer's layers) that the analysis does not list one by one.
    Composite,
}

/// The forward rule of a layer family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Forward {
    /// Keeps the input's shape (activations, dropout, instance norm).
    SameShape,
    /// Softmax along the layer's `dim`.
    Softmax,
    Linear,
    LazyLinear,
    Bilinear,
    Conv,
    /// `MaxPool*` (true) or `AvgPool*` (false).
    Pool {
        max: bool,
    },
    /// `AdaptiveMaxPool*` (true) or `AdaptiveAvgPool*` (false).
    AdaptivePool {
        max: bool,
    },
    BatchNorm,
    LayerNorm,
    RmsNorm,
    GroupNorm,
    Embedding,
    EmbeddingBag,
    Flatten,
    Unflatten,
    Upsample,
    /// `F.pixel_shuffle` or `F.pixel_unshuffle`, by that name.
    PixelShuffle(&'static str),
    /// `F.pad` with this mode.
    Pad(&'static str),
    Rnn,
    RnnCell,
    MultiheadAttention,
    /// A Transformer encoder or decoder layer, or a stack of them.
    TransformerStack,
    Transformer,
    /// The functional loss of this name (`cross_entropy`).
    Loss(&'static str),
    /// The functional of this name, with every setting of the layer as a
    /// keyword (`CosineSimilarity` is `F.cosine_similarity(a, b, dim=…,
    /// eps=…)`).
    Functional(&'static str),
    /// einops' `rearrange` or `reduce` layer, by that function's name.
    Einops(&'static str),
    /// The children in order.
    Sequential,
    /// No forward rule: the result is unknown.
    None,
}

/// The parameters a layer's constructor makes, as torch's `__init__` and
/// `reset_parameters` do; the shapes are in `parameter_table.rs`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Parameters {
    /// None at all (activations, pools, pads, losses): `parameters()` is
    /// empty.
    None,
    /// Some the analysis does not size: a lazy layer sizes its weight at
    /// its first call, and a container holds its children's.
    Unsized,
    /// These, each a tensor built when first read (`self.fc.weight`): the
    /// one object the forward rule, the device checks and `parameters()`
    /// share.
    Built(&'static [ParamDef]),
    /// Sized by this function to count them (`parameters()`, the summary),
    /// with no tensor for `layer.<name>`. Torch names some after the
    /// settings (`weight_hh_l1_reverse`) and a stack repeats its layer's,
    /// so a function lists them rather than a table.
    Counted(CountParameters),
}

/// One parameter or buffer of a layer whose tensors the analysis builds.
#[derive(Debug)]
pub(crate) struct ParamDef {
    /// Its attribute name (`weight`, `running_mean`).
    pub name: &'static str,
    /// Whether the layer holds it, from its settings (`bias=False`);
    /// `None` when the analysis cannot read the setting that says.
    pub held: fn(&Layer) -> Option<bool>,
    /// Its sizes, as values `size_dims` reads. The interpreter turns a
    /// size named after the code (`config.n_embd`) into its symbol when a
    /// size is computed from it (a convolution's channels per group).
    pub sizes: fn(&mut dyn Meta, &Layer) -> Vec<Value>,
    /// A buffer (`running_mean`): an attribute, but not one of
    /// `parameters()`.
    pub buffer: bool,
    /// Its dtype when it is not the layer's (the int64 batch counter).
    pub dtype: Option<DType>,
}

/// The parameters of a layer in `named_parameters()` order, sized from
/// settings whose sizes named after the code are already symbols; `None`
/// when the analysis cannot list them (a stack of a layer it does not know).
pub(crate) type CountParameters = fn(&Layer) -> Option<Vec<ParamSizes>>;

/// One parameter a `CountParameters` lists.
#[derive(Debug, Clone)]
pub(crate) struct ParamSizes {
    /// Its name in `named_parameters()` (`self_attn.in_proj_bias`).
    #[allow(
        dead_code,
        reason = "a count needs only the sizes; the tests hold the names to torch's"
    )]
    pub name: String,
    /// Its sizes as values `size_dims` reads; `None` when the analysis
    /// cannot tell whether the layer holds it (a `bias=` it cannot read).
    pub sizes: Option<Vec<Value>>,
}

/// What the analysis knows of one built-in layer class.
#[derive(Debug)]
pub(crate) struct LayerDef {
    /// The class name under `torch.nn` (`Conv2d`).
    pub name: &'static str,
    /// The constructor's parameters in torch's order, as its signature
    /// writes them: `"bias=True"` has a default; after `"*"` a parameter is
    /// keyword-only. A leading `~` marks a parameter torch keeps in another
    /// form than it was given (`ZeroPad2d(1).padding` is `(1, 1, 1, 1)`), so
    /// the attribute of that name is not the argument.
    pub params: &'static [&'static str],
    pub role: Role,
    /// The spatial dims it works on (`Conv2d`: 2), 0 for none.
    pub spatial: usize,
    /// Its weight takes part in the device checks (a loss or an activation
    /// runs wherever its inputs are).
    pub checks_device: bool,
    /// It holds a `weight` the user may move or read (`self.fc.weight`).
    pub has_weight: bool,
    /// The parameters its constructor makes.
    pub parameters: Parameters,
    /// An input of unknown rank takes the batched rank this layer needs
    /// (`[N, C, H, W]` for a `Conv2d`).
    pub batched_input: bool,
    pub forward: Forward,
}

impl LayerDef {
    /// The entry of a class name, if the analysis knows the class.
    pub(crate) fn of(name: &str) -> Option<&'static LayerDef> {
        static INDEX: OnceLock<FxHashMap<&'static str, &'static LayerDef>> = OnceLock::new();
        INDEX
            .get_or_init(|| LAYERS.iter().map(|d| (d.name, d)).collect())
            .get(name)
            .copied()
    }

    /// Where a parameter may be passed positionally; `None` for a
    /// keyword-only parameter or one the signature does not have.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        for (i, p) in self.params.iter().enumerate() {
            if *p == "*" {
                return None;
            }
            if is_param(p, name) {
                return Some(i);
            }
        }
        None
    }

    /// Whether `layer.<name>` is the constructor argument of that name, as
    /// given or defaulted: torch's leaf layers keep their settings as
    /// attributes, but not `device`, `dtype`, nor what it converts.
    pub(crate) fn keeps_setting(&self, name: &str) -> bool {
        self.role == Role::Leaf
            && !matches!(name, "device" | "dtype")
            && self
                .params
                .iter()
                .any(|p| !p.starts_with('~') && is_param(p, name))
    }

    /// The names of the parameters a layer passes on to its function as
    /// settings: every one but the keyword-only marker `*` and the
    /// deprecated ones (`~size_average`), which the function would read
    /// against `reduction`.
    pub(crate) fn setting_names(&self) -> impl Iterator<Item = &'static str> {
        self.params
            .iter()
            .filter(|p| **p != "*" && !p.starts_with('~'))
            .map(|p| p.split_once('=').map_or(*p, |(name, _)| name))
    }

    /// The argument a call gave for a parameter of this signature: by
    /// keyword, else at the parameter's position. The one way layer
    /// arguments are bound, for values and for where they were written.
    pub(crate) fn argument<'a, T>(
        &self,
        name: &str,
        positional: &'a [T],
        keywords: &'a [(std::rc::Rc<str>, T)],
    ) -> Option<&'a T> {
        keywords
            .iter()
            .find(|(k, _)| &**k == name)
            .map(|(_, v)| v)
            .or_else(|| positional.get(self.position(name)?))
    }

    /// Whether the signature has this parameter.
    pub(crate) fn has_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| is_param(p, name))
    }

    /// The default the signature gives a parameter, as a value; `None`
    /// for a required parameter, one the signature does not have, or a
    /// default written as something other than a literal (`relu`).
    pub(crate) fn default(&self, name: &str) -> Option<Value> {
        let spec = self.params.iter().find(|p| is_param(p, name))?;
        let (_, text) = spec.split_once('=')?;
        literal(text)
    }
}

/// Whether a parameter as the signature writes it (`bias=True`,
/// `~padding`) is the one named `name`. Settings are looked up by name on
/// every layer call, so this compares in place rather than cutting the
/// name out first.
fn is_param(spec: &str, name: &str) -> bool {
    spec.trim_start_matches('~')
        .strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
}

/// A default's literal as a value (`1`, `0.5`, `True`, `None`, `'zeros'`).
fn literal(text: &str) -> Option<Value> {
    Some(match text {
        "None" => Value::None,
        "True" => Value::Bool(Some(true)),
        "False" => Value::Bool(Some(false)),
        _ if text.starts_with('\'') && text.ends_with('\'') && text.len() >= 2 => {
            Value::Str(text[1..text.len() - 1].into())
        }
        _ => match text.parse::<i64>() {
            Ok(n) => Value::int(n),
            Err(_) => Value::Float(Some(text.parse::<f64>().ok()?)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_defaults_read() {
        let mut names: Vec<&str> = LAYERS.iter().map(|d| d.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a layer is registered twice");
        for def in LAYERS {
            let mut seen_default = false;
            for spec in def.params {
                if *spec == "*" {
                    continue;
                }
                let spec = spec.trim_start_matches('~');
                let name = spec.split_once('=').map_or(spec, |(name, _)| name);
                assert!(
                    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{}: `{spec}` is no parameter",
                    def.name
                );
                match spec.split_once('=') {
                    Some((_, text)) => {
                        seen_default = true;
                        // Every default is a literal but a callable's name.
                        assert!(
                            literal(text).is_some() || text == "relu",
                            "{}: default `{text}` unread",
                            def.name
                        );
                    }
                    None => assert!(!seen_default, "{}: `{spec}` follows a default", def.name),
                }
            }
        }
    }

    /// torch's signatures, written by `tests/golden/layer_signatures.py`.
    const TORCH: &str = include_str!("../../../../../tests/golden/layer_signatures.txt");

    #[test]
    fn signatures_are_torchs() {
        for def in LAYERS {
            let line = TORCH
                .lines()
                .find(|l| l.split(['(', ' ']).next() == Some(def.name))
                .unwrap_or_else(|| {
                    panic!(
                        "{} is not in layer_signatures.txt: run tests/golden/layer_signatures.py",
                        def.name
                    )
                });
            // torch takes `*args, **kwargs` (LSTM) or the class is not
            // installed (einops): nothing to compare.
            let Some(inner) = line
                .strip_prefix(def.name)
                .and_then(|l| l.strip_prefix('('))
            else {
                continue;
            };
            let torch: Vec<&str> = inner
                .trim_end_matches(')')
                .split(", ")
                .filter(|p| !p.is_empty())
                .collect();
            let ours: Vec<&str> = def
                .params
                .iter()
                .map(|p| p.trim_start_matches('~'))
                .collect();
            assert_eq!(ours, torch, "{}'s signature", def.name);
        }
    }

    #[test]
    fn arguments_bind_by_position_and_name() {
        let conv = LayerDef::of("ConvTranspose2d").unwrap();
        assert_eq!(conv.position("dilation"), Some(8));
        assert_eq!(
            LayerDef::of("Conv2d").unwrap().position("dilation"),
            Some(5)
        );
        assert_eq!(LayerDef::of("RNN").unwrap().position("bias"), Some(4));
        assert_eq!(LayerDef::of("LSTM").unwrap().position("bias"), Some(3));
        assert!(matches!(
            LayerDef::of("LSTM").unwrap().default("num_layers"),
            Some(Value::Int(_))
        ));
        assert!(LayerDef::of("AdaptiveLogSoftmaxWithLoss").is_none());
        assert_eq!(LayerDef::of("Conv3d").unwrap().spatial, 3);
    }
}
