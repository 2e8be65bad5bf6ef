"""HLS backend: loop-level IR -> synthesizable C++ in the Vitis HLS style, and its C simulation.

    emit_hls(module, top=None, interface="m_axi", ii=1, unroll=1, types=None, dims=None, ...) -> HlsProgram
    emit_testbench(program, scalars=None, ranges=None) -> str  # main(): fill inputs, call, print outputs
    csim_inputs(program, scalars=None, ranges=None) -> {name: array}  # the same inputs, in numpy
    simulate(program, scalars=None, ranges=None) -> CsimRun    # g++ -Wall -Wextra -Werror, run, parse

``HlsProgram.source`` is the kernel file: the top function with its interface pragmas (``m_axi`` per
array in global memory, or ``axis`` streams; ``s_axilite`` for scalars and the block-level
``ap_ctrl_hs`` control through ``return``), pipelined and unrolled loops, local arrays partitioned
by their accesses (``pragmas``), ``ap_int``/``ap_fixed`` for custom types and ``loom_float`` for loom's
custom float formats (``types``, ``hls_type_of_format``). The headers
it includes are the vendor's under Vitis HLS and loom's own (``include/loom_hls.h`` and shims) for
the C simulation here. Details: docs/hls.md.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects.builtin import ModuleOp

from loom.backends.hls.csim import HEADERS, INCLUDE_DIR, CsimRun, compile_and_run, write_headers
from loom.backends.hls import fixed_math, integers  # noqa: F401  (register their op handlers)
from loom.backends.hls.emitter import HlsOptions, HlsProgram, Port, lower_to_hls
from loom.backends.hls.testbench import emit_testbench, parse_output, csim_inputs
from loom.backends.hls.types import (HlsFloat, HlsType, hls_type_of_format, parse_hls_type, quantise_fraction,
                                     register_type_rule)

__all__ = ["HlsFloat", "hls_type_of_format", "emit_hls", "emit_testbench", "csim_inputs", "simulate", "HlsOptions", "HlsProgram", "Port",
           "CsimRun", "HlsType", "parse_hls_type", "quantise_fraction", "register_type_rule", "write_headers",
           "parse_output", "HEADERS", "INCLUDE_DIR"]


def emit_hls(module: ModuleOp, *, top: str | None = None, interface: str = "m_axi", ii: int | None = 1,
             unroll: int = 1, full_unroll: int = 16, partition: bool = True, csim_checks: bool = True,
             types: Mapping[str, "str | HlsType | HlsFloat"] | None = None, dims: Mapping[str, int] | None = None) -> HlsProgram:
    """HLS C++ for ``module``'s top function (the module is not modified; linalg is lowered to loops).
    ``csim_checks``: index checks that exist only in the C simulation (compiled out under __SYNTHESIS__)."""
    options = HlsOptions(top=top, interface=interface, ii=ii, unroll=unroll, full_unroll=full_unroll,
                         partition=partition, csim_checks=csim_checks, types=dict(types or {}),
                         dims=dict(dims or {}))
    return lower_to_hls(module, options)


def simulate(program: HlsProgram, scalars: Mapping[str, float] | None = None, *, sanitize: bool | None = None,
             folder=None, ranges: Mapping[str, tuple[int, int]] | None = None, inputs=None) -> CsimRun:
    """Generate the testbench, build it with the kernel and loom's header, run it, read the outputs.
    ``ranges``: integer arrays drawn from [lo, hi) (index arrays of gathers; see the testbench).
    ``inputs``: {array: values} the testbench starts from instead (NaN, infinities included; ``csim_inputs``
    with the same ``inputs`` gives them as the element type holds them)."""
    return compile_and_run(program, emit_testbench(program, scalars, ranges, inputs), sanitize=sanitize,
                           folder=folder)
