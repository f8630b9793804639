//! Protocol tests of what a clumsy or hostile client sends: frames that do
//! not decode, odd headers, half emoji, bytes that are not UTF-8. Each is
//! sent to the real `shapels lsp` over stdio, and each is followed by a
//! health check: the session goes on, and a fresh document still gets its
//! diagnostic, hints and hover.

mod common;

use common::{Server, capabilities};
use serde_json::{Value, json};

const SOURCE: &str = "import torch\nx = torch.randn(8, 128)\ny = x @ torch.randn(5, 3)\n";

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn started() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start();
    server.initialize(capabilities(false), Value::Null);
    (dir, server)
}

/// The error response with `id` (`null` for a frame whose id is unknown).
fn error_reply(server: &mut Server, id: Value) -> Value {
    let reply = server.wait_for(&format!("an error reply with id {id}"), |m| {
        m.get("error").is_some() && m["id"] == id
    });
    reply["error"].clone()
}

/// A document opened after the bad frame gets what a healthy session gives.
fn assert_healthy(server: &mut Server, dir: &tempfile::TempDir, name: &str) {
    let uri = format!("file://{}/{name}.py", dir.path().display());
    server.open(&uri, 1, SOURCE);
    let published = server.diagnostics(&uri);
    assert!(
        published["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "matmul-shape" && d["range"]["start"]["line"] == 2),
        "{published}"
    );
    let hints = server.inlay_hints(&uri);
    assert!(
        hints
            .iter()
            .any(|h| h["label"] == ": [8, 128]"
                && h["position"] == json!({"line": 1, "character": 1})),
        "{hints:#?}"
    );
    let hover = server.hover(&uri, 1, 0);
    assert!(
        hover["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("[8, 128]")),
        "{hover}"
    );
}

fn finish(mut server: Server) {
    assert_eq!(server.shutdown_and_exit().code(), Some(0));
}

/// Bodies that are complete frames but no message: each gets its error,
/// with the id when it can be read, and the session reads on.
#[test]
fn undecodable_frames_are_answered_and_the_session_goes_on() {
    let cases: [(&[u8], i64, Value); 6] = [
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\":",
            -32700,
            Value::Null,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"x\xff\"}",
            -32601,
            json!(4),
        ),
        (b"\xff\xfe\x00garbage", -32700, Value::Null),
        (
            br#"[{"jsonrpc":"2.0","id":5,"method":"shutdown"}]"#,
            -32600,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"1.0","id":6,"method":"textDocument/hover"}"#,
            -32600,
            json!(6),
        ),
        (
            br#"{"jsonrpc":"2.0","id":7.5,"method":"textDocument/hover"}"#,
            -32600,
            Value::Null,
        ),
    ];
    for (i, (body, code, id)) in cases.into_iter().enumerate() {
        let (dir, mut server) = started();
        server.send_raw(&frame(body));
        let error = error_reply(&mut server, id);
        assert_eq!(
            error["code"],
            code,
            "{}: {error}",
            String::from_utf8_lossy(body)
        );
        assert_healthy(&mut server, &dir, &format!("case{i}"));
        finish(server);
    }
}

#[test]
fn a_lone_surrogate_in_a_document_is_read_as_a_replacement_character() {
    let (dir, mut server) = started();
    let uri = format!("file://{}/emoji.py", dir.path().display());
    // serde_json would write the surrogate escapes only as a pair; the body
    // is spelled out as a JavaScript client sends half an emoji.
    let body = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{uri}","languageId":"python","version":1,"text":"s = \"\ud83d\"\nimport torch\nx = torch.randn(2, 3)\ny = x @ x\n"}}}}}}"#
    );
    server.send_raw(&frame(body.as_bytes()));
    let published = server.diagnostics(&uri);
    assert_eq!(published["version"], 1);
    assert!(
        published["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "matmul-shape" && d["range"]["start"]["line"] == 3),
        "{published}"
    );
    let hints = server.inlay_hints(&uri);
    assert!(hints.iter().any(|h| h["label"] == ": [2, 3]"), "{hints:#?}");
    assert_healthy(&mut server, &dir, "after");
    finish(server);
}

#[test]
fn bytes_that_are_not_utf8_in_a_document_are_replaced() {
    let (dir, mut server) = started();
    let uri = format!("file://{}/latin1.py", dir.path().display());
    let mut body = format!(
        r##"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{uri}","languageId":"python","version":1,"text":"# caf"##
    )
    .into_bytes();
    body.push(0xe9);
    body.extend(br#"\nimport torch\nx = torch.randn(2, 3)\n"}}}"#);
    server.send_raw(&frame(&body));
    assert_eq!(server.diagnostics(&uri)["version"], 1);
    let hints = server.inlay_hints(&uri);
    assert!(hints.iter().any(|h| h["label"] == ": [2, 3]"), "{hints:#?}");
    assert_healthy(&mut server, &dir, "after");
    finish(server);
}

#[test]
fn unknown_headers_are_ignored() {
    let (dir, mut server) = started();
    let id = server.fresh_id();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "shapels/unknownRequest"}).to_string();
    let raw = format!(
        "X-Trace-Id: 1\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: {}\r\nX-Other: 2\r\n\r\n{body}",
        body.len()
    );
    server.send_raw(raw.as_bytes());
    // The request itself was read: an unknown method gets "method not found".
    let error = error_reply(&mut server, json!(id));
    assert_eq!(error["code"], -32601, "{error}");
    assert_healthy(&mut server, &dir, "after");
    finish(server);
}

#[test]
fn an_empty_frame_does_not_hold_back_the_request_after_it() {
    let (dir, mut server) = started();
    let uri = format!("file://{}/model.py", dir.path().display());
    server.open(&uri, 1, SOURCE);
    server.diagnostics(&uri);
    let id = server.fresh_id();
    let hover = json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 0}}})
    .to_string();
    // Both frames in one write, and nothing after them.
    let mut raw = b"Content-Length: 0\r\n\r\n".to_vec();
    raw.extend(frame(hover.as_bytes()));
    server.send_raw(&raw);
    assert_eq!(error_reply(&mut server, Value::Null)["code"], -32700);
    let answer = server.wait_for("the hover after the empty frame", |m| m["id"] == id);
    assert!(
        answer["result"]["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("[8, 128]")),
        "{answer}"
    );
    assert_healthy(&mut server, &dir, "after");
    finish(server);
}

#[test]
fn garbage_between_frames_is_skipped() {
    let (dir, mut server) = started();
    server.send_raw(b"this is not a header\r\n\r\n{\"some\": \"body\"}");
    assert_eq!(error_reply(&mut server, Value::Null)["code"], -32700);
    server.send_raw(b"Content-Length: twelve\r\n\r\n{\"a\": 1}");
    assert_eq!(error_reply(&mut server, Value::Null)["code"], -32700);
    assert_healthy(&mut server, &dir, "after");
    finish(server);
}

/// Messages that decode but make no sense to the server: the framework
/// answers (or ignores) them and carries on.
#[test]
fn well_formed_nonsense_is_survived() {
    let (dir, mut server) = started();
    let id = server.fresh_id();
    server.send_raw(&frame(
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": 5})
            .to_string()
            .as_bytes(),
    ));
    assert_eq!(error_reply(&mut server, json!(id))["code"], -32602);
    server.send_raw(&frame(
        br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":7}}"#,
    ));
    server.send_raw(&frame(br#"{"jsonrpc":"2.0","id":99999,"result":null}"#));
    server.send_raw(&frame(br#"{"jsonrpc":"2.0"}"#));
    assert_healthy(&mut server, &dir, "after");
    finish(server);
}
