"""Paper Fig. 12: manual vs generated drivers, with and without the memcpy copy specialisation.

    .venv/bin/python benchmarks/figures/fig12.py [--dims 64,128] [--repeats N] [--no-counters] [--quick]

Grid: v2 and v3, sizes 8 and 16, square problems (default 64 and 128), two flows: Ns and the
flow with most reuse (v2: As, v3: Cs). Drivers, like for like per flow (the same flow, both
coalesced): the hand-written driver (its own memcpy per row, unaffected by the switch) and the
generated driver, with the runtime's copy specialisation on (memcpy per contiguous row,
rank-2/3/4 fast paths) and off (every word moved one by one: ``loom.runtime.memcpy_copies(lib,
False)``, or ``LOOM_COPY_MEMCPY=off`` for the standalone harnesses that cachegrind runs). Each
generated row's speedup is over the manual driver of its own flow. (Before, both generated flows,
coalesced, were compared with the plain manual Ns driver: the gain of batching and of the flow's
reuse counted as the copy specialisation's.) Metrics: timing-model total time (best of N) and
driver-only data-cache references. CSV/PNG: figures/out/fig12.*
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common as C  # noqa: E402
import manual  # noqa: E402

from loom.runtime import memcpy_copies  # noqa: E402
from loom.runtime.build import load_library  # noqa: E402

HEADERS = ["accel", "dim", "driver", "memcpy", "total_s", "d_refs", "speedup_vs_manual", "d_refs_vs_manual"]
REUSE_FLOW = {2: "As", 3: "Cs"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-counters", action="store_true", help="timing model only (no cachegrind)")
    ap.add_argument("--quick", action="store_true", help="v3 size 8 at dim 32 only, 1 repetition")
    args = ap.parse_args()
    grid = [(2, 8), (2, 16), (3, 8), (3, 16)]
    if args.quick:
        args.dims, args.repeats, grid = "32", 1, [(3, 8)]
    lib = load_library()
    rows = []
    for version, size in grid:
        for dim in (int(d) for d in args.dims.split(",")):
            name = f"v{version}_{size}"
            arrays = C.matmul_arrays(dim, dim, dim)
            for flow in ("Ns", REUSE_FLOW[version]):
                # the baseline: the hand-written driver of the same flow, coalesced as the generated one is
                man_t = C.manual_total(version, size, arrays, args.repeats, flow=flow, coalesce=True)
                man_refs = 0
                if not args.no_counters:
                    options = manual.driver_options(flow, coalesce=True)
                    man_refs = C.host_counts(manual.matmul_command(version, dim, dim, dim, size, "--no-check", *options),
                                             manual.matmul_command(version, dim, dim, dim, size, "--baseline", *options),
                                             1).d_refs
                rows.append([name, dim, f"manual {flow}", "own", man_t, man_refs, 1.0, 1.0])
                drv = C.generated(dim, dim, dim, f"matmul_v{version}.json", name, flow, coalesce=True)
                for on in (True, False):
                    with memcpy_copies(lib, on):
                        t = C.generated_total(drv, arrays, args.repeats)
                    refs = 0
                    if not args.no_counters:
                        with C._environment(LOOM_COPY_MEMCPY="on" if on else "off"):
                            refs = C.host_counts(C.generated_command(drv, dim, dim, dim, "--no-check"),
                                                 C.generated_command(drv, dim, dim, dim, "--baseline"), 1).d_refs
                    rows.append([name, dim, f"gen {flow}", "on" if on else "off", t, refs, man_t / t,
                                 refs / man_refs if man_refs else 0.0])
            print(f"  {name} {dim}: " + ", ".join(f"{r[2]} ({r[3]}) {r[6]:.2f}x" for r in rows[-6:]
                                                  if r[2].startswith("gen")), flush=True)
    C.print_table(HEADERS, rows)
    C.write_csv("fig12", HEADERS, rows)
    labels = sorted({f"{r[0]} {r[1]}" for r in rows}, key=lambda s: (s.split()[0], int(s.split()[1])))
    keys = [("gen Ns", "on"), ("gen Ns", "off"), ("gen reuse", "on"), ("gen reuse", "off")]

    def value(lab, drv, memcpy):
        for r in rows:
            flow = r[2] if drv == "gen Ns" else f"gen {REUSE_FLOW[int(r[0][1])]}"
            if f"{r[0]} {r[1]}" == lab and r[2] == flow and r[3] == memcpy:
                return r[6]
        return 0.0
    series = {f"{d} (memcpy {m})".replace("reuse", "As/Cs"): [value(lab, d, m) for lab in labels] for d, m in keys}
    C.bar_plot("fig12", "Generated vs manual, same flow, both coalesced, with / without the memcpy specialisation",
               labels, series, "speedup over the manual driver of the same flow (total time)", hline=1.0)
    for d, m in keys:
        gm = C.geomean([value(lab, d, m) for lab in labels])
        print(f"geomean speedup over the manual driver of the same flow, {d.replace('reuse', 'As/Cs')} memcpy {m}: "
              f"{gm:.2f}x")


if __name__ == "__main__":
    main()
