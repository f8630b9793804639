//! The values a varying size took in each run, numbered by the text that
//! shows them, so that merging compares and hashes numbers.

use rustc_hash::FxHashMap;
use shapels_shapes::Dim;

/// Sizes by the text that shows them, numbered in the order met: a run's
/// value is a number, so that comparing and hashing the values of many
/// runs (a loop's turns) costs no text.
#[derive(Default)]
pub(super) struct Values {
    numbers: FxHashMap<String, u32>,
    texts: Vec<String>,
    /// Numbers already numbered, by value: no text to make for them.
    consts: FxHashMap<i64, u32>,
    /// Other sizes already numbered, by the size.
    pub(super) by_dim: FxHashMap<Dim, u32>,
    /// A size each number shows, where one is known: what a varying size
    /// is compared with when it is written in terms of another.
    dims: FxHashMap<u32, Dim>,
}

impl Values {
    pub(super) fn number(&mut self, text: String) -> u32 {
        if let Some(id) = self.numbers.get(&text) {
            return *id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.clone());
        self.numbers.insert(text, id);
        id
    }

    pub(super) fn number_of_const(&mut self, n: i64) -> u32 {
        if let Some(id) = self.consts.get(&n) {
            return *id;
        }
        let id = self.number(n.to_string());
        self.consts.insert(n, id);
        self.dims.insert(id, Dim::konst(n));
        id
    }

    /// Number the text that shows `dim`, remembering the size.
    pub(super) fn number_dim(&mut self, text: String, dim: &Dim) -> u32 {
        let id = self.number(text);
        self.dims.entry(id).or_insert_with(|| dim.clone());
        id
    }

    /// A size the number shows (see `dims`).
    pub(super) fn dim(&self, id: u32) -> Option<&Dim> {
        self.dims.get(&id)
    }

    pub(super) fn text(&self, id: u32) -> &str {
        &self.texts[id as usize]
    }
}
