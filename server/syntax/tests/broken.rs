//! Broken, half-typed and hostile input: lowering recovers what it can,
//! reports syntax errors, and never panics or overflows the stack.

mod common;

use common::{dedent, lowered};
use shapels_syntax::parse;

#[track_caller]
fn check(source: &str, expected: &str) {
    let actual = lowered(&dedent(source));
    let expected = dedent(expected);
    assert_eq!(
        actual, expected,
        "\n--- actual ---\n{actual}--- expected ---\n{expected}"
    );
}

fn errors(source: &str) -> Vec<(String, String)> {
    let file = parse(source);
    file.syntax_errors
        .iter()
        .map(|(range, message)| (source[*range].to_string(), message.clone()))
        .collect()
}

#[test]
fn half_typed_call_keeps_the_assignment_target() {
    check("import torch\nx = torch.randn(8,\n", "import torch\nx = ?");
}

#[test]
fn half_typed_lines() {
    check("x = self.\n", "x = ?");
    check("y = x @ \nz = 1\n", "y = ?");
    check("w = [1, 2\nv = 3\n", "w = ?");
    check("def f(\n\nz = 1\n", "<other>");
    check("foo(1\n", "<other>");
    check("f(a b)\n", "f(a, ?)");
    check("x = {1: }\n", "x = {1, ?}");
    // tree-sitter lets an attribute continue on the next line, so the
    // dangling `self.` takes the next name.
    check("self.\ny = 2\n", "self.y = 2");
}

#[test]
fn a_broken_line_inside_a_function_is_recovered_into_its_body() {
    check(
        "
        def f(x):
            y = (x
            return y

        def g(a):
            return a
        ",
        "
        def f(x):
          y = ?
        def g(a):
          return a
        ",
    );
    check(
        "
        class A:
            def f(self):
                self.
        def g():
            pass
        ",
        "
        class A():
          def f(self):
            <other>
        def g():
          pass
        ",
    );
}

#[test]
fn a_file_that_is_one_error_still_lowers() {
    // Here the root node itself is the ERROR.
    check(
        "
        x = torch.randn(8,

        def f(a):
            return a
        ",
        "
        x = ?
        ",
    );
}

#[test]
fn syntax_error_messages() {
    assert_eq!(errors("x = 1\n"), []);
    assert_eq!(
        errors("x = torch.randn(8,\n"),
        [("x = torch.randn(8,".to_string(), "syntax error".to_string())]
    );
    assert_eq!(
        errors("x = [i for i in]\n"),
        [(String::new(), "missing identifier".to_string())]
    );
    assert_eq!(
        errors("class A(nn.Module:\n    pass\n"),
        [(String::new(), "missing `)`".to_string())]
    );
    let file = parse("x = [i for i in]\n");
    assert_eq!(file.syntax_errors[0].0, 15..15);
    // Nested errors are reported once, and never overlap.
    let ranges: Vec<_> = parse("a = (\n\nb = 1\nc = )\n")
        .syntax_errors
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert!(
        ranges.windows(2).all(|w| w[0].end <= w[1].start),
        "errors overlap: {ranges:?}"
    );
}

/// Runs `f` on a thread with the default 2 MiB stack of spawned threads,
/// as the language server's worker threads have.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    on_small_stack(|| {
        let n = 5000;
        let nested = |open: &str, inner: &str, close: &str| {
            format!("x = {}{inner}{}\n", open.repeat(n), close.repeat(n))
        };
        let mut sources = vec![
            nested("(", "1", ")"),
            nested("[", "1", "]"),
            nested("{1: ", "1", "}"),
            nested("f(", "1", ")"),
            nested("x[", "1", "]"),
            nested("-", "1", ""),
            nested("not ", "1", ""),
            nested("lambda: ", "1", ""),
            nested("await ", "1", ""),
            nested("1 if 2 else ", "3", ""),
            nested("[", "1", " for x in y]"),
            nested("(y := ", "1", ")"),
            format!("x = a{}\n", ".b".repeat(n)),
            format!("x = a{}\n", "()".repeat(n)),
            format!("x = 1{}\n", " + 1".repeat(n)),
            format!("x = 1{}\n", " ** 1".repeat(n)),
            format!("x = a{}\n", " and a".repeat(n)),
            format!("x = a{}\n", " < a".repeat(n)),
            format!("x = {}\n", "'s' ".repeat(n)),
            format!("{}1\n", "a = ".repeat(n)),
            format!("if a:\n    pass\n{}", "elif b:\n    pass\n".repeat(n)),
            format!("x = {}\n", "(".repeat(n)),
            format!("x = {}\n", ")".repeat(n)),
            format!("{}\n", "[(".repeat(n)),
        ];
        // Indentation grows quadratically with depth; 1000 nested blocks
        // are already far beyond the depth limit.
        let mut blocks = String::new();
        for depth in 0..1000 {
            blocks.push_str(&" ".repeat(depth));
            blocks.push_str(if depth % 2 == 0 {
                "if x:\n"
            } else {
                "for x in y:\n"
            });
        }
        blocks.push_str(&" ".repeat(1000));
        blocks.push_str("pass\n");
        sources.push(blocks);
        for source in &sources {
            let file = parse(source);
            // Rendering and dropping walk the whole lowered tree too.
            let rendered = common::render(&file.module);
            assert!(!rendered.is_empty());
            let _ = format!("{:?}", file.module);
            drop(file);
        }
    });
}

#[test]
fn lowering_stops_at_the_depth_limit() {
    let depth = shapels_syntax::MAX_DEPTH;
    let shallow = format!(
        "x = {}1{}\n",
        "[".repeat(depth - 10),
        "]".repeat(depth - 10)
    );
    assert!(!lowered(&shallow).contains('?'));
    let deep = format!(
        "x = {}1{}\n",
        "[".repeat(depth + 10),
        "]".repeat(depth + 10)
    );
    assert!(lowered(&deep).contains('?'));
}

#[test]
fn arbitrary_bytes_as_text_never_panic() {
    let pieces = [
        "(", ")", "[", "]", "{", "}", ":", "\n", "    ", "def", "x", "=", "'", "\"\"\"", "\\",
        "\0", "é", "\r", "#", ",", "*", "**", "@", "lambda", "yield", "async", "f'{", "}'", "if",
        "else", "elif", "try", "except*", ".", "import", "from", "as", "with", "1e", "0x",
    ];
    let mut state = 0x2545_f491_u64;
    for _ in 0..3000 {
        let mut source = String::new();
        for _ in 0..(state % 40) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            source.push_str(pieces[(state % pieces.len() as u64) as usize]);
            source.push(' ');
        }
        let file = parse(&source);
        let _ = common::render(&file.module);
        for (range, _) in &file.syntax_errors {
            assert!(range.start <= range.end && range.end <= source.len());
        }
    }
}
