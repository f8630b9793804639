//! How a summary says sizes and counts: `n_embd**2`, and `B` for the `B_2`
//! an earlier run's `B` made the environment call it.

use rustc_hash::{FxHashMap, FxHashSet};

use super::ModelSummary;

/// A count in the shape people write it: `3*n_embd**2 + 3*n_embd` for
/// `3*n_embd*n_embd + 3*n_embd`. Only terms that are plain products of
/// names and numbers are rewritten.
pub(super) fn powers(text: &str) -> String {
    let plain = |t: &str| {
        t.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '*')
            && !t.contains("**")
    };
    text.split(" + ")
        .map(|term| {
            if !plain(term) {
                return term.to_string();
            }
            let mut out: Vec<String> = Vec::new();
            let mut last: Option<(&str, usize)> = None;
            for factor in term.split('*').chain(std::iter::once("")) {
                match last {
                    Some((f, n)) if f == factor => last = Some((f, n + 1)),
                    _ => {
                        if let Some((f, n)) = last {
                            out.push(if n > 1 {
                                format!("{f}**{n}")
                            } else {
                                f.to_string()
                            });
                        }
                        last = Some((factor, 1));
                    }
                }
            }
            out.join("*")
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// A size the environment named `B_2` because an earlier run had a `B` is
/// `B` in a summary where no other `B` shows: every text of the summary
/// is read for the names it shows, and only unambiguous ones change.
pub(super) fn unsuffix(summary: &mut ModelSummary) {
    fn words(text: &str) -> impl Iterator<Item = &str> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .filter(|w| !w.is_empty())
    }
    let mut texts: Vec<&mut String> = Vec::new();
    if let Some(input) = summary.input.as_mut() {
        texts.push(input);
    }
    for row in &mut summary.rows {
        texts.push(&mut row.layer);
        if let Some(o) = row.output.as_mut() {
            texts.push(o);
        }
        texts.push(&mut row.params.text);
    }
    for c in [
        &mut summary.total_params,
        &mut summary.trainable_params,
        &mut summary.frozen_params,
        &mut summary.activation_bytes,
    ] {
        texts.push(&mut c.text);
    }
    for b in &mut summary.param_bytes {
        texts.push(&mut b.bytes.text);
    }
    let mut all: FxHashSet<String> = FxHashSet::default();
    for t in &texts {
        all.extend(words(t).map(str::to_string));
    }
    let base = |w: &str| {
        let (stem, n) = w.rsplit_once('_')?;
        (!stem.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .then(|| stem.to_string())
    };
    let mut renames: FxHashMap<String, String> = FxHashMap::default();
    for w in &all {
        if let Some(stem) = base(w)
            && !all.contains(&stem)
            && all
                .iter()
                .filter(|o| base(o).as_deref() == Some(&stem))
                .count()
                == 1
        {
            renames.insert(w.clone(), stem);
        }
    }
    if renames.is_empty() {
        return;
    }
    for t in texts {
        let mut out = String::with_capacity(t.len());
        let mut word = String::new();
        for c in t.chars().chain(std::iter::once('\0')) {
            if c.is_alphanumeric() || c == '_' || c == '.' {
                word.push(c);
                continue;
            }
            out.push_str(renames.get(&word).map_or(&word, |r| r));
            word.clear();
            if c != '\0' {
                out.push(c);
            }
        }
        *t = out;
    }
}
