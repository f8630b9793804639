//! Protocol tests: the real `shapels lsp` binary driven over stdio with raw JSON-RPC.

mod common;

use std::time::{Duration, Instant};

use common::{Server, TIMEOUT, capabilities};
use serde_json::{Value, json};

const SOURCE: &str = "import torch\nx = torch.randn(8, 128)\ny = x @ torch.randn(5, 3)\n";

/// A `file:` URI in a fresh directory, so no stray `pyproject.toml` applies.
fn document_uri(dir: &tempfile::TempDir) -> String {
    format!("file://{}/model.py", dir.path().display())
}

/// A server initialised with `dir` as its one workspace folder, whose
/// `pyproject.toml` then applies.
fn server_in(dir: &tempfile::TempDir) -> Server {
    let mut server = Server::start();
    let root = format!("file://{}", dir.path().display());
    server.request(
        "initialize",
        json!({"processId": null, "rootUri": root, "capabilities": capabilities(false),
               "workspaceFolders": [{"uri": root, "name": "project"}]}),
    );
    server.notify("initialized", json!({}));
    server
}

/// A server with `source` open as version 1 of a document in a fresh
/// directory (kept alive by the returned handle).
fn opened(source: &str) -> (tempfile::TempDir, String, Server) {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, source);
    (dir, uri, server)
}

fn hint_labeled<'a>(hints: &'a [Value], label: &str) -> &'a Value {
    hints
        .iter()
        .find(|h| h["label"] == label)
        .unwrap_or_else(|| panic!("no hint labelled {label:?} in {hints:#?}"))
}

/// The whole life of a session in one encoding: open, diagnostics, hints,
/// hover, edits on a line with an emoji, shutdown, exit with stdin open.
fn full_session(utf8: bool) {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    let init = server.initialize(capabilities(utf8), Value::Null);
    let caps = &init["capabilities"];
    assert_eq!(
        caps["positionEncoding"],
        if utf8 { "utf-8" } else { "utf-16" }
    );
    assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental sync");
    assert_eq!(caps["hoverProvider"], true);
    assert!(caps["inlayHintProvider"].is_object());
    assert_eq!(init["serverInfo"]["name"], "shapels");

    server.open(&uri, 1, SOURCE);
    let published = server.diagnostics(&uri);
    assert_eq!(published["version"], 1);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    let matmul = diagnostics
        .iter()
        .find(|d| d["code"] == "matmul-shape")
        .unwrap_or_else(|| panic!("no matmul-shape diagnostic in {diagnostics:#?}"));
    assert_eq!(matmul["severity"], 1);
    assert_eq!(matmul["source"], "shapels");
    assert_eq!(matmul["range"]["start"]["line"], 2);

    let hints = server.inlay_hints(&uri);
    let x = hint_labeled(&hints, ": [8, 128]");
    assert_eq!(x["position"], json!({"line": 1, "character": 1}));
    assert_eq!(x["paddingLeft"], false);
    assert!(x["tooltip"].as_str().unwrap().contains("float32"), "{x}");

    let hover = server.hover(&uri, 1, 0);
    assert_eq!(hover["contents"]["kind"], "markdown");
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("[8, 128]"),
        "{hover}"
    );
    assert_eq!(
        hover["range"],
        json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}})
    );
    // Between names, hover shows the innermost tensor expression, from an
    // analysis that records expressions, made when a hover first needs it.
    let hover = server.hover(&uri, 2, 10);
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("[5, 3]"),
        "{hover}"
    );
    assert_eq!(
        hover["range"],
        json!({"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 25}})
    );

    // Line 1 becomes `s = "🎉"; x = torch.randn(8, 128)`. The emoji is one
    // code point, two UTF-16 units and four UTF-8 bytes.
    server.change(&uri, 2, [1, 0, 1, 0], "s = \"🎉\"; ");
    let published = server.diagnostics(&uri);
    assert_eq!(published["version"], 2);
    let after_x = if utf8 { 13 } else { 11 };
    let hints = server.inlay_hints(&uri);
    assert_eq!(
        hint_labeled(&hints, ": [8, 128]")["position"],
        json!({"line": 1, "character": after_x})
    );
    let hover = server.hover(&uri, 1, after_x - 1);
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("[8, 128]"),
        "{hover}"
    );

    // Replace `128`, which sits after the emoji, using positions in the
    // negotiated encoding.
    let start = if utf8 { 31 } else { 29 };
    server.change(&uri, 3, [1, start, 1, start + 3], "64");
    assert_eq!(server.diagnostics(&uri)["version"], 3);
    let hints = server.inlay_hints(&uri);
    assert_eq!(
        hint_labeled(&hints, ": [8, 64]")["position"],
        json!({"line": 1, "character": after_x})
    );
    // The expression `x` on the next line, in the current version.
    let hover = server.hover(&uri, 2, 4);
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("[8, 64]"),
        "{hover}"
    );

    let status = server.shutdown_and_exit();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn session_in_utf16() {
    full_session(false);
}

#[test]
fn session_in_utf8() {
    full_session(true);
}

#[test]
fn utf8_is_negotiated_only_when_offered() {
    for (offered, expected) in [
        (json!(["utf-16", "utf-8"]), "utf-8"),
        (json!(["utf-32", "utf-16"]), "utf-16"),
        (Value::Null, "utf-16"),
    ] {
        let mut server = Server::start();
        let init = server.initialize(
            json!({"general": {"positionEncodings": offered}}),
            Value::Null,
        );
        assert_eq!(
            init["capabilities"]["positionEncoding"], expected,
            "offered {offered}"
        );
        assert_eq!(server.shutdown_and_exit().code(), Some(0));
    }
}

#[test]
fn shutdown_then_exit_with_stdin_open_exits_zero() {
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    // The harness never closes the server's stdin, as editors do not.
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn exit_without_shutdown_exits_one() {
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.notify("exit", Value::Null);
    assert_eq!(server.wait_exit().code(), Some(1));
}

#[test]
fn diagnostics_carry_the_latest_version_only() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, SOURCE);
    assert_eq!(server.diagnostics(&uri)["version"], 1);
    // A burst of edits faster than the debounce: only the last version may
    // be published, and never an older one after a newer one.
    for version in 2..=8 {
        server.change(
            &uri,
            version,
            [3, 0, 3, 0],
            &format!("z{version} = torch.randn({version}, 2)\n"),
        );
    }
    let last = server.diagnostics(&uri);
    let mut versions = vec![last["version"].as_i64().unwrap()];
    versions.extend(
        server
            .drain(Duration::from_millis(600))
            .iter()
            .filter(|m| m["method"] == "textDocument/publishDiagnostics")
            .map(|m| m["params"]["version"].as_i64().unwrap()),
    );
    assert!(
        versions.windows(2).all(|w| w[0] <= w[1]),
        "published out of order: {versions:?}"
    );
    assert_eq!(versions.last(), Some(&8), "{versions:?}");
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn edits_apply_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, "import torch\n");
    // Each edit appends at the position the previous one ended at: applied
    // out of order, the text would not be this program.
    let lines = [
        "a = torch.randn(2, 3)\n",
        "b = torch.randn(4, 5)\n",
        "c = a @ b\n",
    ];
    for (i, line) in lines.iter().enumerate() {
        let at = i as u32 + 1;
        server.change(&uri, i as i32 + 2, [at, 0, at, 0], line);
    }
    // The opened text may be published first: on a busy host its analysis
    // can finish before the edits arrive. The last version's comes after.
    let published = server.wait_for("diagnostics of version 4", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri.as_str()
            && m["params"]["version"] == 4
    })["params"]
        .clone();
    assert_eq!(published["version"], 4);
    let hints = server.inlay_hints(&uri);
    assert_eq!(
        hint_labeled(&hints, ": [2, 3]")["position"],
        json!({"line": 1, "character": 1})
    );
    assert_eq!(
        hint_labeled(&hints, ": [4, 5]")["position"],
        json!({"line": 2, "character": 1})
    );
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics
            .iter()
            .any(|d| d["code"] == "matmul-shape" && d["range"]["start"]["line"] == 3)
    );
}

/// Typing a comment above the code changes nothing the analysis reads:
/// the server carries the last analysis over instead of running it, and
/// what it publishes and hints sits at the new positions, with the new
/// version.
#[test]
fn a_comment_typed_above_moves_diagnostics_and_hints() {
    let (_dir, uri, mut server) =
        opened("import torch\na = torch.randn(2, 3)\nb = torch.randn(4, 5)\nc = a @ b\n");
    let first = server.diagnostics(&uri);
    let line_of_error = |published: &Value| {
        published["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "matmul-shape")
            .map(|d| d["range"]["start"]["line"].clone())
    };
    assert_eq!(line_of_error(&first), Some(json!(3)));
    // A new comment line above `a`, then a word typed into it.
    server.change(&uri, 2, [1, 0, 1, 0], "# the inputs\n");
    server.change(&uri, 3, [1, 12, 1, 12], ", both random");
    let published = server.diagnostics(&uri);
    assert_eq!(published["version"], 3);
    assert_eq!(line_of_error(&published), Some(json!(4)));
    let hints = server.inlay_hints(&uri);
    assert_eq!(
        hint_labeled(&hints, ": [2, 3]")["position"],
        json!({"line": 2, "character": 1})
    );
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn hover_names_the_call_a_shape_is_for() {
    let (_dir, uri, mut server) = opened(
        "import torch\n\n\ndef pool(x):\n    z = x.mean(1)\n    return z\n\n\nw = pool(torch.randn(4, 5))\n",
    );
    server.diagnostics(&uri);
    let hover_on_z = |server: &mut Server, line: u32| {
        server.hover(&uri, line, 4)["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let hover = hover_on_z(&mut server, 4);
    assert!(hover.contains("[4]"), "{hover}");
    assert!(hover.contains("for the call at line 9"), "{hover}");
    // A comment line typed above the function moves the call a line down.
    server.change(&uri, 2, [1, 0, 1, 0], "# pooling\n");
    assert_eq!(server.diagnostics(&uri)["version"], 2);
    let hover = hover_on_z(&mut server, 5);
    assert!(hover.contains("for the call at line 10"), "{hover}");
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn close_clears_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, SOURCE);
    server.diagnostics(&uri);
    server.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let cleared = server.diagnostics(&uri);
    assert_eq!(cleared["diagnostics"], json!([]));
    assert!(
        cleared.get("version").is_none_or(Value::is_null),
        "{cleared}"
    );
    // Requests about a closed document get no answer, not an error.
    assert_eq!(server.hover(&uri, 1, 0), Value::Null);
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn save_publishes_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, SOURCE);
    server.diagnostics(&uri);
    server.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(server.diagnostics(&uri)["version"], 1);
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn out_of_range_positions_are_clamped() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, "x = 1\n");
    server.diagnostics(&uri);
    assert_eq!(server.hover(&uri, 999, 999), Value::Null);
    let far = server.request_raw(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 50, "character": 4}, "end": {"line": 2, "character": 99}}}),
    );
    assert!(far.get("error").is_none(), "{far}");
    // An edit past the end appends; a reversed range inserts at its start.
    server.change(&uri, 2, [40, 7, 60, 0], "y = 2\n");
    assert_eq!(server.diagnostics(&uri)["version"], 2);
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn bad_setting_is_shown_by_key_and_the_rest_applies() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(
        capabilities(false),
        json!({"shapels": {"staticShapes": "yes", "inlayHints": {"enable": false}}}),
    );
    let message = server.wait_for("a window/showMessage", |m| {
        m["method"] == "window/showMessage"
    });
    let text = message["params"]["message"].as_str().unwrap();
    assert!(text.contains("shapels.staticShapes"), "{text}");
    assert_eq!(message["params"]["type"], 2, "a warning");
    server.open(&uri, 1, SOURCE);
    server.diagnostics(&uri);
    assert_eq!(
        server.inlay_hints(&uri),
        Vec::<Value>::new(),
        "inlayHints.enable = false still applied"
    );
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn pushed_configuration_applies_live() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, SOURCE);
    server.diagnostics(&uri);
    assert!(!server.inlay_hints(&uri).is_empty());

    server.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"shapels": {"inlayHints": {"enable": false}}}}),
    );
    assert_eq!(server.inlay_hints(&uri), Vec::<Value>::new());

    server.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"shapels": {"inlayHints": {"enable": true, "detail": "full"}}}}),
    );
    let hints = server.inlay_hints(&uri);
    hint_labeled(&hints, ": [8, 128] float32 cpu");
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn pulled_configuration_applies_and_refreshes_hints() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    *server.configuration.lock().unwrap() = json!({"inlayHints": {"detail": "full"}});
    let mut caps = capabilities(false);
    caps["workspace"] = json!({
        "configuration": true,
        "inlayHint": {"refreshSupport": true},
        "didChangeConfiguration": {"dynamicRegistration": true},
    });
    server.initialize(caps, Value::Null);
    let asked = server.wait_for("workspace/configuration", |m| {
        m["method"] == "workspace/configuration"
    });
    assert_eq!(asked["params"]["items"][0]["section"], "shapels");
    let registered = server.wait_for("client/registerCapability", |m| {
        m["method"] == "client/registerCapability"
    });
    assert_eq!(
        registered["params"]["registrations"][0]["method"],
        "workspace/didChangeConfiguration"
    );
    server.wait_for("workspace/inlayHint/refresh", |m| {
        m["method"] == "workspace/inlayHint/refresh"
    });

    server.open(&uri, 1, SOURCE);
    server.diagnostics(&uri);
    hint_labeled(&server.inlay_hints(&uri), ": [8, 128] float32 cpu");

    // In the pull model the notification's payload is ignored and the
    // server asks again. Refresh requests already sent (after the
    // diagnostics of the open, say) must not be mistaken for the one the
    // new settings cause, so the hints are polled until they change.
    *server.configuration.lock().unwrap() = json!({"inlayHints": {"detail": "shape"}});
    server.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": null}),
    );
    server.wait_for("a second workspace/configuration", |m| {
        m["method"] == "workspace/configuration"
    });
    server.wait_for("workspace/inlayHint/refresh", |m| {
        m["method"] == "workspace/inlayHint/refresh"
    });
    let deadline = Instant::now() + TIMEOUT;
    while server
        .inlay_hints(&uri)
        .iter()
        .all(|h| h["label"] != ": [8, 128]")
    {
        assert!(
            Instant::now() < deadline,
            "the pulled settings never applied"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn pyproject_settings_apply_and_bad_values_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.shapels]\nallow_fallback_kernels = \"no\"\nstatic_shapes = true\n",
    )
    .unwrap();
    let uri = document_uri(&dir);
    let mut server = server_in(&dir);
    server.open(&uri, 1, SOURCE);
    let message = server.wait_for("a window/showMessage", |m| {
        m["method"] == "window/showMessage"
    });
    let text = message["params"]["message"].as_str().unwrap();
    assert!(
        text.contains("tool.shapels.allow_fallback_kernels"),
        "{text}"
    );
    assert!(
        text.contains("pyproject.toml"),
        "the message names the file: {text}"
    );
    assert_eq!(server.diagnostics(&uri)["version"], 1);
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn a_stub_wins_over_a_module_of_the_same_name() {
    // The `stubs` folder of the pyproject describes `fastops`; the user's
    // wrapper of the same name next to the document would hide it if stubs
    // were searched after the document's folder.
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("pyproject.toml", "[tool.shapels]\nstubs = [\"typings\"]\n");
    write(
        "typings/fastops.pyi",
        "from jaxtyping import Float\nfrom torch import Tensor\n\ndef pool(x: Float[Tensor, \"b n d\"]) -> Float[Tensor, \"b d\"]: ...\n",
    );
    write(
        "fastops.py",
        "import fastops_cuda\n\n\ndef pool(x):\n    return fastops_cuda.pool(x)\n",
    );
    let uri = document_uri(&dir);
    let mut server = server_in(&dir);
    server.open(
        &uri,
        1,
        "import torch\nfrom fastops import pool\n\nbad = pool(torch.randn(2, 5))\n",
    );
    let published = server.diagnostics(&uri);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics.iter().any(|d| d["code"] == "shape-annotation"),
        "the stub's annotation checks the call: {diagnostics:#?}"
    );
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

#[test]
fn syntax_errors_are_published_as_check_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let broken = "import torch\nx = torch.randn(8, 128)\ny = x @ @ x\nz = x.sum(0)\n";
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&uri, 1, broken);
    let published = server.diagnostics(&uri);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    let syntax: Vec<&Value> = diagnostics
        .iter()
        .filter(|d| d["code"] == "syntax-error")
        .collect();
    assert_eq!(syntax.len(), 1, "{diagnostics:#?}");
    // Information, at the span tree-sitter marks: the second `@`.
    assert_eq!(syntax[0]["severity"], 3);
    assert_eq!(
        syntax[0]["range"],
        json!({"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 9}})
    );

    // `shapels check` reports the same place (1-based lines and columns).
    std::fs::write(dir.path().join("model.py"), broken).unwrap();
    let output = common::shapels()
        .args(["check", "--format", "json", "model.py"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let d = &report["files"][0]["diagnostics"][0];
    assert_eq!(
        (
            &d["code"],
            &d["line"],
            &d["column"],
            &d["end_line"],
            &d["end_column"]
        ),
        (
            &json!("syntax-error"),
            &json!(3),
            &json!(9),
            &json!(3),
            &json!(10)
        ),
        "{report}"
    );

    // Fixed, the diagnostic goes.
    server.change(&uri, 2, [2, 8, 2, 10], "");
    let published = server.diagnostics(&uri);
    assert_eq!(published["version"], 2);
    assert!(
        published["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["code"] != "syntax-error"),
        "{published}"
    );
    assert!(server.shutdown_and_exit().success());
}

/// A document analysed for seconds holds up no other: small ones opened
/// meanwhile get their diagnostics, hints and hover before the large one's
/// diagnostics come. (Several, so that no way of assigning documents to
/// workers can pass by luck.)
#[test]
fn a_large_document_does_not_hold_up_small_ones() {
    let dir = tempfile::tempdir().unwrap();
    let large = format!("file://{}/large.py", dir.path().display());
    let model = include_str!("../../analysis/benches/data/gpt.py");
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    server.open(&large, 1, &model.repeat(40));
    server.wait_for_log(&format!("analysing {large} version 1"));
    let large_published = |m: &Value| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == large.as_str()
    };
    for name in ["a", "b", "c", "d", "e", "f"] {
        let small = format!("file://{}/{name}.py", dir.path().display());
        server.open(&small, 1, SOURCE);
        assert_eq!(server.diagnostics(&small)["version"], 1);
        hint_labeled(&server.inlay_hints(&small), ": [8, 128]");
        assert!(
            server.hover(&small, 1, 0)["contents"]["value"]
                .as_str()
                .is_some_and(|v| v.contains("[8, 128]"))
        );
        assert!(
            !server.has_arrived(large_published),
            "the large document was analysed before {name}.py"
        );
    }
    server.diagnostics(&large);
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

/// A document that runs the analysis out of its step budget: an
/// information diagnostic where it stopped, and hover on a name after it
/// says why nothing is known there.
#[test]
fn running_out_of_the_step_budget_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let uri = document_uri(&dir);
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    let source = "import torch\nx = torch.randn(2, 3)\nn = 0\nfor a in range(64):\n    for b in range(64):\n        for c in range(64):\n            for d in range(64):\n                n = n + 1\ny = torch.randn(4, 5)\n";
    server.open(&uri, 1, source);
    let published = server.diagnostics(&uri);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    let budget = diagnostics
        .iter()
        .find(|d| d["code"] == "analysis-budget")
        .unwrap_or_else(|| panic!("no analysis-budget diagnostic in {diagnostics:#?}"));
    assert_eq!(budget["severity"], 3, "information");
    assert_eq!(budget["range"]["start"]["line"], 7);
    assert!(
        budget["message"]
            .as_str()
            .unwrap()
            .starts_with("analysis stopped here: step budget of"),
        "{budget}"
    );
    let hover = server.hover(&uri, 8, 0);
    let text = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        text.contains("stopped at line 8") && text.contains("step budget"),
        "{hover}"
    );
    assert_eq!(
        hover["range"],
        json!({"start": {"line": 8, "character": 0}, "end": {"line": 8, "character": 1}})
    );
    // Before the stop, shapes are known as ever.
    assert!(
        server.hover(&uri, 1, 0)["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("[2, 3]"))
    );
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

/// A document over the size limit is reported once, however many times
/// it is asked about.
#[test]
fn a_document_over_the_limit_is_logged_once() {
    let model = include_str!("../../analysis/benches/data/gpt.py");
    let big = model.repeat(5 * 1024 * 1024 / model.len());
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    let uri = "untitled:big.py";
    server.open(uri, 1, &big);
    server.diagnostics(uri);
    assert_eq!(server.inlay_hints(uri), Vec::<Value>::new());
    assert_eq!(server.hover(uri, 30, 4), Value::Null);
    server.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    server.diagnostics(uri);
    let log = server.stderr();
    let warnings = log
        .lines()
        .filter(|line| line.contains("more than the 4 MiB shapels analyses"))
        .count();
    assert_eq!(warnings, 1, "{log}");
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}
