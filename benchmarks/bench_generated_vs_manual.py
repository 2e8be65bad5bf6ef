"""Generated vs hand-written drivers, flow for flow (paper Fig. 13), and the gain from choosing the flow.

    .venv/bin/python benchmarks/bench_generated_vs_manual.py [--quick] [--repeats N] [--host-runs N]
        [--accels v2_8,v3_16,...|none] [--dims 64,128] [--variants plain,coalesced,double-buffered]
        [--conv-layers 1,4,...|all|none] [--conv-scale S] [--conv-variants ...]

Same-flow table: per accelerator, problem size (square dims), flow and optimisation
variant (plain; coalesced; double-buffered), loom's generated driver against the
hand-written driver of the SAME flow with the SAME optimisation (benchmarks/manual:
bare arrays, row memcpys, the fewest transfers; its coalescing and double buffering
mirror loom's). Both run the same runtime, simulated accelerator and timing model, and
must move the same transactions and words (printed per cell). Per cell:
  - modelled total (timing model; best of --repeats) at the description's constants
    and across the sensitivity band (figures/band.py: DMA set-up 0/100/400 cycles x host
    1x/10x slower), as manual / generated;
  - measured host time: CPU time of the thread in the driver's C call (task clock,
    so preemption on this shared machine is not counted) with the timing model off,
    median of --host-runs runs interleaved generated, manual, ... (both traced alike;
    the simulated accelerator moves the words but skips its multiply-accumulates,
    ``loom.runtime.host.without_arithmetic``: on a board they are the accelerator's
    work, here they would be most of the call; the same with them, ``*_host_sim_s``, is kept
    as a secondary column); the timeline's host part
    (copies + other host work, simulator excluded) is also given, but its clock reads
    per runtime call charge the driver that makes more calls (see the README);
  - cachegrind data-cache references, instructions and branches of the driver alone
    (standalone harnesses, input set-up subtracted, simulator files excluded);
  - the physical limit (loom.driver.bounds) and time / bound of both drivers.
Flow choice (separate table): the best generated cell of each (accelerator, dim) over
flows and variants against the plain manual Ns driver (the old headline), and the best
manual cell against the same, so the flow's share of the gain is visible.
Conv cells (paper Fig. 16's ResNet18 layers, figures/fig16.py LAYERS, channel counts divided by
--conv-scale, default 8: each runs in seconds): the generated conv driver on conv2d.json's conv_os
against benchmarks/manual/conv_os.c with the same coalescing / double buffering (--conv-variants,
default all four), measured exactly as the matmul cells (accel "conv_os", dim the layer, flow Os);
their own table, checks and CSV (fig13_conv.*), so the matmul grid's figures are unchanged.
Acceptance checks printed MET / MISSED, matmul and conv apart: generated >= manual in every
cell (modelled total at every band point; host time); d_refs geomean ratio <= 1; host-time
geomean >= 1.18x. CSV/PNG: figures/out/fig13.*, fig13_flow.*, fig13_conv.*
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "figures"))

import band  # noqa: E402
import common as C  # noqa: E402
import fig16  # noqa: E402
import manual  # noqa: E402
import run_stamp  # noqa: E402
import targets  # noqa: E402

VARIANTS = {"plain": (False, False), "coalesced": (True, False), "double-buffered": (False, True),
            "coalesced+double-buffered": (True, True)}
DEFAULT_VARIANTS = ("plain", "coalesced", "double-buffered")
DEFAULT_ACCELS = ("v1_16", "v2_8", "v2_16", "v3_8", "v3_16", "v4_16")
CONV = "conv_os"  # conv2d.json's accelerator: the conv cells' "accel"
QUICK_CONV_SCALE = 16
HOST_10X = (band.SETUP_CYCLES[1], band.HOST_SLOWDOWN[-1])  # the description's set-up, host 10x slower

HEADERS = ["accel", "dim", "flow", "variant", "gen_total_s", "man_total_s", "speedup", "speedup_min", "speedup_max",
           "gen_host_s", "man_host_s", "host_speedup", "gen_host_sim_s", "man_host_sim_s", "host_sim_speedup",
           "gen_timeline_host_s", "man_timeline_host_s", "gen_d_refs", "man_d_refs", "d_refs_ratio",
           "gen_instructions", "man_instructions", "gen_branches", "man_branches", "same_transfers",
           "compute_s", "min_transfer_s", "bound_s", "serial_bound_s", "gen_over_bound", "man_over_bound",
           *band.headers("speedup")]
FLOW_HEADERS = ["accel", "dim", "best_generated", "best_generated_s", "manual_ns_s", "flow_gain",
                "best_manual", "best_manual_s", "manual_flow_gain", "flow_gain_min", "flow_gain_max",
                *band.headers("flow_gain")]


def accelerator(name: str) -> tuple[int, int, str]:
    """(version, manual tile, description file) of "v3_16"-style names; v4_16 runs 32 x 32 x 32 tiles
    (its description's default tile, the one its generated driver uses)."""
    version, size = int(name[1]), int(name.split("_")[1])
    return version, 32 if version == 4 else size, f"matmul_v{version}.json"


@dataclass
class Cell:
    accel: str
    dim: int
    flow: str
    variant: str
    gen_band: dict
    man_band: dict
    row: list


def modelled_pair(gen_run, man_run, cfg, repeats: int) -> tuple[float, float]:
    """Best of ``repeats`` modelled totals of both drivers (host time is measured: the minimum is the
    least disturbed), runs interleaved generated, manual, ...: a burst of load on this shared
    machine then hits both sides, not one driver's whole band sweep."""
    gen, man = [], []
    for _ in range(repeats):
        gen.append(gen_run(cfg)[0].total_s)
        man.append(man_run(cfg)[0].total_s)
    return min(gen), min(man)


def host_times(gen_seconds, man_seconds, runs: int) -> tuple[float, float]:
    """Median task clock of the driver call, ``runs`` runs interleaved generated, manual, generated, ..."""
    gen, man = [], []
    for _ in range(runs):
        gen.append(gen_seconds())
        man.append(man_seconds())
    return statistics.median(gen), statistics.median(man)


def timeline_host(run, cfg, repeats: int) -> float:
    """Median host part of the modelled timeline (copies + other host work; instrumented)."""
    return statistics.median((lambda r: r.host_copy_s + r.host_other_s)(run(cfg)[0]) for _ in range(repeats))


@dataclass
class Pair:
    """The generated and the manual driver of one cell, same flow and optimisations: what ``measure`` needs."""
    gen_run: Callable  # timing config or None -> (timing report, output) of one run on fresh copies
    man_run: Callable
    want: np.ndarray  # the output both must produce (numpy)
    gen_seconds: Callable  # arithmetic -> host seconds of one driver call (common.host_seconds)
    man_seconds: Callable
    gen_commands: tuple[list[str], list[str]]  # standalone harness: (run, input set-up only)
    man_commands: tuple[list[str], list[str]]
    base: object  # the description's TimingConfig
    bound: object  # loom.driver.bounds.PhysicalBound


def matmul_pair(accel: str, dim: int, flow: str, coalesce: bool, double_buffer: bool) -> Pair:
    from loom.accel.description import load_description
    from loom.driver.bounds import physical_bound

    version, tile, file = accelerator(accel)
    arrays = C.matmul_arrays(dim, dim, dim)
    base = C.accel_timing(file, accel)
    drv = C.generated(dim, dim, dim, file, accel, flow, coalesce=coalesce, double_buffer=double_buffer)
    opts = manual.driver_options(flow, coalesce, double_buffer)
    return Pair(
        gen_run=lambda cfg: C.generated_report(drv, arrays, cfg or base),
        man_run=lambda cfg: C.manual_report(version, tile, arrays, cfg or base, flow, coalesce, double_buffer),
        want=arrays[2] + arrays[0] @ arrays[1],
        gen_seconds=lambda arithmetic: C.generated_seconds(drv, arrays, arithmetic=arithmetic),
        man_seconds=lambda arithmetic: C.manual_seconds(version, tile, arrays, flow, coalesce, double_buffer,
                                                        arithmetic=arithmetic),
        gen_commands=tuple(C.generated_command(drv, dim, dim, dim, o) for o in ("--no-check", "--baseline")),
        man_commands=tuple(manual.matmul_command(version, dim, dim, dim, tile, o, *opts)
                           for o in ("--no-check", "--baseline")),
        base=base,
        bound=physical_bound(load_description(str(C.EXAMPLES / file)).accelerator(accel),
                             {"m": dim, "n": dim, "k": dim}, base))


def conv_pair(layer: tuple[int, ...], coalesce: bool, double_buffer: bool) -> Pair:
    """A conv layer (iC, H, oC, fHW, stride) on conv_os: generated vs benchmarks/manual/conv_os.c."""
    from loom.driver.bounds import physical_bound
    from loom.examples.accel_kernels import conv_reference

    dims = C.conv_dims(*layer)
    stride = layer[-1]
    arrays = C.conv_arrays(dims)
    drv = C.generated_conv(dims, coalesce=coalesce, double_buffer=double_buffer)
    base = C.accel_timing("conv2d.json", drv.accelerator.name)
    opts = manual.driver_options("Ns", coalesce, double_buffer)  # no flow: --coalesce / --double-buffer only
    return Pair(
        gen_run=lambda cfg: C.generated_report(drv, arrays, cfg or base),
        man_run=lambda cfg: C.manual_conv_report(arrays, stride, cfg or base, coalesce, double_buffer),
        want=conv_reference(*arrays, stride),
        gen_seconds=lambda arithmetic: C.generated_seconds(drv, arrays, arithmetic=arithmetic),
        man_seconds=lambda arithmetic: C.manual_conv_seconds(arrays, stride, coalesce, double_buffer,
                                                             arithmetic=arithmetic),
        gen_commands=tuple(C.conv_command(dims, o, drv=drv) for o in ("--no-check", "--baseline")),
        man_commands=tuple(C.conv_command(dims, o, *opts) for o in ("--no-check", "--baseline")),
        base=base,
        bound=physical_bound(drv.accelerator, drv.problem_dims(arrays), base))


def measure_cell(accel: str, dim, flow: str, variant: str, args) -> Cell:
    """One cell: a matmul accelerator, square dim and flow, or ``accel == "conv_os"`` with ``dim`` a
    Fig. 16 layer number (``conv_layers``) and flow Os."""
    coalesce, double_buffer = VARIANTS[variant]
    if accel == CONV:
        layer = conv_layers(args.conv_scale)[dim]
        pair = conv_pair(layer, coalesce, double_buffer)
        dim = "L{}: {}x{}x{} > {} f{} s{}".format(dim, layer[0], layer[1], layer[1], *layer[2:])
    else:
        pair = matmul_pair(accel, dim, flow, coalesce, double_buffer)
    return measure(pair, accel, dim, flow, variant, args)


def measure(pair: Pair, accel: str, dim, flow: str, variant: str, args) -> Cell:
    (g_rep, g_out), (m_rep, m_out) = pair.gen_run(None), pair.man_run(None)  # warm-up, checked
    if not (np.array_equal(g_out, pair.want) and np.array_equal(m_out, pair.want)):
        raise SystemExit(f"{accel} {flow} {variant} {dim}: a driver's result differs from numpy")
    same = (g_rep.sends, g_rep.recvs, g_rep.bytes_sent, g_rep.bytes_received) == \
        (m_rep.sends, m_rep.recvs, m_rep.bytes_sent, m_rep.bytes_received)
    base, bound = pair.base, pair.bound
    g_t, m_t = modelled_pair(pair.gen_run, pair.man_run, base, args.repeats)
    pairs = band.sweep(base, lambda cfg: modelled_pair(pair.gen_run, pair.man_run, cfg, args.repeats))
    g_band, m_band = ({p: v[i] for p, v in pairs.items()} for i in (0, 1))
    speeds = {p: m_band[p] / g_band[p] for p in band.POINTS}
    g_host, m_host = host_times(lambda: pair.gen_seconds(False), lambda: pair.man_seconds(False), args.host_runs)
    g_sim, m_sim = host_times(lambda: pair.gen_seconds(True), lambda: pair.man_seconds(True), args.host_runs)
    g_line, m_line = timeline_host(pair.gen_run, base, args.repeats), timeline_host(pair.man_run, base, args.repeats)
    gen = C.host_counts(*pair.gen_commands, 1)
    man = C.host_counts(*pair.man_commands, 1)
    row = [accel, dim, flow, variant, g_t, m_t, m_t / g_t, *band.spread(speeds), g_host, m_host, m_host / g_host,
           g_sim, m_sim, m_sim / g_sim, g_line, m_line,
           gen.d_refs, man.d_refs, gen.d_refs / max(man.d_refs, 1), gen.instructions, man.instructions,
           gen.branches, man.branches, "yes" if same else "NO", bound.compute_s, bound.transfer_s, bound.bound_s,
           bound.serial_bound_s, bound.ratio(g_t), bound.ratio(m_t), *band.row(speeds)]
    print(f"  {accel} {dim} {flow:<2} {variant:<26} modelled {m_t / g_t:5.2f}x "
          f"(band {min(speeds.values()):.2f}-{max(speeds.values()):.2f}x)  host {m_host / g_host:5.2f}x (with the simulator's "
          f"arithmetic {m_sim / g_sim:5.2f}x)  "
          f"d_refs {gen.d_refs / max(man.d_refs, 1):.2f}  time/bound gen {bound.ratio(g_t):.2f} "
          f"man {bound.ratio(m_t):.2f}  transfers {'same' if same else 'DIFFER'}", flush=True)
    return Cell(accel, dim, flow, variant, g_band, m_band, row)


def flow_choice(cells: list[Cell]) -> list[list]:
    """Per (accelerator, dim): best generated and best manual cell against plain manual Ns."""
    rows = []
    for key in dict.fromkeys((c.accel, c.dim) for c in cells):
        group = [c for c in cells if (c.accel, c.dim) == key]
        ns = next((c for c in group if c.flow == "Ns" and c.variant == "plain"), None)
        if ns is None:
            continue
        col = HEADERS.index
        best_gen = min(group, key=lambda c: c.row[col("gen_total_s")])
        best_man = min(group, key=lambda c: c.row[col("man_total_s")])
        ns_t = ns.row[col("man_total_s")]
        gains = {p: ns.man_band[p] / min(c.gen_band[p] for c in group) for p in band.POINTS}
        rows.append([*key, f"{best_gen.flow} {best_gen.variant}", best_gen.row[col("gen_total_s")], ns_t,
                     ns_t / best_gen.row[col("gen_total_s")], f"{best_man.flow} {best_man.variant}",
                     best_man.row[col("man_total_s")], ns_t / best_man.row[col("man_total_s")],
                     *band.spread(gains), *band.row(gains)])
    return rows


def conv_layers(scale: int) -> dict[int, tuple[int, ...]]:
    """Fig. 16's ResNet18 layers by number (1..11), channel counts divided by ``scale``."""
    return {n: fig16.scaled(layer, scale) for n, layer in enumerate(fig16.LAYERS, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="v3_8 at dim 32: Ns plain, Cs coalesced, As double-buffered; conv layers 4 (plain) and "
                         f"11 (coalesced+double-buffered) at channels / {QUICK_CONV_SCALE}; 1 repetition, 5 host runs")
    ap.add_argument("--repeats", type=int, default=3, help="timing-model runs per driver and band point (best of)")
    ap.add_argument("--host-runs", type=int, default=7, help="interleaved runs per driver for host time (median; >= 5)")
    ap.add_argument("--accels", default=",".join(DEFAULT_ACCELS),
                    help="matmul accelerators, e.g. v2_8,v3_16,v4_16 ('none': conv cells only)")
    ap.add_argument("--dims", default="64,128,256", help="square problem sizes")
    ap.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), help=f"of {', '.join(VARIANTS)}")
    ap.add_argument("--conv-layers", default="all",
                    help="Fig. 16 ResNet18 layers (1..11) as conv cells, e.g. 2,4,11 ('all', 'none')")
    ap.add_argument("--conv-scale", type=int, default=8, help="conv layers' channel counts divided by this")
    ap.add_argument("--conv-variants", default=",".join(VARIANTS), help=f"of {', '.join(VARIANTS)}")
    ap.add_argument("--plot-only", action="store_true", help="redraw the PNGs from the last fig13*.csv")
    band.add_arguments(ap)
    args = ap.parse_args()
    if args.plot_only:
        replot()
        return
    accels = [] if args.accels == "none" else args.accels.split(",")
    dims, variants = [int(d) for d in args.dims.split(",")], args.variants.split(",")
    conv_variants = args.conv_variants.split(",")
    named = {"all": list(conv_layers(1)), "none": []}
    try:
        layers = named[args.conv_layers] if args.conv_layers in named else \
            [int(n) for n in args.conv_layers.split(",")]
    except ValueError:
        raise SystemExit(f"--conv-layers {args.conv_layers!r}: expected numbers 1..11, 'all' or 'none'") from None
    if args.quick:
        accels, dims, args.repeats, args.host_runs, args.conv_scale = ["v3_8"], [32], 1, 5, QUICK_CONV_SCALE
    bad = [v for v in variants + conv_variants if v not in VARIANTS]
    if bad or args.host_runs < 5 or not set(layers) <= set(conv_layers(1)) or args.conv_scale < 1:
        raise SystemExit(f"--variants {bad} unknown (expected {list(VARIANTS)})" if bad else
                         "--host-runs must be >= 5" if args.host_runs < 5 else
                         f"--conv-layers {layers}: expected numbers 1..11" if args.conv_scale >= 1 else
                         "--conv-scale must be >= 1")
    print(band.apply_host_mode(args))
    if args.deterministic_host:
        print("  note: the deterministic host model charges every word staged or unpacked, by a runtime copy or "
              "by the driver's own code (manual drivers, generated dma-inline-copies), at word_s")
    for accel in accels:
        print(f"  {accel}: {C.accel_timing(accelerator(accel)[2], accel).describe()}")
    if layers:
        print(f"  {CONV}: {C.accel_timing('conv2d.json', CONV).describe()}")
    print(band.describe_band())
    grid = [(accel, dim, flow, variant) for accel in accels for dim in dims
            for flow in manual.FLOWS[accelerator(accel)[0]] for variant in variants]
    conv_grid = [(CONV, n, "Os", variant) for n in layers for variant in conv_variants]
    if args.quick:  # one cell per variant
        grid = [("v3_8", 32, "Ns", "plain"), ("v3_8", 32, "Cs", "coalesced"), ("v3_8", 32, "As", "double-buffered")]
        conv_grid = [(CONV, 4, "Os", "plain"), (CONV, 11, "Os", "coalesced+double-buffered")]
    if grid:
        cells = [measure_cell(*key, args) for key in grid]
        rows = [c.row for c in cells]
        print("\nsame flow, same optimisations: manual / generated (> 1: generated faster)")
        C.print_table(HEADERS, rows)
        C.write_csv("fig13", HEADERS, rows)
        flow_rows = flow_choice(cells)
        print("\nflow choice: best cell / plain manual Ns (modelled total)")
        C.print_table(FLOW_HEADERS, flow_rows)
        C.write_csv("fig13_flow", FLOW_HEADERS, flow_rows)
        plot(rows, flow_rows)
        summary(rows, "same-flow")
        if flow_rows:
            fcol = FLOW_HEADERS.index
            print(f"flow choice: best generated / manual Ns geomean "
                  f"{C.geomean([r[fcol('flow_gain')] for r in flow_rows]):.2f}x, best manual / manual Ns "
                  f"{C.geomean([r[fcol('manual_flow_gain')] for r in flow_rows]):.2f}x; like for like (each with "
                  f"its best flow and options) best generated / best manual "
                  f"{C.geomean([r[fcol('flow_gain')] / r[fcol('manual_flow_gain')] for r in flow_rows]):.2f}x")
    if conv_grid:
        print(f"\nconv cells: Fig. 16 ResNet18 layers (iC x H x H > oC, fHW, stride), channels / {args.conv_scale}, "
              f"vs benchmarks/manual/conv_os.c with the same options")
        conv_rows = [measure_cell(*key, args).row for key in conv_grid]
        print("\nconv, same optimisations: manual / generated (> 1: generated faster)")
        C.print_table(HEADERS, conv_rows)
        C.write_csv("fig13_conv", HEADERS, conv_rows)
        plot(conv_rows, [], "fig13_conv")
        summary(conv_rows, "conv")
    # every issue target of this run: the other figures' CSVs count only if this run wrote them
    targets.print_targets(run_stamp.current_run_id())


def summary(rows: list[list], what: str) -> None:
    """The band geomeans, the cells below 1.0x and the acceptance checks (MET / MISSED) of ``rows``."""
    col = HEADERS.index
    print(f"\n{what} speedup (manual / generated, modelled) at each band point: geomean, minimum over cells:")
    per_cell = [dict(zip(band.POINTS, r[col(band.headers('speedup')[0]):])) for r in rows]
    for p, g in band.geomeans(per_cell).items():
        worst = min(c[p] for c in per_cell)
        print(f"  {band.label(p):<22} geomean {g:.2f}x  min {worst:.2f}x"
              f"{'   <- host 10x slower (the paper board)' if p == HOST_10X else ''}")
    for r, c in zip(rows, per_cell):
        if (low := [p for p in band.POINTS if c[p] < 1.0]):
            print(f"  below 1.0x: {r[0]} {r[1]} {r[2]} {r[3]} at "
                  + ", ".join(f"{band.label(p)} ({c[p]:.3f}x)" for p in low))
    for r in rows:
        if r[col("host_speedup")] < 1.0:
            print(f"  host time below 1.0x: {r[0]} {r[1]} {r[2]} {r[3]} ({r[col('host_speedup')]:.3f}x)")
    print()
    for check, measured, met in targets.same_flow_checks([dict(zip(HEADERS, r)) for r in rows]):
        print(f"check ({what}): {check}: {measured} -> {'MET' if met else 'MISSED'}")


def plot(rows: list[list], flow_rows: list[list], name: str = "fig13") -> None:
    col = HEADERS.index
    labels = [f"{r[0]} {r[1]} {r[2]} {r[3]}" for r in rows]
    speed = [r[col("speedup")] for r in rows]
    fig = "Fig. 13" if name == "fig13" else "Fig. 16 layers"
    C.bar_plot(name, f"{fig} (modelled): generated vs manual, same flow and optimisations; bars: band min-max",
               labels, {"modelled total": speed, "host time (measured)": [r[col("host_speedup")] for r in rows]},
               "manual / generated (> 1: generated faster)", hline=1.0,
               errors={"modelled total": ([r[col("speedup_min")] for r in rows], [r[col("speedup_max")] for r in rows])})
    C.bar_plot(f"{name}_drefs", f"{fig}: data-cache references, generated / manual of the same flow (cachegrind)",
               labels, {"d_refs ratio": [r[col("d_refs_ratio")] for r in rows]},
               "D refs relative to manual (lower is better)", hline=1.0)
    if flow_rows:
        fcol = FLOW_HEADERS.index
        key = "best generated / manual Ns"
        C.bar_plot("fig13_flow", "Flow choice (modelled): best generated cell vs plain manual Ns; bars: band min-max",
                   [f"{r[0]} {r[1]}: {r[2]}" for r in flow_rows],
                   {key: [r[fcol("flow_gain")] for r in flow_rows],
                    "best manual / manual Ns": [r[fcol("manual_flow_gain")] for r in flow_rows]},
                   "speedup over plain manual Ns (modelled)", hline=1.0,
                   errors={key: ([r[fcol("flow_gain_min")] for r in flow_rows],
                                 [r[fcol("flow_gain_max")] for r in flow_rows])})


def _value(text: str):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _read(name: str, headers: list[str]) -> list[list]:
    table = run_stamp.read_csv(name)
    if table is None:
        raise SystemExit(f"no {name}.csv in {C.OUT}: run without --plot-only first")
    if table.stamp is None:  # never redraw a file no run claims (run_stamp.py)
        raise SystemExit(f"{table.path} has no run stamp: run without --plot-only first")
    print(f"redrawing {name} from run {table.stamp.get('run')} at {table.stamp.get('time')} ({table.path})")
    return [[_value(r[h]) for h in headers] for r in table.rows]


def replot() -> None:
    """Redraw fig13*.png from the last fig13.csv / fig13_flow.csv / fig13_conv.csv (no measurement)."""
    plot(_read("fig13", HEADERS), _read("fig13_flow", FLOW_HEADERS))
    if run_stamp.read_csv("fig13_conv") is not None:
        plot(_read("fig13_conv", HEADERS), [], "fig13_conv")


if __name__ == "__main__":
    main()
