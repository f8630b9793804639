//! The module tree as torch registers it: a module's children and own
//! parameters, and what `print(model)` says of each.

use rustc_hash::FxHashSet;
use std::rc::Rc;

use crate::interp::Interp;
use crate::value::Value;

/// A registered child of a module.
pub(super) enum Child {
    Module(Value),
    Param(Rc<crate::value::Tensor>),
    /// Something the analysis cannot tell is a module or not (one of
    /// several values, or one the code may set to None).
    Unknown,
}

/// A module's registered children and own parameters, in the order torch
/// registers them; `None` when the analysis cannot list them.
pub(super) fn children(
    module: &Value,
    called_opaque: &FxHashSet<Rc<str>>,
) -> Option<Vec<(String, Child)>> {
    match module {
        Value::Instance(inst) => {
            let order = inst.order.borrow().clone();
            let attrs = inst.attrs.borrow();
            let mut out = Vec::new();
            for k in &order {
                let Some(v) = attrs.get(k) else { continue };
                if &**k == "__torch_layer__" {
                    // A subclass of a container: its children are the container's.
                    if let Value::Layer(_) = v {
                        out.extend(children(v, called_opaque)?);
                    }
                    continue;
                }
                if k.starts_with("__") {
                    continue;
                }
                match v {
                    Value::Layer(_) | Value::Instance(_) => {
                        out.push((k.to_string(), Child::Module(v.clone())))
                    }
                    Value::Tensor(t) if t.is_param && &*t.op != "nn.Buffer" => {
                        out.push((k.to_string(), Child::Param(t.clone())))
                    }
                    Value::Either(alts)
                        if alts
                            .iter()
                            .any(|a| matches!(a, Value::Layer(_) | Value::Instance(_))) =>
                    {
                        out.push((k.to_string(), Child::Unknown))
                    }
                    Value::Optional(inner)
                        if matches!(**inner, Value::Layer(_) | Value::Instance(_)) =>
                    {
                        out.push((k.to_string(), Child::Unknown))
                    }
                    // Something the analysis cannot follow (a model from
                    // another package) may be a module with parameters:
                    // the count cannot say. So may an argument of a
                    // made-up call that the code calls (`self.backbone(x)`);
                    // one it does not call is a setting (`self.n_head`).
                    Value::Unknown => out.push((k.to_string(), Child::Unknown)),
                    Value::Opaque(name) if called_opaque.contains(name) => {
                        out.push((k.to_string(), Child::Unknown))
                    }
                    _ => {}
                }
            }
            Some(out)
        }
        Value::Layer(l) if crate::rules::nn::is_container(&l.kind) => Some(
            crate::interp::modules::child_modules(module)?
                .into_iter()
                .map(|(key, c)| {
                    let child = match &c {
                        Value::Layer(_) | Value::Instance(_) => Child::Module(c.clone()),
                        Value::Tensor(t) if t.is_param => Child::Param(t.clone()),
                        _ => Child::Unknown,
                    };
                    (key.to_string(), child)
                })
                .collect(),
        ),
        Value::Layer(_) => Some(Vec::new()),
        _ => None,
    }
}

/// What `print(model)` says of a module, its children apart:
/// `Linear(768, 3072, bias=False)` for a layer, the class name for a user module.
pub(super) fn describe(interp: &Interp<'_>, module: &Value) -> String {
    match module {
        Value::Instance(i) => i.class.name.to_string(),
        Value::Layer(l) if crate::rules::nn::is_container(&l.kind) => l.kind.to_string(),
        Value::Layer(l) => {
            let mut parts: Vec<String> = l.args.iter().map(|v| argument(interp, v)).collect();
            parts.extend(
                l.kwargs
                    .iter()
                    .map(|(k, v)| format!("{k}={}", argument(interp, v))),
            );
            format!("{}({})", l.kind, parts.join(", "))
        }
        _ => "?".to_string(),
    }
}

/// A constructor argument as text.
fn argument(interp: &Interp<'_>, v: &Value) -> String {
    match v {
        Value::Int(d) => interp.env.display(d),
        Value::Bool(Some(b)) => if *b { "True" } else { "False" }.to_string(),
        Value::Float(Some(f)) => format!("{f}"),
        Value::Str(s) => format!("'{s}'"),
        Value::None => "None".to_string(),
        Value::Opaque(name) => name.to_string(),
        Value::Tuple(items) => {
            let parts: Vec<String> = items.iter().map(|i| argument(interp, i)).collect();
            if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        }
        Value::Layer(l) => l.kind.to_string(),
        Value::Instance(i) => i.class.name.to_string(),
        _ => "…".to_string(),
    }
}
