"""``loom list | ir | run``: the kernel frontend from the command line, and ``kernel_demo()``."""

from __future__ import annotations

import time

import numpy as np

from loom.cli.arg_types import non_negative_int, positive_int
from loom.errors import LoomError
from loom.cli.table import format_table
from loom.examples.targets import resolve_kernel

STAGES = ("frontend", "loops", "lowered", "c")


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



def stage_text(kernel, stage: str, locations: bool = False) -> str:
    from loom.passes.recipes import lower_to_c, lower_to_loops

    module = kernel.module
    if stage == "frontend":
        if locations:
            import io

            from xdsl.printer import Printer

            stream = io.StringIO()
            Printer(stream=stream, print_debuginfo=True).print_op(module)
            return stream.getvalue()
        return str(module)
    if stage == "loops":
        return str(lower_to_loops(module))
    lowered = lower_to_c(module)
    if stage == "lowered":
        return str(lowered)
    from loom.backends.c import emit_c

    return emit_c(lowered)


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
        print(stage_text(kernel, stage, locations=args.locations))
    return 0


def _parse_dims(text: str) -> dict[str, int]:
    dims = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        name, _, value = item.partition("=")
        if not value.strip().isdigit():
            raise LoomError(f"--dims: expected NAME=INT, got '{item}'")
        dims[name.strip()] = int(value)
    return dims


def cmd_run(args) -> int:
    kernel, example = resolve_kernel(args.target)
    rng = np.random.default_rng(args.seed)
    if example is not None:
        call_args = example.make_args(rng, args.scale)
    elif hasattr(kernel, "random_arguments"):  # a function of a .mlir file
        call_args = kernel.random_arguments(_parse_dims(args.dims), rng)
    else:
        from loom.jit.random_inputs import random_arguments

        call_args = random_arguments(kernel, _parse_dims(args.dims), rng)
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


CHECK_HEADERS = ["kernel", "ops", "trace ms", "compile ms", "run ms", "vs numpy", "vs mlir-runner", "status"]


def check_kernel(kernel, example, call_args, *, use_mlir: bool) -> list:
    """Trace, compile, run; compare with numpy (built-ins) and mlir-runner. One table row."""
    from loom.oracle import mlir

    start = time.perf_counter()
    module = kernel.module
    trace_ms = (time.perf_counter() - start) * 1e3
    ops = sum(1 for _ in module.walk())

    ours = [_copy(a) for a in call_args]
    start = time.perf_counter()
    kernel.compile()
    compile_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    result = kernel(*ours)
    run_ms = (time.perf_counter() - start) * 1e3

    status = "ok"
    vs_numpy = "-"
    if example is not None:
        expected = example.reference([_copy(a) for a in call_args])
        if example.result is not None:
            expected = {**expected, "result": example.result(call_args)}
        errors = [_max_rel_error(result if k == "result" else ours[k], v) for k, v in expected.items()]
        vs_numpy = _error_text(max(errors, default=0.0))
        status = "ok" if max(errors, default=0.0) <= 1e-5 else "MISMATCH"

    vs_mlir = "skipped"
    if use_mlir and mlir.available():
        upstream = mlir.run(module, kernel.name, [_copy(a) for a in call_args])
        errors = [_max_rel_error(upstream.memrefs[i], a) for i, a in enumerate(ours) if isinstance(a, np.ndarray)]
        if result is not None:
            errors.append(_max_rel_error(upstream.results[0], result))
        vs_mlir = _error_text(max(errors, default=0.0))
        if max(errors, default=0.0) > 1e-5:
            status = "MISMATCH"
    return [kernel.name, ops, trace_ms, compile_ms, run_ms, vs_numpy, vs_mlir, status]


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _max_rel_error(got, want) -> float:
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    if got.size == 0:
        return 0.0
    return float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1.0)))


def _error_text(error: float) -> str:
    return "exact" if error == 0 else f"{error:.1e}"
