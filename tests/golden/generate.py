#!/usr/bin/env python3
"""Record golden shape/dtype/device cases for the rule table from real PyTorch.

Run by a developer (never in CI), with torch installed outside the repo:

    ~/torchenv/bin/python tests/golden/generate.py

Each case is a snippet in shapels' terms: `setup` lines that make inputs
(`torch.randn(...)`, layers such as `nn.Linear(...)`) and one `expr_line`
that binds names (`out = ...`, `v, i = ...`). The snippet is run for real;
every tensor bound on `expr_line` is recorded with its shape, dtype and
device, or torch's exception type and message when the line raises.
`server/analysis/tests/golden.rs` replays every case through the analyzer.

Writes `tests/golden/cases/<family>.jsonl` (one JSON object per line):
    {"id", "setup": [lines], "expr_line", "bindings": {name: {shape, dtype, device}}}
or  {"id", "setup", "expr_line", "error": {"type", "message"}}
plus `"data_dependent": true` when a shape depends on tensor values.
"""

import ast
import hashlib
import itertools
import json
import os
import re
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases")

# ---------------------------------------------------------------- helpers

DT = {
    "bool": "torch.bool", "u8": "torch.uint8", "i8": "torch.int8", "i16": "torch.int16",
    "i32": "torch.int32", "i64": "torch.int64", "f16": "torch.float16",
    "bf16": "torch.bfloat16", "f32": "torch.float32", "f64": "torch.float64",
    "c64": "torch.complex64", "c128": "torch.complex128",
}
INTS = ("u8", "i8", "i16", "i32", "i64")
FLOATS = ("f16", "bf16", "f32", "f64")


def shp(shape):
    return ", ".join(str(s) for s in shape)


def tup(shape):
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + shp(shape) + ")"


def mk(name, shape, dt="f32"):
    """A setup line making a tensor of `shape` and dtype key `dt`."""
    if len(shape) == 0:
        return {"bool": f"{name} = torch.tensor(True)", "i64": f"{name} = torch.tensor(3)"}.get(
            dt, f"{name} = torch.randn((), dtype={DT[dt]})")
    if dt == "f32":
        return f"{name} = torch.randn({shp(shape)})"
    if dt in FLOATS or dt.startswith("c"):
        return f"{name} = torch.randn({shp(shape)}, dtype={DT[dt]})"
    if dt == "bool":
        return f"{name} = torch.randint(0, 2, {tup(shape)}).bool()"
    if dt == "i64":
        return f"{name} = torch.randint(0, 5, {tup(shape)})"
    return f"{name} = torch.randint(0, 5, {tup(shape)}, dtype={DT[dt]})"


class Family:
    def __init__(self, name, imports=()):
        self.name = name
        # extra import lines for the snippet header (golden.rs adds them after its own)
        self.imports = list(imports)
        self.cases = []
        self.seen = set()

    def add(self, setup, expr, unpack=False, dd=False):
        """`expr` is a full line (`out = ...`) or, with unpack, an expression
        whose tuple result is bound to o0, o1, ... ."""
        if isinstance(setup, str):
            setup = [setup]
        key = (tuple(setup), expr, unpack)
        if key in self.seen:
            return
        self.seen.add(key)
        self.cases.append((list(setup), expr, unpack, dd))


def names_bound(line):
    tree = ast.parse(line)
    stmt = tree.body[0]
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    out = []

    def walk(t):
        if isinstance(t, ast.Name):
            out.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                walk(e)
        elif isinstance(t, ast.Starred):
            walk(t.value)

    for t in targets:
        walk(t)
    return out


def info(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
            "device": str(t.device)}


class SetupError(Exception):
    def __init__(self, setup, line, error):
        super().__init__(line)
        self.setup, self.line, self.error = setup, line, error


def run_case(setup, expr, unpack, imports=()):
    ns = {"torch": torch, "nn": nn, "F": F}
    for line in imports:
        exec(line, ns)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, line in enumerate(setup):
            try:
                exec(line, ns)
            except Exception as e:  # noqa: BLE001
                # a constructor that raises: the failing line becomes the case
                raise SetupError(setup[:k], line, err(e)) from e
        if unpack:
            try:
                r = eval(expr, ns)
            except Exception as e:  # noqa: BLE001
                return f"out = {expr}", {"error": err(e)}
            if isinstance(r, torch.Tensor) or not isinstance(r, (tuple, list)) or not (1 <= len(r) <= 8):
                return None, None
            if not all(isinstance(t, torch.Tensor) for t in r):
                return None, None
            names = [f"o{i}" for i in range(len(r))]
            line = ", ".join(names) + (" = " if len(r) > 1 else ", = ") + expr
            return line, {"bindings": {n: info(t) for n, t in zip(names, r)}}
        try:
            exec(expr, ns)
        except Exception as e:  # noqa: BLE001
            return expr, {"error": err(e)}
        b = {}
        for n in names_bound(expr):
            v = ns.get(n)
            if isinstance(v, torch.Tensor):
                b[n] = info(v)
        if not b:
            return None, None
        return expr, {"bindings": b}


def sorted_sets(text):
    """Python prints a set of strings in an order that changes from run to
    run (string hashes are seeded): record its items sorted."""
    return re.sub(r"\{('[^']*'(?:, '[^']*')*)\}",
                  lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)


def err(e):
    msg = sorted_sets(str(e)).strip().splitlines()
    if type(e).__name__ == "EinopsError" and msg:
        # einops' reason comes last, after the pattern and the input's shape,
        # and may take several lines
        header = [i for i, line in enumerate(msg) if "Input tensor shape:" in line]
        reason = msg[header[-1] + 1:] if header and header[-1] + 1 < len(msg) else msg[-1:]
        return {"type": "EinopsError", "message": "\n".join(line.strip() for line in reason)[:300]}
    msg = msg[0] if msg else ""
    return {"type": type(e).__name__, "message": msg[:300]}


# Errors that depend on the tensors' values, not on shapes or dtypes (a
# `randint` that drew a 0; `MaxUnpool` finding an index past its output where
# a window's maximum lies there): fake tensors have no values, so these are
# not recorded.
VALUE_DEPENDENT = ("ZeroDivisionError", "Integers to negative integer powers", "Found an invalid max index")

# ---------------------------------------------------------------- families

def fam_creation():
    f = Family("creation")
    for shape in [(3,), (2, 3), (2, 3, 4), (0, 3)]:
        s = shp(shape)
        for fn in ["zeros", "ones", "empty", "rand", "randn"]:
            f.add([], f"out = torch.{fn}({s})")
            f.add([], f"out = torch.{fn}({tup(shape)})")
            f.add([], f"out = torch.{fn}({s}, dtype=torch.float64)")
            f.add([], f"out = torch.{fn}(size={list(shape)})")
        f.add([], f"out = torch.full({tup(shape)}, 1.5)")
        f.add([], f"out = torch.full({tup(shape)}, 7)")
        f.add([], f"out = torch.full({tup(shape)}, True)")
        f.add([], f"out = torch.full({tup(shape)}, 2, dtype=torch.float16)")
        f.add([], f"out = torch.randint(10, {tup(shape)})")
        f.add([], f"out = torch.randint(0, 10, {tup(shape)})")
        f.add([], f"out = torch.randint(0, 10, {tup(shape)}, dtype=torch.int32)")
        f.add([], f"out = torch.zeros({s}, device='meta')")
        for dt in ["f32", "f16", "i64", "i32", "bool", "f64"]:
            src = mk("x", shape, dt)
            for fn in ["zeros_like", "ones_like", "empty_like", "full_like"]:
                extra = ", 3" if fn == "full_like" else ""
                f.add(src, f"out = torch.{fn}(x{extra})")
                f.add(src, f"out = torch.{fn}(x{extra}, dtype=torch.float64)")
            f.add(src, "out = torch.rand_like(x.float())")
            f.add(src, "out = torch.randn_like(x.float())")
            f.add(src, "out = torch.randint_like(x, 5)")
            f.add(src, "out = x.new_zeros(4, 5)")
            f.add(src, "out = x.new_ones((2,))")
            f.add(src, "out = x.new_empty(3, 2)")
            f.add(src, "out = x.new_full((2, 2), 3)")
            f.add(src, "out = x.new_zeros(2, dtype=torch.int32)")
            f.add(src, "out = x.new_tensor([1, 2, 3])")
    f.add([], "out = torch.zeros(-1, 3)")
    f.add([], "out = torch.ones(2, -3)")
    f.add([], "out = torch.randn(2, -1)")
    f.add([], "out = torch.empty(-2)")
    for args in ["5", "0", "1, 6", "1, 6, 2", "0, 10, 3", "10, 0, -2", "0.0, 1.0, 0.25",
                 "1, 2.5", "0, 5, 0.5", "5, 1", "0, 10, 0", "1, 6, -1", "-3, 3", "2, 2",
                 "10, dtype=torch.float32", "0.5", "3, dtype=torch.int32"]:
        f.add([], f"out = torch.arange({args})")
    f.add([], "out = torch.arange(start=1, end=7, step=3)")
    f.add([], "out = torch.arange(end=4)")
    for args in ["0, 1, 5", "0, 1, 1", "0, 1, 0", "-1, 1, steps=7", "0, 10, 3, dtype=torch.float64",
                 "0, 1, -1"]:
        f.add([], f"out = torch.linspace({args})")
        f.add([], f"out = torch.logspace({args})")
    for args in ["3", "2, 4", "4, 2", "0", "3, dtype=torch.int64", "n=2, m=3", "-1"]:
        f.add([], f"out = torch.eye({args})")
    for lit in ["1", "2.5", "True", "[1, 2, 3]", "[1.0, 2, 3]", "[[1, 2], [3, 4], [5, 6]]",
                "[[True, False]]", "[]", "[[1, 2], [3]]", "[[[1.0]], [[2.0]]]", "[1, 2.0, True]",
                "[1, 2], dtype=torch.float16", "3, dtype=torch.float64", "[[0.5, 1], [2, 3]], dtype=torch.int32",
                "(1, 2, 3)", "[[1, 2, 3], [4, 5, 6]], device='meta'", "1j", "[1 + 2j, 3]"]:
        f.add([], f"out = torch.tensor({lit})")
    for lit in ["[1, 2, 3]", "[[1.0, 2.0]]", "5"]:
        f.add([], f"out = torch.as_tensor({lit})")
    f.add("x = torch.randn(2, 3)", "out = torch.tensor(x.shape)")
    f.add("x = torch.randn(2, 3)", "out = torch.zeros(x.shape)")
    f.add("x = torch.randn(2, 3)", "out = torch.zeros(x.shape[0], 5)")
    f.add("x = torch.randn(2, 3)", "out = torch.zeros(*x.shape, 2)")
    f.add("x = torch.randn(2, 3)", "out = torch.ones(x.size())")
    f.add("x = torch.randn(2, 3)", "out = torch.zeros(x.size(1), dtype=x.dtype)")
    f.add([], "out = torch.zeros(2, 3).to('meta')")
    f.add([], "out = torch.zeros(())")
    f.add([], "out = torch.zeros([])")
    f.add([], "out = torch.randn(())")
    f.add([], "out = torch.empty(0)")
    f.add([], "out = torch.zeros(2, 3, dtype=torch.bool)")
    f.add([], "out = torch.ones(4, dtype=torch.long)")
    f.add([], "out = torch.ones(4, dtype=torch.half)")
    f.add([], "out = torch.ones(4, dtype=torch.double)")
    f.add([], "out = torch.ones(4, dtype=torch.int)")
    f.add([], "out = torch.ones(4, dtype=torch.float)")
    f.add([], "out = torch.ones(4, dtype=torch.uint8)")
    f.add([], "out = torch.ones(4, dtype=torch.bfloat16)")
    f.add([], "out = torch.ones(4, dtype=torch.complex64)")
    f.add([], "out = torch.randperm(7)")
    f.add([], "out = torch.zeros(2, 3).fill_(2)")
    f.add([], "out = torch.tril_indices(3, 3)")
    return f


PW_BINARY = ["+", "-", "*", "/", "//", "%", "**"]
PW_FN = ["torch.add", "torch.sub", "torch.mul", "torch.div", "torch.maximum", "torch.minimum",
         "torch.atan2", "torch.eq", "torch.lt", "torch.ge", "torch.logical_and", "torch.pow",
         "torch.remainder", "torch.fmod", "torch.hypot", "torch.bitwise_and"]
CMP = ["==", "!=", "<", "<=", ">", ">="]


def fam_pointwise():
    f = Family("pointwise")
    # broadcasting
    shapes = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((4, 1, 3), (2, 3)),
              ((2, 3), (4,)), ((2, 3), (3, 2)), ((5, 1, 4), (3, 1)), ((1,), (2, 3)),
              ((), (2, 3)), ((2, 0), (1,)), ((2, 0), (3,)), ((2, 3, 4), (2, 1, 4)),
              ((3, 1, 5), (1, 4, 1)), ((2, 3), (2, 3, 1)), ((6,), (2, 3))]
    for (sa, sb) in shapes:
        setup = [mk("a", sa), mk("b", sb)]
        for op in ["+", "*", "-", "/"]:
            f.add(setup, f"out = a {op} b")
        for fn in ["torch.add", "torch.maximum", "torch.where(a > 0, a, b) if False else torch.maximum"]:
            pass
        f.add(setup, "out = torch.maximum(a, b)")
        f.add(setup, "out = torch.atan2(a, b)")
        f.add(setup, "out = a > b")
        f.add(setup, "out = torch.where(a > 0, a, b)")
        f.add(setup, "out = torch.lerp(a, b, 0.5)")
        f.add(setup + [mk("c", (1,))], "out = torch.addcmul(c, a, b)")
        f.add(setup, "out = a.add(b, alpha=2)")
        f.add(setup, "out = torch.broadcast_tensors(a, b)[0]")
    # in-place broadcasting
    for (sa, sb) in [((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (2, 3)), ((2, 3), (2, 3))]:
        setup = [mk("a", sa), mk("b", sb)]
        f.add(setup, "a += b")
        f.add(setup, "out = a.add_(b)")
        f.add(setup, "out = a.mul_(b)")
    # dtype pairs
    keys = ["bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "c64"]
    for da, db in itertools.product(keys, keys):
        setup = [mk("a", (3,), da), mk("b", (3,), db)]
        for op in ["+", "*", "/"]:
            f.add(setup, f"out = a {op} b")
        f.add(setup, "out = torch.where(a == a, a, b)")
        f.add(setup, "out = torch.cat([a, b])")
        if da in INTS + ("bool",) and db in INTS + ("bool",):
            f.add(setup, "out = a // b")
            f.add(setup, "out = a & b")
        if not da.startswith("c") and not db.startswith("c"):
            f.add(setup, "out = torch.maximum(a, b)")
            f.add(setup, "out = a < b")
    # tensor with 0-dim tensor
    for da, db in itertools.product(["bool", "i32", "i64", "f16", "f32", "f64"], repeat=2):
        setup = [mk("a", (2, 3), da), f"b = torch.tensor(1, dtype={DT[db]})"]
        f.add(setup, "out = a + b")
        f.add(setup, "out = b * a")
    # python scalars
    for da in ["bool", "u8", "i32", "i64", "f16", "bf16", "f32", "f64", "c64"]:
        setup = mk("a", (2, 3), da)
        for sc in ["2", "2.5", "True", "1j", "-1"]:
            f.add(setup, f"out = a + {sc}")
            f.add(setup, f"out = {sc} * a")
            if da != "c64":
                f.add(setup, f"out = a ** {sc}")
        f.add(setup, "out = a / 2")
        f.add(setup, "out = a // 2")
        f.add(setup, "out = a % 3")
        f.add(setup, "out = -a" if da != "bool" else "out = ~a")
        f.add(setup, "out = a == 1")
        for un in ["torch.sqrt", "torch.exp", "torch.abs", "torch.sigmoid", "torch.sin",
                   "torch.neg", "torch.floor", "torch.sign", "torch.isnan", "torch.angle",
                   "torch.real", "F.relu", "torch.tanh", "torch.square", "torch.reciprocal",
                   "torch.log1p", "torch.clamp_min"]:
            extra = ", 0" if un == "torch.clamp_min" else ""
            f.add(setup, f"out = {un}(a{extra})")
        f.add(setup, "out = a.clamp(0, 1)")
        f.add(setup, "out = a.clamp(min=0.5)")
        f.add(setup, "out = torch.pow(2, a)")
        f.add(setup, "out = a.pow(2)")
    # in-place dtype errors
    for da, db in [("i64", "f32"), ("f32", "f64"), ("i32", "i64"), ("bool", "i64"), ("f16", "f32"),
                   ("f32", "c64"), ("i64", "bool")]:
        setup = [mk("a", (3,), da), mk("b", (3,), db)]
        f.add(setup, "out = a.add_(b)")
        f.add(setup, "a *= b")
    f.add(mk("a", (3,), "i64"), "a += 1.5")
    f.add(mk("a", (3,), "i64"), "a /= 2")
    f.add(mk("a", (3,), "f32"), "a += 1")
    f.add(mk("a", (2, 3)), "out = torch.clamp(a, min=torch.zeros(3))")
    f.add(mk("a", (2, 3)), "out = a.masked_fill(a > 0, 0.0)")
    f.add([mk("a", (2, 3)), mk("m", (3,), "bool")], "out = a.masked_fill(m, 1)")
    f.add([mk("a", (2, 3)), mk("m", (2, 1), "bool")], "out = a.masked_fill(m, float('-inf'))")
    f.add([mk("a", (2, 3)), mk("m", (4,), "bool")], "out = a.masked_fill(m, 1)")
    f.add([mk("a", (2, 3)), mk("m", (3,), "f32")], "out = a.masked_fill(m, 1)")
    f.add([mk("a", (2, 3)), mk("m", (3,), "i64")], "out = a.masked_fill(m, 1)")
    f.add([mk("a", (3,)), mk("m", (2, 3), "bool")], "out = a.masked_fill(m, 1)")
    f.add([mk("a", (2, 3), "i64")], "out = a.masked_fill(a > 1, 0.5)")
    f.add([mk("c", (2, 3), "bool"), mk("a", (3,)), mk("b", (2, 1))], "out = torch.where(c, a, b)")
    f.add([mk("c", (2, 3), "bool"), mk("a", (3,))], "out = torch.where(c, a, 0.0)")
    f.add([mk("c", (2, 3), "bool"), mk("a", (3,), "i64")], "out = torch.where(c, a, 0.5)")
    f.add([mk("c", (2, 3), "bool")], "out = torch.where(c, 1, 0)")
    f.add([mk("c", (2, 3), "bool")], "out = torch.where(c, 1.0, 0)")
    f.add([mk("c", (4,), "bool"), mk("a", (2, 3))], "out = torch.where(c, a, a)")
    f.add([mk("c", (2, 3), "f32"), mk("a", (2, 3))], "out = torch.where(c, a, a)")
    for un in ["F.gelu", "F.silu", "F.softplus", "torch.relu", "F.leaky_relu", "F.elu", "F.hardtanh",
               "torch.nan_to_num", "F.dropout", "torch.erf", "torch.rsqrt", "torch.logit",
               "torch.round", "torch.trunc", "torch.frac", "torch.exp2", "torch.log2", "torch.sinh"]:
        f.add(mk("a", (2, 3, 4)), f"out = {un}(a)")
        f.add(mk("a", (2, 3, 4), "f16"), f"out = {un}(a)")
    return f


def fam_reduction():
    f = Family("reduction")
    shapes = [(2, 3, 4), (5,), (3, 4), ()]
    for shape in shapes:
        n = len(shape)
        for dt in ["f32", "i64", "bool", "f16"]:
            setup = mk("x", shape, dt) if shape else {
                "f32": "x = torch.tensor(1.5)", "i64": "x = torch.tensor(3)",
                "bool": "x = torch.tensor(True)", "f16": "x = torch.tensor(1.5, dtype=torch.float16)"}[dt]
            fns = ["sum", "mean", "prod", "amax", "amin", "std", "var", "logsumexp", "all",
                   "any", "count_nonzero", "norm", "nansum"]
            if dt != "f32":
                fns = ["sum", "mean", "amax", "all"]
            for fn in fns:
                dims = [None, 0, -1, (0, 1), (0, -1), n, (0, 0), ()] if n else [None, 0, -1, 1]
                if fn in ("prod", "nansum", "count_nonzero", "amin", "var"):
                    dims = [None, -1, n] if n else [None, 0]
                for d in dims:
                    if fn in ("norm",) and isinstance(d, tuple) and len(d) == 0:
                        continue
                    if d is None:
                        if fn == "logsumexp":
                            continue
                        f.add(setup, f"out = x.{fn}()")
                        if fn in ("sum", "mean", "prod", "amax"):
                            f.add(setup, f"out = torch.{fn}(x)")
                        continue
                    f.add(setup, f"out = x.{fn}({d!r})" if fn != "count_nonzero" else f"out = x.count_nonzero(dim={d!r})")
                    if fn in ("sum", "mean", "amax", "std", "any", "logsumexp"):
                        f.add(setup, f"out = x.{fn}(dim={d!r}, keepdim=True)")
                        f.add(setup, f"out = torch.{fn}(x, {d!r}, keepdim=False)")
            f.add(setup, "out = x.sum(dtype=torch.float64)")
            f.add(setup, "out = x.sum(0, dtype=torch.int32)" if n else "out = x.sum(dtype=torch.int32)")
            f.add(setup, "out = x.mean(dtype=torch.float64)")
            fns = ["max", "min", "median", "argmax", "argmin", "cumsum", "cumprod",
                   "softmax", "log_softmax", "argsort", "sort", "cummax", "mode", "nanmedian"]
            if dt != "f32":
                fns = ["max", "argmax", "cumsum", "softmax", "sort"]
            for fn in fns:
                dims = [0, -1, 1, n] if n else [0, -1]
                if fn in ("cumprod", "argmin", "cummax", "mode", "nanmedian", "log_softmax", "argsort"):
                    dims = [-1, n] if n else [0]
                for d in dims:
                    if fn in ("max", "min", "median", "sort", "cummax", "mode", "nanmedian"):
                        f.add(setup, f"x.{fn}({d})", unpack=True)
                        if fn in ("max", "min", "median", "sort"):
                            f.add(setup, f"x.{fn}(dim={d}, keepdim=True)" if fn != "sort" else
                                  f"x.sort(dim={d}, descending=True)", unpack=True)
                            f.add(setup, f"out = x.{fn}({d}).values" if fn != "sort" else f"out = x.sort({d}).indices")
                    elif fn in ("argmax", "argmin"):
                        f.add(setup, f"out = x.{fn}({d})")
                        f.add(setup, f"out = x.{fn}(dim={d}, keepdim=True)")
                    elif fn in ("softmax", "log_softmax"):
                        f.add(setup, f"out = x.{fn}({d})")
                        f.add(setup, f"out = F.{fn}(x, dim={d})")
                    else:
                        f.add(setup, f"out = x.{fn}({d})")
                        f.add(setup, f"out = torch.{fn}(x, dim={d})")
                if fn in ("max", "min", "median", "argmax", "argmin"):
                    f.add(setup, f"out = x.{fn}()")
            for k in ([1, 2, 3, 5] if dt == "f32" else [2]):
                for d in ([-1, 0] if n else [0]):
                    f.add(setup, f"x.topk({k}, dim={d})", unpack=True)
                    f.add(setup, f"x.kthvalue({k}, {d})", unpack=True)
                    f.add(setup, f"x.topk({k}, {d}, largest=False, sorted=True)", unpack=True)
            f.add(setup, "out = x.topk(2).values")
            f.add(setup, "out = x.max(-1)[1]")
            f.add(setup, "out = x.max(-1)[0]")
            f.add(setup, "out, idx = x.max(dim=0)")
            f.add(setup, "out = torch.max(x, x)")
            f.add(setup, "out = x.aminmax()[0]")
    f.add("x = torch.randn(2, 3, 4)", "out = x.sum(dim=[0, 2])")
    f.add("x = torch.randn(2, 3, 4)", "out = x.mean([-1, -2], keepdim=True)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.var(1, unbiased=False)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.std(dim=1, correction=0)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.norm(dim=-1, keepdim=True)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.norm(p=2, dim=(1, 2))")
    f.add("x = torch.randn(2, 3, 4)", "out = torch.linalg.norm(x, dim=-1)")
    f.add("x = torch.randn(2, 3, 4)", "out = torch.var_mean(x, 1)[0]")
    f.add("x = torch.randn(2, 3, 4)", "out = x.softmax()")
    f.add("x = torch.randn(2, 3, 4, dtype=torch.complex64)", "out = x.abs().sum(-1)")
    f.add("x = torch.randn(2, 3, 4, dtype=torch.complex64)", "out = x.var(-1)")
    f.add("x = torch.randn(2, 3, 4, dtype=torch.complex64)", "out = x.norm(dim=-1)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.cumsum(1, dtype=torch.float64)")
    f.add("x = torch.randint(0, 5, (2, 3))", "out = x.cumsum(-1)")
    f.add("x = torch.randint(0, 5, (2, 3), dtype=torch.int32)", "out = x.cumsum(-1)")
    f.add("x = torch.randint(0, 5, (2, 3), dtype=torch.uint8)", "out = x.all(-1)")
    f.add("x = torch.randint(0, 5, (2, 3), dtype=torch.uint8)", "out = x.sum()")
    f.add("x = torch.randn(2, 3, 4)", "out = x.logcumsumexp(1)")
    return f


def fam_indexing():
    f = Family("indexing")
    setup = "x = torch.randn(5, 6, 7)"
    idxs = ["0", "-1", "4", "5", "-6", "1:3", ":", "::2", "1::3", "-2:", ":-1", "2:-1", "10:", "3:1",
            "None", "...", "..., 0", "..., None", "None, ..., None", ":, None", "0, 0", "0, 0, 0",
            "0, 0, 0, 0", ":, :, :, :", "..., 1:3", "0, ..., 0", "1:4:2, None, -1", "::-1",
            ":, [-1], :", "[0, 2]", "[[0, 1], [2, 3]]", ":, [0, 1, 2]", "[0, 1], [1, 2]",
            "[0, 1], :, [1, 2]", "0, :, [1, 2]", ":, [0, 1], [2, 3]", "[0, 1], [1, 2, 3]",
            "None, [0, 1]", "[0], ..., [1]", "..., [1, 2]", ":, [5, 6]", "[4]", "[5]",
            "[0, 1], 0", "[True, False, True, False, True]", "torch.tensor([0, 1])",
            "torch.tensor([[0], [1]]), torch.tensor([1, 2])", ":, torch.tensor([1, 2]), 0",
            "x > 0", "x[:, :, 0] > 0", "x[:, 0, 0] > 0", "torch.tensor([1.0])", "2.0",
            "torch.tensor(1)", "torch.tensor([0, 2]).long()", "torch.arange(3)", "1, 2:, ::3",
            "-5:-1", "-100:100", "0:0", "0:6", "slice(1, 3)", "(0, 1)", "1, :, None, 3",
            "torch.tensor([True, False])", "[1, -1], None"]
    for ix in idxs:
        dd = ("x >" in ix or "x[" in ix or "True" in ix)
        f.add(setup, f"out = x[{ix}]", dd=dd)
    for shape in [(4,), (3, 4), (2, 3, 4, 5)]:
        s2 = mk("x", shape)
        for ix in ["0", "-1", "1:", "None", "..., None", ":, -1" if len(shape) > 1 else ":-1",
                   "[0, 0, 1]", "..., ::2", ":, :, 1:3, None" if len(shape) > 2 else ":, None",
                   "None, ..., 0", "0, ..., 0"]:
            f.add(s2, f"out = x[{ix}]")
    f.add([setup, "i = torch.randint(0, 5, (2, 3))"], "out = x[i]")
    f.add([setup, "i = torch.randint(0, 5, (2, 3))"], "out = x[:, i]")
    f.add([setup, "i = torch.randint(0, 5, (2, 3))"], "out = x[i, i]")
    f.add([setup, "i = torch.randint(0, 5, (2, 3))", "j = torch.randint(0, 5, (3,))"], "out = x[i, :, j]")
    f.add([setup, "i = torch.randint(0, 5, (2, 3))", "j = torch.randint(0, 5, (4,))"], "out = x[i, j]")
    f.add([setup, "i = torch.randint(0, 5, (2,), dtype=torch.int32)"], "out = x[i]")
    f.add([setup, "i = torch.randn(2)"], "out = x[i]")
    f.add([setup, "m = torch.ones(5, dtype=torch.bool)"], "out = x[m]", dd=True)
    f.add([setup, "m = torch.ones(4, dtype=torch.bool)"], "out = x[m]", dd=True)
    f.add([setup, "m = torch.ones(5, 6, dtype=torch.bool)"], "out = x[m]", dd=True)
    f.add([setup, "m = torch.ones(6, dtype=torch.bool)"], "out = x[:, m]", dd=True)
    f.add("x = torch.randn(2, 3)", "x[0] = 1.0")
    f.add("x = torch.randn(2, 3)", "x[:, 1] = torch.zeros(2)")
    f.add("x = torch.randn(2, 3)", "x[:, 1] = torch.zeros(3)")
    f.add("x = torch.randn(2, 3)", "out = x.T")
    f.add("x = torch.randn(2, 3)", "out = x.mT")
    f.add("x = torch.randn(4, 2, 3)", "out = x.mT")
    f.add("x = torch.randn(4, 2, 3)", "out = x.T")
    f.add("x = torch.randn(4)", "out = x.mT")
    f.add("x = torch.randn(5, 6, 7)", "out = x.select(1, 2)")
    f.add("x = torch.randn(5, 6, 7)", "out = x.select(-1, 7)")
    f.add("x = torch.randn(5, 6, 7)", "out = x.select(3, 0)")
    f.add("x = torch.tensor(3.0)", "out = x[None]")
    f.add("x = torch.tensor(3.0)", "out = x[...]")
    f.add("x = torch.tensor(3.0)", "out = x[0]")
    return f


def fam_view():
    f = Family("view")
    base = [(2, 3, 4), (6,), (4, 1, 3), (1, 5)]
    for shape in base:
        s = mk("x", shape)
        n = len(shape)
        for v in ["-1", "24", "6, 4", "2, -1", "-1, 4", "4, 3, 2", "2, 3, 2, 2", "-1, -1", "3, -1, 2",
                  "12", "(2, 12)", "[3, 8]", "0, -1", "1, -1", "-1, 5", "6", "2, 3", "-1, 1", "5",
                  "4, 3", "3, 1, 2, 1", "-2, 12", "1, 1, 5", "15"]:
            f.add(s, f"out = x.view({v})")
            f.add(s, f"out = x.reshape({v})")
        f.add(s, "out = torch.reshape(x, (-1,))")
        for a in ["", "0", "1", "0, 1", "1, 2", "-2, -1", "2, 1", "start_dim=1", "0, -1", "3"]:
            f.add(s, f"out = x.flatten({a})")
            f.add(s, f"out = torch.flatten(x, {a})" if a else "out = torch.flatten(x)")
        for a in ["0, (2, 1)", "-1, (2, 2)", "1, (3, 1)", "0, (-1, 1)", "1, (-1, 3)", "2, (2, -1)",
                  "1, (2, 2)", "0, (1, -1, 1)", "-1, (-1, -1)"]:
            f.add(s, f"out = x.unflatten({a})")
        for a in ["", "0", "1", "-1", "2", "(0, 1)", "(1, 2)", "3", "-4"]:
            f.add(s, f"out = x.squeeze({a})")
        for a in ["0", "1", "-1", "-2", str(n), str(n + 1), str(-n - 1), str(-n - 2)]:
            f.add(s, f"out = x.unsqueeze({a})")
            f.add(s, f"out = torch.unsqueeze(x, {a})")
        for a in ["2, 3, 4", "-1, -1, -1", "3, 2, 3, 4", "2, -1, 4", "5, 3, 4", "4, 2, 1, 3",
                  "2, 6", "-1", "3, -1", "6, 5", "-1, 5", "2, 1, 5", "1, 5", "(4, 3, 3)", "4, 1, 3"]:
            f.add(s, f"out = x.expand({a})")
        for a in ["2, 1, 1", "1, 2", "2", "1, 1, 1, 2", "2, 2, 2", "0, 1", "-1, 2"]:
            f.add(s, f"out = x.repeat({a})")
            f.add(s, f"out = x.tile(({a},))" if "," not in a else f"out = x.tile(({a}))")
        for a in ["2", "2, dim=0", "2, dim=-1", "3, 1", "torch.tensor([1, 2]), dim=0"]:
            f.add(s, f"out = x.repeat_interleave({a})", dd="tensor" in a)
        perms = list(itertools.permutations(range(n)))[:6] + [tuple(range(n + 1)), tuple([0] * n)]
        for p in perms:
            f.add(s, f"out = x.permute{tuple(p) if len(p) != 1 else '(' + str(p[0]) + ')'}")
        if n >= 2:
            f.add(s, "out = x.permute(-1, 0" + (", 1)" if n == 3 else ")"))
            f.add(s, "out = torch.permute(x, (1, 0" + (", 2))" if n == 3 else "))"))
        for a in ["0, 1", "1, -1", "-1, -2", "0, 0", f"0, {n}", "2, 0"]:
            f.add(s, f"out = x.transpose({a})")
            f.add(s, f"out = torch.swapaxes(x, {a})")
        f.add(s, "out = x.t()")
        for a in ["0, -1", "-1, 0", "(0, 1), (1, 0)", "1, 2", "0, 3"]:
            f.add(s, f"out = x.movedim({a})")
            f.add(s, f"out = torch.moveaxis(x, {a})")
        for a in ["0, 0, 1", "0, 1, 1", "-1, 1, 2", "1, 0, 2", "0, 2, 5", "-1, -2, 1", "1, 1, 0"]:
            f.add(s, f"out = x.narrow({a})")
        f.add(s, "out = x.contiguous()")
        f.add(s, "out = x.clone()")
        f.add(s, "out = x.detach()")
        f.add(s, "out = x.flip(0)")
        f.add(s, "out = x.roll(1, 0)")
        f.add(s, "out = torch.atleast_3d(x)")
        f.add(s, "out = torch.atleast_2d(x)")
        f.add(s, "out = x.unfold(0, 1, 1)")
        f.add(s, "out = x.unfold(-1, 2, 1)")
        f.add(s, "out = x.ravel()")
        f.add(s, "out = x.view_as(torch.zeros(24))")
        f.add(s, "out = x.reshape_as(torch.zeros(6, 4))")
        f.add([s, "y = torch.randn(3, 2, 3, 4)"], "out = x.expand_as(y)")
        f.add([s, "y = torch.randn(2, 3, 4)"], "out = x.expand_as(y)")
        f.add([s, "y = torch.randn(4, 5)"], "out = x.expand_as(y)")
        f.add(s, "out = x.broadcast_to((2, 2, 3, 4))")
        f.add(s, "out = x.squeeze(-1).unsqueeze(0)")
    # stride-dependent view
    f.add("x = torch.randn(2, 3, 4)", "out = x.transpose(0, 1).view(3, 8)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.transpose(0, 1).view(3, 2, 2, 2)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.transpose(0, 1).reshape(3, 8)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.permute(2, 0, 1).view(4, 6)")
    f.add("x = torch.randn(4, 6)", "out = x[:, :3].view(12)")
    f.add("x = torch.randn(3, 1)", "out = x.expand(3, 4).view(12)")
    f.add("x = torch.randn(3, 4)", "out = x.t().view(-1)")
    f.add("x = torch.randn(3, 4)", "out = x.t().contiguous().view(-1)")
    f.add("x = torch.randn(3, 4)", "out = (x.t() * 2).view(-1)")
    f.add("x = torch.randn(0, 3)", "out = x.view(0, -1)")
    f.add("x = torch.randn(0, 3)", "out = x.view(-1, 3)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.view(x.size(0), -1)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.view(*x.shape[:-1], 2, 2)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.reshape(x.shape[0], x.shape[1] * x.shape[2])")
    f.add("x = torch.randn(2, 3, 4)", "out = x.view(torch.Size([6, 4]))")
    f.add("x = torch.randn(2, 3, 4)", "out = x.view(torch.float16)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.view(torch.int8)")
    f.add("x = torch.tensor(5.0)", "out = x.view(1)")
    f.add("x = torch.tensor(5.0)", "out = x.flatten()")
    f.add("x = torch.tensor(5.0)", "out = x.unsqueeze(0)")
    f.add("x = torch.tensor(5.0)", "out = x.squeeze()")
    f.add("x = torch.tensor(5.0)", "out = x.expand(3, 2)")
    f.add("x = torch.tensor(5.0)", "out = x.reshape(1, 1)")
    return f


def fam_join():
    f = Family("join")
    for shape in [(2, 3), (4,), (2, 3, 4)]:
        n = len(shape)
        setup = [mk("a", shape), mk("b", shape)]
        for d in [0, -1, 1, n, -n - 1]:
            f.add(setup, f"out = torch.cat([a, b], dim={d})")
            f.add(setup, f"out = torch.stack([a, b], dim={d})")
            f.add(setup, f"out = torch.cat((a, b, a), {d})")
        f.add(setup, "out = torch.hstack([a, b])")
        f.add(setup, "out = torch.vstack([a, b])")
        f.add(setup, "out = torch.dstack([a, b])")
        f.add(setup, "out = torch.column_stack([a, b])")
        f.add(setup, "out = torch.concat([a, b])")
        f.add(setup, "out = torch.concatenate([a, b], axis=-1)")
        f.add(setup, "out = torch.cat([a])")
        f.add(setup, "out = torch.cat([a, b.unsqueeze(0)])")
        f.add(setup, "out = torch.stack([a, b.unsqueeze(0)])")
        f.add(setup, "out = torch.cat([a, torch.zeros(0)])")
        f.add(setup, "out = torch.cat([a, b.long()], dim=0)")
        f.add(setup, "out = torch.stack([a.half(), b], 0)")
        f.add(setup, "out = torch.cat([a] * 3, -1)")
        f.add(setup, "out = torch.stack([a for _ in range(4)])")
        s = mk("x", shape)
        for d in [0, -1, n]:
            for k in [1, 2, 3, 5]:
                f.add(s, f"x.split({k}, dim={d})", unpack=True)
                f.add(s, f"x.chunk({k}, dim={d})", unpack=True)
                f.add(s, f"x.tensor_split({k}, dim={d})", unpack=True)
                f.add(s, f"torch.split(x, {k}, {d})", unpack=True)
            for sizes in ["[1, 1]", "[1, 2]", "[2, 1, 1]", "(3, 1)", "[0, 2]", "[1, 1, 2]"]:
                f.add(s, f"x.split({sizes}, dim={d})", unpack=True)
            f.add(s, f"x.tensor_split([1, 3], dim={d})", unpack=True)
            f.add(s, f"x.unbind({d})", unpack=True)
            f.add(s, f"torch.unbind(x, dim={d})", unpack=True)
        f.add(s, "x.chunk(0)", unpack=True)
        f.add(s, "x.split(0)", unpack=True)
        f.add(s, "out = x.split(2)[0]")
        f.add(s, "out = x.chunk(2, -1)[1]")
        f.add(s, "out = x.unbind(0)[0]")
        f.add(s, "out, *rest = x.split(1)")
    f.add([mk("a", (2, 3)), mk("b", (2, 4))], "out = torch.cat([a, b], 1)")
    f.add([mk("a", (2, 3)), mk("b", (2, 4))], "out = torch.cat([a, b], 0)")
    f.add([mk("a", (2, 3)), mk("b", (2, 4))], "out = torch.stack([a, b])")
    f.add([mk("a", (2, 3)), mk("b", (5, 3))], "out = torch.cat([a, b])")
    f.add([mk("a", (2, 3)), mk("b", (5, 3))], "out = torch.vstack([a, b])")
    f.add([mk("a", (2, 3)), mk("b", (2, 5))], "out = torch.hstack([a, b])")
    f.add([mk("a", (2, 3)), mk("b", (3,))], "out = torch.cat([a, b])")
    f.add([], "out = torch.cat([])")
    f.add([], "out = torch.stack([])")
    f.add("a = torch.tensor(1.0)", "out = torch.cat([a, a])")
    f.add("a = torch.tensor(1.0)", "out = torch.stack([a, a])")
    f.add([mk("a", (2, 3), "i32"), mk("b", (2, 3), "bool")], "out = torch.cat([a, b])")
    f.add([mk("a", (2, 3), "f16"), mk("b", (2, 3), "bf16")], "out = torch.cat([a, b])")
    return f


def fam_linalg():
    f = Family("linalg")
    pairs = [((3,), (3,)), ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3, 4)),
             ((5, 2, 3), (5, 3, 4)), ((7, 1, 3, 4), (5, 4, 6)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
             ((2, 3), (4, 5)), ((3,), (4,)), ((5, 2, 3), (4, 3, 4)), ((1, 2, 3), (5, 3, 4)),
             ((2, 3), (2, 3)), ((), (3,)), ((2, 0), (0, 3)), ((2, 3, 4), (2, 5, 3))]
    for (sa, sb) in pairs:
        setup = [mk("a", sa) if sa else "a = torch.tensor(2.0)", mk("b", sb)]
        f.add(setup, "out = a @ b")
        f.add(setup, "out = torch.matmul(a, b)")
        f.add(setup, "out = torch.mm(a, b)")
        f.add(setup, "out = torch.bmm(a, b)")
        f.add(setup, "out = a.mv(b)")
        f.add(setup, "out = torch.dot(a, b)")
        f.add(setup, "out = torch.outer(a, b)")
        f.add(setup, "out = a @ b.mT" if len(sb) >= 2 else "out = a @ b.T")
    for da, db in [("f32", "f64"), ("f64", "f64"), ("f16", "f32"), ("i64", "i64"), ("i64", "f32"),
                   ("bf16", "bf16"), ("f32", "c64")]:
        setup = [mk("a", (2, 3), da), mk("b", (3, 4), db)]
        f.add(setup, "out = a @ b")
        f.add(setup, "out = torch.mm(a, b)")
        f.add([mk("a", (5, 2, 3), da), mk("b", (5, 3, 4), db)], "out = torch.bmm(a, b)")
        f.add([mk("x", (2, 3), da), mk("w", (4, 3), db)], "out = F.linear(x, w)")
    for sb in [(2, 4), (1, 4), (4,), (5, 1, 1), (2, 1), (3, 4)]:
        setup = [mk("bias", sb), mk("a", (5, 2, 3)), mk("b", (5, 3, 4))]
        f.add(setup, "out = torch.baddbmm(bias, a, b)")
        f.add(setup, "out = torch.baddbmm(bias, a, b, beta=0.5, alpha=2)")
        f.add([mk("bias", sb), mk("a", (2, 3)), mk("b", (3, 4))], "out = torch.addmm(bias, a, b)")
    f.add([mk("a", (5, 2, 3)), mk("b", (5, 3, 4)), mk("c", (5, 2, 4))], "out = torch.baddbmm(c, a, b)")
    f.add([mk("a", (5, 2, 3)), mk("b", (4, 3, 4)), mk("c", (5, 2, 4))], "out = torch.baddbmm(c, a, b)")
    f.add([mk("a", (2, 3)), mk("b", (3, 4)), mk("c", (2, 4))], "out = torch.baddbmm(c, a, b)")
    f.add([mk("a", (3,)), mk("b", (3,)), mk("c", (3, 3))], "out = torch.addr(c, a, b)")
    f.add([mk("a", (3,)), mk("b", (4,))], "out = torch.ger(a, b)")
    f.add([mk("a", (3,)), mk("b", (4,))], "out = a.outer(b)")
    f.add([mk("a", (2, 3)), mk("b", (4,))], "out = torch.outer(a, b)")
    f.add([mk("a", (3,), "i64"), mk("b", (4,))], "out = torch.outer(a, b)")
    eins = [
        ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
        ("i,i->", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
        ("ij->ji", [(2, 3)]), ("...ij,...jk->...ik", [(7, 2, 3), (3, 4)]), ("bhqd,bhkd->bhqk", [(2, 4, 5, 8), (2, 4, 6, 8)]),
        ("ij,jk->ik", [(2, 3), (4, 5)]), ("ij->", [(2, 3)]), ("ijk->kji", [(2, 3, 4)]), ("ij,ij->ij", [(2, 3), (1, 3)]),
        ("ij,kl", [(2, 3), (4, 5)]), ("ba", [(2, 3)]), ("i,i", [(3,), (3,)]), ("ij,jk->ik", [(2, 3)]),
        ("ijk->ij", [(2, 3)]), ("b n d, b m d -> b n m", [(2, 3, 4), (2, 5, 4)]), ("ij,jk->ikz", [(2, 3), (3, 4)]),
        ("...i,...i->...", [(2, 3, 4), (3, 4)]), ("i...->...", [(2, 3, 4)]), ("bn,anm,bm->ba", [(2, 3), (5, 3, 4), (2, 4)]),
        ("ij,ij->ij", [(2, 3), (2, 4)]),
    ]
    for eq, shapes in eins:
        names = [f"t{i}" for i in range(len(shapes))]
        setup = [mk(n, s) for n, s in zip(names, shapes)]
        f.add(setup, f"out = torch.einsum('{eq}', {', '.join(names)})")
        f.add(setup, f"out = torch.einsum('{eq}', [{', '.join(names)}])")
    f.add([mk("a", (2, 3)), mk("b", (3, 4))], "out = torch.tensordot(a, b, dims=1)")
    f.add([mk("a", (2, 3, 4)), mk("b", (3, 4, 5))], "out = torch.tensordot(a, b, dims=2)")
    f.add([mk("a", (2, 3, 4)), mk("b", (5, 4, 3))], "out = torch.tensordot(a, b, dims=([1, 2], [2, 1]))")
    f.add([mk("a", (2, 3)), mk("b", (4, 5))], "out = torch.kron(a, b)")
    f.add([mk("a", (2, 5, 3)), mk("b", (2, 4, 3))], "out = torch.cdist(a, b)")
    f.add([mk("a", (4, 3)), mk("b", (4, 3))], "out = F.cosine_similarity(a, b)")
    f.add([mk("a", (4, 3)), mk("b", (1, 3))], "out = F.cosine_similarity(a, b, dim=-1)")
    f.add([mk("a", (4, 4))], "out = torch.linalg.inv(a)")
    f.add([mk("a", (2, 4, 4))], "out = torch.det(a)")
    f.add([mk("a", (4, 3))], "out = torch.linalg.pinv(a)")
    f.add([mk("a", (4, 3))], "torch.linalg.svd(a, full_matrices=False)", unpack=True)
    f.add([mk("a", (4, 3))], "torch.linalg.qr(a)", unpack=True)
    f.add([mk("a", (4, 4))], "out = a.diagonal()")
    f.add([mk("a", (4,))], "out = torch.diag(a)")
    f.add([mk("a", (4, 5))], "out = torch.diag(a)")
    f.add([mk("a", (4, 5))], "out = a.trace()")
    return f


def fam_index_ops():
    f = Family("index_ops")
    x = "x = torch.randn(3, 4, 5)"
    for d in [0, 1, 2, -1, 3]:
        for ishape in [(3, 4, 5), (2, 4, 5), (3, 2, 5), (1, 1, 1), (3, 4), (4, 4, 5), (3, 4, 6), (2, 2, 2)]:
            hi = 3
            setup = [x, f"i = torch.randint(0, {hi}, {tup(ishape)})"]
            f.add(setup, f"out = x.gather({d}, i)")
            f.add(setup, f"out = torch.gather(x, {d}, i)")
            f.add(setup + [f"src = torch.randn({shp(ishape)})"], f"out = x.scatter({d}, i, src)")
            f.add(setup, f"out = x.scatter({d}, i, 1.0)")
            f.add(setup + [f"src = torch.randn({shp(ishape)})"], f"out = x.scatter_add({d}, i, src)")
        for n in [1, 2, 5]:
            setup = [x, f"i = torch.randint(0, 3, ({n},))"]
            f.add(setup, f"out = x.index_select({d}, i)")
            f.add(setup, f"out = torch.index_select(x, {d}, i)")
            f.add(setup, f"out = x.index_fill({d}, i, 0.0)")
        f.add([x, "i = torch.randint(0, 3, (2, 2))"], f"out = x.index_select({d}, i)")
        f.add([x, "i = torch.randint(0, 3, (2,), dtype=torch.int32)"], f"out = x.index_select({d}, i)")
        f.add([x, "i = torch.randint(0, 3, (2,), dtype=torch.int32)"], f"out = x.gather({d}, i.view(1, 1, 2))")
        f.add([x, "i = torch.tensor(1)"], f"out = x.index_select({d}, i)")
        f.add([x, "i = torch.randn(2)"], f"out = x.index_select({d}, i)")
        f.add([x, "i = torch.ones(1, 1, 1)"], f"out = x.gather({d}, i)")
        for fn in ["argmax", "argmin", "cumsum", "cumprod", "softmax", "logcumsumexp"]:
            f.add(x, f"out = x.{fn}({d})")
            f.add(x, f"out = torch.{fn}(x, dim={d})")
        f.add(x, f"out = x.argmax(dim={d}, keepdim=True)")
    f.add(x, "out = x.argmax()")
    f.add(x, "out = torch.argmax(x, keepdim=True)")
    for shape in [(4, 4), (3, 5), (2, 3, 4), (4,), (0, 3)]:
        s = mk("x", shape)
        for k in ["", "1", "-1", "diagonal=2"]:
            f.add(s, f"out = x.tril({k})")
            f.add(s, f"out = torch.triu(x, {k})" if k else "out = torch.triu(x)")
    f.add([], "out = torch.tril(torch.ones(4, 4))")
    f.add([], "out = torch.ones(3, 3, dtype=torch.bool).triu(1)")
    for shape in [(4,), (2, 3), (), (0,)]:
        for C in ["5", "-1", "3"]:
            s = "t = torch.randint(0, 3, " + (tup(shape) if shape else "()") + ")"
            f.add(s, f"out = F.one_hot(t, {C})", dd=(C == "-1"))
            f.add(s, f"out = F.one_hot(t, num_classes={C})", dd=(C == "-1"))
    f.add("t = torch.randint(0, 3, (4,), dtype=torch.int32)", "out = F.one_hot(t, 5)")
    f.add("t = torch.randn(4)", "out = F.one_hot(t, 5)")
    f.add("t = torch.randint(0, 3, (4,))", "out = F.one_hot(t, 5).float()")
    f.add([x, "m = torch.randn(3, 4, 5) > 0"], "out = x.masked_fill(m, 0)")
    f.add([x, "m = torch.randn(3, 4, 5) > 0"], "out = x.masked_select(m)", dd=True)
    f.add([x, "m = torch.randn(3, 4, 5) > 0"], "out = x.masked_scatter(m, torch.randn(60))")
    f.add([x], "out = torch.nonzero(x)", dd=True)
    f.add([x], "out = x.nonzero(as_tuple=True)[0]", dd=True)
    f.add([x], "out = torch.where(x > 0)[0]", dd=True)
    f.add([x, "i = torch.randint(0, 3, (2,))", "v = torch.randn(2, 4, 5)"], "out = x.index_add(0, i, v)")
    f.add([x, "i = torch.randint(0, 3, (2,))", "v = torch.randn(2, 4, 5)"], "out = x.index_copy(0, i, v)")
    f.add([x, "i = torch.randint(0, 3, (2,))", "v = torch.randn(2, 4, 6)"], "out = x.index_add(0, i, v)")
    f.add(x, "out = torch.take_along_dim(x, x.argmax(-1, keepdim=True), -1)")
    f.add(x, "out = x.scatter_reduce(0, torch.zeros(1, 4, 5, dtype=torch.long), torch.ones(1, 4, 5), 'sum')")
    f.add(x, "out = torch.bucketize(x, torch.tensor([0.0, 1.0]))")
    f.add(x, "out = torch.searchsorted(torch.tensor([0.0, 1.0]), x)")
    f.add("t = torch.randint(0, 5, (10,))", "out = torch.bincount(t)", dd=True)
    f.add("t = torch.randint(0, 5, (10,))", "out = torch.unique(t)", dd=True)
    return f


def fam_convert():
    f = Family("convert")
    for dt in ["f32", "i64", "bool", "f16", "i32", "u8", "c64", "f64", "bf16"]:
        s = mk("x", (2, 3), dt)
        for m in ["float", "long", "half", "double", "int", "bool", "bfloat16", "short", "byte", "char"]:
            f.add(s, f"out = x.{m}()")
        for d in ["torch.float16", "torch.int64", "torch.bool", "torch.float64", "torch.complex64",
                  "dtype=torch.float32", "'cpu'", "'meta'", "torch.device('cpu')", "'cpu', torch.int32",
                  "device='meta', dtype=torch.float16", "x.dtype", "torch.zeros(1, dtype=torch.int8)",
                  "non_blocking=True", "torch.half", "torch.long", "torch.float", "torch.double"]:
            f.add(s, f"out = x.to({d})")
        f.add(s, "out = x.type(torch.float64)")
        f.add(s, "out = x.type_as(torch.zeros(1, dtype=torch.int16))")
        f.add(s, "out = x.cpu()")
        f.add(s, "out = x.float().requires_grad_()")
        f.add(s, "out = x.to(torch.float32).to('meta').double()")
        f.add(s, "out = x.new_zeros(1).to(x)")
        f.add(s, "out = x.abs() if x.dtype != torch.bool else x")
    f.add("x = torch.randn(2, 3)", "out = x.numpy()")
    f.add("x = torch.randn(2, 3)", "out = torch.from_numpy(x.numpy())")
    f.add("x = torch.randn(2, 3, dtype=torch.complex64)", "out = x.real")
    f.add("x = torch.randn(2, 3, dtype=torch.complex64)", "out = torch.view_as_real(x)")
    f.add("x = torch.randn(2, 3, 2)", "out = torch.view_as_complex(x)")
    f.add("x = torch.randn(2, 3)", "out = torch.polar(x, x)")
    f.add("x = torch.randn(2, 3)", "out = torch.complex(x, x)")
    # Complex numbers as rotary embeddings use them (LLaMA): the pair ops
    # broadcast and need one float dtype; the views need a last dim of 2
    # floats, or a complex tensor.
    f.add(["a = torch.randn(4, 1, 3)", "b = torch.randn(5, 3).double()"], "out = torch.polar(a.double(), b)")
    f.add(["a = torch.randn(4, 1, 3)", "b = torch.randn(5, 3)"], "out = torch.complex(a, b)")
    f.add(["a = torch.randn(4, 3)", "b = torch.randn(5)"], "out = torch.polar(a, b)")
    f.add(["a = torch.randn(4, 3)", "b = torch.randn(3).double()"], "out = torch.polar(a, b)")
    f.add("a = torch.randint(0, 5, (4, 3))", "out = torch.polar(a, a)")
    f.add("x = torch.randn(2, 5, 4, 2).double()", "out = torch.view_as_complex(x)")
    f.add("x = torch.randn(2, 5, 3)", "out = torch.view_as_complex(x)")
    f.add("x = torch.randint(0, 5, (2, 2))", "out = torch.view_as_complex(x)")
    f.add("x = torch.randn(2, 3, dtype=torch.complex128)", "out = torch.view_as_real(x)")
    f.add("x = torch.randn(2, 3)", "out = torch.view_as_real(x)")
    f.add(["x = torch.randn(2, 8, 4, 2)", "f = torch.polar(torch.ones(8, 4), torch.randn(8, 4))"],
          "out = torch.view_as_real(torch.view_as_complex(x) * f.view(1, 8, 1, 4)).flatten(2)")
    f.add("x = torch.randn(2, 3, dtype=torch.complex64)", "out = x.imag")
    f.add("x = torch.randn(2, 3)", "out = x.imag")
    return f


def fam_nn():
    f = Family("nn")
    # Linear
    for (inf, outf) in [(4, 5), (3, 1)]:
        for xs in [(2, inf), (inf,), (2, 3, inf), (2, 7), (0, inf), (2, 3, 7)]:
            for bias in ["", ", bias=False"]:
                f.add([f"m = nn.Linear({inf}, {outf}{bias})", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.Linear({inf}, {outf})", mk("x", (2, inf), "f64")], "out = m(x)")
        f.add([f"m = nn.Linear({inf}, {outf}).double()", mk("x", (2, inf), "f64")], "out = m(x)")
        f.add([f"m = nn.Linear({inf}, {outf}).half()", mk("x", (2, inf), "f16")], "out = m(x)")
        f.add([f"m = nn.Linear({inf}, {outf})", mk("x", (2, inf), "i64")], "out = m(x)")
    f.add(["m = nn.Linear(4, 5)", "x = torch.randn(2, 4)"], "out = m.weight")
    f.add(["m = nn.Linear(4, 5)", "x = torch.randn(2, 4)"], "out = m.bias")
    f.add(["m = nn.Bilinear(3, 4, 5)", "a = torch.randn(2, 3)", "b = torch.randn(2, 4)"], "out = m(a, b)")
    f.add(["m = nn.Bilinear(3, 4, 5)", "a = torch.randn(2, 3)", "b = torch.randn(2, 5)"], "out = m(a, b)")
    # Conv
    for dim in [1, 2, 3]:
        sp = {1: (10,), 2: (9, 8), 3: (5, 6, 7)}[dim]
        for cin, cout, k, st, pad, dil, g in [
                (4, 6, 3, 1, 0, 1, 1), (4, 6, 3, 2, 1, 1, 1), (4, 6, 2, 1, 1, 2, 1), (4, 8, 3, 1, 1, 1, 2),
                (4, 4, 1, 3, 0, 1, 4), (4, 6, 3, 1, "'same'", 1, 1), (4, 6, 4, 1, "'same'", 2, 1),
                (4, 6, 3, 1, "'valid'", 1, 1), (4, 6, 3, 2, "'same'", 1, 1), (4, 6, 3, 1, 0, 1, 3),
                (4, 6, 5, 1, 0, 3, 1), (4, 6, 3, 2, 2, 1, 2)]:
            layer = f"m = nn.Conv{dim}d({cin}, {cout}, {k}, stride={st}, padding={pad}, dilation={dil}, groups={g})"
            for xs in [(2, cin) + sp, (cin,) + sp, (2, 3) + sp, sp]:
                f.add([layer, mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.Conv{dim}d(4, 6, 3, padding=1, padding_mode='reflect')", mk("x", (2, 4) + sp)], "out = m(x)")
        f.add([f"m = nn.Conv{dim}d(4, 6, 3, padding=1, padding_mode='circular')", mk("x", (2, 4) + sp)], "out = m(x)")
        f.add([f"m = nn.Conv{dim}d(4, 6, {tuple(range(1, dim + 1)) if dim > 1 else 2}, stride={tuple([2] * dim) if dim > 1 else 2})",
               mk("x", (2, 4) + sp)], "out = m(x)")
        f.add([f"m = nn.Conv{dim}d(4, 6, 11)", mk("x", (2, 4) + sp)], "out = m(x)")
        f.add([f"m = nn.Conv{dim}d(4, 6, 3)", mk("x", (2, 4) + sp, "f64")], "out = m(x)")
        for cin, cout, k, st, pad, op, dil, g in [
                (4, 6, 3, 1, 0, 0, 1, 1), (4, 6, 3, 2, 1, 1, 1, 1), (4, 6, 4, 2, 1, 0, 1, 1), (4, 6, 3, 2, 0, 0, 2, 2),
                (4, 6, 3, 3, 1, 2, 1, 1), (4, 6, 3, 1, 0, 1, 1, 1), (4, 6, 2, 2, 0, 0, 1, 2), (4, 8, 3, 2, 1, 1, 2, 4)]:
            layer = (f"m = nn.ConvTranspose{dim}d({cin}, {cout}, {k}, stride={st}, padding={pad}, "
                     f"output_padding={op}, dilation={dil}, groups={g})")
            for xs in [(2, cin) + sp, (cin,) + sp, (2, 5) + sp]:
                f.add([layer, mk("x", xs)], "out = m(x)")
        out_sz = tuple(2 * s for s in sp)
        f.add([f"m = nn.ConvTranspose{dim}d(4, 6, 3, stride=2, padding=1)", mk("x", (2, 4) + sp)],
              f"out = m(x, output_size={list(out_sz)})")
    f.add("m = nn.Conv2d(4, 6, 3, groups=3)", "out = m.weight")
    f.add("m = nn.Conv2d(4, 6, 3, stride=2, padding='same')", "out = m.weight")
    # Pools
    for dim in [1, 2, 3]:
        sp = {1: (10,), 2: (9, 8), 3: (5, 6, 7)}[dim]
        for k, st, pad, dil, ceil in [(2, None, 0, 1, False), (3, 2, 1, 1, False), (3, 2, 1, 1, True),
                                      (2, 2, 0, 1, True), (3, 3, 0, 1, True), (2, 1, 1, 2, False),
                                      (3, 2, 2, 1, False), (4, 3, 2, 1, True), (5, 1, 0, 1, False),
                                      (11, 1, 0, 1, False)]:
            args = f"{k}, stride={st}, padding={pad}, ceil_mode={ceil}"
            for xs in [(2, 3) + sp, (3,) + sp]:
                f.add([f"m = nn.MaxPool{dim}d({args}, dilation={dil})", mk("x", xs)], "out = m(x)")
                f.add([f"m = nn.AvgPool{dim}d({args})", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.MaxPool{dim}d(2, return_indices=True)", mk("x", (2, 3) + sp)], "out, idx = m(x)")
        f.add([f"m = nn.MaxPool{dim}d(2)", mk("x", sp)], "out = m(x)")
        for o in ["1", "2", "(3,) * " + str(dim), "4", "None" if dim == 1 else "(None,) + (2,) * " + str(dim - 1)]:
            for xs in [(2, 3) + sp, (3,) + sp]:
                f.add([f"m = nn.AdaptiveAvgPool{dim}d({o})", mk("x", xs)], "out = m(x)")
                f.add([f"m = nn.AdaptiveMaxPool{dim}d({o})", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.AdaptiveMaxPool{dim}d(2, return_indices=True)", mk("x", (2, 3) + sp)], "out, idx = m(x)")
        f.add([f"m = nn.AdaptiveAvgPool{dim}d(2)", mk("x", (5,))], "out = m(x)")
    # Norms
    for dim, xs_list in [(1, [(4, 3), (4, 3, 5), (4, 5), (4, 3, 5, 6), (3,)]), (2, [(2, 3, 4, 5), (3, 4, 5), (2, 4, 4, 5)]),
                         (3, [(2, 3, 2, 2, 2), (2, 3, 4, 5)])]:
        for xs in xs_list:
            f.add([f"m = nn.BatchNorm{dim}d(3)", mk("x", xs)], "out = m(x)")
            f.add([f"m = nn.InstanceNorm{dim}d(3, affine=True)", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.BatchNorm{dim}d(3)", mk("x", xs_list[0], "f64")], "out = m(x)")
    for ns, xs in [("5", (2, 4, 5)), ("5", (2, 5, 4)), ("(4, 5)", (2, 4, 5)), ("[3, 4, 5]", (2, 3, 4, 5)),
                   ("(5, 4)", (2, 4, 5)), ("5", (5,)), ("[2, 4, 5]", (4, 5))]:
        f.add([f"m = nn.LayerNorm({ns})", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.LayerNorm({ns}, elementwise_affine=False)", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.RMSNorm({ns})", mk("x", xs)], "out = m(x)")
        f.add([mk("x", xs)], f"out = F.layer_norm(x, {ns if ns.startswith(('(', '[')) else '(' + ns + ',)'})")
    f.add(["m = nn.LayerNorm(5)", mk("x", (2, 5), "f64")], "out = m(x)")
    for G, C, xs in [(2, 4, (2, 4, 5)), (2, 4, (2, 4, 3, 3)), (3, 6, (2, 6)), (2, 4, (2, 6, 5)), (4, 4, (3, 4, 1))]:
        f.add([f"m = nn.GroupNorm({G}, {C})", mk("x", xs)], "out = m(x)")
    f.add([], "m = nn.GroupNorm(3, 4)")
    # Embedding
    for xs in [(4,), (2, 3), (), (2, 3, 4)]:
        for dt in ["i64", "i32"]:
            s = ("i = torch.randint(0, 10, " + (tup(xs) if xs else "()") + (", dtype=torch.int32)" if dt == "i32" else ")"))
            f.add(["m = nn.Embedding(10, 8)", s], "out = m(i)")
            f.add(["m = nn.Embedding(10, 8, padding_idx=0)", s], "out = m(i)")
            f.add(["w = torch.randn(10, 8)", s], "out = F.embedding(i, w)")
        f.add(["m = nn.Embedding(10, 8)", mk("i", xs if xs else (1,), "f32")], "out = m(i)")
    f.add(["m = nn.Embedding(10, 8)"], "out = m.weight")
    f.add(["m = nn.EmbeddingBag(10, 8)", "i = torch.randint(0, 10, (2, 4))"], "out = m(i)")
    # RNNs
    for cls in ["RNN", "GRU", "LSTM"]:
        for L, N, Hin, H in [(5, 2, 4, 6)]:
            for bf in [False, True]:
                for bi in [False, True]:
                    for nl in [1, 2]:
                        for proj in ([0, 3] if cls == "LSTM" else [0]):
                            extra = f", proj_size={proj}" if proj else ""
                            layer = f"m = nn.{cls}({Hin}, {H}, num_layers={nl}, batch_first={bf}, bidirectional={bi}{extra})"
                            for xs in [(N, L, Hin) if bf else (L, N, Hin), (L, Hin), (L, N, Hin + 1)]:
                                if cls == "LSTM":
                                    f.add([layer, mk("x", xs)], "out, (h, c) = m(x)")
                                else:
                                    f.add([layer, mk("x", xs)], "out, h = m(x)")
                            xs = (N, L, Hin) if bf else (L, N, Hin)
                            D = 2 if bi else 1
                            Hout = proj if proj else H
                            if cls == "LSTM":
                                f.add([layer, mk("x", xs), f"h0 = torch.zeros({D * nl}, {N}, {Hout})",
                                       f"c0 = torch.zeros({D * nl}, {N}, {H})"], "out, (h, c) = m(x, (h0, c0))")
                            else:
                                f.add([layer, mk("x", xs), f"h0 = torch.zeros({D * nl}, {N}, {H})"], "out, h = m(x, h0)")
                                f.add([layer, mk("x", xs), f"h0 = torch.zeros({D * nl + 1}, {N}, {H})"], "out, h = m(x, h0)")
        f.add([f"m = nn.{cls}Cell(4, 6)", mk("x", (3, 4))], "out = m(x)" if cls != "LSTM" else "h, c = m(x)")
        f.add([f"m = nn.{cls}Cell(4, 6)", mk("x", (4,))], "out = m(x)" if cls != "LSTM" else "h, c = m(x)")
        f.add([f"m = nn.{cls}Cell(4, 6)", mk("x", (3, 5))], "out = m(x)" if cls != "LSTM" else "h, c = m(x)")
    f.add(["m = nn.LSTM(4, 6)", mk("x", (5, 2, 4), "f64")], "out, (h, c) = m(x)")
    # MHA
    for bf in [False, True]:
        for E, H in [(8, 2), (8, 1)]:
            for kd in [None, 6]:
                extra = f", kdim={kd}, vdim={kd}" if kd else ""
                layer = f"m = nn.MultiheadAttention({E}, {H}, batch_first={bf}{extra})"
                Ek = kd or E
                q = (2, 5, E) if bf else (5, 2, E)
                k = (2, 7, Ek) if bf else (7, 2, Ek)
                setup = [layer, mk("q", q), mk("k", k), mk("v", k)]
                f.add(setup, "out, w = m(q, k, v)")
                f.add(setup, "out, w = m(q, k, v, average_attn_weights=False)")
                f.add(setup, "out, w = m(q, k, v, need_weights=False)")
                f.add(setup + ["mask = torch.zeros(5, 7, dtype=torch.bool)"], "out, w = m(q, k, v, attn_mask=mask)")
                f.add([layer, mk("q", (5, E)), mk("k", (7, Ek)), mk("v", (7, Ek))], "out, w = m(q, k, v)")
                f.add([layer, mk("q", q[:2] + (E + 1,)), mk("k", k), mk("v", k)], "out, w = m(q, k, v)")
    f.add([], "m = nn.MultiheadAttention(8, 3)")
    f.add(["m = nn.MultiheadAttention(8, 2, add_bias_kv=True)", mk("q", (5, 2, 8))], "out, w = m(q, q, q)")
    f.add(["m = nn.MultiheadAttention(8, 2, add_zero_attn=True)", mk("q", (5, 2, 8))], "out, w = m(q, q, q)")
    for bf in [False, True]:
        for xs in [(5, 2, 8), (5, 8), (5, 2, 6)]:
            f.add([f"m = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first={bf})", mk("x", xs)], "out = m(x)")
            f.add([f"m = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first={bf}, norm_first=True)",
                   mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first={bf})", mk("t", (4, 2, 8)),
               mk("mem", (6, 2, 8))], "out = m(t, mem)")
    f.add(["layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)", "m = nn.TransformerEncoder(layer, 2)",
           mk("x", (5, 2, 8))], "out = m(x)")
    f.add(["m = nn.Transformer(8, 2, 1, 1, 16)", mk("s", (5, 2, 8)), mk("t", (4, 2, 8))], "out = m(s, t)")
    f.add(["m = nn.Transformer(8, 2, 1, 1, 16)", mk("s", (5, 3, 8)), mk("t", (4, 2, 8))], "out = m(s, t)")
    # Flatten / Unflatten
    for a in ["", "0", "1, 2", "start_dim=2", "0, -2"]:
        f.add([f"m = nn.Flatten({a})", mk("x", (2, 3, 4, 5))], "out = m(x)")
    for a in ["1, (3, 4)", "1, (2, 6)", "-1, (5, 1)", "1, (-1, 2)", "1, (5, 5)"]:
        f.add([f"m = nn.Unflatten({a})", mk("x", (2, 12, 5))], "out = m(x)")
    # Upsample / PixelShuffle / pads
    for args, xs in [("scale_factor=2", (2, 3, 4, 5)), ("scale_factor=2, mode='bilinear'", (2, 3, 4, 5)),
                     ("size=(7, 9)", (2, 3, 4, 5)), ("scale_factor=1.5", (2, 3, 5)), ("size=10", (2, 3, 4)),
                     ("scale_factor=(2, 3)", (2, 3, 4, 5)), ("scale_factor=2, mode='trilinear'", (1, 2, 3, 4, 5)),
                     ("scale_factor=2, mode='bilinear'", (2, 3, 4)), ("size=5", (2, 3, 4, 5)),
                     ("scale_factor=0.5", (2, 3, 7, 9)), ("scale_factor=2, mode='nearest'", (3, 4))]:
        f.add([f"m = nn.Upsample({args})", mk("x", xs)], "out = m(x)")
    for r, xs in [(2, (1, 8, 3, 3)), (3, (2, 9, 2, 4)), (2, (8, 3, 3)), (2, (1, 6, 3, 3))]:
        f.add([f"m = nn.PixelShuffle({r})", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.PixelUnshuffle({r})", mk("x", (1, 2, 6, 6))], "out = m(x)")
    for cls, xs in [("ZeroPad2d", (2, 3, 4, 5)), ("ConstantPad1d", (2, 3, 4)), ("ReflectionPad2d", (2, 3, 4, 5)),
                    ("ReplicationPad1d", (2, 3, 4)), ("ConstantPad3d", (1, 2, 3, 4, 5)), ("ReflectionPad1d", (2, 3, 4)),
                    ("CircularPad2d", (2, 3, 4, 5)), ("ZeroPad1d", (3, 4)), ("ReplicationPad3d", (1, 2, 3, 4, 5))]:
        const = ", 0.5" if cls.startswith("Constant") else ""
        for p in ["1", "2", "(1, 2)" if "1d" in cls else "(1, 2, 0, 3)" if "2d" in cls else "(1, 0, 2, 1, 0, 1)", "4"]:
            f.add([f"m = nn.{cls}({p}{const})", mk("x", xs)], "out = m(x)")
    # Other layers
    for cls in ["ReLU()", "GELU()", "Tanh()", "Dropout(0.1)", "Identity()", "Softmax(dim=-1)", "LogSoftmax(1)",
                "SiLU()", "LeakyReLU(0.2)", "PReLU()", "PReLU(3)", "PReLU(4)", "Hardswish()", "ELU()", "Sigmoid()",
                "Dropout2d()", "Softmax()", "GLU()", "GLU(1)"]:
        f.add([f"m = nn.{cls}", mk("x", (2, 3, 4))], "out = m(x)")
    f.add(["m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))", mk("x", (3, 4))], "out = m(x)")
    f.add(["m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(7, 2))", mk("x", (3, 4))], "out = m(x)")
    f.add(["m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten(), nn.LazyLinear(5))", mk("x", (2, 3, 6, 6))], "out = m(x)")
    f.add(["m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))", mk("x", (3, 4))], "out = m[0](x)")
    f.add(["m = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])", mk("x", (3, 4))], "out = m[2](x)")
    for cls, a, b in [("CrossEntropyLoss()", (4, 5), "t = torch.randint(0, 5, (4,))"),
                      ("CrossEntropyLoss(reduction='none')", (4, 5), "t = torch.randint(0, 5, (4,))"),
                      ("CrossEntropyLoss(reduction='none')", (4, 5, 6), "t = torch.randint(0, 5, (4, 6))"),
                      ("CrossEntropyLoss(label_smoothing=0.1)", (4, 5), "t = torch.randn(4, 5).softmax(-1)"),
                      ("CrossEntropyLoss()", (4, 5), "t = torch.randint(0, 5, (3,))"),
                      ("NLLLoss(reduction='sum')", (4, 5), "t = torch.randint(0, 5, (4,))"),
                      ("MSELoss()", (4, 5), "t = torch.randn(4, 5)"),
                      ("MSELoss(reduction='none')", (4, 5), "t = torch.randn(4, 5)"),
                      ("L1Loss(reduction='none')", (4, 1), "t = torch.randn(4, 1)"),
                      ("BCEWithLogitsLoss()", (4, 1), "t = torch.rand(4, 1)"),
                      ("BCEWithLogitsLoss()", (4, 1), "t = torch.rand(4)"),
                      ("BCEWithLogitsLoss(reduction='none')", (4, 3), "t = torch.rand(4, 3)"),
                      ("SmoothL1Loss()", (4, 3), "t = torch.rand(4, 3)"),
                      ("KLDivLoss(reduction='batchmean')", (4, 3), "t = torch.rand(4, 3)")]:
        f.add([f"crit = nn.{cls}", mk("x", a), b], "out = crit(x, t)")
    return f


def fam_functional():
    f = Family("functional")
    for xs, ws in [((2, 4), (5, 4)), ((4,), (5, 4)), ((2, 3, 4), (5, 4)), ((2, 4), (4,)), ((2, 4), (5, 3)),
                   ((), (5, 4))]:
        setup = [mk("x", xs) if xs else "x = torch.tensor(1.0)", mk("w", ws)]
        f.add(setup, "out = F.linear(x, w)")
        f.add(setup + ["b = torch.randn(5)"], "out = F.linear(x, w, b)")
        f.add(setup + ["b = torch.randn(3)"], "out = F.linear(x, w, b)")
    # conv2d
    for xs, ws, kw in [((2, 4, 9, 8), (6, 4, 3, 3), ""), ((2, 4, 9, 8), (6, 4, 3, 3), "stride=2, padding=1"),
                       ((2, 4, 9, 8), (6, 2, 3, 3), "groups=2"), ((4, 9, 8), (6, 4, 3, 3), ""),
                       ((2, 4, 9, 8), (6, 3, 3, 3), ""), ((2, 4, 9, 8), (6, 4, 3, 3), "padding='same'"),
                       ((2, 4, 9, 8), (6, 4, 3, 3), "padding='same', stride=2"), ((2, 4, 9, 8), (6, 4, 3, 3), "padding='valid'"),
                       ((2, 4, 9, 8), (6, 4, 3, 3), "dilation=2, padding=(1, 2)"), ((2, 4, 9, 8), (6, 4, 10, 3), ""),
                       ((2, 4, 9), (6, 4, 3, 3), ""), ((2, 4, 9, 8), (6, 4, 3, 3), "stride=(2, 1)")]:
        setup = [mk("x", xs), mk("w", ws)]
        f.add(setup, f"out = F.conv2d(x, w{', ' + kw if kw else ''})")
        f.add(setup + ["b = torch.randn(6)"], f"out = F.conv2d(x, w, b{', ' + kw if kw else ''})")
    f.add([mk("x", (2, 4, 10)), mk("w", (6, 4, 3))], "out = F.conv1d(x, w, stride=2)")
    f.add([mk("x", (2, 4, 10)), mk("w", (4, 6, 3))], "out = F.conv_transpose1d(x, w, stride=2)")
    f.add([mk("x", (2, 4, 5, 5)), mk("w", (4, 6, 3, 3))], "out = F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)")
    f.add([mk("x", (2, 4, 5, 5)), mk("w", (4, 3, 3, 3))], "out = F.conv_transpose2d(x, w, groups=2)")
    # pad
    for xs in [(2, 3, 4), (2, 3, 4, 5), (4,), (3, 4)]:
        for p in ["(1, 1)", "(0, 2)", "(1, 2, 3, 4)", "(1, 1, 1, 1, 1, 1)", "(-1, -1)", "(1,)", "(1, 1, 1, 1, 1, 1, 1, 1)",
                  "[2, 0]", "(1, -2, 0, 1)"]:
            f.add(mk("x", xs), f"out = F.pad(x, {p})")
            f.add(mk("x", xs), f"out = F.pad(x, {p}, value=1.0)")
        for mode in ["reflect", "replicate", "circular"]:
            for p in ["(1, 1)", "(1, 2, 1, 2)", "(3, 3)", "(4, 4)", "(1, 1, 1, 1, 1, 1)"]:
                f.add(mk("x", xs), f"out = F.pad(x, {p}, mode='{mode}')")
    # interpolate
    for xs in [(2, 3, 8), (2, 3, 8, 6), (1, 2, 4, 4, 4), (3, 8)]:
        nsp = len(xs) - 2
        for kw in ["scale_factor=2", "scale_factor=0.5", "scale_factor=1.5", "size=5", f"size={tuple([5] * nsp) if nsp > 1 else (5,)}",
                   "scale_factor=2, mode='bilinear'", "scale_factor=2, mode='linear'", "scale_factor=2, mode='trilinear'",
                   "scale_factor=2, mode='bicubic', align_corners=False", "size=4, mode='area'", "",
                   "size=4, scale_factor=2", "scale_factor=2, mode='nearest-exact'", f"scale_factor={tuple([2] * nsp)}",
                   "size=(3, 4, 5, 6)", "scale_factor=3, mode='bilinear', align_corners=True"]:
            f.add(mk("x", xs), f"out = F.interpolate(x, {kw})" if kw else "out = F.interpolate(x)")
        f.add(mk("x", xs), "out = F.upsample(x, scale_factor=2)")
    # softmax family
    for xs in [(2, 3, 4), (5,), (2, 3)]:
        for d in [0, -1, 1, 3, -4]:
            for fn in ["softmax", "log_softmax", "softmin", "normalize", "glu", "gumbel_softmax"]:
                f.add(mk("x", xs), f"out = F.{fn}(x, dim={d})")
        f.add(mk("x", xs, "f16"), "out = F.softmax(x, dim=-1)")
        f.add(mk("x", xs, "f16"), "out = F.softmax(x, dim=-1, dtype=torch.float32)")
        f.add(mk("x", xs, "i64"), "out = F.softmax(x, dim=-1)")
        f.add(mk("x", xs), "out = F.softmax(x)")
        f.add(mk("x", xs), "out = F.normalize(x)")
        f.add(mk("x", xs), "out = F.normalize(x, p=1, dim=-1)")
    # losses
    for xs, ts, tdt in [((4, 5), (4,), "i64"), ((4, 5), (4, 5), "f32"), ((4, 5, 6), (4, 6), "i64"), ((5,), (), "i64"),
                        ((4, 5), (3,), "i64"), ((4, 5), (4,), "f32"), ((4, 5), (4, 1), "i64"), ((4, 5), (4,), "i32"),
                        ((4, 5, 6, 7), (4, 6, 7), "i64"), ((4, 5, 6), (4, 5), "i64")]:
        tline = (f"t = torch.randint(0, 5, {tup(ts) if ts else '()'}{', dtype=torch.int32' if tdt == 'i32' else ''})"
                 if tdt != "f32" else mk("t", ts))
        if tdt == "f32" and ts == xs:
            tline = f"t = torch.randn({shp(ts)}).softmax(1)"
        setup = [mk("x", xs), tline]
        for red in ["", ", reduction='none'", ", reduction='sum'", ", reduction='mean'"]:
            f.add(setup, f"out = F.cross_entropy(x, t{red})")
            f.add(setup, f"out = F.nll_loss(x.log_softmax(1 if x.dim() > 1 else 0), t{red})")
        f.add(setup, "out = F.cross_entropy(x, t, ignore_index=0, label_smoothing=0.1)")
    for xs, ts in [((4, 5), (4, 5)), ((4, 1), (4,)), ((4,), (4, 1)), ((4, 5), (5,)), ((4, 5), (3,)), ((2, 3), (2, 3, 1))]:
        setup = [mk("x", xs), mk("t", ts)]
        for red in ["", ", reduction='none'", ", reduction='sum'"]:
            f.add(setup, f"out = F.mse_loss(x, t{red})")
            f.add(setup, f"out = F.l1_loss(x, t{red})")
            f.add(setup, f"out = F.binary_cross_entropy_with_logits(x, t{red})")
            f.add(setup, f"out = F.smooth_l1_loss(x, t{red})")
            f.add([mk("x", xs), f"t = torch.rand({shp(ts)})"], f"out = F.binary_cross_entropy(x.sigmoid(), t{red})")
    f.add([mk("x", (4, 5)), mk("t", (4, 5))], "out = F.kl_div(x, t, reduction='batchmean')")
    f.add([mk("x", (4, 5)), mk("t", (4, 5), "f64")], "out = F.mse_loss(x, t)")
    # sdpa
    for qs, ks, vs, kw in [((2, 4, 5, 8), (2, 4, 7, 8), (2, 4, 7, 8), ""), ((2, 4, 5, 8), (2, 4, 7, 8), (2, 4, 7, 6), ""),
                           ((5, 8), (7, 8), (7, 8), ""), ((2, 4, 5, 8), (2, 4, 7, 6), (2, 4, 7, 8), ""),
                           ((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 8), ""), ((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 8), "enable_gqa=True"),
                           ((2, 4, 5, 8), (2, 4, 5, 8), (2, 4, 5, 8), "is_causal=True"), ((2, 4, 5, 8), (1, 4, 7, 8), (1, 4, 7, 8), ""),
                           ((3, 5, 8), (3, 7, 8), (3, 7, 8), "dropout_p=0.1"), ((2, 4, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8), "enable_gqa=True")]:
        setup = [mk("q", qs), mk("k", ks), mk("v", vs)]
        f.add(setup, f"out = F.scaled_dot_product_attention(q, k, v{', ' + kw if kw else ''})")
        f.add(setup + [f"mask = torch.ones({qs[-2]}, {ks[-2]}, dtype=torch.bool)"], "out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)")
        f.add(setup + [f"mask = torch.ones({qs[-2]}, {ks[-2] + 1}, dtype=torch.bool)"], "out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)")
    f.add([mk("q", (2, 5, 8), "f16"), mk("k", (2, 7, 8)), mk("v", (2, 7, 8))], "out = F.scaled_dot_product_attention(q, k, v)")
    # norms
    for xs, ns in [((2, 3, 4), "(4,)"), ((2, 3, 4), "(3, 4)"), ((2, 3, 4), "(3,)"), ((2, 3, 4), "[4]"), ((4,), "(4,)")]:
        f.add(mk("x", xs), f"out = F.layer_norm(x, {ns})")
        f.add([mk("x", xs), "w = torch.ones(4)", "b = torch.zeros(4)"], f"out = F.layer_norm(x, {ns}, w, b)")
        f.add(mk("x", xs), f"out = F.rms_norm(x, {ns})")
    f.add([mk("x", (2, 4, 5))], "out = F.group_norm(x, 2)")
    f.add([mk("x", (2, 4, 5))], "out = F.group_norm(x, 3)")
    f.add([mk("x", (2, 3, 5)), "rm = torch.zeros(3)", "rv = torch.ones(3)"], "out = F.batch_norm(x, rm, rv)")
    f.add([mk("x", (2, 4, 5)), "rm = torch.zeros(3)", "rv = torch.ones(3)"], "out = F.batch_norm(x, rm, rv)")
    f.add([mk("x", (2, 3, 5))], "out = F.instance_norm(x)")
    # embedding / one_hot
    for xs in [(4,), (2, 3), ()]:
        i = "i = torch.randint(0, 10, " + (tup(xs) if xs else "()") + ")"
        f.add([i, "w = torch.randn(10, 8)"], "out = F.embedding(i, w)")
        f.add([i, "w = torch.randn(10, 8, dtype=torch.float16)"], "out = F.embedding(i, w)")
        f.add([i, "w = torch.randn(10, 8)"], "out = F.one_hot(i, 10)")
        f.add([i.replace("0, 10", "0, 3"), "w = torch.randn(10, 8)"], "out = F.one_hot(i)", dd=True)
    f.add(["i = torch.randn(4)", "w = torch.randn(10, 8)"], "out = F.embedding(i, w)")
    f.add(["i = torch.randint(0, 10, (2, 3))", "w = torch.randn(10)"], "out = F.embedding(i, w)")
    # unfold / fold / pixel_shuffle / pools
    for xs, kw in [((2, 3, 8, 8), "3"), ((2, 3, 8, 8), "kernel_size=2, stride=2"), ((2, 3, 8, 8), "(2, 3), padding=1"),
                   ((2, 3, 8, 8), "3, dilation=2"), ((3, 8, 8), "2"), ((2, 3, 8), "2"), ((2, 3, 4, 4), "5")]:
        f.add(mk("x", xs), f"out = F.unfold(x, {kw})")
    f.add(mk("x", (2, 12, 9)), "out = F.fold(x, (4, 4), 2)")
    f.add(mk("x", (1, 8, 3, 3)), "out = F.pixel_shuffle(x, 2)")
    f.add(mk("x", (1, 2, 6, 6)), "out = F.pixel_unshuffle(x, 3)")
    for xs in [(2, 3, 9, 8), (3, 9, 8), (2, 3, 10)]:
        f.add(mk("x", xs), "out = F.max_pool2d(x, 2)")
        f.add(mk("x", xs), "out = F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)")
        f.add(mk("x", xs), "out = F.avg_pool2d(x, (2, 3))")
        f.add(mk("x", xs), "out = F.adaptive_avg_pool2d(x, (1, 1))")
        f.add(mk("x", xs), "out = F.adaptive_avg_pool2d(x, 3)")
        f.add(mk("x", xs), "out = F.adaptive_max_pool2d(x, (None, 2))")
        f.add(mk("x", xs), "out = F.max_pool1d(x, 2)")
        f.add(mk("x", xs), "out = F.avg_pool1d(x, 3, 2)")
        f.add(mk("x", xs), "out = F.adaptive_avg_pool1d(x, 4)")
        f.add(mk("x", xs), "out, idx = F.max_pool2d(x, 2, return_indices=True)")
    for fn in ["relu", "gelu", "silu", "tanh", "sigmoid", "elu", "leaky_relu", "hardswish", "mish", "dropout",
               "relu6", "logsigmoid", "softsign", "tanhshrink", "selu", "celu"]:
        f.add(mk("x", (2, 3)), f"out = F.{fn}(x)")
        f.add(mk("x", (2, 3), "f64"), f"out = F.{fn}(x)")
    f.add(mk("x", (2, 3)), "out = F.dropout(x, p=0.5, training=True)")
    f.add(mk("x", (2, 6)), "out = F.glu(x)")
    f.add(mk("x", (2, 5)), "out = F.glu(x)")
    f.add([mk("x", (2, 3)), mk("y", (2, 4))], "out = F.pairwise_distance(x, y)")
    f.add([mk("x", (2, 3)), mk("y", (2, 3)), mk("w", (5, 3, 3))], "out = F.bilinear(x, y, w)")
    return f


# ---------------------------------------------------------------- coverage: more names per family
# (issue #4: >= 250 functions/methods and >= 60 nn layers, each with golden cases)

def more_pointwise(f):
    unary = ["torch.log", "torch.log10", "torch.expm1", "torch.cos", "torch.tan", "torch.asin", "torch.acos",
             "torch.atan", "torch.cosh", "torch.asinh", "torch.acosh", "torch.atanh", "torch.erfc", "torch.erfinv",
             "torch.sinc", "torch.deg2rad", "torch.rad2deg", "torch.digamma", "torch.lgamma", "torch.i0",
             "torch.ceil", "torch.fix", "torch.positive", "torch.negative", "torch.absolute", "torch.sgn",
             "torch.signbit", "torch.isinf", "torch.isfinite", "torch.isposinf", "torch.isneginf", "torch.isreal",
             "torch.logical_not", "torch.bitwise_not", "torch.clamp_max", "torch.clip", "torch.relu_",
             "F.hardshrink", "F.softshrink", "F.hardsigmoid", "F.rrelu", "F.threshold", "F.alpha_dropout",
             "F.feature_alpha_dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d", "torch.selu", "torch.celu",
             "torch.conj", "torch.resolve_conj", "torch.exp_", "torch.sigmoid_", "torch.arcsin", "torch.arctan"]
    for dt in ["f32", "f64", "i64", "bool", "f16"]:
        for un in unary:
            extra = {"torch.clamp_max": ", 0.5", "F.threshold": ", 0.1, 20.0"}.get(un, "")
            if dt in ("bool", "i64") and un.startswith("F.") and un not in ("F.hardshrink",):
                continue
            f.add(mk("a", (2, 3), dt), f"out = {un}(a{extra})")
    for fn in ["fmax", "fmin", "copysign", "xlogy", "float_power", "true_divide", "floor_divide", "ne", "le", "gt",
               "logical_or", "logical_xor", "bitwise_or", "bitwise_xor", "ldexp", "subtract", "multiply",
               "greater", "less_equal", "not_equal", "isclose", "heaviside", "mul", "sub", "div", "rsub",
               "minimum", "fmod", "remainder", "hypot", "arctan2", "bitwise_left_shift"]:
        for da, db, sa, sb in [("f32", "f32", (2, 3), (3,)), ("i64", "f32", (2, 1), (1, 3)), ("i32", "i64", (3,), (2, 3)),
                               ("f32", "f32", (2, 3), (4,)), ("bool", "bool", (2, 3), (2, 3))]:
            f.add([mk("a", sa, da), mk("b", sb, db)], f"out = torch.{fn}(a, b)")
        f.add(mk("a", (2, 3)), f"out = a.{fn}(2)")
    for mode in ["'floor'", "'trunc'", "None"]:
        for da in ["f32", "i64"]:
            f.add([mk("a", (2, 3), da), mk("b", (3,), da)], f"out = torch.div(a, b, rounding_mode={mode})")
    for sa, sb, sc in [((2, 3), (3,), (2, 1)), ((2, 3), (4,), (3,)), ((3,), (3,), (3,))]:
        s = [mk("a", sa), mk("b", sb), mk("c", sc)]
        f.add(s, "out = torch.addcdiv(a, b, c, value=0.5)")
        f.add(s, "out = torch.addcmul(a, b, c)")
        f.add(s, "out = a.addcmul(b, c)")
        f.add(s, "out = torch.lerp(a, b, c)")
        f.add(s, "out = a.lerp(b, 0.3)")
        f.add(s, "out = torch.clamp(a, b, c)")
    for dt in ["f32", "i64", "bool"]:
        f.add(mk("a", (2, 3), dt), "out = a.clamp_max(1)")
        f.add(mk("a", (2, 3), dt), "out = a.sign()")
        f.add(mk("a", (2, 3), dt), "out = a.exp()")
        f.add(mk("a", (2, 3), dt), "out = a.logical_not()")
        f.add(mk("a", (2, 3), dt), "out = a.abs_()" if dt != "bool" else "out = a.clone()")
    return f


def more_reduction(f):
    for shape in [(2, 3, 4), (5,)]:
        n = len(shape)
        for dt in ["f32", "i64", "f16"]:
            s = mk("x", shape, dt)
            for d in ["", "0", "-1", f"{n}"]:
                a = f"x{', ' + d if d else ''}"
                for fn in ["std_mean", "var_mean"]:
                    f.add(s, f"torch.{fn}({a})", unpack=True)
                f.add(s, f"torch.aminmax(x{', dim=' + d if d else ''})", unpack=True)
                f.add(s, f"out = torch.nanmean(x{', ' + d if d else ''})")
                f.add(s, f"out = torch.count_nonzero(x{', ' + d if d else ''})")
                f.add(s, f"out = torch.amin(x{', ' + d if d else ''})")
                f.add(s, f"out = torch.all(x{', ' + d if d else ''})")
                if d:
                    f.add(s, f"torch.cummin(x, {d})", unpack=True)
                    f.add(s, f"torch.cummax(x, dim={d})", unpack=True)
                    f.add(s, f"out = torch.diff(x, dim={d})")
                    f.add(s, f"out = torch.diff(x, n=2, dim={d})")
                    f.add(s, f"out = torch.msort(x)" if d == "0" else f"out = x.diff()")
                    f.add(s, f"out = torch.log_softmax(x, {d})")
                    f.add(s, f"torch.sort(x, {d}, stable=True)", unpack=True)
                    f.add(s, f"torch.median(x, {d})", unpack=True)
                    f.add(s, f"torch.mode(x, {d})", unpack=True)
                    f.add(s, f"torch.topk(x, 2, {d})", unpack=True)
                    f.add(s, f"torch.kthvalue(x, 2, {d})", unpack=True)
                    f.add(s, f"out = torch.argsort(x, {d}, descending=True)")
                    f.add(s, f"out = torch.nansum(x, {d})")
                    f.add(s, f"out = torch.std(x, {d})")
                    f.add(s, f"out = torch.var(x, {d}, keepdim=True)")
                    f.add(s, f"out = torch.min(x, {d}).values")
                    f.add(s, f"out = torch.median(x)")
                    f.add(s, f"out = torch.cumulative_trapezoid(x, dim={d})")
                    f.add(s, f"out = torch.trapezoid(x, dim={d})")
                    f.add(s, f"out = torch.trapz(x, dim={d})")
                    f.add(s, f"out = torch.softmax(x, {d})")
                    f.add(s, f"out = torch.cumsum(x, {d})")
                    f.add(s, f"out = torch.logcumsumexp(x, {d})")
            f.add(s, "out = torch.histc(x.float(), bins=7)")
            f.add(s, "out = torch.histc(x.float(), 4, min=0, max=3)")
            f.add(s, "out = x.sum_to_size(1)" if n == 1 else "out = x.sum_to_size(1, 3, 1)")
            f.add(s, "out = torch.norm(x.float())")
            f.add(s, "out = torch.dist(x.float(), x.float())")
            f.add(s, "out = torch.prod(x, 0)")
            f.add(s, "out = torch.min(x)")
            f.add(s, "out = torch.quantile(x.float(), 0.5)")
            f.add(s, "out = torch.quantile(x.float(), 0.5, dim=0)")
            f.add(s, "out = torch.nanquantile(x.float(), 0.25, dim=-1, keepdim=True)")
            f.add(s, "out = torch.quantile(x.float(), torch.tensor([0.1, 0.9]), dim=0)")
    return f


def more_view(f):
    for shape in [(2, 3, 4), (4,), (3, 4), ()]:
        s = mk("x", shape) if shape else "x = torch.tensor(1.5)"
        n = len(shape)
        f.add(s, "out = torch.atleast_1d(x)")
        f.add(s, "out = torch.atleast_2d(x)")
        f.add(s, "out = torch.atleast_3d(x)")
        f.add(s, "out = torch.ravel(x)")
        f.add(s, "out = torch.squeeze(x)")
        f.add(s, "out = torch.clone(x)")
        f.add(s, "out = torch.t(x)")
        f.add(s, "out = torch.fliplr(x)")
        f.add(s, "out = torch.flipud(x)")
        f.add(s, "out = torch.flip(x, [0, -1])")
        f.add(s, "out = torch.flip(x, (0,))")
        f.add(s, "out = torch.roll(x, 2)")
        f.add(s, "out = torch.roll(x, (1, 2), (0, -1))")
        f.add(s, "out = torch.rot90(x)")
        f.add(s, "out = torch.rot90(x, 2, [0, 1])")
        f.add(s, "out = torch.rot90(x, -1, (0, 1))")
        f.add(s, "out = x.rot90(1, [1, 0])")
        f.add(s, "out = torch.swapdims(x, 0, -1)")
        f.add(s, "out = torch.transpose(x, 0, -1)")
        f.add(s, "out = torch.movedim(x, 0, -1)")
        f.add(s, "out = torch.narrow(x, 0, 1, 1)")
        f.add(s, "out = torch.squeeze(x, 0)")
        f.add(s, "out = torch.diag_embed(x)")
        f.add(s, "out = torch.diagflat(x)")
        f.add(s, "out = torch.tile(x, (2,))")
        f.add(s, "out = torch.broadcast_to(x, (2, 3, 4))")
        f.add(s, "out = torch.repeat_interleave(x, 2)")
        f.add(s, "out = x.swapaxes(0, -1)")
        f.add(s, "out = x.squeeze_(0)")
        f.add(s, "out = x.unsqueeze_(0)")
        f.add(s, "out = x.t_()")
        f.add(s, "out = x.fliplr()")
        f.add(s, "out = torch.select(x, 0, 1)")
        f.add(s, "out = torch.unflatten(x, 0, (2, -1))")
        for fn in ["hsplit", "vsplit", "dsplit"]:
            f.add(s, f"torch.{fn}(x, 2)", unpack=True)
            f.add(s, f"x.{fn}([1, 2])", unpack=True)
        f.add(s, "torch.tensor_split(x, (1, 2))", unpack=True)
        f.add(s, "torch.chunk(x, 2, -1)", unpack=True)
    for p in ["1, -1", "0, 2", "2, -2", "5, 5", "-1, 1"]:
        f.add("x = torch.randn(2, 3, 4)", f"out = x.narrow({p.split(',')[0]}, {p.split(',')[1]}, 1)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.narrow(1, 2, 2)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.narrow(1, -1, 1)")
    f.add("x = torch.randn(2, 3, 4)", "out = x.narrow(1, 1, -1)")
    f.add("x = torch.randn(2, 3)", "out = x.repeat(-1, 2)")
    f.add("x = torch.randn(2, 3)", "out = x.expand(2, -2)")
    f.add("x = torch.randn(2, 3)", "out = x.expand(-2, 3)")
    f.add("x = torch.randn(2, 3)", "out = x.repeat(2, -3)")
    f.add("x = torch.randn(2, 3)", "out = x.new_zeros(2, -1)")
    return f


def more_join(f):
    for shape in [(2, 3), (4,), (2, 3, 4)]:
        s = [mk("a", shape), mk("b", shape)]
        f.add(s, "out = torch.row_stack([a, b])")
        f.add(s, "out = torch.cat((a, b), dim=-1)")
        f.add(s, "torch.meshgrid(a.flatten(), b.flatten(), indexing='ij')", unpack=True)
        f.add(s, "torch.meshgrid(a.flatten()[:3], b.flatten()[:2], indexing='xy')", unpack=True)
        f.add(s, "out = torch.cartesian_prod(a.flatten(), b.flatten()[:2])")
        f.add(s, "out = torch.combinations(a.flatten()[:4])")
        f.add(s, "out = torch.combinations(a.flatten()[:4], r=3)")
        f.add(s, "out = torch.block_diag(a, b)")
        f.add(s, "torch.broadcast_tensors(a, b.unsqueeze(0))", unpack=True)
        f.add(s, "torch.atleast_2d(a, b)", unpack=True)
    f.add([mk("a", (2, 3)), mk("b", (3,)), mk("c", ())], "out = torch.block_diag(a, b, c)")
    f.add([mk("a", (2, 3, 4)), mk("b", (3,))], "out = torch.block_diag(a, b)")
    f.add([mk("a", (3,)), mk("b", (4,)), mk("c", (2,))], "out = torch.cartesian_prod(a, b, c)")
    f.add([mk("a", (3,)), mk("b", (4,)), mk("c", (2,))], "torch.meshgrid(a, b, c, indexing='ij')", unpack=True)
    f.add([mk("a", (3,)), mk("b", (4,))], "torch.meshgrid([a, b], indexing='xy')", unpack=True)
    return f


def more_linalg(f):
    for sa, sb in [((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((2, 3), (4, 5)), ((3,), (3,)), ((5, 2, 3), (3, 4))]:
        s = [mk("a", sa), mk("b", sb)]
        f.add(s, "out = torch.inner(a, b)")
        f.add(s, "out = torch.kron(a, b)")
        f.add(s, "out = torch.vdot(a, b)")
        f.add(s, "out = a.matmul(b)")
        f.add(s, "out = a.mm(b)")
        f.add(s, "out = a.bmm(b)")
        f.add(s, "out = a.dot(b)")
        f.add(s, "out = torch.linalg.matmul(a, b)")
        f.add(s, "out = torch.linalg.vecdot(a, b)")
        f.add(s, "out = torch.chain_matmul(a, b)")
        f.add(s, "out = torch.linalg.multi_dot([a, b])")
        f.add(s, "out = torch.tensordot(a, b, dims=0)")
        f.add(s, "out = torch.tensordot(a, b, dims=([-1], [0]))")
    f.add([mk("a", (2, 3)), mk("b", (3, 4)), mk("c", (4, 5))], "out = torch.chain_matmul(a, b, c)")
    f.add([mk("a", (2, 3)), mk("b", (3, 4)), mk("c", (4, 5))], "out = torch.linalg.multi_dot([a, b, c])")
    f.add([mk("a", (3,)), mk("b", (3, 4)), mk("c", (4,))], "out = torch.linalg.multi_dot([a, b, c])")
    for sm, sv, sb in [((2, 3), (3,), (2,)), ((2, 3), (4,), (2,)), ((2, 3), (3,), (1,)), ((5, 2, 3), (3,), (2,))]:
        f.add([mk("m", sm), mk("v", sv), mk("b", sb)], "out = torch.addmv(b, m, v)")
        f.add([mk("m", sm), mk("v", sv)], "out = torch.mv(m, v)")
    for sb, s1, s2 in [((2, 4), (5, 2, 3), (5, 3, 4)), ((4,), (5, 2, 3), (5, 3, 4)), ((2, 4), (5, 2, 3), (4, 3, 4)),
                       ((3, 4), (5, 2, 3), (5, 3, 4))]:
        f.add([mk("c", sb), mk("a", s1), mk("b", s2)], "out = torch.addbmm(c, a, b)")
        f.add([mk("c", sb), mk("a", s1), mk("b", s2)], "out = c.addbmm(a, b)")
    for sc, sa, sb in [((3, 4), (3,), (4,)), ((1, 4), (3,), (4,)), ((3, 4), (2, 3), (4,)), ((4, 3), (3,), (4,))]:
        f.add([mk("c", sc), mk("a", sa), mk("b", sb)], "out = torch.addr(c, a, b)")
    for sa, sb in [((4, 3), (4, 3)), ((2, 4, 3), (2, 4, 3)), ((4, 2), (4, 3)), ((4, 3), (4, 3, 1)), ((5, 3), (1, 3))]:
        s = [mk("a", sa), mk("b", sb)]
        f.add(s, "out = torch.cross(a, b, dim=-1)")
        f.add(s, "out = torch.linalg.cross(a, b)")
    for shape in [(4, 4), (2, 4, 4), (3, 4), (4,), (2, 3, 5)]:
        s = mk("a", shape)
        for fn in ["inv", "det", "slogdet", "matrix_norm", "vector_norm", "norm", "svdvals", "eigvalsh", "eigh",
                   "cholesky", "matrix_exp", "pinv", "matrix_rank", "qr", "svd", "eigvals", "eig", "lu_factor",
                   "inv_ex", "cond", "tensorinv"]:
            if fn in ("eigvalsh", "eigh", "cholesky"):
                s2 = [s, "a = a @ a.mT + torch.eye(a.shape[-1])" if len(shape) >= 2 else "a = a"]
            else:
                s2 = [s]
            if fn in ("slogdet", "qr", "svd", "eigh", "eig", "lu_factor", "inv_ex"):
                f.add(s2, f"torch.linalg.{fn}(a)", unpack=True)
            else:
                f.add(s2, f"out = torch.linalg.{fn}(a)")
        f.add(s, "out = torch.linalg.matrix_power(a, 3)")
        f.add(s, "out = torch.linalg.norm(a, dim=(-2, -1))" if len(shape) >= 2 else "out = torch.linalg.norm(a, ord=1)")
        f.add(s, "out = torch.linalg.vector_norm(a, ord=2, dim=-1, keepdim=True)")
        f.add(s, "out = torch.linalg.matrix_norm(a, ord='fro', keepdim=True)")
        f.add(s, "out = torch.linalg.svd(a, full_matrices=True)[0]")
        f.add(s, "out = torch.inverse(a)")
        f.add(s, "out = torch.logdet(a)")
        f.add(s, "out = torch.slogdet(a)[1]")
        f.add(s, "out = torch.matrix_exp(a)")
        f.add(s, "out = torch.trace(a)")
        f.add(s, "out = torch.pinverse(a)")
        f.add(s, "out = a.det()")
        f.add(s, "out = a.inverse()")
        f.add(s, "out = torch.linalg.diagonal(a)")
        f.add(s, "out = torch.diagonal(a, 0, -2, -1)")
        f.add(s, "out = torch.diagonal(a, offset=1)")
        f.add(s, "out = torch.linalg.matrix_norm(a, ord=2)")
    for sa, sb in [((4, 4), (4, 2)), ((4, 4), (4,)), ((2, 4, 4), (2, 4, 3)), ((4, 4), (3, 2)), ((3, 4), (4, 2))]:
        s = [mk("a", sa), mk("b", sb)]
        f.add(s, "out = torch.linalg.solve(a, b)")
        f.add(s, "out = torch.linalg.solve_triangular(a, b, upper=True)" if len(sb) > 1 else "out = torch.linalg.solve(a, b, left=True)")
        f.add(s, "out = torch.linalg.lstsq(a, b).solution")
    for shape in [(2, 3), (5, 2, 3), (3,)]:
        f.add(mk("a", shape), "out = torch.cov(a)")
        f.add(mk("a", shape), "out = torch.corrcoef(a)")
        f.add(mk("a", shape), "out = torch.vander(a.flatten()[:4])")
        f.add(mk("a", shape), "out = torch.vander(a.flatten()[:4], N=3)")
    f.add([], "out = torch.triu_indices(3, 4)")
    f.add([], "out = torch.triu_indices(4, 4, 1)")
    f.add([], "out = torch.tril_indices(4, 3, -1)")
    return f


def more_index_ops(f):
    x = "x = torch.randn(3, 4, 5)"
    s = "s = torch.tensor([0.0, 0.5, 1.0])"
    f.add([x, s], "out = torch.bucketize(x, s, right=True)")
    f.add([x, s], "out = torch.bucketize(x, s, out_int32=True)")
    f.add([x, s], "out = torch.searchsorted(s, x, side='right')")
    f.add([x, s], "out = torch.searchsorted(s, x, out_int32=True)")
    f.add([x, "s = torch.randn(3, 4, 6).sort(-1).values"], "out = torch.searchsorted(s, x)")
    f.add([x, "s = torch.randn(3, 5, 6).sort(-1).values"], "out = torch.searchsorted(s, x)")
    f.add(["s = torch.tensor([0.0, 1.0])"], "out = torch.searchsorted(s, 0.5)")
    f.add([x, "i = torch.tensor([0, 5, 59])"], "out = torch.take(x, i)")
    f.add([x, "i = torch.tensor([[0, 5], [1, 2]])"], "out = x.take(i)")
    f.add([x, "i = torch.tensor([0, 1])"], "out = x.index_put((i,), torch.tensor(1.0))")
    f.add([x, "i = torch.tensor([0, 1])"], "out = torch.index_put(x, (i, i), torch.zeros(5))")
    f.add([x], "out = torch.argwhere(x > 0)", dd=True)
    f.add([x], "torch.nonzero(x, as_tuple=True)", unpack=True, dd=True)
    f.add([x], "out = torch.masked_select(x, x > 0)", dd=True)
    f.add([x], "out = torch.unique_consecutive(x)", dd=True)
    f.add([x], "out = torch.count_nonzero(x, dim=(0, 1))")
    f.add([x, "i = torch.randint(0, 3, (2, 4, 5))"], "out = torch.scatter(x, 0, i, 2.0)")
    f.add([x, "i = torch.randint(0, 3, (2, 4, 5))", "v = torch.randn(2, 4, 5)"], "out = torch.scatter_add(x, 0, i, v)")
    f.add([x, "i = torch.randint(0, 3, (2, 4, 5))", "v = torch.randn(2, 4, 5)"], "out = torch.scatter_reduce(x, 0, i, v, 'amax')")
    f.add([x, "i = torch.randint(0, 3, (2,))"], "out = torch.index_fill(x, 0, i, 1.0)")
    f.add([x, "i = torch.randint(0, 3, (2,))", "v = torch.randn(2, 4, 5)"], "out = torch.index_add(x, 0, i, v)")
    f.add([x, "i = torch.randint(0, 3, (2,))", "v = torch.randn(2, 4, 5)"], "out = torch.index_copy(x, 0, i, v)")
    f.add([x, "i = torch.randint(0, 3, (2,))", "v = torch.randn(2, 4, 5)"], "out = torch.index_reduce(x, 0, i, v, 'prod')")
    f.add([x, "m = torch.randn(3, 4, 5) > 0"], "out = torch.masked_fill(x, m, 0.0)")
    f.add([x, "m = torch.randn(4, 5) > 0"], "out = torch.masked_scatter(x, m, torch.randn(60))")
    f.add([x], "out = torch.where(x > 0, x, 0.0)")
    f.add([x, "i = torch.randint(0, 3, (3, 4, 1))"], "out = torch.take_along_dim(x, i, dim=2)")
    f.add([x], "out = torch.argsort(x)")
    f.add(["t = torch.randint(0, 5, (10,))", "w = torch.rand(10)"], "out = torch.bincount(t, w)", dd=True)
    f.add(["t = torch.randint(0, 5, (10,))"], "out = torch.bincount(t, minlength=8)", dd=True)
    f.add(["t = torch.randint(0, 5, (10,))"], "torch.unique(t, return_counts=True)", unpack=True, dd=True)
    f.add(["t = torch.randint(0, 5, (10,))"], "out = torch.histc(t.float(), bins=5)")
    for k in [1, 2]:
        f.add(["x = torch.randn(4, 4)"], f"out = torch.tril(x, {k})")
        f.add(["x = torch.randn(4, 4)"], f"out = x.triu_({k})")
    return f


def more_convert(f):
    for dt in ["c64", "c128", "f32", "i64"]:
        s = mk("x", (2, 3), dt)
        f.add(s, "out = x.real")
        f.add(s, "out = x.imag")
        f.add(s, "out = torch.real(x)")
        f.add(s, "out = torch.imag(x)")
        f.add(s, "out = x.abs()")
        f.add(s, "out = x.angle()")
        f.add(s, "out = torch.view_as_real(x)")
        f.add(s, "out = x.conj()")
        f.add(s, "out = x.to(x)")
        f.add(s, "out = x.cfloat()")
        f.add(s, "out = x.cdouble()")
    return f


def more_nn(f):
    x3 = mk("x", (2, 3, 4))
    acts = ["ReLU6()", "SELU()", "CELU()", "Mish()", "Hardsigmoid()", "Hardtanh()", "Hardtanh(-2, 2)",
            "Softplus()", "Softsign()", "Tanhshrink()", "Threshold(0.1, 20.0)", "LogSigmoid()", "Softmin(dim=1)",
            "Hardshrink()", "Softshrink(0.3)", "RReLU()", "Dropout1d()", "Dropout3d()", "AlphaDropout(0.2)",
            "FeatureAlphaDropout(0.2)", "SiLU(inplace=True)", "ReLU(inplace=True)", "GELU(approximate='tanh')",
            "Softmax(dim=0)", "LogSoftmax(dim=-1)", "Identity(3, foo=4)"]
    for a in acts:
        for xs in [(2, 3, 4), (5,), (2, 3, 4, 5)]:
            f.add([f"m = nn.{a}", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.{a}", mk("x", (2, 3), "f64")], "out = m(x)")
    for xs in [(2, 3, 4, 5), (3, 4, 5), (3, 4)]:
        f.add(["m = nn.Softmax2d()", mk("x", xs)], "out = m(x)")
    for xs in [(2, 3, 4, 5), (2, 3, 4), (2, 6, 3, 4, 5)]:
        f.add(["m = nn.LocalResponseNorm(2)", mk("x", xs)], "out = m(x)")
        f.add(["m = nn.CrossMapLRN2d(3)", mk("x", xs)], "out = m(x)")
    for cls, xs in [("ZeroPad3d", (1, 2, 3, 4, 5)), ("ConstantPad2d", (2, 3, 4, 5)), ("ReflectionPad3d", (1, 2, 3, 4, 5)),
                    ("ReplicationPad2d", (2, 3, 4, 5)), ("CircularPad1d", (2, 3, 4)), ("CircularPad3d", (1, 2, 3, 4, 5)),
                    ("ReflectionPad2d", (3, 4, 5)), ("ReplicationPad1d", (3, 4)), ("ZeroPad2d", (3, 4))]:
        const = ", 0.5" if cls.startswith("Constant") else ""
        for p in ["1", "3", "5"]:
            f.add([f"m = nn.{cls}({p}{const})", mk("x", xs)], "out = m(x)")
    for cls, args in [("UpsamplingNearest2d", "scale_factor=2"), ("UpsamplingBilinear2d", "scale_factor=2"),
                      ("UpsamplingNearest2d", "size=(5, 7)"), ("UpsamplingBilinear2d", "size=6")]:
        for xs in [(2, 3, 4, 5), (3, 4, 5)]:
            f.add([f"m = nn.{cls}({args})", mk("x", xs)], "out = m(x)")
    for g, xs in [(2, (2, 4, 3, 3)), (3, (2, 6, 5)), (2, (2, 5, 3, 3)), (2, (1, 4, 2, 2, 2))]:
        f.add([f"m = nn.ChannelShuffle({g})", mk("x", xs)], "out = m(x)")
        f.add([mk("x", xs)], f"out = F.channel_shuffle(x, {g})")
    for kw, xs in [("kernel_size=2", (2, 3, 6, 6)), ("kernel_size=(2, 3), stride=2", (2, 3, 6, 7)), ("3, padding=1", (3, 5, 5)),
                   ("2, dilation=2", (2, 3, 6, 6)), ("5", (2, 3, 4, 4))]:
        f.add([f"m = nn.Unfold({kw})", mk("x", xs)], "out = m(x)")
    for osz, kw, xs in [("(4, 5)", "2", (2, 12, 12)), ("(4, 4)", "2, stride=2", (2, 12, 4)), ("(6, 6)", "3, padding=1", (3 * 9, 36)),
                        ("(4, 4)", "2", (2, 11, 9)), ("(4, 4)", "2", (2, 12, 10))]:
        f.add([f"m = nn.Fold({osz}, {kw})", mk("x", xs)], "out = m(x)")
    for xs in [(2, 4), (4,), (2, 5)]:
        f.add(["m = nn.CosineSimilarity(dim=-1)", mk("a", xs), mk("b", (2, 4))], "out = m(a, b)")
        f.add(["m = nn.PairwiseDistance()", mk("a", xs), mk("b", (2, 4))], "out = m(a, b)")
        f.add(["m = nn.PairwiseDistance(keepdim=True)", mk("a", xs), mk("b", (2, 4))], "out = m(a, b)")
    f.add(["m = nn.CosineSimilarity(dim=1)", mk("a", (2, 3, 4)), mk("b", (2, 3, 4))], "out = m(a, b)")
    for xs in [(2, 3), (3,), (2, 4)]:
        f.add(["m = nn.Bilinear(3, 4, 5)", mk("a", xs), mk("b", (2, 4) if len(xs) == 2 else (4,))], "out = m(a, b)")
        f.add(["m = nn.Bilinear(3, 4, 5, bias=False)", mk("a", xs), mk("b", (2, 4) if len(xs) == 2 else (4,))], "out = m(a, b)")
    for xs in [(2, 7), (7,), (2, 3, 7)]:
        f.add(["m = nn.LazyLinear(5)", mk("x", xs)], "out = m(x)")
    f.add(["m = nn.LazyConv2d(6, 3)", mk("x", (2, 4, 9, 8))], "out = m(x)")
    f.add(["m = nn.LazyConv1d(6, 3, stride=2)", mk("x", (2, 4, 10))], "out = m(x)")
    f.add(["m = nn.LazyBatchNorm1d()", mk("x", (2, 4, 10))], "out = m(x)")
    f.add(["m = nn.LazyBatchNorm2d()", mk("x", (2, 4, 9, 8))], "out = m(x)")
    # EmbeddingBag
    for mode in ["'mean'", "'sum'", "'max'"]:
        f.add([f"m = nn.EmbeddingBag(10, 8, mode={mode})", "i = torch.randint(0, 10, (3, 4))"], "out = m(i)")
        f.add([f"m = nn.EmbeddingBag(10, 8, mode={mode})", "i = torch.randint(0, 10, (7,))", "o = torch.tensor([0, 3])"],
              "out = m(i, o)")
        f.add([f"m = nn.EmbeddingBag(10, 8, mode={mode})", "i = torch.randint(0, 10, (7,))"], "out = m(i)")
    f.add(["m = nn.EmbeddingBag(10, 8, include_last_offset=True)", "i = torch.randint(0, 10, (7,))", "o = torch.tensor([0, 3, 7])"],
          "out = m(i, o)")
    f.add(["w = torch.randn(10, 8)", "i = torch.randint(0, 10, (3, 4))"], "out = F.embedding_bag(i, w)")
    f.add(["m = nn.Embedding(10, 8).double()", "i = torch.randint(0, 10, (3, 4))"], "out = m(i)")
    f.add(["m = nn.Embedding.from_pretrained(torch.randn(10, 6))", "i = torch.randint(0, 10, (3, 4))"], "out = m(i)")
    # cells with hidden state
    for cls in ["RNNCell", "GRUCell", "LSTMCell"]:
        for xs, hs in [((3, 4), (3, 6)), ((4,), (6,)), ((3, 4), (3, 5)), ((3, 4), (2, 6))]:
            h = mk("h", hs)
            if cls == "LSTMCell":
                f.add([f"m = nn.{cls}(4, 6)", mk("x", xs), h, mk("c", hs)], "h1, c1 = m(x, (h, c))")
            else:
                f.add([f"m = nn.{cls}(4, 6)", mk("x", xs), h], "out = m(x, h)")
        f.add([f"m = nn.{cls}(4, 6, bias=False)", mk("x", (3, 4), "f64")], "out = m(x)" if cls != "LSTMCell" else "h1, c1 = m(x)")
    # RNN / LSTM / GRU with a given h0 of the wrong size
    for cls in ["RNN", "GRU"]:
        for hs in [(1, 2, 6), (1, 3, 6), (1, 2, 5), (2, 2, 6), (2, 6)]:
            f.add([f"m = nn.{cls}(4, 6)", mk("x", (5, 2, 4)), mk("h0", hs)], "out, h = m(x, h0)")
    for hs, cs in [((1, 2, 6), (1, 2, 6)), ((1, 2, 5), (1, 2, 6)), ((1, 2, 6), (1, 3, 6)), ((2, 2, 6), (2, 2, 6))]:
        f.add(["m = nn.LSTM(4, 6)", mk("x", (5, 2, 4)), mk("h0", hs), mk("c0", cs)], "out, (h, c) = m(x, (h0, c0))")
    # Transformer family
    for bf in [False, True]:
        t = (2, 4, 8) if bf else (4, 2, 8)
        mem = (2, 6, 8) if bf else (6, 2, 8)
        f.add([f"layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first={bf})",
               f"m = nn.TransformerDecoder(layer, 2)", mk("t", t), mk("mem", mem)], "out = m(t, mem)")
        f.add([f"m = nn.TransformerDecoderLayer(8, 2, 16, batch_first={bf}, norm_first=True)", mk("t", t), mk("mem", mem)],
              "out = m(t, mem)")
        f.add([f"m = nn.Transformer(8, 2, 1, 1, 16, batch_first={bf})", mk("s", mem), mk("t", t)], "out = m(s, t)")
        f.add([f"m = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16, batch_first={bf})",
               mk("s", mem), mk("t", (2, 4, 6))], "out = m(s, t)")
    f.add(["m = nn.TransformerDecoderLayer(8, 2, 16)", mk("t", (4, 8)), mk("mem", (6, 8))], "out = m(t, mem)")
    # MHA bias_kv / zero_attn
    for kw in ["add_bias_kv=True", "add_zero_attn=True", "add_bias_kv=True, add_zero_attn=True"]:
        for bf in [False, True]:
            q = (2, 5, 8) if bf else (5, 2, 8)
            k = (2, 7, 8) if bf else (7, 2, 8)
            f.add([f"m = nn.MultiheadAttention(8, 2, {kw}, batch_first={bf})", mk("q", q), mk("k", k)], "out, w = m(q, k, k)")
            f.add([f"m = nn.MultiheadAttention(8, 2, {kw}, batch_first={bf})", mk("q", q), mk("k", k)],
                  "out, w = m(q, k, k, average_attn_weights=False)")
        f.add([f"m = nn.MultiheadAttention(8, 2, {kw})", mk("q", (5, 8)), mk("k", (7, 8))], "out, w = m(q, k, k)")
    # Conv transpose output_size
    for dim in [1, 2]:
        sp = {1: (10,), 2: (9, 8)}[dim]
        for st, pad, osz in [(2, 1, [2 * s - 1 for s in sp]), (2, 1, [2 * s for s in sp]), (2, 0, [2 * s + 1 for s in sp]),
                             (3, 1, [3 * s - 1 for s in sp]), (2, 1, [2 * s + 3 for s in sp])]:
            f.add([f"m = nn.ConvTranspose{dim}d(4, 6, 3, stride={st}, padding={pad})", mk("x", (2, 4) + sp)],
                  f"out = m(x, output_size={osz})")
            f.add([f"m = nn.ConvTranspose{dim}d(4, 6, 3, stride={st}, padding={pad})", mk("x", (2, 4) + sp)],
                  f"out = m(x, {tuple([2, 6] + osz)})")
    # output_padding too large
    for st, op, dil in [(1, 1, 1), (2, 2, 1), (2, 1, 1), (1, 1, 2), (2, 3, 2)]:
        f.add([f"m = nn.ConvTranspose2d(4, 6, 3, stride={st}, output_padding={op}, dilation={dil})", mk("x", (2, 4, 5, 5))],
              "out = m(x)")
    # pooling
    for dim in [1, 2, 3]:
        sp = {1: (10,), 2: (9, 8), 3: (5, 6, 7)}[dim]
        for k, pad in [(2, 1), (2, 2), (3, 2), (4, 2), (3, 1)]:
            f.add([f"m = nn.MaxPool{dim}d({k}, padding={pad})", mk("x", (2, 3) + sp)], "out = m(x)")
            f.add([f"m = nn.AvgPool{dim}d({k}, padding={pad})", mk("x", (2, 3) + sp)], "out = m(x)")
        f.add([f"m = nn.MaxPool{dim}d(3, 2, return_indices=True)", mk("x", (3,) + sp)], "out, idx = m(x)")
        f.add([f"m = nn.AdaptiveMaxPool{dim}d(3, return_indices=True)", mk("x", (3,) + sp)], "out, idx = m(x)")
        f.add([mk("x", (2, 3) + sp)], f"out, idx = F.max_pool{dim}d(x, 2, return_indices=True)")
        f.add([mk("x", (2, 3) + sp)], f"out, idx = F.adaptive_max_pool{dim}d(x, 3, return_indices=True)")
        f.add([mk("x", (2, 3) + sp)], f"out = F.adaptive_max_pool{dim}d(x, 2)")
        f.add([mk("x", (2, 3) + sp)], f"out = F.max_pool{dim}d(x, 3, 1, 1)")
        f.add([mk("x", (2, 3) + sp)], f"out = F.avg_pool{dim}d(x, 3, 1, 1)")
        f.add([mk("x", (2, 3) + sp)], f"out = F.adaptive_avg_pool{dim}d(x, 2)")
        f.add([mk("x", (2, 3) + sp)], f"out = F.max_pool{dim}d(x, 2, padding=2)")
        f.add([mk("x", (2, 3) + sp)], f"out = F.lp_pool{dim}d(x, 2, 2)" if dim < 3 else f"out = F.lp_pool3d(x, 2, 2)")
        f.add([f"m = nn.LPPool{dim}d(2, 3, stride=2)", mk("x", (2, 3) + sp)], "out = m(x)")
        f.add([f"m = nn.MaxPool{dim}d(2, return_indices=True)", f"u = nn.MaxUnpool{dim}d(2)", mk("x", (2, 3) + sp),
               "y, i = m(x)"], "out = u(y, i)")
    f.add(["m = nn.FractionalMaxPool2d(3, output_size=(4, 5))", mk("x", (2, 3, 9, 8))], "out = m(x)")
    f.add(["m = nn.FractionalMaxPool2d(2, output_ratio=0.5)", mk("x", (2, 3, 9, 8))], "out = m(x)")
    f.add(["m = nn.FractionalMaxPool3d(2, output_size=3)", mk("x", (2, 3, 5, 6, 7))], "out = m(x)")
    # norms with mixed dtypes / instance norms
    for cls, xs in [("LayerNorm(4)", (2, 3, 4)), ("BatchNorm1d(3)", (2, 3, 4)), ("BatchNorm2d(3)", (2, 3, 4, 4)),
                    ("GroupNorm(1, 3)", (2, 3, 4)), ("InstanceNorm1d(3, affine=True)", (2, 3, 4)), ("RMSNorm(4)", (2, 3, 4))]:
        for dt in ["f64", "f16", "bf16"]:
            f.add([f"m = nn.{cls}", mk("x", xs, dt)], "out = m(x)")
        f.add([f"m = nn.{cls}.double()", mk("x", xs, "f64")], "out = m(x)")
    for xs in [(2, 3, 4), (3, 4), (2, 3, 4, 5, 6)]:
        f.add(["m = nn.InstanceNorm1d(3)", mk("x", xs)], "out = m(x)")
        f.add(["m = nn.InstanceNorm3d(3)", mk("x", xs)], "out = m(x)")
    f.add(["m = nn.InstanceNorm3d(3, affine=True)", mk("x", (2, 3, 2, 3, 4))], "out = m(x)")
    f.add(["m = nn.InstanceNorm3d(3)", mk("x", (3, 2, 3, 4))], "out = m(x)")
    # losses as modules
    L = [("BCELoss()", "x = torch.rand(4, 3)", "t = torch.rand(4, 3)"),
         ("BCELoss(reduction='none')", "x = torch.rand(4, 3)", "t = torch.rand(4, 3)"),
         ("BCELoss()", "x = torch.rand(4, 3)", "t = torch.rand(4, 2)"),
         ("HuberLoss()", mk("x", (4, 3)), mk("t", (4, 3))),
         ("HuberLoss(reduction='none', delta=0.5)", mk("x", (4, 3)), mk("t", (4, 3))),
         ("SmoothL1Loss(reduction='none')", mk("x", (4, 3)), mk("t", (4, 3))),
         ("SoftMarginLoss()", mk("x", (4, 3)), mk("t", (4, 3))),
         ("SoftMarginLoss(reduction='none')", mk("x", (4, 3)), mk("t", (4, 3))),
         ("MultiLabelSoftMarginLoss()", mk("x", (4, 3)), mk("t", (4, 3))),
         ("MultiLabelSoftMarginLoss(reduction='none')", mk("x", (4, 3)), mk("t", (4, 3))),
         ("MultiLabelMarginLoss()", mk("x", (4, 3)), "t = torch.randint(0, 3, (4, 3))"),
         ("MultiLabelMarginLoss(reduction='none')", mk("x", (4, 3)), "t = torch.randint(0, 3, (4, 3))"),
         ("MultiMarginLoss()", mk("x", (4, 3)), "t = torch.randint(0, 3, (4,))"),
         ("MultiMarginLoss(reduction='none')", mk("x", (4, 3)), "t = torch.randint(0, 3, (4,))"),
         ("HingeEmbeddingLoss()", mk("x", (4, 3)), mk("t", (4, 3))),
         ("HingeEmbeddingLoss(reduction='none')", mk("x", (4, 3)), mk("t", (4, 3))),
         ("PoissonNLLLoss()", mk("x", (4, 3)), mk("t", (4, 3))),
         ("PoissonNLLLoss(reduction='none')", mk("x", (4, 3)), mk("t", (4, 3))),
         ("KLDivLoss(reduction='none')", mk("x", (4, 3)), mk("t", (4, 3))),
         ("KLDivLoss(reduction='sum', log_target=True)", mk("x", (4, 3)), mk("t", (4, 3))),
         ("L1Loss()", mk("x", (4, 3)), mk("t", (4, 3))),
         ("L1Loss()", mk("x", (4, 3)), mk("t", (4, 3), "f64")),
         ("MSELoss()", mk("x", (4, 3)), mk("t", (4, 3), "f16")),
         ("MSELoss(reduction='sum')", mk("x", (4, 3), "f64"), mk("t", (4, 3))),
         ("MSELoss()", mk("x", (4, 3)), mk("t", (5, 3))),
         ("NLLLoss()", mk("x", (4, 3)), "t = torch.randint(0, 3, (4,), dtype=torch.int32)"),
         ("NLLLoss()", mk("x", (4, 3)), "t = torch.randint(0, 3, (5,))"),
         ("NLLLoss(reduction='none')", mk("x", (4, 3, 5)), "t = torch.randint(0, 3, (4, 5))"),
         ("CrossEntropyLoss()", mk("x", (4, 3)), "t = torch.randint(0, 3, (4, 2))"),
         ("CrossEntropyLoss()", mk("x", (4, 3)), "t = torch.rand(4, 2)"),
         ("BCEWithLogitsLoss()", mk("x", (4, 3)), mk("t", (4, 2))),
         ("BCEWithLogitsLoss(pos_weight=torch.ones(3))", mk("x", (4, 3)), mk("t", (4, 3))),
         ("GaussianNLLLoss()", mk("x", (4, 3)), mk("t", (4, 3)))]
    for cls, xl, tl in L:
        f.add([f"crit = nn.{cls}", xl, tl], "out = crit(x, t)")
    f.add(["crit = nn.GaussianNLLLoss(reduction='none')", mk("x", (4, 3)), mk("t", (4, 3)), "v = torch.ones(4, 3)"],
          "out = crit(x, t, v)")
    f.add(["crit = nn.GaussianNLLLoss()", mk("x", (4, 3)), mk("t", (4, 3)), "v = torch.ones(4, 3)"], "out = crit(x, t, v)")
    for cls in ["CosineEmbeddingLoss()", "CosineEmbeddingLoss(reduction='none')"]:
        f.add([f"crit = nn.{cls}", mk("a", (4, 3)), mk("b", (4, 3)), "y = torch.ones(4)"], "out = crit(a, b, y)")
    for cls in ["MarginRankingLoss()", "MarginRankingLoss(reduction='none')"]:
        f.add([f"crit = nn.{cls}", mk("a", (4,)), mk("b", (4,)), "y = torch.ones(4)"], "out = crit(a, b, y)")
    for cls in ["TripletMarginLoss()", "TripletMarginLoss(reduction='none')", "TripletMarginWithDistanceLoss()"]:
        f.add([f"crit = nn.{cls}", mk("a", (4, 3)), mk("p", (4, 3)), mk("n", (4, 3))], "out = crit(a, p, n)")
    f.add(["crit = nn.CTCLoss()", "lp = torch.randn(7, 2, 5).log_softmax(2)", "t = torch.randint(1, 5, (2, 3))",
           "il = torch.full((2,), 7)", "tl = torch.full((2,), 3)"], "out = crit(lp, t, il, tl)")
    f.add(["crit = nn.CTCLoss(reduction='none')", "lp = torch.randn(7, 2, 5).log_softmax(2)", "t = torch.randint(1, 5, (2, 3))",
           "il = torch.full((2,), 7)", "tl = torch.full((2,), 3)"], "out = crit(lp, t, il, tl)")
    return f


def trust_nn(f):
    """The checks torch's kernels make that users meet (issue 20): batch norm
    on one value per channel in training mode, the attention masks of
    `nn.MultiheadAttention`, integer inputs into conv and linear layers, and
    cross entropy over `(B, T, V)` logits."""
    for cls, xs in [("BatchNorm1d(16)", (1, 16)), ("BatchNorm1d(16)", (2, 16)), ("BatchNorm1d(16)", (1, 16, 1)),
                    ("BatchNorm1d(16)", (1, 16, 3)), ("BatchNorm2d(8)", (1, 8, 1, 1)), ("BatchNorm2d(8)", (1, 8, 2, 1)),
                    ("BatchNorm1d(16, track_running_stats=False)", (1, 16))]:
        f.add([f"m = nn.{cls}", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.{cls}", "m.eval()", mk("x", xs)], "out = m(x)")
        f.add([f"m = nn.{cls}", "m.train(False)", "m.train()", mk("x", xs)], "out = m(x)")
    f.add(["m = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16))", "m.eval()", mk("x", (1, 4))], "out = m(x)")
    f.add(["m = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16))", mk("x", (1, 4))], "out = m(x)")
    f.add([mk("x", (1, 16)), "rm = torch.zeros(16)", "rv = torch.ones(16)"],
          "out = F.batch_norm(x, rm, rv, training=True)")
    f.add([mk("x", (1, 16)), "rm = torch.zeros(16)", "rv = torch.ones(16)"], "out = F.batch_norm(x, rm, rv)")
    for bf in [True, False]:
        m = f"m = nn.MultiheadAttention(64, 8, batch_first={bf})"
        for mask in ["torch.zeros(10, 10, dtype=torch.bool)", "torch.zeros(10, 9, dtype=torch.bool)",
                     "torch.zeros(16, 10, 10, dtype=torch.bool)", "torch.zeros(2, 10, 10, dtype=torch.bool)",
                     "torch.zeros(16, 10, 12)", "torch.zeros(16, 12, 10)"]:
            f.add([m, mk("q", (2, 10, 64)), f"mask = {mask}"], "out, w = m(q, q, q, attn_mask=mask)")
        for kpm in ["torch.zeros(2, 10, dtype=torch.bool)", "torch.zeros(2, 9, dtype=torch.bool)",
                    "torch.zeros(10, 2, dtype=torch.bool)"]:
            f.add([m, mk("q", (2, 10, 64)), f"kpm = {kpm}"], "out, w = m(q, q, q, key_padding_mask=kpm)")
        f.add([m, mk("q", (2, 10, 64)), mk("k", (2, 12, 64)), "kpm = torch.zeros(2, 12, dtype=torch.bool)"],
              "out, w = m(q, k, k, key_padding_mask=kpm)")
    f.add(["m = nn.MultiheadAttention(64, 8, batch_first=True, add_bias_kv=True)", mk("q", (2, 10, 64)),
           "kpm = torch.zeros(2, 10, dtype=torch.bool)", "mask = torch.zeros(10, 10, dtype=torch.bool)"],
          "out, w = m(q, q, q, key_padding_mask=kpm, attn_mask=mask)")
    for layer, xs in [("Conv2d(3, 8, 3)", (2, 3, 8, 8)), ("Conv2d(3, 8, 3, bias=False)", (2, 3, 8, 8)),
                      ("Conv1d(3, 8, 3)", (2, 3, 8)), ("Linear(4, 5)", (2, 4)), ("Linear(4, 5, bias=False)", (2, 4))]:
        for dt in ["u8", "i64", "f64", "bool"]:
            f.add([f"m = nn.{layer}", mk("x", xs, dt)], "out = m(x)")
    for xs, ts in [((4, 7, 100), (4, 7)), ((4, 100, 7), (4, 7)), ((4, 7, 100), (4, 100)), ((4, 7, 7), (4, 7)),
                   ((4, 5, 6, 7), (4, 6, 7)), ((4, 5, 6, 7), (4, 6, 8))]:
        f.add([mk("x", xs), f"t = torch.randint(0, 5, {ts})"], "out = F.cross_entropy(x, t)")
    return f


def more_functional(f):
    # pad: modes vs rank and pad sizes
    for xs in [(4,), (3, 4), (2, 3, 4), (2, 3, 4, 5), (1, 2, 3, 4, 5), (1, 1, 2, 3, 4, 5)]:
        for mode in ["reflect", "replicate", "circular", "constant"]:
            for p in ["(1, 1)", "(2, 2, 1, 1)", "(1, 1, 1, 1, 1, 1)", "(4, 0)", "(3, 3)", "(0, 5)", "(1, 0, 3, 0)"]:
                f.add(mk("x", xs), f"out = F.pad(x, {p}, mode='{mode}')")
    # interpolate: mode vs rank
    for xs in [(2, 3, 8), (2, 3, 8, 6), (1, 2, 4, 4, 4)]:
        for mode in ["linear", "bilinear", "bicubic", "trilinear", "nearest", "area", "nearest-exact"]:
            f.add(mk("x", xs), f"out = F.interpolate(x, scale_factor=2, mode='{mode}')")
            f.add(mk("x", xs), f"out = F.interpolate(x, size=3, mode='{mode}')")
    # normalize / glu / softmax dims
    for xs in [(2, 3, 4), (4,)]:
        for d in [-3, 2, 3, -2, 1]:
            f.add(mk("x", xs), f"out = F.normalize(x, dim={d})")
            f.add(mk("x", xs), f"out = F.glu(x, {d})")
            f.add(mk("x", xs), f"out = F.cosine_similarity(x, x, dim={d})")
    for dt in ["i64", "bool", "i32", "f16", "f64"]:
        for xs in [(2, 3), (4,)]:
            s = mk("x", xs, dt)
            f.add(s, "out = F.softmax(x, -1)")
            f.add(s, "out = x.softmax(0)")
            f.add(s, "out = F.log_softmax(x, 0)")
            f.add(s, "out = x.argmax()")
            f.add(s, "out = x.argmin(0)")
            f.add(s, "x.topk(1)", unpack=True)
            f.add(s, "x.kthvalue(1)", unpack=True)
            f.add(s, "x.sort()", unpack=True)
            f.add(s, "out = x.cumsum(0)")
            f.add(s, "x.max(0)", unpack=True)
    for k in [0, -1, 4, 5, 6]:
        f.add(mk("x", (2, 5)), f"x.kthvalue({k})", unpack=True)
        f.add(mk("x", (2, 5)), f"x.topk({k})", unpack=True)
    # embedding dtype follows weight
    for wdt in ["f16", "f64", "bf16", "i64"]:
        f.add(["i = torch.randint(0, 10, (2, 3))", mk("w", (10, 4), wdt)], "out = F.embedding(i, w)")
        f.add(["i = torch.randint(0, 10, (2, 3), dtype=torch.int32)", mk("w", (10, 4), wdt)], "out = F.embedding(i, w, padding_idx=0)")
    # losses: dtype promotion and size errors
    for da, db in [("f32", "f64"), ("f16", "f32"), ("f64", "f32"), ("bf16", "f16"), ("f32", "i64"), ("i64", "f32")]:
        s = [mk("x", (4, 3), da), mk("t", (4, 3), db)]
        for fn in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss"]:
            f.add(s, f"out = F.{fn}(x, t)")
            f.add(s, f"out = F.{fn}(x, t, reduction='none')")
    for fn in ["multilabel_soft_margin_loss", "soft_margin_loss", "poisson_nll_loss", "hinge_embedding_loss", "huber_loss",
               "gaussian_nll_loss"]:
        for ts in [(4, 3), (4, 2), (3,)]:
            extra = ", torch.ones(4, 3)" if fn == "gaussian_nll_loss" else ""
            f.add([mk("x", (4, 3)), mk("t", ts)], f"out = F.{fn}(x, t{extra})")
            f.add([mk("x", (4, 3)), mk("t", ts)], f"out = F.{fn}(x, t{extra}, reduction='none')")
    for ts, tdt in [((4,), "i64"), ((4,), "i32"), ((5,), "i64"), ((4, 3), "i64"), ((4,), "f32")]:
        f.add([mk("x", (4, 3)), mk("t", ts, tdt) if tdt != "i64" else f"t = torch.randint(0, 3, {tup(ts)})"],
              "out = F.multi_margin_loss(x, t)")
        f.add([mk("x", (4, 3)), mk("t", ts, tdt) if tdt != "i64" else f"t = torch.randint(0, 3, {tup(ts)})"],
              "out = F.nll_loss(x, t, reduction='none')")
    f.add([mk("a", (4, 3)), mk("b", (4, 3)), "y = torch.ones(4)"], "out = F.cosine_embedding_loss(a, b, y)")
    f.add([mk("a", (4,)), mk("b", (4,)), "y = torch.ones(4)"], "out = F.margin_ranking_loss(a, b, y, reduction='none')")
    f.add([mk("a", (4, 3)), mk("p", (4, 3)), mk("n", (4, 3))], "out = F.triplet_margin_loss(a, p, n)")
    f.add([mk("a", (4, 3)), mk("p", (4, 3)), mk("n", (4, 3))], "out = F.triplet_margin_loss(a, p, n, reduction='none')")
    # layer_norm / batch_norm mixed dtypes
    for xdt, wdt in [("f32", "f64"), ("f64", "f32"), ("f16", "f32"), ("bf16", "f32"), ("f16", "f16")]:
        f.add([mk("x", (2, 3, 4), xdt), mk("w", (4,), wdt), mk("b", (4,), wdt)], "out = F.layer_norm(x, (4,), w, b)")
        f.add([mk("x", (2, 3, 4), xdt), mk("rm", (3,), wdt), mk("rv", (3,), wdt)], "out = F.batch_norm(x, rm, rv)")
        f.add([mk("x", (2, 3, 4), xdt), mk("w", (3,), wdt)], "out = F.group_norm(x, 1, w)")
        f.add([mk("x", (2, 3, 4), xdt), mk("w", (4,), wdt)], "out = F.rms_norm(x, (4,), w)")
    # more functional ops
    for xs in [(2, 3, 4), (3,)]:
        s = mk("x", xs)
        for fn in ["hardtanh", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "hardsigmoid",
                   "hardswish", "logsigmoid", "tanhshrink", "softsign", "hardshrink", "softshrink", "rrelu",
                   "leaky_relu", "sigmoid", "tanh", "relu", "glu"]:
            f.add(s, f"out = F.{fn}(x)")
        f.add(s, "out = F.prelu(x, torch.ones(1))")
        f.add(s, "out = F.threshold(x, 0.5, 0.0)")
        f.add(s, "out = F.softmin(x, 0)")
        f.add(s, "out = F.gumbel_softmax(x, tau=0.5, hard=True)")
        f.add(s, "out = F.local_response_norm(x, 2)" if len(xs) >= 3 else "out = F.local_response_norm(x, 2)")
        f.add(s, "out = F.alpha_dropout(x, 0.2, True)")
    for xs, ws in [((2, 4, 10), (6, 4, 3)), ((2, 4, 5, 6, 7), (6, 4, 3, 3, 3)), ((2, 4, 10), (6, 2, 3))]:
        f.add([mk("x", xs), mk("w", ws)], f"out = F.conv{len(xs) - 2}d(x, w)")
        f.add([mk("x", xs), mk("w", ws)], f"out = F.conv{len(xs) - 2}d(x, w, padding='same')")
    f.add([mk("x", (2, 4, 5, 6, 7)), mk("w", (4, 6, 3, 3, 3))], "out = F.conv_transpose3d(x, w, stride=2)")
    f.add([mk("x", (2, 4, 5, 6, 7)), mk("w", (4, 6, 3, 3, 3))], "out = F.conv_transpose3d(x, w, stride=1, output_padding=1)")
    f.add([mk("x", (2, 4, 10)), mk("w", (4, 6, 3))], "out = F.conv_transpose1d(x, w, stride=1, output_padding=1)")
    for xs in [(2, 3, 4), (2, 3, 4, 5)]:
        f.add(mk("x", xs), "out = F.instance_norm(x)")
        f.add(mk("x", xs), "out = F.group_norm(x, 3)")
        f.add(mk("x", xs), "out = F.layer_norm(x, x.shape[-1:])")
    f.add([mk("x", (2, 3, 4, 4)), "g = torch.rand(2, 3, 3, 2) * 2 - 1"], "out = F.grid_sample(x, g, align_corners=False)")
    f.add(["th = torch.randn(2, 2, 3)"], "out = F.affine_grid(th, [2, 3, 4, 5], align_corners=False)")
    f.add([mk("x", (2, 3)), mk("y", (2, 3))], "out = F.pairwise_distance(x, y, keepdim=True)")
    f.add([mk("x", (4, 3))], "out = F.pdist(x)")
    f.add([mk("x", (2, 3)), mk("y", (2, 4)), mk("w", (5, 3, 4)), "b = torch.randn(5)"], "out = F.bilinear(x, y, w, b)")
    f.add([mk("x", (2, 8, 3, 3))], "out = F.pixel_shuffle(x, 3)")
    f.add([mk("x", (2, 3, 5, 5))], "out = F.pixel_unshuffle(x, 2)")
    f.add([mk("x", (2, 3)), mk("t", (2, 3))], "out = F.binary_cross_entropy(x.sigmoid(), t.sigmoid(), weight=torch.ones(3))")
    # torch.* twins of F.* functions: the same kernel, argument for argument
    for xs in [(2, 4, 8, 8), (4, 8, 8), (2, 4, 8)]:
        f.add(mk("x", xs), "out = torch.max_pool2d(x, 2)")
        f.add(mk("x", xs), "out = torch.max_pool1d(x, 2, 2, 1)")
        f.add(mk("x", xs), "out = torch.avg_pool1d(x, 3)")
        f.add(mk("x", xs), "out = torch.adaptive_avg_pool1d(x, 5)")
        f.add(mk("x", xs), "out = torch.pixel_shuffle(x, 2)")
        f.add(mk("x", xs), "out = torch.pixel_unshuffle(x, 2)")
        f.add(mk("x", xs), "out = torch.layer_norm(x, [8])")
        f.add(mk("x", xs), "out = torch.layer_norm(x, [4, 8])")
        f.add(mk("x", xs), "out = torch.rms_norm(x, [8])")
        f.add(mk("x", xs), "out = torch.group_norm(x, 2)")
        f.add(mk("x", xs), "out = torch.group_norm(x, 3)")
        f.add([mk("x", xs), mk("w", (6, 4, 3, 3))], "out = torch.conv2d(x, w)")
        f.add([mk("x", xs), mk("w", (6, 8, 3, 3))], "out = torch.conv2d(x, w, None, 1, 1)")
        f.add([mk("x", xs), mk("w", (6, 4, 3))], "out = torch.conv1d(x, w)")
        f.add([mk("x", xs), mk("w", (4, 6, 3, 3))], "out = torch.conv_transpose2d(x, w, stride=2)")
    f.add([mk("x", (2, 4, 3, 8, 8)), mk("w", (6, 4, 3, 3, 3))], "out = torch.conv3d(x, w)")
    f.add(mk("x", (2, 4, 3, 8, 8)), "out = torch.max_pool3d(x, 2)")
    f.add([mk("x", (2, 4, 8)), mk("w", (4, 6, 3))], "out = torch.conv_transpose1d(x, w)")
    f.add([mk("x", (2, 4, 3, 8, 8)), mk("w", (4, 6, 3, 3, 3))], "out = torch.conv_transpose3d(x, w)")
    return f


EINOPS_IMPORTS = ["import einops", "from einops import rearrange, repeat, reduce",
                  "from einops.layers.torch import Rearrange, Reduce"]


def fam_einops():
    """einops' functions and layers (einops is imported only by this family's snippets)."""
    f = Family("einops", EINOPS_IMPORTS)
    # rearrange: permutes, composite groups, ellipsis, anonymous 1 / () axes
    for dt in ["f32", "i64", "f16", "bool"]:
        s = mk("x", (2, 3, 4), dt)
        for pat in ["b c h -> b h c", "b c h -> b (c h)", "b c h -> (b c h)", "b c h -> h (b c)",
                    "... h -> h ...", "b ... -> b (...)", "b c h -> b c h 1", "b c h -> b () c h",
                    "... -> ...", "b ... h -> h ... b", "b c h -> (h b) c"]:
            f.add(s, f"out = rearrange(x, '{pat}')")
    s = mk("x", (2, 3, 4))
    for pat in ["b c h -> b h c", "b c h -> b (c h)"]:
        f.add(s, f"out = einops.rearrange(x, '{pat}')")
        f.add(s, f"out = einops.rearrange(x, pattern='{pat}')")
    s = mk("x", (2, 6, 4))
    for pat, kw in [("b (h d) w -> b h d w", "h=2"), ("b (h d) w -> b h d w", "d=3"),
                    ("b (h d) w -> b h d w", "h=2, d=3"), ("b (h d) w -> b h (d w)", "h=3"),
                    ("b (h d) w -> (b h) d w", "h=6"), ("b (h d) w -> b h d w", "h=4"),
                    ("b (h d) w -> b h d w", "h=2, d=2"), ("b (h d) w -> b h d w", ""),
                    ("b (h 2) w -> b h w 2", ""), ("b (h 3) w -> b h w", ""),
                    ("b c w -> b c w", "c=6"), ("b c w -> b c w", "c=5"), ("b c w -> b w c", "z=2"),
                    ("b (c 1) w -> b c w", ""), ("b (h d) w -> b d (w h)", "h=2")]:
        args = f", {kw}" if kw else ""
        f.add(s, f"out = rearrange(x, '{pat}'{args})")
    f.add(mk("x", (2, 3, 8, 8)), "out = rearrange(x, 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)")
    f.add(mk("x", (2, 3, 8, 8)), "out = rearrange(x, 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=3, p2=4)")
    f.add(mk("x", (2, 16, 5)), "out = rearrange(x, 'b (h w) c -> b c h w', h=4)")
    f.add(mk("x", (2, 16, 5)), "out = rearrange(x, 'b (h w) c -> b c h w', h=4, w=4)")
    f.add(mk("x", (2, 1, 4)), "out = rearrange(x, 'b 1 w -> b w')")
    f.add(mk("x", (2, 1, 4)), "out = rearrange(x, 'b () w -> b w')")
    f.add(mk("x", (2, 3, 4)), "out = rearrange(x, 'b 1 w -> b w')")
    # errors: wrong rank, identifiers on one side, misplaced ellipsis
    f.add(mk("x", (2, 3)), "out = rearrange(x, 'b c h -> b h c')")
    f.add(mk("x", (2, 3, 4, 5)), "out = rearrange(x, 'b c h -> b h c')")
    f.add(mk("x", (2,)), "out = rearrange(x, 'a b ... -> a b ...')")
    f.add(mk("x", (2, 3)), "out = rearrange(x, 'a b ... -> a b ...')")
    f.add(mk("x", (2, 3, 4)), "out = rearrange(x, 'b c h -> b c h w')")
    f.add(mk("x", (2, 3, 4)), "out = rearrange(x, 'b c h -> b c')")
    f.add(mk("x", (2, 3, 4)), "out = rearrange(x, 'b c h -> b c h ...')")
    f.add(mk("x", (2, 3, 4)), "out = rearrange(x, 'b c h -> b c h 2')")
    f.add(mk("x", (2, 3, 4)), "out = rearrange(x, 'b c c -> b c')")
    f.add(mk("x", (2, 3, 4)), "out = rearrange(x, 'b (c h -> b c h')")
    f.add(mk("x", (2, 3, 4)), "out = rearrange(x, 'b (c ...) -> b c ...')")
    # a list of tensors is stacked first
    f.add([mk("a", (3, 4)), mk("b", (3, 4))], "out = rearrange([a, b], 'n h w -> h (n w)')")
    f.add([mk("a", (3, 4)), mk("b", (3, 4)), mk("c", (3, 4))], "out = rearrange([a, b, c], 'n h w -> n w h')")
    # repeat: new axes sized by keywords
    for dt in ["f32", "i32"]:
        s = mk("x", (3, 4), dt)
        for pat, kw in [("h w -> h w c", "c=2"), ("h w -> (r h) w", "r=2"), ("h w -> h (w r)", "r=3"),
                        ("h w -> b h w", "b=2"), ("... -> b ...", "b=2"), ("h w -> h w 2", ""),
                        ("h w -> (h 2) (w 3)", ""), ("h w -> h 1 w", ""), ("h w -> w h", ""),
                        ("h w -> h w c", "h=3, c=2"), ("h w -> h w c", "h=4, c=2"), ("h w -> h w c", ""),
                        ("h w -> h", ""), ("h w -> h w c", "c=2, d=3"), ("h w -> h w c d", "c=2"),
                        ("h (w s) -> h w (s r)", "s=2, r=2"), ("h (w s) -> h w (s r)", "s=3, r=2")]:
            args = f", {kw}" if kw else ""
            f.add(s, f"out = repeat(x, '{pat}'{args})")
    f.add(mk("x", (4,)), "out = einops.repeat(x, 'c -> b c h w', b=2, h=3, w=3)")
    f.add(mk("x", (4,)), "out = einops.repeat(x, 'c -> b c', b=2)")
    f.add(mk("x", (2, 4)), "out = einops.repeat(x, 'b c -> b c', b=2)")
    f.add(mk("x", (2, 4)), "out = einops.repeat(x, 'b c h -> b c h w', w=2)")
    # reduce: mean / sum / max / min (and prod / any / all)
    for dt in ["f32", "f64", "i64", "i32", "bool", "f16"]:
        s = mk("x", (2, 3, 4), dt)
        for red in ["mean", "sum", "max", "min", "prod", "any", "all"]:
            for pat in ["b c h -> b c", "b c h -> b", "b c h -> b () h", "b c h -> c b h", "b c h -> b 1 h"]:
                f.add(s, f"out = reduce(x, '{pat}', '{red}')")
    s = mk("x", (2, 3, 4))
    for red in ["mean", "sum", "max", "min"]:
        f.add(s, f"out = reduce(x, '... h -> ...', '{red}')")
        f.add(s, f"out = reduce(x, 'b ... -> b', '{red}')")
        f.add(s, f"out = einops.reduce(x, 'b c h -> b h', reduction='{red}')")
        f.add(s, f"out = einops.reduce(x, 'b c h -> ', '{red}')")
    f.add(mk("x", (2, 3, 4, 6)), "out = reduce(x, 'b c (h h2) (w w2) -> b c h w', 'max', h2=2, w2=2)")
    f.add(mk("x", (2, 3, 4, 6)), "out = reduce(x, 'b c (h h2) (w w2) -> b c h w', 'max', h2=2, w2=4)")
    f.add(mk("x", (2, 3, 4, 6)), "out = reduce(x, 'b c (h 2) (w 2) -> b c h w', 'mean')")
    f.add(mk("x", (2, 3, 4, 6)), "out = reduce(x, 'b c h w -> b c 1 1', 'mean')")
    f.add(mk("x", (2, 3, 4, 6)), "out = reduce(x, 'b c h w -> b c () ()', 'max')")
    f.add(mk("x", (2, 3, 4)), "out = reduce(x, 'b c h -> b c d', 'mean')")
    f.add(mk("x", (2, 3, 4)), "out = reduce(x, 'b c h -> b c', 'median')")
    f.add(mk("x", (2, 3)), "out = reduce(x, 'b c h -> b c', 'mean')")
    f.add(mk("x", (2, 3, 4)), "out = reduce(x, 'b (c k) h -> b c', 'sum', k=2)")
    f.add(mk("x", (2, 6, 4)), "out = reduce(x, 'b (c k) h -> b c', 'sum', k=2)")
    # sizes from variables and from other tensors' shapes
    f.add([mk("x", (2, 12, 5)), "h = 3"], "out = rearrange(x, 'b (h d) n -> b h n d', h=h)")
    f.add([mk("x", (2, 12, 5)), mk("y", (4, 7))], "out = rearrange(x, 'b (h d) n -> b h n d', h=y.shape[0])")
    f.add([mk("x", (2, 12, 5)), mk("y", (5, 7))], "out = rearrange(x, 'b (h d) n -> b h n d', h=y.shape[0])")
    f.add([mk("x", (3, 4)), mk("y", (2, 7))], "out = repeat(x, 'h w -> b h w', b=y.size(0))")
    f.add([mk("x", (2, 3, 4)), mk("y", (2, 3, 4))], "out = rearrange(x, 'b c h -> b h c') + rearrange(y, 'b c h -> b h c')")
    f.add([mk("x", (2, 3, 4))], "out = rearrange(x.float(), 'b c h -> (b c) h').sum(0)")
    f.add([mk("x", (2, 3, 4))], "out = rearrange(x, 'b c h -> b h c', b=2, c=3, h=4)")
    f.add([mk("x", (2, 3, 4))], "out = rearrange(x, 'b c h_ -> b h_ c')")
    f.add([mk("x", (2, 3, 4))], "out = rearrange(x, 'b c h -> b h c', h_=4)")
    f.add([mk("x", (2, 3, 4))], "out = rearrange(x, 'b c h -> b h c')[0]")
    # einsum: the pattern comes last
    f.add([mk("a", (2, 3, 4)), mk("b", (2, 4, 5))], "out = einops.einsum(a, b, 'b i d, b d j -> b i j')")
    f.add([mk("a", (2, 3, 4)), mk("b", (2, 5, 4))], "out = einops.einsum(a, b, 'batch i d, batch j d -> batch i j')")
    f.add([mk("a", (2, 3, 4)), mk("b", (2, 5, 4))], "out = einops.einsum(a, b, '... i d, ... j d -> ... i j')")
    f.add([mk("a", (3, 4))], "out = einops.einsum(a, 'i j -> j i')")
    f.add([mk("a", (3, 4))], "out = einops.einsum(a, 'i j -> ')")
    f.add([mk("a", (3, 3))], "out = einops.einsum(a, 'i i -> i')")
    f.add([mk("a", (3, 4)), mk("b", (4,)), mk("c", (5,))], "out = einops.einsum(a, b, c, 'i j, j, k -> i k')")
    f.add([mk("a", (3, 4), "f64"), mk("b", (4, 5), "f64")], "out = einops.einsum(a, b, 'i j, j k -> i k')")
    f.add([mk("a", (2, 3, 4)), mk("b", (2, 5, 5))], "out = einops.einsum(a, b, 'b i d, b d j -> b i j')")
    f.add([mk("a", (2, 3, 4)), mk("b", (2, 4, 5))], "out = einops.einsum(a, b, 'b i d, b d j -> b i k')")
    f.add([mk("a", (2, 3))], "out = einops.einsum(a, 'b i d -> b i')")
    f.add([mk("a", (2, 3, 4)), mk("b", (2, 4, 5))], "out = einops.einsum(a, b, 'b i d, b d j')")
    # layers
    for pat, kw, xs in [("b c h w -> b (c h w)", "", (2, 3, 4, 5)), ("b (h d) n -> b h d n", ", h=2", (2, 6, 5)),
                        ("b c h w -> b (h w) c", "", (2, 3, 4, 5)), ("b c h w -> b (c h w)", "", (2, 3, 4)),
                        ("b (h d) n -> b h d n", ", h=4", (2, 6, 5)), ("b c (h p) -> b h (p c)", ", p=2", (2, 3, 8)),
                        ("... c -> c ...", "", (2, 3, 4))]:
        f.add([f"m = Rearrange('{pat}'{kw})", mk("x", xs)], "out = m(x)")
    for pat, red, kw, xs in [("b c h w -> b c", "mean", "", (2, 3, 4, 5)), ("b c h w -> b c", "max", "", (2, 3, 4, 5)),
                             ("b c (h h2) (w w2) -> b c h w", "max", ", h2=2, w2=2", (2, 3, 4, 6)),
                             ("b c (h h2) (w w2) -> b c h w", "max", ", h2=3, w2=2", (2, 3, 4, 6)),
                             ("b n c -> b c", "sum", "", (2, 5, 3)), ("b n c -> b c", "min", "", (2, 5, 3)),
                             ("b c h w -> b c", "mean", "", (2, 3, 4))]:
        f.add([f"m = Reduce('{pat}', '{red}'{kw})", mk("x", xs)], "out = m(x)")
        f.add([f"m = Reduce('{pat}', reduction='{red}'{kw})", mk("x", xs)], "out = m(x)")
    f.add(["m = Reduce('b c h w -> b c', 'mean')", mk("x", (2, 3, 4, 5), "i64")], "out = m(x)")
    # layers check their pattern when built
    for ctor in ["Rearrange('b c h -> b c')", "Rearrange('b c -> b c', z=2)", "Reduce('b c -> b', 'median')",
                 "Rearrange('b (c h -> b c h')", "Rearrange('b (h d) -> b h d')", "Rearrange('b c -> b c ...')",
                 "Reduce('b c -> b c d', 'mean')", "Rearrange('b (h d) -> b h d', h=2)", "Reduce('b c -> b', reduction='sum')"]:
        f.add([f"m = {ctor}", mk("x", (2, 6))], "out = m(x)")
    f.add(["m = nn.Sequential(Rearrange('b c h w -> b (c h w)'), nn.Linear(60, 7))", mk("x", (2, 3, 4, 5))], "out = m(x)")
    f.add(["m = nn.Sequential(Rearrange('b c h w -> b (c h w)'), nn.Linear(50, 7))", mk("x", (2, 3, 4, 5))], "out = m(x)")
    f.add(["m = nn.Sequential(nn.Conv2d(3, 8, 3), Reduce('b c h w -> b c', 'mean'), nn.Linear(8, 2))",
           mk("x", (2, 3, 6, 6))], "out = m(x)")
    return f


def edge_ranks(f):
    """Inputs of rank 0 and operands of odd ranks, where a rule's own
    indexing is easy to get wrong (found by feeding every rule such inputs):
    the reordering of a 0-d tensor, `cosine_similarity`'s default dim 1,
    `pairwise_distance`'s positional norm order, a batch of matrices times a
    vector, `unique` along a dim of a 0-d tensor, losses of a 0-d input."""
    for expr in ["out = F.cosine_similarity(a, b)", "out = F.cosine_similarity(a, b, 0)",
                 "out = F.cosine_similarity(a, b, dim=-1)", "out = F.pairwise_distance(a, b)",
                 "out = F.pairwise_distance(a, b, 1)", "out = F.pairwise_distance(a, b, 2, 1e-6, True)",
                 "out = torch.cosine_similarity(a, b)"]:
        for sa, sb in [((), ()), ((2, 3, 4), (2, 3, 4)), ((3, 4), (4,)), ((5,), (5,))]:
            f.add([mk("a", sa), mk("b", sb)], expr)
    for sa, sb in [((2, 3, 4, 5, 6), (3,)), ((2, 3, 4, 5, 6), (6,)), ((4, 5, 6), (0,)), ((4, 5, 6), (6,)),
                   ((4, 5, 6), (5,))]:
        f.add([mk("a", sa), mk("b", sb)], "out = a @ b")
        f.add([mk("a", sa), mk("b", sb)], "out = torch.matmul(a, b)")
    f.add([mk("a", ())], "out = torch.unique(a, dim=0)", dd=True)
    for t in ["torch.tensor(1)", "torch.tensor(0.5)", "torch.tensor([1, 2])"]:
        f.add([mk("a", ()), f"t = {t}"], "out = F.cross_entropy(a, t)")
        f.add([mk("a", ()), f"t = {t}"], "out = F.nll_loss(a, t)")
    for xs, t in [((4, 5), "torch.randint(0, 5, (4, 5))"), ((4, 5), "torch.rand(4, 5)"), ((4,), "torch.tensor([0, 1, 2, 3])"),
                  ((2, 3, 4), "torch.randint(0, 3, (2, 3, 4))")]:
        f.add([mk("a", xs), f"t = {t}"], "out = F.cross_entropy(a, t)")
        f.add(["crit = nn.CrossEntropyLoss()", mk("a", xs), f"t = {t}"], "out = crit(a, t)")
    return f


def by_position(f):
    """Reductions whose positional arguments are easy to misread: `var` and
    `std` take `unbiased` before `keepdim`; `var_mean`, `std_mean`, `diff`
    with what it joins, and `aminmax`'s keyword-only dim."""
    for name in ["var", "std", "var_mean", "std_mean"]:
        for args in ["1, True", "1, False, True", "1, True, False", "(0, 2), True, True", "True", "dim=1, unbiased=False, keepdim=True",
                     "1, correction=0, keepdim=True"]:
            call = f"torch.{name}(x, {args})"
            if name.endswith("_mean"):
                f.add([mk("x", (2, 3, 4))], call, unpack=True)
            else:
                f.add([mk("x", (2, 3, 4))], f"out = {call}")
    for args in ["dim=0, prepend=torch.zeros(1, 3, 4)", "dim=0, append=torch.zeros(2, 3, 4)", "n=2, prepend=torch.zeros(2, 3, 1), append=torch.zeros(2, 3, 2)",
                 "dim=0, prepend=torch.zeros(1, 3, 5)", "prepend=torch.zeros(3, 4)", "n=-1", "n=0", "n=5", "2, 1"]:
        f.add([mk("x", (2, 3, 4))], f"out = torch.diff(x, {args})")
    for xs in [(2, 3, 4), (2, 0), (0,), ()]:
        for args in ["", ", dim=1", ", dim=-1, keepdim=True", ", keepdim=True", ", dim=0"]:
            f.add([mk("x", xs)], f"torch.aminmax(x{args})", unpack=True)
    return f


def attention_checks(f):
    """`F.scaled_dot_product_attention`'s checks: grouped-query heads, a
    mask with `is_causal`, and masks added in place to weights of fewer
    dims (a 3-D query's weights get a leading 1 in torch's kernel); and the
    losses computed elementwise from input and target (the variance of
    `gaussian_nll_loss`, targets that broadcast)."""
    sdpa = "out = F.scaled_dot_product_attention"
    for qs, ks, vs, extra in [((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 8), ", enable_gqa=True"),
                              ((2, 4, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8), ", enable_gqa=True"),
                              ((2, 4, 5, 8), (2, 2, 7, 8), (2, 4, 7, 8), ", enable_gqa=True"),
                              ((2, 4, 5, 8), (2, 4, 7, 8), (1, 4, 7, 8), ""),
                              ((4, 5, 8), (2, 4, 7, 8), (2, 4, 7, 8), "")]:
        f.add([mk("q", qs), mk("k", ks), mk("v", vs)], f"{sdpa}(q, k, v{extra})")
    for qs, ks, ms, extra in [((2, 4, 5, 8), (2, 4, 7, 8), (5, 7), ", is_causal=True"),
                              ((2, 4, 5, 8), (2, 4, 7, 8), (2, 1, 5, 7), ""),
                              ((2, 4, 5, 8), (2, 4, 7, 8), (3, 1, 5, 7), ""),
                              ((2, 4, 5, 8), (2, 4, 7, 8), (1, 5, 7, 1), ""),
                              ((1, 4, 5, 8), (1, 4, 7, 8), (2, 1, 5, 7), ""),
                              ((3, 5, 8), (3, 7, 8), (2, 5, 7), ""),
                              ((3, 5, 8), (3, 7, 8), (4, 3, 5, 7), ""),
                              ((5, 8), (7, 8), (2, 5, 8), ""),
                              ((5, 8), (7, 8), (2, 5, 7), "")]:
        f.add([mk("q", qs), mk("k", ks), mk("v", ks), mk("mask", ms)], f"{sdpa}(q, k, v, attn_mask=mask{extra})")
    loss_cases = [
        ("gaussian_nll_loss", (4, 3), (4, 3), ", torch.ones(4)"), ("gaussian_nll_loss", (4, 3), (4, 3), ", torch.ones(4, 1)"),
        ("gaussian_nll_loss", (4, 3), (4, 3), ", torch.ones(3)"), ("gaussian_nll_loss", (4, 3), (4, 3), ", torch.ones(2, 3)"),
        ("gaussian_nll_loss", (4, 3), (3,), ", torch.ones(4, 3)"),
        ("multilabel_soft_margin_loss", (4, 3, 2), (4, 3, 2), ""), ("multilabel_soft_margin_loss", (3,), (3,), ""),
        ("multilabel_soft_margin_loss", (4, 3), (4, 1), ""), ("poisson_nll_loss", (4, 1), (4, 3), ""),
        ("hinge_embedding_loss", (4, 1), (4, 3), ""), ("hinge_embedding_loss", (2, 4, 3), (4, 3), ""),
    ]
    for fn, xs, ts, extra in loss_cases:
        for red in ["", ", reduction='none'"]:
            f.add([mk("x", xs), mk("t", ts)], f"out = F.{fn}(x, t{extra}{red})")
    for layer, xs, ts, extra in [("PoissonNLLLoss()", (4, 3), (4, 2), ""), ("PoissonNLLLoss(reduction='none')", (4, 1), (4, 3), ""),
                                 ("GaussianNLLLoss()", (4, 3), (4, 3), ", torch.ones(4)"),
                                 ("GaussianNLLLoss(reduction='none')", (4, 3), (4, 3), ", torch.ones(2, 3)"),
                                 ("HingeEmbeddingLoss(reduction='none')", (4, 3), (3,), ""),
                                 ("MultiLabelSoftMarginLoss(reduction='none')", (4, 3), (4, 3), "")]:
        f.add([f"m = nn.{layer}", mk("x", xs), mk("t", ts)], f"out = m(x, t{extra})")
    return f


def planes_and_bounds(f):
    """`rot90` in the plane it is given (a quarter turn swaps those two
    sizes), `clamp` whose tensor bounds broadcast with (and may grow) the
    input, `linalg.vecdot` along a dim, `broadcast_tensors` of three."""
    for args in ["1, [1, 2]", "3, (0, 2)", "2, [1, 2]", "1, [1, 1]", "1, [0, 3]", "1, [0, 1, 2]", "1, [-1, -2]", "-1, [2, 0]"]:
        f.add([mk("x", (2, 3, 4))], f"out = torch.rot90(x, {args})")
    f.add([mk("x", (2, 3))], "out = torch.rot90(x, 1, [0, -2])")
    for lo, hi in [((2, 1, 1), None), ((3,), (4,)), ((4,), (3,)), ((1, 3), (2, 1)), ((), (2, 3))]:
        setup = [mk("x", (2, 3)), mk("lo", lo)] + ([mk("hi", hi)] if hi else [])
        f.add(setup, "out = torch.clamp(x, lo, hi)" if hi else "out = torch.clamp(x, lo)")
        f.add(setup, "out = x.clamp(min=lo, max=hi)" if hi else "out = x.clamp(max=lo)")
    for sa, sb, extra in [((5, 2, 3), (2, 3), ""), ((2, 3), (3,), ", dim=0"), ((2, 3), (2, 1), ", dim=0"), ((2, 3), (2, 3), ", dim=2")]:
        f.add([mk("a", sa), mk("b", sb)], f"out = torch.linalg.vecdot(a, b{extra})")
    for shapes in [((2, 3), (1, 3), (5, 1, 1)), ((2, 3), (1, 3), (5, 1, 2))]:
        setup = [mk(n, sh) for n, sh in zip("abc", shapes)]
        f.add(setup, "out = torch.broadcast_tensors(a, b, c)[2]")
    return f


def product_dtypes(f):
    """A product of two dtypes, refused in the words of the kernel the
    operands' ranks pick (`dot`, `addmv`, `mm`, `bmm`)."""
    for sa, sb in [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 2)), ((4, 2, 3), (3, 2)),
                   ((4, 2, 3), (3,)), ((3,), (4, 3, 2)), ((4, 2, 3), (4, 3, 2))]:
        f.add([mk("a", sa), mk("b", sb, "f64")], "out = a @ b")
    f.add([mk("a", (3,)), mk("b", (3,), "c64")], "out = torch.dot(a, b)")
    f.add([mk("a", (2, 3), "f64"), mk("b", (3,))], "out = torch.mv(a, b)")
    return f


def class_weights(f):
    """A class weight of `cross_entropy` and `nll_loss` (and their layers)
    has one entry per class: the input's dim 1, or its only dim."""
    for xs, ts, ws in [((10,), (), (5,)), ((8, 10), (8,), (5,)), ((8, 10), (8,), (10,)), ((8, 10), (8,), (2, 5)),
                       ((8, 10, 6), (8, 6), (5,)), ((8, 10, 4, 4), (8, 4, 4), (5,)), ((8, 10, 4, 4), (8, 4, 4), (10,))]:
        setup = [mk("x", xs), f"t = torch.randint(0, 5, {tup(ts) if ts else '()'})", mk("w", ws)]
        f.add(setup, "out = F.cross_entropy(x, t, weight=w)")
        f.add(setup, "out = F.nll_loss(x, t, w)")
        f.add(setup, "out = nn.CrossEntropyLoss(weight=w)(x, t)")
        f.add(setup, "out = nn.NLLLoss(weight=w, reduction='none')(x, t)")
    return f


def complex_numbers(f):
    """Python complex numbers with tensors: promotion makes a float tensor's
    dtype complex with parts as wide (half gives `complex32`, bfloat16
    `bcomplex32`), and the CPU kernels that refuse those two; complex
    tensors have no order."""
    for da in ["bool", "i64", "f16", "bf16", "f32", "f64"]:
        setup = mk("a", (2, 3), da)
        for expr in ["a - 1j", "a / 1j", "1j / a", "1j - a", "a < 1j", "a == 1j", "a * (2 + 3j)",
                     "torch.add(a, 1j)", "a.mul(-1j)", "(a + 1j).real", "(a + 1j).abs()"]:
            f.add(setup, f"out = {expr}")
    for da in ["f16", "f32"]:
        setup = [mk("a", (2, 3), da), "z = a + 1j"]
        for expr in ["z / 2", "2 / z", "z * z", "z + a", "z.exp()", "z.sum()", "torch.maximum(z, z)",
                     "z > 0", "torch.sigmoid(z)", "-z", "z.abs()", "torch.view_as_real(z)", "z.mean(0)",
                     "torch.sqrt(z)", "z.var()"]:
            f.add(setup, f"out = {expr}")
    for dt in ["torch.complex32", "torch.chalf"]:
        f.add([f"z = torch.zeros(2, 3, dtype={dt})"], "out = z + 1")
    f.add([mk("a", (2, 3), "f16")], "out = torch.complex(a, a)")
    return f


FAMILIES = [fam_creation, lambda: complex_numbers(more_pointwise(fam_pointwise())), lambda: by_position(more_reduction(fam_reduction())),
            fam_indexing, lambda: planes_and_bounds(more_view(fam_view())), lambda: more_join(fam_join()),
            lambda: product_dtypes(edge_ranks(more_linalg(fam_linalg()))), lambda: more_index_ops(fam_index_ops()),
            lambda: more_convert(fam_convert()), lambda: trust_nn(more_nn(fam_nn())), lambda: class_weights(attention_checks(more_functional(fam_functional()))),
            fam_einops]


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_default_dtype(torch.float32)
    total = 0
    for fam_fn in FAMILIES:
        fam = fam_fn()
        rows = []
        done = set()
        for i, (setup, expr, unpack, dd) in enumerate(fam.cases):
            try:
                line, res = run_case(setup, expr, unpack, fam.imports)
            except SetupError as e:
                setup, line, res = e.setup, e.line, {"error": e.error}
                if (tuple(setup), line) in done:
                    continue
            done.add((tuple(setup), line))
            if res and "error" in res and any(v in res["error"]["message"] for v in VALUE_DEPENDENT):
                continue  # depends on the random values, not on shapes or dtypes
            if line is None:
                continue
            # ids hash the snippet, so they stay stable when cases are added or removed
            digest = hashlib.sha1(("\n".join(setup) + "\n" + line).encode()).hexdigest()[:8]
            row = {"id": f"{fam.name}-{digest}", "setup": setup, "expr_line": line}
            if fam.imports:
                row["imports"] = fam.imports
            row.update(res)
            if dd:
                row["data_dependent"] = True
            rows.append(row)
        path = os.path.join(OUT, f"{fam.name}.jsonl")
        with open(path, "w") as fh:
            for r in rows:
                fh.write(json.dumps(r, separators=(",", ":")) + "\n")
        nerr = sum(1 for r in rows if "error" in r)
        print(f"{fam.name}: {len(rows)} cases ({nerr} errors)")
        total += len(rows)
    print(f"total: {total}")


if __name__ == "__main__":
    main()
