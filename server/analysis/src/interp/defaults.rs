//! Torch's default device and floating-point dtype, which factories and
//! layers use when the call names none, and the code that changes them.
//!
//! `torch.set_default_device`, `torch.set_default_dtype`,
//! `torch.set_default_tensor_type(torch.cuda.HalfTensor)` change them for
//! the rest of the run, `with torch.device("cuda"):` for its block. Functions
//! run on made-up inputs have no known history: where the file changes a
//! default anywhere, they run with that default unknown rather than with
//! torch's initial one.

use shapels_syntax::ast::{self, Stmt, StmtKind};

use super::Interp;
use super::signature::walk_stmt;
use crate::value::{DType, Device, Value};

pub(crate) use crate::rules::meta::TensorDefaults;

/// The torch functions that change the defaults.
const SETTERS: &[&str] = &[
    "set_default_device",
    "set_default_dtype",
    "set_default_tensor_type",
];

impl Interp<'_> {
    /// `torch.set_default_device(d)`, `set_default_dtype(t)`,
    /// `set_default_tensor_type(T)`: change the defaults from here on.
    pub(crate) fn set_tensor_default(&mut self, name: &str, arg: Option<&Value>) {
        match name {
            "set_default_device" => {
                self.defaults.device = match arg {
                    // `None` goes back to the cpu.
                    Some(Value::None) => Some(Device::Cpu),
                    Some(v) => crate::rules::creation::device_of(v),
                    None => None,
                }
            }
            "set_default_dtype" => {
                self.defaults.float = match arg {
                    Some(Value::DType(d)) if d.is_floating() => Some(*d),
                    _ => None,
                }
            }
            "set_default_tensor_type" => {
                let (device, float) = match arg {
                    Some(Value::Path(p)) => tensor_type(p.trim_start_matches("torch.")),
                    Some(Value::Str(s)) => tensor_type(s.trim_start_matches("torch.")),
                    _ => (None, None),
                };
                self.defaults.device = device;
                self.defaults.float = float;
            }
            _ => {}
        }
    }

    /// Before the run of functions on made-up inputs: where the file
    /// changes a default anywhere, that default is unknown there.
    pub(crate) fn forget_defaults_set_in(&mut self, body: &[Stmt]) {
        let mut found = (false, false);
        visit_calls(body, &mut |name| match name {
            "set_default_dtype" => found.1 = true,
            "set_default_device" => found.0 = true,
            _ => found = (true, true),
        });
        if found.0 {
            self.defaults.device = None;
        }
        if found.1 {
            self.defaults.float = None;
        }
    }
}

/// The device and dtype of a legacy tensor type name (`cuda.HalfTensor`).
fn tensor_type(name: &str) -> (Option<Device>, Option<DType>) {
    let (device, kind) = match name.strip_prefix("cuda.") {
        Some(kind) => (Device::Cuda(0), kind),
        None => (Device::Cpu, name),
    };
    let float = match kind {
        "FloatTensor" => DType::Float32,
        "DoubleTensor" => DType::Float64,
        "HalfTensor" => DType::Float16,
        "BFloat16Tensor" => DType::BFloat16,
        _ => return (None, None),
    };
    (Some(device), Some(float))
}

/// Calls the name of a default setter, in every statement of `body`,
/// function and class bodies included.
fn visit_calls(body: &[Stmt], f: &mut dyn FnMut(&str)) {
    for stmt in body {
        match &stmt.kind {
            StmtKind::FunctionDef(def) => visit_calls(&def.body, f),
            StmtKind::ClassDef(class) => visit_calls(&class.body, f),
            _ => walk_stmt(stmt, &mut |e| {
                if let ast::ExprKind::Call { func, .. } = &e.kind
                    && let ast::ExprKind::Attribute { attr, .. } = &func.kind
                    && SETTERS.contains(&attr.id.as_str())
                {
                    f(attr.id.as_str());
                }
            }),
        }
    }
}
