//! The places of one version of a file that the next version can find
//! again: its items, each named by what it is and its text, and places as
//! offsets into them; places in the files it imports as offsets into the
//! file, named by its path and text (another run numbers files otherwise).

use std::hash::{Hash, Hasher};
use std::rc::Rc;

use rustc_hash::FxHashMap;
use shapels_syntax::ast::{self, Module, StmtKind, TextRange};

use super::stable_hasher;
use crate::interp::control::is_main_guard;
use crate::workspace::{FILE_SPAN, ModuleGraph, file_of, is_local};

/// A top-level statement or a method of a top-level class, that the next
/// version can find again by its name and text.
struct Item {
    identity: u64,
    span: TextRange,
    /// The address of its definition's syntax (0 for other statements).
    def: usize,
}

/// The items of one version of a file.
#[derive(Default)]
pub(crate) struct Items {
    items: Vec<Item>,
    /// Functions and methods (which do not overlap), by start.
    functions: Vec<(usize, u32)>,
    /// Top-level statements, by start.
    statements: Vec<(usize, u32)>,
    /// By the address of their syntax.
    pub(super) by_def: FxHashMap<usize, u32>,
    /// Identities two items share are left out: neither can be found again.
    pub(super) by_identity: FxHashMap<u64, u32>,
    /// The imported files' identities (a hash of path and text), by id.
    files: FxHashMap<u32, u64>,
    /// The same, the other way.
    file_ids: FxHashMap<u64, u32>,
}

impl Items {
    pub(crate) fn new(src: &str, module: &Module, graph: &ModuleGraph) -> Items {
        let mut items = Items::default();
        for file in graph.loaded() {
            let mut hasher = stable_hasher();
            file.path.hash(&mut hasher);
            file.hash.hash(&mut hasher);
            let identity = hasher.finish();
            items.files.insert(file.id, identity);
            items.file_ids.insert(identity, file.id);
        }
        let mut shared = Vec::new();
        let mut add =
            |items: &mut Items, name: &str, range: &TextRange, starts: Vec<usize>, addr: usize| {
                let start = starts.into_iter().fold(range.start, usize::min);
                let span = TextRange::new(start, range.end);
                let mut hasher = stable_hasher();
                name.hash(&mut hasher);
                src.get(span.range()).unwrap_or("").hash(&mut hasher);
                let identity = hasher.finish();
                let index = items.items.len() as u32;
                items.items.push(Item {
                    identity,
                    span,
                    def: addr,
                });
                if addr != 0 {
                    items.by_def.insert(addr, index);
                }
                if items.by_identity.insert(identity, index).is_some() {
                    shared.push(identity);
                }
                index
            };
        // Every top-level statement is an item, so that places in module
        // code can be found again when an edit elsewhere moved them; so is
        // every statement of the main block, where a script makes its test
        // inputs and users edit most.
        let mut statements: Vec<(&str, &ast::Stmt)> = Vec::new();
        for stmt in &module.body {
            match &stmt.kind {
                StmtKind::If { test, body, orelse } if is_main_guard(test) && orelse.is_empty() => {
                    statements.extend(body.iter().map(|s| ("__main__", s)));
                }
                _ => statements.push(("", stmt)),
            }
        }
        for (scope, stmt) in statements {
            let (name, starts, addr) = match &stmt.kind {
                StmtKind::FunctionDef(f) => (
                    f.name.id.clone(),
                    f.decorators.iter().map(|d| d.range.start).collect(),
                    Rc::as_ptr(f) as usize,
                ),
                StmtKind::ClassDef(c) => (
                    c.name.id.clone(),
                    c.decorators.iter().map(|d| d.range.start).collect(),
                    Rc::as_ptr(c) as usize,
                ),
                _ => (scope.to_string(), Vec::new(), 0),
            };
            let i = add(&mut items, &name, &stmt.range, starts, addr);
            let start = items.items[i as usize].span.start;
            items.statements.push((start, i));
            match &stmt.kind {
                StmtKind::FunctionDef(_) if scope.is_empty() => items.functions.push((start, i)),
                StmtKind::ClassDef(c) if scope.is_empty() => {
                    for s in &c.body {
                        if let StmtKind::FunctionDef(m) = &s.kind {
                            let name = format!("{}.{}", c.name.id, m.name.id);
                            let starts = m.decorators.iter().map(|d| d.range.start).collect();
                            let i =
                                add(&mut items, &name, &m.range, starts, Rc::as_ptr(m) as usize);
                            items
                                .functions
                                .push((items.items[i as usize].span.start, i));
                        }
                    }
                }
                _ => {}
            }
        }
        for identity in shared {
            items.by_identity.remove(&identity);
        }
        items.functions.sort_unstable();
        items.statements.sort_unstable();
        items
    }

    fn within(&self, list: &[(usize, u32)], range: &TextRange) -> Option<u32> {
        let i = list.partition_point(|(start, _)| *start <= range.start);
        let (_, index) = *list.get(i.checked_sub(1)?)?;
        let item = &self.items[index as usize];
        (range.end <= item.span.end && range.start <= range.end).then_some(index)
    }

    /// A range as its item's identity and offsets into it (in another
    /// file: the file's identity and offsets into the file).
    pub(super) fn anchor(&self, range: &TextRange) -> Option<(u64, usize, usize)> {
        if !is_local(range) {
            let file = file_of(range.start);
            let base = file as usize * FILE_SPAN;
            if range.start > range.end || range.end - base >= FILE_SPAN {
                return None;
            }
            let identity = *self.files.get(&file)?;
            return Some((identity, range.start - base, range.end - base));
        }
        let index = self
            .within(&self.functions, range)
            .or_else(|| self.within(&self.statements, range))?;
        let item = &self.items[index as usize];
        // An item another shares its identity with cannot be found again.
        self.by_identity.get(&item.identity)?;
        Some((
            item.identity,
            range.start - item.span.start,
            range.end - item.span.start,
        ))
    }

    pub(super) fn place(&self, (identity, start, end): (u64, usize, usize)) -> Option<TextRange> {
        if let Some(file) = self.file_ids.get(&identity) {
            let base = *file as usize * FILE_SPAN;
            return Some(TextRange::new(base + start, base + end));
        }
        let item = &self.items[*self.by_identity.get(&identity)? as usize];
        let start = item.span.start + start;
        let end = item.span.start + end;
        (end <= item.span.end).then_some(TextRange::new(start, end))
    }

    /// The address of the definition of the item of this identity, in
    /// this version.
    pub(super) fn def_of_identity(&self, identity: u64) -> Option<usize> {
        let item = &self.items[*self.by_identity.get(&identity)? as usize];
        (item.def != 0).then_some(item.def)
    }

    /// An imported file's identity, by its id in this run.
    pub(super) fn file_identity(&self, file: u32) -> Option<u64> {
        self.files.get(&file).copied()
    }

    /// An imported file's id in this run, by its identity.
    pub(super) fn file_id(&self, identity: u64) -> Option<u32> {
        self.file_ids.get(&identity).copied()
    }

    pub(super) fn identity_of_def(&self, addr: usize) -> Option<u64> {
        let item = &self.items[*self.by_def.get(&addr)? as usize];
        self.by_identity.get(&item.identity)?;
        Some(item.identity)
    }
}
