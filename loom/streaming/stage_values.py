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
        view = _translated(array, rows, offs, divs, it.extents)
        if view is None:
            idx = [np.broadcast_to(affine_index(r, c, grids, d), shape) for r, c, d in zip(rows, offs, divs)]
            lo = [int(ix.min()) for ix in idx]
            hi = [int(ix.max()) for ix in idx]
        else:
            lo, hi = view[1], view[2]
        for j, (a, b, e) in enumerate(zip(lo, hi, reversed(array.shape))):
            if a < 0 or b >= e:
                raise LoomError(f"port '{port}' reads outside the buffer's {e} entries in dimension {j}",
                                where=f"ubuf.buffer @{buf}")
        ports.append(array[tuple(reversed(idx))] if view is None else view[0](array))
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


def _translated(array, rows, offs, divs, extents):
    """For an access that is a translation (index_j = p_k + c_j, each loop dim used once, no division): a
    function slicing the buffer into the consumer's iteration shape, and the index range per dim; else None."""
    nd_c = len(extents)
    used = {}
    for j, (row, d) in enumerate(zip(rows, divs)):
        nz = [(k, a) for k, a in enumerate(row) if a]
        if d != 1 or len(nz) > 1 or (nz and (nz[0][1] != 1 or nz[0][0] in used.values())):
            return None
        if nz:
            used[j] = nz[0][0]
    lo = [c for c in offs]
    hi = [c + (extents[used[j]] - 1 if j in used else 0) for j, c in enumerate(offs)]

    def take(buf):
        index, src = [], []
        for j in reversed(range(len(rows))):  # storage order: last dim first
            if j in used:
                index.append(slice(offs[j], offs[j] + extents[used[j]]))
                src.append(used[j])
            else:
                index.append(offs[j])
        sub = buf[tuple(index)]
        order = sorted(src, reverse=True)  # consumer storage order
        if len(src) > 1:
            sub = sub.transpose([src.index(k) for k in order])
        shape = [extents[k] if k in src else 1 for k in reversed(range(nd_c))]
        return np.broadcast_to(sub.reshape(shape), tuple(reversed(extents)))

    return take, lo, hi


__all__ = ["stage_values"]
