"""Shared helpers for the kernel-frontend tests (not a conftest, to avoid name clashes)."""

from __future__ import annotations

import io
import os
import re
import subprocess

import pytest
from xdsl.printer import Printer

MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"


def upstream_verify(module) -> None:
    """Parse and verify ``module`` with upstream mlir-opt (an independent oracle)."""
    if not os.path.exists(MLIR_OPT):
        pytest.skip("mlir-opt 22 not installed")
    r = subprocess.run([MLIR_OPT, "--verify-each"], input=str(module), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def ops_named(module, name: str) -> list:
    return [op for op in module.walk() if op.name == name]


def debug_text(module) -> str:
    s = io.StringIO()
    Printer(stream=s, print_debuginfo=True).print_op(module)
    return s.getvalue()


def line_of(path: str, marker: str) -> int:
    """1-based line number of the unique line of ``path`` containing ``marker``."""
    pat = re.compile(re.escape(marker) + r"(?![\w-])")
    with open(path) as f:
        hits = [i + 1 for i, line in enumerate(f) if pat.search(line)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def backend_available() -> bool:
    try:
        import loom.backends.c  # noqa: F401
        import loom.passes.recipes  # noqa: F401
    except Exception:
        return False
    return True
