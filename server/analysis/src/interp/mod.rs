//! The abstract interpreter: runs a module's Python the way FakeTensorMode would.
//!
//! Statements are executed over abstract `Value`s. Tensors are fake; sizes
//! are `Dim`s in one `ShapeEnv`. Whatever cannot be followed becomes
//! `Value::Unknown` and flows on. Every loop, call and expression is bounded
//! by a step budget and a depth limit, so no input can make it hang.

mod alternatives;
mod asserts;
mod assign;
mod assumptions;
pub(crate) mod call;
pub(crate) mod control;
mod custom_ops;
pub(crate) mod defaults;
mod expr;
pub(crate) mod fake_modes;
mod imports;
mod induction;
mod join;
mod library;
mod loops;
mod memo;
mod meta;
mod module_tree;
pub(crate) mod modules;
mod narrowing;
mod ranks;
mod reports;
mod signature;
mod stated;
mod stmt;
mod trail;
mod unknowns;

pub use memo::CallCache;

pub(crate) use crate::rules::meta::ModeState;
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;
use std::rc::Rc;

use shapels_shapes::{Dim, ShapeEnv};
use shapels_syntax::ast::{self, TextRange};

use crate::code::Code;
use crate::record::Recorder;
use crate::report::{Config, Diagnostic};
use crate::value::{Class, Function, Value};

pub(crate) use expr::slice_indices;
pub(crate) use join::{join_all, join_values, optional};
pub(crate) use signature::{is_identifier, shape_comments};
pub(crate) use stated::dims_word;

pub(crate) use crate::value::Scope;

/// Attribute writes inside one undecided branch: the instance, the
/// attribute, and its value before the branch (see `exec_both`).
pub(crate) type AttrJournal = Vec<(Rc<crate::value::Instance>, Rc<str>, Option<Value>)>;

/// Lists grown inside an undecided branch, with their items before it.
pub(crate) type ListJournal = Vec<(crate::value::ListRef, Vec<Value>)>;

/// Dicts written inside an undecided branch, with their entries before it.
pub(crate) type DictJournal = Vec<(crate::value::DictRef, Vec<(Value, Value)>)>;

/// What is known of a rank variable's dims: all of them once a use fixed
/// them (`rank_vars`), else maybe the dims it ends in (`tail_vars`).
pub(crate) type RankState = (Option<Rc<Vec<Dim>>>, Option<(u32, Rc<Vec<Dim>>)>);

/// Some first dims of a tensor, by index, changed to these sizes (see
/// `Interp::sibling_shape`).
pub(crate) type DimChanges = Rc<Vec<(usize, Dim)>>;

/// Rank variables refined inside an undecided branch, with their state before.
pub(crate) type RankJournal = Vec<(u32, RankState)>;

/// How control leaves a statement.
#[derive(Debug, Clone)]
pub(crate) enum Flow {
    Normal,
    Return(Value),
    Break,
    Continue,
    /// The path cannot continue (`raise`, or the budget ran out).
    Stop,
}

/// The execution state of one function call (or of the module body).
pub(crate) struct Frame {
    pub locals: Scope,
    /// The module whose code runs here: where its global names are.
    pub module: Rc<crate::value::ModuleNs>,
    /// The enclosing function's scope for nested functions and lambdas.
    pub closure: Option<Scope>,
    /// The function being run, for `super()`.
    pub function: Option<Rc<Function>>,
    /// Values returned on paths that ended early inside undecided branches.
    pub early_returns: Vec<Value>,
    pub is_module: bool,
    /// Something this frame cannot follow was appended to: an empty list
    /// here may have been filled through it.
    pub lists_unsure: bool,
    /// Torch raised in this function (or in one it called) on every path:
    /// the rest of it does not run, so it reports nothing more and
    /// returns an unknown value.
    pub raised: bool,
    /// Undecided conditions one branch of which left the function early
    /// (`if enc is not None: return enc(x)`): the code after them runs on
    /// some paths only, so what it meets is reported for those paths. Each
    /// counts in `uncertain` until the function returns.
    pub after_early_exits: u32,
    /// What a generator's `yield`s gave so far (see `Interp::call_function`).
    pub yields: Vec<Value>,
}

fn ranges_overlap(a: &TextRange, b: &TextRange) -> bool {
    a.start < b.end && b.start < a.end
}

/// The step budget of a small file: generous for real model files, small
/// enough that a pathological file finishes in well under a second.
const STEP_BUDGET: u64 = 400_000;
/// Of that, what calls into imported files' code may take in the file's
/// own run, and again in each entry library mode runs (see
/// `begin_entry`): a library's base classes (`PreTrainedModel.post_init`)
/// would otherwise take all of it, and the file's own code none.
const FOREIGN_BUDGET: u64 = 20_000;
/// The part of the file's budget all calls into imported files' code may
/// take together (one in this many steps): each entry of library mode
/// has `FOREIGN_BUDGET` of its own, and a file of many entries (a test
/// file that builds a package's model in each test) must still keep most
/// of its budget for its own code.
const FOREIGN_SHARE: u64 = 4;
/// The steps imported modules' top levels may take, apart from the file's
/// budget: that work is shared with later analyses (see
/// `workspace::executed`), so it must not change what is left for the
/// file's own code.
pub(crate) const IMPORT_BUDGET: u64 = 2_000_000;
/// Of that, what one module's own top level may take (its imports count
/// for themselves): what a module that ran within it holds depends on its
/// text and its imports alone, never on what ran before it in this
/// analysis, so it can be shared with every later one.
pub(crate) const MODULE_BUDGET: u64 = 200_000;
/// What each byte of a larger file adds to its budget (see `step_budget`):
/// model code takes about one step per byte, the densest model of the
/// test corpus 2.6; a 4 MiB file that only burns steps (nested loops)
/// stops after its 17 million in a few seconds of a release build.
const STEPS_PER_BYTE: u64 = 4;

/// The step budget of a file of `len` bytes. Ordinary code takes a few
/// steps per byte at most, so a large file gets a budget in proportion
/// and finishes; a pathological file still stops within a bounded time
/// (the analysis does not take sources over `MAX_SOURCE_BYTES` of the
/// server and the CLI).
pub(crate) fn step_budget(len: usize) -> u64 {
    STEP_BUDGET.saturating_add((len as u64).saturating_mul(STEPS_PER_BYTE))
}
/// Nested user calls beyond this depth are not followed.
const MAX_CALL_DEPTH: usize = 24;
/// Expression nesting beyond this is not followed (the syntax layer also caps it).
pub(crate) const MAX_EXPR_DEPTH: usize = 150;
/// Loops run at most this many iterations before the rest is summarised.
pub(crate) const MAX_LOOP_ITERATIONS: usize = 64;

pub(crate) struct Interp<'s> {
    pub src: &'s str,
    /// The user's modules the code can import (see `workspace`).
    pub modules: &'s crate::workspace::ModuleGraph,
    /// The modules imported so far in this run, as Python's `sys.modules`:
    /// each runs its top level once. A module whose top level is still
    /// running (an import cycle) is here already, with the names it has
    /// bound so far.
    pub sys_modules: FxHashMap<imports::ModuleKey, Rc<crate::value::ModuleNs>>,
    /// The analysed file's own module.
    pub main: Rc<crate::value::ModuleNs>,
    /// Attributes this run gave modules whose namespace earlier analyses
    /// share (`import pkg.sub` makes `sub` an attribute of `pkg`): kept
    /// here, by the module's address, so the shared namespace stays as it
    /// was.
    pub module_attrs: FxHashMap<(usize, Rc<str>), Value>,
    /// Names of this file that stand for what other files define, and
    /// where (see `note_definition`): (name here, definition there).
    pub definitions: Vec<(TextRange, TextRange)>,
    /// Globals of this file bound by `from m import name`: the module's
    /// file and the name there.
    pub imported_names: FxHashMap<Rc<str>, (u32, Rc<str>)>,
    /// What the run read of `src` besides the syntax tree.
    pub reads: RefCell<crate::carry::TextReads>,
    pub config: Config,
    pub env: ShapeEnv,
    pub globals: Scope,
    /// Rank variables: `Some(dims)` once a use fixed the rank.
    pub rank_vars: Vec<Option<Rc<Vec<Dim>>>>,
    /// Rank variables known to end in some dims: `v = [*inner, dims...]`.
    pub tail_vars: FxHashMap<u32, (u32, Rc<Vec<Dim>>)>,
    /// Rank variables that are another's dims with some of its first dims
    /// changed (see `Interp::sibling_shape`): `x[:, :k]` or `torch.cat((a,
    /// x), dim=1)` of a tensor of unknown rank has its rank, and its dims
    /// but the one changed.
    pub sibling_vars: FxHashMap<u32, (u32, DimChanges)>,
    /// Rank variables made siblings of another after they were made (see
    /// `Interp::adopt_sibling`), with how many undecided branches were
    /// open then: such a lesson holds in its branch only.
    pub sibling_adoptions: Vec<(u32, usize)>,
    /// Symbols for `x.size(i)` of unknown-rank tensors, by (rank variable, index).
    pub var_dims: FxHashMap<(u32, i64), Dim>,
    /// Dims an `assert x.ndim == n` made, nobody's name yet: the first op
    /// that knows their meaning names them (see `demand_rank`).
    pub asserted_dims: FxHashSet<shapels_shapes::SymId>,
    /// Symbols minted for `Opaque` values used as sizes, by name.
    pub opaque_syms: FxHashMap<Rc<str>, Dim>,
    /// Opaque values a torch call took as a size (`torch.arange(0, dim, 2)`):
    /// numbers, so a tensor meeting one in arithmetic keeps its shape.
    pub opaque_numbers: FxHashSet<Rc<str>>,
    /// The dataset of each `DataLoader` made, by its batches' value (a
    /// loader is its batches, `Value::Many`): `loader.dataset` reads it.
    /// The batch is kept alive here, so its address names no other.
    pub loader_datasets: Vec<(Rc<Value>, Value)>,
    /// Made-up parameters named for a spatial rank whose default is 1, 2
    /// or 3 (`dims=2`), by symbol: compared with 1, 2 or 3 they select 1-,
    /// 2- or 3-D code whose shapes cannot all be shown at once, and the
    /// default's mode is the one shown.
    pub mode_defaults: FxHashMap<shapels_shapes::SymId, i64>,
    /// The name of the made-up input each rank variable stands for, so
    /// that `src.shape[1]` is named `src_1` wherever it is read.
    pub var_sources: FxHashMap<u32, Rc<str>>,
    /// The count of frames below the function each made-up input was made
    /// for (see `settle_made_up_rank`), by its rank variable.
    pub made_up_depth: FxHashMap<u32, usize>,
    pub steps: u64,
    /// Steps taken in imported files' code called from this file, since
    /// the entry library mode runs now began (see `begin_entry`).
    pub foreign_steps: u64,
    /// Steps taken in imported files' code called from this file, in all.
    pub foreign_total: u64,
    /// Steps taken running imported modules' top levels.
    pub import_steps: u64,
    /// The modules whose top levels this analysis ran or was charged for,
    /// in the order each finished, with the steps of its own top level
    /// (see `ImportCost`).
    pub imports_paid: Vec<(u32, u64)>,
    /// The modules of `imports_paid`, to look them up.
    pub imports_paid_set: FxHashSet<u32>,
    /// Modules whose top levels this analysis ran but could not keep for a
    /// reason of its own (see `import_target`).
    pub unkept_for_this_analysis: FxHashSet<u32>,
    /// The steps of the module top level running now, its imports apart.
    pub module_steps: u64,
    /// How many module top levels are running (nested imports).
    pub importing: u32,
    /// The steps this run may take (`step_budget`).
    budget: u64,
    /// Where the first step past the budget was refused: the analysis
    /// stopped there (see `report_budget_stop`).
    budget_stop: Option<TextRange>,
    /// Set by the caller when the result is wanted no more (the document
    /// changed): the run stops at its next check, as if out of steps.
    pub(crate) cancel: Option<&'s std::sync::atomic::AtomicBool>,
    /// The run stopped because `cancel` was set: its result is no answer.
    pub(crate) cancelled: bool,
    pub depth: usize,
    pub expr_depth: usize,
    pub recorder: Recorder,
    /// The last call of the analysed file that gave an unknown value, and
    /// why (see `unknowns`); names bound to unknown values and why; the
    /// reason the targets of the loop starting now get.
    pub last_unknown: Option<(TextRange, Rc<str>)>,
    pub unknown_names: FxHashMap<Rc<str>, Rc<str>>,
    pub loop_unknown: Option<Rc<str>>,
    /// The last call into a package outside the workspace that gave an
    /// unknown value (see `stmt::process_setting`).
    pub last_outside_unknown: Option<TextRange>,
    /// What a model summary needs, noted only when one is asked for.
    pub summary: Option<Box<crate::summary::log::SummaryLog>>,
    pub diagnostics: Vec<Diagnostic>,
    pub mode: ModeState,
    next_mode_id: u32,
    /// The modes the user's code entered (`with FakeTensorMode(...)`), with
    /// their `allow_non_fake_inputs`; every other mode is the analysis' own.
    user_modes: FxHashMap<u32, bool>,
    /// The guards assumed before the innermost statement running now
    /// (see `ShapeEnv::guard_mark`): an op that fails voids those after it.
    pub(crate) stmt_guards: usize,
    /// Torch's default device and dtype as the code has set them.
    pub(crate) defaults: defaults::TensorDefaults,
    /// Functions that some run reached, by the address of their definition.
    pub reached: FxHashSet<usize>,
    /// The functions on the call stack, to cut recursion.
    pub stack: Vec<usize>,
    /// The classes defined in the module, in order (for library mode).
    pub classes: Vec<Rc<Class>>,
    pub functions: Vec<Rc<Function>>,
    /// Attribute writes inside undecided branches, innermost last: the
    /// instance, the attribute, and its value before the branch.
    pub attr_journals: Vec<AttrJournal>,
    /// Lists grown inside undecided branches, innermost last (see
    /// `exec_both`): both branches run on the same list objects.
    pub list_journals: Vec<ListJournal>,
    /// Dicts written inside undecided branches, innermost last (see
    /// `exec_both`): both branches run on the same dict objects.
    pub dict_journals: Vec<DictJournal>,
    /// Dicts both branches of an undecided condition left with the same
    /// keys, whose entries were joined in place: joining the locals that
    /// hold one gives it back (see `join_dicts_written`).
    pub settled_dicts: Vec<usize>,
    /// Ranks fixed inside undecided branches, innermost last, with each
    /// rank variable's value before: a rank only one branch demands (`if
    /// self.dims == 3: ... x.shape[4]`) is no fact about the input.
    pub rank_journals: Vec<RankJournal>,
    /// Set while building a made-up dataclass config: its fields become
    /// symbols named `prefix.field`.
    pub dataclass_prefix: Option<Rc<str>>,
    /// How many made-up dataclasses are being built inside one another
    /// (a field of a dataclass type): bounded, as classes may nest.
    pub dataclass_depth: u32,
    /// Nesting of joins of objects (bounded: objects can refer to themselves).
    pub join_depth: u32,
    /// How many loops of unknown trip count the current path is inside.
    pub unknown_loops: u32,
    /// Lists appended to inside loops that run an unknown number of times
    /// (see `widen_loop_lists`).
    pub loop_appends: Vec<crate::value::ListRef>,
    /// How many undecided branches the current path is inside.
    pub uncertain: u32,
    /// The alternatives of undecided choices being run, innermost last
    /// (see `alternatives`).
    pub(crate) alternatives: Vec<alternatives::Alternative>,
    /// The user calls on the stack that came from real call sites, outermost first.
    pub call_sites: Vec<TextRange>,
    /// Where the parts of the call being made were written (see
    /// `rules::fixes`); set as the call is made, after its arguments ran.
    pub(crate) written_call: Option<Rc<crate::rules::fixes::WrittenCall>>,
    /// The keywords of the torch call being made whose values are `None`
    /// on some paths (see `Meta::keyword_maybe_none`); set with
    /// `written_call`.
    pub(crate) maybe_none_keywords: Vec<Rc<str>>,
    /// Fixes offered for the next report of their code (`offer_fix`).
    pub(crate) offered_fixes: Vec<(Code, crate::report::Fix)>,
    /// The next user call may override any default (see `call_function`).
    pub open_call: bool,
    /// Classes an object of which was called (ran its forward), by address.
    pub forward_ran: FxHashSet<usize>,
    /// What a module called at a site with only inputs nobody can see
    /// returns for any input, by the site, the `forward` and the module
    /// (see `forward_for_any_input`): a loop's turns get the same sizes.
    /// The module is held so that its address is not reused meanwhile.
    pub any_input_results: FxHashMap<(usize, usize, usize, usize), (Value, Value)>,
    /// The symbols and rank variables those runs made: a value whose sizes
    /// they are is made up, not read (see `made_for_any_input`).
    pub made_for_any_input: Vec<(std::ops::Range<u32>, std::ops::Range<u32>)>,
    /// Instances of each user class made so far (a few), by class address.
    pub instances: FxHashMap<usize, Vec<Value>>,
    /// Classes built at least once from arguments that are parts of the
    /// model (a block class, a layer, a function) rather than settings.
    pub built_from_parts: FxHashSet<usize>,
    /// Classes a made-up run built from a setting nobody could read (a
    /// made-up model's `num_heads[i]` in a loop over stages): such an
    /// object says less than one built from the class's own parameters.
    pub built_unread: FxHashSet<usize>,
    /// Where the current top-level call came from, for diagnostics that
    /// belong to a call site rather than to a library line.
    pub frames: Vec<Frame>,
    /// Moves whenever state a call could read changes outside the caller's
    /// own frame: an object, a container, a class, a rank variable.
    pub epoch: crate::mutation::Epoch,
    /// The writes to attributes of instances no memo key has seen
    /// (`self.fc = ...` while a constructor runs): such a write cannot
    /// change a structure the memo numbered, so it leaves `epoch` (and
    /// every number) alone, but a call made before the instance was
    /// written may have read it another way (through a global), and its
    /// memoised result does not survive it (see `memo::unseen`).
    pub(crate) unseen: memo::UnseenWrites,
    /// Moves whenever a global is bound. Kept apart from `epoch` because no
    /// object changes with it: the structures the memo numbered for objects
    /// still hold after `x = model(x)` at the top level.
    pub globals_epoch: u64,
    /// How many times a limit (depth, recursion) cut the analysis short:
    /// a result reached under a cut depends on where the call was made.
    pub cuts: u64,
    /// How much of the call stack (`stack`) the cuts since the last import
    /// began depend on: a recursion cut depends on the frames from the
    /// first call of the recursing function up (its position plus one),
    /// any other cut (depth, budget) on the whole stack and more (0).
    /// `usize::MAX`: no cut. A module top level entered with `n` frames on
    /// the stack whose cuts all have a floor above `n` runs the same for
    /// every importer (see `import_target`).
    pub cut_floor: usize,
    /// `cut_floor` when the module top level being run spent its own
    /// budget (see `import_target`), once it has.
    pub floor_when_spent: Option<usize>,
    /// Calls made before, with their results (see `memo`).
    memo: memo::Memo,
    /// The run of a loop's turns all at once under way, and what it read
    /// and wrote of the loop's names (see `induction`).
    pub(crate) trial: Option<Box<induction::Trial>>,
    /// That run met what it cannot decide for every turn: it stops, as a
    /// spent budget stops the analysis, and the loop runs turn by turn.
    pub(crate) abandoned: bool,
    /// Diagnostics reported so far, those already reported included (a
    /// repeat is not pushed again, but it was reported).
    pub reports: u64,
    /// The values of builtin names, by name (see `builtin_path`).
    builtin_paths: FxHashMap<String, Rc<str>>,
    /// Calls taken from the last version's analysis and kept for the next
    /// (see `memo::across`); idle unless asked for.
    across: memo::Across<'s>,
    /// What the names of each running call's annotations are bound to,
    /// innermost last (see `stated`).
    stated_memos: Vec<stated::Memo>,
    /// The names each running call's arguments bound to the callee's
    /// docstring shapes, for its documented return.
    doc_memos: Vec<stated::Memo>,
    /// The return shape each function's docstring states, by the function's
    /// syntax (read at its first return).
    documented_returns: FxHashMap<
        usize,
        Option<(
            crate::stated::StatedShape,
            TextRange,
            Option<crate::stated::comment::Style>,
        )>,
    >,
    /// The rank variable each `*name` of the signature being made up
    /// stands for (see `stated`).
    stated_ranks: FxHashMap<String, u32>,
    /// The name an annotation gave a rank variable (`*bs` in
    /// `Float[Tensor, "*bs 3"]`), kept for the hints: `[*bs, 3]`.
    rank_names: FxHashMap<u32, Rc<str>>,
    /// A layer made by joining the children of a container the analysis
    /// cannot enumerate (what a loop over it hands out), by address: the
    /// layer (so the address stays its) and the children it stands for, so
    /// that moving it (`layer.to("cuda")`) moves them.
    pub(crate) stands_for: FxHashMap<usize, (Value, Rc<Vec<Value>>)>,
    /// The function each custom op's calls run (`torch.ops.ns.op`): its
    /// fake kernel when one is registered (see `custom_ops`).
    custom_ops: FxHashMap<String, Rc<Function>>,
    /// Fake kernels registered for user functions, by the function's
    /// definition's address.
    fake_kernels: FxHashMap<usize, Rc<Function>>,
}

impl<'s> Interp<'s> {
    pub fn new(
        src: &'s str,
        config: &Config,
        modules: &'s crate::workspace::ModuleGraph,
    ) -> Interp<'s> {
        // An analysis that ended early (a panic caught by its caller) did
        // not put back what it wrote into kept namespaces.
        modules.put_back_kept();
        let globals: Scope = Rc::new(RefCell::new(FxHashMap::default()));
        let main = Rc::new(crate::value::ModuleNs {
            file: Some(0),
            name: Rc::from("__main__"),
            globals: globals.clone(),
            shared: Default::default(),
        });
        Interp {
            src,
            modules,
            sys_modules: FxHashMap::default(),
            main: main.clone(),
            module_attrs: FxHashMap::default(),
            definitions: Vec::new(),
            stated_memos: Vec::new(),
            doc_memos: Vec::new(),
            documented_returns: FxHashMap::default(),
            stated_ranks: FxHashMap::default(),
            rank_names: FxHashMap::default(),
            stands_for: FxHashMap::default(),
            custom_ops: FxHashMap::default(),
            fake_kernels: FxHashMap::default(),
            imported_names: FxHashMap::default(),
            reads: Default::default(),
            config: config.clone(),
            env: ShapeEnv::new(),
            globals: globals.clone(),
            rank_vars: Vec::new(),
            var_dims: FxHashMap::default(),
            asserted_dims: FxHashSet::default(),
            tail_vars: FxHashMap::default(),
            sibling_vars: FxHashMap::default(),
            sibling_adoptions: Vec::new(),
            opaque_syms: FxHashMap::default(),
            opaque_numbers: FxHashSet::default(),
            loader_datasets: Vec::new(),
            mode_defaults: FxHashMap::default(),
            var_sources: FxHashMap::default(),
            made_up_depth: FxHashMap::default(),
            steps: 0,
            foreign_steps: 0,
            foreign_total: 0,
            import_steps: 0,
            imports_paid: Vec::new(),
            imports_paid_set: FxHashSet::default(),
            unkept_for_this_analysis: FxHashSet::default(),
            module_steps: 0,
            importing: 0,
            budget: step_budget(src.len()),
            budget_stop: None,
            cancel: None,
            cancelled: false,
            depth: 0,
            expr_depth: 0,
            recorder: Recorder::default(),
            diagnostics: Vec::new(),
            // Module-level code runs outside any fake mode: tensors it makes are real.
            mode: ModeState {
                fake: false,
                id: 0,
                allow_non_fake_inputs: config.allow_non_fake_inputs,
                user_mode: false,
                autocast: false,
            },
            next_mode_id: 1,
            user_modes: FxHashMap::default(),
            defaults: defaults::TensorDefaults::default(),
            stmt_guards: 0,
            reached: FxHashSet::default(),
            stack: Vec::new(),
            classes: Vec::new(),
            functions: Vec::new(),
            instances: FxHashMap::default(),
            summary: None,
            last_unknown: None,
            unknown_names: FxHashMap::default(),
            loop_unknown: None,
            last_outside_unknown: None,
            built_from_parts: FxHashSet::default(),
            built_unread: FxHashSet::default(),
            forward_ran: FxHashSet::default(),
            any_input_results: FxHashMap::default(),
            made_for_any_input: Vec::new(),
            open_call: false,
            uncertain: 0,
            alternatives: Vec::new(),
            unknown_loops: 0,
            loop_appends: Vec::new(),
            join_depth: 0,
            dataclass_prefix: None,
            dataclass_depth: 0,
            attr_journals: Vec::new(),
            list_journals: Vec::new(),
            dict_journals: Vec::new(),
            settled_dicts: Vec::new(),
            rank_journals: Vec::new(),
            call_sites: Vec::new(),
            written_call: None,
            maybe_none_keywords: Vec::new(),
            offered_fixes: Vec::new(),
            frames: vec![Frame {
                locals: globals,
                module: main,
                closure: None,
                function: None,
                early_returns: Vec::new(),
                is_module: true,
                lists_unsure: false,
                raised: false,
                after_early_exits: 0,
                yields: Vec::new(),
            }],
            epoch: crate::mutation::Epoch::default(),
            unseen: memo::UnseenWrites::default(),
            globals_epoch: 0,
            cuts: 0,
            cut_floor: usize::MAX,
            floor_when_spent: None,
            memo: memo::Memo::default(),
            trial: None,
            abandoned: false,
            builtin_paths: FxHashMap::default(),
            reports: 0,
            across: memo::Across::default(),
        }
    }

    /// Run the module body, then every class and function no run reached,
    /// with arguments made up from their signatures (library mode).
    pub fn run_module(&mut self, module: &ast::Module) {
        let _ = self.exec_block(&module.body);
        self.recorder.made_up = true;
        self.forget_defaults_set_in(&module.body);
        self.run_unreached();
    }

    /// Counts a cut (a limit that stopped a call or an evaluation short)
    /// with its floor (see `cut_floor`).
    pub(crate) fn cut_from(&mut self, floor: usize) {
        self.cuts += 1;
        self.cut_floor = self.cut_floor.min(floor);
    }

    /// Count one step; false once the budget is spent.
    pub fn tick(&mut self) -> bool {
        if self.importing > 0 {
            self.import_steps += 1;
            self.module_steps += 1;
            if self.module_steps == MODULE_BUDGET + 1 {
                self.floor_when_spent = Some(self.cut_floor);
            }
            return !self.out_of_budget();
        }
        self.steps += 1;
        // Reading the flag costs an atomic load: once every 256 steps is
        // often enough to stop within a fraction of a millisecond.
        if self.steps.is_multiple_of(256)
            && let Some(cancel) = self.cancel
            && cancel.load(std::sync::atomic::Ordering::Relaxed)
        {
            self.cancelled = true;
        }
        if self.in_foreign_code() {
            self.foreign_steps += 1;
            self.foreign_total += 1;
        }
        !self.out_of_budget()
    }

    /// `tick` for the statement or expression at `range`, which is where
    /// the analysis stopped when this is the first step refused of the
    /// file's own budget.
    pub fn tick_at(&mut self, range: &TextRange) -> bool {
        if self.tick() {
            return true;
        }
        if self.budget_stop.is_none()
            && self.importing == 0
            && self.steps > self.budget
            && crate::workspace::is_local(range)
        {
            self.budget_stop = Some(*range);
        }
        false
    }

    /// Whether the budget of what runs now is spent: the imports' while a
    /// module's top level runs; otherwise the file's, and in another
    /// file's code the share that code may take of it.
    pub fn out_of_budget(&self) -> bool {
        if self.importing > 0 {
            return self.import_steps > IMPORT_BUDGET || self.module_steps > MODULE_BUDGET;
        }
        self.cancelled
            || self.abandoned
            || self.steps > self.budget
            || (!self.foreign_budget_left() && self.in_foreign_code())
    }

    /// Whether the code running now is another file's.
    pub(crate) fn in_foreign_code(&self) -> bool {
        self.frames.last().is_some_and(|f| f.module.file != Some(0))
    }

    /// Whether a call into another file's function may still run.
    pub(crate) fn foreign_budget_left(&self) -> bool {
        self.importing > 0
            || (self.foreign_steps <= FOREIGN_BUDGET
                && self.foreign_total <= self.budget / FOREIGN_SHARE)
    }

    /// Says where the analysis stopped, when the budget ran out: what
    /// comes after is unknown for that reason, not because the code is
    /// beyond the analysis. The diagnostic covers the line (its code) of
    /// the statement or expression that was not run.
    /// Returns whether it did.
    pub fn report_budget_stop(&mut self) -> bool {
        let Some(range) = self.budget_stop.take() else {
            return false;
        };
        let at = range.start.min(self.src.len());
        let line_start = self.src[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.src[at..].find('\n').map_or(self.src.len(), |i| at + i);
        let line = &self.src[line_start..line_end];
        let indent = line.len() - line.trim_start().len();
        let code = line.trim().len();
        let range = line_start + indent..line_start + indent + code;
        self.report(
            range.into(),
            Code::AnalysisBudget,
            format!(
                "analysis stopped here: step budget of {} exhausted; shapes below are unknown",
                self.budget
            ),
        );
        true
    }

    pub fn frame(&mut self) -> &mut Frame {
        self.frames
            .last_mut()
            .expect("the module frame is never popped")
    }

    pub fn fresh_mode_id(&mut self) -> u32 {
        let id = self.next_mode_id;
        self.next_mode_id += 1;
        id
    }

    /// Opaque values passed to tensor ops are sizes (`x.view(B, self.n_embd)`).
    pub fn sizes_from_opaque(&mut self, args: Vec<Value>) -> Vec<Value> {
        args.into_iter()
            .map(|v| match v {
                Value::Opaque(name) => {
                    self.opaque_numbers.insert(name.clone());
                    Value::Int(self.opaque_symbol(&name))
                }
                Value::Tuple(items) if items.iter().any(|i| matches!(i, Value::Opaque(_))) => {
                    Value::tuple(self.sizes_from_opaque(items.as_ref().clone()))
                }
                other => other,
            })
            .collect()
    }

    /// The source text of a range (for names like `config.n_embd`).
    pub fn text(&self, range: &TextRange) -> &'s str {
        if !crate::workspace::is_local(range) {
            return self.source(range);
        }
        self.reads.borrow_mut().text(*range);
        self.src.get(range.range()).unwrap_or("")
    }

    /// The text of a range of this file or of an imported one, without
    /// noting it as read (an imported file's text is its version, which
    /// the caller of the analysis checks as a whole).
    pub fn source(&self, range: &TextRange) -> &'s str {
        let modules: &'s crate::workspace::ModuleGraph = self.modules;
        match crate::workspace::file_of(range.start) {
            0 => self.src.get(range.range()).unwrap_or(""),
            id => modules
                .module(id)
                .and_then(|m| {
                    let base = m.base();
                    m.text
                        .get(range.start - base..range.end.saturating_sub(base))
                })
                .unwrap_or(""),
        }
    }

    /// The whole text of the file `range` is in (this file's or an
    /// imported one's), not noted as read (see `source`).
    pub(crate) fn module_text(&self, range: &TextRange) -> &'s str {
        let modules: &'s crate::workspace::ModuleGraph = self.modules;
        match crate::workspace::file_of(range.start) {
            0 => self.src,
            id => modules.module(id).map_or("", |m| &m.text),
        }
    }

    /// Whether `range` is in an imported `.pyi` stub.
    pub(crate) fn in_stub_file(&self, range: &TextRange) -> bool {
        match crate::workspace::file_of(range.start) {
            0 => false,
            id => self
                .modules
                .module(id)
                .is_some_and(|m| m.path.extension().is_some_and(|e| e == "pyi")),
        }
    }
}
