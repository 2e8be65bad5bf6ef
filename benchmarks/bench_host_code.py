"""Host code of generated drivers, flow for flow: ``dma-inline-copies`` on (now) and off (the code before
it), next to the hand-written driver of the same flow with the same optimisations (benchmarks/manual).

    .venv/bin/python benchmarks/bench_host_code.py [--quick] [--repeats N] [--dim D] [--variants coalesced,...]

Cells: v1_8 Ns; v2_8 Ns/As/Bs; v3_8 Ns/As/Bs/Cs; v4_16 (32x32x32 tiles) Ns/As/Bs/Cs on square problems of
side ``--dim`` (default 128, the paper's Fig. 12 size), and two static conv layers on conv_os (flow Os,
the layers of ``manual/bench_counters.py``); each in the optimisation variants asked for (default:
coalesced; also plain, double-buffered). Per driver:

* instructions and data-cache references (``d_refs``) of the driver alone: cachegrind on the
  standalone harness minus its input set-up run, the simulated accelerator's files excluded
  (``figures/common.py: host_counts``, the same counting as ``manual/bench_counters.py``);
* host time: CPU time of the thread in the driver's C call with the timing model off
  (``figures/common.py: generated_seconds / manual_seconds``; the simulated accelerator moves
  the words but skips its arithmetic, ``loom.runtime.host.without_arithmetic``), median of ``--repeats``
  runs, the drivers of a cell interleaved run by run.

Prints absolute figures per driver, the ratios inline/calls and inline/manual, and their geomeans.
``--quick`` (CI): v3_8 Ns coalesced at dim 32 and a small conv layer, 3 runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))

import common as C  # noqa: E402
import manual  # noqa: E402

CELLS = [("matmul_v1.json", "v1_8", ("Ns",)), ("matmul_v2.json", "v2_8", ("Ns", "As", "Bs")),
         ("matmul_v3.json", "v3_8", ("Ns", "As", "Bs", "Cs")), ("matmul_v4.json", "v4_16", ("Ns", "As", "Bs", "Cs"))]
QUICK = [("matmul_v3.json", "v3_8", ("Ns",))]
CONV_LAYERS = [(1, 64, 16, 16, 3, 1), (1, 64, 16, 16, 1, 2)]  # (batch, iC, H=W, oC, fHW, stride): bench_counters'
QUICK_CONV = [(1, 8, 8, 4, 3, 1)]
V4_TILE = 32  # the v4 description's default tile, also given to the manual driver
VARIANTS = {"plain": (False, False), "coalesced": (True, False), "double-buffered": (False, True)}


def interleaved(runners: dict[str, object], repeats: int) -> dict[str, float]:
    """Median of each runner; run k of every runner before run k+1 of any."""
    times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeats):
        for name, run in runners.items():
            times[name].append(run())
    return {name: statistics.median(ts) for name, ts in times.items()}


def matmul_cell(file: str, accel: str, flow: str, variant: str, dim: int, repeats: int) -> list[list]:
    coalesce, double_buffer = VARIANTS[variant]
    version = int(accel[1])
    tile = V4_TILE if version == 4 else int(accel.split("_")[1])
    tiles = {"m": V4_TILE, "n": V4_TILE, "k": V4_TILE} if version == 4 else None
    arrays = C.matmul_arrays(dim, dim, dim)
    runners, counts = {}, {}
    for inline in (True, False):
        name = "inline" if inline else "calls"
        drv = C.generated(dim, dim, dim, file, accel, flow, coalesce=coalesce, double_buffer=double_buffer,
                          inline_copies=inline, tile_sizes=tiles)
        runners[name] = lambda drv=drv: C.generated_seconds(drv, arrays)
        counts[name] = C.host_counts(C.generated_command(drv, dim, dim, dim, "--no-check"),
                                     C.generated_command(drv, dim, dim, dim, "--baseline"), 1)
    runners["manual"] = lambda: C.manual_seconds(version, tile, arrays, flow, coalesce, double_buffer)
    options = manual.driver_options(flow, coalesce, double_buffer)
    counts["manual"] = C.host_counts(manual.matmul_command(version, dim, dim, dim, tile, "--no-check", *options),
                                     manual.matmul_command(version, dim, dim, dim, tile, "--baseline", *options), 1)
    host = interleaved(runners, repeats)
    return [[f"{accel} {dim}", flow, variant, name, hc.instructions, hc.d_refs, host[name] * 1e6]
            for name, hc in counts.items()]


def conv_cell(layer: tuple[int, ...], variant: str, repeats: int) -> list[list]:
    coalesce, double_buffer = VARIANTS[variant]
    b, c, h, f, r, s = layer
    dims = C.conv_dims(c, h, f, r, s, batch=b)
    arrays = C.conv_arrays(dims)
    runners, counts = {}, {}
    for inline in (True, False):
        name = "inline" if inline else "calls"
        drv = C.generated_conv(dims, coalesce=coalesce, double_buffer=double_buffer, inline_copies=inline)
        runners[name] = lambda drv=drv: C.generated_seconds(drv, arrays)
        counts[name] = C.host_counts(C.conv_command(dims, "--no-check", drv=drv),
                                     C.conv_command(dims, "--baseline", drv=drv), 1)
    runners["manual"] = lambda: C.manual_conv_seconds(arrays, s, coalesce, double_buffer)
    options = manual.driver_options("Ns", coalesce, double_buffer)
    counts["manual"] = C.host_counts(C.conv_command(dims, "--no-check", *options),
                                     C.conv_command(dims, "--baseline", *options), 1)
    host = interleaved(runners, repeats)
    label = "conv b{} c{} {}x{} f{} r{} s{}".format(b, c, h, h, f, r, s)
    return [[label, "Os", variant, name, hc.instructions, hc.d_refs, host[name] * 1e6] for name, hc in counts.items()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="v3_8 Ns coalesced at dim 32 and a small conv layer, 3 runs")
    ap.add_argument("--repeats", type=int, default=7, help="interleaved host-time runs per driver (median)")
    ap.add_argument("--dim", type=int, default=128, help="square problem side")
    ap.add_argument("--variants", default="coalesced", help=f"comma-separated, of {', '.join(VARIANTS)}")
    args = ap.parse_args()
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"--variants: unknown {unknown[0]!r}; expected some of {', '.join(VARIANTS)}")
    cells, convs, dim, repeats = (QUICK, QUICK_CONV, 32, 3) if args.quick else (CELLS, CONV_LAYERS, args.dim,
                                                                                 args.repeats)
    if args.quick:
        variants = ["coalesced"]
    if repeats < 1:
        raise SystemExit(f"--repeats {repeats}: expected at least 1")
    print(f"host code per flow: cachegrind (driver only) and host time (thread CPU time of the C call, timing "
          f"model off, median of {repeats} interleaved runs); variants {', '.join(variants)}")
    headers = ["cell", "flow", "variant", "driver", "instructions", "d_refs", "host_us"]
    rows: list[list] = []
    ratios: dict[str, list[float]] = {f"{what} inline/{base}": [] for base in ("calls", "manual")
                                      for what in ("instr", "d_refs", "host")}
    work = [(lambda f=f, a=a, fl=fl, v=v: matmul_cell(f, a, fl, v, dim, repeats))
            for f, a, flows in cells for fl in flows for v in variants]
    work += [(lambda layer=layer, v=v: conv_cell(layer, v, repeats)) for layer in convs for v in variants]
    for job in work:
        r = job()
        rows += r
        by = {row[3]: row for row in r}
        new = by["inline"]
        line = f"  {new[0]} {new[1]} {new[2]}:"
        for base in ("calls", "manual"):
            old = by[base]
            for what, k in (("instr", 4), ("d_refs", 5), ("host", 6)):
                ratios[f"{what} inline/{base}"].append(new[k] / old[k])
            line += (f" vs {base}: instr {new[4] / old[4]:.2f}x, d_refs {new[5] / old[5]:.2f}x, "
                     f"host {new[6] / old[6]:.2f}x;")
        print(line.rstrip(";"), flush=True)
    C.print_table(headers, rows)
    print("geomeans (inline / other; lower is better):")
    for name, values in ratios.items():
        print(f"  {name:<22} {C.geomean(values):.3f} over {len(values)} cells, worst {max(values):.3f}")


if __name__ == "__main__":
    main()
