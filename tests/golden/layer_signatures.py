"""Write torch's constructor signature of every layer class the registry
names, one per line, for `rules/nn/registry.rs`'s test to compare with.

    /work/torchenv/bin/python tests/golden/layer_signatures.py

Reads the class names from the registry's table (`layer_table.rs`), so a
new entry is checked as soon as the file is written again. Classes whose constructor takes
`*args, **kwargs` (torch's `LSTM`, `Identity`) say so and are compared by
the registry's own test no further; einops' layers come from einops when
it is installed.
"""

import inspect
import os
import re

import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "..", "server", "analysis", "src", "rules", "nn", "layer_table.rs")
OUT = os.path.join(HERE, "layer_signatures.txt")


def registry_names():
    text = open(TABLE).read()
    table = text[text.index("pub(crate) static LAYERS"):]
    # Layer names are the table's only capitalised strings.
    return sorted(set(re.findall(r'"([A-Z][A-Za-z0-9]*)"', table)))


def layer_class(name):
    if hasattr(nn, name):
        return getattr(nn, name)
    try:
        import einops.layers.torch as layers
    except ImportError:
        return None
    return getattr(layers, name, None)


def render(parameter):
    if parameter.default is inspect.Parameter.empty:
        return parameter.name
    default = parameter.default
    text = getattr(default, "__name__", None) if callable(default) else None
    return f"{parameter.name}={text or repr(default)}"


def main():
    lines = []
    for name in registry_names():
        cls = layer_class(name)
        if cls is None:
            lines.append(f"{name} unavailable")
            continue
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
            lines.append(f"{name} varargs")
            continue
        parts = []
        for p in parameters:
            if p.kind == p.KEYWORD_ONLY and "*" not in parts:
                parts.append("*")
            parts.append(render(p))
        lines.append(f"{name}({', '.join(parts)})")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
