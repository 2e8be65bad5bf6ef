"""Kernel-frontend throughput: trace a generated kernel of >= 10,000 ops and print ops/s.

The kernel source (a long straight-line body plus a loop nest) is written to a
temporary file and imported, so the frontend reads it through ``inspect`` like
any user kernel.  Target: >= 10,000 ops/s for tracing (AST -> xDSL ops).

    python benchmarks/bench_frontend.py [--statements 2500] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import sys
import tempfile
import time
from pathlib import Path


def generate_source(n: int) -> str:
    lines = [
        "import math",
        "import loom",
        "from loom.frontends.kernel import F32, Index, MemRef",
        "",
        "@loom.kernel",
        f"def big(A: MemRef[({n},), F32], B: MemRef[({n},), F32], x: F32) -> F32:",
        "    acc = x",
    ]
    for k in range(n):
        if k % 5 == 4:
            lines.append(f"    acc = acc + math.exp(A[{k}]) if A[{k}] > x else acc - B[{k}]")
        else:
            lines.append(f"    A[{k}] = A[{k}] * {1 + k % 7}.5 + B[{(k * 7) % n}] - acc")
    lines += [
        "    for i in range(4):",
        "        for j in range(4):",
        "            acc = acc + A[i * 4 + j] * B[j]",
        "    return acc",
    ]
    return "\n".join(lines) + "\n"


def load_kernel(path: Path):
    spec = importlib.util.spec_from_file_location("loom_bench_generated_kernel", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.big


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--statements", type=int, default=2500)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated_kernel.py"
        path.write_text(generate_source(args.statements))
        kernel = load_kernel(path)
        t0 = time.perf_counter()
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
        func_op, _ = kernel._trace()
        if args.profile:
            prof.disable()
        t1 = time.perf_counter()
        module = kernel.module  # wrap callees + xDSL verify
        t2 = time.perf_counter()
        n_ops = sum(1 for _ in func_op.walk())
        print(f"statements: {args.statements}, ops: {n_ops}")
        print(f"trace time: {t1 - t0:.3f} s  ({n_ops / (t1 - t0):,.0f} ops/s, target >= 10,000)")
        print(f"module + verify: {t2 - t1:.3f} s")
        print(f"total to verified module: {t2 - t0:.3f} s  ({n_ops / (t2 - t0):,.0f} ops/s)")
        assert n_ops >= 10_000, n_ops
        del module
        if args.profile:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
