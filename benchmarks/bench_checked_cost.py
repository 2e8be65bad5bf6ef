"""Cost of loom's run-time checks in the generated C, on the loops of ``bench_c_quality.py``.

Three builds of each kernel (matmul 256^3 f32, 3x3 stencil 2048x2048 f32):
- unchecked: no checks (a module with no integer division by a run-time value; what ships by default);
- guarded: the entry wrapper (status pointer + setjmp) that every module with a run-time integer
  divisor gets by default, for its always-on division checks;
- checked: opt-in checked mode (``checked=True`` / ``LOOM_CHECK_BOUNDS=1``): every index checked too.
Prints the median time of each and the overhead in percent over unchecked.

    python benchmarks/bench_checked_cost.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import bench_c_quality as quality  # noqa: E402  (sibling script: the same MLIR loop nests)

from loom.backends.c import compile_module  # noqa: E402

# a run-time divisor that is never 0: the module gets the guarded entry, the loops stay the same
GUARD_FUNC = """
func.func @guard(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32
  func.return %q : i32
}
"""


def with_guard(mlir: str) -> str:
    return mlir + GUARD_FUNC


def dynamic(mlir: str, static_type: str) -> str:
    return mlir.replace(static_type, "?x?xf32")


def build(mlir: str, name: str, checked: bool):
    return compile_module(quality.parse(mlir), sanitize=False, checked=checked).function(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 runs each (a few seconds)")
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    rng = np.random.default_rng(0)
    n, h, w = quality.N, quality.H, quality.W
    mm = [rng.standard_normal((n, n), dtype=np.float32) for _ in range(2)] + [np.zeros((n, n), np.float32)]
    img = [rng.standard_normal((h, w), dtype=np.float32), np.zeros((h, w), np.float32)]
    cases = [
        (f"matmul {n}^3 f32", quality.MATMUL_MLIR, "matmul", mm),
        (f"3x3 stencil {h}x{w} f32", quality.STENCIL_MLIR, "blur", img),
        # the same loops on memref<?x?xf32>: the compiler cannot prove the indices in range
        (f"matmul {n}^3 dynamic", dynamic(quality.MATMUL_MLIR, f"{n}x{n}xf32"), "matmul", mm),
        (f"3x3 stencil dynamic", dynamic(quality.STENCIL_MLIR, f"{h}x{w}xf32"), "blur", img),
    ]
    print(f"median of {repeat} runs; overhead relative to unchecked")
    print(f"{'kernel':<26} {'unchecked':>10} {'guarded':>10} {'checked':>10} {'guard %':>8} {'checked %':>9}")
    for name, mlir, fn, arrays in cases:
        fns = [build(mlir, fn, False), build(with_guard(mlir), fn, False), build(mlir, fn, True)]
        outs = []
        for f in fns:
            copy = [a.copy() for a in arrays]
            f(*copy)
            outs.append(copy[-1])
        for o in outs[1:]:
            assert np.array_equal(o, outs[0]), f"{name}: builds disagree"
        times = quality.median_times([lambda f=f: f(*arrays) for f in fns], repeat)
        t0, tg, tc = times
        print(f"{name:<26} {t0 * 1e3:>8.2f}ms {tg * 1e3:>8.2f}ms {tc * 1e3:>8.2f}ms "
              f"{(tg / t0 - 1) * 100:>7.1f}% {(tc / t0 - 1) * 100:>8.1f}%")


if __name__ == "__main__":
    main()
