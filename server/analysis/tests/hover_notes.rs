//! What hover says of where a shape comes from: a function no readable
//! call reaches is shown for any input, and hover names its free sizes.

use shapels_analysis::{Config, analyze};

#[test]
fn a_shape_for_any_input_names_its_free_sizes() {
    let source = "\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3)

    def forward(self, x):
        y = self.conv(x)
        return y
";
    let analysis = analyze(source, &Config::default());
    let y = analysis
        .bindings
        .iter()
        .find(|b| b.name == "y")
        .expect("y is bound to a tensor");
    assert!(
        y.tensor.notes.iter().any(|n| n
            == "for any input: no call the analysis can read reaches this code; \
                N, width, H, W are free sizes"),
        "{:?}",
        y.tensor.notes
    );
}

#[test]
fn a_shape_a_call_reaches_is_not_for_any_input() {
    let source = "\
import torch
import torch.nn as nn

conv = nn.Conv2d(3, 8, 3)
y = conv(torch.randn(2, 3, 10, 10))
";
    let analysis = analyze(source, &Config::default());
    let y = analysis.bindings.iter().find(|b| b.name == "y").unwrap();
    assert!(
        y.tensor
            .notes
            .iter()
            .all(|n| !n.starts_with("for any input")),
        "{:?}",
        y.tensor.notes
    );
}

#[test]
fn a_function_declared_generic_says_so_and_names_its_sizes() {
    let source = "\
import torch
from jaxtyping import Float
from torch import Tensor


def pool(x: Float[Tensor, \"b n d\"]):
    y = x.mean(1)
    return y


z = pool(torch.randn(2, 5, 3))
";
    let analysis = analyze(source, &Config::default());
    let y = analysis.bindings.iter().find(|b| b.name == "y").unwrap();
    assert!(
        y.tensor.notes.iter().any(|n| n
            == "for any input its annotations admit: the function is declared generic \
                in its sizes; b, d are free sizes"),
        "{:?}",
        y.tensor.notes
    );
    // The call still gets the sizes it passes.
    let z = analysis.bindings.iter().find(|b| b.name == "z").unwrap();
    assert_eq!(
        format!("{:?}", z.tensor.shape),
        "Some([Known(2), Known(3)])"
    );
}
