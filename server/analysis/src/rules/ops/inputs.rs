//! The checks every op makes on its tensor inputs: fake-mode rules and devices.

use shapels_syntax::ast::TextRange;

use super::registry::OpDef;
use crate::code::Code;
use crate::rules::Args;
use crate::rules::meta::FakeInputs;
use crate::rules::meta::Meta;
use crate::value::Device;

/// Check the fake mode's input rules and the devices of an op's tensors.
/// Returns the output device (`Some(None)` when unknown), `None` when the
/// op raises.
pub(crate) fn check_inputs(
    meta: &mut dyn Meta,
    args: &Args,
    name: &str,
    range: TextRange,
) -> Option<Option<Device>> {
    let tensors = args.tensors();
    if let FakeInputs::Raises = meta.check_fake_inputs(&tensors, name, range) {
        return None;
    }
    // `dst.copy_(src)` copies across devices (that is what it is for):
    // the result is `dst`, where it lives.
    if name == "copy_" {
        return Some(tensors.first().and_then(|t| t.device.clone()));
    }
    let pointwise = OpDef::of(name).is_some_and(OpDef::mixes_devices);
    let mut common: Option<Device> = None;
    let mut common_at = 0;
    let mut common_is_scalar = false;
    let mut unknown = false;
    for (at, t) in tensors.iter().enumerate() {
        let Some(dev) = &t.device else {
            unknown = true;
            continue;
        };
        let is_scalar_cpu = *dev == Device::Cpu && meta.rank(t) == Some(0);
        match &common {
            None => {
                common = Some(dev.clone());
                common_at = at;
                common_is_scalar = is_scalar_cpu;
            }
            Some(c) if c == dev => {}
            Some(c) => {
                if is_scalar_cpu && pointwise {
                    continue;
                }
                if common_is_scalar && pointwise {
                    common = Some(dev.clone());
                    common_at = at;
                    common_is_scalar = false;
                    continue;
                }
                let (a, b) = (c.clone(), dev.clone());
                let either = a == Device::CudaOrCpu || b == Device::CudaOrCpu;
                // Cpu-or-cuda meeting `cuda:0`: both are on `cuda:0` where
                // CUDA is there, and without it the `cuda:0` tensor could not
                // have been made. The ops run on `cuda:0`.
                if either && (a == Device::Cuda(0) || b == Device::Cuda(0)) {
                    common = Some(Device::Cuda(0));
                    common_at = if a == Device::Cuda(0) { common_at } else { at };
                    common_is_scalar = false;
                    continue;
                }
                if either && (a == Device::Cpu || b == Device::Cpu) {
                    // One side is cpu-or-cuda, the other cpu: it fails
                    // exactly when CUDA is there.
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
                    let related = operand_devices(args, [(common_at, &a), (at, &b)]);
                    offer_move(meta, args, [(common_at, &a), (at, &b)]);
                    meta.report_related(range, Code::DeviceMismatch, message, related);
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
                let related = operand_devices(args, [(common_at, &a), (at, &b)]);
                offer_move(meta, args, [(common_at, &a), (at, &b)]);
                meta.report_related(range, Code::DeviceMismatch, message, related);
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

/// Moving the cpu operand (else the second) of a binary operator to the
/// other's device, offered as the fix.
fn offer_move(meta: &mut dyn Meta, args: &Args, operands: [(usize, &Device); 2]) {
    if args.ranges.len() != args.pos.len() {
        return;
    }
    let [first, second] = operands;
    let (moved, to) = if *first.1 == Device::Cpu {
        (first.0, second.0)
    } else {
        (second.0, first.0)
    };
    if let (Some(moved), Some(to)) = (args.ranges.get(moved), args.ranges.get(to)) {
        let (moved, to) = (*moved, *to);
        crate::rules::fixes::offer_device_fix(meta, &moved, &to);
    }
}

/// Which operand is on which device, where the caller knows the operands'
/// places (a binary operator's two tensors).
fn operand_devices(args: &Args, operands: [(usize, &Device); 2]) -> Vec<(TextRange, String)> {
    let aligned = args.ranges.len() == args.pos.len()
        && args
            .pos
            .iter()
            .all(|v| matches!(v, crate::value::Value::Tensor(_)));
    if !aligned {
        return Vec::new();
    }
    operands
        .into_iter()
        .filter_map(|(at, device)| {
            let range = *args.ranges.get(at)?;
            Some((range, format!("this operand is on {}", device.name())))
        })
        .collect()
}
