"""A boundary clamp's argument moved by Params (``inp[x + off, y]`` with an unranged Param ``off``): the argument
as the rest plus the Params' run-time values, so that the loop partitioning can test the rest's range shifted by
them, as Halide partitions on a Param's value at run time (the clamps ran at every pixel)."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from .cpu_scalar import ScalarEmitter, const_index, to_index
from .expr import BinOp, Cast, Const, walk
from .param import Param


def _offset_term(e) -> bool:
    """An integer Param, or one widened by a cast that keeps every value (i32(u8 Param))."""
    if isinstance(e, Param):
        return e.type.is_int
    if isinstance(e, Cast) and isinstance(e.value, Param) and e.type.is_int and e.value.type.is_int:
        src, dst = e.value.type, e.type
        return src.bits < dst.bits and (dst.is_signed or not src.is_signed) or src == dst
    return False


def split_param_offsets(a):
    """(rest, [(sign, term)]): ``a`` = rest + the sum of sign * term over its Param terms added or subtracted at
    its top; None when ``a`` has none, or holds a Param anywhere else (``x * off``)."""
    terms: list[tuple[int, object]] = []

    def strip(e, sign):
        if _offset_term(e):
            terms.append((sign, e))
            return Const(0, e.type)
        if isinstance(e, BinOp) and e.op in ("add", "sub"):
            return BinOp(e.op, strip(e.a, sign), strip(e.b, -sign if e.op == "sub" else sign), e.type)
        return e

    rest = strip(a, 1)
    if not terms or any(isinstance(v, Param) for v in walk(rest)):
        return None
    return rest, terms


def offset_value(terms, scalar_env: dict) -> SSAValue:
    """The sum of sign * term as an ``index``, from the function's scalar arguments."""
    emitter = ScalarEmitter(scalar_env, load=None)
    total = const_index(0)
    for sign, term in terms:
        total = (arith.AddiOp if sign > 0 else arith.SubiOp)(total, to_index(emitter.emit(term), term.type)).result
    return total
