"""What checking every index of a ``@loom.kernel`` costs: each kernel compiled as ``@loom.kernel`` compiles it
(``check_gathers=True``: data-placed indices at the access, loop-linear ones at their loop's entry, ones under an
if in a second, checked copy of the innermost loop) against the same C with no index check.

    .venv/bin/python benchmarks/bench_kernel_index_checks.py [--quick] [--repeat N]

Kernels: matmul (i, k, j) over dynamic dims; a 3-D 7-point box filter with boundary ifs (its fast copy runs);
Game of Life on a torus (``g[(i + di) % h, ...]``: not linear, checked at each access); edit distance (two rows
indexed over another array's dim). Medians of ``--repeat`` (>= 5) runs after a warm-up, the two builds alternating; each result is checked
against the unchecked build first.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_c_quality import median_times  # noqa: E402  (sibling script: interleaved medians)

from loom.backends.c import compile_module  # noqa: E402
from loom.examples.kernels import matmul_ikj  # noqa: E402
from loom.passes.recipes import lower_to_c  # noqa: E402
from tests.frontends.kernel.kernel_nelli_kernels import box3d_clamped, edit_distance, life_torus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    repeat = max(5, args.repeat)
    rng = np.random.default_rng(0)
    n, side, grid, text = (96, 32, 128, 300) if args.quick else (256, 96, 512, 2000)
    cases = [
        (matmul_ikj, f"matmul ikj {n}^3 f32", lambda: (rng.random((n, n), dtype=np.float32),
                                                      rng.random((n, n), dtype=np.float32),
                                                      np.zeros((n, n), np.float32))),
        (box3d_clamped, f"box3d_clamped {side}^3 f32", lambda: (rng.random((side,) * 3, dtype=np.float32),
                                                               np.zeros((side,) * 3, np.float32))),
        (life_torus, f"life_torus {grid}^2 u8", lambda: ((rng.random((grid, grid)) < 0.3).astype(np.int8),
                                                         np.zeros((grid, grid), np.int8))),
        (edit_distance, f"edit_distance {text}x{text}", lambda: (rng.integers(0, 4, text).astype(np.int32),
                                                                rng.integers(0, 4, text).astype(np.int32),
                                                                np.zeros(text + 1, np.int32),
                                                                np.zeros(text + 1, np.int32))),
    ]
    print(f"bench_kernel_index_checks: median of {repeat} runs")
    print(f"{'kernel':<28} {'unchecked ms':>12} {'@loom.kernel ms':>16} {'cost':>7}")
    for kernel, label, make in cases:
        data = make()
        runs, outputs = [], []
        for check in (False, True):
            fn = compile_module(lower_to_c(kernel.module), check_gathers=check).function(kernel.name)
            arrays = [a.copy() for a in data]
            fn(*arrays)
            outputs.append([a.copy() for a in arrays])
            runs.append(lambda fn=fn, arrays=arrays: fn(*arrays))  # matmul keeps accumulating: the same work
        times = median_times(runs, repeat)
        for a, b in zip(*outputs):
            np.testing.assert_array_equal(a, b)
        print(f"{label:<28} {times[0] * 1e3:12.2f} {times[1] * 1e3:16.2f} {(times[1] / times[0] - 1) * 100:+6.0f}%")


if __name__ == "__main__":
    main()
