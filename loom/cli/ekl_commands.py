"""``loom ekl``: EKL kernels from the command line.

    loom ekl run FILE.ekl [--kernel NAME] [--size N] [--seed S] [--range NAME=LO:HI ...]
        compile, run on random inputs in [0, 1) and compare with the numpy reference
        built from the elaborated form (einsum), printing the relative error
    loom ekl explore FILE.ekl [--kernel NAME] [--fixed fixedW.F] [--format F ...] [--range NAME=LO:HI ...]
        the kernel instantiated with f64, f32, bf16 and fixed point: relative error against f64
        and time per call (bf16 / fixed point are reference-evaluated with every operation rounded;
        each --format, a loom number format, is compiled with its arithmetic in that format)
    loom ekl ir FILE.ekl [--kernel NAME] --stage esn|linalg|loops|c
        the kernel's IR at a stage (c: the generated C source)
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from loom.cli.arg_types import non_negative_int, positive_int
from loom.errors import LoomError
from loom.jit.ekl import parse_range, random_arrays


def register(sub) -> None:
    ekl = sub.add_parser("ekl", help="EKL (EVEREST kernel language) kernels: run, ir")
    commands = ekl.add_subparsers(metavar="COMMAND")

    p = commands.add_parser("run", help="run a kernel on random inputs and check it against numpy")
    p.add_argument("file", help="path/to/kernel.ekl")
    p.add_argument("--kernel", default=None, help="kernel name (when the file defines several)")
    p.add_argument("--size", type=non_negative_int, default=8, help="size of every dynamic extent ('?')")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--tolerance", type=float, default=None,
                   help="maximum relative error accepted (default: per output, 2 * eps * (n + 8) for the "
                        "kernel's least precise float type and the n terms an element accumulates)")
    p.add_argument("--range", action="append", default=[], metavar="NAME=LO:HI",
                   help="draw parameter NAME from [LO, HI) (e.g. index inputs that gather from a table); repeatable")
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser("explore", help="the kernel in f64, f32, bf16 and fixed point: errors vs f64, time")
    p.add_argument("file", help="path/to/kernel.ekl (its float type aliases are the type parameters; without any, its f64 and f32)")
    p.add_argument("--kernel", default=None)
    p.add_argument("--size", type=non_negative_int, default=8, help="size of every dynamic extent ('?')")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--fixed", default="fixed32.16",
                   help="emulated fixed point fixedW.F: W total bits, F fraction bits (fixed<W,F> is read the "
                        "same, with a warning: as a --format it has W integer bits)")
    p.add_argument("--format", action="append", default=[], metavar="FORMAT",
                   help="also run the kernel compiled in a loom number format (fixed<I,F> with I integer bits, "
                        "ufixed<I,F>, float<E,M>, bf16, e4m3fn, ...); repeatable")
    p.add_argument("--overflow", default=None, choices=("wrap", "saturate", "inf"),
                   help="overflow mode of the --format rows (default: wrap for fixed point, inf for floats)")
    p.add_argument("--repeats", type=positive_int, default=5, help="timed calls per type (the best is reported)")
    p.add_argument("--range", action="append", default=[], metavar="NAME=LO:HI",
                   help="draw parameter NAME from [LO, HI) instead of [0, 1); repeatable")
    p.set_defaults(handler=cmd_explore)

    p = commands.add_parser("ir", help="print a kernel's IR at a stage")
    p.add_argument("file", help="path/to/kernel.ekl")
    p.add_argument("--kernel", default=None)
    p.add_argument("--stage", choices=("esn", "linalg", "loops", "c"), default="esn")
    p.set_defaults(handler=cmd_ir)
    ekl.set_defaults(handler=lambda args: ekl.print_help() or 2)


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    from loom.core.compare import relative_difference

    return relative_difference(got, want)


def cmd_run(args) -> int:
    import loom.ekl

    kernel = loom.ekl.load(Path(args.file)).kernel(args.kernel)
    arrays = random_arrays(kernel, args.size, args.seed, dict(parse_range(r) for r in args.range))
    inputs = kernel.inputs(arrays)
    started = time.perf_counter()
    kernel.compile()
    compiled = time.perf_counter() - started
    kernel(**arrays)
    reference = kernel.reference(**(arrays | inputs))  # outputs for their shapes ('?' extents), inputs as read
    tolerances = kernel.tolerances(arrays)
    failed = []
    for name, want in reference.items():
        err = relative_error(arrays[name], want)
        tolerance = args.tolerance if args.tolerance is not None else tolerances[name]
        if not err <= tolerance:
            failed.append(f"output {name} by {err:.3g} (tolerance {tolerance:.3g})")
        print(f"{kernel.name}: output {name} {tuple(want.shape)} max relative error vs numpy {err:.3g} "
              f"(tolerance {tolerance:.3g})")
    print(f"{kernel.name}: compiled in {compiled:.2f} s; {kernel.flops_for(arrays)} flops per call (contraction order chosen)")
    if failed:
        raise LoomError(f"kernel {kernel.name} differs from the numpy reference: {'; '.join(failed)}",
                        filename=args.file)
    print("ok")
    return 0


def cmd_explore(args) -> int:
    from loom.cli.table import format_table
    from loom.jit.ekl_explore import HEADERS, explore

    rows = explore(Path(args.file), args.kernel, size=args.size, seed=args.seed, fixed=args.fixed, repeats=args.repeats,
                   ranges=dict(parse_range(r) for r in args.range), formats=args.format, overflow=args.overflow)
    print(format_table(HEADERS, [r.cells() for r in rows]))
    print("errors: element-wise |x - x_f64| / |x_f64| over every output; compiled rows run the C kernel, "
          "reference-evaluated rows are numpy with every operation rounded to the format; compiled (base2) rows "
          "run the C kernel with its arithmetic in the format")
    return 0


def cmd_ir(args) -> int:
    import loom.ekl

    kernel = loom.ekl.load(Path(args.file)).kernel(args.kernel)
    module = kernel.ir(args.stage)
    if args.stage == "c":
        from loom.backends.c import emit_c

        print(emit_c(module))
    else:
        print(module)
    return 0
