"""Hand-written (SECDA-style) baseline drivers and their build/run helpers.

Every flow of the MatMul accelerators (``FLOWS``: v1 Ns; v2 Ns/As/Bs; v3, v4 Ns/As/Bs/Cs) and the
conv protocol, each plain, coalesced or double-buffered: ``matmul(version, flow, A, B, C, tile,
coalesce=, double_buffer=)``, ``conv_os(..., coalesce=, double_buffer=)``; the standalone harness takes
the same choices as ``driver_options(flow, coalesce, double_buffer)`` (``--flow F --coalesce
--double-buffer``).

Scripts in ``benchmarks/`` import it as ``manual`` (their folder is on ``sys.path``);
the tests load it with ``from tests.perf.manual_drivers import manual``.
``benchmarks.manual`` cannot work because xDSL installs a top-level ``benchmarks``
package that shadows this folder."""

from .manual import (
    FLOWS,
    SIMULATOR_FILES,
    build_harness,
    conv_command,
    conv_os,
    driver_options,
    load_drivers,
    matmul,
    matmul_command,
    matmul_ns,
    run_harness,
    timed_ws_preload,
)

__all__ = [
    "FLOWS",
    "SIMULATOR_FILES",
    "build_harness",
    "conv_command",
    "conv_os",
    "driver_options",
    "load_drivers",
    "matmul",
    "matmul_command",
    "matmul_ns",
    "run_harness",
    "timed_ws_preload",
]
