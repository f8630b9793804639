//! Keys of memoised calls: a call written as the whole structure of its
//! function, receiver and arguments, objects numbered by their structure.

use std::hash::BuildHasher;
use std::rc::Rc;

use shapels_shapes::Dim;

use super::{Interp, Memo};
use crate::interp::call::Kwargs;
use crate::value::{Class, Device, Function, Shape, Tensor, Value};

/// Structure beyond this many parts is not worth keying on.
pub(super) const MAX_KEY_PARTS: usize = 4096;

/// One piece of a call's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Part {
    Tag(u8),
    /// An object by the number of its structure (see `Memo::structures`).
    Object(u32),
    Len(usize),
    /// A function definition, by the address of its syntax and where it
    /// starts (which says, for another file's, the file's version).
    Def(usize, usize),
    /// A class, by address (see `Memo::classes`).
    Class(usize),
    /// A rank variable: a number that means something in this run only.
    Var(u32),
    /// A fake mode, by its number in this run (0: none).
    Mode(u32),
    /// Where a tensor was made.
    At(usize, usize),
    Dim(Dim),
    Text(Rc<str>),
    Number(u64),
    Device(Option<Device>),
}

/// A sequence of parts with its hash, computed once: keys are long, and a
/// table hashes its keys again each time it grows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Parts {
    pub(super) hash: u64,
    pub(super) parts: Vec<Part>,
}

impl Parts {
    pub(super) fn new(parts: Vec<Part>) -> Parts {
        Parts {
            hash: rustc_hash::FxBuildHasher.hash_one(&parts),
            parts,
        }
    }
}

impl std::hash::Hash for Parts {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// Everything a call's result can depend on, apart from the world state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CallKey {
    pub(super) parts: Parts,
}

impl Interp<'_> {
    pub(super) fn call_key(
        &mut self,
        f: &Rc<Function>,
        receiver: Option<&Value>,
        args: &[Value],
        kwargs: &Kwargs,
        open: bool,
    ) -> Option<CallKey> {
        // A nested function reads its enclosing scope, which its caller
        // may change between calls.
        if f.closure.is_some() || &*f.def.name.id == "__init__" {
            return None;
        }
        let mode = self.mode;
        let path = [
            u64::from(self.uncertain),
            u64::from(self.unknown_loops),
            u64::from(self.join_depth),
        ];
        let prefix = self
            .dataclass_prefix
            .clone()
            .unwrap_or_else(|| Rc::from(""));
        let defaults = self.defaults.clone();
        let mut k = self.key_builder();
        k.function(f)?;
        k.push(Part::Number(u64::from(open)));
        k.push(Part::Number(u64::from(mode.fake)));
        k.push(Part::Mode(mode.id));
        k.push(Part::Number(u64::from(mode.allow_non_fake_inputs)));
        k.push(Part::Number(u64::from(mode.user_mode)));
        k.push(Part::Number(u64::from(mode.autocast)));
        // What factories make depends on torch's defaults as set now.
        k.push(Part::Device(defaults.device));
        k.push(Part::Number(defaults.float.map_or(u64::MAX, |d| d as u64)));
        for p in path {
            k.push(Part::Number(p));
        }
        k.push(Part::Text(prefix));
        match receiver {
            Some(r) => {
                k.push(Part::Tag(1));
                k.value(r)?;
            }
            None => k.push(Part::Tag(0)),
        }
        k.push(Part::Len(args.len()));
        for a in args {
            k.value(a)?;
        }
        k.push(Part::Len(kwargs.len()));
        for (name, v) in kwargs.iter() {
            k.push(Part::Text(name.clone()));
            k.value(v)?;
        }
        let parts = std::mem::take(&mut k.parts);
        (parts.len() <= MAX_KEY_PARTS).then(|| CallKey {
            parts: Parts::new(parts),
        })
    }
}

impl Interp<'_> {
    /// A value's whole structure, as a key holds it; `None` when it cannot
    /// be keyed.
    pub(super) fn value_parts(&mut self, v: &Value) -> Option<Vec<Part>> {
        let mut k = self.key_builder();
        k.value(v)?;
        Some(k.parts)
    }

    fn key_builder(&mut self) -> KeyBuilder<'_> {
        KeyBuilder {
            parts: Vec::new(),
            memo: &mut self.memo,
            epoch: self.epoch,
            in_progress: Vec::new(),
            depth: 0,
        }
    }
}

pub(super) struct KeyBuilder<'m> {
    parts: Vec<Part>,
    memo: &'m mut Memo,
    epoch: crate::mutation::Epoch,
    /// Objects being written (a cycle back to one cannot be keyed).
    in_progress: Vec<usize>,
    depth: u32,
}

impl KeyBuilder<'_> {
    fn push(&mut self, part: Part) {
        self.parts.push(part);
    }

    /// A class by identity (a class does not change once its body ran);
    /// kept in `Memo::classes` so that its address stays its own and the
    /// key can be read across versions (see `across`).
    fn class(&mut self, class: &Rc<Class>) {
        let addr = Rc::as_ptr(class) as *const u8 as usize;
        self.memo
            .classes
            .entry(addr)
            .or_insert_with(|| class.clone());
        self.push(Part::Class(addr));
    }

    fn dims(&mut self, dims: &[Dim]) {
        self.push(Part::Len(dims.len()));
        for d in dims {
            self.push(Part::Dim(d.clone()));
        }
    }

    /// Write an object as the number of its structure, computed once per
    /// epoch (nothing in an object changes without moving the epoch).
    fn object(
        &mut self,
        addr: usize,
        value: &Value,
        write: impl FnOnce(&mut Self) -> Option<()>,
    ) -> Option<()> {
        if let Some((epoch, id, _)) = self.memo.objects.get(&addr)
            && *epoch == self.epoch
        {
            let id = *id;
            self.push(Part::Object(id));
            return Some(());
        }
        if self.in_progress.contains(&addr) {
            return None;
        }
        self.in_progress.push(addr);
        let outer = std::mem::take(&mut self.parts);
        let written = write(self);
        let body = std::mem::replace(&mut self.parts, outer);
        self.in_progress.pop();
        written?;
        if body.len() > MAX_KEY_PARTS {
            return None;
        }
        let body = Rc::new(Parts::new(body));
        let id = match self.memo.structures.get(&body) {
            Some(id) => *id,
            None => {
                let next = self.memo.bodies.len() as u32;
                self.memo.bodies.push(body.clone());
                self.memo.structures.insert(body, next);
                next
            }
        };
        self.memo
            .objects
            .insert(addr, (self.epoch, id, value.clone()));
        self.push(Part::Object(id));
        Some(())
    }

    /// Write a value's whole structure; `None` when it cannot be keyed.
    fn value(&mut self, v: &Value) -> Option<()> {
        if self.parts.len() > MAX_KEY_PARTS || self.depth > 64 {
            return None;
        }
        self.depth += 1;
        let written = self.value_inner(v);
        self.depth -= 1;
        written
    }

    fn value_inner(&mut self, v: &Value) -> Option<()> {
        match v {
            Value::Unknown => self.push(Part::Tag(2)),
            Value::Text => self.push(Part::Tag(30)),
            Value::Complex => self.push(Part::Tag(33)),
            Value::Distribution(d) => {
                self.push(Part::Tag(31));
                self.push(Part::Text(d.kind.clone()));
                self.dims(&d.batch);
                self.dims(&d.event);
                self.push(Part::Number(d.sample_dtype.map_or(99, |t| t as u64)));
                self.push(Part::Number(d.dtype.map_or(99, |t| t as u64)));
                self.push(Part::Device(d.device.clone()));
                self.push(Part::Len(d.params.len()));
                for (name, v) in &d.params {
                    self.push(Part::Text(name.clone()));
                    self.value(v)?;
                }
            }
            Value::None => self.push(Part::Tag(3)),
            Value::Bool(b) => {
                self.push(Part::Tag(4));
                self.push(Part::Number(match b {
                    None => 2,
                    Some(b) => u64::from(*b),
                }));
            }
            Value::Int(d) => {
                self.push(Part::Tag(5));
                self.push(Part::Dim(d.clone()));
            }
            Value::Float(x) => {
                self.push(Part::Tag(6));
                match x {
                    Some(x) => self.push(Part::Number(x.to_bits())),
                    None => self.push(Part::Tag(0)),
                }
            }
            Value::Str(s) => {
                self.push(Part::Tag(7));
                self.push(Part::Text(s.clone()));
            }
            Value::Tuple(items) => {
                self.push(Part::Tag(8));
                self.push(Part::Len(items.len()));
                for item in items.iter() {
                    self.value(item)?;
                }
            }
            Value::List(items) => {
                self.push(Part::Tag(9));
                let items = items.borrow().clone();
                self.push(Part::Len(items.len()));
                for item in &items {
                    self.value(item)?;
                }
            }
            Value::Dict(entries) => {
                self.push(Part::Tag(10));
                let entries = entries.borrow().clone();
                self.push(Part::Len(entries.len()));
                for (k, v) in &entries {
                    self.value(k)?;
                    self.value(v)?;
                }
            }
            Value::SizeOfVar(var, dims) => {
                self.push(Part::Tag(11));
                self.push(Part::Var(*var));
                self.dims(dims);
            }
            Value::Tensor(t) => {
                self.push(Part::Tag(12));
                self.tensor(t);
            }
            Value::Device(d) => {
                self.push(Part::Tag(13));
                self.push(Part::Device(Some(d.clone())));
            }
            Value::DType(d) => {
                self.push(Part::Tag(14));
                self.push(Part::Number(*d as u64));
            }
            Value::Layer(l) => {
                self.push(Part::Tag(15));
                self.object(Rc::as_ptr(l) as *const u8 as usize, v, |k| {
                    k.push(Part::Text(l.kind.clone()));
                    k.push(Part::Len(l.args.len()));
                    for a in &l.args {
                        k.value(a)?;
                    }
                    k.push(Part::Len(l.kwargs.len()));
                    for (name, a) in &l.kwargs {
                        k.push(Part::Text(name.clone()));
                        k.value(a)?;
                    }
                    k.push(Part::Device(l.device.borrow().clone()));
                    k.push(Part::Number(l.dtype.borrow().map_or(99, |d| d as u64)));
                    k.push(Part::Number(l.origin as u64));
                    k.push(Part::Mode(l.mode));
                    k.push(Part::Number(u64::from(l.unknown_children.get())));
                    k.push(Part::Number(match l.training.get() {
                        Some(true) => 1,
                        Some(false) => 0,
                        None => 2,
                    }));
                    let children = l.children.borrow().clone();
                    k.push(Part::Len(children.len()));
                    for c in &children {
                        k.value(c)?;
                    }
                    for key in l.keys.borrow().iter() {
                        k.push(Part::Text(key.clone()));
                    }
                    // The weights a layer builds on first use follow from its
                    // arguments, device and dtype, all written above.
                    Some(())
                })?;
            }
            Value::Instance(inst) => {
                self.push(Part::Tag(16));
                self.object(Rc::as_ptr(inst) as *const u8 as usize, v, |k| {
                    k.class(&inst.class);
                    k.push(Part::Number(inst.origin as u64));
                    k.push(Part::Device(inst.device.borrow().clone()));
                    let order = inst.order.borrow().clone();
                    let mut attrs = crate::value::object_entries(&inst.attrs);
                    attrs.sort_by(|a, b| a.0.cmp(&b.0));
                    k.push(Part::Len(order.len()));
                    for name in order {
                        k.push(Part::Text(name));
                    }
                    k.push(Part::Len(attrs.len()));
                    for (name, v) in &attrs {
                        k.push(Part::Text(name.clone()));
                        k.value(v)?;
                    }
                    Some(())
                })?;
            }
            // Classes are written by identity: changing one moves the epoch.
            Value::Class(c) => {
                self.push(Part::Tag(17));
                self.class(c);
            }
            Value::Function(f) => {
                self.push(Part::Tag(18));
                self.function(f)?;
            }
            Value::BoundMethod(receiver, f) => {
                self.push(Part::Tag(19));
                self.value(receiver)?;
                self.function(f)?;
            }
            Value::BuiltinMethod(receiver, name) => {
                self.push(Part::Tag(20));
                self.value(receiver)?;
                self.push(Part::Text(name.clone()));
            }
            Value::Partial(p) => {
                self.push(Part::Tag(32));
                self.value(&p.function)?;
                self.push(Part::Len(p.args.len()));
                for a in &p.args {
                    self.value(a)?;
                }
                self.push(Part::Len(p.kwargs.len()));
                for (k, v) in &p.kwargs {
                    self.push(Part::Text(k.clone()));
                    self.value(v)?;
                }
            }
            // A module's globals change as its code runs: not a key.
            Value::Module(_) | Value::Either(_) => return None,
            Value::Path(p) => {
                self.push(Part::Tag(21));
                self.push(Part::Text(p.clone()));
            }
            Value::Opaque(p) => {
                self.push(Part::Tag(22));
                self.push(Part::Text(p.clone()));
            }
            Value::Range(a, b, c) => {
                self.push(Part::Tag(23));
                self.dims(&[a.clone(), b.clone(), c.clone()]);
            }
            Value::Super(v, class) => {
                self.push(Part::Tag(24));
                self.value(v)?;
                self.class(class);
            }
            Value::FakeMode {
                id,
                allow_non_fake_inputs,
            } => {
                self.push(Part::Tag(25));
                self.push(Part::Mode(*id));
                self.push(Part::Number(u64::from(*allow_non_fake_inputs)));
            }
            Value::Optional(v) => {
                self.push(Part::Tag(26));
                self.value(v)?;
            }
            Value::Slice(a, b, c) => {
                self.push(Part::Tag(27));
                self.value(a)?;
                self.value(b)?;
                self.value(c)?;
            }
            Value::Ellipsis => self.push(Part::Tag(28)),
            Value::OpenTuple(items) => {
                self.push(Part::Tag(30));
                self.push(Part::Len(items.len()));
                for item in items.iter() {
                    self.value(item)?;
                }
            }
            Value::Members(items) => {
                self.push(Part::Tag(31));
                self.push(Part::Len(items.len()));
                for item in items.iter() {
                    self.value(item)?;
                }
            }
            Value::Many(element, len) => {
                self.push(Part::Tag(29));
                self.value(element)?;
                match len {
                    Some(n) => self.push(Part::Dim(n.clone())),
                    None => self.push(Part::Tag(0)),
                }
            }
        }
        Some(())
    }

    fn function(&mut self, f: &Rc<Function>) -> Option<()> {
        if f.closure.is_some() {
            return None;
        }
        self.push(Part::Def(
            Rc::as_ptr(&f.def) as *const u8 as usize,
            f.def.range.start,
        ));
        match f.owner.as_ref().and_then(std::rc::Weak::upgrade) {
            Some(owner) => self.class(&owner),
            None => self.push(Part::Tag(0)),
        }
        self.push(Part::Len(f.defaults.len()));
        for d in &f.defaults {
            match d {
                Some(v) => self.value(v)?,
                None => self.push(Part::Tag(0)),
            }
        }
        Some(())
    }

    /// Every field: a result may carry any of them on (hover shows the op,
    /// diagnostics point at where a tensor was made).
    fn tensor(&mut self, t: &Tensor) {
        match &t.shape {
            Shape::Known(d) => {
                self.push(Part::Tag(0));
                self.dims(d);
            }
            Shape::Var(v) => {
                self.push(Part::Tag(1));
                self.push(Part::Var(*v));
            }
            Shape::Tail(v, d) => {
                self.push(Part::Tag(2));
                self.push(Part::Var(*v));
                self.dims(d);
            }
        }
        self.push(Part::Number(t.dtype.map_or(99, |d| d as u64)));
        self.push(Part::Device(t.device.clone()));
        self.push(Part::Number(t.origin as u64));
        self.push(Part::Mode(t.mode));
        self.push(Part::Text(t.op.clone()));
        match &t.made_at {
            Some(r) => self.push(Part::At(r.start, r.end)),
            None => self.push(Part::Tag(0)),
        }
        self.push(Part::Number(u64::from(t.is_param)));
        match t.layout.as_deref() {
            Some(crate::value::Layout::Order(order)) => {
                self.push(Part::Tag(1));
                self.push(Part::Len(order.len()));
                for i in order.iter() {
                    self.push(Part::Len(*i));
                }
            }
            Some(crate::value::Layout::Strides(strides)) => {
                self.push(Part::Tag(2));
                self.push(Part::Len(strides.len()));
                for s in strides.iter() {
                    self.push(Part::Number(*s as u64));
                }
            }
            None => self.push(Part::Tag(0)),
        }
    }
}
