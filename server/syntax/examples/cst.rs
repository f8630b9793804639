//! Prints tree-sitter's concrete tree of a Python file with field names, for working on the lowering.

use std::io::Read;

fn main() {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).unwrap();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();
    let tree = parser.parse(&text, None).unwrap();
    let mut cursor = tree.walk();
    let mut depth = 0;
    loop {
        let node = cursor.node();
        let field = cursor
            .field_name()
            .map(|f| format!("{f}: "))
            .unwrap_or_default();
        let marks = format!(
            "{}{}",
            if node.is_missing() { " MISSING" } else { "" },
            if node.is_error() { " ERR" } else { "" }
        );
        let leaf = if node.child_count() == 0 {
            format!(" {:?}", &text[node.byte_range()])
        } else {
            String::new()
        };
        eprintln!(
            "{}{}{}{} {:?}{}",
            "  ".repeat(depth),
            field,
            if node.is_named() {
                node.kind().to_string()
            } else {
                format!("'{}'", node.kind())
            },
            marks,
            node.byte_range(),
            leaf
        );
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}
