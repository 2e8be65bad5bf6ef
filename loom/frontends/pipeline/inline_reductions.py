"""Inline reductions: ``sum``, ``product``, ``maximum``, ``minimum``, ``argmax``, ``argmin``.

As in Halide, ``sum(e)`` over the RDom that ``e`` uses becomes an anonymous Func
whose dimensions are the free (pure) Vars of ``e``: a pure definition holding
the identity of the reduction (0, 1, the type's lowest / highest value; -inf /
+inf for f32) and one update over the RDom. The result has ``e``'s type (so a
u8 sum wraps, as in Halide); the call returned reads that Func at the free
Vars, so the reduction is scheduled and lowered like any other update.

``argmax(e)`` returns a tuple ``(index_0, ..., index_{n-1}, value)`` like
Halide's Tuple: the RDom point of the first maximum in iteration order (the
RDom's first dimension innermost) and the maximum. Halide keeps the initial
index 0 when no value beats the type's lowest value; so does loom. It is built
from two reductions, the maximum and then the first position that reaches it,
which is the same answer as Halide's single tuple-valued update for every
non-NaN input. ``maximum(a, b)`` / ``minimum(a, b)`` with two arguments stay the
element-wise ``max`` / ``min``. The user has no handle on the anonymous Func, so
inside a streaming accelerator its update is fully unrolled (one result a cycle,
``streaming.extract``); the CPU path runs it as a loop.
"""

from __future__ import annotations

from .expr import Const, Expr, Invalid, RVar, Var, binop, literal, select, walk
from .expr import maximum as _max2
from .expr import minimum as _min2
from .types import Int32

_NO_ARG = object()
_count = [0]


def _free_vars(e: Expr) -> list[Var]:
    seen: dict[str, Var] = {}
    for sub in walk(e):
        if isinstance(sub, Var) and not isinstance(sub, RVar):
            seen.setdefault(sub.name, sub)
    return list(seen.values())


def _rdom_of(e: Expr, what: str):
    rdoms = {}
    for sub in walk(e):
        if isinstance(sub, RVar):
            rdoms[id(sub.rdom)] = sub.rdom
    if len(rdoms) != 1:
        found = "no RDom" if not rdoms else f"{len(rdoms)} RDoms"
        return None, Invalid(f"inline reduction {what}(...) needs an expression over exactly one RDom, "
                             f"got {found} in '{e!r}'")
    return next(iter(rdoms.values())), None


def _identity(kind: str, t):
    if kind == "sum":
        return literal(0, t)
    if kind == "product":
        return literal(1, t)
    if t.is_float:
        return Const(float("-inf") if kind == "max" else float("inf"), t)
    return Const(t.min_value if kind == "max" else t.max_value, t)


def _combine(kind: str, acc: Expr, e: Expr) -> Expr:
    return {"sum": lambda: binop("add", acc, e), "product": lambda: binop("mul", acc, e),
            "max": lambda: _max2(acc, e), "min": lambda: _min2(acc, e)}[kind]()


def _reduce(kind: str, e, name: str | None) -> Expr:
    from .func import Func  # func.py imports this module's siblings; keep the import local

    e = literal(e, None)
    if isinstance(e, Invalid):
        return e
    _, bad = _rdom_of(e, kind)
    if bad is not None:
        return bad
    _count[0] += 1
    f = Func(name or f"{kind}_{_count[0]}")
    f.inline_reduction = kind  # no handle to schedule it: the streaming path computes it in space
    free = _free_vars(e)
    if free:
        f[tuple(free)] = _identity(kind, e.type)
        f[tuple(free)] = _combine(kind, f[tuple(free)], e)
        return f[tuple(free)]
    dummy = Var(f"_{f.name}_i")  # a 0-d Func is held as a 1-element 1-d Func
    f[dummy] = _identity(kind, e.type)
    f[0] = _combine(kind, f[0], e)
    return f[0]


def sum(e, name: str | None = None) -> Expr:  # noqa: A001  (Halide spelling)
    """Sum of ``e`` over its RDom, in ``e``'s type."""
    return _reduce("sum", e, name)


def product(e, name: str | None = None) -> Expr:
    """Product of ``e`` over its RDom, in ``e``'s type."""
    return _reduce("product", e, name)


def maximum(e, b=_NO_ARG, name: str | None = None) -> Expr:
    """``maximum(e)``: the inline reduction; ``maximum(a, b)``: the element-wise max."""
    return _reduce("max", e, name) if b is _NO_ARG else _max2(e, b)


def minimum(e, b=_NO_ARG, name: str | None = None) -> Expr:
    """``minimum(e)``: the inline reduction; ``minimum(a, b)``: the element-wise min."""
    return _reduce("min", e, name) if b is _NO_ARG else _min2(e, b)


def argmax(e, name: str | None = None):
    """``(index_0, ..., value)``: the first maximum of ``e`` over its RDom (see the module doc)."""
    return _arg("max", e, name)


def argmin(e, name: str | None = None):
    """``(index_0, ..., value)``: the first minimum of ``e`` over its RDom."""
    return _arg("min", e, name)


def _arg(kind: str, e, name):
    e = literal(e, None)
    if isinstance(e, Invalid):
        return e
    rdom, bad = _rdom_of(e, "arg" + kind)
    if bad is not None:
        return bad
    base = name or f"arg{kind}_{_count[0] + 1}"
    best = _reduce(kind, e, base + "_value")
    if isinstance(best, Invalid):
        return best
    # the position of a point in iteration order: the RDom's first dimension varies fastest
    linear, stride = None, 1
    for r in rdom.vars:
        term = binop("mul", binop("sub", r, r.min), stride)
        linear = term if linear is None else binop("add", linear, term)
        stride *= r.extent
    if stride > Int32.max_value:
        return Invalid(f"arg{kind}: the RDom has {stride} points, more than i32 can index")
    hit = binop("eq", e, best)  # an RDom's where() predicate applies to this update too
    first = _reduce("min", select(hit, linear, Int32.max_value), base + "_index")
    # Halide keeps index 0 when nothing beats the initial value (the type's lowest / highest)
    untouched = binop("eq", best, _identity(kind, e.type))
    indices, stride = [], 1
    for r in rdom.vars:
        coord = binop("add", binop("mod", binop("div", first, stride), r.extent), r.min)
        indices.append(select(untouched, 0, coord))
        stride *= r.extent
    return (*indices, best)
