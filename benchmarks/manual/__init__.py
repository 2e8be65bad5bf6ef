"""Hand-written (SECDA-style) baseline drivers and their build/run helpers.

Import it as ``manual`` with ``benchmarks/`` on ``sys.path`` (scripts in
``benchmarks/`` get that for free): ``benchmarks.manual`` cannot work because
xDSL installs a top-level ``benchmarks`` package that shadows this folder."""

from .manual import (
    SIMULATOR_FILES,
    build_harness,
    conv_command,
    conv_os,
    load_drivers,
    matmul_command,
    matmul_ns,
    run_harness,
)

__all__ = [
    "SIMULATOR_FILES",
    "build_harness",
    "conv_command",
    "conv_os",
    "load_drivers",
    "matmul_command",
    "matmul_ns",
    "run_harness",
]
