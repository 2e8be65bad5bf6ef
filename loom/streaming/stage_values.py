"""A stage's values in one invocation, computed from the ``ubuf`` IR on what its read ports deliver.

``stage_values(ir, plan, mins, buffers)`` gathers, for every read port the stage's
``ubuf.kernel`` names, the producer's buffer contents at the index the port's access
map (read from the IR) gives at each point of the stage's iteration domain, then
evaluates the kernel's ``init`` region on them (and, for a reduction iterated in
time, its ``update`` region once per iteration, in cycle order). Nothing here
looks at the pipeline's Funcs: a wrong access map or a wrong kernel in the IR gives
wrong values.
"""

from __future__ import annotations

import numpy as np

from loom.errors import LoomError

from .ir_reader import IrDesign
from .kernel_eval import KernelEvaluator, to_numpy
from .scheduler import StagePlan, affine_index


def stage_values(ir: IrDesign, plan: StagePlan, mins, buffers: dict) -> np.ndarray:
    kernel = ir.kernel(plan.name)
    where = f"ubuf.kernel '{plan.name}'"
    it = plan.iteration()
    n, nr = len(plan.extents), len(plan.red_extents)
    shape = tuple(it.extents[::-1])
    grids = it.grids()
    ports = []
    for buf, port in kernel.read_ports():
        rows, offs, divs = ir.access(buf, port)
        if any(len(r) != len(it.extents) for r in rows):
            raise LoomError(f"the access map of port '{port}' takes {len(rows[0]) if rows else 0} loop dimensions; "
                            f"the stage iterates {len(it.extents)}", where=f"ubuf.buffer @{buf}")
        src = buffers.get(buf)
        if src is None:
            raise LoomError(f"reads buffer @{buf}, which holds nothing yet", where=where)
        array = src.array
        if len(rows) != array.ndim:
            raise LoomError(f"port '{port}' gives {len(rows)} indices; @{buf} has {array.ndim} dimensions",
                            where=f"ubuf.buffer @{buf}")
        idx = [np.broadcast_to(affine_index(r, c, grids, d), shape) for r, c, d in zip(rows, offs, divs)]
        for j, (ix, e) in enumerate(zip(idx, reversed(array.shape))):
            if ix.min() < 0 or ix.max() >= e:
                raise LoomError(f"port '{port}' reads outside the buffer's {e} entries in dimension {j}",
                                where=f"ubuf.buffer @{buf}")
        ports.append(array[tuple(reversed(idx))])
    coords = [(np.int64(m) + g).astype(np.int32) for m, g in zip(mins, plan.grids())]
    ev = KernelEvaluator(ir.tables, where)
    first = (0,) * nr
    if not kernel.init.blocks:
        raise LoomError("the kernel has no init region", where=where)
    value = ev.run(kernel.init.block, coords + [p[first] for p in ports])
    if nr:
        if not kernel.update.blocks:
            raise LoomError(f"the stage iterates a reduction in time ({plan.reduction_cycles} cycles) but its "
                            "kernel has no update region", where=where)
        for t in range(plan.reduction_cycles):
            loops = [(t // s) % e for s, e in zip(plan.red_strides, plan.red_extents)]
            at = tuple(reversed(loops))
            value = ev.run(kernel.update.block, coords + [np.int32(v) for v in loops] + [value] +
                           [p[at] for p in ports])
    elif kernel.update.blocks:
        raise LoomError("the kernel has an update region but the stage iterates nothing in time", where=where)
    return np.ascontiguousarray(np.broadcast_to(to_numpy(value, plan.node.source.type.dtype), shape[nr:]))


__all__ = ["stage_values"]
