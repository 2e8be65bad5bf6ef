"""RoundUp splits of Funcs computed inside a loop (Halide's ``TailStrategy.RoundUp`` below the root).

A Func split by ``f`` with RoundUp (or PredicateLoads/Stores, the same footprint on the CPU) is computed over its
per-tile region rounded up to a multiple of ``f`` from the region's start, as Halide does; the extra points are
computed but never read, and what they read of the Func's producers grows the producers' regions too.

Halide checks an input against the union over the tiles of those rounded regions, each tile unclipped (a
GuardWithIf tile past the end counts whole). That union is bounded here from the windows' runtime bases: each
base is an expression of the loop indices (sums, constant multiples, min/max, floor division), so its least and
greatest value over the loops' ranges follow by interval arithmetic (``value_range``). The whole-pipeline regions
(``infer_bounds``) of such Funcs are grown to those unions and the pipeline lowered again with them; a window
past them (a clipped tile) has its base clamped into them, as other widened windows.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from .expr import Var
from .schedule import TailStrategy


def round_up_factors(f) -> dict[int, list[int]]:
    """Dim -> the RoundUp factors its pure Var is split by, definition by definition (as ``infer_bounds``)."""
    out: dict[int, list[int]] = {}
    for d in f.definitions:
        for sp in d.schedule.splits:
            if TailStrategy.resolve(sp.tail, d.is_pure) not in TailStrategy.ROUNDING:
                continue
            for i, a in enumerate(d.args):
                if isinstance(a, Var) and a.name == sp.old:
                    out.setdefault(i, []).append(sp.factor)
    return out


def computed_outside(plan, target, f) -> bool:
    """Whether ``target`` is a realised Func computed outside ``f``'s loops: it is computed over what ``f``'s
    points before rounding read (what the extra points read of it is storage only); one computed inside them runs
    over the rounded loops."""
    from .cpu_plan import ROOT
    if id(target) not in plan.realised:
        return False
    level = plan.compute_level[id(target)]
    while level != ROOT:
        if level[1] is f:
            return False
        level = plan.compute_level[id(level[1])]
    return True


def rounded(extent: int, factors: list[int]) -> int:
    for k in factors:
        extent = -(-extent // k) * k
    return extent


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
