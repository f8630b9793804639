//! Fixed sets of op and layer names, looked up by hash: the rules ask "is
//! this a pointwise op?" on every call, and a list of a hundred names is
//! slow to scan.

use std::sync::OnceLock;

use rustc_hash::FxHashSet;

/// A set of names, written as a list and hashed on first use.
pub(crate) struct NameSet {
    names: &'static [&'static str],
    set: OnceLock<FxHashSet<&'static str>>,
}

impl NameSet {
    pub(crate) const fn new(names: &'static [&'static str]) -> NameSet {
        NameSet {
            names,
            set: OnceLock::new(),
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.set
            .get_or_init(|| self.names.iter().copied().collect())
            .contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::NameSet;

    static FRUIT: NameSet = NameSet::new(&["apple", "pear"]);

    #[test]
    fn holds_exactly_its_names() {
        assert!(FRUIT.contains("apple") && FRUIT.contains("pear"));
        assert!(!FRUIT.contains("app") && !FRUIT.contains("") && !FRUIT.contains("pears"));
    }
}
