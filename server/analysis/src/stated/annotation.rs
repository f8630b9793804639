//! Shapes stated in type annotations: jaxtyping, torchtyping, `Annotated`, Pyrefly.
//!
//! - jaxtyping: `Float[Tensor, "b t d"]`, `Int[torch.Tensor, "*batch n"]`,
//!   with `...`, `#`, `_`, fixed sizes and expressions (`"dim+1"`, `"b (h d)"`).
//! - torchtyping: `TensorType["batch", "channels"]`, `TensorType[..., 3, float]`.
//! - `Annotated[Tensor, "B T C"]` and TorchShapeFlow's
//!   `Annotated[Tensor, Shape("B", "T", 768)]`.
//! - Pyrefly's shape generics: `Tensor[[B, T, 768]]`, whose names are the
//!   function's or class's type parameters (`def forward[B: IntVar](...)`).
//!
//! The annotation is read from its source text: the syntax layer keeps
//! annotations as expressions, but a string's contents (the jaxtyping spec)
//! are what matters here.

use super::{DTypeClass, StatedDim, StatedShape, parse_dim, split_top};
use crate::value::DType;

/// The shape an annotation states, if it states one.
pub(crate) fn read(annotation: &str) -> Option<StatedShape> {
    let a = annotation.trim();
    // A whole annotation in quotes (`x: "Float[Tensor, 'b n']"`) is the
    // same annotation, deferred.
    let a = unquote(a).unwrap_or(a);
    // `Optional[Float[Tensor, "b n"]]` and `Float[Tensor, "b n"] | None`
    // state the shape of the tensor when there is one.
    if let Some(inner) = strip_call(a, &["Optional", "typing.Optional"]) {
        return read(inner);
    }
    if let Some((left, right)) = a.split_once(" | ") {
        return match (left.trim(), right.trim()) {
            (t, "None") | ("None", t) => read(t),
            _ => None,
        };
    }
    let open = a.find('[')?;
    let head = a[..open].trim();
    let inner = a[open + 1..].strip_suffix(']')?;
    let last = head.rsplit('.').next().unwrap_or(head);
    if let Some(dtype) = jaxtyping_dtype(last) {
        return jaxtyping(inner, dtype);
    }
    match last {
        "TensorType" => torchtyping(inner),
        "Annotated" => annotated(inner),
        "Tensor" => pyrefly(inner),
        _ => None,
    }
}

/// The dtype class of a jaxtyping array-type constructor (`Float`),
/// `Some(None)` for those that admit any dtype (`Shaped`), `None` when the
/// name is not one of them.
fn jaxtyping_dtype(name: &str) -> Option<Option<DTypeClass>> {
    Some(match name {
        "Shaped" | "Num" | "Real" | "Key" => None,
        "Bool" => Some(DTypeClass::Bool),
        "Float" | "Inexact" => Some(DTypeClass::Float),
        "Float16" => Some(DTypeClass::Exact(DType::Float16)),
        "Float32" => Some(DTypeClass::Exact(DType::Float32)),
        "Float64" => Some(DTypeClass::Exact(DType::Float64)),
        "BFloat16" => Some(DTypeClass::Exact(DType::BFloat16)),
        "Complex" => Some(DTypeClass::Complex),
        "Complex64" => Some(DTypeClass::Exact(DType::Complex64)),
        "Complex128" => Some(DTypeClass::Exact(DType::Complex128)),
        "Integer" => Some(DTypeClass::Integer),
        "Int" => Some(DTypeClass::SignedInteger),
        "Int8" => Some(DTypeClass::Exact(DType::Int8)),
        "Int16" => Some(DTypeClass::Exact(DType::Int16)),
        "Int32" => Some(DTypeClass::Exact(DType::Int32)),
        "Int64" => Some(DTypeClass::Exact(DType::Int64)),
        "UInt" => Some(DTypeClass::UnsignedInteger),
        "UInt8" => Some(DTypeClass::Exact(DType::UInt8)),
        "UInt16" => Some(DTypeClass::Exact(DType::UInt16)),
        "UInt32" => Some(DTypeClass::Exact(DType::UInt32)),
        "UInt64" => Some(DTypeClass::Exact(DType::UInt64)),
        _ => return None,
    })
}

/// `Tensor, "b t d"` of `Float[Tensor, "b t d"]`.
fn jaxtyping(inner: &str, dtype: Option<DTypeClass>) -> Option<StatedShape> {
    let parts = split_top(inner, ',');
    let [array, spec] = parts.as_slice() else {
        return None;
    };
    // Only arrays: a quoted name elsewhere (`Union[torch.Tensor,
    // "BlockMask"]`) is a type, not a shape.
    if !(array.contains("Tensor") || array.contains("Array")) {
        return None;
    }
    let mut shape = jaxtyping_spec(unquote(spec.trim())?)?;
    shape.dtype = dtype;
    Some(shape)
}

/// A jaxtyping dims string: `"*batch t (h d) #c _ dim+1"`.
pub(crate) fn jaxtyping_spec(spec: &str) -> Option<StatedShape> {
    let mut dims = Vec::new();
    let mut many_broadcasts = false;
    for token in split_words(spec)? {
        many_broadcasts |= token.starts_with("*#") || token.starts_with("#*");
        dims.push(jaxtyping_dim(token)?);
    }
    let shape = StatedShape {
        many_broadcasts,
        ..StatedShape::new(dims)
    };
    shape.valid().then_some(shape)
}

/// Words separated by spaces, a parenthesised group being one word.
fn split_words(spec: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start: Option<usize> = None;
    for (i, c) in spec.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
        if c.is_whitespace() && depth == 0 {
            if let Some(s) = start.take() {
                out.push(&spec[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if depth != 0 {
        return None;
    }
    if let Some(s) = start {
        out.push(&spec[s..]);
    }
    Some(out)
}

fn jaxtyping_dim(token: &str) -> Option<StatedDim> {
    if token == "..." {
        return Some(StatedDim::Many(None));
    }
    if let Some(name) = token
        .strip_prefix("#*")
        .or_else(|| token.strip_prefix("*#"))
        .or_else(|| token.strip_prefix('*'))
    {
        let name = name.trim_start_matches(['_', '?']);
        return Some(StatedDim::Many(
            (!name.is_empty()).then(|| name.to_string()),
        ));
    }
    if let Some(rest) = token.strip_prefix('#') {
        return Some(StatedDim::Broadcast(Box::new(jaxtyping_dim(rest)?)));
    }
    if token == "_" {
        return Some(StatedDim::Anonymous(None));
    }
    if let Some(name) = token.strip_prefix('_') {
        // `_name` is documented but not checked.
        return Some(StatedDim::Anonymous(Some(name.to_string())));
    }
    // `?name` may differ between calls; within one call it is one size.
    let token = token.strip_prefix('?').unwrap_or(token);
    // `name=expr` documents the expression under a name: the expression is the size.
    let token = token.split_once('=').map_or(token, |(_, e)| e);
    parse_dim(token)
}

/// `"batch", "channels"` of `TensorType["batch", "channels"]`.
fn torchtyping(inner: &str) -> Option<StatedShape> {
    let mut dims = Vec::new();
    let mut dtype = None;
    for item in split_top(inner, ',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if item == "..." {
            dims.push(StatedDim::Many(None));
        } else if let Some(name) = unquote(item) {
            // `"batch": 10` names a fixed size.
            dims.push(StatedDim::Name(name.trim().to_string()));
        } else if let Some((name, size)) = item.split_once(':') {
            let size = size.trim().parse::<i64>().ok()?;
            let _ = unquote(name.trim())?;
            dims.push(StatedDim::Size(size));
        } else if let Ok(n) = item.parse::<i64>() {
            dims.push(if n < 0 {
                StatedDim::Anonymous(None)
            } else {
                StatedDim::Size(n)
            });
        } else if let Some(d) = torch_dtype(item) {
            dtype = Some(d);
        } else if matches!(item, "is_named" | "float" | "int" | "bool") {
            dtype = match item {
                "float" => Some(DTypeClass::Float),
                "int" => Some(DTypeClass::Integer),
                "bool" => Some(DTypeClass::Bool),
                _ => dtype,
            };
        } else {
            return None;
        }
    }
    let shape = StatedShape {
        dims,
        dtype,
        many_broadcasts: false,
    };
    shape.valid().then_some(shape)
}

/// `torch.float32`, `torch.long` as a dtype class.
fn torch_dtype(text: &str) -> Option<DTypeClass> {
    let name = text.strip_prefix("torch.")?;
    DType::from_attr(name).map(DTypeClass::Exact)
}

/// `Tensor, "B T C"` or `Tensor, Shape("B", "T", 768)` of `Annotated[...]`.
fn annotated(inner: &str) -> Option<StatedShape> {
    let parts = split_top(inner, ',');
    let (array, metadata) = parts.split_first()?;
    if !array.contains("Tensor") {
        return None;
    }
    for meta in metadata {
        let meta = meta.trim();
        if let Some(spec) = unquote(meta) {
            // `"B T C"`, or `"B, T, C"` as some write it.
            return jaxtyping_spec(&spec.replace(',', " "));
        }
        if let Some(args) = strip_call_paren(meta, "Shape") {
            let mut dims = Vec::new();
            for arg in split_top(args, ',') {
                let arg = arg.trim();
                if arg.is_empty() {
                    continue;
                }
                dims.push(match unquote(arg) {
                    Some(spec) => jaxtyping_dim(spec.trim())?,
                    None if arg == "..." => StatedDim::Many(None),
                    None => parse_dim(arg)?,
                });
            }
            let shape = StatedShape::new(dims);
            return shape.valid().then_some(shape);
        }
    }
    None
}

/// `[B, T, 768]` of Pyrefly's `Tensor[[B, T, 768]]`.
fn pyrefly(inner: &str) -> Option<StatedShape> {
    let list = inner.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut dims = Vec::new();
    for item in split_top(list, ',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        dims.push(match item {
            "..." => StatedDim::Many(None),
            _ if item.starts_with('*') => StatedDim::Many(Some(item[1..].trim().to_string())),
            _ => parse_dim(item)?,
        });
    }
    let shape = StatedShape::new(dims);
    shape.valid().then_some(shape)
}

/// The contents of a string literal in single or double quotes.
pub(crate) fn unquote(text: &str) -> Option<&str> {
    let text = text.trim();
    ['"', '\''].into_iter().find_map(|q| {
        let inner = text.strip_prefix(q)?.strip_suffix(q)?;
        (!inner.contains(q)).then_some(inner)
    })
}

/// The inside of `Name[...]` for one of `names`.
fn strip_call<'a>(text: &'a str, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|name| {
        text.strip_prefix(name)?
            .trim_start()
            .strip_prefix('[')?
            .strip_suffix(']')
    })
}

/// The arguments of `Name(...)` (also `module.Name(...)`).
fn strip_call_paren<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let open = text.find('(')?;
    let head = text[..open].trim();
    (head.rsplit('.').next() == Some(name)).then_some(())?;
    text[open + 1..].strip_suffix(')')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(a: &str) -> Option<String> {
        read(a).map(|s| s.to_string())
    }

    #[test]
    fn jaxtyping_forms() {
        assert_eq!(
            shown(r#"Float[Tensor, "b t d"]"#).as_deref(),
            Some("[b, t, d]")
        );
        assert_eq!(
            shown(r#"jaxtyping.Int[torch.Tensor, "*batch n"]"#).as_deref(),
            Some("[*batch, n]")
        );
        assert_eq!(
            shown(r#"Shaped[Tensor, "... #c _ 3 dim+1 (h d)"]"#).as_deref(),
            Some("[..., #c, _, 3, dim + 1, h*d]")
        );
        assert_eq!(shown(r#"Float[Tensor, ""]"#).as_deref(), Some("[]"));
        assert_eq!(
            read(r#"Float[Tensor, "b"]"#).unwrap().dtype,
            Some(DTypeClass::Float)
        );
        assert_eq!(
            shown(r#"Optional[Float[Tensor, "b n"]]"#).as_deref(),
            Some("[b, n]")
        );
        assert_eq!(
            shown(r#"Float[Tensor, "b n"] | None"#).as_deref(),
            Some("[b, n]")
        );
        assert_eq!(shown(r#"Union[torch.Tensor, "BlockMask"]"#), None);
        assert_eq!(shown(r#"Float[Tensor, "*a *b"]"#), None);
        assert_eq!(shown("torch.Tensor"), None);
    }

    #[test]
    fn torchtyping_annotated_and_pyrefly() {
        assert_eq!(
            shown(r#"TensorType["batch", "channels"]"#).as_deref(),
            Some("[batch, channels]")
        );
        assert_eq!(
            shown(r#"TensorType[..., 3, float]"#).as_deref(),
            Some("[..., 3]")
        );
        assert_eq!(
            read(r#"TensorType["b", torch.long]"#).unwrap().dtype,
            Some(DTypeClass::Exact(DType::Int64))
        );
        assert_eq!(
            shown(r#"Annotated[Tensor, "B T C"]"#).as_deref(),
            Some("[B, T, C]")
        );
        assert_eq!(
            shown(r#"typing.Annotated[torch.Tensor, Shape("B", "T", 768)]"#).as_deref(),
            Some("[B, T, 768]")
        );
        assert_eq!(shown(r#"Annotated[int, "count"]"#), None);
        assert_eq!(shown("Tensor[[B, T, 768]]").as_deref(), Some("[B, T, 768]"));
        assert_eq!(shown("torch.Tensor[[B, 2*T]]").as_deref(), Some("[B, 2*T]"));
        assert_eq!(shown("Tensor[int]"), None);
    }
}
