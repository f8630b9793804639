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

#[test]
fn a_part_shown_for_a_run_of_its_own_says_so() {
    // The model runs its block at two widths, on made-up inputs: the
    // block's lines show a run of its own, and hover says why.
    let source = "\
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block(8)
        self.down = nn.Conv2d(8, 16, 2, stride=2)
        self.b = Block(16)

    def forward(self, x):
        return self.b(self.down(self.a(x)))
";
    let analysis = analyze(source, &Config::default());
    let y = analysis.bindings.iter().find(|b| b.name == "y").unwrap();
    assert!(
        y.tensor.notes.iter().any(|n| n
            == "for any input: the calls that reach this code are themselves on made-up \
                inputs; N, dim, H, W are free sizes"),
        "{:?}",
        y.tensor.notes
    );
}

/// A model whose forward the tests below call in several ways.
const CONV_NET: &str = "\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        y = self.conv(x)
        return y
";

#[test]
fn a_shape_shown_for_the_calls_made_names_their_lines() {
    let source = &format!(
        "{CONV_NET}
\n\
def pool(x):
    z = x.mean(1)
    return z


net = Net()
a = net(torch.randn(2, 3, 10, 10))
b = pool(a)
c = pool(torch.randn(4, 5))
"
    );
    let analysis = analyze(source, &Config::default());
    let hover_of = |name: &str| {
        let line_of = |offset: usize| Some(source[..offset].matches('\n').count() + 1);
        analysis
            .bindings
            .iter()
            .find(|b| b.name == name)
            .unwrap_or_else(|| panic!("{name} is bound to a tensor"))
            .tensor
            .hover_markdown(Some(name), &line_of)
    };
    assert!(
        hover_of("y").contains("- for the call at line 21\n"),
        "{}",
        hover_of("y")
    );
    assert!(
        hover_of("z").contains("- for the calls at lines 22 and 23\n"),
        "{}",
        hover_of("z")
    );
    // The module's own code runs once, as written: nothing to say.
    assert!(!hover_of("a").contains("for the call"), "{}", hover_of("a"));
}

#[test]
fn many_calls_are_counted_after_four() {
    let line_of = |offset: usize| Some(offset / 10);
    let calls: Vec<usize> = (1..=6).map(|line| line * 10).collect();
    assert_eq!(
        shapels_analysis::calls_text(&calls, &line_of).as_deref(),
        Some("for the calls at lines 1, 2, 3, 4 and 2 more")
    );
    assert_eq!(
        shapels_analysis::calls_text(&[30, 10, 35], &line_of).as_deref(),
        Some("for the calls at lines 1 and 3")
    );
    assert_eq!(shapels_analysis::calls_text(&[], &line_of), None);
}

#[test]
fn a_call_whose_input_is_unreadable_is_not_named() {
    // The only call passes a batch the analysis cannot see: the function
    // is shown for any input, not for that call.
    let source = &format!(
        "{CONV_NET}
\n\
def train(model, loader):
    for batch in loader:
        model(batch)


train(Net(), make_loader())
"
    );
    let analysis = analyze(source, &Config::default());
    let y = analysis.bindings.iter().find(|b| b.name == "y").unwrap();
    assert!(
        y.tensor.called_from.is_empty(),
        "{:?}",
        y.tensor.called_from
    );
    assert!(
        y.tensor
            .notes
            .iter()
            .any(|n| n.starts_with("for any input")),
        "{:?}",
        y.tensor.notes
    );
}
