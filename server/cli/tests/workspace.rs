//! Imports between the user's files over the protocol: an edit of an
//! imported file in the editor, closing it, and a change on disk each
//! re-analyse the document that imports it, whose hints and diagnostics
//! follow without it being touched.

mod common;

use common::{Server, capabilities};
use serde_json::{Value, json};

const LAYERS: &str = "import torch.nn as nn\n\n\nclass Block(nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n        self.fc = nn.Linear(dim, dim)\n\n    def forward(self, x):\n        return self.fc(x)\n";

const MODEL: &str = "import torch\n\nfrom layers import Block\n\nif __name__ == \"__main__\":\n    block = Block(32)\n    x = torch.randn(2, 5, 32)\n    h = block(x)\n";

/// The hint of `h` (line 7) in the model's current analysis.
fn h_hint(server: &mut Server, uri: &str) -> Option<String> {
    server
        .inlay_hints(uri)
        .iter()
        .find(|hint| hint["position"]["line"] == 7)
        .and_then(|hint| hint["label"].as_str().map(str::to_string))
}

/// Waits for diagnostics of `uri` that satisfy `pred` (older ones are skipped).
fn diagnostics_until(
    server: &mut Server,
    uri: &str,
    pred: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    for _ in 0..20 {
        let published = server.diagnostics(uri);
        let diagnostics = published["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if pred(&diagnostics) {
            return diagnostics;
        }
    }
    panic!("no diagnostics of {uri} as expected");
}

/// A server started in `root`, initialized with it as the workspace folder.
fn start_in_folder(root: &std::path::Path, capabilities: Value) -> Server {
    let mut server = Server::start_in(Some(root));
    let uri = format!("file://{}", root.display());
    server.request(
        "initialize",
        json!({
            "processId": null,
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": "ws"}],
            "capabilities": capabilities,
        }),
    );
    server.notify("initialized", json!({}));
    server
}

#[test]
fn edits_of_an_imported_file_reach_its_importers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("layers.py"), LAYERS).unwrap();
    std::fs::write(root.join("model.py"), MODEL).unwrap();
    let layers_uri = format!("file://{}/layers.py", root.display());
    let model_uri = format!("file://{}/model.py", root.display());

    let mut caps = capabilities(false);
    caps["workspace"]["didChangeWatchedFiles"] = json!({"dynamicRegistration": true});
    let mut server = start_in_folder(&root, caps);
    // The server asks to watch Python files, so that changes made outside
    // the editor reach it.
    let registration = server.wait_for("client/registerCapability", |m| {
        m["method"] == "client/registerCapability"
    });
    let watchers =
        registration["params"]["registrations"][0]["registerOptions"]["watchers"].to_string();
    assert!(watchers.contains("**/*.py"), "{watchers}");

    // The model alone is open: `layers.py` is read from disk.
    server.open(&model_uri, 1, MODEL);
    diagnostics_until(&mut server, &model_uri, |d| d.is_empty());
    assert_eq!(
        h_hint(&mut server, &model_uri).as_deref(),
        Some(": [2, 5, 32]")
    );

    // Hover on an imported name says where it is defined.
    let hover = server.hover(&model_uri, 5, 13);
    let text = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(text.contains("defined in `layers.py:4`"), "{hover}");

    // Opened and edited in the editor, unsaved: the model follows.
    server.open(&layers_uri, 1, LAYERS);
    server.change(&layers_uri, 2, [6, 33, 6, 36], "2 * dim");
    diagnostics_until(&mut server, &model_uri, |d| d.is_empty());
    assert_eq!(
        h_hint(&mut server, &model_uri).as_deref(),
        Some(": [2, 5, 64]")
    );

    // A bug whose cause is in `layers.py` is reported in the model, where
    // the call is made, pointing at the line in `layers.py`.
    server.change(&layers_uri, 3, [6, 28, 6, 31], "16");
    let diagnostics = diagnostics_until(&mut server, &model_uri, |d| !d.is_empty());
    let error = &diagnostics[0];
    assert_eq!(error["code"], "linear-shape", "{error}");
    assert_eq!(error["range"]["start"]["line"], 7, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("layers.py:10"),
        "{error}"
    );
    let related = &error["relatedInformation"][0]["location"];
    assert_eq!(related["uri"], layers_uri.as_str(), "{error}");
    assert_eq!(related["range"]["start"]["line"], 9, "{error}");

    // Closed without saving: the file on disk counts again.
    server.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": layers_uri}}),
    );
    diagnostics_until(&mut server, &model_uri, |d| d.is_empty());
    assert_eq!(
        h_hint(&mut server, &model_uri).as_deref(),
        Some(": [2, 5, 32]")
    );

    // Changed on disk, by another program.
    std::fs::write(
        root.join("layers.py"),
        LAYERS.replace("(dim, dim)", "(dim, 3 * dim)"),
    )
    .unwrap();
    server.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": layers_uri, "type": 2}]}),
    );
    diagnostics_until(&mut server, &model_uri, |d| d.is_empty());
    assert_eq!(
        h_hint(&mut server, &model_uri).as_deref(),
        Some(": [2, 5, 96]")
    );

    let status = server.shutdown_and_exit();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn edits_do_not_pile_up_in_an_imported_registry() {
    // Each analysis of the model appends to a list of an imported module
    // whose top level is kept between analyses: every version must see
    // one entry, not one more per edit.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("reg.py"), "ITEMS = []\n").unwrap();
    let model =
        "import torch\nimport reg\n\nreg.ITEMS.append(1)\nx = torch.zeros(len(reg.ITEMS), 4)\n";
    std::fs::write(root.join("model.py"), model).unwrap();
    let model_uri = format!("file://{}/model.py", root.display());

    let mut server = start_in_folder(&root, capabilities(false));
    server.open(&model_uri, 1, model);
    let x_hint = |server: &mut Server| -> Option<String> {
        diagnostics_until(server, &model_uri, |d| d.is_empty());
        server
            .inlay_hints(&model_uri)
            .iter()
            .find(|hint| hint["position"]["line"] == 4)
            .and_then(|hint| hint["label"].as_str().map(str::to_string))
    };
    assert_eq!(x_hint(&mut server).as_deref(), Some(": [1, 4]"));
    for (version, width) in [(2, "5"), (3, "6"), (4, "7")] {
        server.change(&model_uri, version, [4, 32, 4, 33], width);
        assert_eq!(
            x_hint(&mut server),
            Some(format!(": [1, {width}]")),
            "version {version}"
        );
    }
    let status = server.shutdown_and_exit();
    assert_eq!(status.code(), Some(0));
}
