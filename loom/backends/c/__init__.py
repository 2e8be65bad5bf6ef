"""C backend: standard-dialect xDSL IR -> C99 -> shared object -> callable on numpy arrays.

Calling convention of the generated C (matches MLIR's ``_mlir_ciface_`` style):
a memref parameter is a pointer to ``struct { T *allocated; T *aligned; intptr_t
offset; intptr_t sizes[R]; intptr_t strides[R]; }``; scalars are passed by value;
one result is the return value, several results are written through out-pointers
appended after the parameters. Symbols are ``loom_<name>``; private functions are
``static``; body-less (external) functions keep their MLIR name and use the same
convention, so a C runtime passed through ``extra_flags`` can implement them.

    emit_c(module) -> str
    compile_module(module, sanitize=None) -> CompiledModule
    CompiledModule.function(name) -> CFunction; CFunction(*args)
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp

from loom.backends.c.compiler import build_shared_object, compile_flags, sanitize_requested
from loom.backends.c.emitter import emit_c, lower_module
from loom.backends.c.runtime import CFunction, CompiledModule

__all__ = ["emit_c", "compile_module", "CompiledModule", "CFunction"]

_LOADED: dict[tuple[str, tuple[str, ...]], CompiledModule] = {}


def compile_module(
    module: ModuleOp, *, sanitize: bool | None = None, extra_flags: Sequence[str] = ()
) -> CompiledModule:
    """Emit, compile (or reuse a cached object) and load ``module``.

    ``sanitize=None`` follows the environment (``LOOM_SANITIZE=1``). ``extra_flags``
    are appended after the C file: extra C sources or libraries that define the
    module's external (body-less) functions.
    """
    program = lower_module(module)
    sanitize = sanitize_requested(sanitize)
    key = (program.source, tuple(compile_flags(sanitize)), tuple(extra_flags))
    loaded = _LOADED.get(key)
    if loaded is not None:
        return loaded
    so_path = build_shared_object(program.source, sanitize, tuple(extra_flags))
    loaded = CompiledModule(program.source, so_path, program.signatures)
    _LOADED[key] = loaded
    return loaded
