//! The module tree as torch walks it: a module's children and its
//! submodules (`children()`, `modules()` and their named forms), as far as
//! the analysis knows them.

use rustc_hash::FxHashSet;
use std::rc::Rc;

use crate::rules::nn::Role;
use crate::value::Value;

/// A module's direct submodules by name, in the order torch keeps them;
/// `None` when the analysis does not know them all.
pub(crate) fn child_modules(module: &Value) -> Option<Vec<(Rc<str>, Value)>> {
    let children = known_children(module)?;
    children.complete.then(|| {
        children
            .entries
            .into_iter()
            .map(|(name, child)| (name.unwrap_or_else(|| Rc::from("?")), child))
            .collect()
    })
}

/// Submodules as far as the analysis knows them: each entry is a module
/// that is there, by name where its place is known; `complete` when
/// there are no others.
pub(crate) struct KnownModules {
    pub entries: Vec<(Option<Rc<str>>, Value)>,
    pub complete: bool,
}

/// A module's direct submodules as far as they are known; `None` for a
/// value that is not a module.
pub(super) fn known_children(module: &Value) -> Option<KnownModules> {
    match module {
        Value::Instance(inst) => {
            let order = inst.order.borrow();
            let attrs = inst.attrs.borrow();
            let mut complete = true;
            let mut entries = Vec::new();
            for k in order.iter().filter(|k| !k.starts_with("__")) {
                match attrs.get(k) {
                    Some(v @ (Value::Layer(_) | Value::Instance(_))) => {
                        entries.push((Some(k.clone()), v.clone()));
                    }
                    // A module on every path, but which one depends on the
                    // path (`Conv3d` or `Identity` as a shortcut).
                    Some(Value::Either(_)) => complete = false,
                    _ => {}
                }
            }
            Some(KnownModules { entries, complete })
        }
        Value::Layer(l) if crate::rules::nn::is_container(&l.kind) => {
            // Built in a loop of unknown length, the children stand for
            // the modules each turn made: their places are not known.
            let unknown = l.unknown_children.get();
            let keys = l.keys.borrow();
            let entries = l
                .children
                .borrow()
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let key = (!unknown).then(|| {
                        keys.get(i)
                            .cloned()
                            .unwrap_or_else(|| Rc::from(i.to_string()))
                    });
                    (key, c.clone())
                })
                .collect();
            Some(KnownModules {
                entries,
                complete: !unknown,
            })
        }
        Value::Layer(l) if l.def().is_some_and(|d| d.role == Role::Leaf) => Some(KnownModules {
            entries: Vec::new(),
            complete: true,
        }),
        _ => None,
    }
}

/// `named_modules()`: the module itself (named `""`), then each submodule
/// by its dotted path, each object once, appended to `out`; `named` false
/// leaves the paths empty (`modules()` has no use for them). A path
/// through a container of unknown length is `None`. Returns whether the
/// walk found every module.
pub(super) fn all_modules(
    module: &Value,
    prefix: Option<&str>,
    named: bool,
    depth: usize,
    seen: &mut FxHashSet<usize>,
    out: &mut Vec<(Option<Rc<str>>, Value)>,
) -> bool {
    let address = match module {
        Value::Instance(i) => Rc::as_ptr(i) as usize,
        Value::Layer(l) => Rc::as_ptr(l) as usize,
        _ => return false,
    };
    if depth > 16 || seen.len() > 512 {
        return false;
    }
    if !seen.insert(address) {
        return true;
    }
    let path = match (named, prefix) {
        (false, _) => Some(Rc::from("")),
        (true, p) => p.map(Rc::from),
    };
    out.push((path, module.clone()));
    let Some(children) = known_children(module) else {
        return false;
    };
    let mut complete = children.complete;
    for (name, child) in children.entries {
        let path = match (prefix, name) {
            (Some(""), Some(name)) => Some(name.to_string()),
            (Some(prefix), Some(name)) => Some(format!("{prefix}.{name}")),
            _ => None,
        };
        complete &= all_modules(&child, path.as_deref(), named, depth + 1, seen, out);
    }
    complete
}
