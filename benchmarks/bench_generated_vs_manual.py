"""Generated vs hand-written drivers (paper Fig. 12-13 grid) and the issue-4 targets.

    .venv/bin/python benchmarks/bench_generated_vs_manual.py [--quick] [--repeats N]

Grid: accelerators v2 and v3, sizes 8 and 16, square problems 64/128/256. Per
cell: the manual Ns driver (benchmarks/manual) and the generated Ns/As/Bs/Cs
drivers (coalesced). Metrics, driver only: total time (the runtime timing model
when present, else harness task clock, see figures/common.py), instructions,
data-cache references and branches (cachegrind). The times are modelled: the
constants are printed, and every speedup is also given across the sensitivity band
(figures/band.py: DMA set-up 0/100/400 cycles x host 1x/10x slower; ``--deterministic-host``
for exact comparisons). Each cell also has its physical limit (loom.driver.bounds):
compute-bound time, least transfer time the buffers allow, their max, and time / bound. Targets printed at the end:
generated (best flow) beats manual in every cell; geomean total-time speedup
>= 1.3x; d_refs >= 20% lower in geomean. CSV/PNG: figures/out/fig13.*
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))

import band  # noqa: E402
import common as C  # noqa: E402
import manual  # noqa: E402
import run_stamp  # noqa: E402
import targets  # noqa: E402

HEADERS = ["accel", "dim", "driver", "total_s", "instructions", "d_refs", "branches", "speedup", "d_refs_ratio",
           "speedup_min", "speedup_max", "compute_s", "min_transfer_s", "bound_s", "serial_bound_s", "over_bound",
           *band.headers("speedup")]


def flows_of(file: str, name: str) -> list[str]:
    accs = json.load(open(C.EXAMPLES / file))["accelerators"]
    return list(next(a for a in accs if a["name"] == name)["opcode_flows"])


def cell(version: int, size: int, dim: int, repeats: int, coalesce: bool = True,
         flows: tuple[str, ...] | None = None) -> list[list]:
    from loom.accel.description import load_description
    from loom.driver.bounds import physical_bound

    file, name = f"matmul_v{version}.json", f"v{version}_{size}"
    arrays = C.matmul_arrays(dim, dim, dim)
    base = C.accel_timing(file, name)
    bound = physical_bound(load_description(str(C.EXAMPLES / file)).accelerator(name), {"m": dim, "n": dim, "k": dim},
                           base)
    limits = [bound.compute_s, bound.transfer_s, bound.bound_s, bound.serial_bound_s]
    man_cmd = manual.matmul_command(version, dim, dim, dim, size, "--no-check")
    man_base = manual.matmul_command(version, dim, dim, dim, size, "--baseline")
    man = C.host_counts(man_cmd, man_base, repeats)
    man_t = C.manual_total(version, size, arrays, repeats, base) or man.task_s
    man_band = band.sweep(base, lambda cfg: C.manual_total(version, size, arrays, repeats, cfg) or man.task_s)
    rows = [[name, dim, "manual Ns", man_t, man.instructions, man.d_refs, man.branches, 1.0, 1.0, 1.0, 1.0,
             *limits, bound.ratio(man_t), *band.row({p: 1.0 for p in band.POINTS})]]
    for flow in flows or flows_of(file, name):
        drv = C.generated(dim, dim, dim, file, name, flow, coalesce=coalesce)
        gen = C.host_counts(C.generated_command(drv, dim, dim, dim, "--no-check"),
                            C.generated_command(drv, dim, dim, dim, "--baseline"), repeats)
        t = C.generated_total(drv, arrays, repeats, base) or gen.task_s
        gen_band = band.sweep(base, lambda cfg: C.generated_total(drv, arrays, repeats, cfg) or gen.task_s)
        speeds = {p: man_band[p] / gen_band[p] for p in band.POINTS}
        rows.append([name, dim, f"gen {flow}", t, gen.instructions, gen.d_refs, gen.branches, man_t / t,
                     gen.d_refs / max(man.d_refs, 1), *band.spread(speeds), *limits, bound.ratio(t),
                     *band.row(speeds)])
    print(f"  {name} dim {dim}: {bound}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="v3 size 8 at dim 32, flows Ns and Cs, 1 repetition")
    ap.add_argument("--repeats", type=int, default=3, help="timing-model runs per driver (best of)")
    ap.add_argument("--plot-only", action="store_true", help="redraw the PNGs from the last fig13.csv")
    band.add_arguments(ap)
    args = ap.parse_args()
    if args.plot_only:
        replot()
        return
    dims = (32,) if args.quick else (64, 128, 256)
    grid = [(3, 8)] if args.quick else [(2, 8), (2, 16), (3, 8), (3, 16)]
    if args.quick:
        args.repeats = 1
    timing = "timing model" if C.timing_api() else "harness task clock (no timing model yet)"
    print(f"total time from: {timing}; counters: cachegrind, driver only")
    print(band.apply_host_mode(args))
    for version, size in grid:
        print(f"  v{version}_{size}: {C.accel_timing(f'matmul_v{version}.json', f'v{version}_{size}').describe()}")
    print(band.describe_band())
    rows = []
    best_speed, best_dref, beaten, best_band = [], [], [], []
    for version, size in grid:
        for dim in dims:
            r = cell(version, size, dim, args.repeats, flows=("Ns", "Cs") if args.quick else None)
            rows += r
            gens = r[1:]
            fastest = max(gens, key=lambda x: x[7])
            best_speed.append(fastest[7])
            best_dref.append(min(g[8] for g in gens))
            beaten.append(fastest[7] > 1.0)
            first = HEADERS.index(band.headers("speedup")[0])
            best_band.append({p: max(g[first + i] for g in gens) for i, p in enumerate(band.POINTS)})
            print(f"  {r[0][0]} dim {dim}: best {fastest[2]} {fastest[7]:.2f}x "
                  f"(band {min(best_band[-1].values()):.2f}-{max(best_band[-1].values()):.2f}x), "
                  f"time / bound {fastest[HEADERS.index('over_bound')]:.2f}, "
                  f"d_refs {min(g[8] for g in gens):.2f} of manual", flush=True)
    C.print_table(HEADERS, rows)
    C.write_csv("fig13", HEADERS, rows)
    plot(rows)
    g_speed, g_dref = C.geomean(best_speed), C.geomean(best_dref)
    print("geomean speedup of the best flow over manual Ns (modelled) at each band point:")
    for p, g in band.geomeans(best_band).items():
        print(f"  {band.label(p):<22} {g:.2f}x")
    print(f"\ntarget: generated beats manual in every cell: {sum(beaten)}/{len(beaten)} cells "
          f"-> {'MET' if all(beaten) else 'MISSED'}")
    print(f"target: geomean speedup >= 1.3x: {g_speed:.2f}x -> {'MET' if g_speed >= 1.3 else 'MISSED'}")
    print(f"target: d_refs >= 20% lower (geomean ratio <= 0.8): {g_dref:.2f} -> "
          f"{'MET' if g_dref <= 0.8 else 'MISSED'}")
    # every issue-4 target of this run: the other figures' CSVs count only if this run wrote them
    targets.print_targets(run_stamp.current_run_id())


def plot(rows: list[list]) -> None:
    labels = sorted({f"{r[0]} {r[1]}" for r in rows}, key=lambda s: (s.split()[0], int(s.split()[1])))
    drivers = sorted({r[2] for r in rows})
    series = {d: [next((r[7] for r in rows if f"{r[0]} {r[1]}" == lab and r[2] == d), 0.0) for lab in labels]
              for d in drivers}
    lo = {d: [next((r[9] for r in rows if f"{r[0]} {r[1]}" == lab and r[2] == d), 0.0) for lab in labels]
          for d in drivers}
    hi = {d: [next((r[10] for r in rows if f"{r[0]} {r[1]}" == lab and r[2] == d), 0.0) for lab in labels]
          for d in drivers}
    C.bar_plot("fig13", "Fig. 13 (modelled): generated vs manual Ns, total time; bars: band min-max",
               labels, series, "speedup over manual Ns (modelled)", hline=1.0,
               errors={d: (lo[d], hi[d]) for d in drivers})
    refs = {d: [next((r[8] for r in rows if f"{r[0]} {r[1]}" == lab and r[2] == d), 0.0) for lab in labels]
            for d in drivers}
    C.bar_plot("fig13_drefs", "Fig. 13: data-cache references of generated / manual Ns (cachegrind, driver only)",
               labels, refs, "D refs relative to manual Ns (lower is better)", hline=1.0)


def replot() -> None:
    """Redraw fig13*.png from the last fig13.csv (no measurement)."""
    table = run_stamp.read_csv("fig13")
    if table is None:
        raise SystemExit(f"no fig13.csv in {C.OUT}: run without --plot-only first")
    if table.stamp is None:  # never redraw a file no run claims (run_stamp.py)
        raise SystemExit(f"{table.path} has no run stamp: run without --plot-only first")
    print(f"redrawing from run {table.stamp.get('run')} at {table.stamp.get('time')} ({table.path})")
    rows = [[r[HEADERS[0]], int(r[HEADERS[1]]), r[HEADERS[2]], *(float(r[h]) for h in HEADERS[3:])] for r in table.rows]
    plot(rows)


if __name__ == "__main__":
    main()
