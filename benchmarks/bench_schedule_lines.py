"""Lines of accelerator schedule code: original primitives vs the declarative layer (thesis Table 6.4).

For gaussian, harris and the conv layer (the thesis' "resnet"), counts the lines of
``imperative_schedule`` (tile, hw_accelerate, compute_at, unroll, ...) and of
``accel_schedule`` (IterLevel, iteration_order, accelerate, create_memories,
output_rate) in each app module: the function body without its docstring,
blank lines and comment-only lines. Both build the same design
(tests/frontends/pipeline/test_pipeline_declarative.py). The thesis' C++
schedules, which also set up a GLB level and host tiling: gaussian 36 -> 25,
harris 62 -> 33, resnet 48 -> 31.

    python benchmarks/bench_schedule_lines.py [--quick]

``--quick`` is the same count (it takes milliseconds).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from loom.examples.pipelines import load_app  # noqa: E402

THESIS = {"gaussian": (36, 25), "harris": (62, 33), "conv_layer": (48, 31)}


def schedule_lines(fn) -> int:
    """Code lines of a function's body: no docstring, blank or comment-only lines."""
    source = inspect.getsource(fn)
    node = ast.parse(source).body[0]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    lines = source.splitlines()[body[0].lineno - 1:body[-1].end_lineno]
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the same count")
    ap.parse_args()
    head = ("app", "imperative lines", "declarative lines", "thesis original", "thesis declarative")
    print(" | ".join(head))
    print(" | ".join("-" * len(h) for h in head))
    shorter = True
    for name, (t_orig, t_decl) in THESIS.items():
        app = load_app(name)
        imp, decl = schedule_lines(app.imperative_schedule), schedule_lines(app.accel_schedule)
        shorter &= decl < imp
        print(f"{name:>10} | {imp:16d} | {decl:17d} | {t_orig:15d} | {t_decl:18d}")
    print("declarative schedule shorter for every app:", "MET" if shorter else "MISSED")


if __name__ == "__main__":
    main()
