"""``--flow auto`` vs exhaustive search on the Fig. 14 problems (v4, permutations of 32/256/512).

    .venv/bin/python benchmarks/bench_flow_auto.py [--quick] [--scale S] [--repeats N] [--measured-host]

Two search spaces, each against its own exhaustive search: blocking drivers only
("blocking"), and flows x tiles x double buffering off/on ("joint",
``compile_driver(flow="auto", double_buffer="auto")``). Per permutation (M, N, K) and
space: ``--flow auto``'s choice (loom.driver.autotune.choose_hybrid: the cost model
ranks every candidate, the top HYBRID_TOP are run on the simulator + timing model),
the exhaustive search (every candidate compiled and run) and the ratio auto / best.
Times are modelled, with the host time deterministic by default (a fixed cost per
runtime call and per word, figures/band.py) so that the comparison is exact and
repeatable on a loaded machine; ``--measured-host`` measures it (then the exhaustive
top 5 and the auto choice are re-measured, best of N). Target: ratio <= 1.02 on every
permutation in both spaces. Also printed: 512^3 on v4-16 and on v4-16-pingpong (double-buffered
inputs and results, ``timing.input_buffers`` and ``output_buffers`` 2), blocking and
double-buffered, against the physical limit (loom.driver.bounds; target: within 1.15x) and
against the limit the accelerator's buffers allow (v4-16: compute + transfer, 1.51x the
perfect-overlap bound, so its target cannot be met), with the timeline's breakdown.
``--quick``: one small problem (16, 16, 32), 1 repetition, 64^3 for the bound line.
``--scale S``: the six permutations with every size divided by S (``run_all.py``'s default run takes
S = 8, 432 candidates to compile and run against 2,376 at the Fig. 14 sizes, which take about an
hour); the CSV records S and the target is MET only at S = 1.
``--bound-only``: the bound lines alone (512^3, or 64^3 with ``--quick``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))

import band  # noqa: E402
import common as C  # noqa: E402

from loom.driver import autotune as at  # noqa: E402
from loom.accel.description import load_description  # noqa: E402

HEADERS = ["space", "scale", "M", "N", "K", "auto choice", "auto_s", "best choice", "best_s", "ratio", "model-only choice",
           "model_only_ratio", "candidates"]
RECHECK = 5
BOUND_HEADERS = ["accelerator", "dim", "double_buffer", "choice", "total_s", "bound_s", "ratio", "model_bound_s"]


SPACES = {"blocking": (False,), "joint": (False, True)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one small problem, 1 repetition")
    ap.add_argument("--repeats", type=int, default=5, help="repetitions of the final measurements (best of)")
    ap.add_argument("--measured-host", action="store_true", help="measure host time instead of the fixed costs")
    ap.add_argument("--scale", type=int, default=1, choices=(1, 2, 4, 8),
                    help="divide the Fig. 14 sizes (32, 256, 512) by this (1: the paper's sizes)")
    ap.add_argument("--problems", default="", help="only these Fig. 14 problems, e.g. 32x256x512,512x32x256")
    ap.add_argument("--spaces", default=",".join(SPACES), help="blocking,joint (default: both)")
    ap.add_argument("--bound-only", action="store_true", help="only the 512^3 lines against the physical limit")
    args = ap.parse_args()
    args.deterministic_host = not args.measured_host
    print(band.apply_host_mode(args))
    desc = str(C.EXAMPLES / "matmul_v4.json")
    if args.bound_only:
        bound_line(desc, 64 if args.quick else 512)
        return
    acc = load_description(desc).accelerator("v4_16")
    print(f"v4_16: {C.accel_timing('matmul_v4.json', 'v4_16').describe()}")
    params = at.calibrate(acc, desc)  # calibrated under the host mode just set
    perms = sorted(set(itertools.permutations(tuple(d // args.scale for d in (32, 256, 512)))))
    if args.problems:
        if args.scale != 1:
            ap.error("--problems gives the sizes themselves: drop --scale")
        perms = [tuple(int(x) for x in p.split("x")) for p in args.problems.split(",")]
    if args.quick:
        perms, args.repeats = [(16, 16, 32)], 1
    repeats = args.repeats if args.measured_host else 1  # deterministic: every run is the same
    rows = []
    spaces = {s: SPACES[s] for s in args.spaces.split(",")}
    for space, dbs in spaces.items():
        for M, N, K in perms:
            start = time.perf_counter()
            problem = {"m": M, "n": N, "k": K}
            module = C.matmul_module(M, N, K)
            arrays = C.matmul_arrays(M, N, K)
            auto, _ = at.choose_hybrid(module, desc, acc, problem, arrays, params, double_buffer=dbs)
            model_only = at.choose(acc, problem, params, double_buffer=dbs)
            trials = at.exhaustive(module, desc, acc, arrays, problem, 1, double_buffer=dbs)
            finalists = {t.candidate for t in trials[:RECHECK]} | {auto.candidate, model_only.candidate}
            timed = {c: at.run_candidate(module, desc, acc, c, arrays, repeats).seconds for c in finalists}
            best = min(timed, key=timed.get)
            mine, model_s = timed[auto.candidate], timed[model_only.candidate]
            rows.append([space, args.scale, M, N, K, str(auto.candidate), mine, str(best), timed[best], mine / timed[best],
                         str(model_only.candidate), model_s / timed[best], len(trials)])
            print(f"  {space} {M}x{N}x{K}: auto {auto.candidate} {mine * 1e3:.3f} ms, best {best} "
                  f"{timed[best] * 1e3:.3f} ms, ratio {mine / timed[best]:.3f} (model only: "
                  f"{model_s / timed[best]:.3f}) ({len(trials)} candidates, {time.perf_counter() - start:.0f} s)",
                  flush=True)
    C.print_table(HEADERS, rows)
    C.write_csv("flow_auto", HEADERS, rows)
    for space in spaces:
        worst = max(r[9] for r in rows if r[0] == space)
        scaled = f", sizes / {args.scale}" if args.scale > 1 else ""
        verdict = "MET" if worst <= 1.02 and args.scale == 1 else "REDUCED" if worst <= 1.02 else "MISSED"
        print(f"target: auto within 2% of exhaustive, {space} space ({len(perms)} problems{scaled}): worst ratio "
              f"{worst:.3f} -> {verdict}")
    bound_line(desc, 64 if args.quick else 512)


def bound_line(desc: str, dim: int) -> None:
    """``--flow auto`` on dim^3 against the physical limit, blocking and double-buffered, on v4-16
    (one input and one result buffer: the paper's) and v4-16-pingpong (two of each: the next tile
    streams in while one computes and the last result drains), with the timeline's breakdown:
    what keeps each from its bound."""
    from loom.driver.bounds import physical_bound

    problem = {"m": dim, "n": dim, "k": dim}
    arrays = C.matmul_arrays(dim, dim, dim)
    rows = []
    for name in ("v4_16", "v4_16_pingpong"):
        acc = load_description(desc).accelerator(name)
        params = at.calibrate(acc, desc)
        b = physical_bound(acc, problem)
        print(f"\n{dim}^3 on {name}: {b}")
        for db in (False, True):
            best, _ = at.choose_hybrid(C.matmul_module(dim, dim, dim), desc, acc, problem, arrays, params,
                                       double_buffer=(db,))
            drv = C.generated(dim, dim, dim, "matmul_v4.json", name, best.candidate.flow,
                              tile_sizes=best.candidate.tile_sizes, double_buffer=db)
            report = drv(*[a.copy() for a in arrays]).timing
            t = report.total_s
            line = (f"{name} --flow auto{' --double-buffer' if db else ''}: {best.candidate} {t * 1e3:.3f} ms "
                    f"(modelled), time / bound {b.ratio(t):.2f}x, / this accelerator's limit "
                    f"{t / b.model_bound_s:.2f}x")
            print(line)
            print(report)
            rows.append([name, dim, db, str(best.candidate), t, b.bound_s, b.ratio(t), b.model_bound_s])
            if db:
                reachable = b.model_bound_s <= 1.15 * b.bound_s
                print(f"target: within 1.15x of the bound (perfect overlap), {name} double-buffered: {b.ratio(t):.2f}x "
                      f"-> {'MET' if b.ratio(t) <= 1.15 else 'MISSED'}"
                      + ("" if reachable else f" (unreachable: its buffers allow {b.model_bound_s / b.bound_s:.2f}x "
                                              "at best)"))
    C.write_csv("flow_auto_bound", BOUND_HEADERS, rows)


if __name__ == "__main__":
    main()
