"""Coalescing and double-buffering gains: one generated driver, four ways.

    .venv/bin/python benchmarks/figures/coalesce_gain.py [--repeats N] [--dims 64,256] [--quick]

Per (accelerator, flow, dim): send transactions without / with coalescing, and the
timing-model total time (best of N runs, host time measured) of the plain driver,
coalesced, double-buffered, and both; each gain is plain total / variant total.
Prints the geomean gains (issue 4 target: each shows a measured gain) and writes
figures/out/coalesce_gain.{csv,png}.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as C  # noqa: E402

CASES = [("matmul_v3.json", "v3_16", f) for f in ("Ns", "As", "Bs", "Cs")] + \
        [("matmul_v2.json", "v2_8", f) for f in ("As", "Bs")] + [("matmul_v4.json", "v4_16", "Cs")]
VARIANTS = {"plain": (False, False), "coalesced": (True, False), "double-buffered": (False, True),
            "both": (True, True)}
HEADERS = ["accel", "flow", "dim", "sends_plain", "sends_coalesced", *(f"total_{v}_s" for v in VARIANTS),
           "gain_coalesced", "gain_double_buffered", "gain_both"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dims", default="64,256")
    ap.add_argument("--quick", action="store_true", help="dim 32, two cases, 1 repetition")
    args = ap.parse_args()
    cases = CASES
    if args.quick:
        args.dims, args.repeats, cases = "32", 1, [CASES[3], CASES[4]]
    rows = []
    for dim in (int(d) for d in args.dims.split(",")):
        arrays = C.matmul_arrays(dim, dim, dim)
        for file, name, flow in cases:
            sends, totals = {}, {}
            for variant, (co, db) in VARIANTS.items():
                drv = C.generated(dim, dim, dim, file, name, flow, coalesce=co, double_buffer=db)
                sends[variant] = drv(*[a.copy() for a in arrays]).transfers.sends
                totals[variant] = C.generated_total(drv, arrays, args.repeats)
            plain = totals["plain"]
            rows.append([name, flow, dim, sends["plain"], sends["coalesced"], *totals.values(),
                         plain / totals["coalesced"], plain / totals["double-buffered"], plain / totals["both"]])
            print(f"  {name} {flow} {dim}: gains {rows[-1][-3]:.2f} / {rows[-1][-2]:.2f} / {rows[-1][-1]:.2f}",
                  flush=True)
    C.print_table(HEADERS, rows)
    C.write_csv("coalesce_gain", HEADERS, rows)
    labels = [f"{r[0]} {r[1]} {r[2]}" for r in rows]
    C.bar_plot("coalesce_gain", "Coalescing and double buffering (timing model, higher is better)", labels,
               {"coalesced": [r[-3] for r in rows], "double-buffered": [r[-2] for r in rows],
                "both": [r[-1] for r in rows]}, "speedup over the plain generated driver", hline=1.0)
    g = [C.geomean([r[i] for r in rows]) for i in (-3, -2, -1)]
    print(f"\nsend transactions {sum(r[3] for r in rows)} -> {sum(r[4] for r in rows)} with coalescing")
    for what, value in zip(("coalescing", "double buffering", "coalescing + double buffering"), g):
        print(f"target: {what} shows a measured gain: geomean {value:.3f}x -> {'MET' if value > 1.0 else 'MISSED'}")


if __name__ == "__main__":
    main()
