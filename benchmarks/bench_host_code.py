"""Host code of generated drivers: ``dma-inline-copies`` on (now) and off (the code before it), per flow,
next to the hand-written Ns driver.

    .venv/bin/python benchmarks/bench_host_code.py [--quick] [--repeats N] [--dim D]

Cells: v1_8 Ns; v2_8 Ns/As/Bs; v3_8 Ns/As/Bs/Cs; v4_16 (32x32x32 tiles) Ns/As/Bs/Cs on square problems of
side ``--dim`` (default 128, the paper's Fig. 12 size); two static conv layers on conv_os (flow Os,
the layers of ``manual/bench_counters.py``) next to the hand-written conv driver. Drivers are
coalesced, as in fig13. Per driver:

* instructions and data-cache references (``d_refs``) of the driver alone: cachegrind on the
  standalone harness minus its input set-up run, the simulated accelerator's files excluded
  (``figures/common.py: host_counts``, the same counting as ``manual/bench_counters.py``);
* host time: the timing model's host time (copies + other host work, measured with the monotonic
  clock: the simulated accelerator's work is not in it), median of ``--repeats`` runs, the drivers
  of a cell interleaved run by run (so load on the machine hits them alike).

Prints absolute figures per driver and the ratios inline/runtime-call and inline/manual (Ns for
matmul, Os for conv); the geomeans at the end. ``--quick`` (CI): v3_8 Ns at dim 32 and a small
conv layer, 3 runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))

import common as C  # noqa: E402
import manual  # noqa: E402
import numpy as np  # noqa: E402

CELLS = [("matmul_v1.json", "v1_8", ("Ns",)), ("matmul_v2.json", "v2_8", ("Ns", "As", "Bs")),
         ("matmul_v3.json", "v3_8", ("Ns", "As", "Bs", "Cs")), ("matmul_v4.json", "v4_16", ("Ns", "As", "Bs", "Cs"))]
QUICK = [("matmul_v3.json", "v3_8", ("Ns",))]
CONV_LAYERS = [(1, 64, 16, 16, 3, 1), (1, 64, 16, 16, 1, 2)]  # (batch, iC, H=W, oC, fHW, stride): bench_counters'
QUICK_CONV = [(1, 8, 8, 4, 3, 1)]
V4_TILE = 32  # the v4 description's default tile, also given to the manual driver


def host_seconds(report) -> float:
    return report.host_copy_s + report.host_other_s


def interleaved_host_times(runners: dict[str, object], repeats: int) -> dict[str, float]:
    """Median host time of each runner; run k of every runner before run k+1 of any."""
    times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeats):
        for name, run in runners.items():
            times[name].append(run())
    return {name: statistics.median(ts) for name, ts in times.items()}


def generated_runner(drv, arrays):
    def run() -> float:
        stats = drv(*[a.copy() for a in arrays])
        return host_seconds(stats.timing)
    return run


def manual_runner(version: int, tile: int, file: str, accel: str, arrays):
    from loom.runtime.timing import timing_report
    lib = manual.load_drivers()

    def run() -> float:
        C.configure_manual_timing(lib, file, accel)
        a, b, c = (x.copy() for x in arrays)
        manual.matmul_ns(version, a, b, c, tile, lib=lib)
        return host_seconds(timing_report(lib))
    return run


def conv_cell(layer: tuple[int, ...], repeats: int) -> list[list]:
    """A static conv layer (batch, iC, H=W, oC, fHW, stride) on conv_os: generated (coalesced) inline /
    runtime calls, and the hand-written driver."""
    from xdsl.dialects.builtin import i32

    from loom.driver.compile import compile_driver
    from loom.examples.accel_kernels import BUILTINS
    from loom.runtime.timing import timing_report
    b, c, h, f, r, s = layer
    dims = {"B": b, "C": c, "F": f, "H": h, "W": h, "R": r, "S": s}
    rng = np.random.default_rng(0)
    arrays = [rng.integers(-4, 4, shape).astype(np.int32) for shape in BUILTINS["conv2d"].shapes(dims)]
    args = tuple(str(v) for v in (b, c, h, h, f, r, s))
    runners, counts = {}, {}
    for inline in (True, False):
        name = f"Os {'inline' if inline else 'calls'}"
        drv = compile_driver(BUILTINS["conv2d"].build(dims, i32), C.EXAMPLES / "conv2d.json", coalesce=True,
                             inline_copies=inline)
        runners[name] = generated_runner(drv, arrays)
        exe = str(C.build_generated_harness(drv, C.CONV_HARNESS))
        counts[name] = C.host_counts([exe, *args, "--no-check"], [exe, *args, "--baseline"], 1)
    lib = manual.load_drivers()

    def manual_run() -> float:
        C.configure_manual_timing(lib, "conv2d.json", "conv_os")
        i, w, o = (x.copy() for x in arrays)
        manual.conv_os(i, w, o, s, lib=lib)
        return host_seconds(timing_report(lib))
    runners["manual Os"] = manual_run
    counts["manual Os"] = C.host_counts(manual.conv_command(b, c, h, h, f, r, s, "--no-check"),
                                        manual.conv_command(b, c, h, h, f, r, s, "--baseline"), 1)
    host = interleaved_host_times(runners, repeats)
    label = "conv b{} c{} {}x{} f{} r{} s{}".format(b, c, h, h, f, r, s)
    return [[label, 0, name, hc.instructions, hc.d_refs, host[name] * 1e6] for name, hc in counts.items()]


def cell(file: str, accel: str, flows, dim: int, repeats: int) -> list[list]:
    version = int(accel[1])
    tile = V4_TILE if version == 4 else int(accel.split("_")[1])
    tiles = {"m": V4_TILE, "n": V4_TILE, "k": V4_TILE} if version == 4 else None
    arrays = C.matmul_arrays(dim, dim, dim)
    drivers, runners, counts = {}, {}, {}
    for flow in flows:
        for inline in (True, False):
            name = f"{flow} {'inline' if inline else 'calls'}"
            drv = C.generated(dim, dim, dim, file, accel, flow, coalesce=True, inline_copies=inline,
                              tile_sizes=tiles)
            drivers[name] = drv
            runners[name] = generated_runner(drv, arrays)
            counts[name] = C.host_counts(C.generated_command(drv, dim, dim, dim, "--no-check"),
                                         C.generated_command(drv, dim, dim, dim, "--baseline"), 1)
    runners["manual Ns"] = manual_runner(version, tile, file, accel, arrays)
    counts["manual Ns"] = C.host_counts(manual.matmul_command(version, dim, dim, dim, tile, "--no-check"),
                                        manual.matmul_command(version, dim, dim, dim, tile, "--baseline"), 1)
    host = interleaved_host_times(runners, repeats)
    rows = []
    for name, hc in counts.items():
        rows.append([accel, dim, name, hc.instructions, hc.d_refs, host[name] * 1e6])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="v3_8 Ns at dim 32, 3 runs")
    ap.add_argument("--repeats", type=int, default=7, help="interleaved host-time runs per driver (median)")
    ap.add_argument("--dim", type=int, default=128, help="square problem side")
    args = ap.parse_args()
    cells, dim, repeats = (QUICK, 32, 3) if args.quick else (CELLS, args.dim, args.repeats)
    if repeats < 1:
        raise SystemExit(f"--repeats {repeats}: expected at least 1")
    print(f"host code per flow, dim {dim}: cachegrind (driver only) and host time "
          f"(timing model, measured clock, median of {repeats} interleaved runs)")
    headers = ["accel", "dim", "driver", "instructions", "d_refs", "host_us"]
    rows = []
    ratios: dict[str, list[float]] = {"instr inline/calls": [], "d_refs inline/calls": [], "host inline/calls": [],
                                      "instr inline/manual": [], "d_refs inline/manual": [],
                                      "host inline/manual": []}  # manual Ns (matmul), Os (conv)
    for file, accel, flows in cells:
        r = cell(file, accel, flows, dim, repeats)
        rows += r
        by = {row[2]: row for row in r}
        man = by["manual Ns"]
        for flow in flows:
            new, old = by[f"{flow} inline"], by[f"{flow} calls"]
            line = (f"  {accel} {flow}: instr {old[3]:,} -> {new[3]:,} ({new[3] / old[3]:.2f}x), "
                    f"d_refs {old[4]:,} -> {new[4]:,} ({new[4] / old[4]:.2f}x), "
                    f"host {old[5]:.1f} -> {new[5]:.1f} us ({new[5] / old[5]:.2f}x)")
            ratios["instr inline/calls"].append(new[3] / old[3])
            ratios["d_refs inline/calls"].append(new[4] / old[4])
            ratios["host inline/calls"].append(new[5] / old[5])
            if flow == "Ns":  # like for like: the manual driver is Ns
                ratios["instr inline/manual"].append(new[3] / man[3])
                ratios["d_refs inline/manual"].append(new[4] / man[4])
                ratios["host inline/manual"].append(new[5] / man[5])
                line += f"; vs manual Ns: instr {new[3] / man[3]:.2f}x, d_refs {new[4] / man[4]:.2f}x, " \
                        f"host {new[5] / man[5]:.2f}x"
            print(line, flush=True)
    for layer in (QUICK_CONV if args.quick else CONV_LAYERS):
        r = conv_cell(layer, repeats)
        rows += r
        by = {row[2]: row for row in r}
        new, old, man = by["Os inline"], by["Os calls"], by["manual Os"]
        for key, k in (("instr", 3), ("d_refs", 4), ("host", 5)):
            ratios[f"{key} inline/calls"].append(new[k] / old[k])
            ratios[f"{key} inline/manual"].append(new[k] / man[k])
        print(f"  {r[0][0]} Os: instr {old[3]:,} -> {new[3]:,} ({new[3] / old[3]:.2f}x), d_refs {old[4]:,} -> "
              f"{new[4]:,} ({new[4] / old[4]:.2f}x), host {old[5]:.1f} -> {new[5]:.1f} us ({new[5] / old[5]:.2f}x); "
              f"vs manual Os: instr {new[3] / man[3]:.2f}x, d_refs {new[4] / man[4]:.2f}x, host {new[5] / man[5]:.2f}x",
              flush=True)
    C.print_table(headers, rows)
    print("geomeans (lower is better):")
    for name, values in ratios.items():
        print(f"  {name:<26} {C.geomean(values):.3f} over {len(values)} cells")


if __name__ == "__main__":
    main()
