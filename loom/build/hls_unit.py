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


def build_hls(folder: OutputFolder, unit: str, name: str, module, options: BuildOptions, example=None,
              required: bool = True, ranges: dict[str, tuple[int, int]] | None = None) -> None:
    """``required``: with ``--target hls`` a module the backend refuses fails the build (else: a note).
    ``ranges``: integer arrays the testbench draws from [lo, hi) (index inputs of gathers)."""
    from loom.backends.hls import HEADERS, INCLUDE_DIR, emit_hls, emit_testbench

    record = folder.unit(unit, folder.units[unit].kind if unit in folder.units else "kernel")
    dims = dict(options.dims)
    if example is not None:
        args = example.make_args(np.random.default_rng(options.seed), 1)
        dims = {**dims_of_arrays(module, args), **dims}
    try:
        program = emit_hls(module, dims=dims)
    except LoomError as error:
        if options.target == "hls" and required:
            raise
        record.notes.append(f"no HLS C++: {error.message}")
        return
    folder.write(unit, f"hls/{name}.cpp", program.source, kind="hls", stage="hls",
                 description="Vitis HLS C++: top function with interface pragmas, pipelined loops, partitions")
    folder.write(unit, f"hls/{name}_tb.cpp", emit_testbench(program, ranges=ranges), kind="testbench", stage="hls",
                 description="C-simulation testbench: deterministic inputs, calls the top function, prints outputs")
    for header in HEADERS:
        folder.copy(unit, f"hls/{header}", INCLUDE_DIR / header, kind="c++", stage="hls",
                    description="loom's ap_int / ap_fixed / hls::stream for g++ C simulation")
    if not options.check:
        return
    if options.target != "hls":
        record.notes.append("HLS C simulation not run (loom build --target hls runs it)")
        return
    record.checks.append(check_against_cpu(program, name, ranges))


def check_against_cpu(program, name: str, ranges: dict[str, tuple[int, int]] | None = None) -> str:
    """Run the C simulation and the C backend on the testbench's inputs; a difference is a LoomError."""
    from loom.backends.c import compile_module
    from loom.backends.hls import csim_inputs, simulate

    inputs = csim_inputs(program, ranges=ranges)
    run = simulate(program, ranges=ranges)
    cpu = compile_module(program.module).function(program.top_mlir)
    # fixed point wider than a double's 53 bits comes as exact Fractions; the C backend computes in floats
    inputs = {k: v.astype(np.float64) if v.dtype == object else v for k, v in inputs.items()}
    args = [inputs[p.name].copy() if p.is_array else inputs[p.name][()].item() for p in program.ports]
    cpu(*args)
    worst = 0.0
    for port, value in zip(program.ports, args):
        if not (port.is_array and port.writes):
            continue
        got, want = run.arrays[port.name], value
        if got.dtype.kind == "f" or want.dtype.kind == "f":
            worst = max(worst, relative_difference(got, want))
        elif not np.array_equal(got, want.astype(got.dtype)):
            raise LoomError(f"{name}: the HLS C simulation differs from the C backend in {port.name}")
    if worst > 1e-5:
        raise LoomError(f"{name}: the HLS C simulation differs from the C backend by {worst:.3g} (relative)")
    return f"HLS C simulation (g++ -Wall -Wextra -Werror, loom_hls.h) vs the C backend: max relative error {worst:.2g}"

