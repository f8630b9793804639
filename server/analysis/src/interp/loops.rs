//! Loops: a loop over known items runs turn by turn; one of unknown
//! length runs its body twice and joins with not running it, and what its
//! turns appended stands for any number of items.

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{Expr, ExprKind, Stmt, StmtKind};

use super::control::restore_attr;
use super::induction::Induction;
use super::{Flow, Interp, MAX_LOOP_ITERATIONS, join_all};
use crate::report::BindingKind;
use crate::rules::meta::Meta;
use crate::value::{ListRef, Value, entries};

impl Interp<'_> {
    pub(super) fn exec_for(
        &mut self,
        target: &Expr,
        iterable: Value,
        body: &[Stmt],
        orelse: &[Stmt],
    ) -> Flow {
        // Each member of a walk the analysis knows in part is visited,
        // and others perhaps: a turn for each, then turns of unknown
        // number (`for m in self.modules(): if isinstance(m, Cache):
        // m.clear()` clears every cache the analysis knows of). Not when a
        // turn may leave the loop: another member may have ended it first.
        // Nor in another file's code, where a walk of every module (the
        // weight setup of a library's base class) would cost more steps
        // than that code may take.
        if let Value::Members(items) = &iterable
            && items.len() <= MAX_LOOP_ITERATIONS * 4
            && !may_leave(body)
            && !self.in_foreign_code()
        {
            for item in items.iter() {
                if self.out_of_budget() {
                    return Flow::Stop;
                }
                self.assign(target, item.clone(), BindingKind::For);
                match self.exec_block(body) {
                    Flow::Normal | Flow::Continue => {}
                    other => return other,
                }
            }
            return self.exec_for(target, Value::Unknown, body, orelse);
        }
        // A loop over more items than the analysis unrolls runs as a loop
        // of unknown length: running only its first turns would leave what
        // those turns left, a state the real loop never ends in.
        match self
            .iterate(&iterable)
            .filter(|items| items.len() <= MAX_LOOP_ITERATIONS)
        {
            Some(items) => {
                // Many turns over evenly spaced ints may run all at once
                // after the first (see `induction`).
                let mut plan = self.induction_plan(&items, body);
                let before = plan
                    .as_ref()
                    .map(|_| (self.snapshot_locals(), self.footprint()));
                for item in items {
                    if self.out_of_budget() {
                        return Flow::Stop;
                    }
                    self.assign(target, item, BindingKind::For);
                    match self.exec_block(body) {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => return Flow::Normal,
                        other => return other,
                    }
                    if let (Some(p), Some((names, footprint))) = (plan.take(), &before)
                        && let Induction::Done =
                            self.run_turns_at_once(&p, target, body, names, footprint)
                    {
                        return self.exec_block(orelse);
                    }
                }
                self.exec_block(orelse)
            }
            None => {
                // A range of more turns than run one by one may still run
                // at once after its first turn (see `induction`); if not,
                // it is a loop of unknown length from there on.
                if let Some(plan) = self.long_range_plan(&iterable, body) {
                    let names = self.snapshot_locals();
                    let footprint = self.footprint();
                    self.assign(target, Value::int(plan.first()), BindingKind::For);
                    match self.exec_block(body) {
                        Flow::Normal | Flow::Continue => {}
                        Flow::Break => return Flow::Normal,
                        other => return other,
                    }
                    if let Induction::Done =
                        self.run_turns_at_once(&plan, target, body, &names, &footprint)
                    {
                        return self.exec_block(orelse);
                    }
                }
                // An iterable we cannot enumerate: the body may run any number
                // of times. Run it twice (to let values flow around the loop
                // once) and join with the state of running it not at all.
                let before = self.snapshot_locals();
                let element = self.element_of(&iterable);
                let appended = self.loop_appends.len();
                let counted = self.turns(&iterable).map(|turns| CountedLoop {
                    turns,
                    body,
                    empty: self.empty_local_lists(),
                });
                // The element of a container of unknown length stands for
                // each of its modules: the second turn meets another one,
                // which the first turn did not write to (a cache a causal
                // convolution keeps from its last call is not the next
                // block's).
                let stands_for_each = matches!(&iterable, Value::Many(..))
                    || matches!(&iterable, Value::Layer(l) if l.unknown_children.get());
                self.unknown_loops += 1;
                for turn in 0..2 {
                    // Each turn takes its own element: a value carried from
                    // the first turn (`prev = cur`) is not the second's
                    // (`tokens[:, prev:cur]` is not empty).
                    let element = if turn == 0 {
                        element.clone()
                    } else {
                        self.element_of(&iterable)
                    };
                    let undo_element = stands_for_each && turn == 0;
                    if undo_element {
                        self.attr_journals.push(Vec::new());
                    }
                    self.assign(target, element.clone(), BindingKind::For);
                    let flow = self.exec_block(body);
                    if undo_element {
                        let journal = self.attr_journals.pop().unwrap_or_default();
                        self.undo_writes_to(&element, journal);
                    }
                    match flow {
                        Flow::Normal | Flow::Continue | Flow::Break => {}
                        Flow::Return(v) => {
                            self.frame().early_returns.push(v);
                            break;
                        }
                        Flow::Stop => break,
                    }
                }
                self.unknown_loops -= 1;
                let after = self.snapshot_locals();
                let joined = self.join_locals(before, after);
                self.restore_locals(joined);
                self.widen_loop_lists(appended, counted);
                let _ = self.exec_block(orelse);
                Flow::Normal
            }
        }
    }

    /// Undoes what a turn wrote to the objects of `element` (it, and the
    /// modules and objects it holds); other writes stay. An enclosing
    /// undecided branch still learns of every write (see `exec_both`).
    fn undo_writes_to(&mut self, element: &Value, journal: crate::interp::AttrJournal) {
        let mut objects = rustc_hash::FxHashSet::default();
        objects_of(element, 0, &mut objects);
        for (inst, key, old) in journal {
            if let Some(outer) = self.attr_journals.last_mut()
                && !outer
                    .iter()
                    .any(|(i, k, _)| Rc::ptr_eq(i, &inst) && *k == key)
            {
                outer.push((inst.clone(), key.clone(), old.clone()));
            }
            if objects.contains(&(Rc::as_ptr(&inst) as usize)) {
                restore_attr(&inst, &key, old, &mut self.epoch);
            }
        }
    }

    pub(super) fn exec_while(&mut self, test: &Expr, body: &[Stmt], orelse: &[Stmt]) -> Flow {
        // A generator's endless loop (`while True: ... yield batch`) yields
        // alike items every turn: one turn stands for all, as in a loop
        // whose end nobody knows.
        let endless = self
            .frame()
            .function
            .as_ref()
            .is_some_and(|f| f.def.is_generator)
            && !may_leave(body);
        for _ in 0..MAX_LOOP_ITERATIONS {
            if self.out_of_budget() {
                return Flow::Stop;
            }
            let cond = self.eval(test);
            match self.truth(&cond).filter(|go| !(*go && endless)) {
                Some(false) => return self.exec_block(orelse),
                Some(true) => match self.exec_block(body) {
                    Flow::Normal | Flow::Continue => {}
                    Flow::Break => return Flow::Normal,
                    other => return other,
                },
                None => {
                    let before = self.snapshot_locals();
                    let appended = self.loop_appends.len();
                    self.unknown_loops += 1;
                    let flow = self.exec_block(body);
                    self.unknown_loops -= 1;
                    let after = self.snapshot_locals();
                    let joined = self.join_locals(before, after);
                    self.restore_locals(joined);
                    self.widen_loop_lists(appended, None);
                    if let Flow::Return(v) = flow {
                        self.frame().early_returns.push(v);
                    }
                    return Flow::Normal;
                }
            }
        }
        Flow::Normal
    }
}

impl Interp<'_> {
    /// A list appended to in a loop that runs an unknown number of times
    /// holds an unknown number of items: what the runs appended stands for
    /// all of them.
    pub(crate) fn note_loop_append(&mut self, list: &ListRef) {
        // Inside an undecided branch, keep the items from before it: the
        // other branch runs on the same list (see `exec_both`).
        if let Some(journal) = self.list_journals.last_mut()
            && !journal.iter().any(|(l, _)| Rc::ptr_eq(l, list))
        {
            journal.push((list.clone(), list.borrow().clone()));
        }
        if self.unknown_loops > 0 && !self.loop_appends.iter().any(|l| Rc::ptr_eq(l, list)) {
            self.loop_appends.push(list.clone());
        }
    }

    /// How many turns a loop over `iterable` takes, when the analysis
    /// cannot enumerate them: `range(a, b)` takes `b - a`, the rows of a
    /// tensor its first size.
    fn turns(&mut self, iterable: &Value) -> Option<Dim> {
        match iterable {
            Value::Range(start, stop, step) if step.as_const() == Some(1) => Some(stop.sub(start)),
            Value::Tensor(t) => self.dims(t)?.first().cloned(),
            Value::List(_) | Value::Tuple(_) => Some(Dim::konst(iterable.items()?.len() as i64)),
            _ => None,
        }
    }

    /// The empty lists local names hold, by address.
    fn empty_local_lists(&mut self) -> Vec<usize> {
        self.frame()
            .locals
            .borrow()
            .values()
            .filter_map(|v| match v {
                Value::List(l) if l.borrow().is_empty() => Some(Rc::as_ptr(l) as usize),
                _ => None,
            })
            .collect()
    }

    /// After a loop of unknown length: the local names, and the attributes
    /// of local objects (`self.outputs`), that hold a list appended to in
    /// the loop (since `from`) hold a list of unknown length instead, its
    /// items joined (`Value::Many`), so that `torch.stack(ys)` is not taken
    /// to stack as many tensors as the loop's runs appended. A local list
    /// that was empty and that the loop's body appends to once on every
    /// turn (`appends_once`) holds as many items as the loop turns.
    pub(super) fn widen_loop_lists(&mut self, from: usize, counted: Option<CountedLoop<'_>>) {
        if from >= self.loop_appends.len() {
            return;
        }
        let grown: Vec<ListRef> = self.loop_appends[from..].to_vec();
        if self.unknown_loops == 0 {
            self.loop_appends.truncate(from);
        }
        let widened = |this: &mut Self, v: &Value, name: Option<&str>| -> Option<Value> {
            let Value::List(list) = v else {
                return None;
            };
            if !grown.iter().any(|g| Rc::ptr_eq(g, list)) {
                return None;
            }
            let len = match (&counted, name) {
                (Some(counted), Some(name))
                    if counted.empty.contains(&(Rc::as_ptr(list) as usize))
                        && appends_once(counted.body, name) =>
                {
                    Some(counted.turns.clone())
                }
                _ => None,
            };
            let items = list.borrow().clone();
            Some(match join_all(this, &items) {
                Value::Unknown => Value::Unknown,
                element => Value::Many(Rc::new(element), len),
            })
        };
        let locals = entries(&self.frame().locals.borrow());
        for (name, value) in locals {
            if let Some(v) = widened(self, &value, Some(&name)) {
                self.touch_scope();
                self.frame().locals.borrow_mut().insert(name, v);
                continue;
            }
            if let Value::Instance(inst) = &value {
                for (key, attr) in crate::value::object_entries(&inst.attrs) {
                    if let Some(v) = widened(self, &attr, None) {
                        inst.attrs.write(&mut self.epoch).insert(key, v);
                    }
                }
            }
        }
    }
}

/// A loop whose number of turns is known (as a size) though its items are
/// not: what `widen_loop_lists` needs to count a list's items.
pub(super) struct CountedLoop<'a> {
    turns: Dim,
    body: &'a [Stmt],
    /// The lists that were empty before the loop, by address.
    empty: Vec<usize>,
}

/// Whether every turn of a loop with this body appends exactly one item to
/// the list named `list`: one `list.append(...)` statement at the top of
/// the body, no other mention of `list`, and nothing that ends a turn
/// early or skips ahead (`break`, `continue`, `return`, `raise`, `try`).
fn appends_once(body: &[Stmt], list: &str) -> bool {
    let is_append = |s: &Stmt| {
        matches!(&s.kind, StmtKind::Expr(Expr { kind: ExprKind::Call { func, args }, .. })
            if args.len() == 1
                && matches!(&func.kind, ExprKind::Attribute { value, attr }
                    if attr.id == "append"
                        && matches!(&value.kind, ExprKind::Name(n) if n == list)))
    };
    if body.iter().filter(|s| is_append(s)).count() != 1 || jumps(body) {
        return false;
    }
    let mut mentions = 0;
    for s in body {
        super::signature::walk_stmt(s, &mut |e| {
            if matches!(&e.kind, ExprKind::Name(n) if n == list) {
                mentions += 1;
            }
        });
    }
    mentions == 1
}

/// Whether a block can leave the loop it is the body of (`break`,
/// `return`, or a statement the analysis steps over).
fn may_leave(body: &[Stmt]) -> bool {
    body.iter().any(|s| {
        matches!(
            s.kind,
            StmtKind::Break | StmtKind::Return(_) | StmtKind::Other
        ) || s.nested_blocks().into_iter().any(may_leave)
    })
}

/// Whether a block can end a loop's turn early or leave it.
fn jumps(body: &[Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Return(_)
        | StmtKind::Raise(_)
        | StmtKind::Try { .. }
        | StmtKind::Other => true,
        StmtKind::If { body, orelse, .. }
        | StmtKind::For { body, orelse, .. }
        | StmtKind::While { body, orelse, .. } => jumps(body) || jumps(orelse),
        StmtKind::With { body, .. } => jumps(body),
        _ => false,
    })
}

/// The user objects a value holds, by address: itself, the values of its
/// attributes and a container's modules, some levels deep.
fn objects_of(v: &Value, depth: usize, out: &mut rustc_hash::FxHashSet<usize>) {
    if depth > 8 || out.len() > 256 {
        return;
    }
    match v {
        Value::Instance(inst) if out.insert(Rc::as_ptr(inst) as usize) => {
            let attrs: Vec<Value> = inst.attrs.borrow().values().cloned().collect();
            for a in &attrs {
                objects_of(a, depth + 1, out);
            }
        }
        Value::Layer(l) => {
            let children = l.children.borrow().clone();
            for c in &children {
                objects_of(c, depth + 1, out);
            }
        }
        Value::Either(items) => {
            for i in items.iter() {
                objects_of(i, depth + 1, out);
            }
        }
        _ => {}
    }
}
