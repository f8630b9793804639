//! Imports: a module of the user's runs its top level once per run, in a
//! namespace of its own, when the code first imports it (Python's
//! `sys.modules`); any other module is a path the rule table knows
//! (`torch.nn.functional`), as it always was.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use shapels_syntax::ast::{self, TextRange};

use super::{Frame, Interp, MAX_CALL_DEPTH};
use crate::value::{ModuleNs, Value};
use crate::workspace::executed::NotShareable;
use crate::workspace::{Target, scan_level};

/// A module of `sys.modules`: a file of the user's, or a namespace package
/// known by its folders.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ModuleKey {
    File(u32),
    Namespace(Rc<[PathBuf]>),
}

impl Interp<'_> {
    /// Notes, for hover, that the name written at `at` (in this file)
    /// stands for `value`, which another file defines: where its class or
    /// function is written, where its tensor was made, or else where
    /// module `file` binds `name`.
    pub(crate) fn note_definition(
        &mut self,
        at: &TextRange,
        value: &Value,
        bound: Option<(u32, &str)>,
    ) {
        if !self.recorder.expressions || !crate::workspace::is_local(at) {
            return;
        }
        let by_value = match value {
            Value::Class(c) => c.def.as_ref().map(|d| d.name.range),
            Value::Function(f) => Some(f.def.name.range),
            Value::Tensor(t) => t.made_at,
            Value::Module(ns) => ns
                .file
                .and_then(|id| self.modules.module(id))
                .map(|m| TextRange::empty(m.base())),
            _ => None,
        }
        .filter(|r| !crate::workspace::is_local(r));
        let target = by_value.or_else(|| {
            let (file, name) = bound?;
            self.modules.module(file)?.definition_of(name)
        });
        if let Some(target) = target {
            self.definitions.push((*at, target));
            self.across_definition(*at, target);
        }
    }

    /// Whether the code running now is the analysed file's own.
    pub(crate) fn in_main_module(&mut self) -> bool {
        let main = self.main.clone();
        Rc::ptr_eq(&self.frame().module, &main)
    }

    /// The file whose code runs now.
    fn current_file(&mut self) -> u32 {
        self.frame().module.file.unwrap_or(0)
    }

    /// `import a.b.c` binds `a` (after importing `a`, `a.b` and `a.b.c`);
    /// `import a.b.c as m` binds `m` to `a.b.c`.
    pub(super) fn exec_import(&mut self, aliases: &[ast::Alias], stmt: &TextRange) {
        let importer = self.current_file();
        for alias in aliases {
            let chain = self.import_chain(importer, &alias.name, stmt);
            match &alias.asname {
                Some(asname) => {
                    let value = match chain {
                        Some((_, last)) => last,
                        None => Value::Path(Rc::from(alias.name.as_str())),
                    };
                    self.bind_name(&asname.id, value);
                }
                None => {
                    let top = alias.name.split('.').next().unwrap_or("");
                    let value = match chain {
                        Some((first, _)) => first,
                        None => Value::Path(Rc::from(top)),
                    };
                    self.bind_name(top, value);
                }
            }
        }
    }

    /// `from m import a, b as c` and `from m import *`.
    pub(super) fn exec_import_from(
        &mut self,
        module: &str,
        names: &[ast::Alias],
        stmt: &TextRange,
    ) {
        let importer = self.current_file();
        let (level, dotted) = scan_level(module);
        let Some(target) = self.modules.target(importer, level, dotted).cloned() else {
            // Not the user's: a module of the outside world by its path,
            // unless it is relative (then it is the user's, but could not
            // be found, and what it holds is unknown).
            for alias in names.iter().filter(|a| a.name != "*") {
                let value = if level == 0 {
                    Value::Path(Rc::from(format!("{module}.{}", alias.name)))
                } else {
                    Value::Unknown
                };
                self.bind_name(bound_name(alias), value);
            }
            return;
        };
        // Python runs a package before its modules (`from a.b import c`
        // runs `a`, then `a.b`): a module's top level then sees its
        // package as it always does, whichever module was imported first.
        let chained = (level == 0 && dotted.contains('.'))
            .then(|| self.import_chain(importer, dotted, stmt))
            .flatten();
        let imported = match chained {
            Some((_, last)) => last,
            None => self.import_target(&target, dotted, stmt),
        };
        let Value::Module(ns) = imported else {
            for alias in names.iter().filter(|a| a.name != "*") {
                self.bind_name(bound_name(alias), Value::Unknown);
            }
            return;
        };
        for alias in names {
            if alias.name == "*" {
                for (name, value) in public_names(&ns) {
                    self.bind_name(&name, value);
                }
                continue;
            }
            let defined = self.module_attr(&ns, &alias.name);
            let value = match defined {
                Some(v) => v,
                None => {
                    // A name the package does not define is its submodule.
                    let sub = if dotted.is_empty() {
                        alias.name.clone()
                    } else {
                        format!("{dotted}.{}", alias.name)
                    };
                    match self.modules.target(importer, level, &sub).cloned() {
                        Some(t) => {
                            let v = self.import_target(&t, &sub, stmt);
                            self.set_module_attr(&ns, &alias.name, v.clone());
                            v
                        }
                        None => Value::Unknown,
                    }
                }
            };
            if let Some(file) = ns.file {
                let at = alias.asname.as_ref().map_or(&alias.range, |n| &n.range);
                self.note_definition(at, &value, Some((file, &alias.name)));
                if self.in_main_module() {
                    self.imported_names.insert(
                        Rc::from(bound_name(alias)),
                        (file, Rc::from(alias.name.as_str())),
                    );
                }
            }
            self.bind_name(bound_name(alias), value);
        }
    }

    /// Sets an attribute of a module: in its globals, or for this run only
    /// when earlier analyses share them.
    pub(crate) fn set_module_attr(&mut self, ns: &Rc<ModuleNs>, attr: &str, value: Value) {
        if ns.shared.get() {
            let key = (Rc::as_ptr(ns) as usize, Rc::from(attr));
            self.module_attrs.insert(key, value);
        } else {
            ns.globals.borrow_mut().insert(Rc::from(attr), value);
        }
    }

    /// An attribute of a module: what this run set, else its global.
    pub(crate) fn module_attr(&self, ns: &Rc<ModuleNs>, attr: &str) -> Option<Value> {
        if ns.shared.get()
            && let Some(v) = self
                .module_attrs
                .get(&(Rc::as_ptr(ns) as usize, Rc::from(attr)))
        {
            return Some(v.clone());
        }
        ns.globals.borrow().get(attr).cloned()
    }

    /// The first and last module of `a.b.c`, importing each on the way
    /// and making each an attribute of the one before; `None` when `a` is
    /// not the user's.
    fn import_chain(
        &mut self,
        importer: u32,
        dotted: &str,
        stmt: &TextRange,
    ) -> Option<(Value, Value)> {
        let parts: Vec<&str> = dotted.split('.').collect();
        let first_target = self.modules.target(importer, 0, parts[0])?.clone();
        let first = self.import_target(&first_target, parts[0], stmt);
        let mut last = first.clone();
        for i in 1..parts.len() {
            let prefix = parts[..=i].join(".");
            let next = match self.modules.target(importer, 0, &prefix).cloned() {
                Some(t) => self.import_target(&t, &prefix, stmt),
                None => Value::Unknown,
            };
            if let Value::Module(parent) = &last {
                let parent = parent.clone();
                self.set_module_attr(&parent, parts[i], next.clone());
            }
            last = next;
        }
        Some((first, last))
    }

    /// The module a target names, running its top level the first time.
    fn import_target(&mut self, target: &Target, name: &str, stmt: &TextRange) -> Value {
        let key = match target {
            Target::Module(id) => ModuleKey::File(*id),
            Target::Namespace(dirs) => ModuleKey::Namespace(dirs.clone()),
            Target::Unreadable(_) => return Value::Unknown,
        };
        if let Some(ns) = self.sys_modules.get(&key) {
            return Value::Module(ns.clone());
        }
        if let Target::Module(id) = target
            && let Some((ns, cost, imported)) = self.modules.executed(*id)
            && self.charge_kept(&cost)
        {
            self.sys_modules.insert(key, ns.clone());
            for (file, kept) in imported.iter() {
                self.sys_modules
                    .entry(ModuleKey::File(*file))
                    .or_insert_with(|| kept.clone());
            }
            return Value::Module(ns);
        }
        let file = match target {
            Target::Module(id) => Some(*id),
            _ => None,
        };
        let globals = Rc::new(RefCell::new(FxHashMap::default()));
        let ns = Rc::new(ModuleNs {
            file,
            name: Rc::from(name),
            globals: globals.clone(),
            shared: Default::default(),
        });
        self.sys_modules.insert(key, ns.clone());
        let Some(id) = file else {
            return Value::Module(ns);
        };
        let Some(loaded) = self.modules.module(id).cloned() else {
            return Value::Module(ns);
        };
        if self.depth >= MAX_CALL_DEPTH || self.import_steps > super::IMPORT_BUDGET {
            // Cut: the module stays as far as it ran (not at all).
            self.cut_from(0);
            return Value::Module(ns);
        }
        self.frames.push(Frame {
            locals: globals,
            module: ns.clone(),
            closure: None,
            function: None,
            early_returns: Vec::new(),
            is_module: true,
            lists_unsure: false,
            raised: false,
            after_early_exits: 0,
            yields: Vec::new(),
        });
        // An error while a module's top level runs is raised at the import
        // statement, as a traceback shows it.
        self.call_sites.push(*stmt);
        self.depth += 1;
        self.importing += 1;
        let reports = self.reports;
        let base = self.stack.len();
        let outer_floor = std::mem::replace(&mut self.cut_floor, usize::MAX);
        let outer_steps = std::mem::replace(&mut self.module_steps, 0);
        let outer_spent = self.floor_when_spent.take();
        let written_mark = crate::mutation::written_mark();
        let paid_mark = self.imports_paid.len();
        let paid_before = self.imports_paid_set.contains(&id);
        let _ = self.exec_block(&loaded.module.body);
        let own_steps = std::mem::replace(&mut self.module_steps, outer_steps);
        // A module a kept namespace's cost already paid for (it ran inside
        // that module's first run) costs nothing more.
        if paid_before {
            self.import_steps = self.import_steps.saturating_sub(own_steps);
        } else {
            self.imports_paid_set.insert(id);
            self.imports_paid.push((id, own_steps));
        }
        let spent = std::mem::replace(&mut self.floor_when_spent, outer_spent);
        let floor = self.cut_floor;
        self.cut_floor = outer_floor.min(floor);
        self.importing -= 1;
        self.depth -= 1;
        self.call_sites.pop();
        self.frames.pop();
        // A top level that said nothing and met no cut that depends on its
        // importer (none before it spent its own budget, when it ran that
        // long) is kept for later analyses, with what only this one can
        // read left out: it holds what its text and its imports make,
        // whatever ran before it. A recursion cut whose first call was
        // made inside this top level depends on this top level alone (the
        // package `__init__` of a large library walks its folders with a
        // recursive helper): run again for every importer, transformers'
        // two such `__init__` files took about a tenth of a check of its
        // `models/` folder. (A later importer that is itself inside a call
        // of that helper would have cut it one level sooner; no such case
        // is known, and the first analysis on a thread decides.) A
        // top level stopped by its own budget is shared too, as far as it
        // ran: its steps are its own (a module it imports counts apart),
        // so it stops at the same place for every importer, unless a call
        // of it was answered from the importer's memo (fewer steps, a
        // later stop); the first analysis on a thread then decides. Run
        // again for each importer, a mapping-table module of a large
        // library (transformers' `modeling_auto.py`) took a sixth of a
        // 2,600-file check to reach the same stop every time.
        let cut_before_stop = spent.unwrap_or(floor) <= base;
        debug_assert!(spent.is_some() == (own_steps > super::MODULE_BUDGET));
        // A top level this analysis cannot keep for a reason of its own (a
        // cut of the depth limit, which counts the importer's calls; the
        // import budget) may be whole in another analysis: a module that
        // holds its classes or functions is not kept either, or it would
        // hold them as unknown names for every later analysis. A top level
        // imported from the analysed file's own code and cut all the same
        // is cut for every importer.
        let cut_here =
            (cut_before_stop && self.depth > 0) || self.import_steps > super::IMPORT_BUDGET;
        let shareable = if self.reports == reports && !cut_before_stop && !cut_here {
            match crate::workspace::executed::make_shareable(
                &ns,
                // A module this analysis did not import, whose class or
                // function it holds all the same, came in a kept namespace
                // (imported first by another module when it was kept): it
                // is kept too.
                &|file| match self.sys_modules.get(&ModuleKey::File(file)) {
                    Some(m) => m.shared.get(),
                    None => self.modules.executed(file).is_some(),
                },
                &|file| self.unkept_for_this_analysis.contains(&file),
            ) {
                Ok(shareable) => Some(shareable),
                Err(NotShareable::HoldsWhatThisAnalysisCut) => {
                    self.unkept_for_this_analysis.insert(id);
                    None
                }
                Err(NotShareable::TooLarge) => None,
            }
        } else {
            if cut_here {
                self.unkept_for_this_analysis.insert(id);
            }
            None
        };
        if let Some(shareable) = shareable {
            let mut cost = self.imports_paid[paid_mark..].to_vec();
            if paid_before {
                cost.push((id, own_steps));
            }
            // The kept modules its run imported, which an analysis given
            // this namespace imports with it: noted now, as looking each
            // up at every later import costs more than the check saves.
            let imported: Vec<(u32, Rc<ModuleNs>)> = cost
                .iter()
                .filter(|(file, _)| *file != id)
                .filter_map(|(file, _)| {
                    let m = self.sys_modules.get(&ModuleKey::File(*file))?;
                    m.shared.get().then(|| (*file, m.clone()))
                })
                .collect();
            ns.shared.set(true);
            let written = crate::mutation::written_since(written_mark);
            self.modules.keep_executed(
                id,
                ns.clone(),
                cost.into(),
                imported.into(),
                shareable,
                &written,
            );
        }
        Value::Module(ns)
    }

    /// Charges a kept module's cost (see `ImportCost`): the steps of the
    /// modules in it this analysis has not paid for. False, charging
    /// nothing, when they would overrun the import budget: the module then
    /// runs again and stops where a first run would have.
    fn charge_kept(&mut self, cost: &[(u32, u64)]) -> bool {
        let unpaid: u64 = cost
            .iter()
            .filter(|(file, _)| !self.imports_paid_set.contains(file))
            .map(|(_, steps)| steps)
            .sum();
        if self.import_steps + unpaid > super::IMPORT_BUDGET {
            return false;
        }
        self.import_steps += unpaid;
        for &(file, steps) in cost {
            if self.imports_paid_set.insert(file) {
                self.imports_paid.push((file, steps));
            }
        }
        true
    }

    /// The definitions noted, once per name written, as the result gives them.
    pub(crate) fn public_definitions(&mut self) -> Vec<crate::report::Definition> {
        let mut noted = std::mem::take(&mut self.definitions);
        noted.sort_by_key(|(at, _)| (at.start, at.end));
        noted.dedup_by(|a, b| a.0 == b.0);
        noted
            .into_iter()
            .filter_map(|(range, target)| {
                let module = self
                    .modules
                    .module(crate::workspace::file_of(target.start))?;
                let base = module.base();
                Some(crate::report::Definition {
                    range,
                    file: std::sync::Arc::new(crate::report::OtherFile {
                        path: module.path.clone(),
                        text: module.text.clone(),
                    }),
                    target: TextRange::new(target.start - base, target.end.saturating_sub(base)),
                })
            })
            .collect()
    }

    /// Drops what modules hold: functions and modules point at each other
    /// through their globals, and would keep one another alive. Kept
    /// namespaces' objects this analysis wrote are put back as they were
    /// kept.
    pub(crate) fn release_modules(&mut self) {
        for ns in self.sys_modules.values().filter(|ns| !ns.shared.get()) {
            ns.globals.borrow_mut().clear();
        }
        self.sys_modules.clear();
        self.modules.put_back_kept();
    }
}

fn bound_name(alias: &ast::Alias) -> &str {
    alias
        .asname
        .as_ref()
        .map(|n| n.id.as_str())
        .unwrap_or(alias.name.as_str())
}

/// What `from m import *` binds: the names of `__all__` when the module
/// sets it to a list of strings, otherwise every name not starting with
/// an underscore.
fn public_names(ns: &ModuleNs) -> Vec<(Rc<str>, Value)> {
    let globals = ns.globals.borrow();
    let listed: Option<Vec<Rc<str>>> = globals.get("__all__").and_then(|all| {
        let items = all.items()?;
        items
            .into_iter()
            .map(|item| match item {
                Value::Str(s) => Some(s),
                _ => None,
            })
            .collect()
    });
    let mut out: Vec<(Rc<str>, Value)> = match listed {
        Some(names) => names
            .into_iter()
            .map(|n| {
                let v = globals.get(&n).cloned().unwrap_or(Value::Unknown);
                (n, v)
            })
            .collect(),
        None => globals
            .iter()
            .filter(|(k, _)| !k.starts_with('_'))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    // The globals are a hash map: bind in a fixed order.
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
