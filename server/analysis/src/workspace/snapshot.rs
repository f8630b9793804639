//! Kept module top levels put back after each analysis: the mutable parts
//! of the objects a kept namespace reaches (lists, dicts, classes,
//! instances, layers), as they were when it was kept, restored where an
//! analysis wrote them.
//!
//! A kept namespace is shared by every later analysis on the thread, and
//! its objects are the very objects those analyses run with: a file that
//! appends to an imported registry (`reg.ITEMS.append(...)`), grows a list
//! an imported class holds or moves an imported layer would leave that change
//! for the next file, and a document edited a hundred times would see a
//! registry a hundred entries long. Within one analysis the writes are
//! seen, as Python sees them; when it ends, what it wrote is put back.

use std::cell::Cell;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::mutation::{Shared, take_written};
use crate::value::{Class, DType, Device, Instance, Layer, ListRef, Value};

type Attrs = FxHashMap<Rc<str>, Value>;
type DictRef = Rc<Shared<Vec<(Value, Value)>>>;

/// An object with mutable parts that a kept namespace reaches.
pub(super) enum Reached {
    List(ListRef),
    Dict(DictRef),
    Class(Rc<Class>),
    Instance(Rc<Instance>),
    Layer(Rc<Layer>),
}

impl Reached {
    /// The addresses of its mutable parts (see `Shared::address`).
    fn parts(&self) -> Vec<usize> {
        match self {
            Reached::List(items) => vec![items.address()],
            Reached::Dict(entries) => vec![entries.address()],
            Reached::Class(class) => vec![class.attrs.address()],
            Reached::Instance(inst) => vec![
                inst.attrs.address(),
                inst.order.address(),
                inst.device.address(),
            ],
            Reached::Layer(layer) => vec![
                layer.device.address(),
                layer.dtype.address(),
                layer.children.address(),
                layer.keys.address(),
                layer.unknown_children.address(),
                layer.training.address(),
                layer.params.address(),
            ],
        }
    }
}

/// One mutable part as it was kept, with its write count then.
struct Saved<T> {
    writes: Cell<u32>,
    value: T,
}

impl<T: Clone> Saved<T> {
    fn of(part: &Shared<T>) -> Saved<T> {
        part.mark_kept();
        Saved {
            writes: Cell::new(part.writes()),
            value: part.borrow().clone(),
        }
    }

    fn is_current(&self, part: &Shared<T>) -> bool {
        part.writes() == self.writes.get()
    }

    fn put_back(&self, part: &Shared<T>) {
        if part.writes() != self.writes.get() {
            // Between analyses: no run, so no memo, is going on.
            *part.write_unobserved() = self.value.clone();
            self.writes.set(part.writes());
        }
    }
}

struct LayerParts {
    device: Saved<Option<Device>>,
    dtype: Saved<Option<DType>>,
    children: Saved<Vec<Value>>,
    keys: Saved<Vec<Rc<str>>>,
    unknown_children: Saved<bool>,
    training: Saved<Option<bool>>,
    params: Saved<Attrs>,
}

/// An object and its mutable parts as they were kept.
enum Snapshot {
    List(ListRef, Saved<Vec<Value>>),
    Dict(DictRef, Saved<Vec<(Value, Value)>>),
    Class(Rc<Class>, Saved<Attrs>),
    Instance(
        Rc<Instance>,
        Saved<Attrs>,
        Saved<Vec<Rc<str>>>,
        Saved<Option<Device>>,
    ),
    Layer(Rc<Layer>, Box<LayerParts>),
}

impl Snapshot {
    fn of(object: Reached) -> Snapshot {
        match object {
            Reached::List(items) => {
                let saved = Saved::of(&*items);
                Snapshot::List(items, saved)
            }
            Reached::Dict(entries) => {
                let saved = Saved::of(&*entries);
                Snapshot::Dict(entries, saved)
            }
            Reached::Class(class) => {
                let saved = Saved::of(&class.attrs);
                Snapshot::Class(class, saved)
            }
            Reached::Instance(inst) => {
                let attrs = Saved::of(&inst.attrs);
                let order = Saved::of(&inst.order);
                let device = Saved::of(&inst.device);
                Snapshot::Instance(inst, attrs, order, device)
            }
            Reached::Layer(layer) => {
                let parts = LayerParts {
                    device: Saved::of(&layer.device),
                    dtype: Saved::of(&layer.dtype),
                    children: Saved::of(&layer.children),
                    keys: Saved::of(&layer.keys),
                    unknown_children: Saved::of(&layer.unknown_children),
                    training: Saved::of(&layer.training),
                    params: Saved::of(&layer.params),
                };
                Snapshot::Layer(layer, Box::new(parts))
            }
        }
    }

    fn owner(&self) -> Reached {
        match self {
            Snapshot::List(items, _) => Reached::List(items.clone()),
            Snapshot::Dict(entries, _) => Reached::Dict(entries.clone()),
            Snapshot::Class(class, _) => Reached::Class(class.clone()),
            Snapshot::Instance(inst, ..) => Reached::Instance(inst.clone()),
            Snapshot::Layer(layer, _) => Reached::Layer(layer.clone()),
        }
    }

    /// Whether no part was written since it was saved.
    fn is_current(&self) -> bool {
        match self {
            Snapshot::List(items, saved) => saved.is_current(items),
            Snapshot::Dict(entries, saved) => saved.is_current(entries),
            Snapshot::Class(class, saved) => saved.is_current(&class.attrs),
            Snapshot::Instance(inst, attrs, order, device) => {
                attrs.is_current(&inst.attrs)
                    && order.is_current(&inst.order)
                    && device.is_current(&inst.device)
            }
            Snapshot::Layer(layer, parts) => {
                parts.device.is_current(&layer.device)
                    && parts.dtype.is_current(&layer.dtype)
                    && parts.children.is_current(&layer.children)
                    && parts.keys.is_current(&layer.keys)
                    && parts.unknown_children.is_current(&layer.unknown_children)
                    && parts.training.is_current(&layer.training)
                    && parts.params.is_current(&layer.params)
            }
        }
    }

    fn put_back(&self) {
        match self {
            Snapshot::List(items, saved) => saved.put_back(items),
            Snapshot::Dict(entries, saved) => saved.put_back(entries),
            Snapshot::Class(class, saved) => saved.put_back(&class.attrs),
            Snapshot::Instance(inst, attrs, order, device) => {
                attrs.put_back(&inst.attrs);
                order.put_back(&inst.order);
                device.put_back(&inst.device);
            }
            Snapshot::Layer(layer, parts) => {
                parts.device.put_back(&layer.device);
                parts.dtype.put_back(&layer.dtype);
                parts.children.put_back(&layer.children);
                parts.keys.put_back(&layer.keys);
                parts.unknown_children.put_back(&layer.unknown_children);
                parts.training.put_back(&layer.training);
                parts.params.put_back(&layer.params);
            }
        }
    }
}

/// The objects of every kept namespace as they were kept.
#[derive(Default)]
pub(super) struct Snapshots {
    all: Vec<Snapshot>,
    /// The latest snapshot of each mutable part: a module kept after
    /// another may have changed what that one reaches (its top level
    /// registers a class in the other's registry), and the later state is
    /// the kept one.
    by_part: FxHashMap<usize, usize>,
}

impl Snapshots {
    /// Saves what a newly kept namespace reaches. An object saved before
    /// (a class of a module kept earlier, reached again through an import)
    /// is saved again only when it changed since: its later state is the
    /// kept one.
    pub(super) fn take(&mut self, reached: Vec<Reached>) {
        for object in reached {
            let parts = object.parts();
            if let Some(&index) = self.by_part.get(&parts[0])
                && self.all[index].is_current()
            {
                continue;
            }
            let snapshot = Snapshot::of(object);
            let index = self.all.len();
            for part in parts {
                self.by_part.insert(part, index);
            }
            self.all.push(snapshot);
        }
    }

    /// Saves again the kept objects at these addresses as they are now: a
    /// module top level being kept wrote them (it registered a class in
    /// another module's registry), and later analyses, which take that top
    /// level as it was kept instead of running it, must find the write.
    pub(super) fn refresh(&mut self, written: &[usize]) {
        let owners: Vec<Reached> = written
            .iter()
            .filter_map(|part| self.by_part.get(part))
            .filter(|&&index| !self.all[index].is_current())
            .map(|&index| self.all[index].owner())
            .collect();
        self.take(owners);
    }

    /// Puts back every kept object written since the last call.
    pub(super) fn put_back(&self) {
        for part in take_written() {
            if let Some(&index) = self.by_part.get(&part) {
                self.all[index].put_back();
            }
        }
        // Putting back is a write too; nothing is left to undo.
        take_written();
    }

    pub(super) fn clear(&mut self) {
        self.all.clear();
        self.by_part.clear();
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.all.len()
    }
}
