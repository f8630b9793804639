//! Lowering of each Python construct into the `ast`, checked on a
//! Python-like rendering (see `common/mod.rs`), plus byte ranges.

mod common;

use common::{dedent, lowered};
use shapels_syntax::ast::{ExprKind, ParamKind, StmtKind};
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

#[test]
fn assignments() {
    check(
        "
        a = b = c
        x: int = 3
        y: torch.Tensor
        c, d = [e, *f] = g
        (h, i), j = k
        self.w[0] = 1
        x += 1
        x @= w
        x //= 2
        ",
        "
        a = b = c
        x: int = 3
        y: torch.Tensor
        (c, d) = [e, *f] = g
        ((h, i), j) = k
        self.w[0] = 1
        x += 1
        x @= w
        x //= 2
        ",
    );
}

#[test]
fn assignment_values() {
    check(
        "
        a = 1, 2
        b = yield x
        c = d += 1
        ",
        "
        a = (1, 2)
        b = (yield x)
        c = ?
        ",
    );
}

#[test]
fn function_definitions() {
    check(
        "
        @torch.no_grad()
        @staticmethod
        def f(a, b: int, c=1, d: float = 2.0, /, e=3, *args, g, h: int, **kw) -> Tensor:
            return a
        async def g(x, *, y, z=1, **kw):
            await x
        def h(*args: int, **kw: str): pass
        ",
        "
        @torch.no_grad()
        @staticmethod
        def f(a, b: int, c=1, d: float=2.0, /, e=3, *args, g, h: int, **kw) -> Tensor:
          return a
        async def g(x, *, y, z=1, **kw):
          (await x)
        def h(*args: int, **kw: str):
          pass
        ",
    );
    let file = parse("def f(a, /, b, *, c): pass\n");
    let StmtKind::FunctionDef(def) = &file.module.body[0].kind else {
        panic!()
    };
    let kinds: Vec<ParamKind> = def.params.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ParamKind::Normal { pos_only: true },
            ParamKind::Normal { pos_only: false },
            ParamKind::KwOnly
        ]
    );
}

#[test]
fn decorated_definition_ranges() {
    let source = "@dec\ndef f():\n    pass\n";
    let file = parse(source);
    let stmt = &file.module.body[0];
    let StmtKind::FunctionDef(def) = &stmt.kind else {
        panic!()
    };
    assert_eq!(&source[stmt.range], "@dec\ndef f():\n    pass");
    assert_eq!(&source[def.range], "def f():\n    pass");
    assert_eq!(&source[def.name.range], "f");
}

#[test]
fn classes() {
    check(
        "
        @dataclass
        class A(nn.Module, Generic[T], metaclass=Meta):
            x: int = 3
            def forward(self, x):
                return self.fc(x)
        class B:
            pass
        ",
        "
        @dataclass
        class A(nn.Module, Generic[T], metaclass=Meta):
          x: int = 3
          def forward(self, x):
            return self.fc(x)
        class B():
          pass
        ",
    );
}

#[test]
fn if_elif_else() {
    check(
        "
        if a:
            x = 1
        elif b:
            x = 2
        elif c:
            pass
        else:
            x = 3
        if d:
            pass
        ",
        "
        if a:
          x = 1
        else:
          if b:
            x = 2
          else:
            if c:
              pass
            else:
              x = 3
        if d:
          pass
        ",
    );
}

#[test]
fn elif_ranges_run_to_the_end_of_the_chain() {
    let source = "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n";
    let file = parse(source);
    let StmtKind::If { orelse, .. } = &file.module.body[0].kind else {
        panic!()
    };
    assert_eq!(
        &source[orelse[0].range],
        "elif b:\n    pass\nelse:\n    pass"
    );
}

#[test]
fn loops() {
    check(
        "
        for i, (a, b) in enumerate(pairs):
            continue
        else:
            pass
        async for x in y, z:
            break
        while n > 0:
            n -= 1
        else:
            done()
        ",
        "
        for (i, (a, b)) in enumerate(pairs):
          continue
        else:
          pass
        for x in (y, z):
          break
        while (n > 0):
          n -= 1
        else:
          done()
        ",
    );
}

#[test]
fn with_statements() {
    check(
        "
        with FakeTensorMode() as mode, torch.no_grad():
            pass
        with (open(a) as f, open(b) as (g, h)):
            pass
        async with lock:
            pass
        ",
        "
        with FakeTensorMode() as mode, torch.no_grad():
          pass
        with open(a) as f, open(b) as (g, h):
          pass
        with lock:
          pass
        ",
    );
}

#[test]
fn try_statements() {
    check(
        "
        try:
            a()
        except ValueError as e:
            raise
        except* (TypeError, KeyError):
            pass
        except:
            raise X from e
        else:
            b()
        finally:
            c()
        ",
        "
        try:
          a()
        except ValueError as e:
          raise
        except (TypeError, KeyError):
          pass
        except:
          raise X
        else:
          b()
        finally:
          c()
        ",
    );
}

#[test]
fn imports() {
    check(
        "
        import torch
        import torch.nn as nn, numpy as np
        from torch import nn, Tensor as T
        from . import sibling
        from ..pkg.mod import (a as b, c,)
        from x import *
        from __future__ import annotations
        import torch . nn
        ",
        "
        import torch
        import torch.nn as nn, numpy as np
        from torch import nn, Tensor as T
        from . import sibling
        from ..pkg.mod import a as b, c
        from x import *
        from __future__ import annotations
        import torch.nn
        ",
    );
}

#[test]
fn simple_statements() {
    check(
        "
        assert x.shape[0] == 8, 'bad'
        assert y
        del a, b[0]
        del c
        global g, h
        nonlocal n
        return
        return 1, 2
        pass; break
        continue
        match x:
            case 1:
                pass
        type Alias = int
        print >> f, x
        ",
        "
        assert (x.shape[0] == 8), \"bad\"
        assert y
        del a, b[0]
        del c
        global g, h
        global n
        return
        return (1, 2)
        pass
        break
        continue
        <other>
        <other>
        <other>
        ",
    );
}

#[test]
fn numbers() {
    check(
        "
        0x_FF, 0o17, 0b101, 1_000, 99999999999999999999
        1e-5, 1.5, .5, 1_0.0, 3j, 2.5j
        ",
        "
        (255, 15, 5, 1000, 1e20)
        (1e-5, 1.5, 0.5, 10.0, 3.0j, 2.5j)
        ",
    );
}

#[test]
fn strings() {
    check(
        r#"
        "a\n" 'b'
        r"\d+" b'x\x41'
        f"{x}" "y"
        """doc"""
        "π\u00e9"
        'unterminated
        "#,
        r#"
        "a\nb"
        "\\d+xA"
        f"{x}y"
        "doc"
        "πé"
        <other>
        unterminated
        "#,
    );
}

/// An f-string keeps its text and the values it formats; a value with a
/// conversion, a format spec or `=` is marked as not plain (`!?` here); a
/// template string is not a string.
#[test]
fn fstrings() {
    check(
        r#"
        f"stage{i + 1}"
        f"a{{b}}\t{c!r}{d:>3}{e=}"
        F'{x}' rf"\d{n}"
        t"{x}"
        "#,
        r#"
        f"stage{(i + 1)}"
        f"a{b}\t{c!?}{d!?}{e!?}"
        f"{x}\\d{n}"
        ?
        "#,
    );
}

#[test]
fn attributes_subscripts_slices() {
    check(
        "
        x.a.b
        x[0]
        x[1:2, ::3, ..., None]
        x[:, -1]
        x[a:]
        x[::]
        x[i,]
        ",
        "
        x.a.b
        x[0]
        x[1:2, ::3, ..., None]
        x[:, (-1)]
        x[a:]
        x[:]
        x[i]
        ",
    );
}

#[test]
fn calls() {
    check(
        "
        f()
        f(1, *a, k=v, **kw)
        sum(x for x in y)
        f(a)(b).c(d=1,)
        f(1, (*a), # comment
          2)
        ",
        "
        f()
        f(1, *a, k=v, **kw)
        sum((x for x in y))
        f(a)(b).c(d=1)
        f(1, *a, 2)
        ",
    );
}

#[test]
fn operators() {
    check(
        "
        a @ b + c * d ** -e
        a // b % c / d << 1 >> 2 & f | g ^ h
        -x, +x, ~x, not x
        a and b and c or d
        a and (b and c)
        a < b <= c == d != e > f >= g
        a in b not in c is d is not e
        a if b else c
        ",
        "
        ((a @ b) + (c * (d ** (-e))))
        (((((((a // b) % c) / d) << 1) >> 2) & f) | (g ^ h))
        ((-x), (+x), (~x), (not x))
        ((a and b and c) or d)
        (a and (b and c))
        (a < b <= c == d != e > f >= g)
        (a in b not in c is d is not e)
        (a if b else c)
        ",
    );
}

#[test]
fn collections_and_comprehensions() {
    check(
        "
        (), (1,), [1, *a], {1, 2}, {}, {'k': 1, **m}
        [x * 2 for x in xs if x if y for z in x]
        {x for x in xs}
        (x for x in xs)
        {k: v for k, v in d.items() if v}
        [y async for y in a, b]
        ",
        "
        ((), (1,), [1, *a], {1, 2}, {}, {\"k\": 1, **m})
        [(x * 2) for x in xs if x if y for z in x]
        {x for x in xs}
        (x for x in xs)
        {k: v for (k, v) in d.items() if v}
        [y for y in (a, b)]
        ",
    );
}

/// A function whose own body yields is a generator; one whose nested
/// function yields is not.
#[test]
fn generators() {
    check(
        "
        def batches(n):
            while True:
                yield x, y
        def pieces(t):
            yield from t.split(2)
            yield
        def outer():
            def inner():
                yield 1
            return inner
        ",
        "
        def batches(n):  # generator
          while True:
            (yield (x, y))
        def pieces(t):  # generator
          (yield from t.split(2))
          (yield)
        def outer():
          def inner():  # generator
            (yield 1)
          return inner
        ",
    );
}

#[test]
fn other_expressions() {
    check(
        "
        lambda: 0
        lambda x, *a, k=1, **kw: x
        await f()
        (y := 3)
        f(*a, **b)
        print(*args, sep='')
        yield x
        True, False, None, ...
        ",
        "
        (lambda : 0)
        (lambda x, *a, k=1, **kw: x)
        (await f())
        (y := 3)
        f(*a, **b)
        print(*args, sep=\"\")
        (yield x)
        (True, False, None, ...)
        ",
    );
}

/// The value an assignment statement assigns.
#[track_caller]
fn assigned_value(stmt: &shapels_syntax::ast::Stmt) -> &shapels_syntax::ast::Expr {
    match &stmt.kind {
        StmtKind::Assign {
            value: Some(value), ..
        } => value,
        other => panic!("not an assignment with a value: {other:?}"),
    }
}

#[test]
fn parentheses_are_unwrapped_to_the_inner_range() {
    let source = "y = ( x @ w )\n";
    let file = parse(source);
    let value = assigned_value(&file.module.body[0]);
    assert!(matches!(value.kind, ExprKind::BinOp { .. }));
    assert_eq!(&source[value.range], "x @ w");
}

/// tree-sitter-python reads `*x.shape` in a tuple without brackets as
/// `(*x).shape`; the lowering gives it Python's reading, `*(x.shape)`.
#[test]
fn a_star_in_a_bare_tuple_takes_the_whole_chain() {
    check(
        "
        b, c, d = *x.shape, x.device
        e = *x.shape[1:], f(x).y, 1
        g = *h(x).shape, 1
        for i in *x.shape, 1: pass
        j = (*x.shape, 1)
        ",
        "
        (b, c, d) = (*x.shape, x.device)
        e = (*x.shape[1:], f(x).y, 1)
        g = (*h(x).shape, 1)
        for i in (*x.shape, 1):
          pass
        j = (*x.shape, 1)
        ",
    );
    let source = "b, d = *x.shape[1:], 1\n";
    let file = parse(source);
    let ExprKind::Tuple(items) = &assigned_value(&file.module.body[0]).kind else {
        panic!()
    };
    assert_eq!(&source[items[0].range], "*x.shape[1:]");
    let ExprKind::Starred(inner) = &items[0].kind else {
        panic!("{:?}", items[0].kind)
    };
    assert_eq!(&source[inner.range], "x.shape[1:]");
    let ExprKind::Subscript { value: shape, .. } = &inner.kind else {
        panic!()
    };
    assert_eq!(&source[shape.range], "x.shape");
}

/// In a display of one starred call (`[*default(h, [])]`) and in a call's
/// arguments, tree-sitter-python reads the star as the callee's,
/// `(*default)(h, [])`; the lowering stars the call, as Python does.
#[test]
fn a_star_before_a_call_stars_the_call() {
    check(
        "
        a = [*default(h, [])]
        b = (*f(x, y),)
        c = {*f([1])}
        g(*f(x, []))
        d = [*f(x), 1]
        ",
        "
        a = [*default(h, [])]
        b = (*f(x, y),)
        c = {*f([1])}
        g(*f(x, []))
        d = [*f(x), 1]
        ",
    );
    let source = "a = [*default(h, [])]\n";
    let file = parse(source);
    let ExprKind::List(items) = &assigned_value(&file.module.body[0]).kind else {
        panic!()
    };
    let ExprKind::Starred(inner) = &items[0].kind else {
        panic!("{:?}", items[0].kind)
    };
    assert_eq!(&source[inner.range], "default(h, [])");
    let ExprKind::Call { func, .. } = &inner.kind else {
        panic!("{:?}", inner.kind)
    };
    assert_eq!(&source[func.range], "default");
}

#[test]
fn ranges_are_bytes_in_non_ascii_source() {
    let source = "größe = \"日本語\"  # ü\nx = größe\n";
    let file = parse(source);
    let StmtKind::Assign {
        targets,
        value: Some(value),
        ..
    } = &file.module.body[0].kind
    else {
        panic!()
    };
    assert_eq!(&source[targets[0].range], "größe");
    assert_eq!(targets[0].range, 0..7);
    assert!(matches!(&value.kind, ExprKind::Str(s) if s == "日本語"));
    let StmtKind::Assign {
        value: Some(value), ..
    } = &file.module.body[1].kind
    else {
        panic!()
    };
    assert!(matches!(&value.kind, ExprKind::Name(n) if n == "größe"));
    assert_eq!(&source[value.range], "größe");
    assert!(file.syntax_errors.is_empty());
}

#[test]
fn comments_are_skipped_everywhere() {
    check(
        "
        x = [  # first
            1,  # one
            2,
        ]
        def f(  # params
            a,  # the a
        ):
            # body
            return a
        ",
        "
        x = [1, 2]
        def f(a):
          return a
        ",
    );
}

#[test]
fn crlf_line_endings() {
    let source = "import torch\r\nx = torch.randn(8, 128)\r\nif x:\r\n    y = x @ w\r\n";
    let file = parse(source);
    assert!(file.syntax_errors.is_empty(), "{:?}", file.syntax_errors);
    assert_eq!(
        common::render(&file.module),
        "import torch\nx = torch.randn(8, 128)\nif x:\n  y = (x @ w)\n"
    );
    let StmtKind::If { body, .. } = &file.module.body[2].kind else {
        panic!()
    };
    assert_eq!(&source[body[0].range], "y = x @ w");
}

#[test]
fn empty_and_blank_files() {
    for source in ["", "\n", "   \n\n", "# only a comment\n", "\u{feff}"] {
        let file = parse(source);
        assert!(file.module.body.is_empty(), "{source:?}");
        assert!(
            file.syntax_errors.is_empty(),
            "{source:?}: {:?}",
            file.syntax_errors
        );
        assert_eq!(file.source_len, source.len());
    }
}

#[test]
fn nul_bytes_do_not_break_parsing() {
    for source in [
        "\0",
        "x = 1\0\ny = 2\n",
        "x = '\0'\n",
        "\0\0\0def f(\0):\n  pass",
    ] {
        let file = parse(source);
        assert_eq!(file.source_len, source.len());
        let _ = common::render(&file.module);
    }
    let file = parse("x = 1\n\0\ny = 2\n");
    assert!(!file.syntax_errors.is_empty());
    assert!(common::render(&file.module).contains("y = 2"));
}
