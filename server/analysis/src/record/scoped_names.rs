//! Per function, sizes shown by the names the code asked for: `N`, not the
//! `N_2` that tells it from another function's `N`.
//!
//! The shape environment keeps one namespace for the whole file, so a
//! second class whose `forward` also reads `B, T, C = x.shape` mints `B_2`.
//! Python scopes names per function, and so do readers: inside a function
//! where only one `B` appears, it is shown as `B`. The suffix stays where
//! two different sizes of the same name meet in one function.

use rustc_hash::{FxHashMap, FxHashSet};

use shapels_shapes::{ShapeEnv, SymId};

use crate::report::{DimView, TensorInfo};

/// For each symbol whose shown name carries a uniqueness suffix, the name
/// it was asked for (`B_2` → `B`).
fn suffixed_names(env: &ShapeEnv) -> FxHashMap<String, String> {
    (0..env.symbol_count() as u32)
        .filter_map(|i| env.info(SymId(i)))
        .filter(|info| !info.anonymous && info.name != info.base && !info.base.is_empty())
        .map(|info| (info.name.clone(), info.base.clone()))
        .collect()
}

/// The names a shown size is written with: maximal runs of identifier
/// characters and dots (`config.n_embd` is one name).
pub(super) fn names_in(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|t| {
            t.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        })
}

/// `text` with whole names replaced as `rename` says.
pub(super) fn renamed(text: &str, rename: &FxHashMap<&str, &str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut name = String::new();
    let flush = |name: &mut String, out: &mut String| {
        match rename.get(name.as_str()) {
            Some(to) => out.push_str(to),
            None => out.push_str(name),
        }
        name.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            name.push(c);
        } else {
            flush(&mut name, &mut out);
            out.push(c);
        }
    }
    flush(&mut name, &mut out);
    out
}

fn texts_of(info: &TensorInfo) -> impl Iterator<Item = &str> {
    info.shape
        .iter()
        .flatten()
        .filter_map(|d| match d {
            DimView::Symbol(s) => Some(s.as_str()),
            _ => None,
        })
        .chain(info.guards.iter().map(String::as_str))
}

/// Drop the uniqueness suffix of every size name that has no namesake in
/// its function (`B_2`, and `n_ctx2` of a size that differs between runs):
/// `infos` are the shown tensors with the function each belongs to.
pub(super) fn unsuffix(
    env: &ShapeEnv,
    numbered: &FxHashMap<String, String>,
    from_params: &FxHashSet<String>,
    infos: &mut [(usize, &mut TensorInfo)],
    messages: &mut [(usize, &mut String)],
) {
    let mut suffixed = suffixed_names(env);
    suffixed.extend(numbered.iter().map(|(a, b)| (a.clone(), b.clone())));
    if suffixed.is_empty() {
        return;
    }
    let base_of = |name: &str| -> String {
        suffixed
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    };
    // Per function, the names shown, in the order they first show.
    let mut per_scope: FxHashMap<usize, ScopeNames> = FxHashMap::default();
    for (scope, info) in infos.iter() {
        let names = per_scope.entry(*scope).or_default();
        for text in texts_of(info) {
            for name in names_in(text) {
                names.add(name);
            }
        }
    }
    // A message counts only the suffixed names it shows: its other words
    // may be the user's own text (an annotation quoted as written, where
    // `b` is the very size the hints show as `b_2`), not sizes.
    for (scope, message) in messages.iter() {
        let names = per_scope.entry(*scope).or_default();
        for name in names_in(message).filter(|name| suffixed.contains_key(*name)) {
            names.add(name);
        }
    }
    let mut renames: FxHashMap<usize, FxHashMap<String, String>> = FxHashMap::default();
    // A parameter's name numbered (`in_channels2`) where another size of
    // that name shows too is a name nobody wrote: such a size is shown
    // nameless there, by a name of its own not shown anywhere else.
    let mut nameless: FxHashMap<String, String> = FxHashMap::default();
    let mut next = 1;
    let mut fresh = |numbered: &str| -> String {
        nameless
            .entry(numbered.to_string())
            .or_insert_with(|| {
                loop {
                    next += 1;
                    let name = format!("s{next}");
                    if !per_scope.values().any(|names| names.seen.contains(&name)) {
                        break name;
                    }
                }
            })
            .clone()
    };
    for (scope, names) in &per_scope {
        let mut by_base: Vec<(String, Vec<&String>)> = Vec::new();
        for name in &names.order {
            let base = base_of(name);
            match by_base.iter_mut().find(|(b, _)| *b == base) {
                Some((_, namesakes)) => namesakes.push(name),
                None => by_base.push((base, vec![name])),
            }
        }
        let taken = |name: &str| names.seen.contains(name);
        for (base, namesakes) in by_base {
            if let [only] = namesakes.as_slice()
                && **only != base
            {
                renames
                    .entry(*scope)
                    .or_default()
                    .insert((*only).clone(), base);
                continue;
            }
            let rename = renames.entry(*scope).or_default();
            for name in namesakes.iter().filter(|n| from_params.contains(**n)) {
                rename.insert((*name).clone(), fresh(name));
            }
            // Different sizes of one name in one function are told apart
            // by numbers counted in that function (`N`, `N_2`), not in the
            // whole file, where a function far away took `N_2` to `N_65`:
            // the base name stays with the size that has it, or else goes
            // to the first to show. The names of the group are all given
            // anew, so only the function's other names are in the way.
            let others: Vec<&String> = namesakes
                .iter()
                .copied()
                .filter(|n| !from_params.contains(*n))
                .collect();
            if others.is_empty() {
                continue;
            }
            let in_group = |name: &str| others.iter().any(|n| n.as_str() == name);
            let mut used: FxHashSet<String> = FxHashSet::default();
            let holder = others
                .iter()
                .position(|n| **n == base)
                .or_else(|| (!taken(&base) || in_group(&base)).then_some(0));
            if let Some(i) = holder {
                used.insert(base.clone());
                if *others[i] != base {
                    rename.insert(others[i].clone(), base.clone());
                }
            }
            let mut k = 1;
            for (i, name) in others.iter().enumerate() {
                if Some(i) == holder {
                    continue;
                }
                // Numbered as the file numbered it: `N_2`, or `n_ctx2` for
                // a size that differs between runs.
                let joint = if name
                    .strip_prefix(base.as_str())
                    .is_some_and(|rest| rest.starts_with('_'))
                {
                    "_"
                } else {
                    ""
                };
                let local = loop {
                    k += 1;
                    let local = format!("{base}{joint}{k}");
                    if !used.contains(&local) && (!taken(&local) || in_group(&local)) {
                        break local;
                    }
                };
                used.insert(local.clone());
                if local != **name {
                    rename.insert((*name).clone(), local);
                }
            }
        }
    }
    for (scope, info) in infos.iter_mut() {
        let Some(rename) = renames.get(scope) else {
            continue;
        };
        let rename: FxHashMap<&str, &str> = rename
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        for dim in info.shape.iter_mut().flatten() {
            if let DimView::Symbol(s) = dim {
                *s = renamed(s, &rename);
            }
        }
        for guard in &mut info.guards {
            *guard = renamed(guard, &rename);
        }
    }
    for (scope, message) in messages.iter_mut() {
        if let Some(rename) = renames.get(scope) {
            let rename: FxHashMap<&str, &str> = rename
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            **message = renamed(message, &rename);
        }
    }
}

/// The names one function shows, in the order they first show.
#[derive(Default)]
struct ScopeNames {
    order: Vec<String>,
    seen: FxHashSet<String>,
}

impl ScopeNames {
    fn add(&mut self, name: &str) {
        if !self.seen.contains(name) {
            self.seen.insert(name.to_string());
            self.order.push(name.to_string());
        }
    }
}

/// A shape shown for any input says which of its sizes are free: the
/// names it is written with, once each, in order (`N, H, W are free
/// sizes`).
pub(super) fn say_free_sizes(info: &mut TensorInfo, note: &str) {
    let Some(at) = info.notes.iter().position(|n| n == note) else {
        return;
    };
    let mut names: Vec<&str> = Vec::new();
    for dim in info.shape.iter().flatten() {
        if let DimView::Symbol(s) = dim {
            for name in names_in(s) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    if names.is_empty() {
        return;
    }
    let verb = if names.len() == 1 {
        "is a free size"
    } else {
        "are free sizes"
    };
    info.notes[at] = format!("{note}; {} {verb}", names.join(", "));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_names_only() {
        let rename: FxHashMap<&str, &str> = [("N_2", "N"), ("c.d_2", "c.d")].into_iter().collect();
        assert_eq!(renamed("2*N_2 + N_23", &rename), "2*N + N_23");
        assert_eq!(renamed("c.d_2 // N_2", &rename), "c.d // N");
        let names: Vec<&str> = names_in("(H_2 - 1)//2 + config.n_embd").collect();
        assert_eq!(names, ["H_2", "config.n_embd"]);
    }
}
