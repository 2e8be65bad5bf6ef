"""``loom list | ir | run``: the kernel frontend from the command line, and ``kernel_demo()``."""

from __future__ import annotations


import numpy as np

from loom.cli.arg_types import non_negative_int, parse_dims, positive_int
from loom.errors import LoomError
from loom.cli.table import format_table
from loom.examples.checks import CHECK_HEADERS, check_kernel
from loom.examples.targets import resolve_kernel
from loom.jit.stages import STAGES, stage_text



def register(sub) -> None:
    p = sub.add_parser("list", help="list the built-in example kernels")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("ir", help="print a kernel's IR at a stage")
    p.add_argument("target", help="built-in example name, path/to/file.py:kernel or path/to/file.mlir[:func]")
    p.add_argument("--stage", choices=STAGES, default="frontend",
                   help="frontend: as traced; loops: linalg lowered to loops; lowered: what the C backend takes; c: C source")
    p.add_argument("--all", action="store_true", help="print every stage")
    p.add_argument("--locations", action="store_true", help="print source locations (loc(...)) of the frontend IR")
    p.set_defaults(handler=cmd_ir)

    p = sub.add_parser("run", help="run a kernel on random inputs and check it")
    p.add_argument("target", help="built-in example name, path/to/file.py:kernel or path/to/file.mlir[:func]")
    p.add_argument("--scale", type=positive_int, default=1, help="problem-size multiplier for built-in examples")
    p.add_argument("--dims", default="", help="sizes of dynamic dims for user kernels, e.g. M=64,N=32")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--no-mlir", action="store_true", help="skip the upstream mlir-runner comparison")
    p.set_defaults(handler=cmd_run)



# ---------------------------------------------------------------- commands

def cmd_list(args) -> int:
    from loom.examples.kernels import EXAMPLES

    print(format_table(["kernel", "what it shows"], [[n, e.description] for n, e in sorted(EXAMPLES.items())]))
    return 0


def cmd_ir(args) -> int:
    kernel, _ = resolve_kernel(args.target)
    stages = STAGES if args.all else (args.stage,)
    for stage in stages:
        if args.all:
            print(f"// ===== stage: {stage} =====")
        print(stage_text(kernel.module, stage, locations=args.locations))
    return 0


def cmd_run(args) -> int:
    kernel, example = resolve_kernel(args.target)
    rng = np.random.default_rng(args.seed)
    if example is not None:
        call_args = example.make_args(rng, args.scale)
    elif hasattr(kernel, "random_arguments"):  # a function of a .mlir file
        call_args = kernel.random_arguments(parse_dims(args.dims), rng)
    else:
        from loom.jit.random_inputs import random_arguments

        call_args = random_arguments(kernel, parse_dims(args.dims), rng)
    row = check_kernel(kernel, example, call_args, use_mlir=not args.no_mlir)
    print(format_table(CHECK_HEADERS, [row]))
    return 0 if row[-1] == "ok" else 1


def kernel_demo(use_mlir: bool = True) -> int:
    """Build, lower, compile and check every built-in kernel; prints a table."""
    from loom.examples.kernels import EXAMPLES

    print("Python kernels -> MLIR -> C, checked against numpy and upstream MLIR", flush=True)
    rows = []
    for n, (name, example) in enumerate(sorted(EXAMPLES.items()), 1):
        print(f"[{n}/{len(EXAMPLES)}] {name}: {example.description}", flush=True)
        call_args = example.make_args(np.random.default_rng(n), 2)
        rows.append(check_kernel(example.kernel, example, call_args, use_mlir=use_mlir))
    print()
    print(format_table(CHECK_HEADERS, rows))
    failed = [r[0] for r in rows if r[-1] != "ok"]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} kernels correct" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0
