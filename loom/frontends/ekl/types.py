"""Scalar types of EKL and the rules that combine them.

Concrete scalar types: ``f64``, ``f32`` (float), ``index`` (also ``si64``), ``i1``
(``bool``). ``number`` is the type of an untyped literal (``1``, ``0.5``, a
constant array of them): it takes the type of what it is combined with
(a float; ``index`` when it is an integer), and ``f64`` when nothing decides.
An ``index`` combined with a float converts to that float (messner's index ->
number conversion: ``eta * (N_eta - 1)`` with ``N_eta = _9``).
"""

from __future__ import annotations

from loom.frontends.ekl.source import Loc

SCALAR_NAMES = {"f64": "f64", "f32": "f32", "index": "index", "si64": "index", "bool": "i1", "i1": "i1"}
UNSUPPORTED_SCALARS = ("f16", "bf16", "si8", "si16", "si32", "ui8", "ui16", "ui32", "ui64")
FLOATS = ("f64", "f32")
ARITH = ("+", "-", "*", "/", "%", "^", "min", "max")
COMPARE = ("==", "~=", "<", "<=", ">", ">=")
LOGIC = ("&&", "||")


def join(a: str, b: str, loc: Loc, what: str) -> str:
    """The common type of two operands (untyped numbers adapt); a mismatch is a located error."""
    if a == b:
        return a
    if a == "number":
        return b
    if b == "number":
        return a
    if a == "index" and b in FLOATS:
        return b
    if b == "index" and a in FLOATS:
        return a
    raise loc.error(f"type mismatch in {what}: {a} and {b} (cast one side with '!> T')")


def result_type(op: str, operand: str, loc: Loc) -> str:
    if op in COMPARE:
        return "i1"
    if op in LOGIC:
        if operand != "i1":
            raise loc.error(f"'{op}' needs bool operands, got {operand}")
        return "i1"
    if operand == "i1":
        raise loc.error(f"'{op}' is not defined on bool values")
    if op == "^" and operand == "index":
        raise loc.error("'^' is defined on floating-point values only")
    return operand
