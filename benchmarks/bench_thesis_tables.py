"""Thesis Tables 6.1, 6.6 and 6.7 reproduced by loom, with the published figures alongside.

Table 6.1: harris on a 64x64 input with the three buffering schedules of Code 6.1 (PEs, MEMs, cycles).
Tables 6.6/6.7: the thesis apps at the rates and tiles of Table 6.5 (PEs, MEMs, compute kernels and
memories as the thesis counts them, kernels placed with a PE, largest memory-tile buffer, GLB tile, PE
and MEM use of the Amber CGRA, compute occupancy = ideal / actual cycles, latency), kernel latencies
from the Amber PE table; then Table 6.6's kernels and memories of the Halide-to-Hardware schedules the
thesis ran, written in loom, each value-simulated (refused and unwritten ones listed); Table 6.7's image rows
from those schedules on Table 6.5's tiles (PE use, occupancy, latency beside the thesis's); up_sample schedule 3 on
Table 6.5's 600 x 400 x 3 tile beside Table 6.7's upsample row (loom's own upsample row is one channel at one
pixel a cycle, without the thesis's rate); camera_pipeline_2x2 schedule 3 at 2 x 2 pixels a step (two rows a step)
and at one row a step on camera's tile; resnet_output_stationary in the thesis's form and its copies_at_tile
form on conv3_1 (not with ``--quick``). Ends with the
largest relative gaps of the figures the acceptance names (Table 6.1 PEs, MEMs and cycles, Table 6.7
occupancy) and the time taken.

    python benchmarks/bench_thesis_tables.py [--quick]

``--quick``: Table 6.1's sch3 only and the gaussian, cascade and harris rows.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from loom.examples.pipelines._thesis import (  # noqa: E402
    IMAGE_ROWS, TABLE_6_1, TABLE_6_7, camera_2x2_table, resnet_output_stationary_table, table_6_1,
    table_6_6_halide_to_hardware, table_6_7, table_6_7_halide_to_hardware, upsample_schedule_3_table)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one Table 6.1 row and three Table 6.7 apps")
    quick = ap.parse_args().quick
    t0 = time.perf_counter()
    t61, r61 = table_6_1(["sch3: no recompute"] if quick else None)
    print("Table 6.1 (harris, 64x64 input):")
    print(t61)
    t67, r67, skipped = table_6_7(["gaussian", "cascade", "harris"] if quick else None)
    print("\nTables 6.6 / 6.7 (loom row, then the thesis's):")
    print(t67)
    for line in skipped:
        print(line)
    print("\nTable 6.6, the Halide-to-Hardware schedules written in loom (values: simulated from the ubuf IR over "
          "2 x 2 tiles against the reference evaluator):")
    print(table_6_6_halide_to_hardware(values=True))
    print("\nTable 6.7's image rows from the thesis's own schedules written in loom, on Table 6.5's tiles:")
    t67h, r67h = table_6_7_halide_to_hardware(IMAGE_ROWS[:3] if quick else IMAGE_ROWS)
    print(t67h)
    print(upsample_schedule_3_table())
    print()
    print(camera_2x2_table((1,)))
    if not quick:
        print()
        print(resnet_output_stationary_table())
    mem_ok = all(r.mems == TABLE_6_1[r.name][2] for r in r61)
    cyc = max(abs(r.latency - TABLE_6_1[r.name][3]) / TABLE_6_1[r.name][3] for r in r61)
    occ = {r.name: abs(r.occupancy - TABLE_6_7[r.name]["occupancy"]) / TABLE_6_7[r.name]["occupancy"]
           for r in r67 if TABLE_6_7[r.name]["occupancy"] and r.occupancy is not None}
    worst = max(occ, key=occ.get)
    pes = ", ".join(f"{r.name.split(':')[0]} {(r.pes - TABLE_6_1[r.name][1]) / TABLE_6_1[r.name][1]:+.1%}" for r in r61)
    print(f"\nTable 6.1 MEMs equal to the thesis: {'yes' if mem_ok else 'NO'}; largest cycle gap {cyc:.2%}; "
          f"PE gaps: {pes}")
    print(f"Table 6.7 occupancy: largest gap {occ[worst]:.2%} ({worst}); within 2%: "
          + ", ".join(n for n, g in occ.items() if g <= 0.02))
    same = [r.name for r in r67 if (r.clockwork.kernels, r.clockwork.memories)
            == (TABLE_6_7[r.name]["kernels"], TABLE_6_7[r.name]["memories"])]
    print(f"Table 6.6 kernels and memories (thesis rule, loom's schedules) equal to the thesis: {len(same)} of "
          f"{len(r67)} rows{': ' + ', '.join(same) if same else ''}")
    pe_gap = {r.name: r.pe_use - TABLE_6_7[r.name]["pe_use"] for r in r67h}
    print("Table 6.7 PE use, the thesis's schedules: " + ", ".join(f"{n} {g * 100:+.1f}" for n, g in pe_gap.items())
          + " points; within 1 point: " + ", ".join(n for n, g in pe_gap.items() if abs(g) <= 0.01))
    print(f"time: {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
