//! Runs of one site whose ranks differ, or whose rank some runs know and
//! others leave open, lined up on the dims they all have.

use shapels_shapes::Dim;

/// Where a shape of unknown rank has its unknown dims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Variadic {
    None,
    Lead,
    Trail,
}

/// Lines the runs' shapes up on the dims all of them have, where that
/// takes no guess: each keeps its variadic mark and dims unless they
/// disagree, and then all say the same part of their shapes.
pub(super) fn line_up(shapes: &mut [(Variadic, Vec<Dim>)]) {
    let Some(first) = shapes.first() else {
        return;
    };
    // A function used on tensors of several ranks (a helper that works
    // on the last dims, called on `[B, T, C]` and `[B, H, T, C]`): the
    // dims all runs have at the end, after a variadic head. The
    // shortest run's first dim goes into the head too, unless it is its
    // only dim (a vector's features, `[C]` and `[B, C]`): the longer
    // runs hold more dims before it, so it is a leading (batch-like)
    // dim, and lining it up with a dim of theirs would show a
    // coincidence (`[2, T, C]` and `[B, 2, T, C]`).
    if shapes.iter().all(|(v, _)| *v == Variadic::None)
        && shapes.iter().any(|(_, d)| d.len() != first.1.len())
    {
        let shortest = shapes.iter().map(|(_, d)| d.len()).min().unwrap_or(0);
        let kept = if shortest == 1 {
            1
        } else {
            shortest.saturating_sub(1)
        };
        keep_last(shapes, kept);
        return;
    }
    // Runs that know the whole shape (`[N, emb_channels]`, where a
    // documented callee said what a made-up input is) beside runs that
    // know only its last dims (`[*batch, C]`): all show those last dims.
    // Leading dims known beside the first dims of a shape of open rank
    // (`[N, *rest]`) line up alike from the front.
    for open in [Variadic::Lead, Variadic::Trail] {
        let only = shapes
            .iter()
            .all(|(v, _)| *v == Variadic::None || *v == open);
        if !only || shapes.iter().all(|(v, _)| *v != Variadic::None) {
            continue;
        }
        let Some(shortest) = shapes
            .iter()
            .filter(|(v, _)| *v == open)
            .map(|(_, d)| d.len())
            .min()
        else {
            continue;
        };
        if shapes.iter().any(|(_, d)| d.len() < shortest) {
            return;
        }
        match open {
            Variadic::Lead => keep_last(shapes, shortest),
            _ => keep_first(shapes, shortest),
        }
        return;
    }
}

/// Every shape as its last `kept` dims after a variadic head.
fn keep_last(shapes: &mut [(Variadic, Vec<Dim>)], kept: usize) {
    for (variadic, dims) in shapes {
        *variadic = Variadic::Lead;
        dims.drain(..dims.len() - kept);
    }
}

/// Every shape as its first `kept` dims before a variadic tail.
fn keep_first(shapes: &mut [(Variadic, Vec<Dim>)], kept: usize) {
    for (variadic, dims) in shapes {
        *variadic = Variadic::Trail;
        dims.truncate(kept);
    }
}
