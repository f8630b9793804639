//! What a shape rule may touch: the narrow interface between the rules and the interpreter.
//!
//! Torch runs a meta kernel with nothing but its inputs, the fake mode and
//! the shape environment: it cannot reach the Python code around the call.
//! A rule here is the same kind of function, and `Meta` is all it gets: the
//! `ShapeEnv` and the rank variables of tensors of unknown rank, the fake
//! mode's flags and torch's defaults, the way to report what torch raises
//! (with a fix to offer), and one way back into user code, `call_value`,
//! for the layers that run user modules (`nn.Sequential` of user blocks).
//! The interpreter implements it (`interp/meta.rs`); `rules/` never names
//! the interpreter, so the interpreter's state stays its own and a rule's
//! reach is this list.

use std::rc::Rc;

use shapels_shapes::{Dim, ShapeEnv, Unified};
use shapels_syntax::ast::TextRange;

use crate::code::Code;
use crate::report::{Config, Fix};
use crate::rules::check::{RuleResult, Stop};
use crate::rules::fixes::WrittenCall;
use crate::value::{DType, Device, Kwargs, Provenance, Shape, Tensor, Value};

/// The fake scope the code currently runs in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ModeState {
    /// Tensors made now are fake (inside the analysis' mode or a user mode).
    pub fake: bool,
    pub id: u32,
    pub allow_non_fake_inputs: bool,
    /// The mode was written by the user (`with FakeTensorMode()`).
    pub user_mode: bool,
    /// Inside `with torch.autocast(...)`: matrix products and layers run
    /// in the autocast dtype, whatever their operands' dtypes.
    pub autocast: bool,
}

/// What factories and layers use when a call names no device or dtype.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TensorDefaults {
    /// `None`: unknown (the code may have changed it).
    pub device: Option<Device>,
    /// The dtype of floating-point factories and layer parameters; `None`:
    /// unknown.
    pub float: Option<DType>,
}

impl Default for TensorDefaults {
    fn default() -> Self {
        TensorDefaults {
            device: Some(Device::Cpu),
            float: Some(DType::Float32),
        }
    }
}

/// What an op's inputs break of the fake mode's rules.
pub(crate) enum FakeInputs {
    /// Nothing: the op runs.
    Fine,
    /// The user's mode raises (torch's `AssertionError`): the op fails.
    Raises,
}

/// Everything a rule may read or change. The required methods are the
/// interpreter's state; the provided ones are built on them and are what
/// most rules call.
pub(crate) trait Meta {
    /// The sizes and what is known of them.
    fn env(&self) -> &ShapeEnv;
    fn env_mut(&mut self) -> &mut ShapeEnv;
    /// The flags of the analysis' own fake mode.
    fn config(&self) -> &Config;
    /// The fake scope an op made now runs in.
    fn mode(&self) -> ModeState;
    /// A new mode's number (`FakeTensorMode()` built by the code).
    fn fresh_mode_id(&mut self) -> u32;
    /// Torch's default device and dtype as the code has set them.
    fn defaults(&self) -> &TensorDefaults;
    /// `torch.set_default_device(d)` and its kin.
    fn set_tensor_default(&mut self, name: &str, arg: Option<&Value>);

    /// A new rank variable (a tensor of unknown rank).
    fn fresh_rank_var(&mut self) -> Shape;
    /// A new rank variable for dims made from those of `like` (the batch
    /// dims of a broadcast), printed under the name an annotation gave it.
    fn fresh_rank_var_like(&mut self, like: u32) -> Shape {
        let _ = like;
        self.fresh_rank_var()
    }
    /// The shape with a refined rank variable replaced by its dims.
    fn resolve_shape(&self, shape: &Shape) -> Shape;
    /// Give a shape of unknown rank the dims an op proved it has.
    fn adopt_shape(&mut self, shape: &Shape, dims: &[Dim]);
    /// Make sure a shape of unknown rank ends in at least `k` known dims.
    fn demand_suffix(&mut self, shape: &Shape, k: usize) -> Shape;
    /// `demand_suffix` for as many dims as `names`, new ones named so
    /// (`H, W` for the last two dims an image padding names).
    fn demand_named_suffix(&mut self, shape: &Shape, names: &[&str]) -> Shape;
    /// Make two rank variables one when an annotation named one of them
    /// (see `Interp::same_leading_dims`); false when they stay apart.
    fn same_leading_dims(&mut self, a: u32, b: u32) -> bool {
        let _ = (a, b);
        false
    }
    /// Give an unknown-rank tensor the rank an op demands, with dims named
    /// after their conventional meaning.
    fn demand_rank(&mut self, shape: &Shape, names: &[&str]);
    /// Fix the rank of an unknown-rank shape, naming the new dims.
    fn refine_rank(&mut self, var: u32, names: &[Option<String>]) -> Rc<Vec<Dim>>;
    /// `x.size(i)` of a tensor whose rank is unknown.
    fn var_dim(&mut self, var: u32, index: i64) -> Dim;
    /// `var_dim`, but a size nobody named when it is new.
    fn var_dim_unnamed(&mut self, var: u32, index: i64) -> Dim {
        self.var_dim(var, index)
    }
    /// A tensor of `shape`'s rank and dims but those at `changes` (first
    /// dims, counted from 0), see `Interp::sibling_shape`; `None` where the
    /// analysis cannot say it.
    fn sibling_shape(&mut self, shape: &Shape, changes: &[(usize, Dim)]) -> Option<Shape> {
        let _ = (shape, changes);
        None
    }
    /// The rank variable `var` is made from, with the first dims it
    /// changes (itself and none for one made from no other); `None` where
    /// the analysis does not say.
    fn sibling_base(&self, var: u32) -> Option<(u32, Vec<(usize, Dim)>)> {
        let _ = var;
        None
    }
    /// See `Interp::adopt_sibling`.
    fn adopt_sibling(&mut self, var: u32, base: u32, changes: Vec<(usize, Dim)>) -> bool {
        let _ = (var, base, changes);
        false
    }

    /// A dim from an int-like value (opaque values become named symbols).
    fn as_dim(&mut self, value: &Value) -> Option<Dim>;
    /// The symbol an opaque value stands for as a size.
    fn opaque_symbol(&mut self, name: &Rc<str>) -> Dim;
    /// Opaque values passed to tensor ops are sizes.
    fn sizes_from_opaque(&mut self, args: Vec<Value>) -> Vec<Value>;
    /// A size kept small: one grown past the limit is unknown.
    fn bounded(&mut self, d: Dim) -> Dim;

    /// Report a problem with its code's default severity.
    fn report(&mut self, range: TextRange, code: Code, message: String);
    /// `report` with related places (where an operand came from).
    fn report_related(
        &mut self,
        range: TextRange,
        code: Code,
        message: String,
        related: Vec<(TextRange, String)>,
    );
    /// Check an op's inputs against the fake mode that governs it, and
    /// report what torch would raise.
    fn check_fake_inputs(
        &mut self,
        tensors: &[Rc<Tensor>],
        name: &str,
        range: TextRange,
    ) -> FakeInputs;
    /// The fixes proposed for the next diagnostics, in order.
    fn offered_fixes(&mut self) -> &mut Vec<(Code, Fix)>;
    /// The written parts of the call being made (see `rules::fixes`).
    fn call_being_made(&self) -> Option<&Rc<WrittenCall>>;
    /// Whether the call being made passes keyword `name` a value that is
    /// `None` on some of the paths that meet there (`size=size` after `if
    /// fixed is not None: size = ...`). Rules see such a value as it is
    /// when given; a check that torch makes only of a value that is not
    /// `None` may not hold on every path.
    fn keyword_maybe_none(&self, _name: &str) -> bool {
        false
    }

    /// The text of the analysed file.
    fn src(&self) -> &str;
    /// The source text of a range, noted as read.
    fn text(&self, range: &TextRange) -> &str;
    /// The run's lists may hold more than the analysis followed (a branch
    /// it could not decide appended to them).
    fn lists_unsure(&self) -> bool;
    /// The run is one on inputs the analysis made up (library mode).
    fn made_up_run(&self) -> bool;
    /// An einops pattern written at `at` names the axis of size `dim`
    /// (`n` of `'b n (h d)'`): in the function there, a size nobody else
    /// named is shown by that name.
    fn axis_named(&mut self, at: usize, name: &str, dim: &Dim) {
        let _ = (at, name, dim);
    }
    /// `p.requires_grad_(False)` for a model summary.
    fn freeze_for_summary(&mut self, tensor: &Value);
    /// Call user code (a user module inside a torch container).
    fn call_value(
        &mut self,
        callee: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value;

    /// The value of a rule's result at the call `range`: an error is
    /// reported there, with its code's severity, and the result is
    /// unknown, as torch raises and nothing after the call runs with it.
    fn settle(&mut self, range: TextRange, result: RuleResult) -> Value {
        match result {
            Ok(value) | Err(Stop::Give(value)) => value,
            Err(Stop::Raise(error)) => {
                self.report(range, error.code, error.message);
                Value::Unknown
            }
        }
    }

    /// A tensor made by the current code: fake inside a fake scope, real
    /// outside, and of the scope's mode.
    fn new_tensor(
        &self,
        shape: Shape,
        dtype: Option<DType>,
        device: Option<Device>,
        op: &str,
    ) -> Tensor {
        let mode = self.mode();
        Tensor {
            shape,
            dtype,
            device,
            origin: if mode.fake {
                Provenance::Fake
            } else {
                Provenance::Real
            },
            mode: mode.id,
            op: Rc::from(op),
            made_at: None,
            is_param: false,
            layout: None,
            trail: None,
        }
    }

    /// The tensor's dims, resolved, when its rank is known.
    fn dims(&self, t: &Tensor) -> Option<Vec<Dim>> {
        match self.resolve_shape(&t.shape) {
            Shape::Known(d) => Some(d.iter().map(|x| self.env().resolve(x)).collect()),
            Shape::Var(_) | Shape::Tail(..) => None,
        }
    }

    /// The number of dims, when known, without resolving them.
    fn rank(&self, t: &Tensor) -> Option<usize> {
        self.resolve_shape(&t.shape).dims().map(<[Dim]>::len)
    }

    /// Sizes from values (ints, symbols, opaque names); an unknown value is an unknown size.
    fn size_dims(&mut self, values: &[Value]) -> Vec<Dim> {
        values
            .iter()
            .map(|v| match self.as_dim(v) {
                Some(d) => d,
                None => self.env_mut().anonymous(),
            })
            .collect()
    }

    /// The product of the dims, or an unknown size when it overflows
    /// `i64` (no tensor has that many elements: torch's storage size check
    /// fails first), so that no element count is checked against it.
    fn numel_or_unknown(&mut self, dims: &[Dim]) -> Dim {
        let total = crate::rules::shape::numel(dims);
        if total.overflowed() {
            self.env_mut().anonymous()
        } else {
            total
        }
    }

    /// `[8, 128]` for messages, with symbols by name.
    fn fmt_dims(&self, dims: &[Dim]) -> String {
        let parts: Vec<String> = dims.iter().map(|d| self.env().display(d)).collect();
        format!("[{}]", parts.join(", "))
    }

    /// Sizes as a Python tuple, as torch prints an `IntArrayRef` argument:
    /// `(21, 19)`, `(23,)`.
    fn fmt_tuple(&self, dims: &[Dim]) -> String {
        let parts: Vec<String> = dims.iter().map(|d| self.env().display(d)).collect();
        match parts.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", parts.join(", ")),
        }
    }

    fn fmt_dim(&self, d: &Dim) -> String {
        self.env().display(d)
    }

    /// Whether two sizes may be equal; `false` only when known to differ.
    /// When they may be, the equality is recorded (unifying symbols).
    fn require_equal(&mut self, a: &Dim, b: &Dim) -> bool {
        !matches!(self.env_mut().unify(a, b), Unified::Contradiction)
    }

    /// Whether the size is known to be 1.
    fn is_one(&self, d: &Dim) -> bool {
        self.env().value(d) == Some(1)
    }

    /// The written parts of the call at `range`, when it is the call being
    /// made and it was written in the analysed file.
    fn written_call(&self, range: &TextRange) -> Option<Rc<WrittenCall>> {
        self.call_being_made()
            .filter(|w| w.call == *range && crate::workspace::is_local(range))
            .cloned()
    }

    /// Proposes `fix` for the next diagnostic of `code` reported.
    fn offer_fix(&mut self, code: Code, fix: Fix) {
        self.offered_fixes().push((code, fix));
    }

    /// The fixes offered for a diagnostic of `code`, taken.
    fn take_fixes(&mut self, code: Code) -> Vec<Fix> {
        let mut taken = Vec::new();
        self.offered_fixes().retain(|(c, fix)| {
            if *c == code {
                taken.push(fix.clone());
                false
            } else {
                true
            }
        });
        taken
    }

    /// The source text of `range` when it is in the analysed file.
    fn local_text(&self, range: &TextRange) -> Option<&str> {
        if !crate::workspace::is_local(range) {
            return None;
        }
        self.src().get(range.range())
    }
}

/// A `Meta` with no interpreter behind it, for unit tests of the rules:
/// that a rule runs on this alone is what makes it a meta function.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// The shape state of one test: sizes, rank variables, and what the
    /// rules reported, in order.
    #[derive(Default)]
    pub(crate) struct TestMeta {
        env: ShapeEnv,
        config: Config,
        defaults: TensorDefaults,
        ranks: Vec<Option<Rc<Vec<Dim>>>>,
        fixes: Vec<(Code, Fix)>,
        /// The reports, as (code, message).
        pub reports: Vec<(Code, String)>,
    }

    impl TestMeta {
        pub(crate) fn new() -> Self {
            TestMeta {
                env: ShapeEnv::new(),
                ..Default::default()
            }
        }

        /// A float32 cpu tensor of these sizes; a negative size is a
        /// symbol named after its position (`-1` is `s1`).
        pub(crate) fn tensor(&mut self, sizes: &[i64]) -> Value {
            let dims: Vec<Dim> = sizes
                .iter()
                .map(|&n| match n {
                    n if n < 0 => self.env.symbol(&format!("s{}", -n)),
                    n => Dim::konst(n),
                })
                .collect();
            let t = self.new_tensor(
                Shape::known(dims),
                Some(DType::Float32),
                Some(Device::Cpu),
                "test",
            );
            Value::Tensor(Rc::new(t))
        }

        /// The shape of a result as it would be printed, or why there is none.
        pub(crate) fn shown(&self, value: &Value) -> String {
            match value {
                Value::Tensor(t) => match self.dims(t) {
                    Some(dims) => self.fmt_dims(&dims),
                    None => "unknown rank".to_string(),
                },
                Value::Tuple(items) => {
                    let parts: Vec<String> = items.iter().map(|v| self.shown(v)).collect();
                    format!("({})", parts.join(", "))
                }
                other => format!("{other:?}"),
            }
        }
    }

    impl Meta for TestMeta {
        fn env(&self) -> &ShapeEnv {
            &self.env
        }
        fn env_mut(&mut self) -> &mut ShapeEnv {
            &mut self.env
        }
        fn config(&self) -> &Config {
            &self.config
        }
        fn mode(&self) -> ModeState {
            ModeState {
                fake: true,
                id: 0,
                allow_non_fake_inputs: true,
                user_mode: false,
                autocast: false,
            }
        }
        fn fresh_mode_id(&mut self) -> u32 {
            1
        }
        fn defaults(&self) -> &TensorDefaults {
            &self.defaults
        }
        fn set_tensor_default(&mut self, _: &str, _: Option<&Value>) {}
        fn fresh_rank_var(&mut self) -> Shape {
            self.ranks.push(None);
            Shape::Var(self.ranks.len() as u32 - 1)
        }
        fn resolve_shape(&self, shape: &Shape) -> Shape {
            match shape {
                Shape::Var(v) => match self.ranks.get(*v as usize) {
                    Some(Some(dims)) => Shape::known(dims.as_ref().clone()),
                    _ => shape.clone(),
                },
                _ => shape.clone(),
            }
        }
        fn adopt_shape(&mut self, shape: &Shape, dims: &[Dim]) {
            if let Shape::Var(v) = self.resolve_shape(shape) {
                self.ranks[v as usize] = Some(Rc::new(dims.to_vec()));
            }
        }
        fn demand_suffix(&mut self, shape: &Shape, _: usize) -> Shape {
            self.resolve_shape(shape)
        }
        fn demand_named_suffix(&mut self, shape: &Shape, _: &[&str]) -> Shape {
            self.resolve_shape(shape)
        }
        fn demand_rank(&mut self, shape: &Shape, names: &[&str]) {
            let dims: Vec<Dim> = names.iter().map(|n| self.env.weak_symbol(n)).collect();
            self.adopt_shape(shape, &dims);
        }
        fn refine_rank(&mut self, var: u32, names: &[Option<String>]) -> Rc<Vec<Dim>> {
            let dims: Vec<Dim> = names.iter().map(|_| self.env.anonymous()).collect();
            self.adopt_shape(&Shape::Var(var), &dims);
            Rc::new(dims)
        }
        fn var_dim(&mut self, _: u32, _: i64) -> Dim {
            self.env.anonymous()
        }
        fn as_dim(&mut self, value: &Value) -> Option<Dim> {
            match value {
                Value::Int(d) => Some(d.clone()),
                _ => None,
            }
        }
        fn opaque_symbol(&mut self, name: &Rc<str>) -> Dim {
            self.env.symbol(name)
        }
        fn sizes_from_opaque(&mut self, args: Vec<Value>) -> Vec<Value> {
            args
        }
        fn bounded(&mut self, d: Dim) -> Dim {
            d
        }
        fn report(&mut self, _: TextRange, code: Code, message: String) {
            self.reports.push((code, message));
        }
        fn report_related(
            &mut self,
            _: TextRange,
            code: Code,
            message: String,
            _: Vec<(TextRange, String)>,
        ) {
            self.reports.push((code, message));
        }
        fn check_fake_inputs(&mut self, _: &[Rc<Tensor>], _: &str, _: TextRange) -> FakeInputs {
            FakeInputs::Fine
        }
        fn offered_fixes(&mut self) -> &mut Vec<(Code, Fix)> {
            &mut self.fixes
        }
        fn call_being_made(&self) -> Option<&Rc<WrittenCall>> {
            None
        }
        fn src(&self) -> &str {
            ""
        }
        fn text(&self, _: &TextRange) -> &str {
            ""
        }
        fn lists_unsure(&self) -> bool {
            false
        }
        fn made_up_run(&self) -> bool {
            false
        }
        fn freeze_for_summary(&mut self, _: &Value) {}
        fn call_value(&mut self, _: &Value, _: Vec<Value>, _: Kwargs, _: TextRange) -> Value {
            Value::Unknown
        }
    }
}
