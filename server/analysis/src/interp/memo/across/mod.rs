//! Memoised calls carried from one version of a file to the next, so that an
//! edit runs again only the calls it can change.
//!
//! The in-run memo (`super`) knows a call by the addresses of what it was
//! made on, which mean nothing in another run. A call is carried across when
//! its key can be written without them:
//! - functions by their item (a top-level statement, a method of a
//!   top-level class, a statement of the main block), named by qualified
//!   name and a hash of its text: editing a function makes it another item,
//!   and every call keyed on it is gone; a function of another file by
//!   where it starts in that file, named by the file's path and text
//!   (editing that file makes every place in it another);
//! - classes by their item, their bases and their attributes;
//! - objects by a hash of their whole structure, sizes only as numbers (a
//!   symbol means nothing in another run), places as offsets into an item
//!   (or into another file), fake modes by their order among the main
//!   block's.
//!
//! Besides its key a call reads globals: each global it read is kept with
//! what it held, and the call is taken again only when every one holds the
//! same (a helper function edited, a constant changed). Globals of another
//! file count when its top level is one that analyses share (see
//! `workspace::executed`); others make the call one that is not carried.
//! What a call does besides returning — records for hints, functions it
//! reached, classes whose `forward` ran, names defined in other files that
//! it read, text it read, steps it took — is kept and done again, at the
//! places the new version has for it. Not carried: a call that made a
//! symbol or an instance of this file's classes (library mode runs those),
//! reported anything (even a repeat of an earlier report, which adds no
//! diagnostic), read state that earlier calls fill (the symbols of opaque
//! values), or whose result or records hold a symbol or a place outside
//! every item. Every call of it, nested ones included, counts: a caller
//! depends on what its callees depended on.
//!
//! `tests/reuse.rs` holds this to its promise: over every fixture and
//! test-corpus model and chains of code edits, an analysis that takes calls
//! equals a fresh one; `tests/reuse_across_files.rs` does the same for
//! projects, with edits of the files they import.

use std::hash::{Hash, Hasher};
use std::rc::Rc;

use rustc_hash::FxHashMap;
use shapels_syntax::ast::{Module, TextRange};

mod items;
mod place;

pub(crate) use items::Items;
use place::{Placer, placed_record, placed_value};

use super::Pending;
use super::key::{CallKey, Part};
use crate::carry::TextReads;
use crate::interp::Interp;
use crate::record::Portable;
use crate::report::Config;
use crate::value::Value;
use crate::workspace::is_local;

/// The calls of one analysis that the analysis of the next version of the
/// file can take instead of running them (see the module comment). Only
/// valid for the configuration and coverage it was made with.
pub struct CallCache {
    entries: FxHashMap<StableKey, Rc<CarriedCall>>,
    config: Config,
    expressions: bool,
    /// How many calls the run that made this took from the last version's.
    taken: usize,
}

impl CallCache {
    /// How many calls the run that made this took from the last version's.
    pub fn taken(&self) -> usize {
        self.taken
    }

    /// How many calls it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl std::fmt::Debug for CallCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CallCache({} calls)", self.entries.len())
    }
}

/// A key piece that means the same in every run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Stable {
    Tag(u8),
    Len(usize),
    Number(u64),
    Int(i64),
    Text(Rc<str>),
    Device(Option<crate::value::Device>),
    Item(u64),
    Class(u64),
    Structure(u64),
    At(u64, usize, usize),
    Mode(u32),
}

/// A key or a value as a hash of its stable parts (foldhash's quality
/// hash, 64 bits: a file's analysis keeps hundreds of calls, so a clash is
/// not a concern).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct StableKey(u64);

/// The hasher of identities and stable keys: the same in every run.
fn stable_hasher() -> impl Hasher {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::with_seed(0x5ea1_5eed).build_hasher()
}

/// What a carried call gives and does, at the places of the version it
/// ran in.
pub(crate) struct CarriedCall {
    /// The items of the version it ran in, where its places are.
    origin: Rc<Items>,
    /// The fake modes that version's main block had made when the call
    /// ran (see `across_main_mode`).
    modes: Vec<u32>,
    result: Value,
    records: Vec<Portable>,
    reads: TextReads,
    /// The globals it read, with what each held (`None`: unbound).
    globals: Vec<(Rc<str>, Option<StableKey>)>,
    /// The same of other files, by the file's identity (see `Items`).
    foreign_globals: Vec<(u64, Rc<str>, Option<StableKey>)>,
    reached: Vec<u64>,
    forward_ran: Vec<u64>,
    definitions: Vec<(TextRange, TextRange)>,
    steps: u64,
}

/// What the run had done when a call that may be kept began.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Begun {
    reads: usize,
    steps: u64,
    reports: u64,
}

/// What a call kept by the in-run memo depended on and read, which a
/// caller taking it depends on and reads too.
#[derive(Debug)]
pub(crate) struct Traced {
    deps: Deps,
    reads: TextReads,
}

/// What a running call depends on and did, beyond its key and footprint.
#[derive(Debug, Default)]
pub(crate) struct Deps {
    globals: Vec<Rc<str>>,
    /// Globals of other files' kept top levels (see
    /// `workspace::executed`), by file.
    foreign_globals: Vec<(u32, Rc<str>)>,
    /// Functions it reached, by the address of their syntax.
    reached: Vec<usize>,
    /// Classes whose `forward` it ran, by address.
    forward_ran: Vec<usize>,
    /// Names of this file it read that another file defines, with where
    /// (see `note_definition`).
    definitions: Vec<(TextRange, TextRange)>,
    /// It did something no other run can do again (made an instance).
    unstable: bool,
}

impl Deps {
    fn merge(&mut self, other: &Deps) {
        for name in &other.globals {
            if !self.globals.contains(name) {
                self.globals.push(name.clone());
            }
        }
        for read in &other.foreign_globals {
            if !self.foreign_globals.contains(read) {
                self.foreign_globals.push(read.clone());
            }
        }
        // A caller reaching many functions reaches each many times.
        for def in &other.reached {
            if !self.reached.contains(def) {
                self.reached.push(*def);
            }
        }
        for class in &other.forward_ran {
            if !self.forward_ran.contains(class) {
                self.forward_ran.push(*class);
            }
        }
        for noted in &other.definitions {
            if !self.definitions.contains(noted) {
                self.definitions.push(*noted);
            }
        }
        self.unstable |= other.unstable;
    }
}

/// The carrying of calls of one run: what it takes from the last version,
/// and what it keeps for the next.
#[derive(Default)]
pub(crate) struct Across<'c> {
    enabled: bool,
    items: Rc<Items>,
    previous: Option<&'c CallCache>,
    /// One per call that may be kept, innermost last.
    frames: Vec<Deps>,
    next: FxHashMap<StableKey, Rc<CarriedCall>>,
    structures: FxHashMap<u32, Option<u64>>,
    classes: FxHashMap<usize, Option<u64>>,
    /// Classes being written (a method's owner is its class).
    writing: Vec<usize>,
    taken: usize,
    /// The fake modes the main block ran in (see `across_main_mode`).
    main_modes: Vec<u32>,
}

impl<'c> Interp<'c> {
    /// Keep this run's calls for the next version, and take those of
    /// `previous` (the last version's) that still hold.
    pub(crate) fn carry_calls(&mut self, module: &Module, previous: Option<&'c CallCache>) {
        let expressions = self.recorder.expressions;
        self.across = Across {
            enabled: true,
            items: Rc::new(Items::new(self.src, module, self.modules)),
            previous: previous.filter(|p| {
                p.config == self.config && p.expressions == expressions && !p.is_empty()
            }),
            ..Across::default()
        };
    }

    /// The calls this run kept (empty when it was not asked to keep any).
    pub(crate) fn carried_calls(&mut self) -> CallCache {
        let across = std::mem::take(&mut self.across);
        CallCache {
            entries: across.next,
            config: self.config.clone(),
            expressions: self.recorder.expressions,
            taken: across.taken,
        }
    }

    /// The main block runs in a fake mode of this number. Modes are numbered
    /// in the order they are made, which an edit can change; the main
    /// block's are known in every run by their order among themselves.
    pub(crate) fn across_main_mode(&mut self, id: u32) {
        self.across.main_modes.push(id);
    }

    /// A mode's number as the next version can read it: 0 for none, else
    /// one past its place among the main block's modes.
    fn stable_mode(&self, id: u32) -> Option<u32> {
        if id == 0 {
            return Some(0);
        }
        let k = self.across.main_modes.iter().position(|m| *m == id)?;
        Some(k as u32 + 1)
    }

    pub(crate) fn across_tracking(&self) -> bool {
        !self.across.frames.is_empty()
    }

    /// A running call read the global `name`.
    pub(crate) fn across_global(&mut self, name: &str) {
        if let Some(frame) = self.across.frames.last_mut()
            && !frame.globals.iter().any(|g| **g == *name)
        {
            frame.globals.push(Rc::from(name));
        }
    }

    /// A running call read the global `name` of file `file`, whose top
    /// level an earlier analysis ran and this one shares: no run changes
    /// what it holds but by a `global` statement, which the next version's
    /// check of the value sees.
    pub(crate) fn across_foreign_global(&mut self, file: u32, name: &str) {
        if let Some(frame) = self.across.frames.last_mut()
            && !frame
                .foreign_globals
                .iter()
                .any(|(f, g)| *f == file && **g == *name)
        {
            frame.foreign_globals.push((file, Rc::from(name)));
        }
    }

    /// What global `name` of file `file` holds, as a key part; `None` when
    /// the file's top level is not a shared one or the value cannot be
    /// written so.
    fn foreign_global(&mut self, file: u32, name: &str) -> Option<Option<StableKey>> {
        let ns = self
            .sys_modules
            .get(&crate::interp::imports::ModuleKey::File(file))
            .cloned()
            .or_else(|| self.modules.executed(file).map(|(ns, ..)| ns))
            .filter(|ns| ns.shared.get())?;
        let value = ns.globals.borrow().get(name).cloned();
        match value {
            Some(v) => Some(Some(self.stable_value(&v)?)),
            None => Some(None),
        }
    }

    pub(crate) fn across_reached(&mut self, def: usize) {
        // What a run that records nothing reached, no run reached.
        if self.recorder.muted > 0 {
            return;
        }
        if let Some(frame) = self.across.frames.last_mut()
            && !frame.reached.contains(&def)
        {
            frame.reached.push(def);
        }
    }

    pub(crate) fn across_forward_ran(&mut self, class: usize) {
        if self.recorder.muted > 0 {
            return;
        }
        if let Some(frame) = self.across.frames.last_mut()
            && !frame.forward_ran.contains(&class)
        {
            frame.forward_ran.push(class);
        }
    }

    /// A running call read, at `at`, a name another file defines at
    /// `target`: hover says so in every version that takes the call.
    pub(crate) fn across_definition(&mut self, at: TextRange, target: TextRange) {
        if let Some(frame) = self.across.frames.last_mut()
            && !frame.definitions.contains(&(at, target))
        {
            frame.definitions.push((at, target));
        }
    }

    /// A running call did something another run cannot repeat.
    pub(crate) fn across_unstable(&mut self) {
        if let Some(frame) = self.across.frames.last_mut() {
            frame.unstable = true;
        }
    }

    /// A call of the in-run memo was taken: what it depended on, its
    /// caller depends on.
    pub(super) fn across_repeat(&mut self, traced: &Traced) {
        // Only a call being kept needs them: the first run already read
        // the text and reached the functions for this run.
        if let Some(frame) = self.across.frames.last_mut() {
            frame.merge(&traced.deps);
            self.reads.borrow_mut().extend(&traced.reads);
        }
    }

    /// A call that may be kept starts.
    pub(super) fn across_begin(&mut self) -> Option<Begun> {
        if !self.across.enabled {
            return None;
        }
        self.across.frames.push(Deps::default());
        Some(Begun {
            reads: self.reads.borrow().len(),
            steps: self.steps,
            reports: self.reports,
        })
    }

    /// The call's key, and what the last version's run of it gives when it
    /// holds: its records, reads and reached functions are done again.
    pub(super) fn across_take(
        &mut self,
        key: &CallKey,
    ) -> (Option<StableKey>, Option<(Value, Rc<CarriedCall>)>) {
        let Some(previous) = self.across.previous else {
            return (None, None);
        };
        let Some(stable) = self.stable_key(key) else {
            return (None, None);
        };
        let Some(call) = previous.entries.get(&stable).cloned() else {
            return (Some(stable), None);
        };
        let taken = self.take_carried(&call);
        (Some(stable), taken.map(|v| (v, call)))
    }

    fn take_carried(&mut self, call: &CarriedCall) -> Option<Value> {
        for (name, held) in &call.globals {
            let now = self.globals.borrow().get(name).cloned();
            let now = match now {
                Some(v) => Some(self.stable_value(&v)?),
                None => None,
            };
            if now != *held {
                return None;
            }
        }
        for (identity, name, held) in &call.foreign_globals {
            let file = self.across.items.file_id(*identity)?;
            if self.foreign_global(file, name)? != *held {
                return None;
            }
        }
        let new = &self.across.items;
        let range = |r: &TextRange| new.place(call.origin.anchor(r)?);
        let main_modes = &self.across.main_modes;
        let mode = |m: u32| {
            if m == 0 {
                return Some(0);
            }
            let k = call.modes.iter().position(|old| *old == m)?;
            main_modes.get(k).copied()
        };
        let place = Placer {
            range: &range,
            mode: &mode,
        };
        let result = placed_value(&call.result, &place)?;
        let records = call
            .records
            .iter()
            .map(|r| placed_record(r, &place))
            .collect::<Option<Vec<_>>>()?;
        let reads = call.reads.placed(range)?;
        let definitions = call
            .definitions
            .iter()
            .map(|(at, target)| Some((range(at)?, range(target)?)))
            .collect::<Option<Vec<_>>>()?;
        let reached = call
            .reached
            .iter()
            .map(|identity| new.def_of_identity(*identity))
            .collect::<Option<Vec<_>>>()?;
        let forward_ran = call
            .forward_ran
            .iter()
            .map(|identity| {
                self.classes
                    .iter()
                    .find(|c| {
                        c.def
                            .as_ref()
                            .and_then(|d| new.identity_of_def(Rc::as_ptr(d) as usize))
                            == Some(*identity)
                    })
                    .map(|c| Rc::as_ptr(c) as usize)
            })
            .collect::<Option<Vec<_>>>()?;
        self.recorder.record_portable(records);
        self.reads.borrow_mut().extend(&reads);
        for def in reached {
            self.reached.insert(def);
            self.across_reached(def);
        }
        for class in forward_ran {
            self.forward_ran.insert(class);
            self.across_forward_ran(class);
        }
        for (name, _) in &call.globals {
            self.across_global(name);
        }
        for (at, target) in definitions {
            self.definitions.push((at, target));
            self.across_definition(at, target);
        }
        for (identity, name, _) in &call.foreign_globals {
            if let Some(file) = self.across.items.file_id(*identity) {
                self.across_foreign_global(file, name);
            }
        }
        self.steps += call.steps;
        self.across.taken += 1;
        Some(result)
    }

    /// A call that may be kept ended; `kept` is the in-run memo entry made
    /// of it, if any. Keeps it for the next version when it can be.
    pub(super) fn across_finish(
        &mut self,
        pending: &Pending,
        kept: Option<(&Value, std::ops::Range<usize>)>,
    ) -> Option<Rc<Traced>> {
        let begun = pending.across?;
        let mut deps = self.across.frames.pop().unwrap_or_default();
        // A report that repeats one made before adds no diagnostic, but
        // the next version's run must make it.
        deps.unstable |= self.reports != begun.reports;
        if let Some(parent) = self.across.frames.last_mut() {
            parent.merge(&deps);
        }
        let reads = self.reads.borrow().since(begun.reads);
        if let Some((result, recorded)) = kept
            && !deps.unstable
        {
            match (&pending.taken, pending.stable) {
                // Taken from the last version: it holds as it was.
                (Some(call), Some(stable)) => {
                    self.across.next.insert(stable, call.clone());
                }
                _ => {
                    let steps = self.steps - begun.steps;
                    self.keep_carried(pending, result, recorded, &deps, &reads, steps);
                }
            }
        }
        Some(Rc::new(Traced { deps, reads }))
    }

    fn keep_carried(
        &mut self,
        pending: &Pending,
        result: &Value,
        recorded: std::ops::Range<usize>,
        deps: &Deps,
        reads: &TextReads,
        steps: u64,
    ) -> Option<()> {
        let stable = match pending.stable {
            Some(s) => s,
            None => self.stable_key(&pending.key)?,
        };
        let items = &self.across.items;
        let anchored = |r: &TextRange| items.anchor(r).map(|_| *r);
        let mode = |m: u32| self.stable_mode(m).map(|_| m);
        let place = Placer {
            range: &anchored,
            mode: &mode,
        };
        placed_value(result, &place)?;
        let records = self.recorder.portable(recorded)?;
        for r in &records {
            placed_record(r, &place)?;
        }
        let reads = reads.placed(anchored)?;
        for (at, target) in &deps.definitions {
            anchored(at)?;
            anchored(target)?;
        }
        let reached = deps
            .reached
            .iter()
            .filter_map(|def| self.across.items.identity_of_def(*def))
            .collect();
        let forward_ran = deps
            .forward_ran
            .iter()
            .map(|addr| {
                let class = self
                    .classes
                    .iter()
                    .find(|c| Rc::as_ptr(c) as usize == *addr)?;
                let def = class.def.as_ref()?;
                self.across.items.identity_of_def(Rc::as_ptr(def) as usize)
            })
            .collect::<Option<Vec<_>>>()?;
        let mut globals = Vec::with_capacity(deps.globals.len());
        for name in &deps.globals {
            let value = self.globals.borrow().get(name).cloned();
            let held = match value {
                Some(v) => Some(self.stable_value(&v)?),
                None => None,
            };
            globals.push((name.clone(), held));
        }
        let mut foreign_globals = Vec::with_capacity(deps.foreign_globals.len());
        for (file, name) in &deps.foreign_globals {
            let identity = self.across.items.file_identity(*file)?;
            let held = self.foreign_global(*file, name)?;
            foreign_globals.push((identity, name.clone(), held));
        }
        self.across.next.insert(
            stable,
            Rc::new(CarriedCall {
                origin: self.across.items.clone(),
                modes: self.across.main_modes.clone(),
                result: result.clone(),
                records,
                reads,
                globals,
                foreign_globals,
                reached,
                forward_ran,
                definitions: deps.definitions.clone(),
                steps,
            }),
        );
        Some(())
    }

    fn stable_key(&mut self, key: &CallKey) -> Option<StableKey> {
        let mut hasher = stable_hasher();
        u8::from(self.recorder.made_up).hash(&mut hasher);
        u8::from(self.recorder.only_new_sites).hash(&mut hasher);
        for part in &key.parts.parts {
            self.stable_part(part)?.hash(&mut hasher);
        }
        Some(StableKey(hasher.finish()))
    }

    fn stable_value(&mut self, v: &Value) -> Option<StableKey> {
        let parts = self.value_parts(v)?;
        let mut hasher = stable_hasher();
        for part in &parts {
            self.stable_part(part)?.hash(&mut hasher);
        }
        Some(StableKey(hasher.finish()))
    }

    fn stable_part(&mut self, part: &Part) -> Option<Stable> {
        Some(match part {
            Part::Tag(t) => Stable::Tag(*t),
            Part::Len(n) => Stable::Len(*n),
            Part::Number(n) => Stable::Number(*n),
            Part::Text(t) => Stable::Text(t.clone()),
            Part::Device(d) => Stable::Device(d.clone()),
            Part::Dim(d) => Stable::Int(d.as_const()?),
            Part::Object(n) => Stable::Structure(self.structure_id(*n)?),
            Part::Def(addr, start) => self.stable_def(*addr, *start)?,
            Part::Class(addr) => Stable::Class(self.class_id(*addr)?),
            Part::Var(_) => return None,
            Part::Mode(m) => Stable::Mode(self.stable_mode(*m)?),
            Part::At(start, end) => {
                let (identity, start, end) =
                    self.across.items.anchor(&TextRange::new(*start, *end))?;
                Stable::At(identity, start, end)
            }
        })
    }

    /// A definition of this file as its item; one of another file as
    /// where it starts in that file's version.
    fn stable_def(&self, addr: usize, start: usize) -> Option<Stable> {
        let items = &self.across.items;
        if is_local(&TextRange::empty(start)) {
            return Some(Stable::Item(items.identity_of_def(addr)?));
        }
        let (file, at, _) = items.anchor(&TextRange::empty(start))?;
        Some(Stable::At(file, at, at))
    }

    /// A structure the memo numbered, as a hash of what it is made of.
    fn structure_id(&mut self, number: u32) -> Option<u64> {
        if let Some(id) = self.across.structures.get(&number) {
            return *id;
        }
        let body = self.memo_structure(number);
        let id = body.and_then(|body| {
            let mut hasher = stable_hasher();
            for part in &body.parts {
                self.stable_part(part)?.hash(&mut hasher);
            }
            Some(hasher.finish())
        });
        self.across.structures.insert(number, id);
        id
    }

    /// A class as its item, its bases and its attributes (methods by item,
    /// values by content); `None` when one of them cannot be written so.
    fn class_id(&mut self, addr: usize) -> Option<u64> {
        if let Some(id) = self.across.classes.get(&addr) {
            return *id;
        }
        // A method's owner is the class being written: it is written as
        // such, not again.
        if self.across.writing.contains(&addr) {
            return Some(0);
        }
        let class = self.memo_class(addr)?;
        self.across.writing.push(addr);
        let id = (|| {
            let mut parts = Vec::new();
            match &class.def {
                Some(def) => {
                    parts.push(self.stable_def(Rc::as_ptr(def) as usize, def.range.start)?)
                }
                None => parts.push(Stable::Text(class.name.clone())),
            }
            parts.push(Stable::Tag(u8::from(class.is_dataclass)));
            for base in &class.bases {
                parts.push(Stable::Number(self.stable_value(base)?.0));
            }
            let mut attrs = crate::value::object_entries(&class.attrs);
            attrs.sort_by(|a, b| a.0.cmp(&b.0));
            for (name, value) in &attrs {
                // A container could change after the class was made.
                if holds_mutable(value, 0) {
                    return None;
                }
                parts.push(Stable::Text(name.clone()));
                parts.push(Stable::Number(self.stable_value(value)?.0));
            }
            let mut hasher = stable_hasher();
            parts.hash(&mut hasher);
            Some(hasher.finish())
        })();
        self.across.writing.pop();
        self.across.classes.insert(addr, id);
        id
    }
}

/// Whether a class attribute holds something that can change in place.
fn holds_mutable(v: &Value, depth: u32) -> bool {
    match v {
        Value::List(_) | Value::Dict(_) | Value::Instance(_) | Value::Layer(_) => true,
        Value::Tuple(items) => depth > 8 || items.iter().any(|i| holds_mutable(i, depth + 1)),
        _ => false,
    }
}
