"""Streaming accelerator tool chain speed: unified buffers + schedule build, and the simulator.

For gaussian (3x3, 1 pixel/cycle) at 64x64, 640x480 and 1920x1080 output:
  build    extraction + bounds + schedule + unified buffers + capacities (target < 2 s at 1080p,
           and no growth with the image size; the thesis' C++ flow needed 12 / 163 / 1019 s to schedule)
  simulate cycle-accurate simulation incl. host part, checked against evaluate (target >= 1 M pixels/s,
           < 5 s at 1080p)
  cpu      the CPU schedule lowered through loom's IR and compiled by the C backend at 1920x1080:
           compile time (lowering + gcc, or the cached object), run time, Mpixel/s, numpy (evaluate) time
           and speedup (target: gaussian and harris clearly faster than numpy, bit-exact)
  lowering lower_pipeline + lower_to_c time of every app's CPU and accelerator schedules at 64x64 (target < 1 s
           wall each, median of 3; CPU seconds alongside, as the machine may be shared)
  gemm     build_design of gemm with K = 2048 fully unrolled on a 256 x 256 tile (target < 1 s; the thesis'
           C++ flow scheduled its 2048 x 2048 gemm tile in 22,366 s, Table 6.2), and of the thesis' square
           tiles (M = N = K, K iterated in time 8 products per cycle): 512 (thesis 353 s) and, without
           --quick, 2048 (target < 1 s)
  flat     every app's build time as the width and the height grow, 1024x64 to 7680x4320 (target: per app the
           largest within 3x the smallest, or under 50 ms)

    python benchmarks/bench_streaming.py [--quick]

``--quick``: 64x64 and 320x240 (CPU table: gaussian at 320x240), lowering of pointwise and gaussian, gemm without
the 2048 square tile, flat at 1024x64 and 2048x256; the other targets are stated for 1080p.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from loom.examples.pipelines import app_names, load_app as load_example  # noqa: E402
from loom.frontends.pipeline import evaluate  # noqa: E402
from loom.jit.pipeline import compile_cpu  # noqa: E402
from loom.streaming import build_design, simulate  # noqa: E402


def best_of(fn, repeat):
    times = []
    result = None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, two apps lowered")
    quick = ap.parse_args().quick
    gaussian = load_example("gaussian")
    rows = []
    for size in [(64, 64), (320, 240)] if quick else [(64, 64), (640, 480), (1920, 1080)]:
        out, _ = gaussian.build("accel", tile=size)
        build_s, _, design = best_of(lambda: build_design(out, size), 5)
        img = np.random.default_rng(0).integers(0, 256, gaussian.input_shape(size), dtype=np.uint8)
        sim_s, _, sim = best_of(lambda: simulate(out, {"input": img}, size, design=design), 3)
        ok = bool((sim == evaluate(out, {"input": img}, size)).all())
        pixels = size[0] * size[1]
        rows.append((f"{size[0]}x{size[1]}", build_s * 1e3, design.capacities["hw_input"], design.latency,
                     sim_s, pixels / sim_s / 1e6, ok))
    head = ("gaussian", "build ms", "hw_input cap", "latency cyc", "simulate s", "Mpixel/s", "sim==eval")
    print(" | ".join(head))
    print(" | ".join("-" * len(h) for h in head))
    for r in rows:
        print(f"{r[0]:>8} | {r[1]:8.2f} | {r[2]:12d} | {r[3]:11d} | {r[4]:10.3f} | {r[5]:8.2f} | {r[6]}")
    ok = rows[-1][1] < 2000 and rows[-1][4] < 5 and min(r[5] for r in rows[1:]) >= 1.0 and all(r[6] for r in rows)
    print("targets (build < 2 s, simulate 1080p < 5 s, >= 1 Mpixel/s, exact):", "met" if ok else "NOT met")
    print()
    cpu_table((320, 240), ("gaussian",)) if quick else cpu_table((1920, 1080), ("gaussian", "harris", "cascade"))
    print()
    lowering_table(("pointwise", "gaussian") if quick else app_names())
    print()
    gemm_table(quick)
    print()
    flat_table(quick)


def gemm_table(quick):
    """Scheduling time of large gemm tiles (extraction, schedule, unified buffers, capacities)."""
    gemm = load_example("gemm")
    cases = [("K=2048 unrolled, 256x256", dict(k=2048, tile=(256, 256)), (256, 256), True),
             ("512^3, K in time x8", dict(k=512, tile=(512, 512), k_unroll=8), (512, 512), False)]
    if not quick:
        cases.append(("2048^3, K in time x8", dict(k=2048, tile=(2048, 2048), k_unroll=8), (2048, 2048), True))
    head = ("gemm", "build s", "hw_a cap", "hw_b cap", "latency cyc", "target")
    print(" | ".join(head))
    print(" | ".join("-" * len(h) for h in head))
    verdicts = []
    for label, args, size, targeted in cases:
        out, _ = gemm.build("accel", **args)
        seconds, _, d = best_of(lambda: build_design(out, size), 2 if size[0] > 512 else 3)
        verdict = ("MET" if seconds < 1 else "MISSED") if targeted else "-"
        if targeted:
            verdicts.append(verdict)
        print(f"{label:>24} | {seconds:7.3f} | {d.capacities['hw_a']:8d} | {d.capacities['hw_b']:8d} | "
              f"{d.latency:11d} | {verdict}")
    print("target (the targeted gemm tiles scheduled in under 1 s each):",
          "MET" if all(v == "MET" for v in verdicts) else "MISSED")


FLAT_FLOOR_S = 0.05  # a build this fast counts as flat whatever its ratio (timer noise on a loaded machine)


def flat_table(quick):
    """Every app's build time as the image grows in width and in height (capacities from narrow, short proxies)."""
    # --quick: 2048x256 still grows both width and height (8x the pixels of 1024x64) and keeps the run short
    sizes = [(1024, 64), (2048, 256)] if quick else [(1024, 64), (7680, 64), (1024, 4320), (7680, 4320)]
    head = ("app", "smallest", "build s", "largest", "build s", "ratio", "flat")
    print(" | ".join(head))
    print(" | ".join("-" * len(h) for h in head))
    verdicts = []
    for name in app_names():
        app = load_example(name)
        times = []
        for size in sizes:
            out, _ = app.build("accel", tile=size)
            seconds, _, _ = best_of(lambda: build_design(out, app.output_shape(size)), 3)
            times.append(seconds)
        flat = max(times) < 3 * min(times) or max(times) < FLAT_FLOOR_S
        verdicts.append(flat)
        small, large = sizes[0], sizes[-1]
        print(f"{name:>19} | {small[0]}x{small[1]:<5} | {times[0]:7.3f} | {large[0]}x{large[1]:<5} | "
              f"{times[-1]:7.3f} | {max(times) / min(times):5.1f} | {'yes' if flat else 'NO'}")
    print(f"target (build time flat in width and height for every app: largest < 3x smallest, or under "
          f"{FLAT_FLOOR_S * 1e3:.0f} ms):", "MET" if all(verdicts) else "MISSED")


def cpu_table(size, names):
    """The CPU schedule through loom's IR and the C backend vs the numpy reference (1080p by default)."""
    rows = []
    for name in names:
        app = load_example(name)
        out, _ = app.build("cpu")
        img = np.random.default_rng(1).integers(0, 256, app.input_shape(size), dtype=np.uint8)
        t = time.perf_counter()
        prog = compile_cpu(out, {"input": img.shape}, size)
        compile_s = time.perf_counter() - t
        run_s, _, got = best_of(lambda: prog({"input": img}), 5)
        eval_s, _, want = best_of(lambda: evaluate(out, {"input": img}, size), 2)
        rows.append((name, compile_s, run_s * 1e3, size[0] * size[1] / run_s / 1e6, eval_s * 1e3, eval_s / run_s,
                     bool((got == want).all())))
    head = (f"app @{size[0]}x{size[1]}", "compile s", "run ms", "Mpixel/s", "numpy ms", "speedup", "C==numpy")
    print(" | ".join(head))
    print(" | ".join("-" * len(h) for h in head))
    for r in rows:
        print(f"{r[0]:>14} | {r[1]:9.2f} | {r[2]:6.2f} | {r[3]:8.1f} | {r[4]:8.1f} | {r[5]:6.1f}x | {r[6]}")
    ok = all(r[5] > 1.5 and r[6] for r in rows[:2])
    print("target (gaussian and harris clearly faster than numpy, exact):", "met" if ok else "NOT met")


LOWERING_REPEAT = 3


def lowering_table(names):
    """Time to lower each app's schedules to loop nests and clean them for C (64x64 output): wall and CPU
    seconds, the median of LOWERING_REPEAT runs (the first run of a process also imports the passes)."""
    from loom.frontends.pipeline import lower_pipeline
    from loom.passes.recipes import lower_to_c

    rows = []
    for name in names:
        app = load_example(name)
        size = (64, 64)
        shapes = {k: v.shape for k, v in app.make_inputs(size, np.random.default_rng(0)).items()}
        for schedule in ("cpu", "accel"):
            out, _ = app.build(schedule)
            runs = []
            for _ in range(LOWERING_REPEAT):
                w0, c0 = time.perf_counter(), time.process_time()
                module = lower_pipeline(out, shapes, app.output_shape(size))
                w1, c1 = time.perf_counter(), time.process_time()
                lower_to_c(module)
                runs.append((w1 - w0, time.perf_counter() - w1, c1 - c0, time.process_time() - c1))
            med = [statistics.median(r[i] for r in runs) for i in range(4)]
            rows.append((name, schedule, sum(1 for _ in module.walk()), *med))
    head = ("app", "schedule", "IR ops", "lower_pipeline s", "lower_to_c s", "total s", "total cpu s")
    print(" | ".join(head))
    print(" | ".join("-" * len(h) for h in head))
    for r in rows:
        print(f"{r[0]:>19} | {r[1]:>8} | {r[2]:6d} | {r[3]:16.2f} | {r[4]:12.2f} | {r[3] + r[4]:7.2f} | "
              f"{r[5] + r[6]:11.2f}")
    met = sum(r[3] + r[4] < 1 for r in rows)
    print(f"target (every app and schedule: lower_pipeline + lower_to_c under 1 s wall, median of "
          f"{LOWERING_REPEAT}; {met} of {len(rows)} pairs, {len(names)} apps):", "met" if met == len(rows) else "NOT met")

if __name__ == "__main__":
    main()
