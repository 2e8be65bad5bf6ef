"""``loom.dims``: which dynamic dimensions of a function's memref arguments must be equal.

A frontend that knows the names of dynamic dimensions (``Dim("M")`` in a kernel
signature) records them on the ``func.func`` as an argument attribute, one
string per axis (``""`` for an axis with no name, e.g. a static one)::

    func.func @mm(%A: memref<?x?xf32> {loom.dims = ["M", "K"]},
                  %B: memref<?x?xf32> {loom.dims = ["K", "N"]}, ...)

Every axis with the same name must have the same size at call time. The
attribute is discardable (dialect prefix ``loom.``): upstream ``mlir-opt``
keeps it, xDSL passes keep a ``func.func``'s ``arg_attrs``, and every backend
route builds its call checker from it (``loom.backends.c.signature``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr
from xdsl.dialects.func import FuncOp

DIMS_ATTR = "loom.dims"


def dims_arg_attrs(per_arg: Sequence[Sequence[str] | None]) -> ArrayAttr[DictionaryAttr] | None:
    """``arg_attrs`` for a func.func: ``per_arg[k]`` names the axes of argument k (None: not a memref).

    None when no argument has a named axis (the function then needs no attribute)."""
    if not any(names and any(names) for names in per_arg):
        return None
    dicts = []
    for names in per_arg:
        if names and any(names):
            dicts.append(DictionaryAttr({DIMS_ATTR: ArrayAttr([StringAttr(n) for n in names])}))
        else:
            dicts.append(DictionaryAttr({}))
    return ArrayAttr(dicts)


def arg_dim_names(func: FuncOp) -> list[tuple[str | None, ...] | None]:
    """Per argument: the name of each axis (None: unnamed), or None without a ``loom.dims`` attribute."""
    count = len(func.function_type.inputs.data)
    out: list[tuple[str | None, ...] | None] = [None] * count
    if func.arg_attrs is None:
        return out
    for k, attrs in enumerate(func.arg_attrs.data[:count]):
        value = attrs.data.get(DIMS_ATTR)
        if isinstance(value, ArrayAttr) and all(isinstance(n, StringAttr) for n in value.data):
            out[k] = tuple(n.data or None for n in value.data)  # type: ignore[union-attr]
    return out


__all__ = ["DIMS_ATTR", "dims_arg_attrs", "arg_dim_names"]
