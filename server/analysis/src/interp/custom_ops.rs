//! Custom ops and their fake kernels: the user's own shape rules, run as torch's fake mode runs them.
//!
//! A custom op's real kernel is often out of reach (a CUDA extension), so
//! torch asks for a fake kernel that computes only the output's metadata:
//! `@fused_attn.register_fake`, `@torch.library.register_fake("mylib::op")`
//! or the older `@torch.library.impl_abstract("mylib::op")`. Under
//! FakeTensorMode torch runs that kernel instead of the op; so does the
//! analysis, for calls of the decorated function and of
//! `torch.ops.mylib.op`. An op declared with `@torch.library.custom_op`
//! and no fake kernel runs its own body. A kernel registered by a call
//! (`torch.library.register_fake("mylib::op", fake)`, `op.register_fake(fake)`)
//! counts as the decorator does.

use std::rc::Rc;

use shapels_syntax::ast::{Arg, Expr, ExprKind, FunctionDef};

use super::Interp;
use crate::value::{Function, Value};

/// How a function's decorator makes it part of a custom op.
enum Role {
    /// `@torch.library.custom_op("ns::op", ...)`: the op itself.
    Op(String),
    /// `@torch.library.register_fake("ns::op")` / `impl_abstract`: the
    /// op's fake kernel, by the op's name.
    FakeOf(String),
    /// `@op.register_fake`: the fake kernel of the function `op` names.
    FakeOfFunction(Value),
}

/// The decorators that register a fake kernel by an op's name.
const REGISTER_FAKE: &[&str] = &["register_fake", "impl_abstract", "register_abstract"];

impl Interp<'_> {
    /// Notes what a function's decorators make of it: a custom op, or the
    /// fake kernel of one.
    pub(crate) fn note_custom_op(&mut self, def: &FunctionDef, function: &Rc<Function>) {
        for decorator in &def.decorators {
            if let Some(role) = self.role(decorator) {
                self.take_role(role, function);
            }
        }
    }

    /// A fake kernel registered by a call instead of a decorator:
    /// `torch.library.register_fake("ns::op", fake)`, the decorator applied
    /// by hand (`torch.library.register_fake("ns::op")(fake)`) and
    /// `op.register_fake(fake)`. Returns what the call returns (the
    /// kernel), or `None` when the call registers nothing.
    pub(crate) fn register_by_call(
        &mut self,
        func: &Expr,
        args: &[Arg],
        positional: &[Value],
    ) -> Option<Value> {
        let path = self.text(&func.range);
        let name = path.rsplit('.').next().unwrap_or(path);
        let library = !path.contains('.')
            || path.starts_with("torch.library.")
            || path.starts_with("library.");
        let role = match &func.kind {
            // The decorator applied by hand: its call is the callee.
            ExprKind::Call { .. } => match positional {
                [Value::Function(_)] => self.role(func)?,
                _ => return None,
            },
            _ if library && REGISTER_FAKE.contains(&name) && positional.len() == 2 => {
                Role::FakeOf(op_name(args)?)
            }
            // `op.register_fake(fake)` of an op the file declares.
            ExprKind::Attribute { value, attr }
                if !library && attr.id == "register_fake" && positional.len() == 1 =>
            {
                match self.eval(value) {
                    op @ Value::Function(_) => Role::FakeOfFunction(op),
                    _ => return None,
                }
            }
            _ => return None,
        };
        let Some(Value::Function(kernel)) = positional.last() else {
            return None;
        };
        let kernel = kernel.clone();
        self.take_role(role, &kernel);
        Some(Value::Function(kernel))
    }

    /// Make `function` what `role` says: a custom op, or an op's fake kernel.
    fn take_role(&mut self, role: Role, function: &Rc<Function>) {
        match role {
            Role::Op(name) => {
                self.custom_ops
                    .entry(name)
                    .or_insert_with(|| function.clone());
            }
            Role::FakeOf(name) => {
                // The op's function, if the file declares it, runs the
                // fake kernel when called directly too.
                if let Some(op) = self.custom_ops.get(&name).cloned()
                    && !Rc::ptr_eq(&op.def, &function.def)
                {
                    self.fake_kernels
                        .insert(Rc::as_ptr(&op.def) as usize, function.clone());
                }
                self.custom_ops.insert(name, function.clone());
            }
            Role::FakeOfFunction(Value::Function(op)) => {
                self.fake_kernels
                    .insert(Rc::as_ptr(&op.def) as usize, function.clone());
                for kernel in self.custom_ops.values_mut() {
                    if Rc::ptr_eq(kernel, &op) {
                        *kernel = function.clone();
                    }
                }
            }
            Role::FakeOfFunction(_) => {}
        }
    }

    fn role(&mut self, decorator: &shapels_syntax::ast::Expr) -> Option<Role> {
        let (callee, args) = match &decorator.kind {
            ExprKind::Call { func, args } => (&**func, Some(args)),
            _ => (decorator, None),
        };
        let ExprKind::Attribute { value, attr } = &callee.kind else {
            // `@register_fake("ns::op")` imported by name.
            if let ExprKind::Name(n) = &callee.kind
                && REGISTER_FAKE.contains(&n.as_str())
            {
                return Some(Role::FakeOf(op_name(args?)?));
            }
            return None;
        };
        let path = self.text(&callee.range);
        let library = path.starts_with("torch.library.") || path.starts_with("library.");
        match attr.id.as_str() {
            "custom_op" if library => Some(Role::Op(op_name(args?)?)),
            name if REGISTER_FAKE.contains(&name) && library => Some(Role::FakeOf(op_name(args?)?)),
            "register_fake" | "register_abstract" if args.is_none() => {
                Some(Role::FakeOfFunction(self.eval(value)))
            }
            _ => None,
        }
    }

    /// The function a call of `torch.ops.ns.op` (or `torch.ops.ns.op.default`) runs.
    pub(crate) fn custom_op(&self, path: &str) -> Option<Rc<Function>> {
        let rest = path.strip_prefix("torch.ops.")?;
        let mut parts = rest.split('.');
        let (namespace, op) = (parts.next()?, parts.next()?);
        if let Some(f) = self.custom_ops.get(&format!("{namespace}::{op}")) {
            return Some(f.clone());
        }
        // The module of the op's namespace, imported (an extension or its
        // stub registers its ops as its top level runs; a top level shared
        // from an earlier analysis did not run here): its function of the
        // op's name.
        self.sys_modules.values().find_map(|m| {
            if m.name.rsplit('.').next() != Some(namespace) {
                return None;
            }
            match m.globals.borrow().get(op) {
                Some(Value::Function(f)) => Some(f.clone()),
                _ => None,
            }
        })
    }

    /// The fake kernel registered for a function, which its calls run.
    pub(crate) fn fake_kernel(&self, f: &Rc<Function>) -> Option<Rc<Function>> {
        self.fake_kernels
            .get(&(Rc::as_ptr(&f.def) as usize))
            .cloned()
    }
}

/// The op's name, the first argument's string: `"mylib::fused_attn"`.
fn op_name(args: &[Arg]) -> Option<String> {
    match args.first()? {
        Arg::Positional(e) => match &e.kind {
            ExprKind::Str(s) if s.contains("::") => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}
