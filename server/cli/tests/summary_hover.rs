//! Hover on a module shows its summary: the real `shapels lsp` binary over
//! stdio, on an instance, a class's name, `self.block` and `model(x)`.

mod common;

use common::{Server, capabilities};
use serde_json::Value;

const MODEL: &str = "\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 4 * dim)
        self.proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.proj(torch.relu(self.fc(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.block = Block(32)
        self.head = nn.Linear(32, 10, bias=False)
        self.embed.requires_grad_(False)

    def forward(self, idx):
        x = self.embed(idx)
        x = self.block(x)
        return self.head(x)


model = Net()
idx = torch.randint(0, 100, (4, 7))
logits = model(idx)
";

fn hover_text(server: &mut Server, uri: &str, line: u32, character: u32) -> String {
    let hover = server.hover(uri, line, character);
    assert_ne!(hover, Value::Null, "no hover at {line}:{character}");
    hover["contents"]["value"].as_str().unwrap().to_string()
}

#[test]
fn hover_on_modules_shows_their_summary() {
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("file://{}/model.py", dir.path().display());
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, MODEL);
    server.diagnostics(&uri);

    // `model` in `logits = model(idx)`: the whole net, for the call's input.
    let net = hover_text(&mut server, &uri, 30, 10);
    assert!(net.contains("Net (input [4, 7])"), "{net}");
    assert!(net.contains("(embed): Embedding(100, 32)"), "{net}");
    assert!(net.contains("  (block): Block"), "{net}");
    assert!(net.contains("    (fc): Linear(32, 128)"), "{net}");
    assert!(net.contains("[4, 7, 128]"), "{net}");
    // 3200 frozen + (32*128 + 128) + (128*32 + 32) + 320.
    assert!(net.contains("Total params: 11,872"), "{net}");
    assert!(net.contains("Trainable params: 8,672"), "{net}");
    assert!(net.contains("Non-trainable params: 3,200"), "{net}");
    assert!(net.contains("(3,200) frozen"), "{net}");

    // `self.block` inside forward: the block alone, for what forward gives it.
    let block = hover_text(&mut server, &uri, 24, 18);
    assert!(
        block.starts_with("```text\nBlock (input [4, 7, 32])"),
        "{block}"
    );
    assert!(block.contains("Total params: 8,352"), "{block}");

    // Where the instance is bound: `model` of `model = Net()`, and
    // `self.block` of `self.block = Block(32)`.
    let bound = hover_text(&mut server, &uri, 28, 2);
    assert!(bound.contains("Net (input [4, 7])"), "{bound}");
    let attribute = hover_text(&mut server, &uri, 18, 15);
    assert!(
        attribute.contains("Block (input [4, 7, 32])"),
        "{attribute}"
    );

    // The class's name: the instance the file calls.
    let class = hover_text(&mut server, &uri, 14, 7);
    assert!(class.contains("Net (input [4, 7])"), "{class}");

    // A tensor is still a tensor.
    let logits = hover_text(&mut server, &uri, 30, 2);
    assert!(logits.contains("Tensor[4, 7, 10]"), "{logits}");
    server.shutdown_and_exit();
}

#[test]
fn hover_on_a_library_class_shows_symbolic_counts() {
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("file://{}/lib.py", dir.path().display());
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    let source = "\
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)

    def forward(self, x):
        return self.c_attn(x)
";
    server.open(&uri, 1, source);
    server.diagnostics(&uri);
    let text = hover_text(&mut server, &uri, 3, 8);
    assert!(
        text.contains("Total params: 3*n_embd**2 + 3*n_embd"),
        "{text}"
    );
    assert!(
        text.contains("(c_attn): Linear(n_embd, 3*n_embd)  [..., 3*n_embd]"),
        "{text}"
    );
    assert!(text.contains("made up from forward's signature"), "{text}");
    server.shutdown_and_exit();
}
