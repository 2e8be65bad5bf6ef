"""RoundUp splits of Funcs computed inside a loop (Halide's ``TailStrategy.RoundUp`` below the root).

A Func split by ``f`` with RoundUp (or PredicateLoads/Stores, the same footprint on the CPU) is computed over its
per-tile region rounded up to a multiple of ``f`` from the region's start, as Halide does; the extra points are
computed but never read, and what they read of the Func's producers grows the producers' regions too.

Halide checks an input against the union over the tiles of those rounded regions, each tile unclipped (a
GuardWithIf tile past the end counts whole). That union is bounded here from the windows' runtime bases: each
base is an expression of the loop indices (sums, constant multiples, min/max, floor division), so its least and
greatest value over the loops' ranges follow by interval arithmetic (``cpu_index_facts.value_range``). The whole-pipeline regions
(``infer_bounds``) of such Funcs are grown to those unions and the pipeline lowered again with them; a window
past them (a clipped tile) has its base clamped into them, as other widened windows.
"""

from __future__ import annotations

from .cpu_index_facts import value_range


def computed_outside(plan, target, f) -> bool:
    """Whether ``target`` is a realised Func computed outside ``f``'s loops: it is computed over what ``f``'s
    points before rounding read (what the extra points read of it is storage only); one computed inside them runs
    over the rounded loops."""
    from .cpu_plan import ROOT
    if id(target) not in plan.realised:
        return False
    level = plan.compute_level[id(target)]
    while level != ROOT:
        if level[1] is f:
            return False
        level = plan.compute_level[id(level[1])]
    return True


def rounded(extent: int, factors: list[int]) -> int:
    for k in factors:
        extent = -(-extent // k) * k
    return extent
