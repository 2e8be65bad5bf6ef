"""The issue-4 targets, read back from the figures' CSV files (benchmarks/figures/out).

    .venv/bin/python benchmarks/figures/targets.py

Each target: what it asks, the measured figure, MET / MISSED, and the command that
produced the CSV. A target whose CSV is missing is reported as NOT RUN. Used by
``bench_generated_vs_manual.py`` and ``run_all.py`` to print every target.
"""

from __future__ import annotations

import csv
import sys
from math import exp, log
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as C  # noqa: E402


def _rows(name: str) -> list[dict[str, str]] | None:
    path = C.OUT / f"{name}.csv"
    if not path.exists():
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _geomean(values) -> float:
    values = [v for v in values if v > 0]
    return exp(sum(log(v) for v in values) / len(values)) if values else float("nan")


def _grid_best(rows, column: str, pick: Callable) -> list[float]:
    cells: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in rows:
        if r["driver"].startswith("gen"):
            cells.setdefault((r["accel"], r["dim"]), []).append(r)
    return [pick(float(r[column]) for r in gens) for gens in cells.values()]


def fig13_targets():
    rows = _rows("fig13")
    cmd = "benchmarks/bench_generated_vs_manual.py"
    if rows is None:
        return [("Fig. 13 grid targets", "no fig13.csv", "NOT RUN", cmd)]
    speed = _grid_best(rows, "speedup", max)
    refs = _grid_best(rows, "d_refs_ratio", min)
    dims = sorted({int(r["dim"]) for r in rows})
    where = f"{len(speed)} cells, dims {'/'.join(map(str, dims))}"
    beaten = sum(s > 1.0 for s in speed)
    gs, gr = _geomean(speed), _geomean(refs)
    complete = len(speed) == 12  # v2/v3 x sizes 8/16 x dims 64/128/256
    if not complete:
        where += ", INCOMPLETE grid"
    return [
        ("generated beats manual in every Fig. 13 cell", f"{beaten}/{len(speed)} cells ({where})",
         "MET" if beaten == len(speed) and complete else "MISSED", cmd),
        ("geomean speedup of total time >= 1.3x", f"{gs:.2f}x ({where})",
         "MET" if gs >= 1.3 and complete else "MISSED", cmd),
        ("data-cache references >= 20% lower (geomean ratio <= 0.8)", f"{gr:.2f} of manual ({where})",
         "MET" if gr <= 0.8 and complete else "MISSED", cmd),
    ]


def resnet_target():
    rows = _rows("fig16")
    cmd = "benchmarks/figures/fig16.py"
    if rows is None:
        return [("ResNet18 conv layers geomean >= 1.3x", "no fig16.csv", "NOT RUN", cmd)]
    speed = [float(r["speedup"]) for r in rows]
    full = all(int(r["H"]) == h for r, h in zip(rows, (230, 58, 58, 56, 30, 30, 28, 16, 16, 14, 9))) and \
        int(rows[0]["oC"]) == 64
    g = _geomean(speed)
    scale = "full size" if full else "REDUCED channels"
    return [("ResNet18 conv layers geomean >= 1.3x over manual", f"{g:.2f}x, {len(rows)} layers, "
             f"slowest {min(speed):.2f}x ({scale})", "MET" if g >= 1.3 and full else "MISSED", cmd)]


def flow_auto_target():
    rows = _rows("flow_auto")
    cmd = "benchmarks/bench_flow_auto.py"
    if rows is None:
        return [("--flow auto within 5% of exhaustive", "no flow_auto.csv", "NOT RUN", cmd)]
    worst = max(float(r["ratio"]) for r in rows)
    return [("--flow auto within 5% of exhaustive on every Fig. 14 permutation",
             f"worst ratio {worst:.3f} over {len(rows)} of 6 permutations",
             "MET" if worst <= 1.05 and len(rows) == 6 else "MISSED", cmd)]


def overlap_targets():
    rows = _rows("coalesce_gain")
    cmd = "benchmarks/figures/coalesce_gain.py"
    if rows is None:
        return [("coalescing / double buffering gains", "no coalesce_gain.csv", "NOT RUN", cmd)]
    out = []
    for what, col in (("coalescing", "gain_coalesced"), ("double buffering", "gain_double_buffered"),
                      ("coalescing + double buffering", "gain_both")):
        if col not in rows[0]:
            out.append((f"{what} shows a measured gain", "column missing", "NOT RUN", cmd))
            continue
        g = _geomean(float(r[col]) for r in rows)
        out.append((f"{what} shows a measured gain", f"geomean {g:.3f}x over {len(rows)} cases",
                    "MET" if g > 1.0 else "MISSED", cmd))
    return out


def all_targets():
    return [*fig13_targets(), *resnet_target(), *flow_auto_target(), *overlap_targets()]


def print_targets(extra: list[tuple[str, str, str, str]] = ()) -> None:
    print("\nissue-4 targets (from the CSV files in benchmarks/figures/out):")
    for what, figure, status, cmd in [*all_targets(), *extra]:
        print(f"  {status:8s} {what}: {figure}   [{cmd}]")


if __name__ == "__main__":
    print_targets()
