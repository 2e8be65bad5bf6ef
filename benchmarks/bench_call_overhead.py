"""Fixed costs of the C backend: a warm call of a tiny kernel, and compile_module on a cache hit.

    .venv/bin/python benchmarks/bench_call_overhead.py [--quick]

``--quick``: a tenth of the calls per sample.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.memref import MemRef
from xdsl.parser import Parser

import loom.backends.c as cbackend
from loom.backends.c import compile_module

TINY = """
func.func @add(%a: f32, %b: f32) -> f32 {
  %r = arith.addf %a, %b : f32
  return %r : f32
}
func.func @first(%A: memref<16xf32>, %B: memref<?x?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %A[%c0] : memref<16xf32>
  memref.store %x, %B[%c0, %c0] : memref<?x?xf32>
  return %x : f32
}
"""


def parse(text: str):
    ctx = Context()
    for dialect in (Arith, Builtin, Func, MemRef):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def per_call(fn, n: int) -> float:
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the calls")
    scale = 10 if ap.parse_args().quick else 1
    module = parse(TINY)
    compiled = compile_module(module, sanitize=False)
    add = compiled.function("add")
    first = compiled.function("first")
    a = np.ones(16, np.float32)
    b = np.zeros((3, 4), np.float32)
    rows = [
        ("warm call, 2 scalars -> f32", per_call(lambda: add(1.0, 2.0), 20000 // scale) * 1e6, "us"),
        ("warm call, 2 memrefs -> f32", per_call(lambda: first(a, b), 20000 // scale) * 1e6, "us"),
        ("compile_module, in-process cache hit", per_call(lambda: compile_module(module, sanitize=False), 200 // scale) * 1e3, "ms"),
    ]

    def disk_hit():
        cbackend._LOADED.clear()  # as in a new process: the shared object is on disk
        compile_module(module, sanitize=False)

    rows.append(("compile_module, in-process cache cleared", per_call(disk_hit, 50 // scale) * 1e3, "ms"))
    print(f"{'measure':<46} {'value':>10}")
    for name, value, unit in rows:
        print(f"{name:<46} {value:>8.2f} {unit}")


if __name__ == "__main__":
    main()
