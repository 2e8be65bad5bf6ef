"""Hand-written (SECDA-style) baseline drivers and their build/run helpers.

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
]
