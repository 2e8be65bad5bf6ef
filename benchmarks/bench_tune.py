"""Tuned CPU kernels against the libraries people compare with, and the sweep engine's overhead.

    python benchmarks/bench_tune.py [--quick] [--budget N]

1. matmul f32 (512^3; --quick 128^3) tuned by loom's tuner (Optuna, budget 100; --quick 12)
   vs numpy (OpenBLAS), both on one thread and both on all cores (threadpoolctl / OpenMP): the
   best schedule found at each thread count. Target: within 2x of numpy.
2. nelli's conv2d: N,C,H,W = 1,1,1280,1280 with 3 filters 3x3 (--quick 1,1,160,160), tuned with
   budget 100 (--quick 12) vs PyTorch CPU at the same thread count (skipped without torch).
3. Sweep overhead per point: 2,000 no-op points through the local process pool (target < 10 ms).
Each tuned figure is the median of 5 timed calls of the best schedule, measured again after the
search, on the tuner's clock (``loom.tune.cpu.kernel_clock``): one thread in CPU time of the calling
thread (the machine is shared: wall time would count other users), more threads in wall time; the
libraries' figures are taken the same way.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def median_time(fn, threads: int, repeats: int = 5) -> float:
    """Median of ``repeats`` calls after a warm-up, on the tuner's clock for ``threads`` (CPU time of
    this thread for one thread, so other users of a shared machine do not count; else wall time)."""
    from loom.tune.cpu import kernel_clock

    clock = kernel_clock(threads)
    fn()
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)


def clock_name(threads: int) -> str:
    return "thread CPU time" if threads == 1 else "wall time"


def tuned(objective, budget: int):
    from loom.tune import tune
    from loom.tune.cpu import _set_threads

    result = tune(objective, budget=budget, cache=False)
    schedule = objective.schedule(result.best.params)
    fn = objective.compiled(schedule)
    _set_threads(schedule.threads)
    args = [a.copy() for a in objective.args]
    return median_time(lambda: fn(*args), schedule.threads), schedule, result


def bench_matmul(n: int, budget: int) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    from loom.examples.kernels import EXAMPLES
    from loom.tune import CpuObjective

    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    objective = CpuObjective(EXAMPLES["matmul_linalg"].kernel, [a, b, np.zeros((n, n), np.float32)], repeats=3)
    _, _, result = tuned(objective, budget)
    flops = 2 * n ** 3
    for threads in sorted({1, os.cpu_count() or 1}):  # like for like: the same thread count on both sides
        ours, schedule = best_at(objective, result, threads)
        with threadpool_limits(threads):
            pinned = sorted({(p["internal_api"], p["num_threads"]) for p in threadpool_info()})
            theirs = median_time(lambda: a @ b, threads)
        print(f"matmul {n}^3 f32, {threads} thread(s) ({clock_name(threads)}): loom tuned {ours * 1e3:.2f} ms "
              f"({flops / ours / 1e9:.1f} GFLOP/s) with {schedule}; numpy {theirs * 1e3:.2f} ms "
              f"({flops / theirs / 1e9:.1f} GFLOP/s; thread pools {pinned}): loom / numpy = {ours / theirs:.2f}x "
              f"(target <= 2x: {'MET' if ours <= 2 * theirs else 'MISSED'})")
    print(f"  {len(result.history)} points searched, {result.failed} failed")


def best_at(objective, result, threads: int):
    """The best schedule the search found with ``threads`` threads, timed again."""
    from loom.tune.cpu import _set_threads

    points = [p for p in result.ok if p.params["threads"] == threads]
    if not points:  # the search never tried this count: take the best schedule with it
        best = dict(result.best.params, threads=threads)
    else:
        best = min(points, key=lambda p: p.value).params
    schedule = objective.schedule(best)
    fn = objective.compiled(schedule)
    _set_threads(schedule.threads)
    args = [x.copy() for x in objective.args]
    return median_time(lambda: fn(*args), schedule.threads), schedule


def bench_conv(h: int, budget: int) -> None:
    from loom import Dim, F32, MemRef, kernel, linalg
    from loom.tune import CpuObjective

    module_src = f'''
from loom import F32, MemRef, kernel, linalg

@kernel
def conv(I: MemRef[(1, 1, {h}, {h}), F32], W: MemRef[(3, 1, 3, 3), F32], O: MemRef[(1, 3, {h - 2}, {h - 2}), F32]):
    linalg.conv_2d_nchw_fchw(I, W, O)
'''
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "nelli_conv.py"
        path.write_text(module_src)
        from loom.core.user_files import import_user_file

        conv = import_user_file(path).conv
        rng = np.random.default_rng(0)
        x, w = rng.random((1, 1, h, h), dtype=np.float32), rng.random((3, 1, 3, 3), dtype=np.float32)
        objective = CpuObjective(conv, [x, w, np.zeros((1, 3, h - 2, h - 2), np.float32)], repeats=3)
        ours, schedule, result = tuned(objective, budget)
    try:
        import torch
    except ImportError:
        print(f"conv2d 1x1x{h}x{h}, 3 filters 3x3: loom tuned {ours * 1e3:.2f} ms ({schedule}); "
              "PyTorch not installed: no comparison")
        return
    torch.set_num_threads(schedule.threads)
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    with torch.no_grad():
        theirs = median_time(lambda: torch.nn.functional.conv2d(tx, tw), schedule.threads)
        got = torch.nn.functional.conv2d(tx, tw).numpy()
    out = np.zeros((1, 3, h - 2, h - 2), np.float32)
    objective.compiled(schedule)(x, w, out)
    assert np.allclose(out, got, rtol=1e-4, atol=1e-4), "tuned conv differs from PyTorch"
    print(f"conv2d 1x1x{h}x{h}, 3 filters 3x3 (nelli), {clock_name(schedule.threads)}: loom tuned "
          f"{ours * 1e3:.2f} ms with {schedule}; PyTorch {torch.__version__} CPU "
          f"(torch.set_num_threads({torch.get_num_threads()})) {theirs * 1e3:.2f} ms: loom is {theirs / ours:.2f}x "
          f"({'MET' if ours < theirs else 'MISSED'}: target faster than PyTorch); {len(result.history)} points")


def noop(point: dict) -> dict:
    return {"y": point["x"] * 2}


def bench_sweep(points: int) -> None:
    from loom.tune import sweep

    result = sweep(noop, [{"x": i} for i in range(points)], executor="process", workers=2, progress=False)
    assert [r["y"] for r in result.rows] == [2 * i for i in range(points)]
    per = result.per_point_s * 1e3
    print(f"sweep overhead: {points} no-op points on the local process pool in {result.seconds:.2f} s = "
          f"{per:.3f} ms/point (target < 10 ms: {'MET' if per < 10 else 'MISSED'})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--budget", type=int, default=None)
    args = parser.parse_args()
    budget = args.budget or (12 if args.quick else 100)
    bench_matmul(128 if args.quick else 512, budget)
    bench_conv(160 if args.quick else 1280, budget)
    bench_sweep(400 if args.quick else 2000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
