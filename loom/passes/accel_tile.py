"""``accel-tile``: tile an annotated op for the CPU caches and the accelerator, in the flow's loop order.

Matches: ``linalg.generic`` ops with an ``accel.plan`` (``convert-linalg-to-accel``)
and not yet ``accel.tiled``. Reads only the plan (dims, tiles, cache tiles,
permutation), checked against the op and its ``accel.accelerator`` (``plan_of``).
Produces, in place of the op::

    %M = memref.dim ...                                 (loop extents, from the operands)
    scf.for %mo = 0 to %M step CM {accel.loop = #accel.loop<cache "m">}  (free dims with a cache tile)
      %mu = arith.minsi(%mo + CM, %M)                   (all tile-loop bounds, computed here)
      scf.for %m = %mo to %mu step TM {accel.loop = #accel.loop<tile "m">}  (accelerator tile loops,
        scf.for %k ... {accel.loop = #accel.loop<tile "k">}      in plan permutation order,
          scf.for %n ... {accel.loop = #accel.loop<tile "n">}    "full" dims have none)
            %a = memref.subview %A[%m, %k] [min(TM, %mu - %m), ...] [1, 1]
            linalg.generic {accel.accelerator, accel.plan as before, accel.tiled} ins(%a, %b) outs(%c)

Tiles at the problem's edge are partial (``arith.minsi``); ``accel-place-flow``
pads them. A subscript summing dims (``2 * oh + fh``) gets the window
``[sum c*start, sum |c|*(size-1) + 1]``. Loop bounds are hoisted above the
accelerator loops so later passes can read any loop's range at any level.
Problem sizes may be dynamic: the nest reads them with ``memref.dim``.
Leaves alone: everything else. The tiled op is still a valid linalg op on
subviews, so this stage can also run on the CPU (``convert-linalg-to-loops``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.builtin import IndexType, ModuleOp, UnitAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass

from loom.accel.matching import linear_form
from loom.dialects.accel import LoopAttr
from loom.passes.accel_ir import LOOP, PLAN, TILED, Emitter, loop_extents, plan_of, subview


@dataclass(frozen=True)
class AccelTilePass(ModulePass):
    name = "accel-tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for generic in [g for g in op.walk() if isinstance(g, GenericOp)]:
            if PLAN in generic.attributes and TILED not in generic.attributes:
                tile_generic(generic)


def _for(em: Emitter, lb: SSAValue, ub: SSAValue, step: SSAValue, role: str, dim: str) -> Block:
    body = Block(arg_types=[IndexType()])
    loop = scf.ForOp(lb, ub, step, [], Region(body))
    loop.attributes[LOOP] = LoopAttr(role, dim)
    em.op(loop)
    return body


def tile_generic(generic: GenericOp) -> None:
    block = generic.parent_block()
    assert block is not None
    em = Emitter(block, generic)
    operands = [*generic.inputs, *generic.outputs]
    maps = [m.data for m in generic.indexing_maps.data]
    plan = plan_of(generic)
    names, tiles, cache, order = plan.dim_names, plan.tile_sizes, plan.cache_tiles, plan.order
    extents = loop_extents(em, operands, maps)
    zero = em.index(0)
    bodies: list[Block] = []

    # cache loops over the free dims
    starts: dict[int, SSAValue] = {}
    for d in order:
        if cache[d]:
            body = _for(em, zero, extents[d], em.index(cache[d]), "cache", names[d])
            bodies.append(body)
            starts[d] = body.args[0]
            em = Emitter(body)
    # bounds of the accelerator loops, hoisted above them
    lbs: dict[int, SSAValue] = {}
    ubs: dict[int, SSAValue] = {}
    for d in order:
        if not tiles[d]:
            continue
        if d in starts:
            lbs[d] = starts[d]
            ubs[d] = em.min(em.add(starts[d], em.index(cache[d])), extents[d])
        else:
            lbs[d], ubs[d] = zero, extents[d]
    ivs: dict[int, SSAValue] = {}
    steps = {d: em.index(tiles[d]) for d in order if tiles[d]}
    for d in order:
        if tiles[d]:
            body = _for(em, lbs[d], ubs[d], steps[d], "tile", names[d])
            bodies.append(body)
            ivs[d] = body.args[0]
            em = Emitter(body)

    # the tile of every operand
    size_of: dict[int, SSAValue] = {}
    for d in ivs:
        size_of[d] = em.min(steps[d], em.sub(ubs[d], ivs[d]))
    new_operands = []
    for value, amap in zip(operands, maps):
        offsets, sizes = [], []
        for expr in amap.results:
            terms, const = linear_form(expr)  # type: ignore[misc]  (checked by the matcher)
            offsets.append(window_offset(em, terms, const, ivs))
            sizes.append(window_size(em, terms, size_of, extents, ivs))
        new_operands.append(subview(em, value, offsets, sizes))
    tiled = generic.clone()
    tiled.operands = new_operands
    tiled.attributes[TILED] = UnitAttr()
    em.op(tiled)
    for body in bodies:
        body.add_op(scf.YieldOp())
    generic.detach()
    generic.erase()


def window_offset(em: Emitter, terms: dict[int, int], const: int, starts: dict[int, SSAValue]) -> SSAValue:
    """sum(c * start_d) + const over the tiled dims (untiled dims start at 0)."""
    total: SSAValue | None = em.index(const) if const else None
    for d, c in terms.items():
        if d not in starts:
            continue
        term = starts[d] if c == 1 else em.mul(em.index(c), starts[d])
        total = term if total is None else em.add(total, term)
    return total if total is not None else em.index(0)


def window_size(em: Emitter, terms: dict[int, int], size_of: dict[int, SSAValue], extents: list[SSAValue],
                tiled: dict[int, SSAValue]) -> SSAValue:
    """sum(|c| * (size_d - 1)) + 1; a single unit-coefficient dim is just its size."""
    def size(d: int) -> SSAValue:
        return size_of[d] if d in tiled else extents[d]

    if len(terms) == 1 and next(iter(terms.values())) == 1:
        return size(next(iter(terms)))
    one = em.index(1)
    total = one
    for d, c in terms.items():
        span = em.sub(size(d), one)
        total = em.add(total, span if abs(c) == 1 else em.mul(em.index(abs(c)), span))
    return total
