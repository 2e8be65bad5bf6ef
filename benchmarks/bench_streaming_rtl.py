"""Streaming designs as RTL: every example app's design written as SystemVerilog, Verilated and co-simulated.

Per app (small tiles, the image two tiles by two): the Verilog's lines, the Verilator build's seconds (0 when
the compile cache holds it), the co-simulation's seconds (the host part and loom's own simulator run alongside),
the Verilated model's simulated cycles per second of its own runs, the words of the addressed memories (circular
buffers of the addresses held at once, over wrapping address counters where that saves more memory bits than the
counters take; ``pow2 words``: rounded to powers of two, indexed by the address's low bits) against the buffers' domains and live values, whether the RTL's image
equals the CPU path's (loom's C backend on the same pipeline), and the RTL's cycles per invocation against the
design's latency (target: equal for every app, the RTL cycle-accurate to the schedule).

    python benchmarks/bench_streaming_rtl.py [--quick] [--apps gaussian,harris] [--testbench]

``--synth``: also synthesises each design with Yosys (coarse cells, flip-flop bits, memory bits; a latch fails);
a design with float kernels is left out ("float: not synthesised": Yosys ran out of memory, past 22 GB, on
tone_map's flat combinational float functions).
``--fpga xilinx|ice40|ecp5``: also maps each design to the family's primitives with Yosys (LUTs, flip-flops, carry
cells, block and LUT RAMs, DSPs, and the longest combinational path in cells: not a timing figure).
``--testbench``: also writes each design's self-checking SystemVerilog testbench over the same invocations and runs
it as a Verilator ``--binary`` (the PASS column; its seconds are mostly the C++ build).

``--quick``: gaussian and conv_layer only.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from loom.errors import LoomError  # noqa: E402
from loom.examples.pipelines import load_app  # noqa: E402
from loom.jit.pipeline import run_cpu  # noqa: E402
from loom.jit.streaming_rtl import RtlReport, simulate_rtl, write_testbench  # noqa: E402
from loom.runtime.rtl import verilator_binary  # noqa: E402
from loom.runtime.yosys import synthesize  # noqa: E402
from loom.streaming import build_design  # noqa: E402
from loom.streaming.simulate import _design_ir  # noqa: E402
from loom.streaming.verilog import TOP, design_verilog  # noqa: E402
from loom.streaming.verilog_testbench import TB  # noqa: E402

# (app, build arguments): tiles small enough that a Verilator build takes seconds
CASES = [("gaussian", dict(tile=(8, 6))), ("gaussian", dict(tile=(62, 62))), ("gaussian", dict(tile=(16, 16), rate=2)), ("harris", dict(tile=(8, 6))),
         ("unsharp", dict(tile=(8, 6))), ("cascade", dict(tile=(8, 6))), ("camera_pipeline", dict(tile=(8, 8))),
         ("pointwise", dict(tile=(8, 6))), ("tone_map", dict(tile=(8, 6))), ("max_pool", dict(tile=(4, 4))), ("upsample", dict(tile=(8, 8))),
         ("gaussian_pyramid", dict(tile=(8, 8))), ("laplacian_pyramid", dict(tile=(8, 8))),
         ("conv_layer", dict(tile=(4, 4))), ("mobilenet_separable", dict(tile=(4, 4))), ("dnn_conv", dict(tile=(4, 4))),
         ("gemm", dict(tile=(4, 4))), ("cascade", dict(tile=(8, 8), share="line")),
         ("gaussian_pyramid", dict(tile=(8, 8), share="line"))]
QUICK = {"gaussian", "conv_layer"}
FPGA_COLUMNS = ["LUT", "FF", "carry", "BRAM", "LUTRAM", "DSP", "path cells", "map s"]


def run_case(name: str, args: dict, testbench: bool = False, synth: bool = False, fpga: str | None = None) -> dict:
    app = load_app(name)
    out, _ = app.build(**args)
    base = tuple(2 * t for t in args["tile"])
    inputs = app.make_inputs(base, np.random.default_rng(1))
    size = app.output_shape(base)
    row = {"app": name + (f" rate {args['rate']}" if args.get("rate") else "") +
           (f" {args['share']}-shared" if args.get("share") else ""), "tile": "x".join(map(str, args["tile"]))}
    t = time.perf_counter()
    design = build_design(out, _tile_of(out, args["tile"], size))
    rtl = design_verilog(design, _design_ir(design))
    row["verilog lines"] = rtl.verilog.count("\n")
    # addressed memories: the RTL's circular words against the buffers' whole domains and live capacities
    row["mem words"] = sum(rtl.memories.values())
    row["pow2 words"] = sum(rtl.rounded_memories.values())  # the same memories rounded up to powers of two
    row["domain words"] = sum(int(np.prod(rtl.stages[n].extents)) for n in rtl.memories)
    row["live values"] = sum(design.capacities[n] for n in rtl.memories)
    row["emit s"] = time.perf_counter() - t
    report = RtlReport()
    t = time.perf_counter()
    got = simulate_rtl(out, inputs, size, design=design, report=report)
    total = time.perf_counter() - t
    t = time.perf_counter()
    got_again = simulate_rtl(out, inputs, size, design=design)  # the model is loaded: co-simulation alone
    sim = time.perf_counter() - t
    row["build s"] = max(total - sim, 0.0)
    row["cosim s"] = sim
    row["RTL Mcycles/s"] = sum(report.rtl_cycles) / max(report.rtl_seconds, 1e-9) / 1e6
    want = run_cpu(app.build(schedule="cpu")[0], inputs, size)
    row["bit-exact"] = bool(np.array_equal(got, want) and np.array_equal(got_again, want))
    row["RTL cycles"] = report.rtl_cycles[0]
    row["design cycles"] = design.latency
    row["cycles equal"] = report.rtl_cycles == report.design_cycles
    if rtl.float_widths and (synth or fpga):  # flat combinational float units: Yosys ran out of memory (22+ GB)
        row["cells"] = row["LUT"] = "float: not synthesised"
        synth = fpga = None
    if synth:  # Yosys's coarse synthesis: cells, flip-flop bits, inferred memory bits, latches (must be none)
        t = time.perf_counter()
        s = synthesize(rtl.verilog, TOP)
        row.update({"cells": sum(s.cells.values()), "FF bits": s.flip_flop_bits, "mem bits": s.memory_bits,
                    "latches": len(s.latches), "synth s": time.perf_counter() - t})
    if fpga:  # mapped to the family's primitives: what an FPGA user budgets
        t = time.perf_counter()
        m = synthesize(rtl.verilog, TOP, fpga)
        row.update({k: m.resources[k] for k in FPGA_COLUMNS[:-2]})
        row.update({"path cells": m.longest_path, "map s": time.perf_counter() - t})
    if testbench:  # the stand-alone self-checking testbench of the same invocations, as a Verilator binary
        with tempfile.TemporaryDirectory(prefix="loom-bench-tb-") as folder:
            t = time.perf_counter()
            passed = []
            for bench in write_testbench(out, inputs, size, folder, design=design).designs:  # one per design run
                binary = verilator_binary(sorted(bench.folder.glob("*.sv")), TB, bench.folder)
                run = subprocess.run([str(binary)], cwd=bench.folder, capture_output=True, text=True)
                passed.append(run.returncode == 0 and "PASS" in run.stdout)
            row["testbench"] = f"PASS x{len(passed)}" if all(passed) else f"FAIL {passed.count(False)}/{len(passed)}"
            row["testbench s"] = time.perf_counter() - t
    return row


def _tile_of(_out, tile, size):
    """The invocation's extents: the tile, then the output's further dimensions whole (channels)."""
    return tuple(tile) + tuple(size[len(tile):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="gaussian and conv_layer only")
    ap.add_argument("--apps", default="", help="comma-separated app names (default: all)")
    ap.add_argument("--testbench", action="store_true",
                    help="also build and run each design's self-checking testbench (verilator --binary)")
    ap.add_argument("--synth", action="store_true",
                    help="also synthesise each design with Yosys (cells, flip-flop bits, memory bits, latches)")
    ap.add_argument("--fpga", choices=("xilinx", "ice40", "ecp5"), default=None,
                    help="also map each design to this FPGA family's primitives (LUTs, FFs, RAMs, DSPs, path)")
    opts = ap.parse_args()
    chosen = set(filter(None, opts.apps.split(","))) or (QUICK if opts.quick else {n for n, _ in CASES})
    rows = []
    for name, args in CASES:
        if name not in chosen:
            continue
        print(f"... {name} {args}", flush=True)
        try:
            rows.append(run_case(name, args, opts.testbench, opts.synth, opts.fpga))
        except LoomError as e:
            rows.append({"app": name, "tile": "x".join(map(str, args["tile"])), "refused": str(e)[:80]})
    cols = ["app", "tile", "verilog lines", "mem words", "pow2 words", "domain words", "live values", "emit s", "build s", "cosim s", "RTL Mcycles/s", "bit-exact", "RTL cycles",
            "design cycles", "cycles equal"] + ["testbench", "testbench s"] * opts.testbench + \
        ["cells", "FF bits", "mem bits", "latches", "synth s"] * opts.synth + FPGA_COLUMNS * bool(opts.fpga)
    table = [cols] + [[_fmt(r.get(c, r.get("refused", "") if c == "bit-exact" else "")) for c in cols] for r in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(cols))]
    for r in table:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    ok = [r for r in rows if "refused" not in r]
    good = sum(bool(r["bit-exact"] and r["cycles equal"] and r.get("testbench", "PASS").startswith("PASS")
                    and not r.get("latches")) for r in ok)
    print(f"{good} of {len(rows)} designs bit-exact against the CPU path with RTL cycles equal to the design's "
          f"latency{' and their testbenches passing' * opts.testbench}{', synthesised without latches' * opts.synth}: "
          f"{'MET' if good == len(rows) else 'MISSED'}")
    return 0 if good == len(rows) else 1


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


if __name__ == "__main__":
    raise SystemExit(main())
