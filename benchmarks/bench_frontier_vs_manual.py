"""A dataflow the paper's accelerators do not have, generated vs hand-written, like for like.

    .venv/bin/python benchmarks/bench_frontier_vs_manual.py [--quick] [--dims 64,128] [--repeats N]
        [--host-runs N] [--deterministic-host]

The ws_bias engine (tests/accel_flow/frontier/ws_bias_c.json, C model ws_bias_model.c) is weight
stationary and keeps no partial sums: every output tile is preloaded and read back (recv replace)
around its MAC, inside the reduction loop. loom's driver, generated from the description, runs
against benchmarks/manual/ws_preload.c, the same flow (loops n, k, m) written by hand, with the
same option (plain; coalesced: one send per run of instructions up to the receive). Both use the
same runtime, the same compiled model and the description's timing constants, and must move the
same transactions and words and give numpy's C. Per cell: the modelled total (best of --repeats;
also at every point of the sensitivity band, figures/band.py) and the measured host time (thread
CPU time of the driver's C call, timing model off, the model skipping its arithmetic; median of
--host-runs interleaved runs), each as manual / generated (> 1: generated faster).
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "figures"))
sys.path.insert(0, str(ROOT.parent))

import band  # noqa: E402
import common as C  # noqa: E402
import manual  # noqa: E402

DESCRIPTION = ROOT.parent / "tests" / "accel_flow" / "frontier" / "ws_bias_c.json"
VARIANTS = {"plain": False, "coalesced": True}
HEADERS = ["dim", "variant", "gen_total_s", "man_total_s", "speedup", "speedup_min", "speedup_max",
           "gen_host_s", "man_host_s", "host_speedup", "sends", "recvs", "words", "same_transfers"]


def setup(dim: int, coalesce: bool):
    from loom.driver import compile_driver
    from loom.runtime.models import model_for

    drv = compile_driver(C.matmul_module(dim, dim, dim), DESCRIPTION, coalesce=coalesce)
    lib = manual.load_drivers()
    model_for(drv.accelerator).select(lib)  # the same compiled model as the generated driver's
    return drv, lib


def run_manual(lib, arrays, coalesce: bool) -> float:
    """One call of the hand-written driver on copies of ``arrays``, staging as the description's DMA."""
    from loom.accel import load_description
    acc = load_description(str(DESCRIPTION)).accelerators[0]
    a, b, c = (x.copy() for x in arrays)
    seconds = manual.timed_ws_preload(a, b, c, acc.tiles["m"].size, acc.dma.input_words, coalesce, lib)
    run_manual.last = c
    return seconds


def manual_report(lib, arrays, timing, coalesce: bool):
    from loom.runtime.timing import configure_timing, timing_report
    configure_timing(lib, timing)
    run_manual(lib, arrays, coalesce)
    return timing_report(lib), run_manual.last


def generated_host_seconds(drv, arrays) -> float:
    """The generated driver's exported C function on ready-made descriptors (as the manual call)."""
    from loom.runtime.memref import memref_descriptor
    copies = [a.copy() for a in arrays]
    fn = getattr(drv.compiled.library, f"loom_{drv.func_name}")
    fn.restype = None
    pointers = [ctypes.byref(d) for d in (memref_descriptor(a) for a in copies)]

    def call() -> float:
        start = time.thread_time()
        fn(*pointers)
        return time.thread_time() - start
    return C.host_seconds(drv._lib, call)


def measure(dim: int, variant: str, args) -> list:
    from loom.accel.timing import timing_config

    coalesce = VARIANTS[variant]
    drv, lib = setup(dim, coalesce)
    arrays = C.matmul_arrays(dim, dim, dim)
    want = (arrays[2].astype(np.int64) + arrays[0].astype(np.int64) @ arrays[1]).astype(np.int32)
    base = timing_config(drv.accelerator)
    g_rep, g_out = C.generated_report(drv, arrays, base)
    m_rep, m_out = manual_report(lib, arrays, base, coalesce)
    if not (np.array_equal(g_out, want) and np.array_equal(m_out, want)):
        raise SystemExit(f"dim {dim} {variant}: a driver's result differs from numpy")
    key = lambda r: (r.sends, r.recvs, r.bytes_sent, r.bytes_received)  # noqa: E731
    same = key(g_rep) == key(m_rep)

    def best(cfg) -> tuple[float, float]:
        g = min(C.generated_report(drv, arrays, cfg)[0].total_s for _ in range(args.repeats))
        m = min(manual_report(lib, arrays, cfg, coalesce)[0].total_s for _ in range(args.repeats))
        return g, m
    g_t, m_t = best(base)
    speeds = {p: m / g for p, (g, m) in band.sweep(base, best).items()}
    g_h, m_h = [], []
    for _ in range(args.host_runs):  # interleaved: drift on a shared machine hits both alike
        g_h.append(generated_host_seconds(drv, arrays))
        m_h.append(C.host_seconds(lib, lambda: run_manual(lib, arrays, coalesce)))
    g_host, m_host = statistics.median(g_h), statistics.median(m_h)
    return [dim, variant, g_t, m_t, m_t / g_t, min(speeds.values()), max(speeds.values()), g_host, m_host,
            m_host / g_host, g_rep.sends, g_rep.recvs, (g_rep.bytes_sent + g_rep.bytes_received) // 4,
            "yes" if same else "NO"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="dim 32, 1 repetition, 5 host runs")
    ap.add_argument("--dims", default="64,128", help="square problem sizes")
    ap.add_argument("--repeats", type=int, default=3, help="timing-model runs per driver and band point (best of)")
    ap.add_argument("--host-runs", type=int, default=7, help="interleaved host-time runs per driver (median)")
    band.add_arguments(ap)
    args = ap.parse_args()
    dims = [32] if args.quick else [int(d) for d in args.dims.split(",")]
    if args.quick:
        args.repeats, args.host_runs = 1, 5
    print(band.apply_host_mode(args))
    print(band.describe_band())
    rows = [measure(dim, variant, args) for dim in dims for variant in VARIANTS]
    print("\nws_bias (weight stationary, output preloaded and replaced): manual / generated (> 1: generated faster)")
    C.print_table(HEADERS, rows)
    C.write_csv("frontier_vs_manual", HEADERS, rows)
    col = HEADERS.index
    same = all(r[col("same_transfers")] == "yes" for r in rows)
    print(f"check: same transactions and words in every cell -> {'MET' if same else 'MISSED'}")
    print(f"check: generated >= manual, modelled total, every cell -> "
          f"{'MET' if all(r[col('speedup')] >= 1.0 for r in rows) else 'MISSED'} "
          f"(geomean {C.geomean([r[col('speedup')] for r in rows]):.2f}x)")
    print(f"check: generated >= manual, measured host time, every cell -> "
          f"{'MET' if all(r[col('host_speedup')] >= 1.0 for r in rows) else 'MISSED'} "
          f"(geomean {C.geomean([r[col('host_speedup')] for r in rows]):.2f}x)")


if __name__ == "__main__":
    main()
