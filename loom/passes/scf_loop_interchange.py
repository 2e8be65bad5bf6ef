"""``scf-loop-interchange{permutation=...}``: permute a perfect ``scf.for`` nest.

Matches: per function, the ``scf.for`` loops tagged with the unit attribute
``loom.interchange`` if there are any, else the outermost ``scf.for`` loops;
each must start a perfect nest of ``len(permutation)`` loops without
``iter_args`` and with bounds defined outside the nest.
Produces: the same nest with loop ``permutation[d]`` at depth ``d`` (bounds
and steps travel with their loop); the body is moved unchanged.
Leaves alone (with a remark on the ``loom.passes`` logger): imperfect or too
shallow nests, loops with ``iter_args``, non-rectangular nests. Dependences are
not checked: the caller asserts the permutation is legal (true for loops
lowered from linalg ops).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass

from loom.errors import LoomError
from loom.passes.loop_nests import (
    band_roots,
    new_loop,
    perfect_band,
    remarks,
    replace_band,
    still_in,
    where,
)

TAG = "loom.interchange"


@dataclass(frozen=True)
class ScfLoopInterchangePass(ModulePass):
    name = "scf-loop-interchange"

    permutation: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        perm = list(self.permutation)
        if len(perm) < 2 or sorted(perm) != list(range(len(perm))):
            raise LoomError(
                f"{self.name}: permutation {perm} is not a permutation of 0..n-1 with n >= 2"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        perm = list(self.permutation)
        for root in band_roots(op, TAG):
            if not still_in(root, op):  # erased with an enclosing band
                continue
            band = perfect_band(root, len(perm))
            if isinstance(band, str):
                remarks.warning("%s: %s: left alone: %s", self.name, where(root), band)
                continue
            _interchange(band, perm)


def _interchange(loops: list[scf.ForOp], perm: list[int]) -> None:
    blocks: list[Block] = []
    ivs: dict[int, SSAValue] = {}
    outer = None
    for k in perm:
        loop, body = new_loop(loops[k].lb, loops[k].ub, loops[k].step)
        if blocks:
            blocks[-1].add_op(loop)
        outer = outer or loop
        blocks.append(body)
        ivs[k] = body.args[0]
    for block in blocks[:-1]:
        block.add_op(scf.YieldOp())
    assert outer is not None
    replace_band(loops, blocks[-1], [ivs[k] for k in range(len(loops))], outer)
