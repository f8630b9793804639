//! Hovers that explain, over the protocol with the real binary: the chain
//! of ops and the assumptions of a tensor, what an int size is bound to,
//! why a name holds nothing known, and the operands of a diagnostic.

mod common;

use common::{Server, capabilities};
use serde_json::Value;

const SOURCE: &str = "\
import torch
import torch.nn as nn
import torchvision


class Heads(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.heads = heads

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        return q


backbone = torchvision.models.resnet18()
a = torch.randn(8, 128)
b = a @ torch.randn(5, 3)
";

fn hover_text(server: &mut Server, uri: &str, line: u32, character: u32) -> String {
    let hover = server.hover(uri, line, character);
    assert_ne!(hover, Value::Null, "no hover at {line}:{character}");
    hover["contents"]["value"].as_str().unwrap().to_string()
}

#[test]
fn hovers_explain_where_shapes_come_from() {
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("file://{}/heads.py", dir.path().display());
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, SOURCE);
    server.diagnostics(&uri);

    // `q` of line 15 (0-based 14): the ops that made it, with links to
    // their lines, and the one assumption it rests on, simplified, with
    // its source.
    let q = hover_text(&mut server, &uri, 14, 8);
    let line = |n: u32| format!("[line {n}]({uri}#L{n})");
    assert!(
        q.contains(&format!(
            "- made by `x` ({}) → `Linear` ({}) → `chunk` ({}) → `view` ({}) → `transpose` ({})",
            line(12),
            line(14),
            line(14),
            line(15),
            line(15)
        )),
        "{q}"
    );
    assert!(
        q.contains(&format!(
            "- assumes `C % heads == 0` — `view` at {}",
            line(15)
        )),
        "{q}"
    );
    assert_eq!(q.matches("assumes").count(), 1, "{q}");

    // `B` where it is used: what it is bound to, and where.
    let b = hover_text(&mut server, &uri, 14, 19);
    assert!(b.starts_with("```text\nB: int\n```"), "{b}");
    assert!(b.contains("- bound at line 13: `B, T, C = x.shape`"), "{b}");

    // A name from a package outside the workspace.
    let backbone = hover_text(&mut server, &uri, 18, 3);
    assert!(
        backbone.contains(
            "`torchvision.models.resnet18`: from `torchvision`, outside the workspace (not analysed)"
        ),
        "{backbone}"
    );

    // On the diagnostic: the shapes of its operands.
    let diagnostic = hover_text(&mut server, &uri, 20, 4);
    assert!(
        diagnostic.contains("`matmul-shape`: the operands"),
        "{diagnostic}"
    );
    assert!(diagnostic.contains("- `a`: `[8, 128]`"), "{diagnostic}");
    assert!(
        diagnostic.contains("- `torch.randn(5, 3)`: `[5, 3]`"),
        "{diagnostic}"
    );
    server.shutdown_and_exit();
}
