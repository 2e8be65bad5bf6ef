"""``loom list | ir | run | hls``: the kernel frontend from the command line, and ``kernel_demo()``."""

from __future__ import annotations


import numpy as np

from loom.cli.arg_types import non_negative_int, parse_dims, positive_int
from loom.errors import LoomError
from loom.cli.table import format_table
from loom.dialects.dims import check_dim_names
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

    p = sub.add_parser("hls", help="write a kernel as Vitis HLS C++ with its C-simulation testbench")
    p.add_argument("target", help="built-in example name, path/to/file.py:kernel, path/to/file.mlir[:func] "
                                  "or path/to/file.ekl[:kernel]")
    p.add_argument("-o", "--output", default=None,
                   help="folder for NAME.cpp, NAME_tb.cpp and loom's headers (default: print the C++)")
    p.add_argument("--dims", default="", help="sizes of dynamic dims, e.g. M=64,N=32 (examples: their inputs')")
    p.add_argument("--top", default=None, help="the top function (default: the only public one)")
    p.add_argument("--interface", choices=("m_axi", "axis"), default="m_axi", help="arrays in global memory or streams")
    p.add_argument("--ii", type=positive_int, default=1, help="initiation interval of pipelined loops")
    p.add_argument("--unroll", type=positive_int, default=1, help="unroll factor of pipelined loops")
    p.add_argument("--full-unroll", type=non_negative_int, default=16,
                   help="nested loops of at most this many iterations unroll inside a pipelined loop")
    p.add_argument("--no-partition", action="store_true", help="no ARRAY_PARTITION of local buffers")
    p.add_argument("--type", action="append", default=[], metavar="MLIR=HLS",
                   help="compute an MLIR type in an HLS type, e.g. f32=ap_fixed<16,8> (repeatable)")
    p.add_argument("--format", default=None, metavar="FORMAT",
                   help="compute the kernel's f32/f64 in a loom number format: fixed point, e.g. 'fixed<10, 4>' "
                        "(ap_fixed<14,10,...>), or a custom float, e.g. e4m3fn, bf16, 'float<5, 6>' (loom_float<...>); "
                        "with --csim checked bit for bit against the kernel in that format")
    p.add_argument("--rounding", default="nearest_even", choices=("nearest_even", "truncate", "nearest_away"),
                   help="rounding of --format (fixed point: AP_RND_CONV, AP_TRN, AP_RND_INF; floats: truncate "
                        "is toward zero)")
    p.add_argument("--overflow", default=None, choices=("wrap", "saturate", "inf"),
                   help="overflow of --format (fixed point: wrap (default, AP_WRAP) or saturate (AP_SAT); floats: "
                        "inf (default) or saturate)")
    p.add_argument("--range", action="append", default=[], metavar="NAME=LO:HI",
                   help="the testbench draws array NAME from [LO, HI) (repeatable; integers when both bounds are)")
    p.add_argument("--csim", action="store_true",
                   help="build the testbench with g++ and run it against the C backend on the same inputs")
    p.set_defaults(handler=cmd_hls)



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


def _type_map(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise LoomError(f"bad --type {item!r}: expected MLIR=HLS, e.g. f32=ap_fixed<16,8>", where="--type")
        out[key.strip()] = value.strip()
    return out


def _ranges(items: list[str]) -> dict[str, tuple]:
    """``--range NAME=LO:HI`` of ``loom hls``: integer bounds stay integers (integer arrays need them)."""
    from loom.jit.ekl import parse_range

    out = {}
    for item in items:
        name, (lo, hi) = parse_range(item)
        out[name] = (int(lo), int(hi)) if lo.is_integer() and hi.is_integer() else (lo, hi)
    return out


def _ekl_module(target: str):
    """The loop-level module of an EKL kernel (``FILE.ekl`` with one kernel, or ``FILE.ekl:NAME``), the
    testbench ranges of its inputs and the default sizes of its '?' extents, else (None, None, None)."""
    path, _, name = target.partition(".ekl")
    if not (name == "" or name.startswith(":")) or not target.startswith(path + ".ekl") or path == "":
        return None, None, None
    import loom.ekl
    from loom.build.ekl_unit import DYNAMIC_EXTENT, testbench_ranges

    kernel = loom.ekl.load(path + ".ekl").kernel(name[1:] or None)
    # constants are ROMs, not ports; '?' extents default to loom build's check size
    return kernel.ir("c", consts_as_globals=True), testbench_ranges(kernel), kernel.dim_sizes(DYNAMIC_EXTENT)


def refuse_conflicting_hls_options(args) -> None:
    """Checked before anything is emitted or written, so a refused command leaves no files behind."""
    if args.csim and args.type:
        raise LoomError("--csim compares with the C backend, which computes in the IR's types; "
                        "drop --type to check", where="--csim")
    if getattr(args, "format", None) and args.type:
        raise LoomError("give the kernel's type either as --format (a loom format) or as --type, not both",
                        where="--format")


def cmd_hls(args) -> int:
    from pathlib import Path

    from loom.backends.hls import emit_hls, emit_testbench, write_headers
    from loom.build.hls_unit import check_against_cpu, dims_of_arrays, example_ranges

    refuse_conflicting_hls_options(args)
    dims = parse_dims(args.dims)
    (module, ranges, ekl_sizes), example = _ekl_module(args.target), None
    if module is None:
        kernel, example = resolve_kernel(args.target)
        module = kernel.module
    check_dim_names(module, dims, args.target, where="--dims")
    if ekl_sizes:
        dims = {**ekl_sizes, **dims}
    if example is not None:
        dims = {**dims_of_arrays(module, example.make_args(np.random.default_rng(0), 1)), **dims}
    ranges = {**(ranges or {}), **_ranges(args.range)}
    types = _type_map(args.type)
    if args.format:
        from loom.backends.hls.types import computes_in_floats, hls_type_of_format

        t = hls_type_of_format(args.format, args.rounding, args.overflow)
        types = {"f32": t, "f64": t}
        if not computes_in_floats(module):
            raise LoomError(f"{args.target} computes in no f32 or f64 value: nothing to compute in {args.format}",
                            where="--format")
    program = emit_hls(module, top=args.top, interface=args.interface, ii=args.ii, unroll=args.unroll,
                       full_unroll=args.full_unroll, partition=not args.no_partition, types=types,
                       dims=dims)
    if example is not None:  # a built-in example's testbench draws from the example's own integer ranges
        ranges = {**example_ranges(program, example), **ranges}
    try:
        testbench = emit_testbench(program, ranges=ranges)  # checks --range before a file is written
    except LoomError as error:
        raise LoomError(error.message, where="--range" if args.range else error.where) from None
    if args.output is None:
        print(program.source)
    else:
        folder = Path(args.output)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{program.top}.cpp").write_text(program.source)
            (folder / f"{program.top}_tb.cpp").write_text(testbench)
            write_headers(folder, floats=program.uses_loom_float)
        except OSError as error:
            raise LoomError(f"cannot write: {error}", where="--output") from None
        print(f"wrote {folder}/{program.top}.cpp, {program.top}_tb.cpp and loom's headers "
              f"(g++ -std=c++17 -I {folder} {program.top}.cpp {program.top}_tb.cpp)")
    if args.csim:
        fmt = (args.format, args.rounding, args.overflow) if args.format else None
        print(check_against_cpu(program, program.top, ranges, in_format=fmt))
    return 0
