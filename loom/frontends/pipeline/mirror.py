"""Periodic boundary conditions: ``mirror_image``, ``mirror_interior`` and ``repeat_image`` (Halide's
``BoundaryConditions``).

Outside the source's box ``[lo, hi]`` (extent ``n``) the coordinate is mapped back, periodically:
- ``mirror_image`` reflects and repeats the edge pixel: lo-1 -> lo, lo-2 -> lo+1, hi+1 -> hi (period 2n);
- ``mirror_interior`` reflects without repeating it: lo-1 -> lo+1, hi+1 -> hi-1 (period 2n-2; a 1-wide box
  reads lo);
- ``repeat_image`` tiles the box: lo-1 -> hi, hi+1 -> lo (period n).
The same mapping is written twice, once on numpy coordinates (``evaluate``) and once as an index
expression (the CPU lowering), from the one formula in ``_period``.
``BoundaryConditions`` gathers all five conditions under Halide's names.
"""

from __future__ import annotations

import numpy as np

from .expr import BinOp, Const, Select
from .types import Bool

PERIODIC_KINDS = ("mirror_image", "mirror_interior", "repeat_image")


def _period(kind: str, n: int) -> int:
    """Period; ``m`` in [0, period) maps to ``m`` if ``m < n`` else (a mirror) ``period - 1 - m + shift``."""
    return {"mirror_image": 2 * n, "mirror_interior": max(2 * n - 2, 1)}.get(kind, n)


def mirror_coordinates(coords: np.ndarray, lo: int, hi: int, kind: str) -> np.ndarray:
    if lo == -np.inf:  # an unbounded dimension: reads pass through
        return coords
    n = hi - lo + 1
    p = _period(kind, n)
    m = np.mod(coords - lo, p)
    if kind == "repeat_image":
        return lo + m
    reflected = p - 1 - m if kind == "mirror_image" else p - m
    return lo + np.where(m < n, m, reflected)


def mirror_index(a, lo: int, hi: int, kind: str):
    """The index expression reading ``a`` mapped into [lo, hi] (``%`` is Euclidean)."""
    if lo == -np.inf:  # an unbounded dimension: reads pass through
        return a
    t = a.type
    n = hi - lo + 1
    p = _period(kind, n)
    m = BinOp("mod", BinOp("sub", a, Const(lo, t), t), Const(p, t), t)
    if kind == "repeat_image":
        return BinOp("add", m, Const(lo, t), t)
    top = p - 1 if kind == "mirror_image" else p
    reflected = BinOp("sub", Const(top, t), m, t)
    return BinOp("add", Select(BinOp("lt", m, Const(n, t), Bool), m, reflected), Const(lo, t), t)


def source_need(region, box):
    """What a mirrored read of ``region`` needs of the source: the region, or the whole box past an edge."""
    return [(lo, hi) if s0 <= lo and hi <= s1 else (s0, s1) for (lo, hi), (s0, s1) in zip(region, box)]


def mirror_image(source, bounds=None, *, name: str | None = None):
    """Reflect coordinates outside ``bounds`` (else the source's extent), repeating the edge pixel."""
    from .func import boundary_condition
    return boundary_condition(source, "mirror_image", name=name, bounds=bounds)


def mirror_interior(source, bounds=None, *, name: str | None = None):
    """Reflect coordinates outside ``bounds`` (else the source's extent) about the edge pixel (not repeated)."""
    from .func import boundary_condition
    return boundary_condition(source, "mirror_interior", name=name, bounds=bounds)


def repeat_image(source, bounds=None, *, name: str | None = None):
    """Tile the source: coordinates outside ``bounds`` (else the source's extent) wrap around, period the extent."""
    from .func import boundary_condition
    return boundary_condition(source, "repeat_image", name=name, bounds=bounds)


class BoundaryConditions:
    """Halide's namespace: ``BoundaryConditions.mirror_image(inp, bounds)`` etc. ``bounds``, as Halide's,
    gives (min, extent) per dimension; without it the box is the input array's shape for an ImageParam, and
    its ``bound(...)`` directives for a Func."""

    mirror_image = staticmethod(mirror_image)
    mirror_interior = staticmethod(mirror_interior)
    repeat_image = staticmethod(repeat_image)

    @staticmethod
    def repeat_edge(source, bounds=None, *, name: str | None = None):
        from .func import repeat_edge
        return repeat_edge(source, bounds, name=name)

    @staticmethod
    def constant_exterior(source, value, bounds=None, *, name: str | None = None):
        from .func import constant_exterior
        return constant_exterior(source, value, bounds, name=name)
