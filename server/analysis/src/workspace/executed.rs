//! Imported modules' top levels, run once and shared: the namespace an
//! analysis got from running a module's top level is kept (by the module's
//! version and the versions of everything it imports, `closure key`) and
//! given to later analyses that import the same module, on the same
//! thread, instead of running it again. A file of a large library imports
//! hundreds of its modules; a keystroke in the editor imports the same ones
//! again.
//!
//! Only a namespace that means the same in any analysis is kept: one whose
//! values hold no symbolic size, no tensor of unknown rank, no fake tensor,
//! and only modules and classes of modules that are kept themselves; whose
//! run reported nothing and hit no limit that depends on the importer. No
//! analysis changes a kept namespace for the next: a write to a kept
//! module's attribute is kept for the run only, and what a run writes into
//! the objects a kept namespace reaches is put back when it ends
//! (`snapshot`).

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::snapshot::{Reached, Snapshots};
use super::{ModuleGraph, Target};
use crate::mutation::Shared;
use crate::value::{ModuleNs, Provenance, Shape, Value};

/// Kept namespaces and what they reach as it was kept.
pub(crate) type Executed = Rc<RefCell<Kept>>;

#[derive(Default)]
pub(crate) struct Kept {
    /// By module version and closure key.
    namespaces: FxHashMap<(u32, u64), (Rc<ModuleNs>, ImportCost, Imported)>,
    snapshots: Snapshots,
}

/// What running a module's top level cost an analysis: the module and
/// every module its run imported first, each with the steps of its own
/// top level. An analysis given the kept namespace is charged these steps
/// (those of modules it has not paid for yet), so that the import budget
/// runs out where it would have had the module run again: which analysis
/// on a thread ran a module first does not change what later ones show.
pub(crate) type ImportCost = Rc<[(u32, u64)]>;

/// The kept namespaces of the modules a kept module's run imported first.
/// An analysis given the module imports them too, as Python's
/// `sys.modules` holds them after the import: what the kept namespace
/// holds of them is theirs, and this analysis has them.
pub(crate) type Imported = Rc<[(u32, Rc<ModuleNs>)]>;

impl std::fmt::Debug for Kept {
    // Namespaces point back at themselves through their functions.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kept({} namespaces)", self.namespaces.len())
    }
}

impl Kept {
    pub(crate) fn get(&self, key: &(u32, u64)) -> Option<(Rc<ModuleNs>, ImportCost, Imported)> {
        self.namespaces.get(key).cloned()
    }

    /// How many namespaces are kept.
    pub(crate) fn len(&self) -> usize {
        self.namespaces.len()
    }

    /// How many objects were saved as they were kept.
    #[cfg(test)]
    pub(crate) fn saved_objects(&self) -> usize {
        self.snapshots.len()
    }
}

/// Puts back what the last analysis wrote into kept objects (see
/// `snapshot`).
pub(super) fn put_back(executed: &Executed) {
    executed.borrow().snapshots.put_back();
}

/// More kept namespaces than this and the cache starts over.
const CAPACITY: usize = 4096;

/// A hash of what module `id` imports, and of all that those import in
/// turn: equal for one module in two graphs when running its top level
/// sees the same files in both.
pub(super) fn closure_key(graph: &ModuleGraph, id: u32) -> u64 {
    let mut seen: FxHashSet<u32> = FxHashSet::default();
    let mut stack = vec![id];
    let mut own: Vec<(u32, u64)> = Vec::new();
    while let Some(m) = stack.pop() {
        if !seen.insert(m) {
            continue;
        }
        let known = graph.own_keys.borrow().get(&m).cloned();
        let OwnKey { key, imports } = match known {
            Some(known) => known,
            None => {
                let found = own_key(graph, m);
                graph.own_keys.borrow_mut().insert(m, found.clone());
                found
            }
        };
        stack.extend(imports.iter().copied());
        own.push((m, key));
    }
    own.sort_unstable();
    let mut hasher = super::cache::text_hasher();
    own.hash(&mut hasher);
    hasher.finish()
}

/// What one module contributes to the closure keys of the modules that
/// import it: a hash of its own imports and what each names, and the
/// modules they name.
#[derive(Debug, Clone)]
pub(super) struct OwnKey {
    key: u64,
    /// Kept with the hash: a closure walks every module it reaches, and
    /// finding a module's targets again means hashing each import's name.
    imports: Rc<[u32]>,
}

/// A hash of what module `m` imports and what each import names, with the
/// modules named.
fn own_key(graph: &ModuleGraph, m: u32) -> OwnKey {
    let mut edges: Vec<(&super::TargetKey, &Target)> = graph.targets_of(m).collect();
    edges.sort_by(|a, b| a.0.cmp(b.0));
    let mut hasher = super::cache::text_hasher();
    let mut imports = Vec::new();
    for ((_, level, name), target) in &edges {
        level.hash(&mut hasher);
        name.hash(&mut hasher);
        match target {
            Target::Module(next) => {
                (0u8, next).hash(&mut hasher);
                imports.push(*next);
            }
            Target::Namespace(dirs) => (1u8, dirs).hash(&mut hasher),
            Target::Unreadable(why) => (2u8, why).hash(&mut hasher),
        }
    }
    OwnKey {
        key: hasher.finish(),
        imports: imports.into(),
    }
}

/// Forgets every kept namespace, breaking the cycles between them (a
/// module's globals hold the modules it imports, which may import it).
pub(super) fn clear(executed: &Executed) {
    for (ns, ..) in executed.borrow().namespaces.values() {
        ns.globals.borrow_mut().clear();
    }
    let mut kept = executed.borrow_mut();
    kept.namespaces.clear();
    kept.snapshots.clear();
}

/// Keeps `ns`, with the objects it reaches as they are now, and the kept
/// objects its top level wrote (at the addresses `written`) as they are now.
pub(super) fn keep(
    executed: &Executed,
    key: (u32, u64),
    ns: Rc<ModuleNs>,
    cost: ImportCost,
    imported: Imported,
    reached: Vec<Reached>,
    written: &[usize],
) {
    if executed.borrow().len() >= CAPACITY {
        clear(executed);
    }
    let mut kept = executed.borrow_mut();
    kept.namespaces.insert(key, (ns, cost, imported));
    kept.snapshots.refresh(written);
    kept.snapshots.take(reached);
}

/// Most values a namespace is walked through when making it shareable.
const MAX_WALK: usize = 200_000;

/// Makes `ns` mean the same in any analysis, so that it can be kept: every
/// value only this analysis can read (a symbolic size, a tensor of unknown
/// rank, a fake tensor, a module not kept) is replaced by `Unknown`, in
/// place. Such values are rare at a module's top level (a version number
/// read from the environment) and say nothing about the shapes of the code
/// that imports it. An error when the namespace is too large to walk, or
/// holds what `unkept_here` says this analysis could not keep for a reason
/// of its own.
///
/// `shared_file` says whether the module of a file is kept already (by
/// this analysis, or by an earlier one whose kept namespace brought its
/// class here without this analysis importing it). A
/// class of a module that is neither kept nor `ns` itself (a name imported
/// from a module whose run met a cut) belongs to this analysis: its
/// methods read that module's globals. The name is made `Unknown` in `ns`;
/// the class itself is left as it is, for the module that defined it
/// (changed in place, its methods became `Unknown` for the rest of this
/// analysis and every later one on the thread). Not keeping such
/// namespaces at all was tried: transformers' `models/` took twice as long,
/// as most of its modules import a class from one that is not kept.
pub(crate) fn make_shareable(
    ns: &ModuleNs,
    shared_file: &dyn Fn(u32) -> bool,
    unkept_here: &dyn Fn(u32) -> bool,
) -> Result<Shareable, NotShareable> {
    let mut walk = Walk {
        seen: FxHashSet::default(),
        steps: 0,
        shared_file,
        unkept_here,
        spoiled: false,
        reached: Vec::new(),
    };
    let names: Vec<Rc<str>> = ns.globals.borrow().keys().cloned().collect();
    for name in names {
        let value = ns.globals.borrow().get(&name).cloned();
        let replacement = value.and_then(|value| walk.sanitized(&value, ns));
        // A namespace not kept keeps, for this analysis, what spoiled it.
        if walk.spoiled {
            return Err(NotShareable::HoldsWhatThisAnalysisCut);
        }
        if let Some(replacement) = replacement {
            ns.globals.borrow_mut().insert(name, replacement);
        }
        if walk.steps > MAX_WALK {
            return Err(NotShareable::TooLarge);
        }
    }
    Ok(Shareable(walk.reached))
}

/// Why a namespace cannot be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotShareable {
    /// Too large to walk.
    TooLarge,
    /// It holds a class, function or module of a module this analysis
    /// could not keep for a reason of its own (see `Interp::import_target`).
    HoldsWhatThisAnalysisCut,
}

/// A namespace made shareable: the objects with mutable parts it reaches.
pub(crate) struct Shareable(pub(super) Vec<Reached>);

struct Walk<'a> {
    seen: FxHashSet<usize>,
    steps: usize,
    shared_file: &'a dyn Fn(u32) -> bool,
    /// Whether a file's module was not kept for a reason of the analysis
    /// that ran it (see `Interp::import_target`).
    unkept_here: &'a dyn Fn(u32) -> bool,
    /// A value of such a module was met: the namespace is not kept.
    spoiled: bool,
    /// The objects with mutable parts met, kept as they are (`snapshot`).
    reached: Vec<Reached>,
}

impl Walk<'_> {
    /// False when the object was seen before (it is being or was made
    /// shareable), true the first time.
    fn first<T>(&mut self, object: &Rc<T>) -> bool {
        self.seen.insert(Rc::as_ptr(object) as *const u8 as usize)
    }

    /// What `v` must be replaced by to be shareable (`None`: it is, or its
    /// parts were made so in place).
    fn sanitized(&mut self, v: &Value, home: &ModuleNs) -> Option<Value> {
        self.steps += 1;
        if self.steps > MAX_WALK {
            return Some(Value::Unknown);
        }
        let unknown = Some(Value::Unknown);
        match v {
            Value::Unknown
            | Value::None
            | Value::Bool(_)
            | Value::Float(_)
            | Value::Complex
            | Value::Str(_)
            | Value::Text
            | Value::Device(_)
            | Value::DType(_)
            | Value::Path(_)
            | Value::Opaque(_)
            | Value::Ellipsis => None,
            Value::Int(d) => (!d.is_const()).then_some(Value::Unknown),
            Value::Range(a, b, c) => {
                (!(a.is_const() && b.is_const() && c.is_const())).then_some(Value::Unknown)
            }
            Value::Tensor(t) => {
                let portable = t.origin == Provenance::Real
                    && matches!(&t.shape, Shape::Known(d) if d.iter().all(|x| x.is_const()));
                (!portable).then_some(Value::Unknown)
            }
            Value::Tuple(items) | Value::OpenTuple(items) => {
                let parts: Vec<Option<Value>> =
                    items.iter().map(|i| self.sanitized(i, home)).collect();
                parts.iter().any(Option::is_some).then(|| {
                    let items: Vec<Value> = parts
                        .into_iter()
                        .zip(items.iter())
                        .map(|(new, old)| new.unwrap_or_else(|| old.clone()))
                        .collect();
                    if matches!(v, Value::OpenTuple(_)) {
                        Value::OpenTuple(Rc::new(items))
                    } else {
                        Value::tuple(items)
                    }
                })
            }
            Value::List(items) => {
                if self.first(items) {
                    self.reached.push(Reached::List(items.clone()));
                    let old = items.borrow().clone();
                    for (i, item) in old.iter().enumerate() {
                        if let Some(new) = self.sanitized(item, home) {
                            items.write_unobserved()[i] = new;
                        }
                    }
                }
                None
            }
            Value::Dict(entries) => {
                if self.first(entries) {
                    self.reached.push(Reached::Dict(entries.clone()));
                    let old = entries.borrow().clone();
                    for (i, (k, val)) in old.iter().enumerate() {
                        let key = self.sanitized(k, home);
                        let value = self.sanitized(val, home);
                        let mut entries = entries.write_unobserved();
                        if let Some(key) = key {
                            entries[i].0 = key;
                        }
                        if let Some(value) = value {
                            entries[i].1 = value;
                        }
                    }
                }
                None
            }
            Value::Optional(inner) => self.sanitized(inner, home).map(crate::interp::optional),
            Value::Slice(..)
            | Value::Either(_)
            | Value::Members(_)
            | Value::BoundMethod(..)
            | Value::Partial(_) => {
                let parts: Vec<Value> = match v {
                    Value::Slice(a, b, c) => vec![(**a).clone(), (**b).clone(), (**c).clone()],
                    Value::Either(items) | Value::Members(items) => items.as_ref().clone(),
                    Value::BoundMethod(r, f) => vec![(**r).clone(), Value::Function(f.clone())],
                    Value::Partial(p) => std::iter::once(p.function.clone())
                        .chain(p.args.iter().cloned())
                        .chain(p.kwargs.iter().map(|(_, v)| v.clone()))
                        .collect(),
                    _ => Vec::new(),
                };
                parts
                    .iter()
                    .any(|p| self.sanitized(p, home).is_some())
                    .then_some(Value::Unknown)
            }
            Value::Many(element, len) => {
                let bad_len = len.as_ref().is_some_and(|d| !d.is_const());
                let element = self.sanitized(element, home);
                (bad_len || element.is_some())
                    .then(|| Value::Many(Rc::new(element.unwrap_or(Value::Unknown)), None))
            }
            Value::Module(m) => {
                let kept = std::ptr::eq(&**m, home) || m.shared.get();
                if !kept && m.file.is_some_and(|f| (self.unkept_here)(f)) {
                    self.spoiled = true;
                }
                (!kept).then_some(Value::Unknown)
            }
            Value::Function(f) => (!self.function(f, home)).then_some(Value::Unknown),
            Value::BuiltinMethod(receiver, _) => self
                .sanitized(receiver, home)
                .is_some()
                .then_some(Value::Unknown),
            Value::Class(c) => {
                let foreign = c.def.as_ref().is_some_and(|def| {
                    let file = crate::workspace::file_of(def.range.start);
                    let foreign = home.file != Some(file) && !(self.shared_file)(file);
                    if foreign && (self.unkept_here)(file) {
                        self.spoiled = true;
                    }
                    foreign
                });
                if foreign {
                    return unknown;
                }
                if self.first(c) {
                    if c.bases.iter().any(|b| self.sanitized(b, home).is_some()) {
                        return unknown;
                    }
                    self.reached.push(Reached::Class(c.clone()));
                    self.in_place(&c.attrs, home);
                }
                None
            }
            Value::Instance(inst) => {
                if self.first(inst) {
                    if self
                        .sanitized(&Value::Class(inst.class.clone()), home)
                        .is_some()
                    {
                        return unknown;
                    }
                    self.reached.push(Reached::Instance(inst.clone()));
                    self.in_place(&inst.attrs, home);
                }
                None
            }
            Value::Layer(layer) => {
                if !self.first(layer) {
                    return None;
                }
                let fixed = layer.origin != Provenance::Real
                    || layer.args.iter().any(|a| self.sanitized(a, home).is_some())
                    || layer
                        .kwargs
                        .iter()
                        .any(|(_, a)| self.sanitized(a, home).is_some());
                if fixed {
                    return unknown;
                }
                self.reached.push(Reached::Layer(layer.clone()));
                let children = layer.children.borrow().clone();
                for (i, child) in children.iter().enumerate() {
                    if let Some(new) = self.sanitized(child, home) {
                        layer.children.write_unobserved()[i] = new;
                    }
                }
                self.in_place(&layer.params, home);
                None
            }
            Value::SizeOfVar(..)
            | Value::Super(..)
            | Value::FakeMode { .. }
            | Value::Distribution(_) => unknown,
        }
    }

    /// Makes every value of an object's map shareable, in place.
    fn in_place(&mut self, map: &Shared<FxHashMap<Rc<str>, Value>>, home: &ModuleNs) {
        let fixed = self.sanitized_entries(crate::value::object_entries(map), home);
        if !fixed.is_empty() {
            // Between analyses: no run, so no memo, is going on.
            map.write_unobserved().extend(fixed);
        }
    }

    /// The entries of a map that are not shareable as they are, made so.
    /// The map is read before and written after, never borrowed meanwhile:
    /// a value in it may lead back to it (two nested functions that call
    /// each other share one enclosing scope).
    fn sanitized_entries(
        &mut self,
        entries: Vec<(Rc<str>, Value)>,
        home: &ModuleNs,
    ) -> Vec<(Rc<str>, Value)> {
        entries
            .into_iter()
            .filter_map(|(key, value)| Some((key, self.sanitized(&value, home)?)))
            .collect()
    }

    /// Whether a function can be kept as it is: defined in this module or
    /// a kept one, its defaults shareable (its closure is made so).
    fn function(&mut self, f: &Rc<crate::value::Function>, home: &ModuleNs) -> bool {
        if !self.first(&f.def) {
            return true;
        }
        let module_ok = match f.module.upgrade() {
            Some(m) => {
                let ok = std::ptr::eq(&*m, home) || m.shared.get();
                if !ok && m.file.is_some_and(|f| (self.unkept_here)(f)) {
                    self.spoiled = true;
                }
                ok
            }
            None => false,
        };
        if !module_ok
            || f.defaults
                .iter()
                .flatten()
                .any(|d| self.sanitized(d, home).is_some())
        {
            return false;
        }
        if let Some(closure) = &f.closure {
            let entries = crate::value::entries(&closure.borrow());
            let fixed = self.sanitized_entries(entries, home);
            closure.borrow_mut().extend(fixed);
        }
        true
    }
}
