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


def module_dim_names(module) -> set[str]:
    """Every axis name the functions of ``module`` give their arguments (``loom.dims``)."""
    return {name for op in module.walk() if isinstance(op, FuncOp)
            for axes in arg_dim_names(op) if axes for name in axes if name}


def check_dim_names(module, dims, what: str, where: str = "dims") -> None:
    """Refuse sizes for dims ``module`` does not have: a typo would leave the dim dynamic and fail later (or
    be silently ignored). The error lists the dims it has."""
    from loom.errors import LoomError

    named = module_dim_names(module)
    unknown = sorted(set(dims) - named)
    if unknown:
        raise LoomError(f"{what} has no dim {', '.join(unknown)} (its dims: {', '.join(sorted(named)) or 'none'})",
                        where=where)


def parse_dims(text: str, where: str = "--dims") -> dict[str, int]:
    """``M=64,N=32`` -> {"M": 64, "N": 32}; a bad item is a LoomError naming it (the one reader of dim sizes:
    the CLI's ``--dims`` and ``loom-specialize-dims{dims=...}``)."""
    from loom.errors import LoomError

    dims: dict[str, int] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier() or not value.strip().lstrip("-").isdigit() or int(value) <= 0:
            raise LoomError(f"bad {where} entry {item!r}: expected NAME=POSITIVE_INT, e.g. M=128", where=where)
        dims[key.strip()] = int(value)
    return dims


def format_dims(dims: dict[str, int]) -> str:
    return ",".join(f"{name}={size}" for name, size in dims.items())


__all__ = ["DIMS_ATTR", "dims_arg_attrs", "arg_dim_names", "parse_dims", "format_dims"]
