"""``loom demo``: the showcase run by ``bash scripts/dev demo``.

Parts (all by default): ``accel`` (the flagship: matmul and convolution drivers
generated for several accelerators and flows, run on the simulator, checked),
``kernels`` (Python kernels -> MLIR -> C, checked against numpy and mlir-runner).
"""

from __future__ import annotations

import time

PARTS = ("accel", "kernels")


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
            from loom.tools.accel_commands import accel_demo

            failures += accel_demo() != 0
        elif part == "kernels":
            from loom.tools.kernel_commands import kernel_demo

            failures += kernel_demo(use_mlir=not args.no_mlir and mlir.available()) != 0
    print(f"\nloom demo: {len(parts) - failures} of {len(parts)} parts correct in {time.perf_counter() - start:.1f} s")
    return 1 if failures else 0
