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

use std::rc::Rc;

use rustc_hash::FxHashMap;
use shapels_shapes::{Dim, SymId};

use super::Interp;
use super::call::Kwargs;
use crate::record::Recorded;
use crate::value::{Function, Shape, Tensor, Value};

mod across;
mod key;
mod unseen;

pub(crate) use across::Across;
pub use across::CallCache;
use across::{StableKey, Traced};
use key::{CallKey, Parts};
use unseen::UnseenMark;
pub(crate) use unseen::UnseenWrites;

/// The calls made so far and the structure of the objects they were made on.
#[derive(Default)]
pub(crate) struct Memo {
    entries: FxHashMap<CallKey, Entry>,
    /// Per object (by address), its structure's number at an epoch; the
    /// value is held so that the address is not reused meanwhile.
    objects: FxHashMap<usize, (crate::mutation::Epoch, u32, Value)>,
    /// Structures by number: objects built alike get the same number.
    structures: FxHashMap<Rc<Parts>, u32>,
    /// The same, by number.
    bodies: Vec<Rc<Parts>>,
    /// The classes keys name, by address.
    classes: FxHashMap<usize, Rc<crate::value::Class>>,
    /// Per function definition (by address), how many of its runs in a row
    /// returned a list, dict or object, which is never kept. A definition
    /// that builds one on every call (`_make_layer`, `make_layers`) is not
    /// keyed again after `BUILDER_RUNS` of them: its key walks the whole
    /// half-built model it is called on, for a result that cannot be kept.
    /// Not keying a call only runs it, as a call that misses does.
    builders: FxHashMap<usize, u32>,
}

/// How many runs in a row with a result that cannot be kept make a
/// function definition a builder (see `Memo::builders`).
const BUILDER_RUNS: u32 = 2;

/// The analysis state a body can read beyond its inputs; a result holds
/// while these are the same and no instance older than the call was
/// written unseen (see `unseen`). New symbols, rank variables and modes
/// are not in it: making one says nothing about the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    facts: usize,
    epoch: crate::mutation::Epoch,
    globals_epoch: u64,
    tail_vars: usize,
    var_dims: usize,
    opaque_syms: usize,
    opaque_numbers: usize,
}

/// Everything a call can change; a call that changed none of it but the
/// number of symbols can be skipped when it repeats (its repeat makes as
/// many new symbols).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Footprint {
    stamp: Stamp,
    unseen: UnseenMark,
    pub(crate) symbols: usize,
    rank_vars: usize,
    modes: u32,
    diagnostics: usize,
    cuts: u64,
}

impl Footprint {
    /// Whether `now` differs from this earlier footprint in nothing but
    /// the number of symbols (and, unless `globals`, the globals' epoch),
    /// writes to unseen instances aside (see `Interp::unchanged_but_symbols`).
    fn same_but_symbols(&self, now: &Footprint, globals: bool) -> bool {
        let mut stamp = now.stamp;
        if !globals {
            stamp.globals_epoch = self.stamp.globals_epoch;
        }
        (stamp, now.rank_vars, now.modes, now.diagnostics, now.cuts)
            == (
                self.stamp,
                self.rank_vars,
                self.modes,
                self.diagnostics,
                self.cuts,
            )
    }
}

struct Entry {
    stamp: Stamp,
    unseen: UnseenMark,
    result: Value,
    /// What the call recorded: a range of the recorder's journal.
    recorded: std::ops::Range<usize>,
    /// The symbols the call made, by number: a repeat makes new ones.
    minted: std::ops::Range<u32>,
    /// The inputs, held so that no address in the key is reused by
    /// another object while the entry exists.
    _inputs: Vec<Value>,
    /// When calls are carried across versions: what the call depended on
    /// and read.
    traced: Option<Rc<Traced>>,
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
    /// When calls are carried to the next version (`across`): what the run
    /// had done when the call began.
    across: Option<across::Begun>,
    /// The key as the next version can read it, once worked out.
    stable: Option<StableKey>,
    /// The last version's run of the call, when it was taken from there.
    taken: Option<Rc<across::CarriedCall>>,
}

impl Interp<'_> {
    fn stamp(&self) -> Stamp {
        Stamp {
            facts: self.env.facts(),
            epoch: self.epoch,
            globals_epoch: self.globals_epoch,
            tail_vars: self.tail_vars.len(),
            var_dims: self.var_dims.len(),
            opaque_syms: self.opaque_syms.len(),
            opaque_numbers: self.opaque_numbers.len(),
        }
    }

    pub(crate) fn footprint(&self) -> Footprint {
        Footprint {
            stamp: self.stamp(),
            unseen: self.unseen.mark(),
            symbols: self.env.generation() - self.env.facts(),
            rank_vars: self.rank_vars.len(),
            modes: self.next_mode_id,
            diagnostics: self.diagnostics.len(),
            cuts: self.cuts,
        }
    }

    /// Whether nothing a call could read changed since `before` but the
    /// number of symbols (and, unless `globals`, the globals): instances
    /// made since may have been filled in, which nothing before could read.
    pub(crate) fn unchanged_but_symbols(&self, before: &Footprint, globals: bool) -> bool {
        before.same_but_symbols(&self.footprint(), globals)
            && !self.unseen.older_written_since(&before.unseen)
    }

    /// Whether an object, a class, a rank variable or (unless `globals`
    /// are the names of the code asking, which watches them itself) a
    /// global that existed at `before` was written since: a write no undo
    /// can take back.
    pub(crate) fn heap_written_since(&self, before: &Footprint, globals: bool) -> bool {
        let now = self.stamp();
        now.epoch != before.stamp.epoch
            || self.unseen.older_written_since(&before.unseen)
            || (globals && now.globals_epoch != before.stamp.globals_epoch)
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
        // A summary wants every module call run, to see each layer's output;
        // a run that records nothing cannot give a repeat what to record.
        // Nor can a function's own run, which records its own lines only.
        if self.summary.is_some() || self.recorder.muted > 0 || self.recorder.own_only.is_some() {
            return Lookup::Run(None);
        }
        let def = Rc::as_ptr(&f.def) as usize;
        if self
            .memo
            .builders
            .get(&def)
            .is_some_and(|runs| *runs >= BUILDER_RUNS)
        {
            return Lookup::Run(None);
        }
        let Some(key) = self.call_key(f, receiver, args, kwargs, open) else {
            return Lookup::Run(None);
        };
        let stamp = self.stamp();
        if let Some(entry) = self.memo.entries.get(&key)
            && entry.stamp == stamp
            && !self.unseen.older_written_since(&entry.unseen)
        {
            let result = entry.result.clone();
            let recorded = entry.recorded.clone();
            let minted = entry.minted.clone();
            if let Some(traced) = entry.traced.clone() {
                self.across_repeat(&traced);
            }
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
        let mut pending = Pending {
            key,
            inputs,
            before: self.footprint(),
            mark: self.recorder.begin_capture(),
            across: self.across_begin(),
            stable: None,
            taken: None,
        };
        if pending.across.is_some() {
            let (stable, taken) = self.across_take(&pending.key);
            pending.stable = stable;
            if let Some((result, call)) = taken {
                pending.taken = Some(call);
                self.memo_finish(Some(pending), &result);
                return Lookup::Earlier(result);
            }
        }
        Lookup::Run(Some(pending))
    }

    /// After running a call: keep its result when running it again would
    /// give the same and change nothing.
    pub(crate) fn memo_finish(&mut self, pending: Option<Pending>, result: &Value) {
        let Some(p) = pending else { return };
        let recorded = self.recorder.end_capture(p.mark);
        let after = self.footprint();
        let plain = self.count_builder_runs(&p, result);
        let clean = self.unchanged_but_symbols(&p.before, true) && !self.out_of_budget() && plain;
        let recorded = recorded.filter(|_| clean);
        // Only a call that made no symbols can be read in another run.
        let carried = recorded
            .clone()
            .filter(|_| after.symbols == p.before.symbols)
            .map(|r| (result, r));
        let traced = self.across_finish(&p, carried);
        if let Some(recorded) = recorded {
            self.memo.entries.insert(
                p.key,
                Entry {
                    stamp: p.before.stamp,
                    unseen: p.before.unseen,
                    result: result.clone(),
                    recorded,
                    minted: p.before.symbols as u32..after.symbols as u32,
                    _inputs: p.inputs,
                    traced,
                },
            );
        }
    }

    /// Whether `result` is plain data (see `is_plain`), counting the runs in
    /// a row of the called definition that were not (see `Memo::builders`).
    fn count_builder_runs(&mut self, p: &Pending, result: &Value) -> bool {
        let plain = is_plain(result, 0);
        if let Some(Value::Function(f)) = p.inputs.first() {
            let def = Rc::as_ptr(&f.def) as usize;
            if plain {
                self.memo.builders.remove(&def);
            } else {
                *self.memo.builders.entry(def).or_default() += 1;
            }
        }
        plain
    }

    /// Forget the calls whose records are in the journal from `len` on,
    /// which is about to be cut there (see `interp::induction`).
    pub(crate) fn memo_forget_journal_from(&mut self, len: usize) {
        self.memo.entries.retain(|_, e| e.recorded.end <= len);
    }

    fn memo_structure(&self, number: u32) -> Option<Rc<Parts>> {
        self.memo.bodies.get(number as usize).cloned()
    }

    fn memo_class(&self, addr: usize) -> Option<Rc<crate::value::Class>> {
        self.memo.classes.get(&addr).cloned()
    }
}

/// New symbols in place of those a call made the first time it ran.
pub(crate) struct Renaming {
    /// The number of the first symbol the first run made; they are
    /// consecutive.
    first: u32,
    fresh: Vec<Dim>,
}

impl Renaming {
    /// Consecutive symbols from `first` on replaced by expressions (a
    /// loop's turn by its number, the symbols the turn made by new ones).
    pub(crate) fn from(first: SymId, fresh: Vec<Dim>) -> Renaming {
        Renaming {
            first: first.0,
            fresh,
        }
    }

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
        let end = self.first + self.fresh.len() as u32;
        if !d.mentions(&|id| (self.first..end).contains(&id.0)) {
            return d.clone();
        }
        // A loop's turn replaced by its number leaves a number.
        if let Some(n) = d.eval(&|id| self.symbol(id)?.as_const()) {
            return Dim::konst(n);
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
    pub(crate) fn value(&self, v: &Value) -> Value {
        match v {
            Value::Int(d) => Value::Int(self.dim(d)),
            Value::SizeOfVar(var, dims) => Value::SizeOfVar(*var, self.dims(dims)),
            Value::Tensor(t) => Value::Tensor(self.tensor(t)),
            Value::Range(a, b, c) => Value::Range(self.dim(a), self.dim(b), self.dim(c)),
            Value::Tuple(items) => Value::tuple(items.iter().map(|i| self.value(i)).collect()),
            Value::OpenTuple(items) => {
                Value::OpenTuple(Rc::new(items.iter().map(|i| self.value(i)).collect()))
            }
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

    /// Whether a recorded entry holds a size with a replaced symbol.
    pub(crate) fn touches(&self, r: &Recorded) -> bool {
        let end = self.first + self.fresh.len() as u32;
        let hit = |d: &Dim| d.mentions(&|id| (self.first..end).contains(&id.0));
        let dims = |t: &Tensor| match &t.shape {
            Shape::Known(d) | Shape::Tail(_, d) => d.iter().any(hit),
            Shape::Var(_) => false,
        };
        match r {
            Recorded::Binding(_, _, t) | Recorded::Expression(_, _, _, t) => dims(t),
            Recorded::Scalar(_, d, _) | Recorded::Pattern(_, _, _, d) => hit(d),
            _ => false,
        }
    }

    /// `recorded`, renaming each tensor once however many entries hold it
    /// (`renamed` keeps them by address), so that entries sharing a tensor
    /// still share it.
    pub(crate) fn recorded_shared(
        &self,
        r: &Recorded,
        renamed: &mut FxHashMap<usize, Rc<Tensor>>,
    ) -> Recorded {
        let mut tensor = |t: &Rc<Tensor>| {
            renamed
                .entry(Rc::as_ptr(t) as usize)
                .or_insert_with(|| self.tensor(t))
                .clone()
        };
        match r {
            Recorded::Binding(site, call, t) => Recorded::Binding(*site, *call, tensor(t)),
            Recorded::Expression(start, end, call, t) => {
                Recorded::Expression(*start, *end, *call, tensor(t))
            }
            other => self.recorded(other.clone()),
        }
    }

    pub(crate) fn recorded(&self, r: Recorded) -> Recorded {
        match r {
            Recorded::Binding(site, call, t) => Recorded::Binding(site, call, self.tensor(&t)),
            Recorded::Expression(start, end, call, t) => {
                Recorded::Expression(start, end, call, self.tensor(&t))
            }
            Recorded::Scalar(site, d, kind) => Recorded::Scalar(site, self.dim(&d), kind),
            Recorded::Pattern(at, name, kind, d) => Recorded::Pattern(at, name, kind, self.dim(&d)),
            other @ (Recorded::Unknown(..)
            | Recorded::Annotation(..)
            | Recorded::UnknownReason(..)
            | Recorded::Reached(..)) => other,
        }
    }
}

/// Data a caller cannot change in place: safe to hand out twice.
pub(crate) fn is_plain(v: &Value, depth: u32) -> bool {
    if depth > 16 {
        return false;
    }
    match v {
        Value::Unknown
        | Value::None
        | Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Complex
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
        Value::Tuple(items) | Value::OpenTuple(items) => {
            items.iter().all(|i| is_plain(i, depth + 1))
        }
        Value::Optional(inner) => is_plain(inner, depth + 1),
        Value::Many(element, _) => is_plain(element, depth + 1),
        Value::Slice(a, b, c) => [a, b, c].iter().all(|x| is_plain(x, depth + 1)),
        Value::List(_)
        | Value::Dict(_)
        | Value::Layer(_)
        | Value::Instance(_)
        | Value::Class(_)
        | Value::Module(_)
        | Value::Either(_)
        | Value::Members(_)
        | Value::Function(_)
        | Value::BoundMethod(..)
        | Value::BuiltinMethod(..)
        | Value::Partial(_)
        | Value::Super(..)
        | Value::FakeMode { .. } => false,
    }
}
