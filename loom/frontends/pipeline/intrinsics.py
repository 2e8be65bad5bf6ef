"""Halide's arithmetic intrinsics ``lerp``, ``saturating_add`` and ``saturating_sub``.

Each is built from the language's plain operators, as Halide lowers them, so the reference evaluator, the CPU
path and the accelerator's value simulation need nothing of their own.

``lerp(zero_val, one_val, weight)``: the values have one type (an integer literal takes the other's), which is
the result's; the weight is an unsigned integer or a float (a constant float weight with integer values must
lie in [0, 1]). As in Halide (Lerp.cpp), with ``M = 2^b - 1`` for values of b bits:
- float values: ``zero + (one - zero) * w``, the multiply-add rounded once, an unsigned weight first scaled to
  [0, 1] (times the reciprocal of its maximum). Halide writes ``zero * (1 - w) + one * w`` and divides, but its
  simplifier makes the division a multiplication and LLVM reassociates and fuses the rest into this (even under
  ``strict_float``; on x86 with FMA, where the tests run);
- integer values are computed unsigned (a signed value offset by its type's minimum, undone at the end). The
  weight becomes an integer ``w`` in [0, M]: a float weight ``trunc(M * weight)``; an unsigned one of another
  width has its bits replicated (u8 0xab as u16 0xabab) or its high bits kept. The result is
  ``zero * (M - w) + one * w`` divided by M, rounded: with ``p`` that sum plus 2^(b - 1) in 2b bits,
  ``((p >> b) + p) >> b``. 64-bit integer values are refused, as Halide refuses them;
- bool values: ``one_val`` where the weight is above half its range.

``saturating_add`` / ``saturating_sub`` take integers (and bools), cast to one type as ``+`` does, and give the
exact result clamped to the type's range. They clamp an operand before the operation, so no wider type is
needed and the 64-bit types saturate too.
"""

from __future__ import annotations

from .expr import (Const, Expr, Invalid, _literal_type, cast, clamp, first_invalid, literal, matched, maximum,
                   minimum, promoted, select)
from .mathfn import fused_multiply_add
from .types import BFloat16, Bool, Float64, integer_type


def lerp(zero_val, one_val, weight) -> Expr:
    """Halide's ``lerp``: ``zero_val`` at weight 0, ``one_val`` at weight 1 (see the module's docstring)."""
    tz = zero_val.type if isinstance(zero_val, Expr) else None
    to = one_val.type if isinstance(one_val, Expr) else None
    a, b = literal(zero_val, _literal_type(zero_val, to)), literal(one_val, _literal_type(one_val, tz))
    w = literal(weight, None)
    bad = first_invalid(a, b, w)
    if bad is not None:
        return bad
    t = a.type
    if t != b.type:
        return Invalid(f"lerp between {t.name} '{a!r}' and {b.type.name} '{b!r}': both values must have one type "
                       f"(cast one)")
    if w.type.kind != "uint" and not w.type.is_float:
        return Invalid(f"lerp weight '{w!r}' is {w.type.name}; it must be an unsigned integer or a float")
    if BFloat16 in (t, w.type):
        return Invalid("lerp of bf16 values or weight: cast to f32 first")
    if t.is_int and t.bits == 64:
        return Invalid(f"lerp between 64-bit integers ({t.name}) is not supported (Halide refuses it too)")
    if not t.is_float and isinstance(w, Const) and w.type.is_float and not 0.0 <= w.value <= 1.0:
        return Invalid(f"lerp weight {w.value} with integer values is not in [0.0, 1.0]")
    if t == Bool:
        half = Const(0.5, w.type) if w.type.is_float else Const(w.type.max_value // 2, w.type)
        return select(w > half, b, a)
    if t.is_float:
        return _float_lerp(a, b, w)
    return _integer_lerp(a, b, w)


def _float_lerp(a, b, w) -> Expr:
    t = a.type
    ct = promoted(t, w.type) if w.type.is_float else t  # a wider float weight widens the computation
    if w.type.is_float:
        w = cast(ct, w)
    else:  # an unsigned weight over its range: times 1 / (2^bits - 1), rounded to the values' type
        w = cast(ct, w) * Const(float(ct.dtype.type(1.0) / ct.dtype.type(2.0**w.type.bits - 1)), ct)
    a, b = cast(ct, a), cast(ct, b)
    return cast(t, fused_multiply_add(b - a, w, a))


def _integer_lerp(a, b, w) -> Expr:
    t = a.type
    bits = t.bits
    u = integer_type(False, bits)
    top = Const(u.max_value, u)
    if t.is_signed:  # offset into the unsigned range, so rounding works on magnitudes
        bias = Const(-t.min_value, u)  # the minimum's bits as unsigned
        a, b = cast(u, a) - bias, cast(u, b) - bias
    if w.type.is_float:
        if bits == 32:  # in f64: f32 cannot hold 2^32 - 1
            w = cast(u, Const(float(u.max_value), Float64) * cast(Float64, w))
        else:
            w = cast(u, Const(float(u.max_value), w.type) * w)
    elif w.type.bits == 64:
        return Invalid("a 64-bit lerp weight with integer values is not supported")
    elif w.type.bits != bits:  # rescale: multiply by (or divide by) (2^n + 1)(2^2n + 1)... as 2^2n - 1 does
        factor, left, shift = 1, abs(w.type.bits - bits), min(bits, w.type.bits)
        while left > 0:
            factor += factor << shift
            left -= shift
            shift *= 2
        w = cast(u, w) * Const(factor, u) if w.type.bits < bits else cast(u, w / Const(factor, w.type))
    wide = integer_type(False, 2 * bits)
    p = cast(wide, a) * cast(wide, top - w) + cast(wide, b) * cast(wide, w) + Const(1 << (bits - 1), wide)
    out = cast(u, ((p >> Const(bits, wide)) + p) >> Const(bits, wide))
    return cast(t, out + bias) if t.is_signed else out


def _saturating(name: str, a, b, on_bools, unsigned, signed):
    """The operands cast to one type (a Python number is an i32 / i64 / f32 constant first, as in Halide's Python
    bindings, where ``saturating_add(u8_value, 3)`` is i32, not one of the other operand's type), then the form
    for their type: ``on_bools(a, b)``, ``unsigned(a, b, hi)`` or ``signed(a, b, lo, hi)`` with the type's
    bounds as constants."""
    a, b = (v if isinstance(v, Expr) else literal(v, None) for v in (a, b))
    pair = matched(a, b, lambda a, b: f"{name}({a!r}, {b!r})")
    if isinstance(pair, Invalid):
        return pair
    a, b = pair
    t = a.type
    if t.is_float:
        return Invalid(f"{name} of {t.name} values: it takes integers (Halide cannot compile it on floats); use "
                       "+ / - on floats")
    if t == Bool:
        return on_bools(a, b)
    lo, hi = Const(t.min_value, t), Const(t.max_value, t)
    return signed(a, b, lo, hi) if t.is_signed else unsigned(a, b, hi)


def saturating_add(a, b) -> Expr:
    """Halide's ``saturating_add``: the exact ``a + b`` clamped to the operands' type (bools: a or b)."""
    return _saturating("saturating_add", a, b, lambda a, b: a | b, lambda a, b, hi: minimum(a, hi - b) + b,
                       lambda a, b, lo, hi: clamp(a, lo - minimum(b, 0), hi - maximum(b, 0)) + b)  # a + b in range


def saturating_sub(a, b) -> Expr:
    """Halide's ``saturating_sub``: the exact ``a - b`` clamped to the operands' type (bools: a and not b)."""
    return _saturating("saturating_sub", a, b, lambda a, b: a & ~b, lambda a, b, hi: maximum(a, b) - b,
                       lambda a, b, lo, hi: clamp(a, lo + maximum(b, 0), hi + minimum(b, 0)) - b)  # a - b in range
