"""Windows of index expressions no affine or piecewise form describes (a resize's float index
``i32(floor((y + 0.5) * sy))``), measured tile by tile.

Halide bounds such an index at run time with interval arithmetic over each tile. loom's buffers have static
extents, so the window is a runtime start plus a constant span: the start is the index itself at the tile's
first point (emitted with the same scalar lowering the reads use, so it is the value the C computes), the
span the least and greatest index less that start over every point of every tile the open loops place, found
by evaluating the index with ``lp.evaluate``'s semantics (bit-exact with the C). Each tile then computes a
window as long as its own reads need, not the producer's whole region. The window may start before or end
after what a given tile reads, so it is ``widened``: its base is clamped into the producer's whole region.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from .cpu_index_facts import assignments, evaluate
from .cpu_scalar import ScalarEmitter, const_index, to_index
from .expr import Call, RVar, Var, walk
from .mathfn import MathCall
from .param import Param

# the tiles times the points per tile evaluated at compile time (a few MB of int64)
MAX_SAMPLES = 1 << 21
# math the reference evaluates bit for bit as the C computes it (correctly rounded); libm's exp, sin, ... may
# differ from it by an ulp, so an index through them could start a window one element off
EXACT_MATH = ("sqrt", "floor", "ceil", "round", "trunc", "fma")


def sampled_window(indices: list, env: dict, ssa: SSAValue, emit):
    """(start, lo, hi): every value of ``indices`` on every tile lies within ``start + [lo, hi]``, ``start`` the
    first index at the tile's first point, emitted where the builder stands; None when an index reads data or a
    Param, a Var is not in ``env``, or the open loops place too many tiles."""
    if emit is None or not getattr(emit, "ivs", None):
        return None
    names: list[str] = []
    for e in indices:
        for v in walk(e):
            if isinstance(v, (Call, Param)) or (isinstance(v, MathCall) and v.name not in EXACT_MATH):
                return None
            if isinstance(v, (Var, RVar)) and v.name not in names:
                if v.name not in env or env[v.name].ssa not in (None, ssa):
                    return None
                names.append(v.name)
    points = assignments([ssa], emit.ivs)
    if not points:
        return None
    per_tile = int(np.prod([env[n].extent for n in names], dtype=np.int64)) if names else 1
    if len(points) * per_tile > MAX_SAMPLES:
        return None
    bases = np.array([evaluate(ssa, p) for p in points], dtype=np.int64)
    grids = _grids(names, env, ssa, bases)
    # the start: the first index at the first point of each tile (each Var's least value)
    firsts = {n: g.reshape(len(bases), -1)[:, :1] for n, g in grids.items()}
    start_values = _values(indices[0], firsts).reshape(len(bases), -1)[:, 0]
    lo, hi = None, None
    for e in indices:
        vals = _values(e, grids).reshape(len(bases), -1) - start_values[:, None]
        lo = vals.min() if lo is None else min(lo, vals.min())
        hi = vals.max() if hi is None else max(hi, vals.max())
    start = emit.once(("sampled", id(indices[0]), id(ssa)), lambda: _emit_first(indices[0], env))
    return start, int(lo), int(hi)


def _grids(names: list[str], env: dict, ssa: SSAValue, bases: np.ndarray) -> dict[str, np.ndarray]:
    """Each Var's value at every (tile, point): shape (tiles, extent of names[0], extent of names[1], ...)."""
    grids = {}
    for axis, n in enumerate(names):
        r = env[n]
        offsets = np.arange(r.lo, r.hi + 1, dtype=np.int64)
        shape = [1] * (len(names) + 1)
        shape[axis + 1] = len(offsets)
        moved = bases[:, None] if r.ssa is ssa else np.zeros((len(bases), 1), np.int64)
        full = [len(bases)] + [env[m].extent for m in names]
        grids[n] = np.broadcast_to((moved + offsets[None, :]).reshape([len(bases)] + shape[1:]), full)
    return grids


def _values(e, grids: dict[str, np.ndarray]) -> np.ndarray:
    """``e`` over the grids with ``lp.evaluate``'s semantics, as int64."""
    from .evaluate import Evaluator  # evaluate imports the lowering's neighbours: resolved at call time
    env = {n: g.astype(np.int32) for n, g in grids.items()}
    with np.errstate(all="ignore"):
        out = Evaluator({}).eval(e, env)
    shape = next(iter(grids.values())).shape if grids else (1,)
    return np.broadcast_to(np.asarray(out).astype(np.int64), shape)


def _emit_first(e, env: dict) -> SSAValue:
    """``e`` at each Var's least value, as an index (the reads' own lowering of it)."""
    values = {}
    for v in walk(e):
        if isinstance(v, (Var, RVar)) and v.name not in values:
            r = env[v.name]
            first = const_index(r.lo) if r.ssa is None else \
                r.ssa if r.lo == 0 else arith.AddiOp(r.ssa, const_index(r.lo)).result
            values[v.name] = arith.IndexCastOp(first, i32).result
    emitter = ScalarEmitter(values, load=None)
    return to_index(emitter.emit(e), e.type)
