//! The parameters of built-in layers: their shapes, `parameters()`, and moving them with `to`.

use std::rc::Rc;

use crate::rules::meta::Meta;
use shapels_shapes::Dim;

use crate::value::{Layer, Shape, Tensor, Value};

use super::is_container;
use super::registry::{ParamDef, Parameters};

/// A parameter or buffer of a layer (`weight`, `running_mean`), as a
/// tensor on the layer's device; unknown unless the layer's registry
/// entry builds it.
pub(crate) fn layer_param(meta: &mut dyn Meta, layer: &Rc<Layer>, name: &str) -> Value {
    if let Some(v) = layer.params.borrow().get(name) {
        return v.clone();
    }
    let Some(Parameters::Built(defs)) = layer.def().map(|d| d.parameters) else {
        return Value::Unknown;
    };
    let Some(def) = defs.iter().find(|d| d.name == name) else {
        return Value::Unknown;
    };
    // A layer built without it holds `None` there (`Linear(4, 5,
    // bias=False).bias`), which `if self.bias is not None:` reads.
    let held = (def.held)(layer);
    if held == Some(false) {
        return Value::None;
    }
    let sizes = (def.sizes)(meta, layer);
    let dims = meta.size_dims(&sizes);
    let t = Tensor {
        shape: Shape::known(dims),
        dtype: def.dtype.or(*layer.dtype.borrow()),
        device: layer.device.borrow().clone(),
        origin: layer.origin,
        mode: layer.mode,
        op: Rc::from(format!("nn.{}.{name}", layer.kind)),
        made_at: None,
        is_param: true,
        layout: None,
        trail: None,
    };
    let v = match held {
        // A setting the analysis cannot read: a tensor or `None`.
        None => Value::Optional(Box::new(Value::Tensor(Rc::new(t)))),
        Some(_) => Value::Tensor(Rc::new(t)),
    };
    // A parameter is built on its first use, the same whenever that is: a
    // cache of what any read would make, not a change a memo must hear of.
    layer
        .params
        .write_unobserved()
        .insert(Rc::from(name), v.clone());
    v
}

/// The first parameter torch's `parameters()` yields: the module's own
/// parameters first, then its children's, in the order they were assigned.
pub(crate) fn first_parameter(meta: &mut dyn Meta, module: &Value, depth: usize) -> Option<Value> {
    if depth > 16 {
        return None;
    }
    match module {
        Value::Instance(inst) => {
            let order = inst.order.borrow().clone();
            let attrs: Vec<Value> = order
                .iter()
                .filter_map(|k| inst.attrs.borrow().get(k).cloned())
                .collect();
            if let Some(p) = attrs
                .iter()
                .find(|v| matches!(v, Value::Tensor(t) if t.is_param))
            {
                return Some(p.clone());
            }
            attrs
                .iter()
                .filter(|v| matches!(v, Value::Layer(_) | Value::Instance(_)))
                .find_map(|v| first_parameter(meta, v, depth + 1))
        }
        Value::Layer(layer) if is_container(&layer.kind) => {
            let children = layer.children.borrow().clone();
            children
                .iter()
                .find_map(|c| first_parameter(meta, c, depth + 1))
        }
        Value::Layer(layer) => match layer_param(meta, layer, "weight") {
            Value::Tensor(t) => Some(Value::Tensor(t)),
            _ => None,
        },
        _ => None,
    }
}

/// One parameter of a built-in layer, in `named_parameters()` order.
pub(crate) struct LayerParameter {
    /// Its sizes; `None` when the analysis cannot say whether the layer
    /// has it (a `bias=` flag it cannot read).
    pub dims: Option<Vec<Dim>>,
    /// The tensor `layer.weight` gives, for layers that have one: the same
    /// object wherever the parameter is shared or frozen.
    pub tensor: Option<Rc<Tensor>>,
}

/// The parameters a built-in layer (not a container) holds, in torch's
/// order, with the shapes its constructor gives them; `None` for a layer
/// whose parameters the rule table does not know.
pub(crate) fn layer_parameters(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
) -> Option<Vec<LayerParameter>> {
    let parameters = match layer.def() {
        Some(def) => def.parameters,
        // A loss holds no parameters (a class `weight=` is an argument),
        // known to the registry or not.
        None if layer.kind.ends_with("Loss") => Parameters::None,
        None => Parameters::Unsized,
    };
    match parameters {
        Parameters::None => Some(Vec::new()),
        Parameters::Built(defs) => Some(built_parameters(meta, layer, defs)),
        Parameters::Unsized => {
            with_named_sizes(meta, layer);
            None
        }
        Parameters::Counted(count) => {
            // The names say which parameter each is; the count needs only
            // the sizes.
            let list = count(&with_named_sizes(meta, layer))?;
            Some(
                list.into_iter()
                    .map(|p| LayerParameter {
                        dims: p.sizes.map(|d| meta.size_dims(&d)),
                        tensor: None,
                    })
                    .collect(),
            )
        }
    }
}

/// The parameters of a layer whose tensors the analysis builds: each the
/// tensor `layer.<name>` reads, the object code shares and ties.
fn built_parameters(
    meta: &mut dyn Meta,
    layer: &Rc<Layer>,
    defs: &[ParamDef],
) -> Vec<LayerParameter> {
    let mut out = Vec::new();
    for def in defs.iter().filter(|d| !d.buffer) {
        match (def.held)(layer) {
            Some(false) => {}
            None => out.push(LayerParameter {
                dims: None,
                tensor: None,
            }),
            Some(true) => {
                let tensor = match layer_param(meta, layer, def.name) {
                    Value::Tensor(t) => Some(t),
                    _ => None,
                };
                out.push(LayerParameter {
                    dims: tensor
                        .as_ref()
                        .and_then(|t| meta.resolve_shape(&t.shape).dims().map(<[Dim]>::to_vec)),
                    tensor,
                });
            }
        }
    }
    out
}

/// The layer with the sizes named after the code (`config.n_embd`) as
/// symbols. A layer whose parameters are unsized makes its symbols too,
/// as a counted one does: which symbols the summary has made, and in
/// which order, shows in how it writes a total.
fn with_named_sizes(meta: &mut dyn Meta, layer: &Layer) -> Layer {
    let mut named = |v: &Value| match v {
        Value::Opaque(name) => Value::Int(meta.opaque_symbol(name)),
        other => other.clone(),
    };
    Layer {
        args: layer.args.iter().map(&mut named).collect(),
        kwargs: layer
            .kwargs
            .iter()
            .map(|(k, v)| (k.clone(), named(v)))
            .collect(),
        ..layer.clone()
    }
}
