"""A kernel loop that leaves early: a break (or a return) at i=3 of range(n), C backend and upstream mlir-runner.

    .venv/bin/python benchmarks/bench_kernel_early_exit.py [--quick] [--runner]

A breaking for loop is an scf.while testing its flag, so the time does not grow with n. (It was an scf.for
counting out the rest of the range, empty: at n = 10**9, 0.28 s for a loop with a store, 1.1 s for four of them
nested under another loop; mlir-runner 1.2-3.6 s.) ``--quick``: n = 10**6 and no mlir-runner run; ``--runner``:
also time mlir-runner (lowering and JIT included, ~0.3 s of it fixed).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the kernels the early-exit tests check against Python and mlir-runner (one home: the tests' kernel file)
from tests.frontends.kernel.kernel_exit_kernels import count_until, find_return, nested_find  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runner", action="store_true")
    args = ap.parse_args()
    n = 10**6 if args.quick else 10**9
    x = np.arange(16, dtype=np.int64)
    cases = [(count_until, lambda m: (x, np.zeros(16, np.int64), m, np.int64(3)), 3),
             (find_return, lambda m: (x, np.zeros(16, np.int64), m, np.int64(3)), 3),
             (nested_find, lambda m: (np.tile(x, (4, 1)), m, np.int64(3)), 12)]
    for k, make, want in cases:
        k(*make(10))  # compile
        t0 = time.perf_counter()
        got = k(*make(n))
        ms = (time.perf_counter() - t0) * 1e3
        assert got == want, (k.name, got)
        print(f"C            {k.name:12s} break at i=3 of range({n:.0e}): {ms:8.3f} ms")
    if args.runner and not args.quick:
        from loom.oracle import mlir

        for k, make, want in cases:
            t0 = time.perf_counter()
            got = mlir.run(k.module, k.name, list(make(n))).results[0]
            ms = (time.perf_counter() - t0) * 1e3
            assert got == want, (k.name, got)
            print(f"mlir-runner  {k.name:12s} break at i=3 of range({n:.0e}): {ms:8.1f} ms (lowering and JIT included)")


if __name__ == "__main__":
    main()
