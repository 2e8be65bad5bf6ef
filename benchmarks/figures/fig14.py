"""Paper Fig. 14: v4 on the permutations of (32, 256, 512): square-tile As/Bs/Cs vs the best flexible tiles.

    .venv/bin/python benchmarks/figures/fig14.py [--exhaustive] [--quick]

Square-tile heuristic: T = the largest power-of-two multiple of 16 that is no larger
than the smallest problem dim and whose T x T blocks fit the 4096-word buffers (64),
the same T for m, n, k, with each of the As, Bs, Cs flows. "Best": the
``--flow auto`` choice (cost model); with ``--exhaustive`` also the measured best of
every candidate (slow: ~20 s per permutation). Time: timing-model total.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as C  # noqa: E402

from loom.driver import autotune as at  # noqa: E402
from loom.accel.description import load_description  # noqa: E402


def total(M, N, K, flow, tiles, arrays, coalesce=False) -> float:
    drv = C.generated(M, N, K, "matmul_v4.json", "v4_16", flow, tile_sizes=tiles, coalesce=coalesce)
    t = C.generated_total(drv, arrays, 1)
    if t is None:
        stats = drv(*[a.copy() for a in arrays])
        t = at.measured_seconds(stats, drv.accelerator)
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exhaustive", action="store_true")
    ap.add_argument("--quick", action="store_true", help="one permutation, (32, 64, 128)")
    args = ap.parse_args()
    desc = str(C.EXAMPLES / "matmul_v4.json")
    acc = load_description(desc).accelerator("v4_16")
    params = at.calibrate(acc, desc)
    headers = ["M", "N", "K", "As_sq", "Bs_sq", "Cs_sq", "best_flexible", "best_choice", "gain_vs_best_square"]
    if args.exhaustive:
        headers += ["exhaustive_s", "exhaustive_choice"]
    rows = []
    perms = [(32, 64, 128)] if args.quick else sorted(set(itertools.permutations((32, 256, 512))))
    for M, N, K in perms:
        arrays = C.matmul_arrays(M, N, K)
        T = 16
        while T * 2 <= min(M, N, K) and (T * 2) ** 2 <= 4096:
            T *= 2
        sq = [total(M, N, K, f, {"m": T, "n": T, "k": T}, arrays) for f in ("As", "Bs", "Cs")]
        best = at.choose(acc, {"m": M, "n": N, "k": K}, params)
        bt = total(M, N, K, best.candidate.flow, best.candidate.tile_sizes, arrays)
        row = [M, N, K, *sq, bt, str(best.candidate), min(sq) / bt]
        if args.exhaustive:
            trials = at.exhaustive(C.matmul_module(M, N, K), desc, acc, arrays, {"m": M, "n": N, "k": K})
            row += [trials[0].seconds, str(trials[0].candidate)]
        rows.append(row)
        print(f"  {M}x{N}x{K}: square T={T} best {min(sq) * 1e3:.3f} ms, flexible {best.candidate} "
              f"{bt * 1e3:.3f} ms", flush=True)
    C.print_table(headers, rows)
    C.write_csv("fig14", headers, rows)
    labels = [f"{r[0]}x{r[1]}x{r[2]}" for r in rows]
    C.bar_plot("fig14", "Fig. 14: v4, square-tile As/Bs/Cs vs the --flow auto flexible choice", labels,
               {"As square": [r[3] * 1e3 for r in rows], "Bs square": [r[4] * 1e3 for r in rows],
                "Cs square": [r[5] * 1e3 for r in rows], "best flexible": [r[6] * 1e3 for r in rows]},
               "total time (ms, timing model)")


if __name__ == "__main__":
    main()
