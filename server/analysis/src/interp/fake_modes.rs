//! Which fake mode governs an op, and torch's checks of its inputs against it.
//!
//! Torch dispatches an op to the fake mode that is active, or else to the
//! mode of a fake tensor among its inputs (a fake tensor that escaped its
//! `with` block still belongs to its mode). That mode then refuses real
//! tensors unless it allows non-fake inputs, and fake tensors of another
//! mode. The analysis plays a fake mode of its own on code that never enters
//! one (the main block, functions run on made-up inputs): its tensors are
//! real ones as far as the user's code is concerned, so inside a user's mode
//! they count as real, and outside one a mix is reported only in the strict
//! view (`allow_non_fake_inputs = false` in the settings).

use crate::rules::meta::Meta;
use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use super::Interp;
use crate::code::Code;
use crate::report::Severity;
use crate::value::{Provenance, Tensor};

pub(crate) use crate::rules::meta::FakeInputs;

impl Interp<'_> {
    /// Remember that `id` is a mode the user's code entered, with its flag.
    pub(crate) fn enter_user_mode(&mut self, id: u32, allow_non_fake_inputs: bool) {
        self.user_modes.insert(id, allow_non_fake_inputs);
    }

    /// Check `tensors` (an op's inputs, in order) against the fake mode that
    /// governs the op, and report what torch would raise.
    pub(crate) fn check_fake_inputs(
        &mut self,
        tensors: &[Rc<Tensor>],
        name: &str,
        range: TextRange,
    ) -> FakeInputs {
        // The user's mode that runs the op: the one entered, else the mode
        // of a user's fake tensor among the inputs.
        let governing = if self.mode.user_mode {
            Some((self.mode.id, self.mode.allow_non_fake_inputs))
        } else {
            tensors
                .iter()
                .filter(|t| t.origin == Provenance::Fake)
                .find_map(|t| self.user_modes.get(&t.mode).map(|allow| (t.mode, *allow)))
        };
        let Some((id, allow)) = governing else {
            self.check_implied_mode(tensors, name, range);
            return FakeInputs::Fine;
        };
        let user_fake = |t: &Rc<Tensor>| -> Option<u32> {
            (t.origin == Provenance::Fake && self.user_modes.contains_key(&t.mode))
                .then_some(t.mode)
        };
        if tensors
            .iter()
            .any(|t| user_fake(t).is_some_and(|m| m != id))
        {
            self.report(
                range,
                Code::FakeModeMix,
                "Mixing fake modes NYI: tensors from two different FakeTensorMode scopes meet here"
                    .into(),
            );
            return FakeInputs::Raises;
        }
        // A tensor of the analysis' own mode is a real one in the user's run.
        let real = tensors.iter().find(|t| user_fake(t).is_none()).cloned();
        let Some(real) = real.filter(|_| !allow) else {
            return FakeInputs::Fine;
        };
        let message = format!(
            "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. Found in aten.{}({})",
            aten_name(name),
            self.fake_args(tensors, |t| user_fake(t).is_some())
        );
        let related = real
            .made_at
            .map(|r| vec![(r, "the real tensor is made here".to_string())])
            .unwrap_or_default();
        self.report_as(range, Severity::Error, Code::RealFakeMix, message, related);
        FakeInputs::Raises
    }

    /// The strict view of the analysis' own mode: a real tensor meeting the
    /// tensors it made up is worth a warning only for code that is to run
    /// under a fake mode later (`allow_non_fake_inputs = false`).
    fn check_implied_mode(&mut self, tensors: &[Rc<Tensor>], name: &str, range: TextRange) {
        // A run on made-up inputs is fake only because the analysis made it
        // so: a real tensor it meets (a scheduler's `torch.from_numpy`
        // table) is no problem of the user's code even in the strict view.
        if !self.mode.fake || self.mode.allow_non_fake_inputs || self.recorder.made_up {
            return;
        }
        let Some(real) = tensors
            .iter()
            .find(|t| t.origin == Provenance::Real)
            .cloned()
        else {
            return;
        };
        let message = format!(
            "a real tensor (made outside the fake mode, e.g. at module level) meets fake ones: Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. Found in aten.{}({})",
            aten_name(name),
            self.fake_args(tensors, |t| t.origin == Provenance::Fake)
        );
        let related = real
            .made_at
            .map(|r| vec![(r, "the real tensor is made here".to_string())])
            .unwrap_or_default();
        self.report_as(
            range,
            Severity::Warning,
            Code::RealFakeMix,
            message,
            related,
        );
    }

    /// The tensor arguments as torch prints them in its message:
    /// `FakeTensor(..., size=(4,)), tensor([...], size=(4,))`.
    fn fake_args(&self, tensors: &[Rc<Tensor>], is_fake: impl Fn(&Rc<Tensor>) -> bool) -> String {
        let parts: Vec<String> = tensors
            .iter()
            .map(|t| {
                let size = match self.dims(t) {
                    Some(dims) if dims.len() == 1 => format!("({},)", self.fmt_dim_list(&dims)),
                    Some(dims) => format!("({})", self.fmt_dim_list(&dims)),
                    None => "(...)".to_string(),
                };
                if is_fake(t) {
                    format!("FakeTensor(..., size={size})")
                } else {
                    format!("tensor([...], size={size})")
                }
            })
            .collect();
        parts.join(", ")
    }

    /// Dims as a comma-separated list, without brackets.
    fn fmt_dim_list(&self, dims: &[shapels_shapes::Dim]) -> String {
        let parts: Vec<String> = dims.iter().map(|d| self.fmt_dim(d)).collect();
        parts.join(", ")
    }
}

/// The aten op torch names in its message for what the analysis calls
/// `name`: a layer by the kernel it runs first, an attribute (`x.T`) by
/// its op, never an internal name (`__attr_T`, `Linear`).
fn aten_name(name: &str) -> &str {
    use crate::rules::nn::{Forward, LayerDef};
    match LayerDef::of(name).map(|d| d.forward) {
        Some(Forward::Linear | Forward::Bilinear) => return "t.default",
        Some(Forward::Conv) => return "convolution.default",
        Some(Forward::LayerNorm) => return "native_layer_norm.default",
        Some(Forward::GroupNorm) => return "native_group_norm.default",
        Some(Forward::BatchNorm) => return "_native_batch_norm_legit_functional.default",
        Some(Forward::Embedding) => return "embedding.default",
        _ => {}
    }
    match name {
        "__attr_T" | "__attr_H" => "permute.default",
        "__attr_mT" | "__attr_mH" => "transpose.int",
        other => other.strip_prefix("__attr_").unwrap_or(other),
    }
}
