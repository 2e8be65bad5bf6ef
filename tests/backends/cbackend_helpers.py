"""Parsing MLIR text for the C backend tests, and the sanitizer runtimes for child processes."""

from __future__ import annotations

import functools
import os
import subprocess

import pytest

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from loom.backends.c import CompiledModule, compile_module


@functools.cache
def _context() -> Context:
    from xdsl.dialects.affine import Affine
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.math import Math
    from xdsl.dialects.memref import MemRef
    from xdsl.dialects.scf import Scf
    from xdsl.dialects.tensor import Tensor

    ctx = Context()
    for dialect in (Affine, Arith, Builtin, Func, Math, MemRef, Scf, Tensor):
        ctx.load_dialect(dialect)
    return ctx


def parse(text: str) -> ModuleOp:
    module = Parser(_context(), text, "test.mlir").parse_module()
    module.verify()
    return module


def build(text: str) -> CompiledModule:
    return compile_module(parse(text))


def sanitizer_preload(cc: str) -> str:
    """``LD_PRELOAD`` value for the ASan and UBSan runtimes of ``cc``; skips the test when they are missing."""
    libs = [subprocess.run([cc, f"-print-file-name={lib}"], capture_output=True, text=True).stdout.strip()
            for lib in ("libasan.so", "libubsan.so")]
    if not all(os.path.isabs(lib) and os.path.exists(lib) for lib in libs):
        pytest.skip("sanitizer runtimes not installed")
    return ":".join(libs)
