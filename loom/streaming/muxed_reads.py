"""Reads whose index is not affine but takes few values: one read port per value and a multiplexer in the kernel.

A channel concatenation (``select(c < 2, a[x, y, clamp(c, 0, 1)], b[x, y, clamp(c - 2, 0, 2)])``), a pixel
shuffle (``f[x / 2, y / 2, (x % 2) * 2 + y % 2]``) or a channel picked by data (``f[x, y, g[x, y] & 3]``) index a
buffer with an expression unified buffers cannot address. When such a component's values lie in a small interval
(bounds inference's, as Halide's), the read is the select among the reads at each value of it, each of which is
affine: the stage gets a port per value and its kernel compares the index with each value. A copy of a stage
whose coordinates make the index constant (a concatenation's channel computed in space) folds the multiplexer
away, as the netlist folds any select on a constant.
"""

from __future__ import annotations

import itertools
import math

from loom.frontends.pipeline.bounds import interval
from loom.frontends.pipeline.index_forms import Affine, NotAffine, to_affine

# the most values a read's non-affine components may take together: each is a read port and a select in the kernel
MUX_LIMIT = 16


def muxed_indices(args, env: dict) -> tuple[list, list]:
    """(the position of each non-affine component, every index tuple the read may take), each tuple affine;
    raises ``NotAffine`` (of the first such component) when one's values are not bounded by ``MUX_LIMIT`` in all.
    ``env`` binds Vars/RVars to affine forms (``to_affine``'s)."""
    forms, muxed, first = [], [], None
    for j, a in enumerate(args):
        try:
            forms.append([to_affine(a, env)])
        except NotAffine as na:
            lo, hi = interval(a, {k: (v.const, v.const) for k, v in env.items()
                                  if isinstance(v, Affine) and v.is_const})
            first = first or na
            if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo + 1 > MUX_LIMIT:
                raise na
            forms.append([Affine.constant(k) for k in range(int(lo), int(hi) + 1)])
            muxed.append(j)
    if math.prod(len(f) for f in forms) > MUX_LIMIT:
        raise first
    return muxed, list(itertools.product(*forms))


def mux_guard(target, muxed, index) -> tuple:
    """A multiplexer input's condition (``ReadAccess.guard``): ``target``'s region holds its index in each
    multiplexed dim, else no point of the tile selects it."""
    return tuple((target, j, index[j].const) for j in muxed)


def limit_hint() -> str:
    return (f"a non-affine index is read through a multiplexer when its values lie in an interval of at most "
            f"{MUX_LIMIT} (clamp it, or take it modulo a constant)")
