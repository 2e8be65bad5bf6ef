"""HLS backend: emission time, C-simulation build time, and C-simulation speed of loom_hls.h's types.

    python benchmarks/bench_hls.py [--quick]

For a matmul of N^3 (N = 128, --quick 32) in f32, ap_fixed<16,8>, ap_int<12> (the i32 linalg matmul narrowed) and
the custom float formats bf16 and e4m3fn (loom_float.h, integer arithmetic):
the time to emit the C++ (IR -> text), to build the testbench with g++ (-O1), and the multiply-accumulates
per second of the simulation run (whole run: reading inputs and printing outputs included). No target: the
figures show what a C simulation costs here and how much the arbitrary-precision types cost over float.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run(n: int) -> list[tuple[str, float, float, float]]:
    from loom.backends.hls import emit_hls, emit_testbench
    from loom.backends.hls.csim import INCLUDE_DIR, WARNINGS, cxx
    from loom.examples.dataflow.listing1 import mm as matmul_i32  # linalg.matmul on i32
    from loom.examples.kernels import matmul_loops

    from loom.backends.hls import hls_type_of_format

    cases = [("f32", matmul_loops, {}), ("ap_fixed<16,8>", matmul_loops, {"f32": "ap_fixed<16,8>"}),
             ("ap_int<12>", matmul_i32, {"i32": "ap_int<12>"}),
             ("bf16", matmul_loops, {"f32": hls_type_of_format("bf16")}),
             ("e4m3fn", matmul_loops, {"f32": hls_type_of_format("e4m3fn")})]
    rows = []
    for label, kern, types in cases:
        started = time.perf_counter()
        program = emit_hls(kern.module, dims={"M": n, "N": n, "K": n}, types=types)
        emitted = time.perf_counter() - started
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            (folder / "k.cpp").write_text(program.source)
            (folder / "tb.cpp").write_text(emit_testbench(program))
            started = time.perf_counter()
            subprocess.run([*cxx(), *WARNINGS, "-O1", "-I", str(INCLUDE_DIR), str(folder / "k.cpp"),
                            str(folder / "tb.cpp"), "-o", str(folder / "sim")], check=True)
            built = time.perf_counter() - started
            started = time.perf_counter()
            subprocess.run([str(folder / "sim")], check=True, stdout=subprocess.DEVNULL)
            ran = time.perf_counter() - started
        rows.append((label, emitted, built, n ** 3 / ran))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 32 if args.quick else 128
    print(f"matmul {n}^3: HLS C++ emission, g++ build of kernel + testbench, C-simulation speed")
    print(f"{'type':<16}{'emit ms':>10}{'build s':>10}{'MMAC/s':>10}")
    for label, emitted, built, rate in run(n):
        print(f"{label:<16}{emitted * 1e3:>10.1f}{built:>10.2f}{rate / 1e6:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
