"""``scf-tile-and-interchange{tile-sizes=... interchange=...}``: tile a perfect
``scf.for`` nest and permute its tile loops.

Matches: per function, the ``scf.for`` loops tagged with the unit attribute
``loom.tile`` if there are any, else the outermost ``scf.for`` loops; each must
start a perfect nest of ``len(tile-sizes)`` loops without ``iter_args`` and with
bounds defined outside the nest.
Produces: for every loop ``k`` with ``tile-sizes[k] > 0`` a tile loop
``for t = lb to ub step step*T``, ordered by ``interchange`` (position ``d``
holds original loop ``interchange[d]``), around the point loops in the original
order: ``for i = t to min(t + step*T, ub)`` (``arith.minsi``, dropped when the
tile size statically divides the trip count; computed first thing in the body of
that tile loop, so a copy placed between tile loops can use it); loops with size 0
are not tiled and keep their bounds. The loop body is moved unchanged.
Leaves alone (with a remark on the ``loom.passes`` logger): imperfect nests,
nests shallower than the tile sizes, loops with ``iter_args``, non-rectangular
nests. Dependences are not checked: the nest must be fully permutable (true for
loops lowered from linalg ops).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from loom.errors import LoomError
from loom.passes.loop_nests import (
    band_roots,
    still_in,
    constant_int,
    new_loop,
    perfect_band,
    remarks,
    replace_band,
    where,
)

TAG = "loom.tile"


@dataclass(frozen=True)
class ScfTileAndInterchangePass(ModulePass):
    name = "scf-tile-and-interchange"

    tile_sizes: tuple[int, ...] = ()
    interchange: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        sizes = tuple(self.tile_sizes)
        if not sizes:
            raise LoomError(f"{self.name}: tile-sizes is required, e.g. tile-sizes=32,32")
        if any(s < 0 for s in sizes):
            raise LoomError(f"{self.name}: tile-sizes must be >= 0, got {list(sizes)}")
        if self.interchange and sorted(self.interchange) != list(range(len(sizes))):
            raise LoomError(
                f"{self.name}: interchange {list(self.interchange)} is not a permutation "
                f"of 0..{len(sizes) - 1} (one entry per tile size)"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        depth = len(self.tile_sizes)
        order = list(self.interchange) or list(range(depth))
        for root in band_roots(op, TAG):
            if not still_in(root, op):  # erased with an enclosing band
                continue
            band = perfect_band(root, depth)
            if isinstance(band, str):
                remarks.warning("%s: %s: left alone: %s", self.name, where(root), band)
                continue
            _tile(band, list(self.tile_sizes), order)


def _tile(loops: list[scf.ForOp], sizes: list[int], order: list[int]) -> None:
    if not any(sizes):
        return
    root = loops[0]
    block = root.parent_block()
    assert block is not None

    def before_root(new_op: Operation) -> SSAValue:
        block.insert_op_before(new_op, root)
        return new_op.results[0]

    tile_steps: dict[int, SSAValue] = {}
    divides: dict[int, bool] = {}
    for k, loop in enumerate(loops):
        if sizes[k] == 0:
            continue
        step = constant_int(loop.step)
        if step is not None:
            tile_steps[k] = before_root(arith.ConstantOp(IntegerAttr(step * sizes[k], loop.step.type)))
        else:
            size = before_root(arith.ConstantOp(IntegerAttr(sizes[k], loop.step.type)))
            tile_steps[k] = before_root(arith.MuliOp(loop.step, size))
        lb, ub = constant_int(loop.lb), constant_int(loop.ub)
        divides[k] = (None not in (lb, ub, step)
                      and (ub - lb) % (step * sizes[k]) == 0)  # type: ignore[operator]

    # Tile loops, outermost first, in interchange order. Each computes its point loop's bounds
    # first thing in its body (not deeper: a copy hoisted above the inner tile loops can use them).
    outer: scf.ForOp | None = None
    cursor: Block | None = None
    blocks: list[Block] = []
    point_bounds: dict[int, tuple[SSAValue, SSAValue]] = {}
    for k in (k for k in order if sizes[k] > 0):
        loop = loops[k]
        tile_loop, body = new_loop(loop.lb, loop.ub, tile_steps[k])
        outer = outer or tile_loop
        if cursor is not None:
            cursor.add_op(tile_loop)
        cursor = body
        blocks.append(body)
        end = arith.AddiOp(body.args[0], tile_steps[k])
        body.add_op(end)
        ub: SSAValue = end.result
        if not divides[k]:
            clamp = arith.MinSIOp(ub, loop.ub)
            body.add_op(clamp)
            ub = clamp.result
        point_bounds[k] = (body.args[0], ub)

    # Point loops in the original order.
    point_ivs: list[SSAValue] = []
    for k, loop in enumerate(loops):
        lb, ub = point_bounds.get(k, (loop.lb, loop.ub))
        point, body = new_loop(lb, ub, loop.step)
        point_ivs.append(body.args[0])
        if cursor is not None:
            cursor.add_op(point)
        outer = outer or point
        cursor = body
        blocks.append(body)

    # Terminate every new block except the innermost, which receives the body.
    assert outer is not None and cursor is not None
    for new_block in blocks[:-1]:
        new_block.add_op(scf.YieldOp())
    replace_band(loops, cursor, point_ivs, outer)
