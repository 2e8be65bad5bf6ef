"""``restrict`` memref data pointers (native mode), and the call-time check that makes them true.

Rule: in native mode (``compile_module(native=True)`` / ``LOOM_NATIVE=1``) and
outside checked mode, the data pointers of the ranked memref parameters of a
function are ``restrict`` when the function is public, has a body and is not
called by any ``func.call`` of the module. Its only caller is then Python, and
every call goes through ``NoAliasFunction``, which refuses (``LoomError``) a
call where an argument the function may write shares memory with another
memref argument, or overlaps itself (zero or too small strides). Views made
inside the function (subviews) are based on their parameter's pointer, which
``restrict`` allows. Private or internally called functions get no
``restrict``: their callers may pass aliasing subviews.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from xdsl.dialects.func import FuncOp

from loom.backends.c.c_types import is_memref
from loom.errors import LoomError


def restrict_params(func: FuncOp, public: bool, called: set[str]) -> frozenset[int]:
    """Indices of the memref parameters of ``func`` whose data pointers may be ``restrict``."""
    if not public or not func.body.blocks or func.sym_name.data in called:
        return frozenset()
    return frozenset(k for k, ty in enumerate(func.function_type.inputs.data) if is_memref(ty))


def called_functions(funcs: Iterable[FuncOp]) -> set[str]:
    names = set()
    for func in funcs:
        for op in func.walk():
            if op.name == "func.call":
                names.add(op.properties["callee"].root_reference.data)  # type: ignore[attr-defined]
    return names


def overlaps_itself(arr: np.ndarray) -> bool:
    """True unless each stride (largest first) steps over everything the smaller ones span."""
    dims = sorted((abs(s), n) for s, n in zip(arr.strides, arr.shape) if n > 1)
    span = arr.itemsize
    for stride, n in dims:
        if stride < span:
            return True
        span = stride * (n - 1) + span
    return False


class NoAliasFunction:
    """A compiled function with ``restrict`` parameters: checks the arrays, then calls it."""

    def __init__(self, fn, restrict: frozenset[int]):
        self._fn = fn
        self._restrict = sorted(restrict)
        self._written = {spec.index for spec in fn.signature.params if spec.may_write}

    def __getattr__(self, name: str):
        return getattr(self._fn, name)

    def check(self, args: tuple) -> None:
        arrays = [(k, args[k]) for k in self._restrict if k < len(args) and isinstance(args[k], np.ndarray)]
        where = f"@{self._fn.name}"
        for pos, (k, a) in enumerate(arrays):
            if k in self._written and a.size and overlaps_itself(a):
                raise LoomError(f"argument {k} overlaps itself (strides {a.strides}) but the function writes it "
                                "and was compiled with native=True (restrict pointers); pass a copy", where=where)
            for j, b in arrays[pos + 1 :]:
                if (k in self._written or j in self._written) and a.size and b.size and np.may_share_memory(a, b):
                    raise LoomError(f"arguments {k} and {j} share memory but the function writes one of them and "
                                    "was compiled with native=True (restrict pointers); pass distinct arrays",
                                    where=where)

    def __call__(self, *args):
        self.check(args)
        return self._fn(*args)
