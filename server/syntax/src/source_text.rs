//! Bytes of a Python file as the text the parser takes: UTF-8 without its
//! byte order mark, or where the encoding breaks.

/// Where bytes stop being UTF-8: the 1-based line and the byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8 {
    pub line: usize,
    pub offset: usize,
}

/// `bytes` as text, without a leading byte order mark.
pub fn source_text(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    match String::from_utf8(bytes) {
        Ok(mut source) => {
            if source.starts_with('\u{feff}') {
                source.drain(..'\u{feff}'.len_utf8());
            }
            Ok(source)
        }
        Err(err) => {
            let offset = err.utf8_error().valid_up_to();
            let line = err.as_bytes()[..offset]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            Err(NotUtf8 { line, offset })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_dropped_and_bad_bytes_located() {
        assert_eq!(
            source_text(b"\xef\xbb\xbfx = 1\n".to_vec()).unwrap(),
            "x = 1\n"
        );
        assert_eq!(
            source_text(b"a = 1\nb = '\xff'\n".to_vec()),
            Err(NotUtf8 {
                line: 2,
                offset: 11
            })
        );
    }
}
