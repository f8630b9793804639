//! Arbitrary bytes through the server's framing layer (`shapels_lsp::framing`,
//! what `shapels lsp` reads its client with), cut into reads where the first
//! byte says: nothing may panic, the frames may not depend on where the
//! reads end, and every message handed on must check as itself (so the
//! framework, which decodes what the check accepts, gets it unchanged).

#![no_main]

use libfuzzer_sys::fuzz_target;
use shapels_lsp::framing::{Frame, FrameReader, check_body};

fn frames(data: &[u8], step: usize) -> Vec<Frame> {
    let mut reader = FrameReader::default();
    let mut out = Vec::new();
    for chunk in data.chunks(step.max(1)) {
        reader.push(chunk);
        out.extend(std::iter::from_fn(|| reader.next_frame()));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&step, data)) = data.split_first() else {
        return;
    };
    let whole = frames(data, data.len());
    assert_eq!(frames(data, usize::from(step)), whole);
    for frame in whole {
        match frame {
            Frame::Message(body) => assert_eq!(check_body(body.clone()), Ok(body)),
            Frame::Rejected(rejection) => {
                assert!(check_body(rejection.response_body()).is_ok());
            }
        }
    }
});
