"""Double buffering vs the same generated driver without it, on the system timing model (issue 4, 5b).

For each accelerator / flow / problem size the driver is compiled twice (``double_buffer``
False / True) and run on the simulator; the timing model (``loom.accel.timing``: 200 MHz,
the paper's throughputs, 32-bit stream, 100-cycle DMA set-up, host time measured with a
monotonic clock in the copy routines and between runtime calls) gives the total time.
Each figure is the median of ``--reps`` interleaved runs (default 5). Results are checked against
numpy. Target: a real gain (> 1) on the larger sizes.

    python benchmarks/bench_double_buffering.py [--reps N] [--sizes 64,128,256] [--quick]

``--quick``: two matmul cases at size 32 and the small conv layer, 1 run each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from math import prod
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from xdsl.builder import ImplicitBuilder  # noqa: E402
from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp, i32  # noqa: E402

from loom.driver.compile import compile_driver  # noqa: E402
from loom.frontends.kernel import linalg as L  # noqa: E402

EXAMPLES = ROOT / "loom" / "examples" / "accelerators"
D = DYNAMIC_INDEX
CASES = [("matmul_v1.json", "v1_8", "Ns", None), ("matmul_v2.json", "v2_8", "As", None),
         ("matmul_v2.json", "v2_16", "Bs", None), ("matmul_v3.json", "v3_8", "Ns", None),
         ("matmul_v3.json", "v3_16", "Ns", None), ("matmul_v3.json", "v3_16", "Cs", None),
         ("matmul_v4.json", "v4_16", "Cs", {"m": 64, "n": 32, "k": 64})]
CONV_LAYERS = [(64, 64, 16, 3, 1), (128, 128, 9, 3, 1)]  # (iC, oC, input size, fHW, stride)


def _module(name: str, types, body) -> ModuleOp:
    f = func.FuncOp(name, (types, []))
    with ImplicitBuilder(f.body) as args:
        body(*args)
        func.ReturnOp()
    return ModuleOp([f])


def matmul_module() -> ModuleOp:
    return _module("matmul", [MemRefType(i32, [D, D])] * 3, L.matmul)


def conv_module(stride: int) -> ModuleOp:
    return _module("conv", [MemRefType(i32, [D] * 4)] * 3,
                   lambda i, w, o: L.conv_2d_nchw_fchw(i, w, o, strides=(stride, stride)))


def median_totals(drivers, make, check, reps: int) -> list[float]:
    """Median total time per driver; runs interleaved so a busy moment of the machine
    (measured host time) hits both variants alike."""
    totals: list[list[float]] = [[] for _ in drivers]
    for _ in range(reps):
        for drv, out in zip(drivers, totals):
            arrays = make()
            expected = check(arrays)
            out.append(drv(*arrays).timing.total_s)
            assert np.array_equal(arrays[-1], expected), "wrong result"
    return [statistics.median(t) for t in totals]


def matmul_case(size: int):
    rng = np.random.default_rng(size)

    def make():
        return [rng.integers(-8, 8, size=(size, size)).astype(np.int32) for _ in range(3)]

    def check(arrays):
        A, B, C = arrays
        return (C.astype(np.int64) + A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
    return make, check


def conv_case(ic: int, oc: int, size: int, f: int, stride: int):
    rng = np.random.default_rng(ic)
    o = (size - f) // stride + 1

    def make():
        return [rng.integers(-4, 4, size=s).astype(np.int32)
                for s in ((1, ic, size, size), (oc, ic, f, f), (1, oc, o, o))]

    def check(arrays):
        I, W, O = arrays
        out = O.astype(np.int64).copy()
        for y in range(f):
            for x in range(f):
                win = I[0, :, y:y + stride * (o - 1) + 1:stride, x:x + stride * (o - 1) + 1:stride]
                out[0] += np.tensordot(W[:, :, y, x].astype(np.int64), win.astype(np.int64), axes=([1], [0]))
        return out.astype(np.int32)
    return make, check


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="64,128,256")
    ap.add_argument("--quick", action="store_true", help="3 cases at size 32, 1 run each")
    args = ap.parse_args(argv)
    cases, conv_layers = CASES, CONV_LAYERS
    if args.quick:
        args.reps, args.sizes, cases, conv_layers = 1, "32", [CASES[1], CASES[5]], CONV_LAYERS[:1]
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    print(f"{'accelerator':<10} {'flow':<5} {'size':<14} {'without (us)':>13} {'with (us)':>11} {'gain':>7}")
    for path, acc, flow, tiles in cases:
        drivers = [compile_driver(matmul_module(), EXAMPLES / path, acc, flow, tile_sizes=tiles, double_buffer=db)
                   for db in (False, True)]
        for size in sizes:
            make, check = matmul_case(size)
            plain, db = median_totals(drivers, make, check, args.reps)
            rows.append((acc, flow, f"{size}^3", plain, db))
            print(f"{acc:<10} {flow:<5} {size}^3{'':<{10 - len(str(size))}} {plain * 1e6:13.1f} {db * 1e6:11.1f} "
                  f"{plain / db:6.2f}x", flush=True)
    for ic, oc, size, f, stride in conv_layers:
        drivers = [compile_driver(conv_module(stride), EXAMPLES / "conv2d.json", double_buffer=db) for db in (False, True)]
        make, check = conv_case(ic, oc, size, f, stride)
        plain, db = median_totals(drivers, make, check, args.reps)
        label = f"{ic}x{size}^2 f{f}"
        rows.append(("conv_os", "Os", label, plain, db))
        print(f"{'conv_os':<10} {'Os':<5} {label:<14} {plain * 1e6:13.1f} {db * 1e6:11.1f} {plain / db:6.2f}x", flush=True)
    gains = [p / d for *_, p, d in rows]
    largest = [p / d for _, _, label, p, d in rows if label == f"{max(sizes)}^3"]
    print(f"\ngeomean gain {prod(gains) ** (1 / len(gains)):.2f}x over {len(gains)} cases; "
          f"min {min(gains):.2f}x; at {max(sizes)}^3: min {min(largest):.2f}x")
    return 0 if min(largest) > 1.0 or args.quick else 1  # --quick: a smoke run, not the verdict


if __name__ == "__main__":
    sys.exit(main())
