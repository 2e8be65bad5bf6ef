"""Kernel-language builtins recognised by the tracer: ``parallel``, ``alloc``, ``alloca``, ``cast``.

They are markers: the tracer emits IR when it sees them in kernel source.
Called in plain Python they raise, since they only make sense in a kernel.
"""

from __future__ import annotations

from loom.errors import LoomError


def _marker(name: str, doc: str):
    def f(*args, **kwargs):
        raise LoomError(f"loom.{name}(...) can only be used inside a @loom.kernel function")

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = doc
    return f


parallel = _marker(
    "parallel",
    "for i, j in parallel((lb0, lb1), (ub0, ub1)[, (s0, s1)]) or parallel(ub0, ub1): an scf.parallel loop.",
)
alloc = _marker("alloc", "alloc((d0, d1), T): memref.alloc, freed (memref.dealloc) at the end of its block.")
alloca = _marker("alloca", "alloca((d0, d1), T): memref.alloca (stack), valid until the function returns.")
cast = _marker("cast", "cast(x, T): explicit scalar conversion, same as T(x).")
