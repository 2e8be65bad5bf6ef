"""Parallel and vector CPU code of the C backend: OpenMP scf.parallel and native mode.

    .venv/bin/python benchmarks/bench_parallel.py [--quick] [--repeat N]

1. A 3x3 stencil over a 2048x2048 f32 image written with ``loom.parallel``, on 1
   and 2 OpenMP threads (``omp_set_num_threads`` of the module's libgomp).
2. A 512^3 f32 matmul in (i, k, j) loop order: serial, ``for i in parallel(M)``
   on 2 threads, and each of those compiled with ``native=True`` (-march=native,
   omp simd on the j loop, restrict pointers).
3. An ELLPACK sparse matrix-vector product written with ``loom.parallel`` (``y[i] = sum_k vals[i, k] *
   x[cols[i, k]]``, 8 entries a row over 2^20 rows), compiled as ``@loom.kernel`` compiles it: its data-placed
   index ``cols[i, k]`` is checked. The check records a failure inside the OpenMP region (``backends/c/deferred``)
   instead of making the loop serial: 1 thread (what the loop ran as before) against 2, and unchecked on 2.
4. The same kernels with numba (``@njit(parallel=True)``/``prange``) if it is
   installed (``pip install -e '.[bench]'``), else a note.

Times are the median of ``--repeat`` (>= 5) runs after a warm-up run; every
result is checked against numpy first. ``--quick`` uses 512x512 and 128^3.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from loom.backends.c import compile_module
import loom
from loom.examples.kernels import matmul_ikj, matmul_ikj_parallel, stencil3x3_parallel, stencil3x3_parallel_reference
from loom.frontends.kernel import F64, I32, Dim, Index, MemRef
from loom.passes.recipes import lower_to_c

ROWS, WIDTH, COLS = Dim("ROWS"), Dim("WIDTH"), Dim("COLS")


@loom.kernel
def ell_spmv(vals: MemRef[(ROWS, WIDTH), F64], cols: MemRef[(ROWS, WIDTH), I32], x: MemRef[(COLS,), F64],
             y: MemRef[(ROWS,), F64]):
    for i in loom.parallel(y.shape[0]):
        s = 0.0
        for k in range(vals.shape[1]):
            s += vals[i, k] * x[Index(cols[i, k])]
        y[i] = s

def median_time(run, repeat: int, before=None) -> float:
    if before:
        before()
    run()  # warm-up (first touch, thread pool start)
    samples = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def compiled(k, native: bool = False):
    mod = compile_module(lower_to_c(k.module), native=native)
    return mod, mod.function(k.name)


def set_threads(mod, n: int) -> None:
    mod.library.omp_set_num_threads(n)  # libgomp is the module's dependency


def numba_kernels():
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(parallel=True, fastmath=False)
    def stencil_nb(a, b):
        for i in numba.prange(1, a.shape[0] - 1):
            for j in range(1, a.shape[1] - 1):
                b[i, j] = (a[i - 1, j - 1] + a[i - 1, j] + a[i - 1, j + 1] + a[i, j - 1] + a[i, j] + a[i, j + 1]
                           + a[i + 1, j - 1] + a[i + 1, j] + a[i + 1, j + 1]) * np.float32(0.1111111)

    @numba.njit(parallel=True)
    def matmul_nb(a, b, c):
        for i in numba.prange(a.shape[0]):
            for k in range(a.shape[1]):
                x = a[i, k]
                for j in range(b.shape[1]):
                    c[i, j] += x * b[k, j]

    return numba, stencil_nb, matmul_nb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (>= 5)")
    args = parser.parse_args()
    repeat = max(5, args.repeat)
    side, n = (512, 128) if args.quick else (2048, 512)
    rng = np.random.default_rng(0)
    rows: list[tuple[str, str, float, float]] = []  # kernel, configuration, seconds, speedup vs baseline

    # -- stencil ------------------------------------------------------------------------------
    img = rng.standard_normal((side, side), dtype=np.float32)
    out = np.zeros_like(img)
    mod, fn = compiled(stencil3x3_parallel)
    fn(img, out)
    np.testing.assert_allclose(out, stencil3x3_parallel_reference(img, np.zeros_like(img)), rtol=1e-5, atol=1e-5)
    base = None
    for threads in (1, 2):
        set_threads(mod, threads)
        t = median_time(lambda: fn(img, out), repeat)
        base = base or t
        rows.append((f"stencil 3x3 {side}x{side}", f"loom.parallel, {threads} thread(s)", t, base / t))

    # -- matmul -------------------------------------------------------------------------------
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.zeros((n, n), dtype=np.float32)
    expected = a @ b

    def zero():
        c[...] = 0

    base = None
    for label, k, native, threads in (("serial", matmul_ikj, False, 1),
                                      ("parallel(i), 2 threads", matmul_ikj_parallel, False, 2),
                                      ("serial, native=True", matmul_ikj, True, 1),
                                      ("parallel(i), 2 threads, native=True", matmul_ikj_parallel, True, 2)):
        mod, fn = compiled(k, native)
        if "parallel" in label:
            set_threads(mod, threads)
        zero()
        fn(a, b, c)
        np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)
        t = median_time(lambda: fn(a, b, c), repeat, zero)
        base = base or t
        rows.append((f"matmul ikj {n}^3 f32", label, t, base / t))

    # -- checked gather in a parallel loop -----------------------------------------------------------
    rows_n = (1 << 16) if args.quick else (1 << 20)
    vals = rng.standard_normal((rows_n, 8))
    cols = rng.integers(0, rows_n, (rows_n, 8)).astype(np.int32)
    x = rng.standard_normal(rows_n)
    y = np.zeros(rows_n)
    mod = compile_module(lower_to_c(ell_spmv.module), check_gathers=True)  # as @loom.kernel compiles it
    assert "loomh_defer(" in mod.c_source and "#pragma omp parallel for" in mod.c_source
    fn = mod.function("ell_spmv")
    fn(vals, cols, x, y)
    np.testing.assert_allclose(y, (vals * x[cols]).sum(1), rtol=1e-9, atol=1e-12)  # summation order
    base = None
    for threads in (1, 2):
        set_threads(mod, threads)
        t = median_time(lambda: fn(vals, cols, x, y), repeat)
        base = base or t
        rows.append((f"ELL spmv {rows_n}x8 f64", f"checked gather, {threads} thread(s)", t, base / t))
    unchecked = compile_module(lower_to_c(ell_spmv.module))  # what the checks cost: the same loop without them
    set_threads(unchecked, 2)
    t = median_time(lambda: unchecked.function("ell_spmv")(vals, cols, x, y), repeat)
    rows.append((f"ELL spmv {rows_n}x8 f64", "unchecked, 2 thread(s)", t, base / t))

    # -- numba --------------------------------------------------------------------------------
    nb = numba_kernels()
    note = ""
    if nb is None:
        note = "numba is not installed (pip install -e '.[bench]'): numba rows skipped"
    else:
        numba, stencil_nb, matmul_nb = nb
        stencil_base = next(r[2] for r in rows if r[0].startswith("stencil"))
        matmul_base = next(r[2] for r in rows if r[0].startswith("matmul"))
        for threads in (1, 2):
            numba.set_num_threads(threads)
            stencil_nb(img, out)
            np.testing.assert_allclose(out, stencil3x3_parallel_reference(img, np.zeros_like(img)), rtol=1e-5, atol=1e-5)
            t = median_time(lambda: stencil_nb(img, out), repeat)
            rows.append((f"stencil 3x3 {side}x{side}", f"numba {numba.__version__} prange, {threads} thread(s)",
                         t, stencil_base / t))
            zero()
            matmul_nb(a, b, c)
            np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)
            t = median_time(lambda: matmul_nb(a, b, c), repeat, zero)
            rows.append((f"matmul ikj {n}^3 f32", f"numba {numba.__version__} prange, {threads} thread(s)",
                         t, matmul_base / t))

    print(f"bench_parallel: median of {repeat} runs; {os.cpu_count()} CPUs; speedup vs the first row of each kernel")
    print(f"{'kernel':<22} {'configuration':<40} {'median ms':>10} {'speedup':>8}")
    for kernel_name, config, t, ratio in sorted(rows, key=lambda r: r[0], reverse=True):
        print(f"{kernel_name:<22} {config:<40} {t * 1e3:10.2f} {ratio:8.2f}x")
    if note:
        print(note)


if __name__ == "__main__":
    main()
