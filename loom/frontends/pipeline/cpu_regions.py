"""Regions of Funcs computed inside a loop, as a runtime base plus constant offsets.

A dimension's range inside a loop body is ``SymRange(ssa, lo, hi)``: the values
``ssa + lo .. ssa + hi`` where ``ssa`` is an ``index`` value known at run time
(``None`` for a constant range). Extents are always compile-time constants, so
every buffer has a static shape.

An index expression's range follows its affine form (``index_forms.to_affine``) in the one runtime base
its Vars move with: ``x + r.x`` moves rigidly with it; ``2 * x`` sits on ``2 * base``; ``x / 2`` (up-sampling)
on ``floor(base / 2)``, one element wider than any tile needs, since which values a tile needs depends on the
base's remainder. That window is ``widened``: ``finish`` clamps its base into the Func's whole-pipeline
region, which the extra element could otherwise leave (reading past an input's end). Other expressions of one
base (``x % 2``, ``(x / 2) * 2``, ``min(x + 1, 99)``, ``select``, a ranged Param) take the windows of
``cpu_windows``, widened unless interval arithmetic gives their ends. Anything else (two bases, a product of
two moving values, data-dependent) falls back to the Func's whole-pipeline region from ``infer_bounds``, which is
always large enough.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from math import gcd

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from loom.core.affine import Affine

from .bounds import INF, interval, round_up_factors
from .cpu_plan import Plan, realised_calls
from .cpu_index_facts import assignments, congruence, evaluate, value_range
from .cpu_sampled_windows import sampled_window
from .cpu_round_up import computed_outside, rounded
from .cpu_scalar import const_index
from .cpu_windows import BASE, Window, base_value, join, window
from .expr import Call, RVar, Var, walk
from .func import ImageParam
from .index_forms import FloorDiv, NotAffine, to_affine

_BASE = object()  # the runtime base's key in an affine form


@dataclass(frozen=True)
class SymRange:
    ssa: SSAValue | None
    lo: int
    hi: int
    # may hold an element no one reads (``x / 2``): its base is clamped into whatever range it must stay in
    widened: bool = False
    # (ssa or None, k): a Var's values past ``ssa + k`` are not computed (a GuardWithIf tile past the end)
    last: tuple | None = None

    @property
    def extent(self) -> int:
        return self.hi - self.lo + 1


def constant_region(region) -> list[SymRange]:
    return [SymRange(None, int(lo), int(hi)) for lo, hi in region]


def _vars_in(e) -> set[str]:
    """The Vars (and RVars: a producer at an update's loop) that move ``e``'s value: not those inside a read's
    arguments (``x + select(sector[x, y] == 0, 1, -1)`` moves with x alone; the read's value range bounds the
    rest, as in Halide, where the whole producer region was taken for each tile)."""
    if isinstance(e, (Var, RVar)):
        return {e.name}
    if isinstance(e, Call):
        return set()
    return set().union(*map(_vars_in, e.children()))


def sym_interval(e, env: dict[str, SymRange], fallback: tuple[int, int], emit=None,
                 several_bases: bool = False) -> SymRange:
    """Range of index expression ``e`` given the ranges of its Vars. ``emit`` (a ``RegionInference``) gives
    ``k * base`` and ``floor(base / d)`` for expressions moving with a multiple or a fraction of the base;
    ``several_bases``: a sum of Vars moving with different bases (``y + r.y`` with both loops open) is the sum of
    the bases, emitted where the builder stands, plus a constant range. Read at a Var whose range is widened (a
    GuardWithIf tile past the end), a moving range is widened too."""
    r = _sym_interval(e, env, fallback, emit, several_bases)
    if r.widened:
        r = per_tile([e], env, r, emit)
    if r.ssa is not None and not r.widened and any(env[n].widened for n in _vars_in(e) if n in env):
        return SymRange(r.ssa, r.lo, r.hi, widened=True)
    return r


def _sym_interval(e, env: dict[str, SymRange], fallback: tuple[int, int], emit, several_bases: bool) -> SymRange:
    names = _vars_in(e)
    bases = {id(env[n].ssa): env[n].ssa for n in names if n in env and env[n].ssa is not None}
    numeric = {n: (r.lo, r.hi) for n, r in env.items()}
    if len(bases) > 1:
        summed = _sum_of_bases(e, env, bases) if several_bases else None
        return SymRange(None, *fallback) if summed is None else summed
    lo, hi = interval(e, numeric)
    if lo in (-INF, INF) or hi in (-INF, INF):
        return SymRange(None, *fallback)
    if not bases:
        form = _base_form(e, env, None)  # an affine index's exact range (intervals lose 2x - x's correlation)
        if form is not None and form[:2] == (0, 1):
            lo, hi = max(lo, form[2]), min(hi, form[3])
        lo, hi = max(lo, fallback[0]), min(hi, fallback[1])
        return SymRange(None, int(lo), int(hi)) if lo <= hi else SymRange(None, *fallback)
    (ssa,) = bases.values()
    form = _base_form(e, env, ssa)
    if form is not None:
        k, d, lo, hi = form
        if (k, d) == (1, 1):
            return SymRange(ssa, lo, hi)
        if emit is not None and k > 1 and d == 1:
            return SymRange(emit.scaled(ssa, k), lo, hi)  # e = k * (base + v) + ...: exact
        if emit is not None and k == 1 and d > 1:
            return emit.fraction(ssa, d, lo, hi)
    return _windowed(e, env, ssa, fallback, emit) or _sampled([e], env, ssa, emit) or SymRange(None, *fallback)


def _sampled(indices: list, env: dict[str, SymRange], ssa, emit) -> SymRange | None:
    """The window ``cpu_sampled_windows`` measures (a float index), widened: its base is clamped into the
    producer's whole region."""
    got = sampled_window(indices, env, ssa, emit)
    return None if got is None else SymRange(got[0], got[1], got[2], widened=True)


def _windowed(e, env: dict[str, SymRange], ssa, fallback: tuple[int, int], emit) -> SymRange | None:
    """``e``'s range from its ``cpu_windows`` window; None without one."""
    return _from_window(window(e, env, ssa), ssa, fallback, emit)


def _from_window(w: Window | None, ssa, fallback: tuple[int, int], emit) -> SymRange | None:
    """The range of window ``w`` on base ``ssa`` (a constant one within ``fallback``); None without one."""
    if w is None:
        return None
    if w.base.is_const:
        lo, hi = max(w.lo, fallback[0]), min(w.hi, fallback[1])
        return SymRange(None, lo, hi) if lo <= hi else None
    if w.base == Affine.var(BASE):
        return SymRange(ssa, w.lo, w.hi, w.widened)
    return None if emit is None else SymRange(base_value(w.base, ssa, emit), w.lo, w.hi, w.widened)


def joint_interval(indices: list, env: dict[str, SymRange], fallback: tuple[int, int], emit) -> SymRange:
    """The range of several reads' indices along one dimension: the union of their ranges, or, when those sit on
    different values of one base (``clamp(x - 1, 0, w)`` beside ``clamp(x + 1, 0, w)``), of their joined
    ``cpu_windows`` windows, or (``min(x + 1, 30)`` beside ``max(x - 1, 0)``, which no window joins) a window on
    one of their bases sized per tile (``per_tile``), whichever is narrowest."""
    ranges = [sym_interval(a, env, fallback, emit) for a in indices]
    out = reduce(lambda a, b: union([a], [b], [fallback])[0], ranges)
    if out.ssa is not None or len({r.ssa for r in ranges}) == 1:
        return out
    bases = {id(env[n].ssa): env[n].ssa for a in indices for n in _vars_in(a) if n in env and env[n].ssa is not None}
    if len(bases) != 1:
        return out
    (ssa,) = bases.values()
    joined = _from_window(reduce(join, [window(a, env, ssa) for a in indices]), ssa, fallback, emit)
    best = out if joined is None else per_tile(indices, env, joined, emit)
    sampled = _sampled(indices, env, ssa, emit) if joined is None else None
    if sampled is not None and sampled.extent < best.extent:
        best = sampled
    for base in dict.fromkeys([ssa, *(r.ssa for r in ranges if r.ssa is not None), _least_start(ranges, emit)]):
        span = _per_tile_span(indices, env, ssa, base, emit)
        if span is not None and span[1] - span[0] + 1 < best.extent:
            best = SymRange(base, *span, widened=True)
    return best


def _deeper_rounding(f, region: list[SymRange], computed: list[SymRange], whole) -> list[SymRange]:
    """``computed`` (``region`` rounded up as one window) for a Func computed at a loop inside this scope: there
    each window inside ``region`` is rounded up from its own start, so it may end past ``region``'s end by as much
    as rounding adds to any extent up to ``region``'s (a window of 2 rounded to 5 near the end of a region of 8
    ends 3 past it, where rounding 8 itself adds 2); a widened inner window's base is clamped into ``f``'s whole
    region ``whole`` (grown by the rounded spans), which may start before ``region`` or end after it (a GuardWithIf
    tile past the end): a constant ``region`` is taken with ``whole``."""
    out = list(computed)
    for i, factors in round_up_factors(f).items():
        r = region[i]
        extra = max(rounded(e, factors) - e for e in range(1, min(r.extent, 1 << 12) + 1)) if r.extent <= 1 << 12 \
            else sum(factors)
        lo, hi = (min(r.lo, whole[i][0]), max(r.hi, whole[i][1])) if r.ssa is None else (r.lo, r.hi)
        out[i] = SymRange(r.ssa, lo, max(computed[i].hi, hi + extra), r.widened)
    return out


def _least_start(ranges: list[SymRange], emit) -> SSAValue:
    """The least first value of ``ranges`` (``min(b - 1, min(b, 20))`` for ``x - 1`` beside ``min(x, 20)``):
    the start of their union, where Halide's per-tile region starts."""
    def start(r: SymRange) -> SSAValue:
        if r.ssa is None:
            return const_index(r.lo)
        return r.ssa if r.lo == 0 else emit.once(("add", id(r.ssa), r.lo),
                                                 lambda: arith.AddiOp(r.ssa, const_index(r.lo)).result)
    starts = [start(r) for r in ranges]
    least = starts[0]
    for s in starts[1:]:
        least = emit.once(("min", id(least), id(s)), lambda a=least, b=s: arith.MinSIOp(a, b).result)
    return least


def per_tile(indices: list, env: dict[str, SymRange], r: SymRange, emit) -> SymRange:
    """Widened window ``r`` of ``indices`` narrowed to what Halide realises per tile (``_per_tile_span``).
    ``min(x / 2, 14)`` over tiles of 8 with a ShiftInwards tail at 23: its window ``min(floor(b / 2), 14) +
    [0, 4]`` covers an odd base anywhere, but the only odd base is the one the min clamps: [0, 3]."""
    if r.ssa is None:
        return r
    bases = {id(env[n].ssa): env[n].ssa for a in indices for n in _vars_in(a) if n in env and env[n].ssa is not None}
    if len(bases) != 1:
        return r
    (ssa,) = bases.values()
    span = _per_tile_span(indices, env, ssa, r.ssa, emit)
    if span is None:
        return r
    lo, hi = max(r.lo, span[0]), min(r.hi, span[1])
    return r if lo > hi else SymRange(r.ssa, lo, hi, r.widened)


def _per_tile_span(indices: list, env: dict[str, SymRange], ssa: SSAValue, start: SSAValue, emit):
    """(lo, hi): every index lies within ``start + [lo, hi]`` on every tile, when the open loops (``emit.ivs``)
    that the tiles' base ``ssa`` and ``start`` are built of take few enough values: for each of them, the
    interval of the index over the tile the loops place (Halide bounds each tile on its own), less ``start``'s
    value there; None otherwise."""
    if emit is None or not getattr(emit, "ivs", None):
        return None
    caps = {n: v.last for n, v in env.items() if v.ssa is ssa and v.last is not None}
    points = assignments([ssa, start, *(c[0] for c in caps.values() if c[0] is not None)], emit.ivs)
    if not points:
        return None
    lo, hi = INF, -INF
    for point in points:
        memo: dict = {}
        b, s = evaluate(ssa, point, memo), evaluate(start, point, memo)
        numeric = {n: (b + v.lo, b + v.hi) if v.ssa is ssa else (v.lo, v.hi) for n, v in env.items()}
        for n, (cap, k) in caps.items():  # the guard: a tile past the end computes up to the end
            numeric[n] = (numeric[n][0], min(numeric[n][1], k + (0 if cap is None else evaluate(cap, point, memo))))
        if any(a > z for a, z in numeric.values()):
            continue  # no point of this tile is computed
        for a in indices:
            ilo, ihi = interval(a, numeric)
            if ilo in (-INF, INF) or ihi in (-INF, INF):
                return None
            lo, hi = min(lo, ilo - s), max(hi, ihi - s)
    return None if lo == INF else (int(lo), int(hi))


def _sum_of_bases(e, env: dict[str, SymRange], bases: dict) -> SymRange | None:
    """``e`` as (sum of its bases, each once) + a constant range, when it is affine that way; None otherwise."""
    got = _based_form(e, env, lambda r: id(r.ssa) if r.ssa is not None and id(r.ssa) in bases else None)
    if got is None or not isinstance(got[0], Affine) or any(got[0].coef(b) != 1 for b in bases):
        return None
    form, ranges = got
    lo, hi = _span(form - Affine({b: 1 for b in bases}), ranges)
    total = None
    for ssa in bases.values():
        total = ssa if total is None else arith.AddiOp(total, ssa).result
    return SymRange(total, lo, hi)


def _base_form(e, env: dict[str, SymRange], ssa) -> tuple[int, int, int, int] | None:
    """(k, d, lo, hi) when ``e`` is ``floor((k * base + v) / d)``: d = 1 (affine, exact), its values are
    ``k * base + [lo, hi]``; d > 1 (k = 1), v lies in [lo, hi]. None when it is not affine. ``ssa`` None: no
    Var moves with a base (k is 0)."""
    got = _based_form(e, env, lambda r: _BASE if ssa is not None and r.ssa is ssa else None)
    if got is None:
        return None
    form, ranges = got
    num, d = (form.num, form.div) if isinstance(form, FloorDiv) else (form, 1)
    k = num.coef(_BASE)
    rlo, rhi = _span(num - Affine.var(_BASE, k), ranges)
    if k % d == 0:  # floor((k b + r) / d) = (k / d) b + floor(r / d)
        return k // d, 1, rlo // d, rhi // d
    if k == 1:  # which values floor((b + r) / d) takes depends on b's remainder (RegionInference.fraction)
        return 1, d, rlo, rhi
    return None


def _based_form(e, env: dict[str, SymRange], base_key) -> tuple | None:
    """(``e``'s affine form, the ranges of its Vars) with each Var whose range moves with a base written
    ``base_key(range) + var`` (the Var then its offset from the base); None when ``e`` is not affine."""
    forms, ranges = {}, {}
    for n, r in env.items():
        key = base_key(r)
        forms[n] = Affine({key: 1, n: 1}) if key is not None else Affine.var(n)
        ranges[n] = (r.lo, r.hi)
    for v in walk(e):
        if isinstance(v, RVar) and v.name not in forms:
            forms[v.name], ranges[v.name] = Affine.var(v.name), (v.min, v.min + v.extent - 1)
    try:
        return to_affine(e, forms), ranges
    except NotAffine:
        return None


def _span(rest: Affine, ranges: dict) -> tuple[int, int]:
    """The least and greatest value of ``rest`` over its Vars' ranges."""
    lo = rest.const + sum(c * ranges[v][0 if c > 0 else 1] for v, c in rest.terms.items())
    hi = rest.const + sum(c * ranges[v][1 if c > 0 else 0] for v, c in rest.terms.items())
    return lo, hi


def union(a: list[SymRange] | None, b: list[SymRange], fallback) -> list[SymRange]:
    if a is None:
        return list(b)
    out = []
    for ra, rb, fb in zip(a, b, fallback):
        if ra.ssa is rb.ssa:
            out.append(SymRange(ra.ssa, min(ra.lo, rb.lo), max(ra.hi, rb.hi), ra.widened or rb.widened))
        else:
            out.append(SymRange(None, *fb))
    return out


class RegionInference:
    """Bounds inference below one loop level (a "scope") of the loop nest."""

    def __init__(self, plan: Plan, global_regions: dict, allocation: dict | None = None):
        self.plan = plan
        self.global_regions = global_regions  # id -> [(lo, hi)] from infer_bounds
        self.allocation = allocation or {}  # id -> [(lo, hi)]: storage past the region (infer_bounds)
        self.touched: dict[int, list[SymRange]] = {}  # ``below``'s storage past the regions (rounded-up reads)
        self._ids = {id(f) for f in plan.realised_funcs}
        self.unclipped: dict[int, SSAValue] = {}  # id of a clamped base -> the base before (cpu_round_up)
        self._emitted: dict = {}  # (op, id of a base, k) -> its value within one ``below`` (one insertion point)
        self.ivs: dict[int, tuple[int, int]] = {}  # id of an open loop's index -> its first and last value
        self.caps: list = []  # (offset, last value) of the GuardWithIf guards enclosing the scope (value_range)
        # id(f) -> per dim, the union over the tiles of f's RoundUp-rounded windows (None: not rounded)
        self.rounded_spans: dict[int, list] = {}

    def new_scope(self):
        """Forget the values emitted so far: those of another scope need not dominate where the builder stands."""
        self._emitted = {}

    def once(self, key, make) -> SSAValue:
        """A value computed from a base, emitted once where the builder stands (the scope being inferred)."""
        if key not in self._emitted:
            self._emitted[key] = make()
        return self._emitted[key]

    def scaled(self, ssa: SSAValue, k: int) -> SSAValue:
        """``k * ssa``."""
        return self.once(("mul", id(ssa), k), lambda: arith.MuliOp(ssa, const_index(k)).result)

    def fraction(self, ssa: SSAValue, d: int, lo: int, hi: int) -> SymRange:
        """The values of ``floor((ssa + v) / d)``, v in [lo, hi], as Halide bounds them per tile: where ``ssa``
        has one remainder r modulo d (a tile's base ``xo * 8``), ``floor(ssa / d) + floor((r + [lo, hi]) / d)``,
        exact; otherwise ``floor((ssa + s) / d)`` + [lo // d, ...] with s = lo mod d, as wide as the worst
        remainder of ``ssa + s`` needs (one element less than from ``floor(ssa / d)`` when the remainder is
        free), widened."""
        m, c = congruence(ssa)
        g = gcd(m, d)
        if g == d:
            c %= d
            return SymRange(self.divided(ssa, d), (c + lo) // d, (c + hi) // d)
        s = lo % d
        base = ssa if s == 0 else self.once(("add", id(ssa), s), lambda: arith.AddiOp(ssa, const_index(s)).result)
        worst = (c + s) % g + d - g  # the greatest remainder of ssa + s modulo d
        return SymRange(self.divided(base, d), lo // d, lo // d + (worst + hi - lo) // d, widened=True)

    def divided(self, ssa: SSAValue, d: int) -> SSAValue:
        """``floor(ssa / d)``."""
        return self.once(("div", id(ssa), d), lambda: arith.FloorDivSIOp(ssa, const_index(d)).result)

    def clamped(self, r: SymRange, lo: int, hi: int) -> SymRange:
        """``r`` with its base moved as little as it takes to lie within ``lo .. hi`` (the values anyone reads
        lie there and within ``r``, and ``r`` is no longer than that range, so they stay inside), or the
        whole range when ``r`` is longer."""
        if r.extent > hi - lo + 1:
            return SymRange(None, lo, hi)
        base = self.once(("clamp", id(r.ssa), lo - r.lo, hi - r.hi), lambda: arith.MinSIOp(
            arith.MaxSIOp(r.ssa, const_index(lo - r.lo)).result, const_index(hi - r.hi)).result)
        self.unclipped[id(base)] = r.ssa
        return SymRange(base, r.lo, r.hi, widened=True)

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
        """Apply ``bound`` and widen to what update definitions write (as ``infer_bounds``); a widened window's
        base is clamped into the Func's whole-pipeline region."""
        fb = self.fallback(f)
        out = [self.clamped(r, *fb[i]) if r.widened else r for i, r in enumerate(region)]
        for i, d in enumerate(f.dims):
            if d.name in f.schedule.bounds:
                lo, ext = f.schedule.bounds[d.name]
                out[i] = SymRange(None, lo, lo + ext - 1)
        for stage in range(1, len(f.definitions)):
            args, _ = self.plan.definitions[id(f)][stage]
            env = self.stage_env(f, stage, out)
            for i, a in enumerate(args):
                if not isinstance(a, Var):
                    out[i] = union([out[i]], [sym_interval(a, env, fb[i], self)], [fb[i]])[0]
        for stage in range(1, len(f.definitions)):  # and what they read of f itself (a scan's f[r - 1])
            args, value = self.plan.definitions[id(f)][stage]
            env = self.stage_env(f, stage, out)
            for e in (*args, value):
                for call in realised_calls(e):
                    if call.target is f:
                        for i, (a, c) in enumerate(zip(args, call.args)):
                            if not isinstance(a, Var):
                                out[i] = union([out[i]], [sym_interval(c, env, fb[i], self)], [fb[i]])[0]
        return out

    def round_up(self, f, raw: list[SymRange], region: list[SymRange]) -> list[SymRange]:
        """``region`` (``raw`` finished) with each RoundUp-split dim rounded up from its start, on the same base
        (``cpu_round_up``). The span the rounded windows cover over the open loops, from the raw (unclipped) and
        the finished bases, is recorded in ``rounded_spans``: the lowering grows the Func's whole-pipeline region
        to it and starts again when it reaches past, so that the rounded windows lie inside."""
        out = list(region)
        for i, factors in round_up_factors(f).items():
            r = region[i]
            extent = rounded(r.extent, factors)
            out[i] = SymRange(r.ssa, r.lo, r.lo + extent - 1, r.widened)
            # recorded even when not rounded here: a GuardWithIf tile past the end is clipped, and Halide rounds
            # the clipped window up, which it bounds by the unclipped one
            for w, unclip in ((raw[i], self.unclipped), (r, None)):
                self._record(f, i, len(region), w, extent, unclip)
        return out

    def _record(self, f, i: int, dims: int, w: SymRange, extent: int, unclip):
        starts = (0, 0) if w.ssa is None else value_range(w.ssa, self.ivs, self.caps, unclip)
        fb = self.fallback(f)[i]
        span = (fb[0], fb[1] + extent - w.extent) if starts is None else \
            (starts[0] + w.lo, starts[1] + w.lo + extent - 1)
        spans = self.rounded_spans.setdefault(id(f), [None] * dims)
        old = spans[i]
        spans[i] = span if old is None else (min(old[0], span[0]), max(old[1], span[1]))

    def allocation_fallback(self, target) -> list[tuple[int, int]]:
        """The whole-pipeline storage of ``target``: its region, and what rounded-up points read past it."""
        return [(int(lo), int(hi)) for lo, hi in self.allocation.get(id(target), self.global_regions[id(target)])]

    def _add_calls(self, required: dict, consumer, stage: int, env: dict, stop: set[int], fallback=None):
        fallback = fallback or self.fallback
        args, value = self.plan.definitions[id(consumer)][stage]
        reads: dict[int, tuple] = {}  # id(Func) -> (the Func, the index lists of its reads)
        for e in (*args, value):
            for call in realised_calls(e):
                t = call.target
                if t is consumer or isinstance(t, ImageParam) or id(t) in stop:
                    continue
                reads.setdefault(id(t), (t, []))[1].append(call.args)
        for t, calls in reads.values():
            fb = fallback(t)
            need = [joint_interval([c[i] for c in calls], env, fb[i], self) for i in range(len(fb))]
            required[id(t)] = union(required.get(id(t)), need, fb)

    def below(self, consumer, stage: int, env: dict[str, SymRange], live: set[int],
              placed: set[int] | None = None) -> dict[int, list[SymRange]]:
        """Regions of the non-live Funcs that stage ``stage`` of ``consumer`` needs when its
        Vars range over ``env``, through every Func that will be computed inside. ``placed``: ids of the Funcs
        computed at this scope (None: all); a RoundUp Func computed deeper rounds each of its inner windows, so
        what its extra points read (``touched``) is bounded by its window here grown by the most a rounding adds."""
        required: dict[int, list[SymRange]] = {}
        self.touched = {}
        self.new_scope()
        stop = set(live) | {id(consumer)}
        self._add_calls(required, consumer, stage, env, stop)
        for f in reversed(self.plan.realised_funcs):
            if id(f) not in required:
                continue
            region = self.finish(f, required[id(f)])
            computed = self.round_up(f, required[id(f)], region) if round_up_factors(f) else region
            required[id(f)] = computed
            here = stop | {id(f)}
            # computed deeper, f rounds each inner window: they reach further than this one rounded (a window of
            # 6 rounds to 6 by 3, one of 1 inside it to 3)
            reach = computed if placed is None or id(f) in placed or not round_up_factors(f) else \
                _deeper_rounding(f, region, computed, self.fallback(f))
            if computed == region and reach == region:
                for k in range(len(f.definitions)):
                    self._add_calls(required, f, k, self.stage_env(f, k, region), here)
                continue
            # rounded up: what the extra points read of Funcs computed outside f is storage only (infer_bounds)
            outside = {id(t) for t in self.plan.realised_funcs if computed_outside(self.plan, t, f)}
            inside = self._ids - outside
            for k in range(len(f.definitions)):
                self._add_calls(required, f, k, self.stage_env(f, k, region), here | inside)
                self._add_calls(required, f, k, self.stage_env(f, k, computed), here | outside)
                self._add_calls(self.touched, f, k, self.stage_env(f, k, reach), here | inside,
                                self.allocation_fallback)
        return required

    def storage(self, f, region: list[SymRange]) -> list[SymRange]:
        """``f``'s storage for ``region`` computed in the last ``below``: with what rounded-up points read."""
        extra = self.touched.get(id(f))
        return region if extra is None else union(region, extra, self.allocation_fallback(f))
