//! The hint settings over the protocol (issue 18, item 4): from
//! `initializationOptions` and from `workspace/didChangeConfiguration`, the
//! real `shapels lsp` binary hides repeats, shows only parameters or only
//! changes, and abbreviates long hints with the full shape in the tooltip.

mod common;

use common::{Server, capabilities};
use serde_json::{Value, json};

const MODEL: &str = "\
import torch
import torch.nn.functional as F


def block(x: torch.Tensor, w):
    x = F.relu(x)
    h = x.view(x.shape[0], -1, 4)
    h = F.gelu(h)
    return h @ w


y = block(torch.randn(8, 16), torch.randn(4, 2))
";

fn document_uri(dir: &tempfile::TempDir) -> String {
    format!("file://{}/model.py", dir.path().display())
}

/// `(line, label)` of every hint.
fn shown(server: &mut Server, uri: &str) -> Vec<(u64, String)> {
    server
        .inlay_hints(uri)
        .iter()
        .map(|h| {
            (
                h["position"]["line"].as_u64().unwrap(),
                h["label"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn lines(hints: &[(u64, String)]) -> Vec<u64> {
    hints.iter().map(|(line, _)| *line).collect()
}

fn configure(server: &mut Server, hints: Value) {
    server.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"shapels": {"inlayHints": hints}}}),
    );
}

#[test]
fn hide_repeats_from_initialization_options() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(
        capabilities(false),
        json!({"shapels": {"inlayHints": {"hideRepeats": true}}}),
    );
    server.open(&uri, 1, MODEL);
    server.diagnostics(&uri);
    // The parameters `x` and `w`, then `x = F.relu(x)` (a repeat, hidden),
    // `h`, and `h = F.gelu(h)` (a repeat, hidden); `y` at the bottom.
    assert_eq!(lines(&shown(&mut server, &uri)), [4, 4, 6, 11]);
    configure(&mut server, json!({"hideRepeats": false}));
    assert_eq!(lines(&shown(&mut server, &uri)), [4, 4, 5, 6, 7, 11]);
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn modes_and_lengths_change_live() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, MODEL);
    server.diagnostics(&uri);

    configure(&mut server, json!({"show": "parameters"}));
    assert_eq!(lines(&shown(&mut server, &uri)), [4, 4]);

    configure(&mut server, json!({"show": "changes"}));
    assert_eq!(lines(&shown(&mut server, &uri)), [4, 4, 6, 11]);

    configure(
        &mut server,
        json!({"show": "all", "maxLength": 9, "detail": "full"}),
    );
    let hints = server.inlay_hints(&uri);
    assert_eq!(hints.len(), 6, "{hints:#?}");
    let h = hints
        .iter()
        .find(|h| h["position"]["line"] == 6)
        .expect("the hint of h");
    let label = h["label"].as_str().unwrap();
    assert!(label.chars().count() <= 9 && label.contains('…'), "{h}");
    assert!(
        h["tooltip"].as_str().unwrap().starts_with("[8, 4, 4]"),
        "{h}"
    );

    // A value the server cannot use is reported, and the rest applies.
    configure(&mut server, json!({"show": "sometimes", "maxLength": 0}));
    let message = server.wait_for("a window/showMessage", |m| {
        m["method"] == "window/showMessage"
    });
    assert!(
        message["params"]["message"]
            .as_str()
            .unwrap()
            .contains("shapels.inlayHints.show"),
        "{message}"
    );
    let labels: Vec<String> = shown(&mut server, &uri).into_iter().map(|h| h.1).collect();
    assert_eq!(labels.len(), 6, "{labels:?}");
    assert!(labels.contains(&": [8, 4, 4]".to_string()), "{labels:?}");
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}
