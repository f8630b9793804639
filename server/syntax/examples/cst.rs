//! Prints tree-sitter's concrete tree of a Python file, with field names,
//! byte ranges and the text of leaves: the reference to read when working on
//! the lowering.
//!
//! `cargo run -p shapels-syntax --example cst < file.py`

use std::io::{Read, Write};

fn main() -> std::io::Result<()> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    let file = shapels_syntax::parse(&text);
    let Some(tree) = file.tree else {
        return Ok(());
    };
    let mut out = std::io::stdout().lock();
    let mut cursor = tree.walk();
    let mut depth = 0;
    loop {
        let node = cursor.node();
        let field = cursor
            .field_name()
            .map(|f| format!("{f}: "))
            .unwrap_or_default();
        let kind = if node.is_named() {
            node.kind().to_string()
        } else {
            format!("'{}'", node.kind())
        };
        let mark = if node.is_missing() { " MISSING" } else { "" };
        let leaf = if node.child_count() == 0 {
            format!(" {:?}", text.get(node.byte_range()).unwrap_or(""))
        } else {
            String::new()
        };
        writeln!(
            out,
            "{}{field}{kind}{mark} {:?}{leaf}",
            "  ".repeat(depth),
            node.byte_range()
        )?;
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return Ok(());
            }
            depth -= 1;
        }
    }
}
