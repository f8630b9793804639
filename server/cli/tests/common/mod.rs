//! A minimal LSP client for driving the real `shapels lsp` binary over stdio.
//!
//! Messages are framed by hand (`Content-Length`) so that the tests check
//! the bytes a real editor would see. Every wait has a deadline: a server
//! that hangs fails its test instead of hanging the suite. The server's
//! stderr is kept and printed when a test fails, to show what it logged.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the harness"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any single wait may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(20);

pub fn shapels() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shapels"))
}

pub struct Server {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    messages: Receiver<Value>,
    /// Messages read while waiting for something else, in arrival order.
    backlog: Vec<Value>,
    next_id: i64,
    stderr: Arc<Mutex<String>>,
    /// The answer to `workspace/configuration`, one value per item asked.
    pub configuration: Arc<Mutex<Value>>,
}

fn write_message(stdin: &Mutex<ChildStdin>, message: &Value) {
    let body = serde_json::to_string(message).unwrap();
    let mut stdin = stdin.lock().unwrap();
    // A server that already exited closes the pipe; the test notices that
    // through its own expectations, not here.
    let _ = write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len());
    let _ = stdin.flush();
}

/// Reads one framed message, or `None` at the end of the stream.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .expect("a numeric Content-Length"),
            );
        }
    }
    let mut body = vec![0; length.expect("a Content-Length header")];
    reader.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).expect("a JSON body"))
}

impl Server {
    pub fn start() -> Server {
        Server::start_in(None)
    }

    /// Starts `shapels lsp`, in `dir` when given.
    pub fn start_in(dir: Option<&Path>) -> Server {
        Server::start_program(Path::new(env!("CARGO_BIN_EXE_shapels")), dir)
    }

    /// Starts `lsp` of another shapels binary than this build's (the one
    /// the PyPI wheel installed), in `dir` when given.
    pub fn start_program(program: &Path, dir: Option<&Path>) -> Server {
        let mut command = Command::new(program);
        command
            .args(["lsp", "--log-level", "debug"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().expect("spawn shapels lsp");
        let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
        let configuration = Arc::new(Mutex::new(Value::Null));

        let stderr = Arc::new(Mutex::new(String::new()));
        let mut child_stderr = BufReader::new(child.stderr.take().unwrap());
        let log = stderr.clone();
        thread::spawn(move || {
            let mut line = String::new();
            while child_stderr.read_line(&mut line).unwrap_or(0) > 0 {
                log.lock().unwrap().push_str(&line);
                line.clear();
            }
        });

        // The reader answers the server's own requests at once, as an
        // editor would, so that the server never waits on the test.
        let (tx, messages) = mpsc::channel();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let writer = stdin.clone();
        let config = configuration.clone();
        thread::spawn(move || {
            while let Some(message) = read_message(&mut stdout) {
                if let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) {
                    let result = match method {
                        "workspace/configuration" => {
                            let items = message["params"]["items"].as_array().map_or(0, Vec::len);
                            Value::Array(vec![config.lock().unwrap().clone(); items])
                        }
                        _ => Value::Null,
                    };
                    write_message(
                        &writer,
                        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    );
                }
                if tx.send(message).is_err() {
                    break;
                }
            }
        });

        Server {
            child,
            stdin,
            messages,
            backlog: Vec::new(),
            next_id: 1,
            stderr,
            configuration,
        }
    }

    /// Writes `bytes` to the server as they are, framing included.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let mut stdin = self.stdin.lock().unwrap();
        let _ = stdin.write_all(bytes);
        let _ = stdin.flush();
    }

    /// The next id for a request the test frames itself.
    pub fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id - 1
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        write_message(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        );
    }

    /// Sends a request and returns its response (the whole message).
    pub fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        write_message(&self.stdin, &message);
        self.wait_for(&format!("the response to {method}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// Sends a request and returns its result, failing the test on an error.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.request_raw(method, params);
        if let Some(error) = response.get("error") {
            self.fail(&format!("{method} failed: {error}"));
        }
        response["result"].clone()
    }

    /// The first message (already received or still to come) matching `pred`,
    /// which is taken out of the stream.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if pred(&message) => return message,
                Ok(message) => self.backlog.push(message),
                Err(RecvTimeoutError::Timeout) => {
                    self.fail(&format!("timed out waiting for {what}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.fail(&format!("the server closed stdout before {what}"))
                }
            }
        }
    }

    /// Every message that arrives within `window`, without waiting longer.
    pub fn drain(&mut self, window: Duration) -> Vec<Value> {
        let deadline = Instant::now() + window;
        let mut out = std::mem::take(&mut self.backlog);
        while let Ok(message) = self
            .messages
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            out.push(message);
        }
        out
    }

    /// The next `textDocument/publishDiagnostics` for `uri`.
    pub fn diagnostics(&mut self, uri: &str) -> Value {
        let message = self.wait_for(&format!("diagnostics for {uri}"), |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        });
        message["params"].clone()
    }

    /// `initialize` with the given client capabilities, then `initialized`.
    pub fn initialize(&mut self, capabilities: Value, initialization_options: Value) -> Value {
        let result = self.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": null,
                "workspaceFolders": null,
                "clientInfo": {"name": "shapels-tests"},
                "capabilities": capabilities,
                "initializationOptions": initialization_options,
                "trace": "off",
                "locale": "en",
            }),
        );
        self.notify("initialized", json!({}));
        result
    }

    pub fn open(&mut self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}}),
        );
    }

    /// One incremental change replacing `range` ([line, col, line, col]) with `text`.
    pub fn change(&mut self, uri: &str, version: i32, range: [u32; 4], text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{
                    "range": {"start": {"line": range[0], "character": range[1]},
                              "end": {"line": range[2], "character": range[3]}},
                    "text": text,
                }],
            }),
        );
    }

    pub fn inlay_hints(&mut self, uri: &str) -> Vec<Value> {
        let result = self.request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10000, "character": 0}}}),
        );
        result.as_array().cloned().unwrap_or_default()
    }

    pub fn hover(&mut self, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
    }

    /// `shutdown` then `exit`, keeping stdin open as editors do; returns
    /// how the process ended.
    pub fn shutdown_and_exit(&mut self) -> ExitStatus {
        let result = self.request("shutdown", Value::Null);
        assert_eq!(result, Value::Null);
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Waits for the process to end on its own; stdin is not closed.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                self.fail("the server did not exit while its stdin stayed open");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server process's id, to read its memory from `/proc`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until the server has logged a line containing `needle`.
    pub fn wait_for_log(&mut self, needle: &str) {
        let deadline = Instant::now() + TIMEOUT;
        while !self.stderr().contains(needle) {
            if Instant::now() > deadline {
                self.fail(&format!("the server never logged {needle:?}"));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether a message matching `pred` has arrived and is still unread.
    pub fn has_arrived(&mut self, pred: impl Fn(&Value) -> bool) -> bool {
        while let Ok(message) = self.messages.try_recv() {
            self.backlog.push(message);
        }
        self.backlog.iter().any(pred)
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Fails the test; `Drop` then shows what the server logged.
    fn fail(&mut self, message: &str) -> ! {
        panic!("{message}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if thread::panicking() {
            eprintln!("--- server stderr ---\n{}", self.stderr());
        }
    }
}

/// Client capabilities of a modern editor; `utf8` adds UTF-8 to the offered encodings.
pub fn capabilities(utf8: bool) -> Value {
    let encodings = if utf8 {
        json!(["utf-8", "utf-16"])
    } else {
        json!(["utf-16"])
    };
    json!({
        "general": {"positionEncodings": encodings},
        "textDocument": {
            "publishDiagnostics": {"relatedInformation": true, "versionSupport": true},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "inlayHint": {"dynamicRegistration": false},
        },
        "workspace": {"configuration": false},
    })
}
