"""Float ops on values that the ``types`` option computes in fixed point (``{"f32": "ap_fixed<32,16>"}``).

The C backend writes these ops as float calls (``loomh_maximumf_f32``, ``fabsf``, ``floorf``, ``fmaf``,
``expf``). An ``ap_fixed`` operand converts to ``float`` on the way in, which silently drops every bit past
the 24th: ``max`` of two ``ap_fixed<32,16>`` values could return neither of them. So, for a fixed-point
result:

- ops whose result is exact are written with ``ap_fixed`` comparisons and exact arithmetic only:
  min/max (no NaN in fixed point), ``abs``, ``copysign``, ``floor``/``ceil``/``trunc``/``round``/
  ``roundeven`` (a conversion into an integer-valued ``ap_fixed`` whose quantisation mode is the
  rounding), and ``fma`` (the exact ``a * b + c``, quantised once on assignment);
- a conversion to an integer takes the integer part from the bits (``to_int64``), not through a double;
- the other math functions call the double version (``exp``, not ``expf``): the operand is exact in a
  double up to 53 bits, and the result is quantised once, as the header's division is.

Exact results wider than loom_hls.h's 64 bits are refused here, naming the op and the formats (else
they would only fail as a static_assert when the C++ compiles).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import VectorType
from xdsl.ir import Operation

from loom.backends.c.emit_scalar import _LIBM_CALLS
from loom.backends.c.emitter import HANDLERS, op_error
from loom.backends.hls.emitter import HlsFunctionEmitter, hls_handles
from loom.backends.hls.types import MAX_BITS, HlsType, fixed_sum, full_precision, hls_type_of


def fixed_result(em: HlsFunctionEmitter, op: Operation) -> HlsType | None:
    """The ap_fixed type of ``op``'s scalar result, or None when it is not fixed point."""
    if isinstance(op.results[0].type, VectorType):
        return None
    t = hls_type_of(em.stype(op.results[0], op))
    return t if t is not None and t.is_fixed else None


def require_exact_width(em: HlsFunctionEmitter, op: Operation, what: str, t: HlsType,
                        exact: tuple[int, int, bool]) -> None:
    """Refuse an op whose exact intermediate (width, integer bits, signed) is wider than loom_hls.h holds."""
    width, ibits, signed = exact
    if width > MAX_BITS:
        spelled = f"ap_{'fixed' if signed else 'ufixed'}<{width}, {ibits}>"
        raise op_error(op, f"in kernel '{em.func.sym_name.data}': {what} of {t.ctype} values is exact in a "
                           f"{width}-bit {spelled}, and loom's HLS backend (loom_hls.h) holds at most {MAX_BITS} "
                           "bits; map the float type to a narrower fixed-point type (types=...)")


_EXACT_OPS = {"arith.addf": ("add", "+"), "arith.subf": ("sub", "-"), "arith.mulf": ("mul", "*"),
              "arith.negf": ("neg", "unary -")}


@hls_handles(*_EXACT_OPS)
def exact_fixed(em: HlsFunctionEmitter, op: Operation) -> None:
    """loom_hls.h computes +, -, * of ap_fixed values exactly (Vitis' full-precision types) in at most 64
    bits: a wider result would only fail as a static_assert when the C++ compiles."""
    t = fixed_result(em, op)
    if t is not None:
        kind, sign = _EXACT_OPS[op.name]
        require_exact_width(em, op, sign, t, full_precision(kind, t))
    HANDLERS[op.name](em, op)


def special_fixed_constant(em: HlsFunctionEmitter, op: Operation) -> str | None:
    """An infinite or NaN float constant of a fixed-point value (the -inf identity of a max reduction), as the
    value base2 gives it (infinities saturate, NaN is 0: docs/formats.md), not ``(ap_fixed)(-INFINITY)``, whose
    conversion Vitis does not define. None for every other constant."""
    from xdsl.dialects.builtin import FloatAttr

    attr = op.properties.get("value") or op.attributes.get("value")
    if not isinstance(attr, FloatAttr) or math.isfinite(attr.value.data):
        return None
    t = fixed_result(em, op)
    if t is None:
        return None
    x = attr.value.data
    if math.isnan(x):
        value = 0.0
    elif x > 0:
        value = 2.0 ** (t.int_bits - (1 if t.signed else 0)) - 2.0 ** -t.frac_bits
    else:
        value = -(2.0 ** (t.int_bits - 1)) if t.signed else 0.0
    return f"(({t.ctype}){float.hex(value)})"


@hls_handles("arith.minimumf", "arith.maximumf", "arith.minnumf", "arith.maxnumf")
def fixed_min_max(em: HlsFunctionEmitter, op: Operation) -> None:
    """Fixed point has no NaN and no -0: min and max are one exact comparison."""
    if fixed_result(em, op) is None:
        return HANDLERS[op.name](em, op)
    a, b = (em.val(v) for v in op.operands)
    cmp = "<" if "min" in op.name else ">"
    em.define(op.results[0], f"({a} {cmp} {b} ? {a} : {b})")


@hls_handles("math.absf", "math.copysign")
def fixed_sign(em: HlsFunctionEmitter, op: Operation) -> None:
    """abs(x), copysign(x, y): x or its exact negation, converted into the type (its overflow mode)."""
    t = fixed_result(em, op)
    if t is None:
        return HANDLERS[op.name](em, op)
    x = em.val(op.operands[0])
    if not t.signed:  # no negative values: both are x
        em.define(op.results[0], x)
        return
    require_exact_width(em, op, "unary -", t, full_precision("neg", t))
    zero = f"(({t.ctype})0)"
    negate = f"({x} < {zero})"
    if op.name == "math.copysign":
        negate = f"({negate} != ({em.val(op.operands[1])} < {zero}))"
    em.define(op.results[0], f"({negate} ? ({t.ctype})(-{x}) : {x})")


# the quantisation mode that rounds to an integer the way the op does
_ROUNDING = {"math.floor": "AP_TRN", "math.trunc": "AP_TRN_ZERO", "math.round": "AP_RND_INF",
             "math.roundeven": "AP_RND_CONV"}


@hls_handles(*_ROUNDING, "math.ceil")
def fixed_round(em: HlsFunctionEmitter, op: Operation) -> None:
    """Rounding to an integer as a conversion into an integer-valued ap_fixed, then back into the type.
    x < 2^(I-1) (2^I unsigned), so its floor fits in max(I, 1) integer bits and a rounding up in one more."""
    t = fixed_result(em, op)
    if t is None:
        return HANDLERS[op.name](em, op)
    x = em.val(op.operands[0])
    if t.frac_bits <= 0:  # every value is an integer already
        em.define(op.results[0], x)
        return
    kind = "fixed" if t.signed else "ufixed"
    floor_bits = max(t.int_bits, 1)
    if op.name != "math.ceil":
        n = floor_bits + 1
        em.define(op.results[0], f"({t.ctype})(ap_{kind}<{n}, {n}, {_ROUNDING[op.name]}>({x}))")
        return
    floor = em.fresh("fl")
    em.line(f"ap_{kind}<{floor_bits}, {floor_bits}> {floor} = {x};")
    one = "ap_fixed<2, 2>(1)" if t.signed else "ap_ufixed<1, 1>(1)"
    em.define(op.results[0], f"({x} == {floor} ? ({t.ctype}){floor} : ({t.ctype})({floor} + {one}))")


@hls_handles("math.fma")
def fixed_fma(em: HlsFunctionEmitter, op: Operation) -> None:
    """a * b + c exact (loom_hls.h's full-precision product and sum), quantised once into the type."""
    t = fixed_result(em, op)
    if t is None:
        return HANDLERS[op.name](em, op)
    product = full_precision("mul", t)
    require_exact_width(em, op, "*", t, product)
    require_exact_width(em, op, "fma", t, fixed_sum(product, (t.width, t.int_bits, t.signed)))
    a, b, c = (em.val(v) for v in op.operands)
    em.define(op.results[0], f"({t.ctype})({a} * {b} + {c})")


@hls_handles("arith.fptosi", "arith.fptoui")
def fixed_to_integer(em: HlsFunctionEmitter, op: Operation) -> None:
    """The integer part of a fixed-point value, toward zero, from its bits (a double rounds values over 53 bits,
    which can cross an integer)."""
    src = em.stype(op.operands[0], op)
    t = hls_type_of(src)
    if t is None or not t.is_fixed:
        return HANDLERS[op.name](em, op)
    x = em.val(op.operands[0])
    dst = em.stype(op.results[0], op)
    if op.name == "arith.fptosi":
        em.define(op.results[0], f"({dst.ctype})({x}).to_int64()")
    else:
        em.define(op.results[0], f"({dst.ctype})({dst.utype})({x}).to_uint64()")


_THROUGH_DOUBLE = [name for name in _LIBM_CALLS if name not in HlsFunctionEmitter.OVERRIDES] + ["math.rsqrt"]


@hls_handles(*_THROUGH_DOUBLE)
def fixed_libm(em: HlsFunctionEmitter, op: Operation) -> None:
    """Other math functions of fixed-point values: the double function (expf would round the operand to
    24 bits first), its result quantised once into the type."""
    t = fixed_result(em, op)
    if t is None:
        return HANDLERS[op.name](em, op)
    args = [f"(double){em.val(v)}" for v in op.operands]
    if op.name == "math.rsqrt":
        em.define(op.results[0], f"({t.ctype})(1.0 / sqrt({args[0]}))")
        return
    em.define(op.results[0], f"({t.ctype}){_LIBM_CALLS[op.name]}({', '.join(args)})")
