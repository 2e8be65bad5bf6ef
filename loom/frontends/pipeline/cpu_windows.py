"""Per-tile windows of index expressions that move with one runtime base by steps no affine form describes.

``x % 2``, ``(x / 2) * 2``, ``x - x % 2`` or ``min(x + 1, 99)`` over a tile ``x in b + [lo, hi]``: Halide's bounds
inference gives each a tight interval with symbolic ends. loom's regions have constant extents, so a window is
``B + [lo, hi]`` where ``B`` is a sum of integer multiples of *atoms* computed from the base ``b`` at run time
(``b`` itself, ``floor(L / d)``, ``min(L + k, c)``, ``max(L + k, c)`` of such sums ``L``) and ``[lo, hi]`` is a
constant range holding every value the expression takes for every ``b``:

- ``e % c`` is ``[0, |c| - 1]`` (``e``'s offsets modulo c when c divides every coefficient of its B);
- ``e / d`` is ``floor(B / d) + [floor(lo / d), ceil(hi / d)]``: which of the two ends is reached depends on B's
  remainder (exact, ``B / d + floor([lo, hi] / d)``, when d divides B);
- ``min(e, [c0, c1])`` is ``min(B + lo, c0) + [0, max(hi - lo, c1 - c0)]`` (``max`` likewise): a clamped index
  stays one window wide (``clamp`` is a min then a max);
- sums, constant multiples and selects of windows on one B add, scale and join their ranges.

A window whose ends an expression may not reach (any of the rules above but sums and scales) is ``widened``:
whoever sizes a Func's region with it clamps its base into the Func's whole-pipeline region first, so that the
extra elements read nothing past an input's end (``cpu_regions.RegionInference.finish``).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from loom.core.affine import Affine

from .bounds import INF, interval
from .cpu_index_facts import congruence
from .cpu_scalar import const_index
from .expr import BinOp, Call, Cast, RVar, Select, Var, walk

BASE = ("base",)  # the runtime base's atom


@dataclass(frozen=True)
class Window:
    base: Affine  # over atoms, no constant; no terms: a constant range
    lo: int
    hi: int
    widened: bool = False  # its ends may lie beyond the values the expression takes


def window(e, env: dict, ssa) -> Window | None:
    """``e``'s window when the Vars in ``env`` (``SymRange``s) whose ``ssa`` is the given one move with that base
    and the others are constant ranges; None when no rule above applies (two base-dependent factors, a
    non-widening cast, a data-dependent index)."""
    moving = {n for n, r in env.items() if r.ssa is ssa}
    numeric = {n: (r.lo, r.hi) for n, r in env.items()}
    rem = (1, 0) if ssa is None else congruence(ssa)
    return _window(e, env, moving, numeric, rem)


def _window(e, env, moving: set[str], numeric: dict, rem: tuple[int, int]) -> Window | None:
    if not any(isinstance(v, (Var, RVar)) and v.name in moving for v in walk(e)) or isinstance(e, Call):
        lo, hi = interval(e, numeric)  # fixed in the tile (a Call's value: its Func's value range)
        return None if lo in (-INF, INF) or hi in (-INF, INF) else Window(Affine(), int(lo), int(hi))
    if isinstance(e, (Var, RVar)):
        return Window(Affine.var(BASE), env[e.name].lo, env[e.name].hi)
    if isinstance(e, Cast):
        src, dst = e.value.type, e.type
        widening = dst.is_int and (src.is_int or src.kind == "bool") and dst.min_value <= src.min_value \
            and src.max_value <= dst.max_value  # a bool's 0 or 1 too: x + i32(x % 2 == 0)
        return _window(e.value, env, moving, numeric, rem) if widening else None
    if isinstance(e, Select):
        return join(_window(e.t, env, moving, numeric, rem), _window(e.f, env, moving, numeric, rem))
    if isinstance(e, BinOp) and e.op in ("lt", "le", "gt", "ge", "eq", "ne"):
        return Window(Affine(), 0, 1)
    if not isinstance(e, BinOp) or not e.type.is_int:
        return None
    a, b = _window(e.a, env, moving, numeric, rem), _window(e.b, env, moving, numeric, rem)
    if a is None or b is None:
        return None
    c = b.lo if b.base.is_const and b.lo == b.hi else None  # a constant right operand
    if e.op in ("add", "sub"):
        return _add(a, b if e.op == "add" else _scale(b, -1))
    if e.op == "mul":
        k = c if c is not None else a.lo if a.base.is_const and a.lo == a.hi else None
        return None if k is None else _scale(b if c is None else a, k)
    if e.op == "min" or e.op == "max":
        return _min_max(e.op, a, b)
    if c is None:
        return None
    if e.op == "div" and c > 0:
        return _divide(a, c, rem)
    if e.op == "shr" and e.type.is_signed and 0 <= c < 31:  # an arithmetic shift floors: x >> 1 is x / 2
        return _divide(a, 1 << c, rem)
    if e.op == "shl" and 0 <= c < 31:
        return _scale(a, 1 << c)
    if e.op == "mod" and c != 0:
        return _modulo(a, abs(c))
    if e.op == "and" and c > 0 and c & (c + 1) == 0:  # x & 3 is x % 4 (two's complement)
        return _modulo(a, c + 1)
    return None


def _add(a: Window, b: Window) -> Window:
    return Window(a.base + b.base, a.lo + b.lo, a.hi + b.hi, a.widened or b.widened)


def _scale(a: Window, k: int) -> Window:
    lo, hi = sorted((a.lo * k, a.hi * k))
    return Window(a.base.scale(k), lo, hi, a.widened)


def _divides(d: int, base: Affine) -> bool:
    return all(k % d == 0 for k in base.terms.values())


def _divide(a: Window, d: int, rem: tuple[int, int]) -> Window:
    """``floor(a / d)``, d > 0; ``rem``: the base's (m, c), it is c modulo m (``congruence``)."""
    if _divides(d, a.base):  # floor((d * B + v) / d) = B + floor(v / d)
        return Window(Affine({t: k // d for t, k in a.base.terms.items()}), a.lo // d, a.hi // d, a.widened)
    m, c = _residue(a.base, rem)
    if gcd(m, d) == d:  # B has one remainder c modulo d (a tile's base xo * 8): floor(B / d) = (B - c) / d, exact
        c %= d
        return Window(Affine.var(("div", a.base, d)), (c + a.lo) // d, (c + a.hi) // d, a.widened)
    # on floor((B + s) / d), s = lo mod d: as wide as the worst remainder of B + s needs (Halide's extent)
    g, s = gcd(m, d), a.lo % d
    worst = (c + s) % g + d - g
    lo = a.lo // d
    return Window(Affine.var(("div", a.base + s, d)), lo, lo + (worst + a.hi - a.lo) // d, True)


def _residue(base: Affine, rem: tuple[int, int]) -> tuple[int, int]:
    """(m, c): ``base`` is c modulo m, its runtime base being rem[1] modulo rem[0] (other atoms: anything)."""
    m, c = 0, 0
    for atom, k in base.terms.items():
        tm, tc = (rem[0] * abs(k), rem[1] * k) if atom == BASE else (abs(k), 0)
        m, c = gcd(m, tm), c + tc
    return m, c


def _modulo(a: Window, c: int) -> Window:
    """``a % c`` (Euclidean, as Halide's), c > 0."""
    if _divides(c, a.base) and a.lo // c == a.hi // c:  # (c * B + v) % c = v % c: one period of v
        return Window(Affine(), a.lo % c, a.hi % c, True)
    return Window(Affine(), 0, c - 1, True)


def _min_max(op: str, a: Window, b: Window) -> Window | None:
    a, b = _common(a, b)
    if a.base == b.base:  # min(B + u, B + v) = B + min(u, v)
        pick = min if op == "min" else max
        return Window(a.base, pick(a.lo, b.lo), pick(a.hi, b.hi), a.widened or b.widened)
    if not (a.base.is_const or b.base.is_const):
        return None
    moving, fixed = (a, b) if b.base.is_const else (b, a)
    # min(B + [lo, hi], [c0, c1]) lies within min(B + lo, c0) + [0, max(hi - lo, c1 - c0)] (max likewise)
    width = max(moving.hi - moving.lo, fixed.hi - fixed.lo)
    return Window(Affine.var((op, moving.base, moving.lo, fixed.lo)), 0, width, True)


def join(a: Window | None, b: Window | None) -> Window | None:
    """Either value (a select's branches, two reads of one Func), on one base."""
    if a is None or b is None:
        return None
    a, b = _common(a, b)
    if a.base != b.base:
        return None
    return Window(a.base, min(a.lo, b.lo), max(a.hi, b.hi), a.widened or b.widened)


def _common(a: Window, b: Window) -> tuple[Window, Window]:
    """``a`` and ``b`` on one base when writing their divisions out brings them there (``x`` beside
    ``(x / 2) * 2``, which is ``x - [0, 1]``) or when their atoms differ by a bounded amount (``clamp(x - 1, 0,
    w)`` beside ``clamp(x + 1, 0, w)``); unchanged otherwise."""
    if a.base == b.base:
        return a, b
    for pair in ((a, _written_out(b)), (_written_out(a), b), (_written_out(a), _written_out(b))):
        if pair[0].base == pair[1].base:
            return pair
    if len(a.base.terms) == 1 and len(b.base.terms) == 1:
        ((ta, ka),), ((tb, kb),) = a.base.terms.items(), b.base.terms.items()
        gap = _gap(ta, tb) if ka == kb else None
        if gap is not None:  # b = k * tb + v = k * ta + k * (tb - ta) + v
            lo, hi = sorted((ka * gap[0], ka * gap[1]))
            return a, Window(a.base, b.lo + lo, b.hi + hi, True)
    return a, b


def _gap(ta, tb) -> tuple[int, int] | None:
    """The range of atom ``tb`` - atom ``ta`` over every base, when the two are one kind of atom of bases a
    bounded distance apart (min and max move by at most what their argument moves); None otherwise."""
    if ta == tb:
        return 0, 0
    if ta[0] != tb[0] or ta == BASE or tb == BASE or ta[-1] != tb[-1]:  # the kind and the divisor or bound
        return None
    inner = _affine_gap(ta[1], tb[1])
    if inner is None:
        return None
    if ta[0] == "div":  # floor((L + r) / d) - floor(L / d), r in [r0, r1]
        return inner[0] // ta[2], -(-inner[1] // ta[2])
    shift = tb[2] - ta[2]
    return min(0, inner[0] + shift), max(0, inner[1] + shift)


def _affine_gap(la: Affine, lb: Affine) -> tuple[int, int] | None:
    shift = lb.const - la.const  # a division's shift (floor((B + s) / d))
    if la - la.const == lb - lb.const:
        return shift, shift
    if len(la.terms) == 1 and len(lb.terms) == 1:
        ((ta, ka),), ((tb, kb),) = la.terms.items(), lb.terms.items()
        gap = _gap(ta, tb) if ka == kb else None
        return None if gap is None else tuple(x + shift for x in sorted((ka * gap[0], ka * gap[1])))
    return None


def _written_out(a: Window) -> Window:
    """``a`` with each ``k * floor(L / d)`` whose k is a multiple of d written ``(k / d) * L`` plus the
    remainder's range (``m * d * floor(L / d) = m * (L - L % d)``, ``L % d`` in ``[0, d - 1]``)."""
    for atom, k in a.base.terms.items():
        if atom[0] == "div" and k % atom[2] == 0:
            m = k // atom[2]
            spread = abs(m) * (atom[2] - 1)
            lo, hi = (a.lo - spread, a.hi) if m > 0 else (a.lo, a.hi + spread)
            inner = atom[1] - atom[1].const  # floor((L + s) / d): m * (L + s) less the remainder
            shift = m * atom[1].const
            return _written_out(Window(a.base + Affine({atom: -k}) + inner.scale(m), lo + shift, hi + shift, True))
    return a


def base_value(base: Affine, ssa: SSAValue, emit) -> SSAValue:
    """``base``'s value, each atom emitted once per scope through ``emit`` (a ``RegionInference``)."""
    total = None
    for atom, k in base.terms.items():
        term = _atom_value(atom, ssa, emit)
        term = term if k == 1 else emit.scaled(term, k)
        total = term if total is None else \
            emit.once(("add", id(total), id(term)), lambda a=total, b=term: arith.AddiOp(a, b).result)
    if base.const:  # a division's shift: floor((B + s) / d)
        total = emit.once(("shift", id(total), base.const),
                          lambda t=total: arith.AddiOp(t, const_index(base.const)).result)
    return total


def _atom_value(atom, ssa: SSAValue, emit) -> SSAValue:
    if atom == BASE:
        return ssa
    inner = base_value(atom[1], ssa, emit)
    if atom[0] == "div":
        return emit.divided(inner, atom[2])
    op, _, offset, bound = atom
    make = arith.MinSIOp if op == "min" else arith.MaxSIOp

    def value():
        shifted = arith.AddiOp(inner, const_index(offset)).result if offset else inner
        return make(shifted, const_index(bound)).result

    return emit.once((op, id(inner), offset, bound), value)
