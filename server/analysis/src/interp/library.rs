//! Library mode: the functions and classes no run reached, run on arguments made up from their signatures.
//!
//! A file that only defines a model has hints too: after the module's own
//! code, every class's `forward` and other methods, and every function,
//! that no call reached runs on made-up inputs named from the code
//! (`x: [N, C, H, W]`). A part that the model's made-up runs reach at
//! several widths runs once more on inputs of its own (see
//! `record::own_runs`).

use std::rc::Rc;

use shapels_shapes::Dim;
use shapels_syntax::ast::TextRange;

use super::{Interp, ModeState, call, signature};
use crate::value::{Class, Function, Shape, Value};

/// What a method is called on: an instance, its class, or nothing.
#[derive(Debug, Clone, Copy)]
enum MethodKind {
    Instance,
    Class,
    Static,
}

impl Interp<'_> {
    /// Functions and classes never reached by the module's own code are run
    /// with arguments made from their signatures, so library files get shapes.
    pub(super) fn run_unreached(&mut self) {
        // Factory functions (`def resnet18(): return ResNet(...)`) build the
        // models with real arguments: run them first, so the models' forward
        // runs on those instances rather than on made-up ones.
        let class_names: Vec<Rc<str>> = self.classes.iter().map(|c| c.name.clone()).collect();
        let (factories, others): (Vec<Rc<Function>>, Vec<Rc<Function>>) = self
            .functions
            .iter()
            .rev()
            .cloned()
            .partition(|f| signature::instantiates_any(&f.def, &class_names));
        self.run_functions(factories);
        // A model runs before its parts: running it first reaches the parts
        // through it, with shapes that relate, instead of analysing each
        // part on its own. Models are usually defined after their parts, so
        // the last class goes first, unless another class builds it.
        let classes = models_first(self.classes.iter().rev().cloned().collect());
        for class in classes {
            if self.out_of_budget() {
                return;
            }
            // Skip a class's forward only when an object of exactly this
            // class ran it: a subclass may have run it with settings of its own.
            let ran = self.forward_ran.contains(&(Rc::as_ptr(&class) as usize));
            let mut own_run = false;
            let forward = call::lookup_method(&class, "forward").filter(|f| {
                if !ran || self.recorder.declared_generic(&f.def.range) {
                    return true;
                }
                own_run = self.show_own_run_if_callers_disagree(f);
                own_run
            });
            let methods = self.unreached_methods(&class);
            // A class with a constructor and nothing else (an encoding that
            // fills tables, a config object) still has lines to show: its
            // constructor runs when the made-up instance below is built.
            let unreached_init =
                class.attrs.borrow().get("__init__").is_some_and(
                    |init| matches!(init, Value::Function(f) if !self.reached_only(f)),
                );
            if forward.is_none() && methods.is_empty() && !unreached_init {
                continue;
            }
            self.begin_entry();
            let class_at = Rc::as_ptr(&class) as usize;
            let built: Vec<Value> = self.instances.get(&class_at).cloned().unwrap_or_default();
            // Built several times from settings alone (`vit_tiny()` and
            // `vit_small()` with other widths and head counts): each
            // construction is one case, so forward runs on an instance whose
            // settings are the constructor's parameters, by name. Built from
            // parts (`ResNet(BasicBlock, …)`, `ResNet(Bottleneck, …)`), the
            // constructions say which layers exist: they run as built.
            // Built once by a made-up run from a setting nobody could read,
            // it says less than its own parameters' names: the same.
            let from_settings_only = (built.len() > 1 || self.built_unread.contains(&class_at))
                && !self.built_from_parts.contains(&class_at);
            // A run of its own says what the class does for any settings:
            // the objects built ran already, in the runs that reached it.
            let instances = if built.is_empty() || from_settings_only || own_run {
                // Building it for the run of its own records and reports
                // nothing: the constructor's lines show the objects really
                // built, and what they raise was said when they were.
                self.recorder.own_only = forward.as_ref().filter(|_| own_run).map(|f| f.def.range);
                let reports_before = self.diagnostics.len();
                let instance = self.generic_instance(&class);
                if own_run {
                    self.diagnostics.truncate(reports_before);
                }
                self.recorder.own_only = None;
                vec![instance]
            } else {
                built
            };
            let forward_reran = self.forward_ran.contains(&(Rc::as_ptr(&class) as usize));
            if let Some(forward) = forward {
                let declared = self.recorder.declared_generic(&forward.def.range);
                let receivers: Vec<Option<Value>> =
                    instances.iter().map(|i| Some(i.clone())).collect();
                let own = own_run.then_some(forward.def.range);
                self.run_entry(&forward, own, forward_reran, |interp| {
                    interp.run_on_instances(&forward, &instances, &receivers, declared, true);
                });
            }
            // The other methods (`generate`, `encode`, a loss), after forward
            // so that they see what forward set up, unless forward reached them.
            self.recorder.only_new_sites = true;
            for (method, kind) in methods {
                if self.out_of_budget() {
                    return;
                }
                if self.reached_only(&method) {
                    continue;
                }
                let rerun = self.reached.contains(&(Rc::as_ptr(&method.def) as usize));
                let declared = self.recorder.declared_generic(&method.def.range);
                let receivers: Vec<Option<Value>> = instances
                    .iter()
                    .map(|instance| match kind {
                        MethodKind::Instance => Some(instance.clone()),
                        MethodKind::Class => Some(Value::Class(class.clone())),
                        MethodKind::Static => None,
                    })
                    .collect();
                let own = self.own_body(&method);
                self.recorder.begin_entry_of_new_sites();
                self.run_entry(&method, own, rerun, |interp| {
                    interp.run_on_instances(&method, &instances, &receivers, declared, false);
                });
            }
            self.recorder.only_new_sites = false;
        }
        self.run_functions(others);
    }

    /// A function reached only by runs on made-up inputs that passed it
    /// tensors of different shapes (a block its model runs at four widths)
    /// shows a run of its own (see `Recorder::show_own_run`); returns
    /// whether it does.
    fn show_own_run_if_callers_disagree(&mut self, function: &Function) -> bool {
        let def = &function.def;
        if !crate::workspace::is_local(&def.range) || self.recorder.declared_generic(&def.range) {
            return false;
        }
        let mut disagree = false;
        for param in &def.params {
            let Some(tensors) = self.recorder.made_up_params(param.name.range.start) else {
                return false;
            };
            // Runs of unknown rank agree when their known trailing sizes do.
            let mut shapes = tensors.iter().map(|t| {
                let (known, dims) = match self.resolve_shape(&t.shape) {
                    Shape::Known(dims) => (true, dims),
                    Shape::Tail(_, dims) => (false, dims),
                    Shape::Var(_) => (false, Rc::new(Vec::new())),
                };
                let dims: Vec<Dim> = dims.iter().map(|d| self.env.resolve(d)).collect();
                (known, dims)
            });
            if let Some(first) = shapes.next() {
                disagree |= shapes.any(|s| s != first);
            }
        }
        if disagree {
            self.recorder.show_own_run(def.range);
        }
        disagree
    }

    /// The function's body when it shows a run of its own (see
    /// `Recorder::show_own_run`): only its own lines record in that run.
    fn own_body(&self, function: &Function) -> Option<TextRange> {
        let range = function.def.range;
        self.recorder.shows_own_run(&range).then_some(range)
    }

    /// A run of its own that learned two sizes the code named apart to be
    /// one (`planes` is `inplanes` where no `downsample` was given) holds
    /// for some settings only: the runs that reached the function, on the
    /// objects really built, say more (`merges`: the environment's count
    /// of such lessons before the run).
    fn keep_own_run_if_general(&mut self, function: &TextRange, merges: usize) {
        if self.env.named_merges() > merges {
            self.recorder.drop_own_run(*function);
        }
    }

    /// Runs a method no call reached on each object built of its class
    /// (`receivers`: what it is called on for each), each on a made-up
    /// input of its own. What one object's run learns of its input (three
    /// channels, from a first layer `Conv2d(3, ch, 3)`) is not the input of
    /// another built otherwise (`Conv2d(ch, ch, 1)`): on one shared input,
    /// the second run would learn that `ch` is 3, for the whole file. The
    /// runs' names still line up where they are made alike (`N`, `N_2` are
    /// shown as `N`; see `record::merge`).
    fn run_on_instances(
        &mut self,
        method: &Rc<Function>,
        instances: &[Value],
        receivers: &[Option<Value>],
        declared: bool,
        forward: bool,
    ) {
        for (instance, receiver) in instances.iter().zip(receivers) {
            if !matches!(instance, Value::Instance(_)) {
                continue;
            }
            let (args, kwargs) = self.generic_args(method, forward);
            self.recorder.declared = declared;
            self.open_call = true;
            let at = TextRange::new(0, 0);
            let _ = self.call_function(method, receiver.clone(), args, kwargs, at);
        }
    }

    /// The methods a class defines itself that no run reached, in source
    /// order, with what they are called on. Dunder methods other than
    /// `__call__` are left out: Python calls them, not model code.
    fn unreached_methods(&mut self, class: &Rc<Class>) -> Vec<(Rc<Function>, MethodKind)> {
        let mut methods: Vec<(Rc<Function>, MethodKind)> = class
            .attrs
            .borrow()
            .iter()
            .filter(|(name, _)| {
                &***name != "forward" && (!name.starts_with("__") || &***name == "__call__")
            })
            .filter_map(|(_, value)| match value {
                Value::Function(f) => Some((f.clone(), MethodKind::Instance)),
                Value::Tuple(t) if t.len() == 2 => match (&t[0], &t[1]) {
                    (Value::Str(tag), Value::Function(f)) if &**tag == "@staticmethod" => {
                        // Made without an owner, its first parameter is an
                        // argument like the others, not a receiver.
                        let free = Function {
                            owner: None,
                            ..(**f).clone()
                        };
                        Some((Rc::new(free), MethodKind::Static))
                    }
                    (Value::Str(tag), Value::Function(f)) if &**tag == "@classmethod" => {
                        Some((f.clone(), MethodKind::Class))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
        methods.retain(|(f, _)| !self.reached_only_as_shown(f));
        methods.sort_by_key(|(f, _)| f.def.range.start);
        methods
    }

    /// Whether a run reached the function and library mode has nothing to
    /// add: a function declared generic in its sizes also runs on its
    /// declared shapes, which its lines show (see `Recorder::declare_generic`).
    /// `reached_only`, unless the runs that reached the function disagree
    /// and it shows a run of its own (see `show_own_run_if_callers_disagree`).
    fn reached_only_as_shown(&mut self, function: &Function) -> bool {
        self.reached_only(function) && !self.show_own_run_if_callers_disagree(function)
    }

    fn reached_only(&self, function: &Function) -> bool {
        self.reached.contains(&(Rc::as_ptr(&function.def) as usize))
            && !self.recorder.declared_generic(&function.def.range)
    }

    /// A class or function library mode runs next starts in fake mode,
    /// and names its own unknowns: `hidden_dim` of one model is not
    /// `hidden_dim` of another. It has its own share of steps in other
    /// files' code: the blocks of a file are run one after another, and
    /// the layers they build from a package (timm's `ConvNormAct`) would
    /// otherwise leave nothing to the last ones, which showed nothing.
    fn begin_entry(&mut self) {
        self.mode = ModeState {
            fake: true,
            ..self.mode
        };
        self.opaque_syms.clear();
        self.opaque_numbers.clear();
        self.foreign_steps = 0;
    }

    fn run_functions(&mut self, functions: Vec<Rc<Function>>) {
        for function in functions {
            if self.out_of_budget() {
                return;
            }
            if self.reached_only_as_shown(&function) {
                continue;
            }
            self.begin_entry();
            let rerun = self.reached.contains(&(Rc::as_ptr(&function.def) as usize));
            let own = self.own_body(&function);
            self.run_entry(&function, own, rerun, |interp| {
                let (args, kwargs) = interp.generic_args(&function, false);
                interp.recorder.declared = interp.recorder.declared_generic(&function.def.range);
                interp.open_call = true;
                let _ = interp.call_function(&function, None, args, kwargs, TextRange::new(0, 0));
            });
        }
    }

    /// One of library mode's runs of `function` (`run`): in its run of its
    /// own (`own`, its body), only its own lines record; a rerun
    /// of a function calls reached reports nothing new (see
    /// `drop_rerun_reports`); and a run of its own that learned two sizes
    /// the code named apart to be one is not shown (see
    /// `keep_own_run_if_general`).
    fn run_entry(
        &mut self,
        function: &Function,
        own: Option<TextRange>,
        rerun: bool,
        run: impl FnOnce(&mut Self),
    ) {
        let merges = self.env.named_merges();
        let before = self.diagnostics.len();
        self.recorder.own_only = own;
        run(self);
        self.recorder.own_only = None;
        self.recorder.declared = false;
        self.drop_rerun_reports(rerun, before);
        self.keep_own_run_if_general(&function.def.range, merges);
    }

    /// A declared-generic function that calls reached runs again on its
    /// declared shapes only to name what its lines hold: what those calls
    /// met is what it reports, not what the made-up run meets (an
    /// annotation that lies about a dtype the callers get right).
    fn drop_rerun_reports(&mut self, rerun: bool, before: usize) {
        if rerun {
            self.diagnostics.truncate(before);
        }
    }
}

/// `classes` reordered so that a class another of them builds (in any of
/// its methods, `self.encoder = Encoder(…)`) comes after that one, the
/// given order kept otherwise (and where classes build each other).
fn models_first(classes: Vec<Rc<Class>>) -> Vec<Rc<Class>> {
    if classes.len() < 2 {
        return classes;
    }
    let names: Vec<Rc<str>> = classes.iter().map(|c| c.name.clone()).collect();
    // Per class, the other classes it builds.
    let builds: Vec<Vec<usize>> = classes
        .iter()
        .enumerate()
        .map(|(i, class)| {
            let mut built: Vec<usize> = Vec::new();
            for value in class.attrs.borrow().values() {
                if let Value::Function(f) = value {
                    for j in signature::instantiated(&f.def, &names) {
                        if j != i && !built.contains(&j) {
                            built.push(j);
                        }
                    }
                }
            }
            built
        })
        .collect();
    let mut left: Vec<usize> = (0..classes.len()).collect();
    let mut order: Vec<usize> = Vec::with_capacity(classes.len());
    while !left.is_empty() {
        let built_by_another = |c: usize| left.iter().any(|&o| o != c && builds[o].contains(&c));
        let at = left.iter().position(|&c| !built_by_another(c)).unwrap_or(0);
        order.push(left.remove(at));
    }
    order.into_iter().map(|i| classes[i].clone()).collect()
}
