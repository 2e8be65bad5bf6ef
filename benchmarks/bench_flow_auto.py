"""``--flow auto`` vs exhaustive search on the Fig. 14 problems (v4, permutations of 32/256/512).

    .venv/bin/python benchmarks/bench_flow_auto.py [--quick] [--repeats N]

Per permutation (M, N, K): ``--flow auto``'s choice (the hybrid of
loom.driver.autotune.choose_hybrid: the cost model ranks every candidate, the top
HYBRID_TOP are run on the simulator + timing model and the fastest is taken), the
exhaustive search (every candidate of the same space compiled and run once), and
the ratio auto / best. Host time is measured, so a single run of each of ~100
candidates favours whichever got lucky: the exhaustive top 5 and the auto choice
are re-measured with the same repetitions (best of N) before the ratio is taken.
Also printed: the model-only choice (``choose``) and its ratio. Target: ratio
<= 1.05 on every permutation. ``--quick``: one small problem (16, 32, 64), 1 repetition.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))

import common as C  # noqa: E402

from loom.driver import autotune as at  # noqa: E402
from loom.accel.description import load_description  # noqa: E402

HEADERS = ["M", "N", "K", "auto choice", "auto_s", "best choice", "best_s", "ratio", "model-only choice",
           "model_only_ratio", "candidates"]
RECHECK = 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one small problem, 1 repetition")
    ap.add_argument("--repeats", type=int, default=5, help="repetitions of the final measurements (best of)")
    args = ap.parse_args()
    desc = str(C.EXAMPLES / "matmul_v4.json")
    acc = load_description(desc).accelerator("v4_16")
    params = at.calibrate(acc, desc)
    perms = sorted(set(itertools.permutations((32, 256, 512))))
    if args.quick:
        perms, args.repeats = [(16, 32, 64)], 1  # 24 candidates instead of ~100
    rows = []
    for M, N, K in perms:
        start = time.perf_counter()
        problem = {"m": M, "n": N, "k": K}
        module = C.matmul_module(M, N, K)
        arrays = C.matmul_arrays(M, N, K)
        auto, _ = at.choose_hybrid(module, desc, acc, problem, arrays, params)
        model_only = at.choose(acc, problem, params)
        trials = at.exhaustive(module, desc, acc, arrays, problem, 1)
        finalists = {t.candidate for t in trials[:RECHECK]} | {auto.candidate, model_only.candidate}
        timed = {c: at.run_candidate(module, desc, acc, c, arrays, args.repeats).seconds for c in finalists}
        best = min(timed, key=timed.get)
        mine, model_s = timed[auto.candidate], timed[model_only.candidate]
        rows.append([M, N, K, str(auto.candidate), mine, str(best), timed[best], mine / timed[best],
                     str(model_only.candidate), model_s / timed[best], len(trials)])
        print(f"  {M}x{N}x{K}: auto {auto.candidate} {mine * 1e3:.3f} ms, best {best} {timed[best] * 1e3:.3f} ms, "
              f"ratio {mine / timed[best]:.3f} (model only: {model_s / timed[best]:.3f}) "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
    C.print_table(HEADERS, rows)
    C.write_csv("flow_auto", HEADERS, rows)
    worst = max(r[7] for r in rows)
    print(f"\ntarget: auto within 5% of exhaustive on every permutation ({len(rows)} run): worst ratio {worst:.3f} "
          f"-> {'MET' if worst <= 1.05 else 'MISSED'}")


if __name__ == "__main__":
    main()
