"""Facts about a window's runtime base over the open loops: its range (``value_range``) and its remainders
(``congruence``). A base is built from loop indices and constants by sums, constant multiples, min/max and floor
divisions (``cpu_loops``, ``cpu_regions``), so both follow from its operations."""

from __future__ import annotations

from math import gcd

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue


def value_range(v: SSAValue, ivs: dict[int, tuple[int, int]], caps=(), unclip=None) -> tuple[int, int] | None:
    """The least and greatest value of index ``v`` over the ranges ``ivs`` (id of a loop index -> (first, last)
    value); None when ``v`` is built of something else. ``caps``: (value, last) pairs, a GuardWithIf offset below
    its extent where the guard encloses the producers (the value computed there again, so compared by form).
    ``unclip``: id of a clamped window base -> the base before the clamp, taken instead (Halide bounds a clipped
    tile's windows by the unclipped ones)."""
    if unclip and id(v) in unclip:
        return value_range(unclip[id(v)], ivs, caps, unclip)
    r = _value_range(v, ivs, caps, unclip)
    for value, last in caps:
        if r is not None and _same(v, value):
            r = (min(r[0], last), min(r[1], last))
    return r


def _same(a: SSAValue, b: SSAValue) -> bool:
    """Whether ``a`` and ``b`` are the same value or the same operation of the same values."""
    if a is b:
        return True
    oa, ob = a.owner, b.owner
    if not (isinstance(oa, Operation) and isinstance(ob, Operation)) or type(oa) is not type(ob):
        return False
    if isinstance(oa, arith.ConstantOp):
        return oa.value == ob.value
    return len(oa.operands) == len(ob.operands) and all(_same(x, y) for x, y in zip(oa.operands, ob.operands))


def _value_range(v: SSAValue, ivs: dict[int, tuple[int, int]], caps, unclip) -> tuple[int, int] | None:
    if id(v) in ivs:
        return ivs[id(v)]
    op = v.owner
    if not isinstance(op, Operation):
        return None
    if isinstance(op, arith.ConstantOp):
        c = op.value.value.data
        return c, c
    if isinstance(op, arith.IndexCastOp):
        return value_range(op.input, ivs, caps, unclip)
    args = [value_range(o, ivs, caps, unclip) for o in op.operands]
    if any(a is None for a in args):
        return None
    if isinstance(op, arith.AddiOp):
        return args[0][0] + args[1][0], args[0][1] + args[1][1]
    if isinstance(op, arith.SubiOp):
        return args[0][0] - args[1][1], args[0][1] - args[1][0]
    if isinstance(op, (arith.MinSIOp, arith.MaxSIOp)):
        pick = min if isinstance(op, arith.MinSIOp) else max
        return pick(args[0][0], args[1][0]), pick(args[0][1], args[1][1])
    if isinstance(op, arith.MuliOp):
        ends = [a * b for a in args[0] for b in args[1]]
        return min(ends), max(ends)
    if isinstance(op, (arith.FloorDivSIOp, arith.DivUIOp)) and args[1][0] == args[1][1] and args[1][0] > 0:
        d = args[1][0]
        return args[0][0] // d, args[0][1] // d
    if isinstance(op, arith.RemUIOp) and args[1][0] == args[1][1] and args[1][0] > 0:
        return 0, args[1][0] - 1
    return None


def congruence(v: SSAValue) -> tuple[int, int]:
    """(m, c) with ``v`` = c modulo m for every value it takes (m = 0: always c; m = 1: nothing known): a tile's
    base ``xo * 8`` is 0 modulo 8, ``min(xo * 8, 26)`` 0 modulo 2."""
    op = v.owner
    if not isinstance(op, Operation):
        return 1, 0  # a loop index
    if isinstance(op, arith.ConstantOp):
        return 0, op.value.value.data
    if isinstance(op, arith.IndexCastOp):
        return congruence(op.input)
    if not isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.MinSIOp, arith.MaxSIOp)):
        return 1, 0
    (m1, c1), (m2, c2) = congruence(op.lhs), congruence(op.rhs)
    if isinstance(op, arith.AddiOp):
        m, c = gcd(m1, m2), c1 + c2
    elif isinstance(op, arith.SubiOp):
        m, c = gcd(m1, m2), c1 - c2
    elif isinstance(op, arith.MuliOp):
        m, c = gcd(m1 * m2, m1 * c2, m2 * c1), c1 * c2  # (m1 a + c1)(m2 b + c2)
    else:  # min or max: one of the two
        m, c = gcd(m1, m2, c1 - c2), c1
    return m, (c % m if m else c)


def assignments(values, ivs: dict[int, tuple[int, int]], limit: int = 4096) -> list[dict[int, int]] | None:
    """Every assignment of the open loops' indices (``ivs``) that ``values`` are built of, as id -> value; None
    when one is built of something else or there are more than ``limit``."""
    found: dict[int, tuple[int, int]] = {}
    seen: set[int] = set()

    def visit(v: SSAValue) -> bool:
        if id(v) in seen:
            return True
        seen.add(id(v))
        if id(v) in ivs:
            found[id(v)] = ivs[id(v)]
            return True
        op = v.owner
        if not isinstance(op, Operation) or not isinstance(op, _EVALUATED):
            return False
        if isinstance(op, arith.FloorDivSIOp) and not (isinstance(op.rhs.owner, arith.ConstantOp)
                                                        and op.rhs.owner.value.value.data > 0):
            return False
        return all(visit(o) for o in op.operands)

    if not all(visit(v) for v in values):
        return None
    out = [{}]
    for key, (first, last) in found.items():
        if len(out) * (last - first + 1) > limit:
            return None
        out = [{**a, key: i} for a in out for i in range(first, last + 1)]
    return out


def evaluate(v: SSAValue, assignment: dict[int, int], memo: dict | None = None) -> int:
    """Index ``v``'s value when the loop indices take ``assignment`` (``assignments``)."""
    memo = {} if memo is None else memo
    if id(v) in assignment:
        return assignment[id(v)]
    if id(v) in memo:
        return memo[id(v)]
    op = v.owner
    if isinstance(op, arith.ConstantOp):
        return op.value.value.data
    args = [evaluate(o, assignment, memo) for o in op.operands]
    if isinstance(op, arith.IndexCastOp):
        r = args[0]
    elif isinstance(op, arith.AddiOp):
        r = args[0] + args[1]
    elif isinstance(op, arith.SubiOp):
        r = args[0] - args[1]
    elif isinstance(op, arith.MuliOp):
        r = args[0] * args[1]
    elif isinstance(op, arith.MinSIOp):
        r = min(args)
    elif isinstance(op, arith.MaxSIOp):
        r = max(args)
    else:  # FloorDivSIOp
        r = args[0] // args[1]
    memo[id(v)] = r
    return r


_EVALUATED = (arith.ConstantOp, arith.IndexCastOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.MinSIOp,
              arith.MaxSIOp, arith.FloorDivSIOp)
