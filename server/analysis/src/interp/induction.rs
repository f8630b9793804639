//! Loops of many turns run once for all of them: a proof by induction that
//! every turn does what the run of a symbolic turn did.
//!
//! A sampling loop (`for _ in range(max_new_tokens): ... idx = torch.cat((idx,
//! nxt), dim=1)`) runs the whole model once per turn, and every turn differs
//! only in a size that grows by one. Running its sixteen turns one by one
//! is most of what a keystroke in such a file costs, and past 64 turns the
//! analysis could only call it a loop of unknown length. Instead, after the
//! first turn has run as usual:
//!
//! 1. each name the first turn changed is written as a function of the turn
//!    `t` (`idx: [1, 1 + t]`), from its values before and after that turn;
//! 2. one turn runs with those values and `t` a symbol known to lie in
//!    `1..=n-1` (comparisons that every turn decides alike are decided);
//! 3. the run holds for every turn when it went the same way whatever `t`
//!    is (no condition on the turn's sizes left undecided), changed nothing
//!    but the loop's own names (no object, global, fact or diagnostic),
//!    made as many symbols as the first turn (a mask's count of true
//!    elements, which every turn makes), and left each name it read before
//!    writing as the next turn's formula (`[1, 1 + (t + 1)]`).
//!
//! Then what the turn recorded is recorded once per turn with `t` replaced
//! by the turn's number (and the symbols it made by new ones), and the loop
//! ends with the names the last turn leaves: exactly what running every
//! turn gives (`tests/loops_at_once.rs` holds the two to the same output).
//! When the run does not hold, all it did is taken back and the loop goes
//! on turn by turn, as before. Which names a turn reads is watched as it
//! runs (`Trial`), so a name read through a closure, or a global read by a
//! function the loop calls, counts too.

use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};
use shapels_shapes::{Dim, SymId};
use shapels_syntax::ast::{Expr, ExprKind, Stmt, StmtKind};

use super::memo::{Renaming, is_plain};
use super::{Flow, Interp, MAX_LOOP_ITERATIONS};
use crate::report::BindingKind;
use crate::value::{Scope, Shape, Tensor, Value};

/// Loops of fewer turns run turn by turn: the symbolic turn and the
/// checks cost about two turns.
const MIN_TURNS: usize = 4;

/// Loops of more turns run as loops of unknown length: a loop run at once
/// still records each of its turns.
const MAX_LONG_TURNS: usize = 4096;

/// The loop's names a symbolic turn reads and writes (see the module
/// comment), watched by `Interp::lookup` and `Interp::bind_name`.
pub(crate) struct Trial {
    /// The address of the scope the loop's names are in.
    scope: usize,
    written: FxHashSet<Rc<str>>,
    /// Names read before the turn wrote them: their values came from the
    /// turn before.
    read_first: FxHashSet<Rc<str>>,
}

impl Trial {
    pub(crate) fn runs_in(&self, scope: &Scope) -> bool {
        Rc::as_ptr(scope) as usize == self.scope
    }

    pub(crate) fn read(&mut self, name: &str) {
        if !self.written.contains(name) && !self.read_first.contains(name) {
            self.read_first.insert(Rc::from(name));
        }
    }

    pub(crate) fn wrote(&mut self, name: &Rc<str>) {
        self.written.insert(name.clone());
    }
}

/// A loop whose turns may run all at once: `count` turns over the ints
/// `first + turn * step`.
pub(super) struct Plan {
    count: usize,
    first: i64,
    step: i64,
}

impl Plan {
    /// The loop's first int.
    pub(super) fn first(&self) -> i64 {
        self.first
    }
}

/// What became of the loop.
pub(super) enum Induction {
    /// Every turn ran: the loop's names are what the last turn leaves.
    Done,
    /// The turns must run one by one; the names are as the first turn left
    /// them.
    OneByOne,
}

impl Interp<'_> {
    /// A condition on these sizes is undecided: when one of them is the
    /// turn of a loop run all at once, the turns do not all go one way and
    /// the run stops (see `abandoned`). Returns whether it did.
    pub(crate) fn undecided_by_turn(&mut self, sizes: &[&Dim]) -> bool {
        if self.trial.is_some() && sizes.iter().any(|d| self.env.mentions_bounded(d)) {
            self.abandoned = true;
        }
        self.abandoned
    }

    /// Whether a loop with this body may run its turns all at once: not
    /// inside another such run, and a body that defines, deletes or
    /// declares no name (which would read or write names unseen).
    fn may_run_at_once(&self, body: &[Stmt]) -> bool {
        self.trial.is_none() && self.summary.is_none() && body.iter().all(plain_statement)
    }

    /// Whether the loop over `items` with this body may run its turns all
    /// at once: enough turns over evenly spaced ints, in an analysis that
    /// keeps no chains of ops (see `may_run_at_once`).
    pub(super) fn induction_plan(&mut self, items: &[Value], body: &[Stmt]) -> Option<Plan> {
        if items.len() < MIN_TURNS
            || items.len() > MAX_LOOP_ITERATIONS
            || !crate::loops_at_once()
            // Hover's analysis keeps the chain of ops that made each tensor,
            // one link per turn: it runs every turn it can.
            || self.recorder.expressions
            || !self.may_run_at_once(body)
        {
            return None;
        }
        let int = |v: &Value| match v {
            Value::Int(d) => d.as_const(),
            _ => None,
        };
        let first = int(&items[0])?;
        let step = int(&items[1])? - first;
        let even = items
            .iter()
            .enumerate()
            .all(|(k, v)| int(v) == Some(first + k as i64 * step));
        even.then_some(Plan {
            count: items.len(),
            first,
            step,
        })
    }

    /// A loop over a `range` longer than the analysis runs turn by turn:
    /// it may still run at once (see `may_run_at_once`), when its body
    /// writes no list, dict, attribute or item itself. Should it run at once
    /// only in part, the loop is one of unknown length from after its first
    /// turn, and a list its first turn had filled could no longer be counted
    /// (`layers.append(...)` 70 times makes 70 layers).
    pub(super) fn long_range_plan(&mut self, iterable: &Value, body: &[Stmt]) -> Option<Plan> {
        let Value::Range(start, stop, step) = iterable else {
            return None;
        };
        let (first, stop, step) = (start.as_const()?, stop.as_const()?, step.as_const()?);
        let count = usize::try_from(super::expr::range_len(first, stop, step)?).ok()?;
        (count > MAX_LOOP_ITERATIONS
            && count <= MAX_LONG_TURNS
            && self.may_run_at_once(body)
            && !body.iter().any(writes_in_place))
        .then_some(Plan { count, first, step })
    }

    /// After the first turn of a planned loop: run the remaining turns at
    /// once when that holds (see the module comment). `before` is the
    /// names before the first turn.
    pub(super) fn run_turns_at_once(
        &mut self,
        plan: &Plan,
        target: &Expr,
        body: &[Stmt],
        before: &FxHashMap<Rc<str>, Value>,
        first_turn: &super::memo::Footprint,
    ) -> Induction {
        // A first turn that wrote an object or a global may write it again
        // in every turn, which no formula of the loop's names says.
        // At the top level the loop's names are the globals, whose writes
        // the trial watches itself (`Trial`).
        let globals = !self.frame().is_module;
        if self.heap_written_since(first_turn, globals) || self.out_of_budget() {
            return Induction::OneByOne;
        }
        let after_first = self.snapshot_locals();
        let turn = self.env.anonymous();
        let Some(turn_symbol) = turn.as_sym() else {
            return Induction::OneByOne;
        };
        let last = plan.count as i64 - 1;
        // The names at the start of turn `t`, and the names no formula is
        // known for (a name the first turn made: its value at the start of
        // a later turn is the turn before's).
        let mut formulas: FxHashMap<Rc<str>, Value> = FxHashMap::default();
        let mut unknown_at_start: FxHashSet<Rc<str>> = FxHashSet::default();
        for (name, now) in &after_first {
            match before
                .get(name)
                .and_then(|was| self.generalize(was, now, &turn))
            {
                Some(formula) => {
                    formulas.insert(name.clone(), formula);
                }
                None => {
                    unknown_at_start.insert(name.clone());
                }
            }
        }
        let mut start = after_first.clone();
        for (name, formula) in &formulas {
            start.insert(name.clone(), formula.clone());
        }

        let state = self.footprint();
        let deferred = self.recorder.begin_deferring();
        let diagnostics = self.diagnostics.len();
        let fixes = self.offered_fixes.len();
        let guards = self.env.guard_mark();
        let appends = self.loop_appends.len();
        let (raised, early) = {
            let frame = self.frame();
            (frame.raised, frame.early_returns.len())
        };
        let instances: Vec<(usize, usize)> = self
            .instances
            .iter()
            .map(|(class, made)| (*class, made.len()))
            .collect();
        // As many symbols as the first turn made (a mask's count of true
        // elements): more would be sizes the symbolic turn could not tell
        // (the elements of a loop over `range(t)`).
        let first_minted = state.symbols - 1 - first_turn.symbols;
        self.rank_journals.push(Vec::new());
        self.env.open_branch();
        self.env.bound(turn_symbol, 1, last);
        self.restore_locals(start);
        self.trial = Some(Box::new(Trial {
            scope: Rc::as_ptr(&self.frame().locals) as usize,
            written: FxHashSet::default(),
            read_first: FxHashSet::default(),
        }));
        let item = Dim::konst(plan.first).add(&turn.mul(&Dim::konst(plan.step)));
        self.assign(target, Value::Int(item), BindingKind::For);
        let flow = self.exec_block(body);

        let trial = self.trial.take().expect("the trial began above");
        let abandoned = std::mem::take(&mut self.abandoned);
        let learned = self.env.close_branch();
        let ranks = self.rank_journals.pop().unwrap_or_default();
        self.drop_branch_adoptions();
        let entries = self.recorder.end_deferring(&deferred);
        self.memo_forget_journal_from(deferred.journal_len());
        let after_turn = self.snapshot_locals();
        let same_frame = {
            let frame = self.frame();
            frame.raised == raised && frame.early_returns.len() == early
        };
        // The symbols the turn made (a mask's count of true elements):
        // each turn makes its own.
        let minted = state.symbols..self.footprint().symbols;
        let holds = !abandoned
            && minted.len() == first_minted
            && matches!(flow, Flow::Normal | Flow::Continue)
            && self.unchanged_but_symbols(&state, globals)
            && !self.out_of_budget()
            && ranks.is_empty()
            && same_frame
            && self.loop_appends.len() == appends
            && self.instances.values().map(Vec::len).sum::<usize>()
                == instances.iter().map(|(_, n)| n).sum::<usize>()
            && self.carries_over(&trial, &formulas, &unknown_at_start, &after_turn, &turn);
        match entries {
            Some(entries) if holds => {
                // The turn's own symbols are the last turn's; every other
                // turn makes new ones, as running it would.
                let made: Vec<Dim> = minted
                    .clone()
                    .map(|id| Dim::sym(SymId(id as u32)))
                    .collect();
                let renaming = |interp: &mut Self, k: i64| {
                    let fresh = std::iter::once(Dim::konst(k));
                    let fresh: Vec<Dim> = if k == last {
                        fresh.chain(made.iter().cloned()).collect()
                    } else {
                        let reminted: Vec<Dim> = minted
                            .clone()
                            .map(|id| interp.env.remint(SymId(id as u32)))
                            .collect();
                        fresh.chain(reminted).collect()
                    };
                    Renaming::from(turn_symbol, fresh)
                };
                // Which entries hold the turn or its symbols is the same for
                // every turn; the others are recorded as they are.
                let touched: Vec<bool> = {
                    let any = renaming(self, last);
                    entries.iter().map(|r| any.touches(r)).collect()
                };
                for k in 1..=last {
                    let renaming = renaming(self, k);
                    let mut renamed = FxHashMap::default();
                    self.recorder.record_turn(&entries, |i, r| {
                        if touched[i] {
                            renaming.recorded_shared(r, &mut renamed)
                        } else {
                            r.clone()
                        }
                    });
                }
                let at_end = renaming(self, last);
                let mut end = after_first;
                for (name, value) in after_turn {
                    if trial.written.contains(&name) {
                        end.insert(name, at_end.value(&value));
                    }
                }
                self.env.unbound();
                self.restore_locals(end);
                crate::count_loop_run_at_once();
                Induction::Done
            }
            _ if self.heap_written_since(&state, globals) => {
                // The run wrote what cannot be taken back: it stands, as a
                // turn of a loop of unknown length does, for any turn.
                self.env.unbound();
                self.env.keep(learned, None);
                if let Some(entries) = entries {
                    self.recorder.record_turn(&entries, |_, r| r.clone());
                }
                let mut joined = self.join_locals(after_first, after_turn);
                if abandoned || !matches!(flow, Flow::Normal | Flow::Continue) {
                    // The turn stopped part way: what its rest assigns is
                    // not known.
                    let mut names = Vec::new();
                    assigned_names(body, &mut names);
                    for name in names {
                        joined.insert(name, Value::Unknown);
                    }
                }
                self.restore_locals(joined);
                Induction::Done
            }
            _ => {
                self.env.unbound();
                self.recorder.drop_sites_since(&deferred);
                self.diagnostics.truncate(diagnostics);
                self.offered_fixes.truncate(fixes);
                self.env.void_guards_since(guards);
                self.loop_appends.truncate(appends);
                for (v, old) in ranks.into_iter().rev() {
                    self.restore_rank_state(v, old);
                }
                for (class, made) in instances {
                    if let Some(list) = self.instances.get_mut(&class) {
                        list.truncate(made);
                    }
                }
                let frame = self.frame();
                frame.raised = raised;
                frame.early_returns.truncate(early);
                self.restore_locals(after_first);
                Induction::OneByOne
            }
        }
    }

    /// The value of a name at the start of turn `t`, from its values at
    /// the start of turns 0 and 1: sizes that grew by a step grow by it in
    /// every turn (the check after the run proves it); anything else must
    /// not have changed.
    fn generalize(&self, was: &Value, now: &Value, turn: &Dim) -> Option<Value> {
        match (was, now) {
            (Value::Int(a), Value::Int(b)) => Some(Value::Int(self.along(a, b, turn))),
            (Value::Tensor(a), Value::Tensor(b)) => {
                if Rc::ptr_eq(a, b) {
                    return Some(now.clone());
                }
                let (Shape::Known(da), Shape::Known(db)) = (&a.shape, &b.shape) else {
                    return None;
                };
                if da.len() != db.len() || !same_metadata(a, b) {
                    return None;
                }
                let dims = da
                    .iter()
                    .zip(db.iter())
                    .map(|(x, y)| self.along(x, y, turn));
                Some(Value::Tensor(Rc::new(Tensor {
                    shape: Shape::known(dims.collect()),
                    ..(**b).clone()
                })))
            }
            (Value::Tuple(a), Value::Tuple(b)) if a.len() == b.len() => {
                let items: Option<Vec<Value>> = a
                    .iter()
                    .zip(b.iter())
                    .map(|(x, y)| self.generalize(x, y, turn))
                    .collect();
                Some(Value::tuple(items?))
            }
            _ => same_object(was, now).then(|| now.clone()),
        }
    }

    /// `a + t * (b - a)`: `a` at turn 0, `b` at turn 1.
    fn along(&self, a: &Dim, b: &Dim, turn: &Dim) -> Dim {
        let (a, b) = (self.env.resolve(a), self.env.resolve(b));
        if a == b {
            return b;
        }
        a.add(&b.sub(&a).mul(turn))
    }

    /// Whether the symbolic turn proves every turn: each name it read
    /// before writing it came in as a formula, and it leaves that formula
    /// one turn on; each name it wrote holds data that no object shares.
    fn carries_over(
        &self,
        trial: &Trial,
        formulas: &FxHashMap<Rc<str>, Value>,
        unknown_at_start: &FxHashSet<Rc<str>>,
        after_turn: &FxHashMap<Rc<str>, Value>,
        turn: &Dim,
    ) -> bool {
        let Some(turn_symbol) = turn.as_sym() else {
            return false;
        };
        let next = Renaming::from(turn_symbol, vec![turn.add(&Dim::konst(1))]);
        let read_ok = trial.read_first.iter().all(|name| {
            if unknown_at_start.contains(name) {
                return false;
            }
            match (formulas.get(name), after_turn.get(name)) {
                (Some(formula), Some(left)) => self.same_value(left, &next.value(formula)),
                // Not one of the loop's names when the loop began.
                (None, _) => true,
                (Some(_), None) => false,
            }
        });
        read_ok
            && trial.written.iter().all(|name| match after_turn.get(name) {
                Some(v) => is_plain(v, 0) || formulas.get(name).is_some_and(|f| same_object(f, v)),
                None => false,
            })
    }

    /// Whether two values are the same for every turn: sizes known equal,
    /// tensors alike, anything else the very same object.
    fn same_value(&self, a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => self.env.known_equal(x, y),
            (Value::Tensor(x), Value::Tensor(y)) => {
                Rc::ptr_eq(x, y)
                    || match (&x.shape, &y.shape) {
                        (Shape::Known(dx), Shape::Known(dy)) => {
                            same_metadata(x, y)
                                && dx.len() == dy.len()
                                && dx
                                    .iter()
                                    .zip(dy.iter())
                                    .all(|(p, q)| self.env.known_equal(p, q))
                        }
                        _ => false,
                    }
            }
            (Value::Tuple(x), Value::Tuple(y)) => {
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| self.same_value(p, q))
            }
            _ => same_object(a, b),
        }
    }
}

/// Tensors alike but for their shapes and where they were made.
fn same_metadata(a: &Tensor, b: &Tensor) -> bool {
    a.dtype == b.dtype
        && a.device == b.device
        && a.origin == b.origin
        && a.mode == b.mode
        && a.is_param == b.is_param
        && a.layout == b.layout
}

/// Whether two values are one: the same object, or equal data without
/// sizes.
fn same_object(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Unknown, Value::Unknown)
        | (Value::None, Value::None)
        | (Value::Complex, Value::Complex)
        | (Value::Text, Value::Text)
        | (Value::Ellipsis, Value::Ellipsis) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) | (Value::Path(x), Value::Path(y)) => x == y,
        (Value::Opaque(x), Value::Opaque(y)) => x == y,
        (Value::Device(x), Value::Device(y)) => x == y,
        (Value::DType(x), Value::DType(y)) => x == y,
        (Value::Tensor(x), Value::Tensor(y)) => Rc::ptr_eq(x, y),
        (Value::Tuple(x), Value::Tuple(y)) => {
            Rc::ptr_eq(x, y)
                || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same_object(p, q)))
        }
        (Value::List(x), Value::List(y)) => Rc::ptr_eq(x, y),
        (Value::Dict(x), Value::Dict(y)) => Rc::ptr_eq(x, y),
        (Value::Layer(x), Value::Layer(y)) => Rc::ptr_eq(x, y),
        (Value::Instance(x), Value::Instance(y)) => Rc::ptr_eq(x, y),
        (Value::Class(x), Value::Class(y)) => Rc::ptr_eq(x, y),
        (Value::Module(x), Value::Module(y)) => Rc::ptr_eq(x, y),
        (Value::Function(x), Value::Function(y)) => Rc::ptr_eq(x, y),
        (Value::Int(x), Value::Int(y)) => x == y,
        _ => false,
    }
}

/// A statement after which the names a turn reads and writes are all seen
/// by `lookup` and `bind_name`: no definition (whose closure would read
/// the names later), deletion or scope declaration, at any depth.
fn plain_statement(stmt: &Stmt) -> bool {
    match &stmt.kind {
        StmtKind::FunctionDef(_)
        | StmtKind::ClassDef(_)
        | StmtKind::Delete(_)
        | StmtKind::Global(_)
        | StmtKind::Import(_)
        | StmtKind::ImportFrom { .. }
        | StmtKind::Other => false,
        _ => stmt
            .nested_blocks()
            .iter()
            .all(|block| block.iter().all(plain_statement)),
    }
}

/// The names a block assigns, at any depth (targets of assignments,
/// loops and `with`).
fn assigned_names(body: &[Stmt], out: &mut Vec<Rc<str>>) {
    fn targets(e: &Expr, out: &mut Vec<Rc<str>>) {
        match &e.kind {
            ExprKind::Name(n) => out.push(Rc::from(n.as_str())),
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter().for_each(|i| targets(i, out));
            }
            ExprKind::Starred(inner) => targets(inner, out),
            _ => {}
        }
    }
    for stmt in body {
        match &stmt.kind {
            StmtKind::Assign { targets: ts, .. } => ts.iter().for_each(|t| targets(t, out)),
            StmtKind::AugAssign { target, .. } => targets(target, out),
            StmtKind::For { target, .. } => targets(target, out),
            StmtKind::With { items, .. } => {
                for item in items.iter().filter_map(|i| i.target.as_ref()) {
                    targets(item, out);
                }
            }
            StmtKind::Try { handlers, .. } => {
                out.extend(
                    handlers
                        .iter()
                        .filter_map(|h| h.name.as_ref())
                        .map(|n| Rc::from(n.id.as_str())),
                );
            }
            _ => {}
        }
        for block in stmt.nested_blocks() {
            assigned_names(block, out);
        }
    }
}

/// Whether a statement writes into an object in place, at any depth: an
/// item or attribute assigned, an augmented assignment (`xs += [x]`), or a
/// call of a method that fills a container or a module.
fn writes_in_place(stmt: &Stmt) -> bool {
    let mut writes = false;
    let mut call = |e: &Expr| {
        if let ExprKind::Call { func, .. } = &e.kind
            && let ExprKind::Attribute { attr, .. } = &func.kind
            && matches!(
                attr.id.as_str(),
                "append"
                    | "extend"
                    | "insert"
                    | "add"
                    | "update"
                    | "setdefault"
                    | "pop"
                    | "remove"
                    | "clear"
                    | "register_buffer"
                    | "register_parameter"
                    | "add_module"
            )
        {
            writes = true;
        }
    };
    super::signature::walk_stmt(stmt, &mut call);
    let assigned = |e: &Expr| {
        matches!(
            e.kind,
            ExprKind::Subscript { .. } | ExprKind::Attribute { .. }
        )
    };
    writes
        || match &stmt.kind {
            StmtKind::Assign { targets, .. } => targets.iter().any(|t| {
                assigned(t)
                    || matches!(&t.kind, ExprKind::Tuple(items) | ExprKind::List(items) if items.iter().any(assigned))
            }),
            StmtKind::AugAssign { .. } => true,
            _ => stmt
                .nested_blocks()
                .iter()
                .any(|block| block.iter().any(writes_in_place)),
        }
}
