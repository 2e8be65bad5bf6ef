"""Float math functions of the pipeline language, with Halide's semantics.

``sqrt exp log sin cos tan tanh pow floor ceil round trunc`` (and ``atan2``)
build a ``MathCall`` node. As in Halide, an integer argument is first cast to
f32 and the result is f32; ``floor``/``ceil``/``round``/``trunc`` keep the
float type and ``round`` rounds half-way cases to even. bfloat16 arguments
are refused (Halide computes them in a wider type; loom does not yet).

The numpy reference computes each function in float64 and rounds once to
float32, i.e. the correctly rounded result; the C backend calls libm's float
functions (``expf``...), which Halide also calls, so the CPU path and Halide
agree bit for bit (glibc's float functions are correctly rounded in practice).

``fused_multiply_add`` (no Halide spelling: ``lerp`` uses it) is ``a * b + c``
rounded once, on f32 or f64; the reference computes it exactly with numpy
(``exact_fma``), the C backend calls ``fmaf`` / ``fma``.
"""

from __future__ import annotations

import numpy as np

from .expr import Cast, Const, Expr, Invalid, absolute, binop, first_invalid, literal
from .types import Float32

# name -> (arity, numpy float64 implementation)
FUNCTIONS = {
    "sqrt": (1, np.sqrt), "exp": (1, np.exp), "log": (1, np.log), "sin": (1, np.sin), "cos": (1, np.cos),
    "tan": (1, np.tan), "tanh": (1, np.tanh), "floor": (1, np.floor), "ceil": (1, np.ceil),
    "round": (1, np.rint), "trunc": (1, np.trunc), "pow": (2, np.power), "atan2": (2, np.arctan2),
}


class MathCall(Expr):
    """``name(args...)`` on f32 values (``fma``: on f32 or f64 values)."""

    def __init__(self, name: str, args: tuple[Expr, ...], type_=Float32):
        self.name = name
        self.args = args
        self.type = type_

    def children(self):
        return self.args

    def with_args(self, args) -> "MathCall":
        return MathCall(self.name, tuple(args), self.type)

    def __repr__(self):
        return f"{self.name}({', '.join(map(repr, self.args))})"


def evaluate_math(name: str, values: list[np.ndarray], dtype=np.float32) -> np.ndarray:
    """The reference: float64 evaluation rounded once to float32 (``fma``: exact, in ``dtype``)."""
    if name == "fma":
        return exact_fma(*values, dtype=dtype)
    with np.errstate(all="ignore"):
        wide = [np.asarray(v, dtype=np.float64) for v in values]
        return np.asarray(FUNCTIONS[name][1](*wide)).astype(np.float32)


def fused_multiply_add(a: Expr, b: Expr, c: Expr) -> Expr:
    """``a * b + c`` rounded once; the operands have one float type (f32 or f64)."""
    assert a.type == b.type == c.type and a.type.kind == "float", (a.type, b.type, c.type)
    return MathCall("fma", (a, b, c), a.type)


def _two_sum(a, b):
    """s + e == a + b exactly, s the rounded sum (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _odd_sum(a, b):
    """a + b rounded to odd (of the two f64s around an inexact sum, the one with an odd last bit): rounding
    that to a narrower precision later rounds the exact sum correctly (Boldo and Melquiond)."""
    s, e = _two_sum(a, b)
    s = np.asarray(s, dtype=np.float64)
    even = (s.view(np.int64) & 1) == 0
    return np.where((e != 0) & even, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def exact_fma(a, b, c, dtype=np.float32):
    """``a * b + c`` rounded once to ``dtype`` (f32 or f64), without an fma instruction. f32: the product is
    exact in f64 and the f64 sum is rounded to odd before the one rounding to f32. f64: the product split
    into two f64s (Dekker), added to ``c`` exactly and rounded through an odd sum (finite values whose
    product neither overflows nor underflows)."""
    with np.errstate(all="ignore"):
        a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
        if np.dtype(dtype) == np.float32:
            return _odd_sum(a * b, c).astype(np.float32)
        p = a * b
        a_hi, a_lo = _split(a)
        b_hi, b_lo = _split(b)
        p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
        hi, lo = _two_sum(c, p)
        out = hi + _odd_sum(lo, p_err)
        return np.where(np.isfinite(out), out, p + c)


def _split(a):
    """a == hi + lo, each with at most 26 significant bits (Veltkamp)."""
    t = a * 134217729.0  # 2^27 + 1
    hi = t - (t - a)
    return hi, a - hi


def _as_float(value) -> Expr:
    e = literal(value, Float32 if not isinstance(value, Expr) else None)
    if isinstance(e, Invalid):
        return e
    if e.type == Float32:
        return e
    if e.type.is_int:
        return Cast(Float32, e)
    return Invalid(f"math functions take f32 or integer arguments, got {e.type.name}; cast to f32 first")


def math_call(name: str, *args) -> Expr:
    arity = FUNCTIONS[name][0]
    if len(args) != arity:
        return Invalid(f"{name} takes {arity} argument(s), got {len(args)}")
    converted = [_as_float(a) for a in args]
    bad = first_invalid(*converted)
    return bad if bad is not None else MathCall(name, tuple(converted))


def _function(name):
    def f(*args):
        return math_call(name, *args)
    f.__name__ = name
    f.__doc__ = f"Halide's ``{name}`` on f32 (integer arguments are cast to f32)."
    return f


sqrt = _function("sqrt")
exp = _function("exp")
log = _function("log")
sin = _function("sin")
cos = _function("cos")
tan = _function("tan")
tanh = _function("tanh")
pow = _function("pow")  # noqa: A001  (Halide spelling)
atan2 = _function("atan2")
floor = _function("floor")
ceil = _function("ceil")
round = _function("round")  # noqa: A001
trunc = _function("trunc")


def _float_test(name, build):
    def f(value):
        e = _as_float(value)
        return e if isinstance(e, Invalid) else build(e)
    f.__name__ = name
    f.__doc__ = f"Halide's ``{name}``: a bool, true where the f32 value is {name[3:].replace('_', ' ')}."
    return f


is_nan = _float_test("is_nan", lambda e: binop("ne", e, e))  # only NaN differs from itself
is_inf = _float_test("is_inf", lambda e: binop("eq", absolute(e), Const(float("inf"), Float32)))
is_finite = _float_test("is_finite", lambda e: binop("lt", absolute(e), Const(float("inf"), Float32)))
