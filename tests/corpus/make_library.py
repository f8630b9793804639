"""Build the library variant of this corpus, mechanically.

For every NAME.py here that has an oracle golden NAME.json and is not a
bug_*.py file (a bug needs the main block to raise), write
OUT/NAME.py: the same script with the top-level
`if __name__ == "__main__":` block (and everything after it) cut off, and
OUT/NAME.json: the golden restricted to bindings and scalars on
lines above the cut, with a note saying so (the convention of
/work/shared/corpus-library).

OUT defaults to target/corpus-library: the variant is derived, not kept in
the repository; ./scripts/test builds it before scoring it.

Run with any python3 (no torch needed):
    python3 tests/corpus/make_library.py [SRC_DIR [OUT_DIR]]
"""
import ast
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "target", "corpus-library")


def main_block_line(source):
    """1-based line of the top-level `if __name__ == "__main__":`, or None."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.If):
            t = node.test
            if (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"
                    and len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Constant)
                    and t.comparators[0].value == "__main__"):
                return node.lineno
    return None


def build(src_dir=HERE, out_dir=DEFAULT_OUT):
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for fname in sorted(os.listdir(src_dir)):
        if not fname.endswith(".py") or fname.startswith("bug_"):
            continue
        name = fname[:-3]
        golden_path = os.path.join(src_dir, name + ".json")
        if not os.path.exists(golden_path):
            continue
        with open(os.path.join(src_dir, fname)) as f:
            source = f.read()
        cut = main_block_line(source)
        if cut is None:
            print(f"skip {fname}: no main block", file=sys.stderr)
            continue
        kept = source.splitlines()[: cut - 1]
        while kept and not kept[-1].strip():
            kept.pop()
        with open(golden_path) as f:
            golden = json.load(f)
        if golden.get("error") is not None:
            print(f"skip {fname}: the golden has an error", file=sys.stderr)
            continue
        golden["bindings"] = [b for b in golden.get("bindings", []) if b["line"] < cut]
        golden["scalars"] = [s for s in golden.get("scalars", []) if s["line"] < cut]
        golden["notes"] = list(golden.get("notes", [])) + [
            f"library variant: lines {cut}- (the main block) removed; "
            "bindings are torch's answers for the lines above"
        ]
        with open(os.path.join(out_dir, fname), "w") as f:
            f.write("\n".join(kept) + "\n")
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(golden, f, indent=1)
            f.write("\n")
        written.append(name)
    print(f"wrote {len(written)} library files to {out_dir}")


# make_goldens.py runs every *.py in this folder under the oracle; do nothing there.
if __name__ == "__main__" and "__oracle__" not in globals():
    build(*sys.argv[1:3])
