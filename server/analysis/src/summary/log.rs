//! What the interpreter notes for a model summary while it runs: every call
//! of a module with its output, the module-valued expressions of the file,
//! and what the code froze. Kept only when a summary is asked for.

use rustc_hash::{FxHashMap, FxHashSet};

use shapels_syntax::ast::TextRange;

use crate::interp::Interp;
use crate::value::Value;

/// One call of a module (a user `nn.Module` or a built-in layer).
#[derive(Debug, Clone)]
pub(crate) struct ModuleCall {
    /// The module's address (see `module_address`).
    pub module: usize,
    /// The module itself (which keeps the address its own).
    pub value: Value,
    /// Where it was called; `0..0` for a run on made-up inputs.
    pub range: TextRange,
    /// The module call this one ran inside, by index.
    pub parent: Option<usize>,
    /// The first positional argument.
    pub input: Value,
    /// What the call gave; `Unknown` until it returned.
    pub output: Value,
    /// The module is a built-in layer that is no container.
    pub leaf: bool,
}

/// The interpreter's notes for a summary.
#[derive(Debug, Default)]
pub(crate) struct SummaryLog {
    pub calls: Vec<ModuleCall>,
    /// The calls under way, innermost last.
    pub open: Vec<usize>,
    /// Module-valued expressions of the analysed file, with their value.
    pub seen: Vec<(TextRange, Value)>,
    /// Modules frozen by `requires_grad_(False)`, by address.
    pub frozen_modules: FxHashSet<usize>,
    /// Tensors frozen by `requires_grad_(False)` or `.requires_grad = False`,
    /// by address.
    pub frozen_tensors: FxHashSet<usize>,
    /// The tensor `module.parameters()` stands for, by its address, and
    /// the module: freezing it freezes the module's parameters.
    pub parameters_of: FxHashMap<usize, usize>,
    /// Arguments of made-up calls that the code called, by name: modules
    /// the analysis cannot see into.
    pub called_opaque: FxHashSet<std::rc::Rc<str>>,
    /// The code set `requires_grad = False` on something the analysis
    /// cannot tie to a parameter (an item of `named_parameters()`): which
    /// parameters are frozen is then unknown.
    pub unattributed_freeze: bool,
    /// Layers given to `weight_norm`, `spectral_norm` or a parametrization,
    /// by address: their parameters are not the layer rules' any more.
    pub reparametrized: FxHashSet<usize>,
}

/// The address of a module value, which names it in the log.
pub(crate) fn module_address(module: &Value) -> Option<usize> {
    match module {
        Value::Instance(i) => Some(std::rc::Rc::as_ptr(i) as *const u8 as usize),
        Value::Layer(l) => Some(std::rc::Rc::as_ptr(l) as *const u8 as usize),
        _ => None,
    }
}

/// Calls noted at most: a model's forward with every layer, a few times.
const MAX_CALLS: usize = 20_000;

impl Interp<'_> {
    /// Note the start of a call of `module` at `range`; the index to close it with.
    pub(crate) fn summary_enter(
        &mut self,
        module: &Value,
        args: &[Value],
        range: &TextRange,
    ) -> Option<usize> {
        let log = self.summary.as_mut()?;
        let address = module_address(module)?;
        if log.calls.len() >= MAX_CALLS {
            return None;
        }
        let index = log.calls.len();
        log.calls.push(ModuleCall {
            module: address,
            value: module.clone(),
            range: *range,
            parent: log.open.last().copied(),
            input: args.first().cloned().unwrap_or(Value::Unknown),
            output: Value::Unknown,
            leaf: matches!(module, Value::Layer(l) if !crate::rules::nn::is_container(&l.kind)),
        });
        log.open.push(index);
        Some(index)
    }

    /// Note what the call `index` gave.
    pub(crate) fn summary_leave(&mut self, index: Option<usize>, output: &Value) {
        let (Some(index), Some(log)) = (index, self.summary.as_mut()) else {
            return;
        };
        if let Some(at) = log.open.iter().rposition(|i| *i == index) {
            log.open.truncate(at);
        }
        if let Some(call) = log.calls.get_mut(index) {
            call.output = output.clone();
        }
    }

    /// Note a module-valued expression of the analysed file.
    pub(crate) fn summary_seen(&mut self, range: &TextRange, value: &Value) {
        if let Some(log) = self.summary.as_mut()
            && matches!(value, Value::Instance(_) | Value::Layer(_))
            && crate::workspace::is_local(range)
            && log.seen.len() < MAX_CALLS
        {
            log.seen.push((*range, value.clone()));
        }
    }

    /// `module.requires_grad_(False)`.
    pub(crate) fn summary_freeze_module(&mut self, module: &Value) {
        if let (Some(log), Some(address)) = (self.summary.as_mut(), module_address(module)) {
            log.frozen_modules.insert(address);
        }
    }

    /// `p.requires_grad = False` or `p.requires_grad_(False)`.
    pub(crate) fn summary_freeze_tensor(&mut self, tensor: &Value) {
        let Some(log) = self.summary.as_mut() else {
            return;
        };
        let Value::Tensor(t) = tensor else {
            if matches!(tensor, Value::Unknown | Value::Opaque(_)) {
                log.unattributed_freeze = true;
            }
            return;
        };
        let address = std::rc::Rc::as_ptr(t) as *const u8 as usize;
        match log.parameters_of.get(&address) {
            Some(module) => {
                let module = *module;
                log.frozen_modules.insert(module);
            }
            None => {
                log.frozen_tensors.insert(address);
            }
        }
    }

    /// `module.parameters()` made `tensor` to stand for them all.
    pub(crate) fn summary_parameters_of(&mut self, module: &Value, tensor: &Value) {
        if let (Some(log), Some(address), Value::Tensor(t)) =
            (self.summary.as_mut(), module_address(module), tensor)
        {
            log.parameters_of
                .insert(std::rc::Rc::as_ptr(t) as *const u8 as usize, address);
        }
    }
}
