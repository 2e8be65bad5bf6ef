"""olympus-replication: copy the whole system while resources stay under the utilisation limit.

Matches: a module of olympus channels, kernels and PCs. Produces: R copies in total, R the
largest count with every resource <= limit x available (``limit`` option, default the
platform's, itself 80% by default); copies' kernels carry ``replica = 1..R-1``; copied PCs
keep their ids (§5.4.2). Leaves alone: the module when not even two copies fit.
``max_copies`` (default 256) bounds R: a kernel declaring next to no resources (``ff = 1``, a typo
or a stub) would otherwise ask for 10^5 copies, and cloning them took minutes for no meaningful design.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from loom.dialects.olympus import RESOURCES
from loom.errors import LoomError
from loom.passes.olympus_common import clone_system, platform_of, system_ops
from loom.passes.olympus_model import kernels, plm_brams


MAX_COPIES = 256


def max_copies(used: dict[str, int], platform, limit: float, most: int = MAX_COPIES) -> int:
    fits = [int(limit * platform.resources[r] // used[r]) for r in RESOURCES if used[r] > 0]
    return max(1, min(most, *fits)) if fits else 1


@dataclass(frozen=True)
class OlympusReplicationPass(ModulePass):
    name = "olympus-replication"
    platform: str = ""
    limit: float = 0.0  # 0: the platform's utilization_limit
    max_copies: int = MAX_COPIES

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plat = platform_of(self.platform, self.name)
        limit = self.limit or plat.utilization_limit
        used = {r: sum(k.resources()[r] for k in kernels(op)) for r in RESOURCES}
        used["bram"] += plm_brams(op)  # on-chip buffers of small channels are copied with the system
        if self.max_copies < 1:
            raise LoomError(f"{self.name}: max_copies must be >= 1, got {self.max_copies}", where=self.name)
        copies = max_copies(used, plat, limit, self.max_copies)
        original = system_ops(op)
        for r in range(1, copies):
            op.body.block.add_ops(clone_system(original, r))
