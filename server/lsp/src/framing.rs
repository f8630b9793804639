//! The wire format of LSP on a byte stream: `Content-Length` framing, and
//! the check that a frame's body is a message the framework can decode.
//!
//! tower-lsp-server's own codec ends the session at the first frame it
//! cannot decode (its stream stops after a decoder error), stops at a third
//! header line, and waits for more bytes after an empty body. A client's one
//! bad message must cost that message only, so the server reads frames
//! itself ([`FrameReader`]) and hands the framework only bodies that decode
//! as its JSON-RPC messages; a complete frame that does not is answered
//! with a JSON-RPC error ([`Rejection`]) and reading goes on.
//!
//! Repairs are made where a message's meaning is plain: bytes that are not
//! UTF-8 and lone UTF-16 surrogate escapes (`"\ud83d"`, half an emoji as
//! JavaScript clients write it, which serde_json rejects) become U+FFFD, so
//! a document holding them is still opened rather than lost.
//!
//! Everything here is pure (bytes in, frames out), so that the fuzz target
//! and the property tests drive exactly what the server runs.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use tower_lsp_server::jsonrpc::{Request, Response};

/// A header block longer than this without its blank line is not a header.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Larger bodies are skipped unread and answered with an error: no editor
/// sends a message this large (documents over `guarded::MAX_SOURCE_BYTES`
/// are not analysed anyway), and buffering one would take the memory.
pub const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// JSON-RPC's "Parse error": the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "Invalid Request": JSON, but not a message.
pub const INVALID_REQUEST: i64 = -32600;

/// What one complete frame turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A body the framework decodes, repaired if it needed to be.
    Message(Vec<u8>),
    /// A frame that cannot be used, and the error to answer it with.
    Rejected(Rejection),
}

/// Why a frame was not handed on: the JSON-RPC error that answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub code: i64,
    pub message: String,
    /// The request's id when it could be read (a string or an integer),
    /// else `null`, as JSON-RPC asks.
    pub id: Value,
}

impl Rejection {
    fn parse_error(message: impl Into<String>) -> Rejection {
        Rejection {
            code: PARSE_ERROR,
            message: message.into(),
            id: Value::Null,
        }
    }

    /// The body of the error response.
    pub fn response_body(&self) -> Vec<u8> {
        let response = serde_json::json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        });
        response.to_string().into_bytes()
    }
}

/// `Content-Length: N\r\n\r\n` followed by `body`.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

/// Cuts a byte stream into frame bodies, without looking inside them.
///
/// Headers other than `Content-Length` are ignored (names compare without
/// case, lines may end in `\n` alone). A header block with no usable
/// length, or too long to be one, is reported once and skipped up to the
/// next `Content-Length`.
#[derive(Debug)]
pub struct FrameSplitter {
    /// The largest body read ([`MAX_BODY_BYTES`] but in tests).
    max_body: usize,
    buffer: Vec<u8>,
    /// Bytes at the front of `buffer` already consumed; dropped in bulk.
    start: usize,
    /// The length of the body being read, once its headers were.
    body: Option<usize>,
    /// Bytes of an oversized body still to be thrown away as they come.
    skip: usize,
    /// After bytes that were no frame: skipping up to the next
    /// `Content-Length`, the only way back into step with the sender.
    resyncing: bool,
}

/// One step of a [`FrameSplitter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    Body(Vec<u8>),
    /// Bytes that are not a frame, or a frame too large to read.
    Garbage(String),
}

impl Default for FrameSplitter {
    fn default() -> Self {
        FrameSplitter::with_max_body(MAX_BODY_BYTES)
    }
}

impl FrameSplitter {
    /// A splitter that skips bodies longer than `max_body` bytes.
    pub fn with_max_body(max_body: usize) -> Self {
        FrameSplitter {
            max_body,
            buffer: Vec::new(),
            start: 0,
            body: None,
            skip: 0,
            resyncing: false,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let skipped = self.skip.min(bytes.len());
        self.skip -= skipped;
        let bytes = &bytes[skipped..];
        if self.start > 0 && self.start >= self.buffer.len() / 2 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// Whether bytes of an unfinished frame are waiting for the rest.
    pub fn has_partial(&self) -> bool {
        (self.start < self.buffer.len() && !self.resyncing) || self.body.is_some() || self.skip > 0
    }

    /// The next complete body, or a report of bytes skipped; `None` when
    /// more input is needed.
    pub fn next_split(&mut self) -> Option<Split> {
        loop {
            let pending = &self.buffer[self.start..];
            if self.resyncing {
                match find_ignore_case(pending, b"content-length") {
                    Some(at) => {
                        self.start += at;
                        self.resyncing = false;
                        continue;
                    }
                    None => {
                        // A `Content-Lengt` at the very end may be completed
                        // by the next read: keep what could be its start.
                        let keep = partial_prefix_len(pending, b"content-length");
                        self.start += pending.len() - keep;
                        return None;
                    }
                }
            }
            if let Some(length) = self.body {
                if pending.len() < length {
                    return None;
                }
                let body = pending[..length].to_vec();
                self.start += length;
                self.body = None;
                return Some(Split::Body(body));
            }
            // Blank lines between frames carry nothing; some clients send
            // an extra line break after a body.
            let blank = pending
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
            if blank > 0 {
                self.start += blank;
                continue;
            }
            if pending.is_empty() {
                return None;
            }
            // A header block is short: a longer one is garbage, and is
            // not searched to its end.
            let Some((block, after)) =
                header_block(&pending[..pending.len().min(MAX_HEADER_BYTES)])
            else {
                if pending.len() >= MAX_HEADER_BYTES {
                    self.resync(1);
                    return Some(Split::Garbage(format!(
                        "no end of a header block in {MAX_HEADER_BYTES} bytes"
                    )));
                }
                return None;
            };
            match content_length(block) {
                Ok(length) if length > self.max_body => {
                    self.start += after;
                    let available = self.buffer.len() - self.start;
                    let dropped = available.min(length);
                    self.start += dropped;
                    self.skip = length - dropped;
                    return Some(Split::Garbage(format!(
                        "a message of {length} bytes, more than the {} read, skipped",
                        self.max_body
                    )));
                }
                Ok(length) => {
                    self.start += after;
                    self.body = Some(length);
                }
                Err(why) => {
                    self.resync(after);
                    return Some(Split::Garbage(why));
                }
            }
        }
    }

    /// Drops `count` bytes and looks for the next `Content-Length` from
    /// there on, in this read and the next ones.
    fn resync(&mut self, count: usize) {
        self.start += count;
        self.resyncing = true;
    }
}

/// The header block at the start of `bytes` (without its blank line) and
/// where the body begins, once the blank line has arrived.
fn header_block(bytes: &[u8]) -> Option<(&[u8], usize)> {
    let mut line_start = 0;
    while let Some(newline) = bytes[line_start..].iter().position(|&b| b == b'\n') {
        let line_end = line_start + newline;
        let line = &bytes[line_start..line_end];
        if line.is_empty() || line == b"\r" {
            return Some((&bytes[..line_start], line_end + 1));
        }
        line_start = line_end + 1;
    }
    None
}

/// The `Content-Length` of a header block; other headers are ignored.
fn content_length(block: &[u8]) -> Result<usize, String> {
    let mut length = None;
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        // A line that is no header at all is passed over like an unknown
        // header: the length, when there is one, still frames the body.
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.trim_ascii().eq_ignore_ascii_case(b"content-length") {
            let value = std::str::from_utf8(value.trim_ascii()).unwrap_or("");
            match value.parse::<usize>() {
                Ok(n) if value.bytes().all(|b| b.is_ascii_digit()) => length = Some(n),
                _ => return Err(format!("an invalid Content-Length ({:?})", quoted(line))),
            }
        }
    }
    length.ok_or_else(|| "a header block without Content-Length".to_string())
}

/// At most 80 bytes of `bytes`, as text, for a log line.
fn quoted(bytes: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
    if bytes.len() > 80 {
        text.push('…');
    }
    text
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

/// The length of the longest end of `bytes` that begins `needle`.
fn partial_prefix_len(bytes: &[u8], needle: &[u8]) -> usize {
    (1..needle.len().min(bytes.len() + 1))
        .rev()
        .find(|&n| bytes[bytes.len() - n..].eq_ignore_ascii_case(&needle[..n]))
        .unwrap_or(0)
}

/// Frames from a byte stream, each checked ([`check_body`]): what the
/// server reads from its client.
#[derive(Debug, Default)]
pub struct FrameReader {
    splitter: FrameSplitter,
}

impl FrameReader {
    /// A reader that skips bodies longer than `max_body` bytes.
    pub fn with_max_body(max_body: usize) -> Self {
        FrameReader {
            splitter: FrameSplitter::with_max_body(max_body),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.splitter.push(bytes);
    }

    /// Whether bytes of an unfinished frame are waiting for the rest.
    pub fn has_partial(&self) -> bool {
        self.splitter.has_partial()
    }

    /// The next complete frame; `None` when more input is needed.
    pub fn next_frame(&mut self) -> Option<Frame> {
        Some(match self.splitter.next_split()? {
            Split::Body(body) => match check_body(body) {
                Ok(body) => Frame::Message(body),
                Err(rejection) => Frame::Rejected(rejection),
            },
            Split::Garbage(why) => {
                Frame::Rejected(Rejection::parse_error(format!("Parse error: {why}")))
            }
        })
    }
}

/// tower-lsp-server's own message type (private to it), mirrored so that
/// a body is checked with exactly the decoding the framework will apply.
#[derive(Deserialize)]
#[serde(untagged)]
#[allow(dead_code, reason = "only whether it decodes matters")]
enum Message {
    Response(Response),
    Request(Request),
}

fn decodes(body: &[u8]) -> bool {
    std::str::from_utf8(body).is_ok_and(|text| serde_json::from_str::<Message>(text).is_ok())
}

/// `body` if the framework decodes it, else the body repaired (text that
/// is not UTF-8 and lone surrogate escapes replaced by U+FFFD) if that
/// decodes, else the error that answers it.
pub fn check_body(body: Vec<u8>) -> Result<Vec<u8>, Rejection> {
    if body.is_empty() {
        return Err(Rejection::parse_error("Parse error: an empty message"));
    }
    if decodes(&body) {
        return Ok(body);
    }
    let repaired = repair(&body);
    if let Cow::Owned(repaired) = &repaired
        && decodes(repaired)
    {
        tracing::warn!(
            "a message held text that is not valid UTF-8 or UTF-16 (a lone surrogate); \
             read with U+FFFD in its place"
        );
        return Ok(repaired.clone());
    }
    let value = match serde_json::from_slice::<Value>(&repaired) {
        Ok(value) => value,
        Err(err) => return Err(Rejection::parse_error(format!("Parse error: {err}"))),
    };
    let id = match value.get("id") {
        Some(id @ Value::String(_)) => id.clone(),
        Some(id @ Value::Number(n)) if n.is_i64() => id.clone(),
        _ => Value::Null,
    };
    let why = if value.is_array() {
        "batches are not part of LSP".to_string()
    } else if !value.is_object() {
        "not an object".to_string()
    } else if value.get("jsonrpc") != Some(&Value::from("2.0")) {
        "\"jsonrpc\" must be \"2.0\"".to_string()
    } else if value.get("id").is_some() && id.is_null() && value.get("id") != Some(&Value::Null) {
        "an id must be a string or an integer".to_string()
    } else {
        "not a request, notification or response".to_string()
    };
    Err(Rejection {
        code: INVALID_REQUEST,
        message: format!("Invalid Request: {why}"),
        id,
    })
}

/// `body` as UTF-8 with each invalid sequence replaced by U+FFFD, and each
/// `\uXXXX` escape of a lone surrogate replaced by `\uFFFD`. Borrowed when
/// nothing needed replacing.
pub fn repair(body: &[u8]) -> Cow<'_, [u8]> {
    let text = String::from_utf8_lossy(body);
    let bytes = text.as_bytes();
    let Some(first) = bytes.iter().position(|&b| b == b'\\') else {
        return into_bytes(text);
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = first;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        // An escape is two bytes, or six for `\uXXXX`; `\\` is one escape,
        // so the `u` after it starts no escape of its own.
        let Some(unit) = hex_escape(bytes, i) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        if is_high && hex_escape(bytes, i + 6).is_some_and(|u| (0xDC00..0xE000).contains(&u)) {
            i += 12;
            continue;
        }
        if is_high || is_low {
            let out = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
            out.extend_from_slice(&bytes[copied..i]);
            out.extend_from_slice(b"\\uFFFD");
            copied = i + 6;
        }
        i += 6;
    }
    match out {
        Some(mut out) => {
            out.extend_from_slice(&bytes[copied..]);
            Cow::Owned(out)
        }
        None => into_bytes(text),
    }
}

fn into_bytes(text: Cow<'_, str>) -> Cow<'_, [u8]> {
    match text {
        Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
        Cow::Owned(text) => Cow::Owned(text.into_bytes()),
    }
}

/// The code unit of a `\uXXXX` escape starting at `at`.
fn hex_escape(bytes: &[u8], at: usize) -> Option<u32> {
    let escape = bytes.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let digits = std::str::from_utf8(&escape[2..]).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Frame> {
        let mut reader = FrameReader::default();
        reader.push(input);
        std::iter::from_fn(|| reader.next_frame()).collect()
    }

    const EXIT: &str = r#"{"jsonrpc":"2.0","method":"exit"}"#;

    #[test]
    fn a_well_formed_frame_passes_unchanged() {
        assert_eq!(
            frames(&encode(EXIT.as_bytes())),
            vec![Frame::Message(EXIT.into())]
        );
    }

    #[test]
    fn unknown_headers_and_bare_newlines_are_accepted() {
        let input = format!(
            "X-Trace-Id: 1\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: {}\n\n{EXIT}",
            EXIT.len()
        );
        assert_eq!(frames(input.as_bytes()), vec![Frame::Message(EXIT.into())]);
    }

    #[test]
    fn an_empty_body_is_answered_and_the_next_frame_read() {
        let mut input = b"Content-Length: 0\r\n\r\n".to_vec();
        input.extend(encode(EXIT.as_bytes()));
        let got = frames(&input);
        assert!(
            matches!(&got[0], Frame::Rejected(r) if r.code == PARSE_ERROR),
            "{got:?}"
        );
        assert_eq!(got[1], Frame::Message(EXIT.into()));
    }

    #[test]
    fn lone_surrogates_and_bad_utf8_are_replaced() {
        let body = br#"{"jsonrpc":"2.0","method":"m","params":{"t":"a\ud83d b\ude00 \\ud83d \ud83d\ude00 "}}"#;
        let Frame::Message(out) = &frames(&encode(body))[0] else {
            panic!()
        };
        assert_eq!(
            std::str::from_utf8(out).unwrap(),
            r#"{"jsonrpc":"2.0","method":"m","params":{"t":"a\uFFFD b\uFFFD \\ud83d \ud83d\ude00 "}}"#
        );
        let mut body = br#"{"jsonrpc":"2.0","method":"m","params":{"t":"a"#.to_vec();
        body.extend(b"\xff\xfe\"}}");
        let Frame::Message(out) = &frames(&encode(&body))[0] else {
            panic!()
        };
        assert_eq!(
            std::str::from_utf8(out).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"t\":\"a\u{FFFD}\u{FFFD}\"}}"
        );
    }

    #[test]
    fn undecodable_bodies_get_the_right_error() {
        let cases: [(&str, i64, Value); 6] = [
            ("{not json", PARSE_ERROR, Value::Null),
            (
                r#"[{"jsonrpc":"2.0","method":"exit"}]"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"1.0","id":7,"method":"m"}"#,
                INVALID_REQUEST,
                Value::from(7),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
                INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":3}"#,
                INVALID_REQUEST,
                Value::from("a"),
            ),
            ("42", INVALID_REQUEST, Value::Null),
        ];
        for (body, code, id) in cases {
            let got = frames(&encode(body.as_bytes()));
            match &got[..] {
                [Frame::Rejected(r)] => {
                    assert_eq!((r.code, &r.id), (code, &id), "{body}: {r:?}");
                    let response: Value = serde_json::from_slice(&r.response_body()).unwrap();
                    assert_eq!(response["error"]["code"], code);
                }
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    #[test]
    fn garbage_is_skipped_up_to_the_next_frame() {
        let mut input = b"hello\r\n\r\nsome body".to_vec();
        input.extend(encode(EXIT.as_bytes()));
        let got = frames(&input);
        assert!(
            matches!(&got[0], Frame::Rejected(r) if r.code == PARSE_ERROR),
            "{got:?}"
        );
        assert_eq!(got[1], Frame::Message(EXIT.into()));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn frames_split_anywhere_come_out_whole() {
        let mut input = encode(EXIT.as_bytes());
        input.extend(b"Content-Length: 3\r\n\r\n{}}");
        input.extend(encode(EXIT.as_bytes()));
        let whole = frames(&input);
        for cut in 0..input.len() {
            let mut reader = FrameReader::default();
            reader.push(&input[..cut]);
            let mut got: Vec<Frame> = std::iter::from_fn(|| reader.next_frame()).collect();
            reader.push(&input[cut..]);
            got.extend(std::iter::from_fn(|| reader.next_frame()));
            assert_eq!(got, whole, "cut at {cut}");
            assert!(!reader.has_partial());
        }
    }

    #[test]
    fn an_oversized_body_is_skipped_as_it_arrives() {
        let mut reader = FrameReader::with_max_body(100);
        reader.push(b"Content-Length: 101\r\n\r\nabc");
        assert!(matches!(reader.next_frame(), Some(Frame::Rejected(_))));
        assert_eq!(reader.next_frame(), None);
        let mut rest = vec![b'x'; 98];
        rest.extend(encode(EXIT.as_bytes()));
        reader.push(&rest);
        assert_eq!(reader.next_frame(), Some(Frame::Message(EXIT.into())));
    }
}
