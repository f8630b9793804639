//! Python strings the analysis can spell out: `str(value)` of known values,
//! `str.format`, `join` and the simple transformations, as Python makes them.
//!
//! Names built this way key layers (`cnn.add_module("conv{0}".format(i),
//! ...)`, `setattr(self, f"block{i}", ...)`), so a name that is known keeps
//! them apart; anything the analysis cannot spell is `Value::Text`.

use crate::value::Value;

use super::Kwargs;

/// What `str(value)` (or `{}` in a format) gives for a value whose text is
/// known: strings, whole numbers, booleans and `None`.
pub(crate) fn plain_text(value: &Value) -> Option<String> {
    match value {
        Value::Str(s) => Some(s.to_string()),
        Value::Int(d) => d.as_const().map(|n| n.to_string()),
        Value::Bool(Some(b)) => Some(if *b { "True" } else { "False" }.to_string()),
        Value::None => Some("None".to_string()),
        _ => None,
    }
}

/// A method of a string whose text is known; `Value::Text` when the result
/// is a string the analysis cannot spell out.
pub(crate) fn string_method(text: &str, name: &str, args: &[Value], kwargs: &Kwargs) -> Value {
    let spelled = match name {
        "format" => format(text, args, kwargs),
        "join" => args.first().and_then(|items| {
            let items = match items {
                Value::List(l) => l.borrow().clone(),
                Value::Tuple(t) => t.as_ref().clone(),
                _ => return None,
            };
            let parts: Option<Vec<String>> = items
                .iter()
                .map(|v| match v {
                    Value::Str(s) => Some(s.to_string()),
                    _ => None,
                })
                .collect();
            parts.map(|p| p.join(text))
        }),
        "upper" if args.is_empty() => Some(text.to_uppercase()),
        "lower" if args.is_empty() => Some(text.to_lowercase()),
        "strip" if args.is_empty() => Some(text.trim().to_string()),
        "replace" => match (args.first(), args.get(1), args.get(2)) {
            (Some(Value::Str(old)), Some(Value::Str(new)), None) if !old.is_empty() => {
                Some(text.replace(&**old, new))
            }
            _ => None,
        },
        _ => None,
    };
    match spelled {
        Some(s) => Value::Str(s.into()),
        None => Value::Text,
    }
}

/// `template.format(*args, **kwargs)` with plain fields (`{}`, `{0}`,
/// `{name}`); a field with a conversion or a format spec, or a value
/// without known text, leaves the result unknown.
fn format(template: &str, args: &[Value], kwargs: &Kwargs) -> Option<String> {
    let mut out = String::new();
    let mut next_auto = 0usize;
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut field = String::new();
                loop {
                    match chars.next()? {
                        '}' => break,
                        c => field.push(c),
                    }
                }
                if field.contains([':', '!', '[', '.']) {
                    return None;
                }
                let value = if field.is_empty() {
                    next_auto += 1;
                    args.get(next_auto - 1)?
                } else if let Ok(i) = field.parse::<usize>() {
                    args.get(i)?
                } else {
                    &kwargs.iter().find(|(k, _)| **k == *field)?.1
                };
                out.push_str(&plain_text(value)?);
            }
            // A lone `}` is an error in Python.
            '}' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// `text.index(part)` and its relatives, counted in characters as Python
/// counts: `find` and `rfind` give -1 for text that is not there, `index`
/// and `rindex` raise (`None`), `count` counts places that do not overlap.
pub(crate) fn position(text: &str, part: &str, name: &str) -> Option<i64> {
    let chars = |byte: usize| text[..byte].chars().count() as i64;
    match name {
        "count" if part.is_empty() => Some(text.chars().count() as i64 + 1),
        "count" => Some(text.matches(part).count() as i64),
        "find" => Some(text.find(part).map_or(-1, chars)),
        "rfind" => Some(text.rfind(part).map_or(-1, chars)),
        "index" => text.find(part).map(chars),
        "rindex" => text.rfind(part).map(chars),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    fn text(v: Value) -> Option<String> {
        match v {
            Value::Str(s) => Some(s.to_string()),
            _ => None,
        }
    }

    #[test]
    fn format_spells_plain_fields_as_python_does() {
        let args = [Value::int(3), Value::Str(Rc::from("a"))];
        let kwargs = vec![(Rc::from("n"), Value::Bool(Some(true)))];
        let f = |t: &str| text(string_method(t, "format", &args, &kwargs));
        assert_eq!(f("conv{0}_{1}").as_deref(), Some("conv3_a"));
        assert_eq!(f("{}{}-{n}").as_deref(), Some("3a-True"));
        assert_eq!(f("{{x}}{}").as_deref(), Some("{x}3"));
        // A spec, a conversion, a missing argument or a lone brace: unknown.
        assert_eq!(f("{:03d}"), None);
        assert_eq!(f("{0!r}"), None);
        assert_eq!(f("{2}"), None);
        assert_eq!(f("a}b"), None);
        assert_eq!(f("{"), None);
    }

    #[test]
    fn join_and_case_of_known_text() {
        let parts = Value::list(vec![Value::Str(Rc::from("a")), Value::Str(Rc::from("b"))]);
        let join = string_method(".", "join", &[parts], &Vec::new());
        assert_eq!(text(join).as_deref(), Some("a.b"));
        let upper = string_method("x1", "upper", &[], &Vec::new());
        assert_eq!(text(upper).as_deref(), Some("X1"));
        let unknown = Value::list(vec![Value::Text]);
        assert!(matches!(
            string_method(".", "join", &[unknown], &Vec::new()),
            Value::Text
        ));
    }

    #[test]
    fn places_in_text_are_counted_in_characters() {
        assert_eq!(position("xy", "y", "index"), Some(1));
        assert_eq!(position("ééx", "x", "find"), Some(2));
        assert_eq!(position("xy", "z", "find"), Some(-1));
        assert_eq!(position("xy", "z", "index"), None);
        assert_eq!(position("abab", "b", "rindex"), Some(3));
        assert_eq!(position("aaaa", "aa", "count"), Some(2));
        assert_eq!(position("ab", "", "count"), Some(3));
    }
}
