"""``loom build`` HLS artifacts of one loop-level module: ``hls/NAME.cpp`` (the kernel in Vitis HLS
C++), ``hls/NAME_tb.cpp`` (its C-simulation testbench) and loom's headers for g++.

With ``--target hls`` the check builds the testbench with g++ and runs it, and compares every array
the kernel writes with the C backend's run of the same module on the same inputs (``--target all``
writes the files and leaves the C simulation to ``--target hls``: it costs a C++ compile per unit).
Dynamic dims take their sizes from ``--dims``, or from a built-in example's inputs.
"""

from __future__ import annotations

import numpy as np

from loom.build.folder import OutputFolder
from loom.build.options import BuildOptions
from loom.core.compare import relative_difference
from loom.errors import LoomError


def dims_of_arrays(module, arrays) -> dict[str, int]:
    """Sizes of the named dims (``loom.dims``) of the module's public function, read off example arrays."""
    from xdsl.dialects.func import FuncOp

    from loom.dialects.dims import arg_dim_names

    dims: dict[str, int] = {}
    for fn in module.body.block.ops:
        if isinstance(fn, FuncOp) and fn.body.blocks and (fn.sym_visibility is None
                                                          or fn.sym_visibility.data == "public"):
            for names, value in zip(arg_dim_names(fn), arrays):
                for axis, name in enumerate(names or ()):
                    if name is not None and isinstance(value, np.ndarray) and axis < value.ndim:
                        dims.setdefault(name, int(value.shape[axis]))
    return dims


def example_ranges(program, example) -> dict[str, tuple[int, int]]:
    """The (lo, hi) of each integer array a built-in example's inputs give its kernel to read: collatz_steps
    takes 1 .. 2999, and the testbench's default draws (any int32) may not end its while loop."""
    args = example.make_args(np.random.default_rng(0), 1)
    out = {}
    for port in program.ports:
        value = np.asarray(args[port.index]) if port.index < len(args) else None
        if (port.is_array and port.reads and value is not None and value.dtype.kind in "iu" and value.size
                and value.min() < value.max() and int(value.max()) - int(value.min()) < 1 << 24):
            out[port.name] = (int(value.min()), int(value.max()) + 1)
    return out


def build_hls(folder: OutputFolder, unit: str, name: str, module, options: BuildOptions, example=None,
              required: bool = True, ranges: dict[str, tuple[int, int]] | None = None) -> None:
    """``required``: with ``--target hls`` a module the backend refuses fails the build (else: a note).
    ``ranges``: integer arrays the testbench draws from [lo, hi) (index inputs of gathers)."""
    from loom.backends.hls import HEADERS, INCLUDE_DIR, emit_hls, emit_testbench
    from loom.backends.hls.csim import FLOAT_HEADER

    record = folder.unit(unit, folder.units[unit].kind if unit in folder.units else "kernel")
    dims = dict(options.dims)
    if example is not None:
        args = example.make_args(np.random.default_rng(options.seed), 1)
        dims = {**dims_of_arrays(module, args), **dims}
    types, in_format = {}, None
    if options.number_format is not None:
        from loom.backends.hls.types import computes_in_floats

        if computes_in_floats(module):
            t = options.hls_format_type()
            types, in_format = {"f32": t, "f64": t}, (options.number_format, options.rounding, options.overflow)
        else:
            record.notes.append(f"HLS C++ not in {options.number_format}: {name} computes in no f32 or f64 value")
    try:
        program = emit_hls(module, dims=dims, types=types)
    except LoomError as error:
        if options.target == "hls" and required:
            raise
        record.notes.append(f"no HLS C++: {error.message}")
        return
    if example is not None:  # a built-in example's testbench draws integers from the example's own inputs' range
        ranges = {**example_ranges(program, example), **(ranges or {})}
    folder.write(unit, f"hls/{name}.cpp", program.source, kind="hls", stage="hls",
                 description="Vitis HLS C++: top function with interface pragmas, pipelined loops, partitions")
    folder.write(unit, f"hls/{name}_tb.cpp", emit_testbench(program, ranges=ranges), kind="testbench", stage="hls",
                 description="C-simulation testbench: deterministic inputs, calls the top function, prints outputs")
    for header in HEADERS + ((FLOAT_HEADER,) if program.uses_loom_float else ()):
        folder.copy(unit, f"hls/{header}", INCLUDE_DIR / header, kind="c++", stage="hls",
                    description="loom's ap_int / ap_fixed / hls::stream for g++ C simulation")
    if not options.check:
        return
    if options.target != "hls":
        record.notes.append("HLS C simulation not run (loom build --target hls runs it)")
        return
    record.checks.append(check_against_cpu(program, name, ranges, in_format=in_format))


def check_against_cpu(program, name: str, ranges: dict[str, tuple[int, int]] | None = None,
                      in_format: tuple[str, str, str | None] | None = None) -> str:
    """Run the C simulation and the C backend on the testbench's inputs; a difference is a LoomError.
    ``in_format=(format, rounding, overflow)``: the program computes a float kernel in that format (fixed point:
    ``ap_type_of_format``; a custom float: ``loom_float``, ``hls_type_of_format``); the C side is the same kernel
    compiled in the base2 format, and the two must agree bit for bit (floats: pattern for pattern)."""
    from loom.backends.c import compile_module
    from loom.backends.hls import csim_inputs, simulate

    inputs = csim_inputs(program, ranges=ranges)
    run = simulate(program, ranges=ranges)
    if in_format is None:
        cpu = compile_module(program.module).function(program.top_mlir)
    else:
        from loom.jit.formats import lower_in_format
        from loom.passes.convert_float_to_base2 import ConvertFloatToBase2Pass

        fmt, rounding, overflow = in_format
        convert = ConvertFloatToBase2Pass(format=fmt, rounding=rounding, overflow=overflow or "")
        cpu = compile_module(lower_in_format(program.module, convert)).function(program.top_mlir)
    # fixed point wider than a double's 53 bits comes as exact Fractions; the C backend computes in floats
    inputs = {k: v.astype(np.float64) if v.dtype == object else v for k, v in inputs.items()}
    float_types = _float_arg_dtypes(program)
    args = [inputs[p.name].astype(float_types.get(k, inputs[p.name].dtype)) if p.is_array
            else inputs[p.name][()].item() for k, p in enumerate(program.ports)]
    cpu(*args)
    worst = 0.0
    for port, value in zip(program.ports, args):
        if not (port.is_array and port.writes):
            continue
        got, want = run.arrays[port.name], value
        if in_format is not None:
            if not _same_format_values(got, want, in_format):
                raise LoomError(f"{name}: the HLS C simulation differs from the kernel in {in_format[0]} in "
                                f"{port.name}")
        elif got.dtype.kind == "f" or want.dtype.kind == "f":
            worst = max(worst, relative_difference(got, want))
        elif not np.array_equal(got, want.astype(got.dtype)):
            raise LoomError(f"{name}: the HLS C simulation differs from the C backend in {port.name}")
    if worst > 1e-5:
        raise LoomError(f"{name}: the HLS C simulation differs from the C backend by {worst:.3g} (relative)")
    if in_format is not None:
        return f"HLS C simulation (g++, loom_hls.h) vs the kernel compiled in {in_format[0]}: bit-exact"
    return f"HLS C simulation (g++ -Wall -Wextra -Werror, loom_hls.h) vs the C backend: max relative error {worst:.2g}"


def _same_format_values(got, want, in_format) -> bool:
    """Bit for bit: fixed point by value; a custom float by its patterns (signed zeros and NaNs count)."""
    from loom.backends.hls.types import HlsFloat, hls_type_of_format

    fmt, rounding, overflow = in_format
    t = hls_type_of_format(fmt, rounding, overflow)
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    if not isinstance(t, HlsFloat):
        return np.array_equal(got, want)
    return got.shape == want.shape and all(t.encode(a) == t.encode(b) for a, b in zip(got, want))


def _float_arg_dtypes(program) -> dict[int, np.dtype]:
    """Argument position -> numpy dtype of the top function's float memref arguments (the IR's, f32 / f64)."""
    from xdsl.dialects.builtin import Float32Type, Float64Type, MemRefType
    from xdsl.dialects.func import FuncOp

    [fn] = [op for op in program.module.walk() if isinstance(op, FuncOp) and op.sym_name.data == program.top_mlir]
    out = {}
    for k, t in enumerate(fn.function_type.inputs.data):
        if isinstance(t, MemRefType) and isinstance(t.element_type, Float32Type | Float64Type):
            out[k] = np.dtype(np.float32 if isinstance(t.element_type, Float32Type) else np.float64)
    return out
