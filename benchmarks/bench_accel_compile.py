"""Compile latency of accelerator host drivers for a 256x256x256 matmul (issue 3).

Per flow: all stages (generalize, match + annotate, tile, place flow, lower to runtime
calls) + C emission + C compile, with an empty compile cache (fresh LOOM_CACHE_DIR per
flow, in-process cache cleared); Python imports are not counted. The DMA runtime +
simulator library is a shared library built once per cache and linked by every driver:
its one-time build is reported separately. Target: < 2 s per driver.

    python benchmarks/bench_accel_compile.py [--quick]

``--quick``: two drivers (v1 Ns, v3 Cs) instead of nine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from xdsl.builder import ImplicitBuilder  # noqa: E402
from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import MemRefType, ModuleOp, i32  # noqa: E402

import loom.driver.compile as driver_mod  # noqa: E402
import loom.backends.c as cbackend  # noqa: E402
import loom.passes.accel_ir as accel_ir  # noqa: E402
from loom.frontends.kernel import linalg as L  # noqa: E402

EXAMPLES = ROOT / "loom" / "examples" / "accelerators"
CASES = [("matmul_v1.json", "v1_16", "Ns"), ("matmul_v2.json", "v2_16", "Ns"), ("matmul_v2.json", "v2_16", "As"),
         ("matmul_v2.json", "v2_16", "Bs"), ("matmul_v3.json", "v3_16", "Ns"), ("matmul_v3.json", "v3_16", "As"),
         ("matmul_v3.json", "v3_16", "Bs"), ("matmul_v3.json", "v3_16", "Cs"),
         ("matmul_v4.json", "v4_16_m32n16k64", "Cs")]
TARGET_S = 2.0


def matmul_256() -> ModuleOp:
    t = MemRefType(i32, [256, 256])
    f = func.FuncOp("matmul", ([t, t, t], []))
    with ImplicitBuilder(f.body) as (a, b, c):
        L.matmul(a, b, c)
        func.ReturnOp()
    return ModuleOp([f])


def main() -> int:
    from loom.runtime.build import build_library

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two drivers only")
    args = ap.parse_args()
    cases = [CASES[0], CASES[7]] if args.quick else CASES

    worst = 0.0
    with tempfile.TemporaryDirectory() as shared:
        os.environ["LOOM_CACHE_DIR"] = shared
        start = time.perf_counter()
        build_library()
        print(f"runtime + simulator library (one-time, shared by all drivers): {time.perf_counter() - start:.2f} s")
        print(f"{'accelerator':<17} {'flow':<5} {'compile s':>9}")
        for desc, acc, flow in cases:
            with tempfile.TemporaryDirectory() as fresh:
                # --quick: the drivers share the runtime built above (each is still compiled cold)
                os.environ["LOOM_CACHE_DIR"] = shared if args.quick else fresh
                build_library()  # the shared runtime, not part of the driver's figure
                cbackend._LOADED.clear()
                accel_ir._decode.cache_clear()  # the descriptions decoded from the IR (memo by content)
                module = matmul_256()
                start = time.perf_counter()
                driver_mod.compile_driver(module, EXAMPLES / desc, acc, flow)
                seconds = time.perf_counter() - start
            worst = max(worst, seconds)
            print(f"{acc:<17} {flow:<5} {seconds:>9.3f}")
    status = "PASS" if worst < TARGET_S else "FAIL"
    print(f"worst {worst:.3f} s per driver (target < {TARGET_S} s): {status}")
    return 0 if worst < TARGET_S or args.quick else 1  # --quick: a smoke run, not the verdict


if __name__ == "__main__":
    sys.exit(main())
