//! The names einops patterns give sizes that differ between calls (`b` of
//! `'b n (h d)'` for a batch of 2 in one call and 128 in another), and the
//! runs of a variable or an axis that say what a function's lines show.

use rustc_hash::FxHashMap;
use shapels_shapes::{Dim, ShapeEnv};

use super::scope_of;
use crate::record::run_values::Values;
use crate::record::runs::{RunKind, telling_kind};
use crate::record::{MAX_PATTERN_RUNS, PatternRuns};
use crate::report::TextRange;

/// An einops axis by the sizes it took, run after run, runs in a row of
/// one size counted once (numbered as `Values` numbers them).
#[derive(Clone)]
pub(in crate::record) struct AxisRuns {
    pub runs: Vec<u32>,
    /// The axis took more sizes than were kept: its runs are the first.
    pub capped: bool,
    pub name: String,
}

impl AxisRuns {
    /// Whether a size that took `runs` (in a row of one size once) is
    /// this axis: the same runs, or as many of them as both kept when
    /// either stopped keeping them.
    pub fn names(&self, runs: &[u32], runs_capped: bool) -> bool {
        self.runs == runs
            || (self.capped && runs.starts_with(&self.runs))
            || (runs_capped && self.runs.starts_with(runs))
    }
}

/// Per function, the einops axes written there by the sizes they took run
/// after run, for the sizes that differ between calls: `b` of
/// `rearrange(t, 'b n (h d) -> b h n d')` names the batch a function was
/// called with at 2 and at 128. A pattern mapped over `q, k, v` runs
/// thrice a call, so runs in a row of one size count once; an axis whose
/// size differs within a call (`n` of queries and keys of other lengths)
/// names nothing, and neither does a name the code there gives another
/// size.
pub(super) fn axis_names_of_runs(
    env: &ShapeEnv,
    pattern_runs: &PatternRuns,
    scopes: &[TextRange],
    local: &[FxHashMap<Dim, String>],
    local_varying: &[FxHashMap<Vec<u32>, String>],
    values: &mut Values,
) -> Vec<Vec<AxisRuns>> {
    let mut axes: Vec<_> = pattern_runs.iter().collect();
    axes.sort_unstable_by(|a, b| a.0.cmp(b.0));
    // Per function and name, the one way its sizes went, or `None` when
    // two patterns there gave the name different ones.
    let mut by_name: FxHashMap<(usize, &str), Option<AxisRuns>> = FxHashMap::default();
    for ((at, name), runs) in axes {
        let capped = runs.len() >= MAX_PATTERN_RUNS;
        let (kinds, dims): (Vec<u32>, Vec<Dim>) = runs.iter().cloned().unzip();
        let dims = of_telling_kind(&dims, &kinds);
        let shown: Vec<String> = dims.iter().map(|d| env.display(d)).collect();
        if shown.iter().any(|t| t == "?")
            || shown.iter().all(|t| matches!(t.as_str(), "0" | "1" | "2"))
        {
            continue;
        }
        let mut runs: Vec<u32> = shown.into_iter().map(|t| values.number(t)).collect();
        runs.dedup();
        let mut distinct = runs.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        let mine = AxisRuns {
            runs,
            capped,
            name: name.to_string(),
        };
        by_name
            .entry((scope_of(scopes, *at), name))
            .and_modify(|seen| {
                // Two patterns that kept different numbers of runs agree
                // on those both kept; the one that kept more says more.
                *seen = match seen.take() {
                    Some(other) if other.names(&mine.runs, mine.capped) => {
                        Some(if mine.runs.len() > other.runs.len() {
                            mine.clone()
                        } else {
                            other
                        })
                    }
                    _ => None,
                };
            })
            .or_insert(Some(mine));
    }
    let mut named: Vec<Vec<AxisRuns>> = (0..=scopes.len()).map(|_| Vec::new()).collect();
    let mut names: Vec<_> = by_name.into_iter().collect();
    names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for ((scope, name), axis) in names {
        let Some(axis) = axis else {
            continue;
        };
        let taken_here = local[scope].values().any(|n| n == name)
            || local_varying[scope].iter().any(|(sizes, n)| {
                let mut sizes = sizes.clone();
                sizes.dedup();
                n == name && sizes != axis.runs
            });
        if !taken_here {
            named[scope].push(axis);
        }
    }
    named
}

/// The hits of the runs a function's sites show (see `telling_kind`).
pub(super) fn of_telling_kind<'h>(hits: &'h [Dim], kinds: &[u32]) -> Vec<&'h Dim> {
    match telling_kind(kinds) {
        None => hits.iter().collect(),
        Some(kind) => hits
            .iter()
            .zip(kinds)
            .filter(|(_, k)| RunKind::of(**k) == kind)
            .map(|(h, _)| h)
            .collect(),
    }
}
