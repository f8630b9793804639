//! Running the interpreter for a summary and reading the table off its log.

use crate::rules::meta::Meta;
use rustc_hash::{FxHashMap, FxHashSet};
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::log::{SummaryLog, module_address};
use super::{Count, DTypeBytes, ModelSummary, SummaryRow, SummaryTarget};
use crate::interp::Interp;
use crate::report::Config;
use crate::rules::nn::parameters::layer_parameters;
use crate::value::{DType, Layer, Shape, Value};
use crate::workspace::ModuleGraph;

use super::names::{powers, unsuffix};
use super::tree::{Child, children, describe};

/// Rows shown at most: a deeper or wider tree is cut, with a note.
const MAX_ROWS: usize = 400;
/// Nesting followed at most (modules can hold themselves).
const MAX_DEPTH: usize = 24;

pub(super) fn summarize(
    source: &str,
    module: &shapels_syntax::ast::Module,
    config: &Config,
    modules: &ModuleGraph,
    target: &SummaryTarget,
    input: Option<&[i64]>,
) -> Option<ModelSummary> {
    let mut interp = Interp::new(source, config, modules);
    interp.recorder.expressions = false;
    interp.summary = Some(Box::default());
    interp.run_module(module);
    let (root, range) = find_target(&mut interp, target)?;
    let mut call = best_call(&interp, &root, &range);
    let mut input_from_code = call.is_some_and(|i| !interp_log(&interp).calls[i].range.is_empty());
    if let Some(sizes) = input {
        let dtype = interp.defaults.float.or(Some(DType::Float32));
        let device = interp.defaults.device.clone();
        let dims = sizes.iter().map(|n| Dim::konst(*n)).collect();
        let tensor = interp.new_tensor(Shape::known(dims), dtype, device, "input");
        let index = interp_log(&interp).calls.len();
        interp.call_value(
            &root,
            vec![Value::Tensor(Rc::new(tensor))],
            Vec::new(),
            TextRange::new(0, 0),
        );
        call = (interp_log(&interp).calls.len() > index).then_some(index);
        input_from_code = true;
    } else if call.is_none() {
        call = run_made_up(&mut interp, &root);
    }
    let mut summary = Table::new(&mut interp, call).build(&root, range);
    summary.input_from_code = input_from_code && summary.input.is_some();
    unsuffix(&mut summary);
    interp.release_modules();
    Some(summary)
}

fn interp_log<'a>(interp: &'a Interp<'_>) -> &'a SummaryLog {
    interp
        .summary
        .as_deref()
        .expect("a summary run keeps a log")
}

/// The module `target` names, with the range to report.
fn find_target(interp: &mut Interp<'_>, target: &SummaryTarget) -> Option<(Value, TextRange)> {
    match target {
        SummaryTarget::At(offset) => {
            let offset = *offset;
            let log = interp_log(interp);
            let seen = log
                .seen
                .iter()
                .filter(|(r, _)| r.start <= offset && offset <= r.end)
                .min_by_key(|(r, _)| r.end - r.start)
                .cloned();
            if let Some((range, value)) = seen {
                return Some((value, range));
            }
            let class = interp
                .classes
                .iter()
                .find(|c| {
                    c.def.as_ref().is_some_and(|d| {
                        d.name.range.start <= offset
                            && offset <= d.name.range.end
                            && crate::workspace::is_local(&d.range)
                    })
                })
                .cloned()?;
            let range = class.def.as_ref().map(|d| d.name.range)?;
            Some((instance_of(interp, &class)?, range))
        }
        SummaryTarget::Class(name) => {
            let class = interp
                .classes
                .iter()
                .rev()
                .find(|c| &*c.name == name.as_str())
                .cloned()?;
            let range = class
                .def
                .as_ref()
                .map_or(TextRange::default(), |d| d.name.range);
            Some((instance_of(interp, &class)?, range))
        }
        SummaryTarget::Model => {
            // The model the file's own top level calls last, if any: a
            // module of the user's, else a container (a loss is no model).
            let log = interp_log(interp);
            let top: Vec<&Value> = log
                .calls
                .iter()
                .rev()
                .filter(|c| c.parent.is_none() && !c.range.is_empty())
                .filter(|c| crate::workspace::is_local(&c.range))
                .filter_map(|c| {
                    log.seen
                        .iter()
                        .find(|(_, v)| module_address(v) == Some(c.module))
                        .map(|(_, v)| v)
                })
                .collect();
            let model = top
                .iter()
                .find(|v| matches!(v, Value::Instance(_)))
                .or_else(|| {
                    top.iter().find(
                        |v| matches!(v, Value::Layer(l) if crate::rules::nn::is_container(&l.kind)),
                    )
                })
                .map(|v| (*v).clone());
            if let Some(value) = model {
                let range = log
                    .seen
                    .iter()
                    .find(|(_, v)| module_address(v) == module_address(&value))
                    .map_or(TextRange::default(), |(r, _)| *r);
                return Some((value, range));
            }
            let class = interp
                .classes
                .iter()
                .rev()
                .find(|c| {
                    c.def
                        .as_ref()
                        .is_some_and(|d| crate::workspace::is_local(&d.range))
                        && crate::interp::call::lookup_method(c, "forward").is_some()
                })
                .cloned()?;
            let range = class
                .def
                .as_ref()
                .map_or(TextRange::default(), |d| d.name.range);
            Some((instance_of(interp, &class)?, range))
        }
    }
}

/// The instance of `class` a summary shows: the last one the code called
/// with an input it wrote, else one that any run called, else the one
/// library mode made up, else a new one.
fn instance_of(interp: &mut Interp<'_>, class: &Rc<crate::value::Class>) -> Option<Value> {
    let built = interp
        .instances
        .get(&(Rc::as_ptr(class) as usize))
        .cloned()
        .unwrap_or_default();
    let log = interp_log(interp);
    // The one the code calls last, as the last call of a script is the
    // model it is about (`r18(x)` then `r50(x)`; `teacher(x)` then
    // `student(x)`): from the top level first, then from any code.
    let last_called = |keep: &dyn Fn(&super::log::ModuleCall) -> bool| {
        log.calls.iter().rev().filter(|c| keep(c)).find_map(|c| {
            built
                .iter()
                .find(|v| module_address(v) == Some(c.module))
                .cloned()
        })
    };
    let chosen = last_called(&|c| c.parent.is_none() && !c.range.is_empty())
        .or_else(|| last_called(&|c| !c.range.is_empty()))
        .or_else(|| last_called(&|_| true))
        .or_else(|| built.first().cloned());
    if let Some(v) = chosen {
        return Some(v);
    }
    // Library mode ran forward on an instance made up for the class.
    if let Some(call) = log
        .calls
        .iter()
        .find(|c| matches!(&c.value, Value::Instance(i) if Rc::ptr_eq(&i.class, class)))
    {
        return Some(call.value.clone());
    }
    match interp.generic_instance(class) {
        v @ Value::Instance(_) => Some(v),
        _ => None,
    }
}

/// The call of `module` the summary shows: the one at `range` (a hover on
/// `model(x)`), else the first from a call the code wrote, else the first.
fn best_call(interp: &Interp<'_>, module: &Value, range: &TextRange) -> Option<usize> {
    let address = module_address(module)?;
    let calls = &interp_log(interp).calls;
    let of = |i: &usize| calls[*i].module == address;
    let all: Vec<usize> = (0..calls.len()).filter(of).collect();
    all.iter()
        .copied()
        .filter(|i| {
            let r = &calls[*i].range;
            r.start <= range.start && range.end <= r.end
        })
        .min_by_key(|i| calls[*i].range.len())
        .or_else(|| all.iter().copied().find(|i| !calls[*i].range.is_empty()))
        .or_else(|| all.first().copied())
}

/// Run `module`'s forward on inputs made up from its signature, as library
/// mode does; the call's index.
fn run_made_up(interp: &mut Interp<'_>, module: &Value) -> Option<usize> {
    let Value::Instance(inst) = module else {
        return None;
    };
    let forward = crate::interp::call::lookup_method(&inst.class, "forward")?;
    let (args, kwargs) = interp.generic_args(&forward, true);
    let index = interp_log(interp).calls.len();
    interp.call_value(module, args, kwargs, TextRange::new(0, 0));
    (interp_log(interp).calls.len() > index).then_some(index)
}

/// A parameter, once: by its tensor, or by its layer and place there.
type ParamKey = (usize, usize);

/// A parameter as the totals count it.
#[derive(Clone)]
struct Param {
    key: ParamKey,
    /// Its element count; `None` when unknown.
    numel: Option<Dim>,
    frozen: bool,
    dtype: DType,
}

/// The parameters of a subtree, and whether they are all known.
#[derive(Default, Clone)]
struct Params {
    list: Vec<Param>,
    /// Some module of the subtree has parameters the analysis cannot count.
    unknown: bool,
}

impl Params {
    fn extend(&mut self, other: &Params) {
        self.unknown |= other.unknown;
        for p in &other.list {
            if !self.list.iter().any(|q| q.key == p.key) {
                self.list.push(p.clone());
            }
        }
    }
}

struct Table<'i, 's> {
    interp: &'i mut Interp<'s>,
    /// The first call of each module inside the summarised forward, and how many.
    outputs: FxHashMap<usize, (Value, usize)>,
    /// The summarised call's input.
    input: Option<Value>,
    /// Every call of a built-in layer inside the summarised forward: its output.
    layer_outputs: Vec<(usize, Value)>,
    /// Each module's parameter count (`None`: unknown), by address.
    module_params: FxHashMap<usize, Option<Dim>>,
    rows: Vec<SummaryRow>,
    notes: Vec<String>,
    frozen_modules: FxHashSet<usize>,
    frozen_tensors: FxHashSet<usize>,
    called_opaque: FxHashSet<Rc<str>>,
    unattributed_freeze: bool,
    reparametrized: FxHashSet<usize>,
    float: DType,
}

impl<'i, 's> Table<'i, 's> {
    fn new(interp: &'i mut Interp<'s>, call: Option<usize>) -> Table<'i, 's> {
        let log = interp_log(interp);
        let mut outputs: FxHashMap<usize, (Value, usize)> = FxHashMap::default();
        let mut layer_outputs = Vec::new();
        let mut input = None;
        if let Some(root) = call {
            input = Some(log.calls[root].input.clone());
            // Calls are noted in the order they began: those inside the
            // root call follow it, each with a parent already seen inside.
            let mut inside: FxHashSet<usize> = FxHashSet::default();
            inside.insert(root);
            for (i, c) in log.calls.iter().enumerate().skip(root) {
                if i != root && !c.parent.is_some_and(|p| inside.contains(&p)) {
                    continue;
                }
                inside.insert(i);
                let entry = outputs
                    .entry(c.module)
                    .or_insert_with(|| (c.output.clone(), 0));
                entry.1 += 1;
            }
            // Only built-in leaf layers count: see `ACTIVATION_DEFINITION`.
            layer_outputs = log
                .calls
                .iter()
                .enumerate()
                .filter(|(i, c)| c.leaf && inside.contains(i))
                .map(|(_, c)| (c.module, c.output.clone()))
                .collect();
        }
        let frozen_modules = log.frozen_modules.clone();
        let frozen_tensors = log.frozen_tensors.clone();
        let called_opaque = log.called_opaque.clone();
        let unattributed_freeze = log.unattributed_freeze;
        let reparametrized = log.reparametrized.clone();
        let float = interp.defaults.float.unwrap_or(DType::Float32);
        Table {
            interp,
            outputs,
            input,
            layer_outputs,
            module_params: FxHashMap::default(),
            rows: Vec::new(),
            notes: Vec::new(),
            frozen_modules,
            frozen_tensors,
            called_opaque,
            unattributed_freeze,
            reparametrized,
            float,
        }
    }

    fn build(mut self, root: &Value, range: TextRange) -> ModelSummary {
        let mut path = Vec::new();
        let params = self.walk(root, None, 0, false, &mut path);
        let model = match root {
            Value::Instance(i) => i.class.name.to_string(),
            Value::Layer(l) => l.kind.to_string(),
            _ => "?".to_string(),
        };
        let total = self.count(&params, |_| true);
        // A freeze the analysis cannot tie to parameters, or a frozen
        // parameter it did not count: which ones train is unknown.
        let counted: FxHashSet<usize> = params.list.iter().map(|p| p.key.0).collect();
        let split_unknown =
            self.unattributed_freeze || self.frozen_tensors.iter().any(|t| !counted.contains(t));
        let (trainable, frozen) = if split_unknown {
            self.notes.push(
                "trainable and frozen counts unknown: the code sets `requires_grad` on parameters the analysis cannot tell apart".to_string(),
            );
            (self.show(None, true), self.show(None, true))
        } else {
            (
                self.count(&params, |p| !p.frozen),
                self.count(&params, |p| p.frozen),
            )
        };
        let mut dtypes: Vec<DType> = params.list.iter().map(|p| p.dtype).collect();
        dtypes.sort();
        dtypes.dedup();
        let param_bytes = dtypes
            .into_iter()
            .map(|dtype| {
                let numel = self.sum(&params, |p| p.dtype == dtype);
                let bytes = numel.map(|n| n.mul(&Dim::konst(dtype.itemsize())));
                DTypeBytes {
                    dtype: dtype.name().to_string(),
                    bytes: self.show(bytes.as_ref(), params.unknown),
                }
            })
            .collect();
        let activation = self.activation_bytes();
        let pass_bytes = self.torchinfo_pass_bytes();
        let input = self.input.clone().and_then(|v| self.output_label(&v));
        if params.unknown {
            self.notes.push(
                "`?`: a layer whose parameters the analysis cannot count (not in its rule table, or built from settings it cannot read)".to_string(),
            );
        }
        ModelSummary {
            model,
            range,
            input,
            input_from_code: false,
            rows: self.rows,
            total_params: total,
            trainable_params: trainable,
            frozen_params: frozen,
            param_bytes,
            activation_bytes: activation,
            torchinfo_pass_bytes: pass_bytes,
            notes: self.notes,
        }
    }

    /// Add the rows of `module` and its children; its parameters.
    fn walk(
        &mut self,
        module: &Value,
        name: Option<String>,
        depth: usize,
        frozen: bool,
        path: &mut Vec<usize>,
    ) -> Params {
        let mut params = Params::default();
        let Some(address) = module_address(module) else {
            params.unknown = true;
            return params;
        };
        if depth > MAX_DEPTH || path.contains(&address) || self.rows.len() >= MAX_ROWS {
            if self.rows.len() >= MAX_ROWS && !self.notes.iter().any(|n| n.starts_with("only")) {
                self.notes
                    .push(format!("only the first {MAX_ROWS} modules are listed"));
            }
            params.unknown = depth > MAX_DEPTH;
            return params;
        }
        path.push(address);
        let frozen = frozen || self.frozen_modules.contains(&address);
        let row = self.rows.len();
        let (output, calls) = match self.outputs.get(&address).cloned() {
            Some((v, n)) => (
                Some(self.output_label(&v).unwrap_or_else(|| "?".to_string())),
                n,
            ),
            None => (None, 0),
        };
        self.rows.push(SummaryRow {
            depth,
            name,
            layer: describe(self.interp, module),
            output,
            calls,
            params: Count {
                text: "?".to_string(),
                value: None,
            },
            frozen: false,
        });
        match children(module, &self.called_opaque) {
            Some(children) => {
                for (child_name, child) in children {
                    match child {
                        Child::Module(child) => {
                            let p = self.walk(&child, Some(child_name), depth + 1, frozen, path);
                            params.extend(&p);
                        }
                        Child::Param(t) => {
                            let dims = self.interp.resolve_shape(&t.shape);
                            let key = (Rc::as_ptr(&t) as *const u8 as usize, 0);
                            params.extend(&Params {
                                list: vec![Param {
                                    key,
                                    numel: dims.dims().map(numel),
                                    frozen: frozen || self.frozen_tensors.contains(&key.0),
                                    dtype: t.dtype.unwrap_or(self.float),
                                }],
                                unknown: false,
                            });
                        }
                        Child::Unknown => {
                            params.unknown = true;
                            self.rows.push(SummaryRow {
                                depth: depth + 1,
                                name: Some(child_name),
                                layer: "? (not followed by the analysis)".to_string(),
                                output: None,
                                calls: 0,
                                params: Count {
                                    text: "?".to_string(),
                                    value: None,
                                },
                                frozen: false,
                            });
                        }
                    }
                }
            }
            None => params.unknown = true,
        }
        // A built-in layer, or a subclass of one (`class
        // LayerNorm2d(nn.LayerNorm)`), whose layer part holds its parameters.
        let layer = match module {
            Value::Layer(layer) => Some(layer.clone()),
            Value::Instance(inst) => match inst.attrs.borrow().get("__torch_layer__") {
                Some(Value::Layer(layer)) => Some(layer.clone()),
                _ => None,
            },
            _ => None,
        };
        if let Some(layer) = layer
            && !crate::rules::nn::is_container(&layer.kind)
        {
            let own = Rc::as_ptr(&layer) as *const u8 as usize;
            params.extend(&self.layer_params(&layer, own, frozen));
        }
        path.pop();
        self.rows[row].params = self.count(&params, |_| true);
        let own = if params.unknown {
            None
        } else {
            self.sum(&params, |_| true)
        };
        self.module_params.insert(address, own);
        self.rows[row].frozen = !params.list.is_empty() && params.list.iter().all(|p| p.frozen);
        params
    }

    fn layer_params(&mut self, layer: &Rc<Layer>, address: usize, frozen: bool) -> Params {
        let mut params = Params::default();
        // `weight_norm(layer)` and other parametrizations change which
        // parameters a layer holds.
        if self.reparametrized.contains(&address) {
            params.unknown = true;
            return params;
        }
        let Some(list) = layer_parameters(self.interp, layer) else {
            params.unknown = true;
            return params;
        };
        let dtype = layer.dtype.borrow().unwrap_or(self.float);
        for (i, p) in list.into_iter().enumerate() {
            let key = match &p.tensor {
                Some(t) => (Rc::as_ptr(t) as *const u8 as usize, 0),
                None => (address, i + 1),
            };
            match p.dims {
                Some(dims) => params.list.push(Param {
                    key,
                    numel: Some(numel(&dims)),
                    frozen: frozen || self.frozen_tensors.contains(&key.0),
                    dtype: p.tensor.as_ref().and_then(|t| t.dtype).unwrap_or(dtype),
                }),
                None => params.unknown = true,
            }
        }
        params
    }

    /// The sum of the element counts of the parameters `keep` selects.
    fn sum(&self, params: &Params, keep: impl Fn(&Param) -> bool) -> Option<Dim> {
        let mut total = Dim::konst(0);
        for p in params.list.iter().filter(|p| keep(p)) {
            total = total.add(p.numel.as_ref()?);
        }
        Some(total)
    }

    fn count(&self, params: &Params, keep: impl Fn(&Param) -> bool) -> Count {
        let sum = self.sum(params, keep);
        self.show(sum.as_ref(), params.unknown)
    }

    /// A count as shown: `?` when any part of it is unknown.
    fn show(&self, dim: Option<&Dim>, unknown: bool) -> Count {
        match dim {
            Some(d) if !unknown => {
                let text = powers(&self.interp.env.display_count(d));
                Count {
                    value: self.interp.env.value(d),
                    text,
                }
            }
            _ => Count {
                text: "?".to_string(),
                value: None,
            },
        }
    }

    fn activation_bytes(&self) -> Count {
        if self.input.is_none() {
            return self.show(None, true);
        }
        let mut total = Dim::konst(0);
        for (_, v) in &self.layer_outputs {
            match self.bytes_of(v) {
                Some(b) => total = total.add(&b),
                None => return self.show(None, true),
            }
        }
        self.show(Some(&total), false)
    }

    /// What torchinfo calls the forward/backward pass size: twice the
    /// output bytes of the calls of built-in layers that have parameters.
    fn torchinfo_pass_bytes(&self) -> Count {
        if self.input.is_none() {
            return self.show(None, true);
        }
        let mut total = Dim::konst(0);
        for (module, v) in &self.layer_outputs {
            let Some(Some(params)) = self.module_params.get(module) else {
                return self.show(None, true);
            };
            match self.interp.env.value(params) {
                Some(0) => continue,
                Some(_) => {}
                None => return self.show(None, true),
            }
            match self.bytes_of(v) {
                Some(b) => total = total.add(&b.mul(&Dim::konst(2))),
                None => return self.show(None, true),
            }
        }
        self.show(Some(&total), false)
    }

    fn bytes_of(&self, v: &Value) -> Option<Dim> {
        match v {
            Value::Tensor(t) => {
                let shape = self.interp.resolve_shape(&t.shape);
                let n = numel(shape.dims()?);
                Some(n.mul(&Dim::konst(t.dtype.unwrap_or(self.float).itemsize())))
            }
            Value::Tuple(items) => {
                let mut total = Dim::konst(0);
                for item in items.iter() {
                    total = total.add(&self.bytes_of(item)?);
                }
                Some(total)
            }
            Value::None => Some(Dim::konst(0)),
            _ => None,
        }
    }

    /// A module's output as text: `[16, 64]`, `([B, T, C], [B, T])`.
    fn output_label(&self, v: &Value) -> Option<String> {
        match v {
            Value::Tensor(t) => Some(match self.interp.resolve_shape(&t.shape) {
                Shape::Known(dims) => {
                    let parts: Vec<String> =
                        dims.iter().map(|d| self.interp.env.display(d)).collect();
                    format!("[{}]", parts.join(", "))
                }
                Shape::Tail(_, dims) => {
                    let parts: Vec<String> =
                        dims.iter().map(|d| self.interp.env.display(d)).collect();
                    format!("[..., {}]", parts.join(", "))
                }
                Shape::Var(_) => "[...]".to_string(),
            }),
            Value::Tuple(_) | Value::List(_) => {
                let items = v.items().unwrap_or_default();
                let parts: Vec<String> = items
                    .iter()
                    .take(4)
                    .map(|i| self.output_label(i).unwrap_or_else(|| "?".to_string()))
                    .collect();
                Some(format!("({})", parts.join(", ")))
            }
            Value::None => Some("None".to_string()),
            _ => None,
        }
    }
}

/// The product of sizes.
fn numel(dims: &[Dim]) -> Dim {
    dims.iter().fold(Dim::konst(1), |acc, d| acc.mul(d))
}
