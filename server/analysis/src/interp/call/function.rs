//! Calling a user function: binding the arguments to the parameters, and running the body.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

use shapels_syntax::ast::{ParamKind, TextRange};

use crate::interp::memo::Lookup;
use crate::interp::{Flow, Frame, Interp, MAX_CALL_DEPTH, join_all, join_values};
use crate::report::BindingKind;
use crate::value::{Function, Value};

use super::Kwargs;
use crate::mutation::Shared;

impl Interp<'_> {
    /// Whether a call's arguments show its body as it runs. A call given a
    /// value the analysis could not follow (a part of a model run on inputs
    /// the analysis could not make out) shows only some of it: it does not
    /// count as reaching the body, so that the body still runs on made-up
    /// inputs of its own. A value made from what a module returns for any
    /// input (see `forward_for_any_input`) counts as one the analysis could
    /// not follow: its sizes are made up, not the caller's.
    pub(crate) fn says_something(&self, args: &[Value], kwargs: &Kwargs) -> bool {
        !args
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .any(|v| matches!(v, Value::Unknown) || self.made_for_any_input(v))
    }

    pub(crate) fn call_function(
        &mut self,
        f: &Rc<Function>,
        receiver: Option<Value>,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        // Why a call of the callee's body gave an unknown value explains
        // names of the body's statements only: the caller's statement keeps
        // what its own calls noted. A call taken from the memo runs no body,
        // so without this its caller's hover would differ from a fresh run's.
        let caller_unknown = self.last_unknown.take();
        let result = self.call_function_body(f, receiver, args, kwargs, range);
        self.last_unknown = caller_unknown;
        result
    }

    fn call_function_body(
        &mut self,
        f: &Rc<Function>,
        receiver: Option<Value>,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        // Under the fake mode a custom op runs its fake kernel.
        // (A kernel registered for itself, or two for each other, in code
        // run twice, must not loop.)
        if let Some(fake) = self.fake_kernel(f)
            && !Rc::ptr_eq(&fake.def, &f.def)
            && self.depth < MAX_CALL_DEPTH
        {
            self.depth += 1;
            let result = self.call_function(&fake, receiver, args, kwargs, range);
            self.depth -= 1;
            return result;
        }
        let key = Rc::as_ptr(&f.def) as usize;
        let readable_args = self.says_something(&args, &kwargs);
        // The inputs the body runs on are readable (the receiver too): its
        // lines show this call's shapes.
        let readable = readable_args && !matches!(receiver, Some(Value::Unknown));
        if readable_args {
            // Reached where its lines do not record (a callee of another
            // function's run of its own), the body still needs a run that
            // shows it.
            if self.recorder.shows_lines_at(&f.def.range) {
                self.reached.insert(key);
            }
            self.across_reached(key);
        }
        if self.depth >= MAX_CALL_DEPTH
            || self.out_of_budget()
            || (!crate::workspace::is_local(&f.def.range) && !self.foreign_budget_left())
        {
            self.cut_from(0);
            return Value::Unknown;
        }
        // Recursion is cut at its third level: what that depends on starts
        // at the function's first call.
        if self.stack.iter().filter(|k| **k == key).count() >= 2 {
            let first = self.stack.iter().position(|k| *k == key).unwrap_or(0);
            self.cut_from(first + 1);
            return Value::Unknown;
        }
        if readable {
            self.recorder.reached_from(f.def.range, range);
        }
        // A call whose keywords are not all known (`f(**kwargs)` with unknown
        // kwargs, or a made-up library call) may override any default.
        let open = std::mem::take(&mut self.open_call);
        let pending = match self.memo_begin(f, receiver.as_ref(), &args, &kwargs, open) {
            Lookup::Earlier(result) => return result,
            Lookup::Run(pending) => pending,
        };
        let outer_call = self.recorder.enter_call(!readable);
        // The user's code runs its own ops: the operands of an op that
        // called it (a `Sequential` of user modules) are not theirs.
        let outer_operands = self.env.set_operands(Vec::new());
        let locals = Rc::new(RefCell::new(FxHashMap::default()));
        let mut positional = receiver.into_iter().chain(args);
        let mut kwargs = kwargs;
        let mut extra_positional = Vec::new();
        let mut bindings: Vec<(usize, Value)> = Vec::new();
        // Parameters the call left to their defaults, which jaxtyping's
        // checker does not check (beartype checks only what is passed).
        let mut defaulted: Vec<usize> = Vec::new();
        let params = &f.def.params;
        for (i, param) in params.iter().enumerate() {
            let value = match param.kind {
                ParamKind::Normal { .. } => {
                    if let Some(v) = positional.next() {
                        Some(v)
                    } else if let Some(pos) = kwargs.iter().position(|(k, _)| **k == *param.name.id)
                    {
                        Some(kwargs.remove(pos).1)
                    } else {
                        defaulted.push(i);
                        self.default_for(f, i, open)
                    }
                }
                ParamKind::KwOnly => {
                    if let Some(pos) = kwargs.iter().position(|(k, _)| **k == *param.name.id) {
                        Some(kwargs.remove(pos).1)
                    } else {
                        defaulted.push(i);
                        self.default_for(f, i, open)
                    }
                }
                // A made-up call passes nothing the function could count on:
                // its `*args` are unknown, not empty. An open call's `*args`
                // hold what it does pass (the known items of an open
                // tuple), then any number of unknown ones.
                ParamKind::VarArgs if open => {
                    extra_positional.extend(positional.by_ref());
                    Some(if extra_positional.is_empty() {
                        Value::Unknown
                    } else {
                        Value::OpenTuple(Rc::new(std::mem::take(&mut extra_positional)))
                    })
                }
                ParamKind::VarArgs => {
                    extra_positional.extend(positional.by_ref());
                    Some(Value::tuple(std::mem::take(&mut extra_positional)))
                }
                ParamKind::VarKw if open => Some(Value::Opaque(Rc::from(param.name.id.as_str()))),
                ParamKind::VarKw => {
                    let entries = kwargs.drain(..).map(|(k, v)| (Value::Str(k), v)).collect();
                    Some(Value::Dict(Rc::new(Shared::new(entries))))
                }
            };
            bindings.push((i, value.unwrap_or(Value::Unknown)));
        }
        let real_site = range != TextRange::empty(0);
        // The arguments meet the callee's stated shapes where the call is
        // made (a made-up call's arguments were made from them).
        let call_sites = self.call_sites.len();
        if real_site {
            self.call_sites.push(range);
        }
        let (memo, doc_memo, refused) =
            self.check_arguments(f, &bindings, &defaulted, real_site && !open);
        self.call_sites.truncate(call_sites);
        self.stated_memos.push(memo);
        self.doc_memos.push(doc_memo);
        for (i, value) in bindings {
            let param = &params[i];
            let value = self.parameter_trail(value, &param.name.id, param.name.range.start);
            locals
                .borrow_mut()
                .insert(Rc::from(param.name.id.as_str()), value.clone());
            if matches!(value, Value::Unknown) {
                self.recorder
                    .unknown_binding(&param.name.id, param.name.range);
            }
            // An optional tensor input is recorded as the tensor it is when given.
            let recorded = match &value {
                Value::Optional(inner) => inner.as_ref(),
                v => v,
            };
            if let Some(annotation) = &param.annotation {
                self.recorder
                    .annotation(&param.name.range, annotation.range.end);
            }
            // A lambda's parameters are the code's plumbing, not names a
            // reader wants sizes after (`map(lambda t: ..., qkv)`).
            let is_lambda = f.def.name.id == "<lambda>";
            // An int parameter is a size the function names (`def
            // attend(q, k, d_k)`, `in_channels` of a block built with
            // several widths): its hints show the size by that name.
            if let (Value::Int(d), false) = (&value, is_lambda) {
                self.recorder
                    .scalar(&param.name.id, param.name.range, d.clone(), true);
            }
            if let (Value::Tensor(t), false) = (recorded, is_lambda) {
                let t = Rc::new(crate::value::Tensor {
                    shape: self.resolve_shape(&t.shape),
                    ..(**t).clone()
                });
                self.recorder.binding(
                    &param.name.id,
                    param.name.range,
                    BindingKind::Param,
                    t.clone(),
                );
                self.recorder.expression(param.name.range, t);
            }
        }
        // A function of a module no longer imported (cannot happen while
        // the run holds every module) reads the analysed file's globals.
        let module = f.module.upgrade().unwrap_or_else(|| self.main.clone());
        self.frames.push(Frame {
            locals,
            module,
            closure: f.closure.clone(),
            function: Some(f.clone()),
            early_returns: Vec::new(),
            is_module: false,
            lists_unsure: false,
            // An annotation that refused an argument raised before the
            // body runs (as jaxtyping's checker does): what the body meets
            // is no second bug.
            raised: refused,
            after_early_exits: 0,
            yields: Vec::new(),
        });
        self.stack.push(key);
        self.depth += 1;
        if real_site {
            self.call_sites.push(range);
        }
        let mut flow = self.exec_block(&f.def.body);
        // A stub says what it does in its annotations.
        if crate::interp::stated::is_stub(&f.def)
            && let Some(value) = self.run_stub(f)
        {
            flow = Flow::Return(value);
        }
        if real_site {
            self.call_sites.pop();
        }
        self.depth -= 1;
        self.stack.pop();
        self.stated_memos.pop();
        self.doc_memos.pop();
        let frame = self.frames.pop().expect("pushed above");
        self.uncertain -= frame.after_early_exits;
        let mut result = match flow {
            Flow::Return(v) => Some(v),
            Flow::Stop => None,
            _ => Some(Value::None),
        };
        for early in frame.early_returns {
            result = Some(match result {
                Some(r) => join_values(self, &r, &early),
                None => early,
            });
        }
        // A generator, run through at the call: its items are what its
        // `yield`s gave (any one of them, as many as nobody knows); a body
        // that loops for ever (`while True: ... yield batch`) is the usual
        // kind.
        if f.def.is_generator {
            let item = join_all(self, &frame.yields);
            result = Some(Value::Many(Rc::new(item), None));
        }
        self.recorder.leave_call(outer_call);
        self.env.set_operands(outer_operands);
        // What a call that raised returns is nothing: the caller's next
        // ops meet an unknown value, not a second error.
        let result = result.filter(|_| !frame.raised).unwrap_or(Value::Unknown);
        self.memo_finish(pending, &result);
        result
    }

    /// The value of a parameter the call did not pass: its default, kept
    /// symbolic when the call may have passed it after all.
    fn default_for(&mut self, f: &Rc<Function>, i: usize, open: bool) -> Option<Value> {
        let default = f.defaults.get(i).cloned().flatten()?;
        if !open {
            return Some(default);
        }
        let name = &f.def.params[i].name.id;
        Some(match default {
            Value::Int(_) => Value::Int(self.env.symbol(name)),
            Value::Float(_) => Value::Float(None),
            Value::Bool(_) => Value::Bool(None),
            other => other,
        })
    }
}
