//! The op registry: one `OpDef` per tensor op the rule table knows, saying which rule runs it and how it behaves where the rules cannot see.
//!
//! Torch registers one meta function per op (`torch/_meta_registrations.py`);
//! here an entry says what used to be spread over a dozen name lists: the
//! op's family (which rule of `ops` computes its shape), what it gives for
//! an input of unknown rank, whether its in-place form changes `self`'s
//! shape, and whether its CPU scalar operands may meet tensors of another
//! device. The entries are in `op_table.rs`; adding `torch.foo` to a
//! family is one line there plus its fixture or golden case.
//!
//! Tensor creation is listed here too: the factories under `torch`
//! (`zeros`, `arange`, `zeros_like`), which have no input tensor, and the
//! tensor methods that make a tensor or read its metadata (`new_zeros`,
//! `size`, `to`), whose rules take the tensor whole rather than its dims.
//! Their entries carry a `FactoryRule` or a `MethodRule` in place of an
//! `OpRule`, and `rules::creation` runs them.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::OpCall;
use super::op_table::OPS;
use crate::rules::check::RuleResult;
use crate::rules::creation::{FactoryCall, MethodCall};
use crate::rules::meta::Meta;
use crate::value::Value;

/// The shape function of an op on an input of known rank, as torch's meta
/// registrations have one per op.
pub(crate) type OpRule = fn(&mut dyn Meta, OpCall<'_>) -> RuleResult;

/// The rule of a factory under `torch` (`torch.zeros`, `torch.zeros_like`):
/// the tensor it makes from its arguments, or `None` when the call is not
/// one it makes (`torch.zeros_like` of no tensor), which then goes on to
/// the op dispatch as any op.
pub(crate) type FactoryRule = fn(&mut dyn Meta, &FactoryCall<'_>) -> Option<Value>;

/// The rule of a tensor method that is not a computation on the tensor's
/// elements (`x.new_zeros(2)`, `x.size()`, `x.float()`): its result.
pub(crate) type MethodRule = fn(&mut dyn Meta, &MethodCall<'_>) -> Value;

/// Which rule computes an op's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// Pointwise, keeping the input's shape and dtype (`relu`, `clamp`, `masked_fill`).
    Same,
    /// Pointwise; integer inputs give floats (`exp`, `sigmoid`).
    ToFloat,
    /// Pointwise with a bool result (`isnan`).
    ToBool,
    /// Two operands broadcast together and promote (`add`, `maximum`).
    Binary,
    /// A comparison: broadcast, with a bool result (`eq`, `logical_and`).
    Compare,
    /// True division: broadcast, and integers give floats (`div`).
    Divide,
    /// Reductions over dims given as `dim=` (`sum`, `mean`, `norm`).
    Reduction,
    /// Along one dim: keep it, shrink it, or drop it (`softmax`, `argmax`, `topk`, `sort`).
    AlongDim,
    /// New views and copies of the same elements (`view`, `permute`, `expand`, `repeat`).
    View,
    /// One tensor into several (`split`, `chunk`, `unbind`).
    Split,
    /// Several tensors into one (`cat`, `stack`).
    Join,
    /// Picks elements (`index_select`, `gather`, `where`, `nonzero`).
    Select,
    /// Linear algebra (`matmul`, `bmm`, `cdist`, `diagonal`).
    Linalg,
    /// Complex views and transforms (`view_as_real`, `stft`).
    Complex,
    /// `torch.einsum`.
    Einsum,
    /// `torch.broadcast_tensors`.
    BroadcastTensors,
    /// `torch.meshgrid`.
    Meshgrid,
    /// A chain of matrix products from a list (`linalg.multi_dot`) or the
    /// arguments (`chain_matmul`).
    MultiDot,
    /// `torch.conv2d` and the like: the same kernel, with the same
    /// arguments, as its `F.*` twin, whose rule runs it.
    Functional,
    /// Torch has it and the registry knows something about it, but no rule
    /// computes its shape (`resize_`, `as_strided`).
    Unruled,
    /// A factory under `torch` that makes a tensor from its arguments alone
    /// (`zeros`, `randn`, `arange`, `eye`, `tensor`).
    Factory,
    /// A factory that makes a tensor of its input's shape (`zeros_like`).
    FactoryLike,
    /// A tensor method that makes a tensor of `self`'s dtype and device
    /// (`new_zeros`, `new_tensor`).
    NewTensor,
    /// A tensor method that reads `self`'s metadata, or its values out to
    /// Python (`size`, `dim`, `item`).
    Metadata,
    /// A tensor method that casts or moves `self` (`float`, `to`, `cuda`).
    Convert,
    /// A tensor method that changes how torch keeps `self`, not its value:
    /// autograd and memory (`retain_grad`, `backward`, `pin_memory`).
    Bookkeeping,
}

impl Family {
    /// Elementwise over broadcast operands: a CPU scalar tensor may meet a
    /// tensor on another device (torch moves the scalar).
    fn is_pointwise(self) -> bool {
        matches!(
            self,
            Family::Same | Family::Binary | Family::Compare | Family::Divide
        )
    }

    /// Elementwise over two broadcast operands (`torch.add(2, x)` has its
    /// tensor second).
    pub(crate) fn is_binary(self) -> bool {
        matches!(self, Family::Binary | Family::Compare | Family::Divide)
    }
}

/// One tensor op.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpDef {
    /// The name the rules know it by: torch's (`index_select`), the
    /// `linalg_` form of `torch.linalg.*`, or a pseudo-name the
    /// interpreter uses for an attribute (`__attr_T`).
    pub name: &'static str,
    pub family: Family,
    /// The rule that computes its result from an input of known rank, for
    /// the families whose ops each have one (`View`, `Select`, `Linalg`,
    /// …); the pointwise families and reductions share their family's.
    pub rule: Option<OpRule>,
    /// The rule that makes its tensor when it is a factory under `torch`.
    pub factory: Option<FactoryRule>,
    /// The rule that runs, in place of the op dispatch, when it is called as
    /// a method of a tensor (`x.size()`; `x.requires_grad_(False)`, whose
    /// op is pointwise, also tells the model summary of the freeze).
    pub method: Option<MethodRule>,
    /// Its result on an input of unknown rank is a tensor of unknown rank
    /// with the input's dtype (its rule would keep it); otherwise the dtype
    /// is unknown too.
    pub unranked_keeps_dtype: bool,
    /// It keeps its input's shape whatever the rank, so `[*, 768]` stays
    /// `[*, 768]` (`softmax`, `dropout`).
    pub keeps_any_shape: bool,
    /// A negative dim argument (`sum(dim=-1)`) shows the input has at
    /// least that many dims.
    pub negative_dim_shows_rank: bool,
    /// The in-place form (`x.unsqueeze_(0)`) gives `self` a new shape,
    /// unlike other in-place ops, which keep it.
    pub reshapes_in_place: bool,
    /// A CPU scalar tensor may be one of its operands whatever device the
    /// others are on.
    pub takes_cpu_scalars: bool,
    /// Its arguments after `self` are sizes (`x.view(B, T, C)`), so one
    /// value nobody can read there leaves the result's rank unknown.
    pub sizes_follow: bool,
    /// What an argument the analysis cannot read stands for when it is
    /// called under `torch`.
    pub unread_args: UnreadArgs,
    /// What torch's argument parsing makes of a number where `input` goes
    /// (`torch.maximum(2, x)`).
    pub number_first: NumberFirst,
}

/// What torch's argument parsing makes of a Python number passed first to
/// an elementwise op, before any kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberFirst {
    /// It takes it: `torch.add(2, x)` broadcasts `x` against it.
    Taken,
    /// Its one signature wants a tensor there: a `TypeError` naming the
    /// argument (`maximum(): argument 'input' (position 1) must be Tensor,
    /// not int`).
    NotTensor,
    /// None of its signatures takes a number first: a `TypeError` listing
    /// them, as torch writes them.
    NoSignature(&'static str),
}

/// What a call's arguments that the analysis cannot read (a made-up
/// parameter, `args.size` from argparse) stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnreadArgs {
    /// Sizes (`torch.arange(0, dim)`, `x.view(B, self.n_embd)`): numbers,
    /// named after what holds them.
    Sizes,
    /// Data, never a size (`torch.tensor(data)`).
    Data,
    /// The first is the whole size when its name says it is a shape
    /// (`torch.zeros(shape)`, `torch.full(shape, 0.5)`), so not even the
    /// rank is known; the others are sizes. With `alone`, only when it is
    /// the only argument (`torch.zeros(a, b)` takes each as one size).
    ShapeFirst { alone: bool },
}

impl OpDef {
    /// An entry with the behaviour its family implies.
    pub(super) const fn new(name: &'static str, family: Family) -> OpDef {
        OpDef {
            name,
            family,
            rule: None,
            factory: None,
            method: None,
            unranked_keeps_dtype: matches!(family, Family::Same | Family::ToFloat),
            keeps_any_shape: false,
            negative_dim_shows_rank: false,
            reshapes_in_place: false,
            takes_cpu_scalars: false,
            sizes_follow: false,
            unread_args: UnreadArgs::Sizes,
            number_first: NumberFirst::Taken,
        }
    }

    /// An entry whose shape function is `rule`.
    pub(super) const fn ruled(name: &'static str, family: Family, rule: OpRule) -> OpDef {
        OpDef {
            rule: Some(rule),
            ..OpDef::new(name, family)
        }
    }

    /// A factory under `torch` whose tensor `rule` makes.
    pub(super) const fn factory(name: &'static str, family: Family, rule: FactoryRule) -> OpDef {
        OpDef {
            factory: Some(rule),
            ..OpDef::new(name, family)
        }
    }

    /// A tensor method whose result `rule` gives.
    pub(super) const fn tensor_method(
        name: &'static str,
        family: Family,
        rule: MethodRule,
    ) -> OpDef {
        OpDef::new(name, family).with_method(rule)
    }

    /// See `number_first`. An op that takes no number at all
    /// (`NotTensor`: no overload has one, first or second) reads an
    /// argument the analysis cannot read as data, a tensor, never as a
    /// size: `torch.maximum(x, floor)` with a made-up `floor`.
    pub(super) const fn number_first(self, number_first: NumberFirst) -> OpDef {
        let unread_args = match number_first {
            NumberFirst::NotTensor => UnreadArgs::Data,
            _ => self.unread_args,
        };
        OpDef {
            number_first,
            unread_args,
            ..self
        }
    }

    /// See `unread_args`.
    pub(super) const fn unread_args(self, unread_args: UnreadArgs) -> OpDef {
        OpDef {
            unread_args,
            ..self
        }
    }

    pub(super) const fn with_method(self, rule: MethodRule) -> OpDef {
        OpDef {
            method: Some(rule),
            ..self
        }
    }

    /// See `unranked_keeps_dtype`.
    pub(super) const fn unranked_keeps_dtype(self) -> OpDef {
        OpDef {
            unranked_keeps_dtype: true,
            ..self
        }
    }

    /// See `keeps_any_shape`.
    pub(super) const fn keeps_any_shape(self) -> OpDef {
        OpDef {
            keeps_any_shape: true,
            ..self
        }
    }

    /// See `negative_dim_shows_rank`.
    pub(super) const fn negative_dim_shows_rank(self) -> OpDef {
        OpDef {
            negative_dim_shows_rank: true,
            ..self
        }
    }

    /// See `reshapes_in_place`.
    pub(super) const fn reshapes_in_place(self) -> OpDef {
        OpDef {
            reshapes_in_place: true,
            ..self
        }
    }

    /// See `takes_cpu_scalars`.
    pub(super) const fn takes_cpu_scalars(self) -> OpDef {
        OpDef {
            takes_cpu_scalars: true,
            ..self
        }
    }

    /// See `sizes_follow`.
    pub(super) const fn sizes_follow(self) -> OpDef {
        OpDef {
            sizes_follow: true,
            ..self
        }
    }

    /// The entry of `name`, if the registry has one.
    pub(crate) fn of(name: &str) -> Option<&'static OpDef> {
        static INDEX: OnceLock<FxHashMap<&'static str, &'static OpDef>> = OnceLock::new();
        INDEX
            .get_or_init(|| OPS.iter().map(|d| (d.name, d)).collect())
            .get(name)
            .copied()
    }

    /// The family of `name`, if the registry has it.
    pub(crate) fn family_of(name: &str) -> Option<Family> {
        OpDef::of(name).map(|d| d.family)
    }

    /// Whether a CPU scalar tensor may meet tensors of another device in
    /// this op.
    pub(crate) fn mixes_devices(&self) -> bool {
        self.family.is_pointwise() || self.takes_cpu_scalars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_one_entry() {
        let mut seen = rustc_hash::FxHashSet::default();
        for def in OPS {
            assert!(seen.insert(def.name), "{} is listed twice", def.name);
        }
    }

    #[test]
    fn factories_say_what_unread_arguments_are() {
        let unread = |name| OpDef::of(name).map(|def| def.unread_args);
        assert_eq!(unread("tensor"), Some(UnreadArgs::Data));
        assert_eq!(unread("from_numpy"), Some(UnreadArgs::Data));
        assert_eq!(
            unread("zeros"),
            Some(UnreadArgs::ShapeFirst { alone: true })
        );
        assert_eq!(
            unread("full"),
            Some(UnreadArgs::ShapeFirst { alone: false })
        );
        assert_eq!(unread("arange"), Some(UnreadArgs::Sizes));
        assert_eq!(unread("view"), Some(UnreadArgs::Sizes));
    }

    #[test]
    fn families_give_their_behaviour() {
        let neg = OpDef::of("neg").unwrap();
        assert_eq!(neg.family, Family::Same);
        assert!(neg.unranked_keeps_dtype && neg.mixes_devices());
        let sum = OpDef::of("sum").unwrap();
        assert_eq!(sum.family, Family::Reduction);
        assert!(sum.negative_dim_shows_rank && !sum.unranked_keeps_dtype);
        assert!(OpDef::of("unsqueeze").unwrap().reshapes_in_place);
        assert!(!OpDef::of("add").unwrap().reshapes_in_place);
        assert!(OpDef::of("where").unwrap().mixes_devices());
        assert!(!OpDef::of("matmul").unwrap().mixes_devices());
        assert_eq!(OpDef::family_of("no_such_op"), None);
    }

    /// A factory under `torch`: its entries carry a `FactoryRule`.
    fn is_factory(family: Family) -> bool {
        matches!(family, Family::Factory | Family::FactoryLike)
    }

    /// A tensor method that is not a computation: its entries carry a
    /// `MethodRule`.
    fn is_tensor_method(family: Family) -> bool {
        matches!(
            family,
            Family::NewTensor | Family::Metadata | Family::Convert | Family::Bookkeeping
        )
    }

    /// The names of tensor creation, by the family each belongs to.
    const CREATION: &[(Family, &[&str])] = &[
        (
            Family::Factory,
            &[
                "zeros",
                "ones",
                "empty",
                "rand",
                "randn",
                "full",
                "randint",
                "normal",
                "randperm",
                "triu_indices",
                "tril_indices",
                "hann_window",
                "hamming_window",
                "blackman_window",
                "bartlett_window",
                "kaiser_window",
                "arange",
                "linspace",
                "logspace",
                "eye",
                "tensor",
                "as_tensor",
                "load",
                "from_numpy",
                "FloatTensor",
                "DoubleTensor",
                "HalfTensor",
                "BFloat16Tensor",
                "LongTensor",
                "IntTensor",
                "ShortTensor",
                "CharTensor",
                "ByteTensor",
                "BoolTensor",
            ],
        ),
        (
            Family::FactoryLike,
            &[
                "empty_like",
                "zeros_like",
                "ones_like",
                "full_like",
                "rand_like",
                "randn_like",
                "randint_like",
            ],
        ),
        (
            Family::NewTensor,
            &[
                "new_zeros",
                "new_ones",
                "new_empty",
                "new_full",
                "new_tensor",
            ],
        ),
    ];

    #[test]
    fn each_creation_name_has_one_entry_of_its_family() {
        for (family, names) in CREATION {
            for name in *names {
                let entries: Vec<&OpDef> = OPS.iter().filter(|d| d.name == *name).collect();
                assert_eq!(entries.len(), 1, "{name} has {} entries", entries.len());
                assert_eq!(entries[0].family, *family, "{name}");
                // The lookup the dispatch makes finds that entry.
                assert!(std::ptr::eq(OpDef::of(name).unwrap(), entries[0]));
            }
        }
        let tensor_op_named_like_a_factory = OPS
            .iter()
            .filter(|d| is_factory(d.family))
            .find(|d| !CREATION.iter().any(|(_, names)| names.contains(&d.name)));
        assert!(tensor_op_named_like_a_factory.is_none());
    }

    #[test]
    fn creation_entries_carry_the_rule_of_their_family() {
        for def in OPS {
            let family = def.family;
            assert_eq!(def.factory.is_some(), is_factory(family), "{}", def.name);
            if is_factory(family) || is_tensor_method(family) {
                assert!(def.rule.is_none(), "{}", def.name);
            }
            if is_tensor_method(family) {
                assert!(def.method.is_some(), "{}", def.name);
            }
        }
        // `requires_grad_` is a pointwise op that, as a method, also freezes.
        let requires_grad = OpDef::of("requires_grad_").unwrap();
        assert_eq!(requires_grad.family, Family::Same);
        assert!(requires_grad.method.is_some());
    }

    /// A creation entry says nothing to the op dispatch: a name it reaches
    /// (`torch.numel(x)`, `torch.zeros_like()` of no tensor) behaves as one
    /// the registry does not list.
    #[test]
    fn creation_entries_are_unknown_ops_to_the_dispatch() {
        for def in OPS {
            if is_factory(def.family) || is_tensor_method(def.family) {
                assert!(
                    !def.unranked_keeps_dtype
                        && !def.keeps_any_shape
                        && !def.negative_dim_shows_rank
                        && !def.reshapes_in_place
                        && !def.sizes_follow
                        && !def.mixes_devices()
                        && !def.family.is_binary(),
                    "{}",
                    def.name
                );
            }
        }
    }
}
