//! Random byte streams through the server's framing layer
//! (`shapels_lsp::framing`, what the server reads its client with): no
//! panic, the same frames however the stream is cut into reads, every
//! message handed on decodes as the framework's JSON-RPC message, and good
//! frames among bad ones all come through, in order.
//!
//! A bounded run that belongs in the normal test suite; `fuzz/` explores the
//! same ground (target `framing`) without a bound.

use proptest::prelude::*;
use serde_json::Value;
use shapels_lsp::framing::{Frame, FrameReader, encode};
use tower_lsp_server::jsonrpc::{Request, Response};

/// Feeds `bytes` in reads ending at `cuts` and collects the frames.
fn read_all(bytes: &[u8], cuts: &[usize]) -> Vec<Frame> {
    let mut reader = FrameReader::default();
    let mut frames = Vec::new();
    let mut from = 0;
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.push(bytes.len());
    for cut in cuts {
        reader.push(&bytes[from..cut]);
        from = cut;
        frames.extend(std::iter::from_fn(|| reader.next_frame()));
    }
    frames
}

fn decodes_as_jsonrpc(body: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(body) else {
        return false;
    };
    serde_json::from_str::<Request>(text).is_ok() || serde_json::from_str::<Response>(text).is_ok()
}

/// Messages a client sends, and bodies that are no message.
fn good_body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","id":"a","result":null}"#.to_vec()),
        "[a-z é🎉\\\\\"]{0,20}".prop_map(|text| {
            serde_json::json!({"jsonrpc": "2.0", "method": "m", "params": {"text": text}})
                .to_string()
                .into_bytes()
        }),
    ]
}

fn bad_body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        Just(b"{".to_vec()),
        Just(br#"[{"jsonrpc":"2.0","method":"exit"}]"#.to_vec()),
        Just(br#"{"jsonrpc":"1.0","method":"exit"}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#.to_vec()),
        proptest::collection::vec(any::<u8>(), 0..40),
    ]
}

/// A frame with random extra headers, in random case, before or after
/// the length.
fn framed(body: Vec<u8>, extra: Vec<(String, bool)>, lowercase: bool) -> Vec<u8> {
    let length = if lowercase {
        "content-length"
    } else {
        "Content-Length"
    };
    let mut headers = Vec::new();
    for (header, before) in &extra {
        if *before {
            headers.push(format!("X-{header}: 1\r\n"));
        }
    }
    headers.push(format!("{length}: {}\r\n", body.len()));
    for (header, before) in &extra {
        if !*before {
            headers.push(format!("X-{header}: 2\r\n"));
        }
    }
    let mut out = headers.concat().into_bytes();
    out.extend(b"\r\n");
    out.extend(body);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any bytes at all, cut anywhere.
    #[test]
    fn random_bytes_never_break_the_reader(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let whole = read_all(&bytes, &[]);
        prop_assert_eq!(&read_all(&bytes, &cuts), &whole);
        for frame in &whole {
            if let Frame::Message(body) = frame {
                prop_assert!(decodes_as_jsonrpc(body), "{:?}", String::from_utf8_lossy(body));
            }
        }
    }

    /// Random bytes with frame-like pieces mixed in, to reach deeper.
    #[test]
    fn frame_like_noise_never_breaks_the_reader(
        pieces in proptest::collection::vec(prop_oneof![
            Just(b"Content-Length: ".to_vec()),
            Just(b"content-length:3".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n\r\n".to_vec()),
            Just(b"{}".to_vec()),
            Just(br#"{"jsonrpc":"2.0","method":"x"}"#.to_vec()),
            Just(br#"\ud83d"#.to_vec()),
            "[0-9]{1,3}".prop_map(String::into_bytes),
            proptest::collection::vec(any::<u8>(), 0..8),
        ], 0..40),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let bytes = pieces.concat();
        let whole = read_all(&bytes, &[]);
        prop_assert_eq!(&read_all(&bytes, &cuts), &whole);
        for frame in &whole {
            if let Frame::Message(body) = frame {
                prop_assert!(decodes_as_jsonrpc(body), "{:?}", String::from_utf8_lossy(body));
            }
        }
    }

    /// Complete frames, good and bad, each with odd headers: every frame
    /// gives exactly one result, good ones unchanged and in order.
    #[test]
    fn every_complete_frame_gets_one_answer(
        frames in proptest::collection::vec(
            (
                prop_oneof![good_body().prop_map(|b| (b, true)), bad_body().prop_map(|b| (b, false))],
                proptest::collection::vec(("[A-Za-z-]{1,12}", any::<bool>()), 0..3),
                any::<bool>(),
            ),
            0..12,
        ),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut bytes = Vec::new();
        let mut expected = Vec::new();
        for ((body, good), extra, lowercase) in frames {
            if good {
                expected.push(Some(body.clone()));
            } else {
                expected.push(None);
            }
            bytes.extend(framed(body, extra, lowercase));
        }
        let got = read_all(&bytes, &cuts);
        prop_assert_eq!(got.len(), expected.len(), "{:?}", got);
        for (frame, expected) in got.iter().zip(&expected) {
            match (frame, expected) {
                (Frame::Message(body), Some(sent)) => prop_assert_eq!(body, sent),
                // A bad body may be one that only needed repairing.
                (Frame::Message(body), None) => prop_assert!(decodes_as_jsonrpc(body)),
                (Frame::Rejected(rejection), None) => {
                    let reply: Value = serde_json::from_slice(&rejection.response_body()).unwrap();
                    prop_assert!(decodes_as_jsonrpc(&rejection.response_body()), "{}", reply);
                }
                (Frame::Rejected(rejection), Some(sent)) => {
                    prop_assert!(false, "{:?} rejected: {:?}", String::from_utf8_lossy(sent), rejection);
                }
            }
        }
    }

    /// Garbage without a header in it, ended by a blank line, costs one
    /// rejection or none; the frames after it all come through.
    #[test]
    fn the_reader_finds_its_way_back_after_garbage(
        garbage in proptest::collection::vec(any::<u8>().prop_filter("no header", |b| *b != b':'), 1..200),
        good in proptest::collection::vec(good_body(), 1..4),
    ) {
        let mut bytes = garbage;
        bytes.extend(b"\r\n\r\n");
        for body in &good {
            bytes.extend(encode(body));
        }
        let got = read_all(&bytes, &[]);
        let messages: Vec<&Vec<u8>> = got
            .iter()
            .filter_map(|f| match f {
                Frame::Message(body) => Some(body),
                Frame::Rejected(_) => None,
            })
            .collect();
        prop_assert_eq!(messages, good.iter().collect::<Vec<_>>());
    }
}

#[test]
fn a_stream_of_frames_in_one_read_is_read_whole() {
    let mut bytes = b"Content-Length: 0\r\n\r\n".to_vec();
    bytes.extend(encode(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#));
    let got = read_all(&bytes, &[]);
    assert!(matches!(got[0], Frame::Rejected(_)));
    assert!(matches!(&got[1], Frame::Message(_)));
}
