"""``loom demo``: the showcase run by ``bash scripts/dev demo``.

Parts (all by default): ``accel`` (the flagship: matmul and convolution drivers
generated for several accelerators and flows, run on the simulator, checked),
``kernels`` (Python kernels -> MLIR -> C, checked against numpy and mlir-runner),
``pipelines`` (image pipelines scheduled onto a streaming accelerator: unified
buffers, cycle schedule, simulation and the CPU path, checked bit for bit).
"""

from __future__ import annotations

import time

PARTS = ("accel", "kernels", "pipelines")

# (app, output size): cascade at 60x60 is the thesis's 64x64-input example (Table 4.1)
PIPELINE_CASES = [("cascade", (60, 60)), ("harris", (58, 58)), ("gaussian", (640, 480)), ("unsharp", (64, 48)),
                  ("camera_pipeline", (64, 48)), ("conv_layer", (32, 32)), ("gemm", (16, 16)), ("pointwise", (64, 64))]


def register(sub) -> None:
    p = sub.add_parser("demo", help="showcase on built-in examples (accelerator drivers, kernels)")
    p.add_argument("parts", nargs="*", metavar="PART",
                   help=f"which parts to show: {', '.join(PARTS)} (default: all)")
    p.add_argument("--no-mlir", action="store_true", help="skip the upstream mlir-runner comparison")
    p.set_defaults(handler=cmd_demo)


def cmd_demo(args) -> int:
    from loom.oracle import mlir

    parts = args.parts or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        from loom.errors import LoomError

        raise LoomError(f"unknown demo part(s) {', '.join(unknown)}: expected some of {', '.join(PARTS)}")
    start = time.perf_counter()
    failures = 0
    for n, part in enumerate(parts, 1):
        print(f"\n=== loom demo [{n}/{len(parts)}]: {part} ===", flush=True)
        if part == "accel":
            from loom.cli.accel_commands import accel_demo

            failures += accel_demo() != 0
        elif part == "kernels":
            from loom.cli.kernel_commands import kernel_demo

            failures += kernel_demo(use_mlir=not args.no_mlir and mlir.available()) != 0
        elif part == "pipelines":
            failures += pipeline_demo() != 0
    print(f"\nloom demo: {len(parts) - failures} of {len(parts)} parts correct in {time.perf_counter() - start:.1f} s")
    return 1 if failures else 0


def pipeline_demo() -> int:
    """Each example app: unified buffers + schedule, cycle simulation and the C CPU path vs the numpy reference."""
    import numpy as np

    from loom.frontends.pipeline import evaluate
    from loom.jit.pipeline import compile_cpu
    from loom.streaming import build_design, simulate
    from loom.cli.pipeline_commands import app_inputs, build_app, load_app
    from loom.cli.table import format_table

    print("image pipelines -> unified buffers -> cycle schedule -> simulation, and CPU schedules -> IR -> C", flush=True)
    rows = []
    for n, (name, size) in enumerate(PIPELINE_CASES, 1):
        print(f"  [{n}/{len(PIPELINE_CASES)}] {name} {size[0]}x{size[1]} ...", flush=True)
        mod = load_app(name)
        osize = tuple(mod.output_shape(size))
        inputs = app_inputs(mod, size, seed=n)
        accel = build_app(mod, "accel", size, 1, name)
        start = time.perf_counter()
        design = build_design(accel, osize)
        build_ms = (time.perf_counter() - start) * 1e3
        want = evaluate(accel, inputs, osize)
        sim_ok = np.array_equal(simulate(accel, inputs, osize, design=design), want)
        cpu = build_app(mod, "cpu", size, 1, name)
        program = compile_cpu(cpu, {k: v.shape for k, v in inputs.items()}, osize)
        cpu_ok = np.array_equal(program(inputs), want)
        words = sum(design.capacities.values())
        rows.append([name, "x".join(map(str, osize)), words, design.latency, build_ms,
                     "bit-exact" if sim_ok else "MISMATCH", "bit-exact" if cpu_ok else "MISMATCH"])
    print(format_table(["app", "output", "buffer words", "latency cycles", "UB+schedule ms",
                        "simulation", "CPU (C backend)"], rows))
    ok = all(r[-1] == r[-2] == "bit-exact" for r in rows)
    print(f"{sum(r[-1] == r[-2] == 'bit-exact' for r in rows)}/{len(rows)} apps bit-exact")
    return 0 if ok else 1
