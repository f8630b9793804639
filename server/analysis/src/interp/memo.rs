//! Memoised user calls: a call that repeats one made earlier in the same run
//! returns the earlier result instead of running the body again.
//!
//! Model code calls the same function with the same inputs over and over:
//! every block of a `ModuleList` runs one `forward` on the same shape, a
//! sampling loop calls the model until its values settle. Running those
//! again gives nothing new and is most of the time an analysis takes.
//!
//! A repeat is only taken when it must give what running would give:
//! - the key holds everything the body can read besides globals: the
//!   function, the receiver and the arguments by their whole structure (two
//!   blocks built alike are alike), the fake mode and the path's state;
//! - nothing the body can read has changed since: the shape environment,
//!   rank variables, every heap object (`Interp::epoch`) and every global
//!   (`Interp::globals_epoch`);
//! - the first run changed nothing outside its own frame, reported nothing,
//!   hit no limit, and returned plain data (no list, dict or object a caller
//!   could change), so handing the same value out again is safe;
//! - what the first run recorded for hints and hover is recorded again.
//!
//! A first run may have made new symbols (a layer whose width is unknown
//! gives every call a new unknown size): a repeat makes new ones the same
//! way and hands out the result and records with them in place of the old,
//! which is what running again would do. Nothing else can have learned of
//! the old ones meanwhile: any fact about them would move the stamp.

use std::hash::BuildHasher;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use shapels_shapes::{Dim, SymId};

use super::Interp;
use super::call::Kwargs;
use crate::record::Recorded;
use crate::value::{Device, Function, Shape, Tensor, Value};

/// Structure beyond this many parts is not worth keying on.
const MAX_KEY_PARTS: usize = 4096;

/// The calls made so far and the structure of the objects they were made on.
#[derive(Default)]
pub(crate) struct Memo {
    entries: FxHashMap<CallKey, Entry>,
    /// Per object (by address), its structure's number at an epoch; the
    /// value is held so that the address is not reused meanwhile.
    objects: FxHashMap<usize, (u64, u32, Value)>,
    /// Structures by number: objects built alike get the same number.
    structures: FxHashMap<Parts, u32>,
}

/// One piece of a call's key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Part {
    Tag(u8),
    /// An object by the number of its structure (see `Memo::structures`).
    Object(u32),
    Len(usize),
    Addr(usize),
    Dim(Dim),
    Text(Rc<str>),
    Number(u64),
    Device(Option<Device>),
}

/// A sequence of parts with its hash, computed once: keys are long, and a
/// table hashes its keys again each time it grows.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parts {
    hash: u64,
    parts: Vec<Part>,
}

impl Parts {
    fn new(parts: Vec<Part>) -> Parts {
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
    parts: Parts,
}

/// The analysis state a body can read beyond its inputs; a result holds
/// while these are the same. New symbols, rank variables and modes are
/// not in it: making one says nothing about the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    facts: usize,
    epoch: u64,
    unseen_writes: u64,
    globals_epoch: u64,
    tail_vars: usize,
    var_dims: usize,
    opaque_syms: usize,
    opaque_numbers: usize,
}

/// Everything a call can change; a call that changed none of it but the
/// number of symbols can be skipped when it repeats (its repeat makes as
/// many new symbols).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Footprint {
    stamp: Stamp,
    symbols: usize,
    rank_vars: usize,
    modes: u32,
    diagnostics: usize,
    cuts: u64,
}

struct Entry {
    stamp: Stamp,
    result: Value,
    /// What the call recorded: a range of the recorder's journal.
    recorded: std::ops::Range<usize>,
    /// The symbols the call made, by number: a repeat makes new ones.
    minted: std::ops::Range<u32>,
    /// The inputs, held so that no address in the key is reused by
    /// another object while the entry exists.
    _inputs: Vec<Value>,
}

/// What a call about to be made should do.
pub(crate) enum Lookup {
    /// Return this: the call was made before and its result still holds.
    Earlier(Value),
    /// Run the body; pass this to `memo_finish` afterwards (`None` when the
    /// call cannot be kept, e.g. a nested function).
    Run(Option<Pending>),
}

/// What `begin` saw, to decide at the end whether the call can be kept.
pub(crate) struct Pending {
    key: CallKey,
    inputs: Vec<Value>,
    before: Footprint,
    mark: usize,
}

impl Interp<'_> {
    fn stamp(&self) -> Stamp {
        Stamp {
            facts: self.env.facts(),
            epoch: self.epoch,
            unseen_writes: self.unseen_writes,
            globals_epoch: self.globals_epoch,
            tail_vars: self.tail_vars.len(),
            var_dims: self.var_dims.len(),
            opaque_syms: self.opaque_syms.len(),
            opaque_numbers: self.opaque_numbers.len(),
        }
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            stamp: self.stamp(),
            symbols: self.env.generation() - self.env.facts(),
            rank_vars: self.rank_vars.len(),
            modes: self.next_mode_id,
            diagnostics: self.diagnostics.len(),
            cuts: self.cuts,
        }
    }

    /// Whether a memo key ever wrote the object at this address: once one
    /// has, the numbers of structures holding it depend on what it holds.
    pub(crate) fn memo_has_seen(&self, addr: usize) -> bool {
        self.memo.objects.contains_key(&addr)
    }

    /// Before running a call: the earlier result when this call was made
    /// before and still holds, or what to pass to `memo_finish`.
    pub(crate) fn memo_begin(
        &mut self,
        f: &Rc<Function>,
        receiver: Option<&Value>,
        args: &[Value],
        kwargs: &Kwargs,
        open: bool,
    ) -> Lookup {
        let Some(key) = self.call_key(f, receiver, args, kwargs, open) else {
            return Lookup::Run(None);
        };
        let stamp = self.stamp();
        if let Some(entry) = self.memo.entries.get(&key)
            && entry.stamp == stamp
        {
            let result = entry.result.clone();
            let recorded = entry.recorded.clone();
            let minted = entry.minted.clone();
            if minted.is_empty() {
                self.recorder.replay(recorded, |r| r);
                return Lookup::Earlier(result);
            }
            let renaming = Renaming {
                first: minted.start,
                fresh: minted.map(|id| self.env.remint(SymId(id))).collect(),
            };
            self.recorder.replay(recorded, |r| renaming.recorded(r));
            return Lookup::Earlier(renaming.value(&result));
        }
        let inputs = std::iter::once(Value::Function(f.clone()))
            .chain(receiver.cloned())
            .chain(args.iter().cloned())
            .chain(kwargs.iter().map(|(_, v)| v.clone()))
            .collect();
        Lookup::Run(Some(Pending {
            key,
            inputs,
            before: self.footprint(),
            mark: self.recorder.begin_capture(),
        }))
    }

    /// After running a call: keep its result when running it again would
    /// give the same and change nothing.
    pub(crate) fn memo_finish(&mut self, pending: Option<Pending>, result: &Value) {
        let Some(p) = pending else { return };
        let Some(recorded) = self.recorder.end_capture(p.mark) else {
            return;
        };
        let after = self.footprint();
        let clean = Footprint {
            symbols: p.before.symbols,
            ..after
        } == p.before
            && !self.out_of_budget()
            && is_plain(result, 0);
        if clean {
            self.memo.entries.insert(
                p.key,
                Entry {
                    stamp: p.before.stamp,
                    result: result.clone(),
                    recorded,
                    minted: p.before.symbols as u32..after.symbols as u32,
                    _inputs: p.inputs,
                },
            );
        }
    }

    fn call_key(
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
        let mut k = KeyBuilder {
            parts: Vec::new(),
            memo: &mut self.memo,
            epoch: self.epoch,
            in_progress: Vec::new(),
            depth: 0,
        };
        k.push(Part::Addr(Rc::as_ptr(f) as *const u8 as usize));
        k.push(Part::Addr(Rc::as_ptr(&f.def) as *const u8 as usize));
        k.push(Part::Number(u64::from(open)));
        k.push(Part::Number(u64::from(mode.fake)));
        k.push(Part::Number(u64::from(mode.id)));
        k.push(Part::Number(u64::from(mode.allow_non_fake_inputs)));
        k.push(Part::Number(u64::from(mode.user_mode)));
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

struct KeyBuilder<'m> {
    parts: Vec<Part>,
    memo: &'m mut Memo,
    epoch: u64,
    /// Objects being written (a cycle back to one cannot be keyed).
    in_progress: Vec<usize>,
    depth: u32,
}

impl KeyBuilder<'_> {
    fn push(&mut self, part: Part) {
        self.parts.push(part);
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
        let next = self.memo.structures.len() as u32;
        let id = *self.memo.structures.entry(Parts::new(body)).or_insert(next);
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
                self.push(Part::Len(*var as usize));
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
                    k.push(Part::Number(u64::from(l.mode)));
                    k.push(Part::Number(u64::from(l.unknown_children.get())));
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
                    k.push(Part::Addr(Rc::as_ptr(&inst.class) as *const u8 as usize));
                    k.push(Part::Number(inst.origin as u64));
                    k.push(Part::Device(inst.device.borrow().clone()));
                    let order = inst.order.borrow().clone();
                    let mut attrs = crate::value::entries(&inst.attrs);
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
                self.push(Part::Addr(Rc::as_ptr(c) as *const u8 as usize));
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
                self.push(Part::Addr(Rc::as_ptr(class) as *const u8 as usize));
            }
            Value::FakeMode {
                id,
                allow_non_fake_inputs,
            } => {
                self.push(Part::Tag(25));
                self.push(Part::Number(u64::from(*id)));
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
        self.push(Part::Addr(Rc::as_ptr(&f.def) as *const u8 as usize));
        self.push(Part::Addr(
            f.owner
                .as_ref()
                .map_or(0, |o| o.as_ptr() as *const u8 as usize),
        ));
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
                self.push(Part::Len(*v as usize));
            }
            Shape::Tail(v, d) => {
                self.push(Part::Tag(2));
                self.push(Part::Len(*v as usize));
                self.dims(d);
            }
        }
        self.push(Part::Number(t.dtype.map_or(99, |d| d as u64)));
        self.push(Part::Device(t.device.clone()));
        self.push(Part::Number(t.origin as u64));
        self.push(Part::Number(u64::from(t.mode)));
        self.push(Part::Text(t.op.clone()));
        match &t.made_at {
            Some(r) => {
                self.push(Part::Len(r.start));
                self.push(Part::Len(r.end));
            }
            None => self.push(Part::Tag(0)),
        }
        self.push(Part::Number(u64::from(t.is_param)));
        match &t.layout {
            Some(order) => {
                self.push(Part::Len(order.len()));
                for i in order.iter() {
                    self.push(Part::Len(*i));
                }
            }
            None => self.push(Part::Tag(0)),
        }
    }
}

/// New symbols in place of those a call made the first time it ran.
struct Renaming {
    /// The number of the first symbol the first run made; they are
    /// consecutive.
    first: u32,
    fresh: Vec<Dim>,
}

impl Renaming {
    fn symbol(&self, id: SymId) -> Option<Dim> {
        let i = id.0.checked_sub(self.first)?;
        self.fresh.get(i as usize).cloned()
    }

    fn dim(&self, d: &Dim) -> Dim {
        // Most dims are numbers or one symbol: no need to rebuild them.
        if d.as_const().is_some() {
            return d.clone();
        }
        if let Some(id) = d.as_sym() {
            return self.symbol(id).unwrap_or_else(|| d.clone());
        }
        d.substitute(&mut |id| self.symbol(id))
    }

    /// The same list when nothing in it changes, so that runs which saw the
    /// very same dims still share them.
    fn dims(&self, dims: &Rc<Vec<Dim>>) -> Rc<Vec<Dim>> {
        if dims.iter().all(|d| d.as_const().is_some()) {
            return dims.clone();
        }
        let renamed: Vec<Dim> = dims.iter().map(|d| self.dim(d)).collect();
        if renamed == **dims {
            dims.clone()
        } else {
            Rc::new(renamed)
        }
    }

    fn tensor(&self, t: &Rc<Tensor>) -> Rc<Tensor> {
        let shape = match &t.shape {
            Shape::Known(d) => Shape::Known(self.dims(d)),
            Shape::Tail(v, d) => Shape::Tail(*v, self.dims(d)),
            Shape::Var(_) => return t.clone(),
        };
        if shape == t.shape {
            return t.clone();
        }
        Rc::new(Tensor {
            shape,
            ..(**t).clone()
        })
    }

    /// A plain value (see `is_plain`) with the new symbols.
    fn value(&self, v: &Value) -> Value {
        match v {
            Value::Int(d) => Value::Int(self.dim(d)),
            Value::SizeOfVar(var, dims) => Value::SizeOfVar(*var, self.dims(dims)),
            Value::Tensor(t) => Value::Tensor(self.tensor(t)),
            Value::Range(a, b, c) => Value::Range(self.dim(a), self.dim(b), self.dim(c)),
            Value::Tuple(items) => Value::tuple(items.iter().map(|i| self.value(i)).collect()),
            Value::Optional(inner) => Value::Optional(Box::new(self.value(inner))),
            Value::Many(element, len) => Value::Many(
                Rc::new(self.value(element)),
                len.as_ref().map(|n| self.dim(n)),
            ),
            Value::Distribution(d) => Value::Distribution(Rc::new(crate::value::Distribution {
                batch: d.batch.iter().map(|x| self.dim(x)).collect(),
                event: d.event.iter().map(|x| self.dim(x)).collect(),
                params: d
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), self.value(v)))
                    .collect(),
                ..(**d).clone()
            })),
            Value::Slice(a, b, c) => Value::Slice(
                Box::new(self.value(a)),
                Box::new(self.value(b)),
                Box::new(self.value(c)),
            ),
            other => other.clone(),
        }
    }

    fn recorded(&self, r: Recorded) -> Recorded {
        match r {
            Recorded::Binding(site, call, t) => Recorded::Binding(site, call, self.tensor(&t)),
            Recorded::Expression(start, end, call, t) => {
                Recorded::Expression(start, end, call, self.tensor(&t))
            }
            Recorded::Scalar(site, d) => Recorded::Scalar(site, self.dim(&d)),
            unknown @ Recorded::Unknown(..) => unknown,
        }
    }
}

/// Data a caller cannot change in place: safe to hand out twice.
fn is_plain(v: &Value, depth: u32) -> bool {
    if depth > 16 {
        return false;
    }
    match v {
        Value::Unknown
        | Value::None
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Str(_)
        | Value::Text
        | Value::Distribution(_)
        | Value::SizeOfVar(..)
        | Value::Tensor(_)
        | Value::Device(_)
        | Value::DType(_)
        | Value::Path(_)
        | Value::Opaque(_)
        | Value::Range(..)
        | Value::Ellipsis => true,
        Value::Tuple(items) => items.iter().all(|i| is_plain(i, depth + 1)),
        Value::Optional(inner) => is_plain(inner, depth + 1),
        Value::Many(element, _) => is_plain(element, depth + 1),
        Value::Slice(a, b, c) => [a, b, c].iter().all(|x| is_plain(x, depth + 1)),
        Value::List(_)
        | Value::Dict(_)
        | Value::Layer(_)
        | Value::Instance(_)
        | Value::Class(_)
        | Value::Function(_)
        | Value::BoundMethod(..)
        | Value::BuiltinMethod(..)
        | Value::Super(..)
        | Value::FakeMode { .. } => false,
    }
}
