"""``loom-remove-dead-allocas``: erase ``memref.alloca`` / ``memref.alloc`` results nobody uses.

Matches: allocations whose result has no uses (the shape-only window operands
of pooling ops become such once the pooling op is lowered to loops, because the
window's elements are never read).
Produces: nothing (the op is erased).
Leaves alone: allocations with any use, including a ``memref.dealloc``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class RemoveDeadAllocasPass(ModulePass):
    name = "loom-remove-dead-allocas"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dead = [
            o for o in op.walk()
            if isinstance(o, memref.AllocaOp | memref.AllocOp) and not o.memref.uses
        ]
        for o in dead:
            o.detach()
            o.erase()
