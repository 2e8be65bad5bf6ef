"""Interval arithmetic over expressions and bounds inference for a pipeline.

``infer_bounds`` starts from the requested output region and walks consumers
before producers; each call site's index expressions are evaluated over the
consumer's region (Vars) and RDom ranges (RVars), so stencil halos come out of
the arithmetic. A value read from a Func is bounded by its type's range, which
is how a lookup table indexed by a u8 value gets the region 0..255.
Regions are lists of inclusive (lo, hi) pairs, one per dimension.
"""

from __future__ import annotations

import math

from loom.errors import LoomError

from .expr import BinOp, Call, Cast, Const, RVar, Select, Unary, Var, walk
from .func import BoundaryFunc, Func, ImageParam
from .graph import FuncGraph
from .mathfn import MathCall
from .mirror import PERIODIC_KINDS, source_need
from .param import Param

INF = math.inf
MAX_EXTENT = 1 << 26  # a larger inferred region means an unbounded data-dependent index


def _type_range(t):
    return (t.min_value, t.max_value)


def _fit(iv, t):
    """Clamp to the type range when the arithmetic could wrap."""
    lo, hi = iv
    if t.is_int and (lo < t.min_value or hi > t.max_value):
        return _type_range(t)
    return iv


def value_bounds(target, memo=None) -> tuple:
    """Range of the values of a Func with only a pure definition, else its type's range."""
    t = target.type
    full = _type_range(t) if t.is_int or t.kind == "bool" else (-INF, INF)
    if not isinstance(target, Func) or isinstance(target, BoundaryFunc) or target.updates:
        return full
    memo = {} if memo is None else memo
    key = id(target)
    if key not in memo:
        memo[key] = full  # guards against cycles
        memo[key] = interval(target.pure.value, {}, memo)
    return memo[key]


def interval(e, env, memo=None) -> tuple:
    """Inclusive (lo, hi) bounds of ``e`` given Var/RVar ranges in ``env`` (other Vars: any i32)."""
    if isinstance(e, Const):
        v = int(e.value) if e.type.is_int or e.type.kind == "bool" else e.value
        return (v, v)
    if isinstance(e, (Var, RVar)):
        if e.name in env:
            return env[e.name]
        if isinstance(e, RVar):
            return (e.min, e.min + e.extent - 1)
        return _type_range(e.type)
    if isinstance(e, Call):
        return value_bounds(e.target, memo)
    if isinstance(e, Cast):
        inner = interval(e.value, env, memo)
        if e.type.is_int:
            if e.value.type.is_float:
                inner = (math.trunc(inner[0]) if inner[0] != -INF else -INF,
                         math.trunc(inner[1]) if inner[1] != INF else INF)
                if not finite_float(e.value, env, memo):  # NaN and infinities convert to 0 (cpu_scalar)
                    inner = (min(inner[0], 0), max(inner[1], 0))
            return _fit(inner, e.type) if inner[0] != -INF and inner[1] != INF else _type_range(e.type)
        return inner if e.type.is_float else (0, 1)
    if isinstance(e, Select):
        a, b = interval(e.t, env, memo), interval(e.f, env, memo)
        return (min(a[0], b[0]), max(a[1], b[1]))
    if isinstance(e, Unary):
        a = interval(e.value, env, memo)
        if e.op == "abs":
            if a[0] >= 0:
                return a
            if a[1] <= 0:
                return (-a[1], -a[0])
            return (0, max(-a[0], a[1]))
        return _type_range(e.type) if e.type.is_int else (0, 1)
    if isinstance(e, BinOp):
        a, b = interval(e.a, env, memo), interval(e.b, env, memo)
        op, t = e.op, e.type
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            return (0, 1)
        if op == "add":
            return _fit((a[0] + b[0], a[1] + b[1]), t)
        if op == "sub":
            return _fit((a[0] - b[1], a[1] - b[0]), t)
        if op == "mul":
            ps = [x * y for x in a for y in b]
            ps = [p if p == p else 0 for p in ps]  # inf * 0 is nan: the factor 0 wins
            return _fit((min(ps), max(ps)), t)
        if op == "min":
            return (min(a[0], b[0]), min(a[1], b[1]))
        if op == "max":
            return (max(a[0], b[0]), max(a[1], b[1]))
        if op == "div" and t.is_int:
            if b[0] == b[1] and b[0] != 0 and a[0] != -INF and a[1] != INF:
                qs = [a[0] // b[0], a[1] // b[0]]
                return (min(qs), max(qs))
            m = max(abs(a[0]), abs(a[1]))
            return _fit((-m, m), t)
        if op == "mod" and t.is_int:
            if b[0] == b[1] and b[0] != 0:
                c = abs(b[0])
                if 0 <= a[0] and a[1] < c:
                    return a
                return (0, c - 1)
            return _type_range(t)
        if op == "shr" and t.is_int and b[0] == b[1] and 0 <= b[0] < t.bits:
            return (a[0] >> b[0], a[1] >> b[0]) if a[0] != -INF else _type_range(t)
        if op == "shl" and t.is_int and b[0] == b[1] and 0 <= b[0] < t.bits:
            return _fit((a[0] << b[0], a[1] << b[0]), t) if a[0] != -INF else _type_range(t)
        if op == "and" and t.kind == "uint":
            return (0, min(a[1], b[1]))
        if op == "and" and t.is_int and max(a[0], b[0]) >= 0:  # a non-negative mask keeps the sign bit clear
            return (0, min(hi for lo, hi in (a, b) if lo >= 0))
        if t.is_int or t.kind == "bool":
            return _type_range(t)
        return (-INF, INF)
    if isinstance(e, Param):
        lo, hi = e.range
        full = _type_range(e.type) if e.type.is_int or e.type.kind == "bool" else (-INF, INF)
        return (full[0] if lo is None else lo, full[1] if hi is None else hi)
    if isinstance(e, MathCall):
        if e.name in _MONOTONE:  # rounding keeps the order: floor(clamp(v, 0.0, 9.0)) is in [0, 9]
            lo, hi = interval(e.args[0], env, memo)
            return (_MONOTONE[e.name](lo), _MONOTONE[e.name](hi))
        return (-INF, INF)  # floats: any value
    raise TypeError(f"no interval rule for {e!r}")


def _keep_inf(f):
    return lambda v: v if v in (-INF, INF) else float(f(v))


# round is half to even, as Python's
_MONOTONE = {"floor": _keep_inf(math.floor), "ceil": _keep_inf(math.ceil), "round": _keep_inf(round),
             "trunc": _keep_inf(math.trunc)}
_F32_MAX = 3.4028234663852886e38


def finite_float(e, env, memo=None) -> bool:
    """Whether float ``e`` is never NaN nor infinite, so that a float -> int cast of it stays inside its interval
    (a NaN clamped is still NaN: loom's min/max propagate it; data, unranged Params and math functions may be
    either)."""
    if not e.type.is_float:
        return True
    if isinstance(e, Const):
        return math.isfinite(e.value)
    if isinstance(e, Cast):
        lo, hi = interval(e.value, env, memo)
        return finite_float(e.value, env, memo) and -_F32_MAX <= lo and hi <= _F32_MAX
    if isinstance(e, Param):  # a ranged Param's value is checked against the range, which refuses NaN
        return None not in e.range and all(map(math.isfinite, e.range))
    if isinstance(e, Select):
        return finite_float(e.t, env, memo) and finite_float(e.f, env, memo)
    if isinstance(e, Unary):
        return finite_float(e.value, env, memo)
    if isinstance(e, MathCall):
        return e.name in _MONOTONE and finite_float(e.args[0], env, memo)
    if isinstance(e, BinOp) and e.op in ("add", "sub", "mul", "div", "min", "max"):
        if not (finite_float(e.a, env, memo) and finite_float(e.b, env, memo)):
            return False
        if e.op == "div":
            b = interval(e.b, env, memo)
            if b[0] <= 0 <= b[1]:
                return False
        lo, hi = interval(e, env, memo)
        return -_F32_MAX <= lo and hi <= _F32_MAX
    return False  # reads of data, mod and the rest


def _union(r1, r2):
    if r1 is None:
        return list(r2)
    return [(min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(r1, r2)]


def definition_env(f: Func, d, region):
    """Ranges of the Vars of definition ``d`` when ``f`` is realised over ``region``."""
    env = {}
    for i, a in enumerate(d.args):
        if isinstance(a, Var):
            env[a.name] = region[i]
    for r in d.rvars:
        env[r.name] = (r.min, r.min + r.extent - 1)
    return env


def infer_bounds(pipe: FuncGraph, out_region, input_shapes: dict | None = None, leaves=(),
                 round_up: bool = False, clamp_inlined_boundaries: bool = False, grow: dict | None = None,
                 allocation: dict | None = None, computed_outside=None) -> dict:
    """Region (list of inclusive (lo, hi)) of every Func and ImageParam, keyed by id().

    Funcs in ``leaves`` get their required region but their producers are not
    visited (used to bound an accelerator without its host side). ``round_up``
    (the CPU path): a Func computed at the root whose Var is split with a RoundUp
    tail (``TailStrategy.ROUNDING``) is realised over a multiple of the factor.
    ``clamp_inlined_boundaries`` (the CPU path, which clamps each read of an inlined boundary condition): such a
    condition's region may be unbounded (an index moved by a Param without a range), as in Halide; the reference
    evaluator realises it, so there it must be finite. ``grow``: id(Func) -> per dim a range (or None) its
    region must cover (a Func computed inside a loop over RoundUp-rounded windows: ``cpu_round_up``).

    A rounded-up Func's extra points are computed but never read. As in Halide, what they read of inputs and of
    inlined Funcs is required (an input must hold it), and so is what they read of Funcs computed inside its
    loops, but a producer computed outside them (``computed_outside(producer, f)``, when given) is computed only
    over what the points before rounding need: its storage grows to what the extra points read
    (``allocation``, id -> that region, filled when given), the rest of which holds no value.
    """
    input_shapes = input_shapes or {}
    leaf_ids = {id(f) for f in leaves}
    required: dict[int, list] = {id(pipe.output): list(out_region)}
    extra: dict[int, list] = {}  # what rounded-up points read of realised producers
    for f in reversed(pipe.funcs):
        region = required.get(id(f))
        if id(f) in leaf_ids:
            continue
        if region is None:
            if leaf_ids:
                continue  # only reachable through a leaf

            raise LoomError(f"no consumer requires any of its values", where=f"Func '{f.name}'")
        region = _apply_bound_directive(f, region)
        # update definitions may write outside what consumers read, and read the Func itself there (a scan's
        # f[r - 1]): realise those points too. A dimension an update iterates by a pure Var keeps the region
        # (the update runs over it; a read past it is refused when evaluated)
        for d in f.updates:
            env = definition_env(f, d, region)
            fp = [region[i] if isinstance(a, Var) else interval(a, env) for i, a in enumerate(d.args)]
            region = _union(region, fp)
        for d in f.updates:
            env = definition_env(f, d, region)
            for call in d.calls():
                if call.target is f:
                    own = [region[i] if isinstance(a, Var) and not isinstance(a, RVar) else interval(c, env)
                           for i, (a, c) in enumerate(zip(d.args, call.args))]
                    region = _union(region, own)
        if not (clamp_inlined_boundaries and _inlined_boundary(f)):
            _check_finite(f, region, pipe)
        before = region
        if round_up:
            region = _round_up(f, region, f is pipe.output)
        if grow and id(f) in grow:
            region = [r if g is None else (min(r[0], g[0]), max(r[1], g[1])) for r, g in zip(region, grow[id(f)])]
        required[id(f)] = region
        if isinstance(f, BoundaryFunc):
            src_box = f.source_box(input_shapes)
            if f.kind in PERIODIC_KINDS:
                need = source_need(region, src_box)
            elif f.kind == "repeat_edge":
                need = [(min(max(lo, s0), s1), min(max(hi, s0), s1)) for (lo, hi), (s0, s1) in zip(region, src_box)]
            else:
                need = [(max(lo, s0), min(hi, s1)) for (lo, hi), (s0, s1) in zip(region, src_box)]
                if any(lo > hi for lo, hi in need):
                    continue  # entirely outside: the source is not read
            required[id(f.source)] = _union(required.get(id(f.source)), need)
            continue
        for d in f.definitions:
            env = definition_env(f, d, region)
            env_before = definition_env(f, d, before) if before != region else None
            for call in d.calls():
                from .graph import resolve
                target = resolve(f, call.target)
                if target is f:
                    continue
                need = [interval(a, env) for a in call.args]
                if env_before is not None and computed_outside is not None and computed_outside(target, f):
                    extra[id(target)] = _union(extra.get(id(target)), need)
                    need = [interval(a, env_before) for a in call.args]
                required[id(target)] = _union(required.get(id(target)), need)
    if allocation is not None:
        allocation.update({key: _union(required[key], r) for key, r in extra.items()})
    for p in pipe.params:
        region = required.get(id(p))
        if region is None:
            continue
        if p.name in input_shapes:
            shape = input_shapes[p.name][::-1]  # arrays are stored with dims reversed
            if len(shape) != p.dimensions:
                raise LoomError(f"expected a {p.dimensions}-d array, got shape {tuple(input_shapes[p.name])}",
                                where=f"ImageParam '{p.name}'")
            for i, (lo, hi) in enumerate(region):
                if lo < 0 or hi >= shape[i]:
                    loose = _unranged_index_params(pipe, p) if lo <= -2 ** 31 or hi >= 2 ** 31 - 1 else []
                    why = (f"; a read of it is indexed by Param(s) {', '.join(loose)}, which have no range: give "
                           "each one (Param(..., min=, max=) or set_range(min, max)) so bounds inference can size "
                           "the read" if loose else "")
                    if not loose and _index_exprs(pipe, p, _float_to_int):
                        why = ("; an index converts a float to an integer, which gives 0 for NaN and infinities "
                               "(a clamp keeps NaN): add a boundary condition, or clamp the index after the cast")
                    need = (f"needs at least {hi + 1} with min 0" if lo >= 0 else
                            "reads before index 0 need a boundary condition")
                    raise LoomError(f"the pipeline reads dimension {i} over "
                                    f"[{lo}, {hi}] but the input has extent {shape[i]} ({need}){why}",
                                    where=f"ImageParam '{p.name}'")
    return required


def round_up_factors(f) -> dict[int, list[int]]:
    """Dim -> the RoundUp factors its pure Var is split by, definition by definition."""
    from .schedule import TailStrategy
    out: dict[int, list[int]] = {}
    for d in f.definitions:
        for sp in d.schedule.splits:
            if TailStrategy.resolve(sp.tail, d.is_pure) not in TailStrategy.ROUNDING:
                continue
            for i, a in enumerate(d.args):
                if isinstance(a, Var) and a.name == sp.old:
                    out.setdefault(i, []).append(sp.factor)
    return out


def _round_up(f, region, is_output: bool):
    """The region with every RoundUp-split pure Var's extent rounded up to a multiple of its factor."""
    if not (is_output or f.schedule.compute_level == "root") or isinstance(f, BoundaryFunc):
        return region
    out = list(region)
    for i, factors in round_up_factors(f).items():
        for factor in factors:
            lo, hi = out[i]
            out[i] = (lo, lo + -(-(hi - lo + 1) // factor) * factor - 1)
    return out


def _apply_bound_directive(f, region):
    bounds = f.schedule.bounds
    if not bounds:
        return region
    out = list(region)
    for i, d in enumerate(f.dims):
        if d.name in bounds:
            lo, ext = bounds[d.name]
            hi = lo + ext - 1
            if region[i][0] < lo or region[i][1] > hi:
                raise LoomError(f"bound({d.name}, {lo}, {ext}) does not cover the required "
                                f"range [{region[i][0]}, {region[i][1]}]", where=f"Func '{f.name}'",
                                construct="bound")
            out[i] = (lo, hi)
    return out


def _inlined_boundary(f) -> bool:
    """A boundary condition no schedule realises: its reads clamp (or select) into the source, so its own region
    needs no storage and may span the whole index range."""
    return isinstance(f, BoundaryFunc) and f.schedule.compute_level is None


def _check_finite(f, region, pipe):
    for i, (lo, hi) in enumerate(region):
        if lo == -INF or hi == INF or hi - lo + 1 > MAX_EXTENT:
            loose = _unranged_index_params(pipe, f)
            big = lo != -INF and hi != INF and (lo > -2 ** 31 or hi < 2 ** 31 - 1)  # not i32's whole range
            why, fix = (
                (f"a read of it is indexed by Param(s) {', '.join(loose)}, which have no range: give each one "
                 "(Param(..., min=, max=) or set_range(min, max))") if loose else
                (f"{hi - lo + 1} points are more than loom realises ({MAX_EXTENT}): an index far from the Vars' "
                 "range, or a RoundUp split by a factor that large; shrink it") if big else
                "an index depends on data without limits; clamp the index"), None
            if f.dims[i].name in f.schedule.bounds:  # the bound holds for consumers; an update goes past it
                fix = f"{f.name}.bound limits only what its consumers read, not where its updates write or read"
            raise LoomError(f"cannot bound dimension {i} (inferred [{lo}, {hi}]): {why}"
                            + (f"; {fix}" if fix else f", or add {f.name}.bound({f.dims[i].name}, min, extent)"),
                            where=f"Func '{f.name}'")


def _index_exprs(pipe, f, pred) -> list:
    """The subexpressions satisfying ``pred`` in the indices of the pipeline's reads of ``f``."""
    from .graph import resolve
    return [e for g in pipe.funcs for d in getattr(g, "definitions", ()) for call in d.calls()
            if resolve(g, call.target) is f for a in call.args for e in walk(a) if pred(e)]


def _float_to_int(e) -> bool:
    return isinstance(e, Cast) and not e.type.is_float and e.value.type.is_float


def _unranged_index_params(pipe, f) -> list:
    """The Params without a range in the indices of the pipeline's reads of ``f``, by name."""
    found = _index_exprs(pipe, f, lambda e: isinstance(e, Param) and None in e.range)
    return list(dict.fromkeys(e.name for e in found))


