"""Parsing MLIR text for the C backend tests."""

from __future__ import annotations

import functools

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
