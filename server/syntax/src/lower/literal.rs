//! The values of number and string literals.
//!
//! tree-sitter only tells where a literal is; Python's own rules for digits,
//! underscores, prefixes and escapes are applied here.

use crate::ast::ExprKind;

/// The value of an `integer` token: decimal, hex, octal or binary, with
/// underscores. Values that overflow an `i64` become `Float` (the analysis
/// only needs their magnitude). The grammar also calls imaginary literals
/// (`10j`) `integer`; they are read as Python reads them, as a float's digits.
pub(crate) fn integer(text: &str) -> ExprKind {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    let lower = digits.to_ascii_lowercase();
    if lower.ends_with('j') {
        return float(text);
    }
    // A trailing `l` is Python 2's long suffix; the value is the same.
    let lower = lower.trim_end_matches('l');
    let (radix, body) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, lower),
    };
    if body.is_empty() {
        return ExprKind::Unknown;
    }
    match i64::from_str_radix(body, radix) {
        Ok(value) => ExprKind::Int(value),
        // Decimal digits round best through the float parser.
        Err(_) if radix == 10 => body.parse().map_or(ExprKind::Unknown, ExprKind::Float),
        Err(_) => {
            // The digits were valid for the grammar, so the failure is an
            // overflow; fold them into a float instead.
            let mut value = 0.0f64;
            for c in body.chars() {
                match c.to_digit(radix) {
                    Some(d) => value = value * f64::from(radix) + f64::from(d),
                    None => return ExprKind::Unknown,
                }
            }
            ExprKind::Float(value)
        }
    }
}

/// The value of a `float` token (`1.5`, `1e-5`, `1_000.0`, `.5`), or of an
/// imaginary one (`1.5j`, `10J`: Python allows leading zeros there, as in
/// `010j`, since the digits are a float's).
pub(crate) fn float(text: &str) -> ExprKind {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    if let Some(imaginary) = digits.strip_suffix(['j', 'J']) {
        return match imaginary.parse::<f64>() {
            Ok(value) => ExprKind::Imaginary(value),
            Err(_) => ExprKind::Unknown,
        };
    }
    match digits.parse::<f64>() {
        Ok(value) => ExprKind::Float(value),
        Err(_) => ExprKind::Unknown,
    }
}

/// What a string prefix (`f`, `rb`, `R`, ...) says about the literal.
#[derive(Debug, Clone, Copy)]
pub(super) struct Prefix {
    pub raw: bool,
    /// f-strings and template strings: their value is not known statically.
    pub interpolated: bool,
    /// A template string (`t"..."`), whose value is not a `str`.
    pub template: bool,
}

/// Reads the prefix letters of a `string_start` token such as `rb"""`.
pub(super) fn prefix(start_token: &str) -> Prefix {
    let letters = start_token
        .trim_end_matches(['"', '\''])
        .to_ascii_lowercase();
    Prefix {
        raw: letters.contains('r'),
        interpolated: letters.contains('f') || letters.contains('t'),
        template: letters.contains('t'),
    }
}

/// Applies Python's backslash escapes to the body of a non-raw string.
///
/// Unknown escapes are kept as written, as Python does; `\N{name}` is kept
/// as written too, since resolving Unicode names is not worth a table here.
pub(super) fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&next) = chars.peek() else {
            out.push('\\');
            break;
        };
        let simple = match next {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            _ => None,
        };
        if let Some(value) = simple {
            chars.next();
            out.push(value);
            continue;
        }
        match next {
            // A backslash at the end of a line continues the string.
            '\n' => {
                chars.next();
            }
            '\r' => {
                chars.next();
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            '0'..='7' => {
                let mut value = 0u32;
                for _ in 0..3 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let width = match next {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.clone().skip(1).take(width).collect();
                match u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == width)
                {
                    Some(code) => {
                        for _ in 0..=width {
                            chars.next();
                        }
                        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                    }
                    None => out.push('\\'),
                }
            }
            _ => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(text: &str) -> String {
        format!("{:?}", integer(text))
    }

    #[test]
    fn integers() {
        assert_eq!(int("0"), "Int(0)");
        assert_eq!(int("1_000"), "Int(1000)");
        assert_eq!(int("0xFF"), "Int(255)");
        assert_eq!(int("0x_ff"), "Int(255)");
        assert_eq!(int("0o17"), "Int(15)");
        assert_eq!(int("0B101"), "Int(5)");
        assert_eq!(int("10L"), "Int(10)");
        assert_eq!(int("10j"), "Imaginary(10.0)");
        assert_eq!(int("0_10J"), "Imaginary(10.0)");
        assert_eq!(int("99999999999999999999"), "Float(1e20)");
        assert_eq!(
            int("0x1_0000_0000_0000_0000"),
            "Float(1.8446744073709552e19)"
        );
        assert_eq!(int("9223372036854775807"), "Int(9223372036854775807)");
    }

    #[test]
    fn floats() {
        assert_eq!(format!("{:?}", float("1e-5")), "Float(1e-5)");
        assert_eq!(format!("{:?}", float("1.")), "Float(1.0)");
        assert_eq!(format!("{:?}", float(".5")), "Float(0.5)");
        assert_eq!(format!("{:?}", float("1_0.2_5")), "Float(10.25)");
        assert_eq!(format!("{:?}", float("2.5j")), "Imaginary(2.5)");
        assert_eq!(format!("{:?}", float("1e-3J")), "Imaginary(0.001)");
    }

    #[test]
    fn escapes() {
        assert_eq!(
            unescape(r"a\nb\tc\\d\'\x41\u00e9\U0001F600\101\q\N{DASH}"),
            "a\nb\tc\\d'Aé😀A\\q\\N{DASH}"
        );
        assert_eq!(unescape("a\\\nb"), "ab");
        assert_eq!(unescape(r"\x4"), "\\x4");
        assert_eq!(unescape("end\\"), "end\\");
    }

    #[test]
    fn prefixes() {
        assert!(prefix("rb'").raw);
        assert!(prefix("F\"\"\"").interpolated);
        assert!(!prefix("\"").raw);
        assert!(prefix("t'").interpolated);
    }
}
