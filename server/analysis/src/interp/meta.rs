//! The interpreter as the rules see it: its implementation of `rules::meta::Meta`.
//!
//! Each method hands a rule one piece of the interpreter's state or one of
//! its services; nothing else of the interpreter is within a rule's reach.

use std::rc::Rc;

use shapels_shapes::{Dim, ShapeEnv};
use shapels_syntax::ast::TextRange;

use super::Interp;
use crate::code::Code;
use crate::report::{Config, Fix};
use crate::rules::fixes::WrittenCall;
use crate::rules::meta::{FakeInputs, Meta, ModeState, TensorDefaults};
use crate::value::{Kwargs, Shape, Tensor, Value};

impl Meta for Interp<'_> {
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
        self.mode
    }

    fn fresh_mode_id(&mut self) -> u32 {
        Interp::fresh_mode_id(self)
    }

    fn defaults(&self) -> &TensorDefaults {
        &self.defaults
    }

    fn set_tensor_default(&mut self, name: &str, arg: Option<&Value>) {
        Interp::set_tensor_default(self, name, arg)
    }

    fn fresh_rank_var(&mut self) -> Shape {
        Interp::fresh_rank_var(self)
    }

    fn fresh_rank_var_like(&mut self, like: u32) -> Shape {
        let shape = Interp::fresh_rank_var(self);
        if let (Shape::Var(v), Some(name)) = (&shape, self.rank_name_of(like)) {
            self.rank_names.insert(*v, name);
        }
        shape
    }

    fn resolve_shape(&self, shape: &Shape) -> Shape {
        Interp::resolve_shape(self, shape)
    }

    fn var_dim_unnamed(&mut self, var: u32, index: i64) -> Dim {
        Interp::var_dim_unnamed(self, var, index)
    }

    fn sibling_shape(&mut self, shape: &Shape, changes: &[(usize, Dim)]) -> Option<Shape> {
        Interp::sibling_shape(self, shape, changes)
    }

    fn adopt_sibling(&mut self, var: u32, base: u32, changes: Vec<(usize, Dim)>) -> bool {
        Interp::adopt_sibling(self, var, base, changes)
    }

    fn sibling_base(&self, var: u32) -> Option<(u32, Vec<(usize, Dim)>)> {
        let (base, changes) = Interp::sibling_base(self, var);
        Some((base, changes.as_ref().clone()))
    }

    fn adopt_shape(&mut self, shape: &Shape, dims: &[Dim]) {
        Interp::adopt_shape(self, shape, dims)
    }

    fn demand_suffix(&mut self, shape: &Shape, k: usize) -> Shape {
        Interp::demand_suffix(self, shape, k)
    }

    fn demand_named_suffix(&mut self, shape: &Shape, names: &[&str]) -> Shape {
        Interp::demand_named_suffix(self, shape, names)
    }

    fn same_leading_dims(&mut self, a: u32, b: u32) -> bool {
        Interp::same_leading_dims(self, a, b)
    }

    fn demand_rank(&mut self, shape: &Shape, names: &[&str]) {
        Interp::demand_rank(self, shape, names)
    }

    fn refine_rank(&mut self, var: u32, names: &[Option<String>]) -> Rc<Vec<Dim>> {
        Interp::refine_rank(self, var, names)
    }

    fn var_dim(&mut self, var: u32, index: i64) -> Dim {
        Interp::var_dim(self, var, index)
    }

    fn as_dim(&mut self, value: &Value) -> Option<Dim> {
        Interp::as_dim(self, value)
    }

    fn opaque_symbol(&mut self, name: &Rc<str>) -> Dim {
        Interp::opaque_symbol(self, name)
    }

    fn sizes_from_opaque(&mut self, args: Vec<Value>) -> Vec<Value> {
        Interp::sizes_from_opaque(self, args)
    }

    fn bounded(&mut self, d: Dim) -> Dim {
        Interp::bounded(self, d)
    }

    fn report(&mut self, range: TextRange, code: Code, message: String) {
        Interp::report(self, range, code, message)
    }

    fn report_related(
        &mut self,
        range: TextRange,
        code: Code,
        message: String,
        related: Vec<(TextRange, String)>,
    ) {
        Interp::report_related(self, range, code, message, related)
    }

    fn check_fake_inputs(
        &mut self,
        tensors: &[Rc<Tensor>],
        name: &str,
        range: TextRange,
    ) -> FakeInputs {
        Interp::check_fake_inputs(self, tensors, name, range)
    }

    fn offered_fixes(&mut self) -> &mut Vec<(Code, Fix)> {
        &mut self.offered_fixes
    }

    fn call_being_made(&self) -> Option<&Rc<WrittenCall>> {
        self.written_call.as_ref()
    }

    fn keyword_maybe_none(&self, name: &str) -> bool {
        self.maybe_none_keywords.iter().any(|k| &**k == name)
    }

    fn src(&self) -> &str {
        self.src
    }

    fn text(&self, range: &TextRange) -> &str {
        Interp::text(self, range)
    }

    fn lists_unsure(&self) -> bool {
        self.frames.last().is_some_and(|f| f.lists_unsure)
    }

    fn made_up_run(&self) -> bool {
        self.recorder.made_up
    }

    fn axis_named(&mut self, at: usize, name: &str, dim: &Dim) {
        self.recorder.pattern_name(at, name, dim.clone());
    }

    fn freeze_for_summary(&mut self, tensor: &Value) {
        self.summary_freeze_tensor(tensor)
    }

    fn call_value(
        &mut self,
        callee: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        range: TextRange,
    ) -> Value {
        Interp::call_value(self, callee, args, kwargs, range)
    }
}
