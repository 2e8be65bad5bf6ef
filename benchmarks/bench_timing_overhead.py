"""The measured host mode's own cost: what the timeline still charges a driver for its instrumentation.

    .venv/bin/python benchmarks/bench_timing_overhead.py [--quick] [--runs N]

The probe driver (tests/timing/host_probe.c) makes 2 runtime calls a round with nothing between them, or after
~100 dependent multiply-adds. Per run it prints: the calibrated costs (a bare clock read, an empty host interval
through the hooks, an empty copy), the host time left per empty call boundary (the figure
tests/timing/test_host_measurement.py bounds at half a clock read), the busy-work's host time over its own time
(wall time with the busy-work less without, timeline off; bound 1.2x), and the wall time of dma_init + dma_free
with the timeline on and off (the calibration is simulation time, not charged to the timeline). A wall-clock
measurement on a shared machine: compare the median column across runs, not one run.
``--quick``: 3 runs of a tenth of the rounds.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import time
from pathlib import Path

from loom.runtime.build import load_library
from loom.runtime.timing import set_host_model, timing_report

PROBE = Path(__file__).resolve().parents[1] / "tests" / "timing" / "host_probe.c"
SIM_BACKEND, MATMUL_V3 = 0, 3  # dma_runtime.h: the simulator backend, the built-in MatMul v3 model
BUSY_ITERS = 100


def probe_library():
    lib = load_library([PROBE], name="host_probe")
    for fn in ("loom_timing_clock_read_s", "loom_timing_boundary_s", "loom_timing_empty_copy_s"):
        getattr(lib, fn).restype = ctypes.c_double
    lib.dma_free()
    lib.loom_dma_use_backend(SIM_BACKEND)
    if lib.loom_sim_use_model(MATMUL_V3, 4, 0) != 0:
        raise SystemExit("the probe cannot select the simulator's MatMul v3 model")
    set_host_model(lib, deterministic=False)
    return lib


def host_s(lib, rounds: int, iters: int) -> float:
    if lib.probe_calls(rounds, iters) != 0:
        raise SystemExit("the probe driver failed")
    r = timing_report(lib)
    return r.host_copy_s + r.host_other_s


def wall_s(lib, rounds: int, iters: int, timeline: bool) -> float:
    if timeline:
        os.environ.pop("LOOM_TIMING", None)
    else:
        os.environ["LOOM_TIMING"] = "off"
    try:
        t0 = time.perf_counter()
        lib.probe_calls(rounds, iters)
        return time.perf_counter() - t0
    finally:
        os.environ.pop("LOOM_TIMING", None)


def one_run(lib, rounds: int) -> dict:
    empty = host_s(lib, rounds, 0)
    row = {"clock read ns": lib.loom_timing_clock_read_s() * 1e9,
           "boundary ns": lib.loom_timing_boundary_s() * 1e9,
           "empty copy ns": lib.loom_timing_empty_copy_s() * 1e9,
           "left per boundary ns": empty / (2 * rounds) * 1e9}
    own = host = 0.0
    for _ in range(10):  # interleaved slices: slow and fast spells of the machine fall on both sides
        own += wall_s(lib, rounds // 10, BUSY_ITERS, False) - wall_s(lib, rounds // 10, 0, False)
        host += host_s(lib, rounds // 10, BUSY_ITERS)
    row["busy-work ratio"] = host / own
    row["init on us"] = min(wall_s(lib, 0, 0, True) for _ in range(200)) * 1e6
    row["init off us"] = min(wall_s(lib, 0, 0, False) for _ in range(200)) * 1e6
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 runs of a tenth of the rounds")
    ap.add_argument("--runs", type=int, default=None)
    args = ap.parse_args()
    runs = args.runs or (3 if args.quick else 9)
    rounds = 2000 if args.quick else 20000
    lib = probe_library()
    rows = []
    for k in range(runs):
        rows.append(one_run(lib, rounds))
        print(f"run {k + 1}/{runs}: {rows[-1]['left per boundary ns']:.1f} ns left per empty boundary, "
              f"busy-work {rows[-1]['busy-work ratio']:.2f}x", flush=True)
    print(f"\n{rounds} rounds (2 call boundaries each), {runs} runs")
    print(f"{'measure':24s} {'min':>8s} {'median':>8s} {'max':>8s}")
    for key in rows[0]:
        vals = [r[key] for r in rows]
        print(f"{key:24s} {min(vals):8.2f} {statistics.median(vals):8.2f} {max(vals):8.2f}")
    med = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    ok = med["left per boundary ns"] <= 0.5 * med["clock read ns"] and 0.8 < med["busy-work ratio"] < 1.2
    print(f"target (median left per boundary <= half a clock read, busy-work within 20%): {'met' if ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
