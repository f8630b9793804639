//! The checks every op makes on its tensor inputs: fake-mode rules and devices.

use shapels_syntax::ast::TextRange;

use super::pointwise::{BINARY, BINARY_BOOL, SAME};
use crate::code::Code;
use crate::interp::Interp;
use crate::report::Severity;
use crate::rules::Args;
use crate::value::{Device, Provenance};

/// Check the fake mode's input rules and the devices of an op's tensors.
/// Returns the output device (`Some(None)` when unknown), `None` when the
/// op raises.
pub(crate) fn check_inputs(
    interp: &mut Interp<'_>,
    args: &Args,
    name: &str,
    range: TextRange,
) -> Option<Option<Device>> {
    let tensors = args.tensors();
    // A run on made-up inputs is fake only because the analysis made it so:
    // a real tensor it meets (a scheduler's `torch.from_numpy` table) is no
    // problem of the user's code, unless the code enters a fake mode itself.
    let implied = interp.recorder.made_up && !interp.mode.user_mode;
    if interp.mode.fake && !interp.mode.allow_non_fake_inputs && !implied {
        if let Some(real) = tensors.iter().find(|t| t.origin == Provenance::Real) {
            let shape = interp
                .dims(real)
                .map(|d| interp.fmt_dims(&d))
                .unwrap_or_else(|| "[?]".into());
            let message = format!(
                "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. Found in aten.{name}(tensor([...], size={shape}))"
            );
            let (severity, message) = if interp.mode.user_mode {
                (Severity::Error, message)
            } else {
                (
                    Severity::Warning,
                    format!(
                        "a real tensor (made outside the fake mode, e.g. at module level) meets fake ones: {message}"
                    ),
                )
            };
            let related = real
                .made_at
                .clone()
                .map(|r| vec![(r, "the real tensor is made here".to_string())])
                .unwrap_or_default();
            interp.report_as(range.clone(), severity, Code::RealFakeMix, message, related);
        }
        let modes: Vec<u32> = tensors
            .iter()
            .filter(|t| t.origin == Provenance::Fake)
            .map(|t| t.mode)
            .collect();
        if let (Some(first), true) = (modes.first(), interp.mode.user_mode)
            && modes.iter().any(|m| m != first)
        {
            interp.report(
                range.clone(),
                Code::FakeModeMix,
                "Mixing fake modes NYI: tensors from two different FakeTensorMode scopes meet here"
                    .into(),
            );
        }
    }
    // `dst.copy_(src)` copies across devices (that is what it is for):
    // the result is `dst`, where it lives.
    if name == "copy_" {
        return Some(tensors.first().and_then(|t| t.device.clone()));
    }
    let pointwise = SAME.contains(name)
        || BINARY.contains(name)
        || BINARY_BOOL.contains(name)
        || matches!(name, "div" | "where" | "true_divide");
    let mut common: Option<Device> = None;
    let mut common_is_scalar = false;
    let mut unknown = false;
    for t in &tensors {
        let Some(dev) = &t.device else {
            unknown = true;
            continue;
        };
        let is_scalar_cpu = *dev == Device::Cpu && interp.rank(t) == Some(0);
        match &common {
            None => {
                common = Some(dev.clone());
                common_is_scalar = is_scalar_cpu;
            }
            Some(c) if c == dev => {}
            Some(c) => {
                if is_scalar_cpu && pointwise {
                    continue;
                }
                if common_is_scalar && pointwise {
                    common = Some(dev.clone());
                    common_is_scalar = false;
                    continue;
                }
                let (a, b) = (c.clone(), dev.clone());
                let either = a == Device::CudaOrCpu || b == Device::CudaOrCpu;
                if either
                    && (a == Device::Cpu
                        || b == Device::Cpu
                        || a == Device::Cuda(0)
                        || b == Device::Cuda(0))
                {
                    // One side is cpu-or-cuda: it fails exactly when CUDA is there.
                    let message = format!(
                        "Expected all tensors to be on the same device, but found at least two devices, {} and {}! (when CUDA is available)",
                        if a == Device::CudaOrCpu {
                            "cuda:0".into()
                        } else {
                            a.name()
                        },
                        if b == Device::CudaOrCpu {
                            "cuda:0".into()
                        } else {
                            b.name()
                        }
                    );
                    interp.report(range.clone(), Code::DeviceMismatch, message);
                    return None;
                }
                if either {
                    unknown = true;
                    continue;
                }
                let message = format!(
                    "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
                    a.name(),
                    b.name()
                );
                interp.report(range.clone(), Code::DeviceMismatch, message);
                return None;
            }
        }
    }
    Some(if unknown && common.is_none() {
        None
    } else {
        common
    })
}
