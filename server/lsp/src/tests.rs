//! In-process tests of the server with a stand-in analysis.
//!
//! The protocol tests in `server/cli/tests` drive the real binary and the
//! real analysis; these swap the analysis for a tiny fake so that what the
//! real one never does on purpose can be tested: panic, and report related
//! locations on a line with non-ASCII text.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use shapels_analysis::{
    Binding, BindingKind, Config, Coverage, Diagnostic, DimView, ExprInfo, FileAnalysis, Origin,
    Severity, TensorInfo,
};
use shapels_syntax::ast::Module;
use tower::{Service, ServiceExt};
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, Loopback, LspService};

use crate::server::Backend;
use crate::worker::{Analyzer, ModuleAnalyzer};

fn tensor(dims: &[i64]) -> TensorInfo {
    TensorInfo {
        shape: Some(dims.iter().map(|&d| DimView::Known(d)).collect()),
        dtype: Some("float32".into()),
        device: Some("cpu".into()),
        origin: Origin::Fake,
        op: Some("torch.randn".into()),
        chain: Vec::new(),
        example: None,
        guards: Vec::new(),
        guard_sites: Vec::new(),
        notes: Vec::new(),
        called_from: Vec::new(),
    }
}

/// Binds the word before each ` = ` to a `[8, line]` tensor (`[8, ?]` for a
/// name starting with `u`, an unknown rank for one starting with `r`),
/// reports each `@` as a matmul error related to the first binding, and
/// panics on `boom`.
fn fake_analysis(source: &str, _: &Module, _: &Config, _: Coverage) -> FileAnalysis {
    assert!(!source.contains("boom"), "the fake analysis blew up");
    let mut analysis = FileAnalysis::default();
    let mut line_start = 0;
    for (line_no, line) in source.split_inclusive('\n').enumerate() {
        for (at, _) in line.match_indices(" = ") {
            let name_start = line[..at]
                .rfind(|c: char| !c.is_alphanumeric() && c != '_')
                .map_or(0, |i| i + 1);
            let range = line_start + name_start..line_start + at;
            let name = &line[name_start..at];
            let mut info = tensor(&[8, line_no as i64]);
            if name.starts_with('u') {
                info.shape = Some(vec![DimView::Known(8), DimView::Unknown]);
            } else if name.starts_with('r') {
                info.shape = None;
            }
            analysis.expressions.push(ExprInfo {
                range: range.clone().into(),
                tensor: info.clone(),
            });
            analysis.bindings.push(Binding {
                name: name.to_string(),
                hint_at: range.end,
                range: range.into(),
                kind: BindingKind::Assign,
                tensor: info,
            });
        }
        for (at, _) in line.match_indices('@') {
            let related = analysis
                .bindings
                .first()
                .map(|b| shapels_analysis::Related::here(b.range, "left operand"));
            analysis.diagnostics.push(Diagnostic {
                range: (line_start + at..line_start + at + 1).into(),
                severity: Severity::Error,
                code: shapels_analysis::Code::MatmulShape,
                message: "size mismatch".into(),
                related: related.into_iter().collect(),
                fixes: Vec::new(),
            });
        }
        line_start += line.len();
    }
    analysis
}

struct Harness {
    service: LspService<Backend>,
    from_server: <ClientSocket as Loopback>::RequestStream,
    to_server: <ClientSocket as Loopback>::ResponseSink,
    next_id: i64,
    /// The server's answer to `initialize`.
    initialized: Value,
}

impl Harness {
    async fn start(analyzer: ModuleAnalyzer, capabilities: Value) -> Harness {
        let (service, socket) =
            crate::service(Arc::new(AtomicBool::new(false)), Analyzer::Plain(analyzer));
        let (from_server, to_server) = Loopback::split(socket);
        let mut harness = Harness {
            service,
            from_server,
            to_server,
            next_id: 1,
            initialized: Value::Null,
        };
        harness.initialized = harness
            .request("initialize", json!({"capabilities": capabilities}))
            .await;
        harness.notify("initialized", json!({})).await;
        harness
    }

    async fn call(&mut self, request: Request) -> Option<Response> {
        self.service
            .ready()
            .await
            .unwrap()
            .call(request)
            .await
            .unwrap()
    }

    async fn request(&mut self, method: &'static str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let response = self
            .call(Request::build(method).params(params).id(id).finish())
            .await
            .unwrap();
        let (_, result) = response.into_parts();
        result.unwrap_or_else(|err| panic!("{method} failed: {err:?}"))
    }

    async fn notify(&mut self, method: &'static str, params: Value) {
        assert!(
            self.call(Request::build(method).params(params).finish())
                .await
                .is_none()
        );
    }

    /// The params of the next server notification called `method`, answering
    /// any server request met on the way; `None` if none comes within `wait`.
    async fn next(&mut self, method: &str, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let message = tokio::time::timeout_at(deadline, self.from_server.next())
                .await
                .ok()??;
            if let Some(id) = message.id() {
                self.to_server
                    .send(Response::from_ok(id.clone(), Value::Null))
                    .await
                    .unwrap();
            }
            if message.method() == method {
                return Some(message.params().cloned().unwrap_or(Value::Null));
            }
        }
    }

    async fn open(&mut self, uri: &str, text: &str) {
        let document = json!({"uri": uri, "languageId": "python", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": document}))
            .await;
    }
}

const URI: &str = "untitled:model.py";
const WAIT: Duration = Duration::from_secs(10);

fn utf16_client() -> Value {
    json!({"textDocument": {"publishDiagnostics": {"relatedInformation": true}}})
}

#[tokio::test]
async fn a_panicking_analysis_costs_one_result_not_the_server() {
    let mut h = Harness::start(fake_analysis, utf16_client()).await;
    h.open(URI, "x = boom\n").await;
    // No diagnostics for the version that panicked...
    assert_eq!(
        h.next(
            "textDocument/publishDiagnostics",
            Duration::from_millis(500)
        )
        .await,
        None
    );
    let position = json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}});
    assert_eq!(h.request("textDocument/hover", position).await, Value::Null);
    // ...and the next version is analysed as usual.
    let change = json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": "x = 1\n"}]});
    h.notify("textDocument/didChange", change).await;
    let published = h
        .next("textDocument/publishDiagnostics", WAIT)
        .await
        .unwrap();
    assert_eq!(published["version"], 2);
    let hints = h
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": URI},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}),
        )
        .await;
    assert_eq!(hints[0]["label"], ": [8, 0]");
}

#[tokio::test]
async fn positions_after_an_emoji_in_utf16() {
    let mut h = Harness::start(fake_analysis, utf16_client()).await;
    h.open(URI, "s = \"🎉\"; x = a @ b\n").await;
    let published = h
        .next("textDocument/publishDiagnostics", WAIT)
        .await
        .unwrap();
    let diagnostic = &published["diagnostics"][0];
    // `@` is UTF-16 column 16: the emoji counts two.
    assert_eq!(
        diagnostic["range"],
        json!({"start": {"line": 0, "character": 16}, "end": {"line": 0, "character": 17}})
    );
    assert_eq!(diagnostic["code"], "matmul-shape");
    assert_eq!(
        diagnostic["relatedInformation"][0]["message"],
        "left operand"
    );
    assert_eq!(diagnostic["relatedInformation"][0]["location"]["uri"], URI);

    let hints = h
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": URI},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 40}}}),
        )
        .await;
    let positions: Vec<&Value> = hints
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["position"])
        .collect();
    assert_eq!(
        positions,
        [
            &json!({"line": 0, "character": 1}),
            &json!({"line": 0, "character": 11})
        ]
    );
    assert_eq!(hints[1]["tooltip"], "float32 on cpu, fake");

    let hover = h
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 10}}),
        )
        .await;
    assert_eq!(
        hover["range"],
        json!({"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 11}})
    );
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("x: Tensor[8, 0]"),
        "{hover}"
    );
}

#[tokio::test]
async fn related_notes_fold_into_the_message_without_client_support() {
    let mut h = Harness::start(fake_analysis, json!({})).await;
    h.open(URI, "x = 1\ny = x @ x\n").await;
    let published = h
        .next("textDocument/publishDiagnostics", WAIT)
        .await
        .unwrap();
    let diagnostic = &published["diagnostics"][0];
    assert!(
        diagnostic.get("relatedInformation").is_none(),
        "{diagnostic}"
    );
    assert_eq!(diagnostic["message"], "size mismatch\nline 1: left operand");
}

#[tokio::test]
async fn inlay_hints_only_in_the_requested_range() {
    let mut h = Harness::start(
        fake_analysis,
        json!({"general": {"positionEncodings": ["utf-8"]}}),
    )
    .await;
    h.open(URI, "a = 1\nb = 2\nc = 3\n").await;
    let hints = h
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": URI},
                   "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}}}),
        )
        .await;
    assert_eq!(hints.as_array().unwrap().len(), 1, "{hints}");
    assert_eq!(hints[0]["label"], ": [8, 1]");
    assert_eq!(hints[0]["kind"], 1);
    assert_eq!(hints[0]["paddingLeft"], false);
}

#[tokio::test]
async fn file_status_counts_unknown_shapes() {
    let mut h = Harness::start(fake_analysis, utf16_client()).await;
    assert_eq!(
        h.initialized["capabilities"]["experimental"]["fileStatusProvider"],
        true
    );
    h.open(
        URI,
        "x = 1
u1 = 2
y = x @ x
r2 = 3
",
    )
    .await;
    let status = h
        .request("shapels/fileStatus", json!({"textDocument": {"uri": URI}}))
        .await;
    assert_eq!(
        status,
        json!({
            "version": 1,
            "analyzed": true,
            "tensors": 4,
            "unknownShapes": 2,
            "unknown": [
                {"name": "u1", "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 2}}},
                {"name": "r2", "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 2}}}
            ],
            "errors": 1,
            "warnings": 0
        })
    );

    // A version whose analysis panicked is reported as not analysed.
    let change =
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": "boom\n"}]});
    h.notify("textDocument/didChange", change).await;
    let status = h
        .request("shapels/fileStatus", json!({"textDocument": {"uri": URI}}))
        .await;
    assert_eq!(status["version"], 2);
    assert_eq!(status["analyzed"], false);

    // A document that is not open has no status.
    let status = h
        .request(
            "shapels/fileStatus",
            json!({"textDocument": {"uri": "untitled:other.py"}}),
        )
        .await;
    assert_eq!(status, Value::Null);
}

static GATED_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static GATE_OPEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// [`fake_analysis`], counting its runs, and holding each run until the
/// test opens the gate (or 20 s pass), so that the worker is busy for as
/// long as the test needs, however slow the machine.
fn gated_analysis(
    source: &str,
    module: &Module,
    config: &Config,
    coverage: Coverage,
) -> FileAnalysis {
    use std::sync::atomic::Ordering;
    GATED_CALLS.fetch_add(1, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !GATE_OPEN.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    fake_analysis(source, module, config, coverage)
}

#[tokio::test]
async fn replaced_versions_are_not_analysed_and_their_requests_are_content_modified() {
    use std::sync::atomic::Ordering;
    let mut h = Harness::start(gated_analysis, utf16_client()).await;
    let change = |version: i32, text: &str| {
        json!({"textDocument": {"uri": URI, "version": version},
               "contentChanges": [{"text": text}]})
    };
    // Version 1 is analysed at once, keeping the document's worker busy.
    h.open(URI, "x = 1\n").await;
    // (Its publishing task runs, and sends the work, as soon as this yields.)
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.notify("textDocument/didChange", change(2, "x = 2\n"))
        .await;
    // A hover on version 2 queues its analysis behind version 1's...
    let position = json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}});
    let hover = h.service.ready().await.unwrap().call(
        Request::build("textDocument/hover")
            .params(position)
            .id(99)
            .finish(),
    );
    let hover = tokio::spawn(hover);
    // (The spawned hover runs as soon as this test yields.)
    tokio::time::sleep(Duration::from_millis(50)).await;
    // ...and version 3 arrives before it could start.
    h.notify("textDocument/didChange", change(3, "x = 3\n"))
        .await;
    GATE_OPEN.store(true, Ordering::SeqCst);
    let response = hover.await.unwrap().unwrap().unwrap();
    let (_, result) = response.into_parts();
    assert_eq!(result.unwrap_err().code.code(), -32801, "ContentModified");
    // Only the latest version is published; version 2 never ran.
    let published = h
        .next("textDocument/publishDiagnostics", WAIT)
        .await
        .unwrap();
    assert_eq!(published["version"], 3);
    assert_eq!(GATED_CALLS.load(Ordering::SeqCst), 2);
}
