//! Branches: an `if` the analysis cannot decide runs both arms and joins
//! what they leave (names, lists, object attributes, ranks); loops are in
//! `loops`.

use rustc_hash::FxHashMap;
use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::{self, Expr, ExprKind, Stmt};

use super::{Flow, Interp, ListJournal, ModeState, join_values};
use crate::mutation::Epoch;
use crate::value::{DictRef, ListRef, Value};

/// A dict's entries, in order.
type Entries = Vec<(Value, Value)>;

impl Interp<'_> {
    /// Merge two branch states name by name.
    pub(super) fn join_locals(
        &mut self,
        a: FxHashMap<Rc<str>, Value>,
        b: FxHashMap<Rc<str>, Value>,
    ) -> FxHashMap<Rc<str>, Value> {
        let mut out = FxHashMap::default();
        for (k, va) in &a {
            let v = match b.get(k) {
                Some(vb) => join_values(self, va, vb),
                None => va.clone(),
            };
            out.insert(k.clone(), v);
        }
        for (k, vb) in b {
            out.entry(k).or_insert(vb);
        }
        out
    }

    /// A dict is about to be written: inside an undecided branch, remember
    /// its entries before the branch's first write (see `exec_both`).
    pub(crate) fn note_dict_write(&mut self, dict: &DictRef) {
        if let Some(journal) = self.dict_journals.last_mut()
            && !journal.iter().any(|(d, _)| Rc::ptr_eq(d, dict))
        {
            journal.push((dict.clone(), dict.borrow().clone()));
        }
    }

    pub(super) fn exec_if(&mut self, test: &Expr, body: &[Stmt], orelse: &[Stmt]) -> Flow {
        if is_main_guard(test) && self.frame().is_module && !self.in_main_module() {
            // An imported module's `__name__` is its own name.
            return self.exec_block(orelse);
        }
        if is_main_guard(test) && self.frame().is_module {
            // The oracle, like a user's script, runs the main block inside the
            // fake mode: tensors made there are fake.
            let saved = self.mode;
            let id = self.fresh_mode_id();
            self.across_main_mode(id);
            self.mode = ModeState {
                fake: true,
                id,
                allow_non_fake_inputs: self.config.allow_non_fake_inputs,
                user_mode: false,
                autocast: saved.autocast,
            };
            let flow = self.exec_block(body);
            self.mode = saved;
            return flow;
        }
        let cond = self.eval(test);
        match self.truth(&cond) {
            Some(true) => self.exec_block(body),
            Some(false) => self.exec_block(orelse),
            None => {
                let narrowed = self.narrowing(test);
                self.exec_both(body, orelse, narrowed.as_ref())
            }
        }
    }

    /// Run two alternative blocks from the same state and join what they leave.
    fn exec_both(
        &mut self,
        body: &[Stmt],
        orelse: &[Stmt],
        narrowed: Option<&super::narrowing::Narrowed>,
    ) -> Flow {
        let before = self.snapshot_locals();
        let appended = self.loop_appends.len();
        let minted = self.env.symbol_count();
        self.uncertain += 1;
        self.attr_journals.push(Vec::new());
        self.list_journals.push(Vec::new());
        self.dict_journals.push(Vec::new());
        self.rank_journals.push(Vec::new());
        self.env.open_branch();
        self.narrow(narrowed, true);
        let (flow_a, raised_a) = self.run_alternative(|interp| interp.exec_block(body));
        // Take back the sizes the first branch learned: the second starts
        // from the state before the condition.
        let facts_a = self.env.close_branch();
        // Undo the ranks the first branch fixed, keeping what it left.
        let ranks_a = self.rank_journals.pop().unwrap_or_default();
        self.drop_branch_adoptions();
        let fixed_a: Vec<(super::RankState, Option<Rc<Vec<Dim>>>)> = ranks_a
            .iter()
            .map(|(v, _)| (self.rank_state(*v), self.rank_dims(*v)))
            .collect();
        for (v, old) in ranks_a.iter().rev() {
            self.restore_rank_state(*v, old.clone());
        }
        self.rank_journals.push(Vec::new());
        let after_a = self.snapshot_locals();
        self.restore_locals(before);
        // Undo the first branch's list growth too, keeping what it left.
        let lists_a = self.list_journals.pop().unwrap_or_default();
        let grown_a: Vec<Vec<Value>> = lists_a.iter().map(|(l, _)| l.borrow().clone()).collect();
        for (list, old) in &lists_a {
            *list.write(&mut self.epoch) = old.clone();
        }
        self.list_journals.push(Vec::new());
        // And its dict writes.
        let dicts_a = self.dict_journals.pop().unwrap_or_default();
        let left_a: Vec<Entries> = dicts_a.iter().map(|(d, _)| d.borrow().clone()).collect();
        for (dict, old) in &dicts_a {
            *dict.write(&mut self.epoch) = old.clone();
        }
        self.dict_journals.push(Vec::new());
        // Undo the first branch's attribute writes, keeping what it left.
        let journal_a = self.attr_journals.pop().unwrap_or_default();
        let attrs_a: Vec<Option<Value>> = journal_a
            .iter()
            .map(|(inst, key, _)| inst.attrs.borrow().get(key).cloned())
            .collect();
        for (inst, key, old) in &journal_a {
            restore_attr(inst, key, old.clone(), &mut self.epoch);
        }
        self.attr_journals.push(Vec::new());
        self.env.open_branch();
        self.narrow(narrowed, false);
        let (flow_b, raised_b) = self.run_alternative(|interp| interp.exec_block(orelse));
        let facts_b = self.env.close_branch();
        let journal_b = self.attr_journals.pop().unwrap_or_default();
        let lists_b = self.list_journals.pop().unwrap_or_default();
        let dicts_b = self.dict_journals.pop().unwrap_or_default();
        let ranks_b = self.rank_journals.pop().unwrap_or_default();
        self.drop_branch_adoptions();
        self.uncertain -= 1;
        // A branch where torch refused an op ends there, as one that
        // raises does. When both did, every path raises here; both still
        // give what they left, as code after a certain error runs on.
        let (flow_a, flow_b) = match (raised_a, raised_b) {
            (true, false) => (Flow::Stop, flow_b),
            (false, true) => (flow_a, Flow::Stop),
            (true, true) => {
                self.raise_on_path();
                (flow_a, flow_b)
            }
            (false, false) => (flow_a, flow_b),
        };
        // A path that raised is no path the code after goes on from: the
        // ranks the other fixed hold.
        let only_a = match (&flow_a, &flow_b) {
            (Flow::Stop, Flow::Stop) => None,
            (Flow::Stop, _) => Some(false),
            (_, Flow::Stop) => Some(true),
            _ => None,
        };
        self.join_ranks(ranks_a, fixed_a, ranks_b, minted, only_a);
        self.join_attrs(journal_a, attrs_a, journal_b);
        self.join_lists(lists_a, grown_a, lists_b);
        let mut after_a = after_a;
        let mut after_b = self.snapshot_locals();
        let both_go_on = matches!((&flow_a, &flow_b), (Flow::Normal, Flow::Normal));
        let dicts = self.join_dicts_written(dicts_a, left_a, dicts_b, both_go_on);
        if both_go_on {
            // Keys on one path only: the names holding the dict hold
            // either path's (`kwargs.update(accel)` under a condition).
            for (dict, a, b) in &dicts {
                for (locals, left) in [(&mut after_a, a), (&mut after_b, b)] {
                    for v in locals.values_mut() {
                        if matches!(v, Value::Dict(x) if Rc::ptr_eq(x, dict)) {
                            *v = Value::Dict(Rc::new(crate::mutation::Shared::new(left.clone())));
                        }
                    }
                }
            }
        } else if matches!(flow_a, Flow::Normal) {
            // Only the first path goes on: the dict is as it left it.
            for (dict, a, _) in &dicts {
                *dict.write(&mut self.epoch) = a.clone();
            }
        }
        // What the code after the condition may rely on: what every path
        // that reaches it learned.
        match (
            matches!(flow_a, Flow::Normal),
            matches!(flow_b, Flow::Normal),
        ) {
            (true, true) => self.env.keep(facts_a, Some(facts_b)),
            (true, false) => self.env.keep(facts_a, None),
            (false, true) => self.env.keep(facts_b, None),
            // Neither path goes on here, but what every path that returns
            // learned holds for the caller (`if self.flag: return f(x)`
            // and `return g(x)` both fixing `x`'s width); a path that
            // raised is no path the caller goes on from.
            (false, false) => match (&flow_a, &flow_b) {
                (Flow::Return(_), Flow::Return(_)) => self.env.keep(facts_a, Some(facts_b)),
                (Flow::Return(_), Flow::Stop) => self.env.keep(facts_a, None),
                (Flow::Stop, Flow::Return(_)) => self.env.keep(facts_b, None),
                _ => {}
            },
        }
        let flow = match (flow_a, flow_b) {
            (Flow::Normal, Flow::Normal) => {
                let narrowed_to = narrowed.map(|n| {
                    let name = n.name();
                    (after_a.get(name).cloned(), after_b.get(name).cloned())
                });
                let joined = self.join_locals(after_a, after_b);
                self.settled_dicts.clear();
                self.restore_locals(joined);
                if let Some((then, otherwise)) = narrowed_to {
                    self.widen_narrowed(narrowed, then.as_ref(), otherwise.as_ref());
                }
                Flow::Normal
            }
            (Flow::Normal, other) => {
                self.note_early(other);
                self.restore_locals(after_a);
                Flow::Normal
            }
            (other, Flow::Normal) => {
                self.note_early(other);
                self.restore_locals(after_b);
                Flow::Normal
            }
            (Flow::Return(a), Flow::Return(b)) => Flow::Return(join_values(self, &a, &b)),
            (Flow::Return(a), _) | (_, Flow::Return(a)) => Flow::Return(a),
            (a, _) => a,
        };
        self.widen_loop_lists(appended, None);
        flow
    }

    /// After both branches ran: a rank variable keeps the rank a branch
    /// fixed only when the other fixed the same one, and the trailing dims
    /// a branch gave it (an input of unknown rank to a `Linear`) only when
    /// the other gave it as many; otherwise the input is of unknown rank,
    /// as it was before. Symbols numbered `minted` and up were made while
    /// the branches ran. When only one branch goes on (`only_a`: whether
    /// that is the first), its ranks hold.
    fn join_ranks(
        &mut self,
        ranks_a: super::RankJournal,
        fixed_a: Vec<(super::RankState, Option<Rc<Vec<Dim>>>)>,
        ranks_b: super::RankJournal,
        minted: usize,
        only_a: Option<bool>,
    ) {
        let mut touched: super::RankJournal = ranks_a.clone();
        for (v, old) in &ranks_b {
            if !touched.iter().any(|(t, _)| t == v) {
                touched.push((*v, old.clone()));
            }
        }
        if touched.is_empty() {
            return;
        }
        let mut aliases: Vec<(u32, u32)> = Vec::new();
        for (v, old) in touched {
            let (a, dims_a) = match ranks_a.iter().position(|(t, _)| *t == v) {
                Some(p) => fixed_a[p].clone(),
                None => (old.clone(), old.0.clone()),
            };
            let b = self.rank_state(v);
            let dims_b = self.rank_dims(v);
            let kept = match (only_a, &dims_a, &dims_b) {
                (Some(true), ..) => a,
                (Some(false), ..) => b,
                // Both branches know every dim (a `Linear`'s trailing ones
                // and a batch dim fixed after them count): that rank holds.
                (None, Some(x), Some(y)) if x.len() == y.len() => {
                    self.same_made_up_sizes(x, y, minted);
                    (Some(y.clone()), None)
                }
                (None, ..) => match (&a, &b) {
                    ((None, None), (None, None)) => b,
                    // Trailing dims one branch gave an input the other left
                    // alone (`if z is None: ... else: self.to_kv(z)`): the
                    // other has no say on them; a rank is fixed only by both.
                    ((None, None), (None, Some(_))) => b,
                    ((None, Some(_)), (None, None)) => a,
                    ((None, Some((inner_a, x))), (None, Some((inner_b, y))))
                        if x.len() == y.len() =>
                    {
                        self.same_made_up_sizes(x, y, minted);
                        // The leading dims either branch left before them
                        // are the same tensor's: the kept ones stand for
                        // both, once every variable is joined.
                        if inner_a != inner_b {
                            aliases.push((*inner_a, *inner_b));
                        }
                        b
                    }
                    _ => old.clone(),
                },
            };
            if let Some(outer) = self.rank_journals.last_mut()
                && !outer.iter().any(|(t, _)| *t == v)
            {
                outer.push((v, old));
            }
            self.restore_rank_state(v, kept);
        }
        for (alias, kept) in aliases {
            if self.rank_state(alias) == (None, None) {
                self.set_tail(alias, kept, Rc::new(Vec::new()));
            }
        }
        self.epoch.bump();
    }

    /// Both branches gave one tensor of unknown rank the same rank, each
    /// making up names for its sizes (`[N, C, H, W]` for an `interpolate`
    /// in one, `[N_2, C_2, H_2, W_2]` for a transposed convolution in the
    /// other): they are the same sizes of the same tensor, so the names the
    /// first branch made up stand for both, and what the branches computed
    /// from them still agrees at the join. A size a branch took from
    /// elsewhere (an operand it was added to) holds in that branch only.
    fn same_made_up_sizes(&mut self, a: &[Dim], b: &[Dim], minted: usize) {
        let made_up = |env: &shapels_shapes::ShapeEnv, d: &Dim| {
            d.as_sym().is_some_and(|s| {
                s.0 as usize >= minted && env.info(s).is_some_and(|i| i.weak || i.anonymous)
            })
        };
        for (x, y) in a.iter().zip(b) {
            let (x, y) = (self.env.resolve(x), self.env.resolve(y));
            if x != y && made_up(&self.env, &x) && made_up(&self.env, &y) {
                let _ = self.env.unify(&x, &y);
            }
        }
    }

    /// After both branches ran: a list either branch grew holds, when both
    /// left it as long, the join of what they left at each place; otherwise
    /// an unknown number of items (it is widened with the loop lists).
    fn join_lists(&mut self, lists_a: ListJournal, grown_a: Vec<Vec<Value>>, lists_b: ListJournal) {
        // Each list: its items before, after the first branch, after the second.
        type Grown = (ListRef, Vec<Value>, Vec<Value>, Option<Vec<Value>>);
        let mut all: Vec<Grown> = Vec::new();
        for ((list, old), left) in lists_a.into_iter().zip(grown_a) {
            all.push((list, old, left, None));
        }
        for (list, old) in lists_b {
            let now = list.borrow().clone();
            match all.iter_mut().find(|(l, ..)| Rc::ptr_eq(l, &list)) {
                Some(entry) => entry.3 = Some(now),
                None => all.push((list, old.clone(), old, Some(now))),
            }
        }
        for (list, old, a, b) in all {
            // A list only the first branch grew: the second left it as it was.
            let b = b.unwrap_or_else(|| old.clone());
            let items = if a.len() == b.len() {
                a.iter()
                    .zip(&b)
                    .map(|(x, y)| join_values(self, x, y))
                    .collect()
            } else {
                let mut items = old.clone();
                items.extend(a.iter().skip(old.len()).cloned());
                items.extend(b.iter().skip(old.len()).cloned());
                if !self.loop_appends.iter().any(|l| Rc::ptr_eq(l, &list)) {
                    self.loop_appends.push(list.clone());
                }
                items
            };
            *list.write(&mut self.epoch) = items;
            // An enclosing undecided branch keeps the items from before it.
            if let Some(outer) = self.list_journals.last_mut()
                && !outer.iter().any(|(l, _)| Rc::ptr_eq(l, &list))
            {
                outer.push((list.clone(), old));
            }
        }
    }

    /// After both branches ran: a dict either branch wrote holds, where
    /// both left the same keys, the join of their values at each key, and
    /// is joined with itself as one dict (`settled_dicts`). Where the keys
    /// differ it holds the second branch's entries, and the dicts each
    /// branch left are returned, to stand for it on each path. With one
    /// branch going on (`both_go_on` false), every dict either wrote is
    /// returned, to take the entries that branch left.
    fn join_dicts_written(
        &mut self,
        dicts_a: super::DictJournal,
        left_a: Vec<Entries>,
        dicts_b: super::DictJournal,
        both_go_on: bool,
    ) -> Vec<(DictRef, Entries, Entries)> {
        let mut touched: Vec<(DictRef, Entries, Option<Entries>)> = Vec::new();
        for ((dict, old), a) in dicts_a.into_iter().zip(left_a) {
            touched.push((dict, old, Some(a)));
        }
        for (dict, old) in dicts_b {
            if !touched.iter().any(|(d, ..)| Rc::ptr_eq(d, &dict)) {
                touched.push((dict, old, None));
            }
        }
        let mut split = Vec::new();
        for (dict, old, a) in touched {
            // An enclosing undecided branch keeps the entries from before it.
            if let Some(outer) = self.dict_journals.last_mut()
                && !outer.iter().any(|(d, _)| Rc::ptr_eq(d, &dict))
            {
                outer.push((dict.clone(), old.clone()));
            }
            let a = a.unwrap_or(old);
            let b = dict.borrow().clone();
            let same_keys = a.len() == b.len()
                && a.iter()
                    .zip(&b)
                    .all(|((x, _), (y, _))| self.values_equal(x, y) == Some(true));
            if same_keys && both_go_on {
                let joined = a
                    .iter()
                    .zip(&b)
                    .map(|((k, x), (_, y))| (k.clone(), join_values(self, x, y)))
                    .collect();
                *dict.write(&mut self.epoch) = joined;
                self.settled_dicts.push(Rc::as_ptr(&dict) as usize);
            } else {
                split.push((dict, a, b));
            }
        }
        split
    }

    /// After both branches ran: each attribute either branch wrote becomes
    /// the join of what the two left (a branch that did not write it left
    /// the value from before).
    fn join_attrs(
        &mut self,
        journal_a: Vec<(Rc<crate::value::Instance>, Rc<str>, Option<Value>)>,
        attrs_a: Vec<Option<Value>>,
        journal_b: Vec<(Rc<crate::value::Instance>, Rc<str>, Option<Value>)>,
    ) {
        let mut touched: Vec<(Rc<crate::value::Instance>, Rc<str>, Option<Value>)> = Vec::new();
        for (inst, key, old) in journal_a.iter().chain(journal_b.iter()) {
            if !touched
                .iter()
                .any(|(i, k, _)| Rc::ptr_eq(i, inst) && k == key)
            {
                touched.push((inst.clone(), key.clone(), old.clone()));
            }
        }
        for (inst, key, old) in touched {
            let in_a = journal_a
                .iter()
                .position(|(i, k, _)| Rc::ptr_eq(i, &inst) && *k == key);
            let value_a = match in_a {
                Some(p) => attrs_a[p].clone(),
                None => old.clone(),
            };
            let in_b = journal_b
                .iter()
                .any(|(i, k, _)| Rc::ptr_eq(i, &inst) && *k == key);
            let value_b = if in_b {
                inst.attrs.borrow().get(&key).cloned()
            } else {
                old.clone()
            };
            let joined = match (value_a, value_b) {
                (Some(a), Some(b)) => Some(join_values(self, &a, &b)),
                (Some(v), None) | (None, Some(v)) => Some(super::join::optional(v)),
                (None, None) => None,
            };
            // The outer branch, if any, must be able to undo this too.
            if let Some(outer) = self.attr_journals.last_mut()
                && !outer
                    .iter()
                    .any(|(i, k, _)| Rc::ptr_eq(i, &inst) && *k == key)
            {
                outer.push((inst.clone(), key.clone(), old));
            }
            restore_attr(&inst, &key, joined, &mut self.epoch);
        }
    }

    /// One branch of an undecided condition left early (`flow`) and the
    /// other goes on. After a `return` what follows runs on some paths
    /// only (`if enc is not None: return enc(x)`), so it is reported for
    /// those paths. Not after a `raise`: that is a check of the inputs, and
    /// what follows it is the path every call that works takes.
    fn note_early(&mut self, flow: Flow) {
        let frame = self.frame();
        if let Flow::Return(v) = flow {
            frame.early_returns.push(v);
            if !frame.is_module && frame.function.is_some() {
                frame.after_early_exits += 1;
                self.uncertain += 1;
            }
        }
    }
}

pub(super) fn restore_attr(
    inst: &Rc<crate::value::Instance>,
    key: &Rc<str>,
    value: Option<Value>,
    epoch: &mut Epoch,
) {
    let mut attrs = inst.attrs.write(epoch);
    match value {
        Some(v) => {
            attrs.insert(key.clone(), v);
        }
        None => {
            attrs.remove(key);
        }
    }
}

/// `if __name__ == "__main__":`
pub(crate) fn is_main_guard(test: &Expr) -> bool {
    let Some((left, right)) = equality(test) else {
        return false;
    };
    let is_name = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == "__name__");
    let is_main = |e: &Expr| matches!(&e.kind, ExprKind::Str(s) if s == "__main__");
    (is_name(left) && is_main(right)) || (is_main(left) && is_name(right))
}

/// The two sides of a test that is one `==` (`a == b`, not `a == b == c`).
pub(crate) fn equality(test: &Expr) -> Option<(&Expr, &Expr)> {
    match &test.kind {
        ExprKind::Compare {
            left,
            ops,
            comparators,
        } if ops.len() == 1 && ops[0] == ast::CmpOp::Eq => Some((left, &comparators[0])),
        _ => None,
    }
}
