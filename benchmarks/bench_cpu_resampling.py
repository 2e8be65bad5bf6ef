"""CPU path on a resampling pipeline (one laplacian-pyramid level), loom against real Halide, same schedule.

    down[x, y] = (in[2x, 2y] + in[2x+1, 2y] + in[2x, 2y+1] + in[2x+1, 2y+1]) / 4   (edges repeated)
    up[x, y]   = (down[x/2, y/2] + down[(x+1)/2, y/2] + down[x/2, (y+1)/2] + down[(x+1)/2, (y+1)/2]) / 4
    out[x, y]  = in[x, y] - up[x, y]

Schedule (both): ``out`` in 64 x 64 tiles, ``up`` and ``down`` computed per tile (``compute_at(out, xo)``).
Each tile needs a 33 x 33 window of ``down`` (a ``x / 2`` read: loom sizes it from the tile's base, one
element wider than a tile needs) where the whole-image fallback would recompute all of ``down`` per tile.
Halide is JIT-compiled for the host with one thread (loom's generated C is single-threaded); both outputs
are checked equal. Times are the median of ``--repeats`` calls after one warm-up (compilation excluded).

    python benchmarks/bench_cpu_resampling.py [--size 2048] [--repeats 7] [--quick]

``--quick``: 512 x 512, 3 repeats.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

TILE = 64


def loom_pipeline():
    import loom.frontends.pipeline as lp

    x, y, xo, yo, xi, yi = (lp.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = lp.ImageParam(lp.Int32, 2, "input")
    clamped = lp.BoundaryConditions.repeat_edge(inp)
    down, up, out = lp.Func("down"), lp.Func("up"), lp.Func("out")
    down[x, y] = (clamped[2 * x, 2 * y] + clamped[2 * x + 1, 2 * y] + clamped[2 * x, 2 * y + 1]
                  + clamped[2 * x + 1, 2 * y + 1]) / 4
    up[x, y] = (down[x / 2, y / 2] + down[(x + 1) / 2, y / 2] + down[x / 2, (y + 1) / 2]
                + down[(x + 1) / 2, (y + 1) / 2]) / 4
    out[x, y] = inp[x, y] - up[x, y]
    out.tile(x, y, xo, yo, xi, yi, TILE, TILE)
    up.compute_at(out, xo)
    down.compute_at(out, xo)
    return out


def halide_pipeline(arr):
    import halide as hl

    x, y, xo, yo, xi, yi = (hl.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    buf = hl.Buffer(arr)
    clamped = hl.BoundaryConditions.repeat_edge(buf)
    down, up, out = hl.Func("down"), hl.Func("up"), hl.Func("out")
    down[x, y] = (clamped[2 * x, 2 * y] + clamped[2 * x + 1, 2 * y] + clamped[2 * x, 2 * y + 1]
                  + clamped[2 * x + 1, 2 * y + 1]) / 4
    up[x, y] = (down[x / 2, y / 2] + down[(x + 1) / 2, y / 2] + down[x / 2, (y + 1) / 2]
                + down[(x + 1) / 2, (y + 1) / 2]) / 4
    out[x, y] = buf[x, y] - up[x, y]
    out.tile(x, y, xo, yo, xi, yi, TILE, TILE)
    up.compute_at(out, xo)
    down.compute_at(out, xo)
    return out


def median_time(fn, repeats: int) -> tuple[float, object]:
    result = fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    size, repeats = (512, 3) if args.quick else (args.size, args.repeats)
    os.environ.setdefault("HL_NUM_THREADS", "1")
    from loom.jit.pipeline import compile_cpu

    arr = np.random.default_rng(0).integers(0, 4096, (size, size)).astype(np.int32)
    print(f"one laplacian level, {size} x {size} i32, {TILE} x {TILE} tiles, down and up per tile", flush=True)
    t0 = time.perf_counter()
    program = compile_cpu(loom_pipeline(), {"input": arr.shape}, (size, size))
    compile_s = time.perf_counter() - t0
    loom_s, got = median_time(lambda: program({"input": arr}), repeats)

    import halide as hl

    hfunc = halide_pipeline(arr)
    hfunc.compile_jit(hl.get_jit_target_from_environment())
    halide_s, want = median_time(lambda: np.asarray(hfunc.realize([size, size])), repeats)
    if not np.array_equal(got, want):
        raise SystemExit(f"loom and Halide differ at {np.argwhere(got != want)[:5].tolist()}")
    print(f"{'':8} {'time (ms)':>10}")
    print(f"{'loom':8} {loom_s * 1e3:10.2f}   (compile {compile_s:.2f} s)")
    print(f"{'Halide':8} {halide_s * 1e3:10.2f}")
    print(f"loom / Halide: {loom_s / halide_s:.2f}x; outputs equal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
