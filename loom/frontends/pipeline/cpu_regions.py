"""Regions of Funcs computed inside a loop, as a runtime base plus constant offsets.

A dimension's range inside a loop body is ``SymRange(ssa, lo, hi)``: the values
``ssa + lo .. ssa + hi`` where ``ssa`` is an ``index`` value known at run time
(``None`` for a constant range). Extents are always compile-time constants, so
every buffer has a static shape.

An index expression's range is found with ``bounds.interval`` on the offsets
when it moves rigidly with one runtime base (``x + r.x``: checked by shifting
the base by a large constant and seeing the interval shift by exactly that);
or k times as fast as it (``2 * x``: its range sits on ``k * base``, emitted where the scope's regions are
inferred); anything else (two bases, ``x / 2``, data-dependent) falls back to the Func's
whole-pipeline region from ``infer_bounds``, which is always large enough.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from .bounds import INF, interval
from .cpu_plan import Plan, realised_calls
from .cpu_scalar import const_index
from .expr import RVar, Var, walk
from .func import ImageParam

_SHIFT = 1 << 20


@dataclass(frozen=True)
class SymRange:
    ssa: SSAValue | None
    lo: int
    hi: int

    @property
    def extent(self) -> int:
        return self.hi - self.lo + 1


def constant_region(region) -> list[SymRange]:
    return [SymRange(None, int(lo), int(hi)) for lo, hi in region]


def _vars_in(e) -> set[str]:
    return {x.name for x in walk(e) if isinstance(x, (Var, RVar))}  # RVars: a producer at an update's loop


def sym_interval(e, env: dict[str, SymRange], fallback: tuple[int, int], scaled=None) -> SymRange:
    """Range of index expression ``e`` given the ranges of its Vars. ``scaled(ssa, k)`` (optional) gives the
    value ``k * ssa``, for an expression moving k times as fast as its base (a consumer reading ``2 * x``)."""
    names = _vars_in(e)
    bases = {id(env[n].ssa): env[n].ssa for n in names if n in env and env[n].ssa is not None}
    numeric = {n: (r.lo, r.hi) for n, r in env.items()}
    if len(bases) > 1:
        return SymRange(None, *fallback)
    lo, hi = interval(e, numeric)
    if lo in (-INF, INF) or hi in (-INF, INF):
        return SymRange(None, *fallback)
    if not bases:
        lo, hi = max(lo, fallback[0]), min(hi, fallback[1])
        return SymRange(None, int(lo), int(hi)) if lo <= hi else SymRange(None, *fallback)
    (ssa,) = bases.values()
    shifted = {n: (r.lo + _SHIFT, r.hi + _SHIFT) if r.ssa is ssa else (r.lo, r.hi) for n, r in env.items()}
    lo2, hi2 = interval(e, shifted)
    if (lo2, hi2) == (lo + _SHIFT, hi + _SHIFT):
        return SymRange(ssa, int(lo), int(hi))
    k = (lo2 - lo) // _SHIFT
    if scaled is not None and k > 1 and (lo2 - lo, hi2 - hi) == (k * _SHIFT, k * _SHIFT):
        return SymRange(scaled(ssa, int(k)), int(lo), int(hi))  # e = k * (base + v) + ...: exact
    return SymRange(None, *fallback)


def union(a: list[SymRange] | None, b: list[SymRange], fallback) -> list[SymRange]:
    if a is None:
        return list(b)
    out = []
    for ra, rb, fb in zip(a, b, fallback):
        if ra.ssa is rb.ssa:
            out.append(SymRange(ra.ssa, min(ra.lo, rb.lo), max(ra.hi, rb.hi)))
        else:
            out.append(SymRange(None, *fb))
    return out


class RegionInference:
    """Bounds inference below one loop level (a "scope") of the loop nest."""

    def __init__(self, plan: Plan, global_regions: dict):
        self.plan = plan
        self.global_regions = global_regions  # id -> [(lo, hi)] from infer_bounds
        self._scaled: dict = {}  # (id of a base, k) -> k * base within one ``below`` (one insertion point)

    def scaled(self, ssa: SSAValue, k: int) -> SSAValue:
        """``k * ssa``, emitted where the builder stands (the scope whose regions are being inferred)."""
        key = (id(ssa), k)
        if key not in self._scaled:
            self._scaled[key] = (ssa, arith.MuliOp(ssa, const_index(k)).result)
        return self._scaled[key][1]

    def fallback(self, target) -> list[tuple[int, int]]:
        return [(int(lo), int(hi)) for lo, hi in self.global_regions[id(target)]]

    def stage_env(self, f, stage: int, region: list[SymRange]) -> dict[str, SymRange]:
        d = f.definitions[stage]
        env = {}
        for i, a in enumerate(d.args):
            if isinstance(a, Var):
                env[a.name] = region[i]
        return env

    def finish(self, f, region: list[SymRange]) -> list[SymRange]:
        """Apply ``bound`` and widen to what update definitions write (as ``infer_bounds``)."""
        fb = self.fallback(f)
        out = list(region)
        for i, d in enumerate(f.dims):
            if d.name in f.schedule.bounds:
                lo, ext = f.schedule.bounds[d.name]
                out[i] = SymRange(None, lo, lo + ext - 1)
        for stage in range(1, len(f.definitions)):
            args, _ = self.plan.definitions[id(f)][stage]
            env = self.stage_env(f, stage, out)
            for i, a in enumerate(args):
                if not isinstance(a, Var):
                    out[i] = union([out[i]], [sym_interval(a, env, fb[i], self.scaled)], [fb[i]])[0]
        for stage in range(1, len(f.definitions)):  # and what they read of f itself (a scan's f[r - 1])
            args, value = self.plan.definitions[id(f)][stage]
            env = self.stage_env(f, stage, out)
            for e in (*args, value):
                for call in realised_calls(e):
                    if call.target is f:
                        for i, (a, c) in enumerate(zip(args, call.args)):
                            if not isinstance(a, Var):
                                out[i] = union([out[i]], [sym_interval(c, env, fb[i], self.scaled)], [fb[i]])[0]
        return out

    def _add_calls(self, required: dict, consumer, stage: int, env: dict, stop: set[int]):
        args, value = self.plan.definitions[id(consumer)][stage]
        for e in (*args, value):
            for call in realised_calls(e):
                t = call.target
                if t is consumer or isinstance(t, ImageParam) or id(t) in stop:
                    continue
                fb = self.fallback(t)
                need = [sym_interval(a, env, fb[i], self.scaled) for i, a in enumerate(call.args)]
                required[id(t)] = union(required.get(id(t)), need, fb)

    def below(self, consumer, stage: int, env: dict[str, SymRange], live: set[int]) -> dict[int, list[SymRange]]:
        """Regions of the non-live Funcs that stage ``stage`` of ``consumer`` needs when its
        Vars range over ``env``, through every Func that will be computed inside."""
        required: dict[int, list[SymRange]] = {}
        self._scaled = {}  # values emitted for another scope need not dominate this one
        stop = set(live) | {id(consumer)}
        self._add_calls(required, consumer, stage, env, stop)
        for f in reversed(self.plan.realised_funcs):
            if id(f) not in required:
                continue
            region = self.finish(f, required[id(f)])
            required[id(f)] = region
            for k in range(len(f.definitions)):
                self._add_calls(required, f, k, self.stage_env(f, k, region), stop | {id(f)})
        return required
