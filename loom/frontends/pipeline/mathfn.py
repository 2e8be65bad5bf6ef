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
    """``name(args...)`` on f32 values."""

    def __init__(self, name: str, args: tuple[Expr, ...]):
        self.name = name
        self.args = args
        self.type = Float32

    def children(self):
        return self.args

    def with_args(self, args) -> "MathCall":
        return MathCall(self.name, tuple(args))

    def __repr__(self):
        return f"{self.name}({', '.join(map(repr, self.args))})"


def evaluate_math(name: str, values: list[np.ndarray]) -> np.ndarray:
    """The reference: float64 evaluation rounded once to float32."""
    with np.errstate(all="ignore"):
        wide = [np.asarray(v, dtype=np.float64) for v in values]
        return np.asarray(FUNCTIONS[name][1](*wide)).astype(np.float32)


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
