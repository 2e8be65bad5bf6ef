"""Kernel-frontend throughput: trace a generated kernel of >= 10,000 ops and print ops/s.

The kernel source (a long straight-line body plus a loop nest) is written to a
temporary file and imported, so the frontend reads it through ``inspect`` like
any user kernel. Time is CPU time of this process (``time.process_time``), so
other work on a shared machine does not count; the figure is the median of 5
traces (each of a freshly imported kernel). Target: >= 10,000 ops/s for tracing
(AST -> xDSL ops).

    python benchmarks/bench_frontend.py [--statements 2500] [--repeats 5] [--quick] [--profile]

``--quick``: 500 statements (about 2,000 ops), 3 traces.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET_OPS_PER_S = 10_000


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


def load_kernel(path: Path, tag: int):
    """A fresh kernel object (its own module), so every trace starts with empty caches."""
    spec = importlib.util.spec_from_file_location(f"loom_bench_generated_kernel_{tag}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.big


def cpu_seconds(fn):
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--statements", type=int, default=2500)
    ap.add_argument("--repeats", type=int, default=5, help="traces (the median is reported)")
    ap.add_argument("--quick", action="store_true", help="500 statements, 3 traces")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.statements, args.repeats = 500, 3
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated_kernel.py"
        path.write_text(generate_source(args.statements))
        traces, verifies = [], []
        n_ops = 0
        profile = None
        for rep in range(args.repeats):
            kernel = load_kernel(path, rep)
            prof = cProfile.Profile() if args.profile and rep == 0 else None
            if prof:
                profile = prof
                prof.enable()
            trace_s, (func_op, _) = cpu_seconds(kernel._trace)
            if prof:
                prof.disable()
            verify_s, _ = cpu_seconds(lambda: kernel.module)  # wrap callees + xDSL verify
            n_ops = sum(1 for _ in func_op.walk())
            traces.append(trace_s)
            verifies.append(verify_s)
    trace_s, verify_s = statistics.median(traces), statistics.median(verifies)
    rate = n_ops / trace_s
    print(f"statements: {args.statements}, ops: {n_ops}; CPU time (process_time), median of {args.repeats}")
    print(f"trace time: {trace_s:.3f} s  ({rate:,.0f} ops/s, target >= {TARGET_OPS_PER_S:,}): "
          f"{'MET' if rate >= TARGET_OPS_PER_S else 'MISSED'}")
    print(f"module + verify: {verify_s:.3f} s")
    print(f"total to verified module: {trace_s + verify_s:.3f} s  ({n_ops / (trace_s + verify_s):,.0f} ops/s)")
    if not args.quick and n_ops < 10_000:
        print(f"only {n_ops} ops: use more --statements for the stated figure", file=sys.stderr)
        return 1
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
