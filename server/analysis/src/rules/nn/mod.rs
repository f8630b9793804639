//! `torch.nn` layers and `torch.nn.functional`: constructors, forward rules, attributes.
//!
//! This file builds layers (`nn.Linear(...)`) and checks their constructor
//! settings. The forward rule of a layer is in `forward` and the rule of each
//! `F.*` function in `functional`; both call the rules of the layer families
//! in the other submodules, so a layer and its functional form agree.

mod attention;
mod conv;
mod forward;
mod functional;
mod functional_table;
mod input_checks;
mod layer_signatures;
mod layer_table;
mod linear;
mod loss;
mod norm;
mod parameter_table;
pub(crate) mod parameters;
mod pool;
mod recurrent;
mod registry;
mod resample;
mod spatial;

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_syntax::ast::TextRange;

use super::Args;
use crate::code::Code;
use crate::rules::meta::Meta;
use crate::value::{Layer, Provenance, Tensor, Value};

use self::spatial::spatial;

pub(crate) use forward::call_layer;
pub(crate) use functional::functional;
pub(crate) use registry::{Forward, LayerDef, Role};
pub(crate) use spatial::spatial_rank_of;

use crate::mutation::Shared;
use crate::value::Kwargs;

/// Whether a layer class holds what it was given as its submodules
/// (`Sequential`, `ModuleList`, ...).
pub(crate) fn is_container(kind: &str) -> bool {
    LayerDef::of(kind).is_some_and(|d| d.role == Role::Container)
}

/// `nn.<name>(...)`: a layer value, `nn.Parameter`, or a container.
pub(crate) fn construct(meta: &mut dyn Meta, name: &str, args: Args, range: TextRange) -> Value {
    match name {
        "Parameter" | "parameter.Parameter" | "Buffer" => {
            return match args.get(0, "data") {
                Some(Value::Tensor(t)) => Value::Tensor(Rc::new(Tensor {
                    is_param: true,
                    op: Rc::from("nn.Parameter"),
                    ..(**t).clone()
                })),
                _ => Value::Unknown,
            };
        }
        "Module" => return Value::Unknown,
        // Data-parallel wrappers run the module they wrap, where it lives.
        "DataParallel"
        | "parallel.DataParallel"
        | "parallel.DistributedDataParallel"
        | "parallel.distributed.DistributedDataParallel"
        | "DistributedDataParallel" => {
            return args.get(0, "module").cloned().unwrap_or(Value::Unknown);
        }
        _ => {}
    }
    let kind: Rc<str> = Rc::from(name.strip_prefix("einops.").unwrap_or(name));
    let mut children = Vec::new();
    let mut keys = Vec::new();
    let mut unknown = false;
    match &*kind {
        "Sequential" => {
            for v in &args.pos {
                match v {
                    // Layers made in a loop of unknown length: the one made
                    // stands for all of them.
                    Value::Many(layer, _) => {
                        children.push((**layer).clone());
                        unknown = true;
                    }
                    Value::Dict(d) => {
                        for (k, v) in d.borrow().iter() {
                            if let Value::Str(k) = k {
                                keys.push(k.clone());
                            }
                            children.push(v.clone());
                        }
                    }
                    other => children.push(other.clone()),
                }
            }
        }
        "ModuleList" | "ParameterList" => match args.get(0, "modules") {
            None | Some(Value::None) => {}
            Some(Value::Many(layer, _)) => {
                children.push((**layer).clone());
                unknown = true;
            }
            Some(v) => match v.items() {
                Some(items) => children = items,
                None => unknown = true,
            },
        },
        "ModuleDict" | "ParameterDict" => {
            if matches!(args.get(0, "modules"), Some(v) if !matches!(v, Value::Dict(_) | Value::None))
            {
                unknown = true;
            }
            if let Some(Value::Dict(d)) = args.get(0, "modules") {
                for (k, v) in d.borrow().iter() {
                    if let Value::Str(k) = k {
                        keys.push(k.clone());
                        children.push(v.clone());
                    }
                }
            }
        }
        _ => {}
    }
    check_constructor(meta, &kind, &args, range);
    // The arguments as written, when they are the ones evaluated (a
    // subclass's `super().__init__` passes its own).
    let written = meta.written_call(&range).filter(|w| {
        w.pos.len() == args.pos.len()
            && w.kw.len() == args.kw.len()
            && w.kw.iter().zip(&args.kw).all(|((a, _), (b, _))| a == b)
    });
    let device = match args.kw("device") {
        Some(v) => super::creation::device_of(v),
        None => meta.defaults().device.clone(),
    };
    // `nn.Linear(a, b, dtype=torch.bfloat16)` (often through `**factory_kwargs`
    // with `dtype=dtype`): the parameters are made in that dtype; one the
    // analysis cannot read is a dtype it does not know.
    let dtype = match args.kw("dtype") {
        None | Some(Value::None) => meta.defaults().float,
        Some(Value::DType(d)) => Some(*d),
        Some(_) => None,
    };
    Value::Layer(Rc::new(Layer {
        kind,
        args: args.pos,
        kwargs: args.kw,
        device: Shared::new(device),
        dtype: Shared::new(dtype),
        origin: if meta.mode().fake {
            Provenance::Fake
        } else {
            Provenance::Real
        },
        mode: meta.mode().id,
        children: Shared::new(children),
        keys: Shared::new(keys),
        params: Shared::new(FxHashMap::default()),
        unknown_children: Shared::new(unknown),
        training: Shared::new(Some(true)),
        written,
    }))
}

/// What torch's constructor of a layer checks of its arguments.
fn check_constructor(meta: &mut dyn Meta, kind: &str, args: &Args, range: TextRange) {
    let Some(def) = LayerDef::of(kind) else {
        return;
    };
    // `Args` binds a keyword, else the argument at the position given: a
    // keyword-only parameter has none.
    let at = |n: &str| def.position(n).unwrap_or(usize::MAX);
    let setting = |n: &str| args.get(at(n), n);
    let int = |n: &str| args.int(at(n), n);
    match def.forward {
        Forward::Einops(_) => super::einops::check_layer(meta, kind, args, range),
        Forward::MultiheadAttention => {
            if let (Some(e), Some(h)) = (int("embed_dim"), int("num_heads"))
                && h > 0
                && e % h != 0
            {
                meta.report(
                    range,
                    Code::LayerConfig,
                    "embed_dim must be divisible by num_heads".into(),
                );
            }
        }
        Forward::GroupNorm => {
            if let (Some(g), Some(c)) = (int("num_groups"), int("num_channels"))
                && g > 0
                && c % g != 0
            {
                meta.report(
                    range,
                    Code::LayerConfig,
                    format!("num_channels ({c}) must be divisible by num_groups ({g})"),
                );
            }
        }
        Forward::Conv if !kind.starts_with("ConvTranspose") => {
            let groups = int("groups").unwrap_or(1);
            if groups > 0 {
                if int("in_channels").is_some_and(|c| c % groups != 0) {
                    meta.report(
                        range,
                        Code::LayerConfig,
                        "in_channels must be divisible by groups".into(),
                    );
                }
                if int("out_channels").is_some_and(|c| c % groups != 0) {
                    meta.report(
                        range,
                        Code::LayerConfig,
                        "out_channels must be divisible by groups".into(),
                    );
                }
            }
            // Only a stride known to be other than 1: a stride the analysis
            // cannot read (`stride=self.stride`) is 1 in code that runs.
            if matches!(setting("padding"), Some(Value::Str(s)) if &**s == "same")
                && spatial(setting("stride"), 1)
                    .iter()
                    .any(|s| s.as_const().is_some_and(|v| v != 1))
            {
                meta.report(
                    range,
                    Code::LayerConfig,
                    "padding='same' is not supported for strided convolutions".into(),
                );
            }
        }
        _ => {}
    }
}
