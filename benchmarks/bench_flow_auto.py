"""``--flow auto`` vs exhaustive search on the Fig. 14 problems (v4, permutations of 32/256/512).

    /work/venv/bin/python benchmarks/bench_flow_auto.py [--quick] [--repeats N]

Per permutation (M, N, K): the cost model's choice (flow + flexible tiles,
loom.accel.autotune.choose, no compile), its measured total time, the best of
the exhaustive search (every candidate of the same space compiled and run on
the simulator + timing model), and the ratio auto / best. Target: ratio <= 1.05
on every permutation. ``--quick``: three permutations.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))

import common as C  # noqa: E402

from loom.accel import autotune as at  # noqa: E402
from loom.accel.description import load_description  # noqa: E402

HEADERS = ["M", "N", "K", "auto choice", "auto_s", "best choice", "best_s", "ratio", "candidates"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    desc = str(C.EXAMPLES / "matmul_v4.json")
    acc = load_description(desc).accelerator("v4_16")
    params = at.calibrate(acc, desc)
    perms = sorted(set(itertools.permutations((32, 256, 512))))
    if args.quick:
        perms = perms[::2]
    rows = []
    for M, N, K in perms:
        start = time.perf_counter()
        problem = {"m": M, "n": N, "k": K}
        module = C.matmul_module(M, N, K)
        arrays = C.matmul_arrays(M, N, K)
        auto = at.choose(acc, problem, params)
        trials = at.exhaustive(module, desc, acc, arrays, problem, args.repeats)
        mine = next(t for t in trials if t.candidate == auto.candidate)
        best = trials[0]
        rows.append([M, N, K, str(auto.candidate), mine.seconds, str(best.candidate), best.seconds,
                     mine.seconds / best.seconds, len(trials)])
        print(f"  {M}x{N}x{K}: auto {auto.candidate} {mine.seconds * 1e3:.3f} ms, best {best.candidate} "
              f"{best.seconds * 1e3:.3f} ms, ratio {mine.seconds / best.seconds:.3f} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
    C.print_table(HEADERS, rows)
    C.write_csv("flow_auto", HEADERS, rows)
    worst = max(r[7] for r in rows)
    print(f"\ntarget: auto within 5% of exhaustive on every permutation: worst ratio {worst:.3f} -> "
          f"{'MET' if worst <= 1.05 else 'MISSED'}")


if __name__ == "__main__":
    main()
