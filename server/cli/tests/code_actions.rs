//! Quick fixes over the protocol (issue 18, item 2): the real `shapels lsp`
//! binary answers `textDocument/codeAction` with a fix per kind, each of
//! which, applied as the client would, makes the diagnostic go away.

mod common;

use common::{Server, capabilities};
use serde_json::{Value, json};

fn document_uri(dir: &tempfile::TempDir) -> String {
    format!("file://{}/model.py", dir.path().display())
}

/// A UTF-16 `Position` of an ASCII-or-not text, as a byte offset.
fn offset(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().unwrap() as usize;
    let character = position["character"].as_u64().unwrap() as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= character || c == '\n' {
            return start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// `text` with the `TextEdit`s applied.
fn apply(text: &str, edits: &[Value]) -> String {
    let mut edits: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(text, &e["range"]["start"]),
                offset(text, &e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (start, end, new) in edits {
        out.replace_range(start..end, new);
    }
    out
}

/// The edits of a code action for `uri`, from `changes` or `documentChanges`.
fn edits_of(action: &Value, uri: &str) -> Vec<Value> {
    if let Some(changes) = action["edit"]["changes"][uri].as_array() {
        return changes.clone();
    }
    let changes = action["edit"]["documentChanges"].as_array().expect("edits");
    changes
        .iter()
        .filter(|c| c["textDocument"]["uri"] == uri)
        .flat_map(|c| c["edits"].as_array().cloned().unwrap_or_default())
        .collect()
}

struct Case {
    server: Server,
    uri: String,
    text: String,
    _dir: tempfile::TempDir,
}

impl Case {
    fn open(text: &str, capabilities: Value) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let uri = document_uri(&dir);
        let mut server = Server::start();
        let init = server.initialize(capabilities, Value::Null);
        assert_eq!(
            init["capabilities"]["codeActionProvider"]["codeActionKinds"],
            json!(["quickfix"])
        );
        server.open(&uri, 1, text);
        Case {
            server,
            uri,
            text: text.to_string(),
            _dir: dir,
        }
    }

    /// The published diagnostic of `code`.
    fn diagnostic(&mut self, code: &str) -> Value {
        let published = self.server.diagnostics(&self.uri);
        let all = published["diagnostics"].as_array().unwrap().clone();
        all.iter()
            .find(|d| d["code"] == code)
            .unwrap_or_else(|| panic!("no {code} in {all:#?}"))
            .clone()
    }

    fn code_actions(&mut self, diagnostic: &Value) -> Vec<Value> {
        self.code_actions_in(&diagnostic["range"], json!([diagnostic]))
    }

    fn code_actions_in(&mut self, range: &Value, diagnostics: Value) -> Vec<Value> {
        let result = self.server.request(
            "textDocument/codeAction",
            json!({
                "textDocument": {"uri": self.uri},
                "range": range,
                "context": {"diagnostics": diagnostics},
            }),
        );
        result.as_array().cloned().unwrap_or_default()
    }

    /// Applies `action` as the client would (a whole-text change, version
    /// 2) and returns the new text and the codes published for it.
    fn apply(&mut self, action: &Value) -> (String, Vec<String>) {
        let edited = apply(&self.text, &edits_of(action, &self.uri));
        self.server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": self.uri, "version": 2},
                   "contentChanges": [{"text": edited}]}),
        );
        let uri = self.uri.clone();
        let published = self.server.wait_for("diagnostics of version 2", |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == 2
        });
        let codes = published["params"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect();
        (edited, codes)
    }
}

/// Opens `text`, takes the first quick fix of its `code` diagnostic,
/// checks it is a preferred quickfix naming that diagnostic, applies it
/// and checks the diagnostic is gone; returns the edited text.
fn fixed(text: &str, code: &str) -> String {
    let mut case = Case::open(text, capabilities(false));
    let diagnostic = case.diagnostic(code);
    let actions = case.code_actions(&diagnostic);
    let action = actions
        .first()
        .unwrap_or_else(|| panic!("no code action for {diagnostic:#?}"));
    assert_eq!(action["kind"], "quickfix");
    assert_eq!(action["isPreferred"], true);
    assert_eq!(action["diagnostics"][0]["code"], code);
    let (edited, codes) = case.apply(action);
    assert!(
        !codes.iter().any(|c| c == code),
        "{codes:?} after\n{edited}"
    );
    case.server.shutdown_and_exit();
    edited
}

#[test]
fn linear_in_features() {
    let edited = fixed(
        "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(1, 64, 5)\n        self.fc = nn.Linear(9216, 128)\n\n    def forward(self, x):\n        return self.fc(torch.flatten(self.conv(x), 1))\n\n\ny = Net()(torch.randn(8, 1, 18, 18))\n",
        "linear-shape",
    );
    assert!(edited.contains("nn.Linear(12544, 128)"), "{edited}");
}

#[test]
fn conv_in_channels() {
    let edited = fixed(
        "import torch\nimport torch.nn as nn\ncv = nn.Conv2d(3, 8, 3)\ny = cv(torch.randn(1, 4, 10, 10))\n",
        "conv-input",
    );
    assert!(edited.contains("nn.Conv2d(4, 8, 3)"), "{edited}");
}

#[test]
fn norm_and_recurrent_sizes() {
    for (text, expected) in [
        (
            "import torch\nimport torch.nn as nn\nln = nn.LayerNorm(64)\ny = ln(torch.randn(2, 32))\n",
            "nn.LayerNorm(32)",
        ),
        (
            "import torch\nimport torch.nn as nn\nbn = nn.BatchNorm1d(16)\ny = bn(torch.randn(2, 8))\n",
            "nn.BatchNorm1d(8)",
        ),
        (
            "import torch\nimport torch.nn as nn\nrnn = nn.GRU(10, 20)\ny = rnn(torch.randn(5, 3, 12))\n",
            "nn.GRU(12, 20)",
        ),
    ] {
        let edited = fixed(text, "layer-input");
        assert!(edited.contains(expected), "{edited}");
    }
}

#[test]
fn view_after_transpose() {
    let text = "import torch\na = torch.randn(4, 8, 16)\nb = a.transpose(1, 2).view(4, 128)\n";
    let mut case = Case::open(text, capabilities(false));
    let diagnostic = case.diagnostic("view-stride");
    let actions = case.code_actions(&diagnostic);
    let titles: Vec<&str> = actions
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert_eq!(actions[0]["isPreferred"], true);
    assert_eq!(actions[1]["isPreferred"], false);
    let (edited, codes) = case.apply(&actions[1]);
    assert!(edited.contains(".contiguous().view(4, 128)"), "{edited}");
    assert!(!codes.iter().any(|c| c == "view-stride"), "{codes:?}");
    case.server.shutdown_and_exit();
    let edited = fixed(text, "view-stride");
    assert!(edited.contains(".reshape(4, 128)"), "{edited}");
}

/// The edit is on a line with characters outside the BMP before it: its
/// position is in UTF-16 code units, as the client counts.
#[test]
fn device_mismatch_in_utf16() {
    let edited = fixed(
        "import torch\nc = torch.randn(3, device=\"cuda\")\nd = torch.randn(3)\ns = \"🎉é\"; e = c + d\n",
        "device-mismatch",
    );
    assert!(
        edited.contains("s = \"🎉é\"; e = c + d.to(c.device)\n"),
        "{edited}"
    );
}

#[test]
fn an_input_moves_to_the_device_of_the_layer() {
    let edited = fixed(
        "import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 4).cuda()\ny = fc(torch.randn(2, 8))\n",
        "device-mismatch",
    );
    assert!(
        edited.contains("y = fc(torch.randn(2, 8).to(fc.weight.device))"),
        "{edited}"
    );
}

#[test]
fn cross_entropy_over_a_sequence() {
    let edited = fixed(
        "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 16, 100)\ntargets = torch.randint(0, 100, (4, 16))\nloss = F.cross_entropy(logits, targets)\n",
        "loss-shape",
    );
    assert!(
        edited.contains("F.cross_entropy(logits.view(-1, 100), targets.view(-1))"),
        "{edited}"
    );
}

/// Fixing the first Linear would bring out the second one's mismatch: a
/// fix that leaves a new error is not offered.
#[test]
fn a_fix_that_breaks_something_else_is_not_offered() {
    let text = "import torch\nimport torch.nn as nn\nfc1 = nn.Linear(10, 20)\nfc2 = nn.Linear(30, 5)\nx = torch.randn(2, 12)\ny = fc2(fc1(x))\n";
    let mut case = Case::open(text, capabilities(false));
    let diagnostic = case.diagnostic("linear-shape");
    assert_eq!(case.code_actions(&diagnostic), Vec::<Value>::new());
    case.server.shutdown_and_exit();
}

/// A client that takes versioned edits gets them for the version the fix
/// was tried on; a range without diagnostics gets no action.
#[test]
fn versioned_edits_and_empty_ranges() {
    let text = "import torch\nimport torch.nn as nn\ncv = nn.Conv2d(3, 8, 3)\ny = cv(torch.randn(1, 4, 10, 10))\n";
    let mut caps = capabilities(true);
    caps["workspace"]["workspaceEdit"] = json!({"documentChanges": true});
    let mut case = Case::open(text, caps);
    let diagnostic = case.diagnostic("conv-input");
    let actions = case.code_actions(&diagnostic);
    let changes = &actions[0]["edit"]["documentChanges"][0];
    assert_eq!(changes["textDocument"]["version"], 1);
    assert_eq!(changes["edits"][0]["newText"], "4");
    let elsewhere =
        json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}});
    let none = case.code_actions_in(&elsewhere, json!([]));
    assert!(none.is_empty(), "{none:#?}");
    case.server.shutdown_and_exit();
}

/// Issue 17's quick fix, served by the same handler: a stale shape comment
/// is rewritten to the inferred shape in its own notation.
#[test]
fn a_stale_shape_comment_is_rewritten() {
    let edited = fixed(
        "import torch\n\na = torch.randn(4, 5)\nc = a.unsqueeze(0)  # B x T\nb = a.t()  # (N, D)\n",
        "shape-comment",
    );
    assert!(
        edited.contains("c = a.unsqueeze(0)  # 1 x 4 x 5"),
        "{edited}"
    );
}
