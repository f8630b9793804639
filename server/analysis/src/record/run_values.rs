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
        id
    }

    pub(super) fn text(&self, id: u32) -> &str {
        &self.texts[id as usize]
    }
}
