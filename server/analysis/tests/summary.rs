//! The model summary as the analysis computes it: counts from the layer
//! rules, symbolic for made-up inputs, `?` (never a guess) for what it
//! cannot see into, frozen parameters apart.

use shapels_analysis::workspace::ModuleGraph;
use shapels_analysis::{Config, ModelSummary, SummaryTarget, summarize};

fn summary(source: &str, target: SummaryTarget, input: Option<&[i64]>) -> Option<ModelSummary> {
    let parsed = shapels_syntax::parse(source);
    summarize(
        source,
        &parsed.module,
        &Config::default(),
        &ModuleGraph::empty(),
        &target,
        input,
    )
}

#[test]
fn counts_come_from_the_layer_rules() {
    let source = "\
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, groups=1)
        self.norm = nn.LayerNorm(8, elementwise_affine=False)
        self.rnn = nn.GRU(8, 4, num_layers=2)
        self.scale = nn.Parameter(torch.ones(8))
        self.register_buffer('mask', torch.ones(8))

    def forward(self, x):
        return self.conv(x) * self.scale.view(1, 8, 1, 1)
";
    let s = summary(
        source,
        SummaryTarget::Class("Net".into()),
        Some(&[2, 3, 10, 10]),
    )
    .unwrap();
    // conv 8*3*3*3 + 8; no norm parameters; GRU 3*4*(8 + 4) + 2*3*4 per
    // layer, the second taking 4 inputs; the Parameter; not the buffer.
    let gru = (12 * 8 + 12 * 4 + 24) + (12 * 4 + 12 * 4 + 24);
    assert_eq!(s.total_params.value, Some(224 + gru + 8));
    assert_eq!(s.input.as_deref(), Some("[2, 3, 10, 10]"));
    assert_eq!(s.rows[1].output.as_deref(), Some("[2, 8, 8, 8]"));
    // The GRU is never called by forward: it has no output.
    assert_eq!(s.rows[3].name.as_deref(), Some("rnn"));
    assert_eq!(s.rows[3].output, None);
}

#[test]
fn made_up_inputs_give_symbolic_counts() {
    let source = "\
import torch.nn as nn

class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.proj = nn.Linear(4 * n_embd, n_embd, bias=False)

    def forward(self, x):
        return self.proj(self.fc(x))
";
    let s = summary(source, SummaryTarget::Model, None).unwrap();
    assert_eq!(s.total_params.text, "8*n_embd**2 + 4*n_embd");
    assert_eq!(s.total_params.value, None);
    assert!(!s.input_from_code);
}

#[test]
fn what_the_analysis_cannot_see_into_is_unknown() {
    let source = "\
import torch.nn as nn
import timm

class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = timm.create_model('resnet18')
        self.head = nn.Linear(512, 10)
        self.odd = nn.SomeLayerNoRuleKnows(3)

    def forward(self, x):
        return self.head(self.backbone(x))
";
    let s = summary(source, SummaryTarget::Class("Wrapper".into()), None).unwrap();
    assert_eq!(s.total_params.text, "?");
    assert_eq!(s.trainable_params.text, "?");
    let head = s
        .rows
        .iter()
        .find(|r| r.name.as_deref() == Some("head"))
        .unwrap();
    assert_eq!(head.params.value, Some(5130));
}

#[test]
fn frozen_parameters_are_counted_apart() {
    let source = "\
import torch
import torch.nn as nn

encoder = nn.Linear(4, 4)
head = nn.Linear(4, 2)
model = nn.Sequential(encoder, head)
encoder.requires_grad_(False)
head.bias.requires_grad = False
y = model(torch.randn(3, 4))
";
    let s = summary(source, SummaryTarget::Model, None).unwrap();
    assert_eq!(s.total_params.value, Some(30));
    assert_eq!(s.frozen_params.value, Some(22));
    assert_eq!(s.trainable_params.value, Some(8));
    assert!(s.rows[1].frozen && !s.rows[2].frozen);
}

#[test]
fn no_module_no_summary() {
    let source = "import torch\nx = torch.randn(3)\n";
    assert!(summary(source, SummaryTarget::Model, None).is_none());
    assert!(summary(source, SummaryTarget::At(3), None).is_none());
}

#[test]
fn subclasses_reparametrizations_and_freezes_by_name() {
    let source = "\
import torch
import torch.nn as nn

class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = LayerNorm2d(8)
        self.proj = nn.utils.parametrizations.weight_norm(nn.Linear(8, 8))

    def forward(self, x):
        return self.norm(x)

net = Net()
for name, p in net.named_parameters():
    if 'norm' in name:
        p.requires_grad = False
y = net(torch.randn(2, 8, 4, 4))
";
    let s = summary(source, SummaryTarget::Model, None).unwrap();
    let norm = s
        .rows
        .iter()
        .find(|r| r.name.as_deref() == Some("norm"))
        .unwrap();
    assert_eq!(norm.params.value, Some(16));
    let proj = s
        .rows
        .iter()
        .find(|r| r.name.as_deref() == Some("proj"))
        .unwrap();
    assert_eq!(proj.params.text, "?");
    assert_eq!(s.total_params.text, "?");
    assert_eq!(s.trainable_params.text, "?");
}

#[test]
fn the_model_is_the_instance_called_last() {
    let source = "\
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(4, width)

    def forward(self, x):
        return self.fc(x)

student = Net(8)
teacher = Net(2)
t = teacher(torch.randn(3, 4))
s = student(torch.randn(3, 4))
";
    let s = summary(source, SummaryTarget::Class("Net".into()), None).unwrap();
    assert_eq!(s.total_params.value, Some(40));
    let first = summary(
        source,
        SummaryTarget::At(source.find("teacher(").unwrap()),
        None,
    )
    .unwrap();
    assert_eq!(first.total_params.value, Some(10));
}
