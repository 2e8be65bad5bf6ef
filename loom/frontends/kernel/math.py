"""``loom.math``: math functions usable inside kernels (and in plain Python).

Inside a kernel each call emits the math-dialect op on the argument's float
type (``loom.math.exp(x)`` with ``x: F32`` -> ``math.exp : f32``); Python's
own ``math`` module functions are accepted too.  ``floor``/``ceil``/``trunc``
keep the float type (unlike Python's, which return ints).  Outside a kernel
they evaluate with Python's ``math``.
"""

from __future__ import annotations

import builtins
import math as _m


# the plain-Python meaning of the functions Python's math module lacks (or spells differently)
_PY_EXTRA = {
    "rsqrt": lambda x: 1.0 / _m.sqrt(x),
    "fma": lambda a, b, c: a * b + c,
    "fabs": builtins.abs,  # not the bare name: this module rebinds ``abs`` to ``fabs`` below
}


def _make(name: str, nargs: int):
    py = _PY_EXTRA.get(name) or getattr(_m, name)

    def f(*args):
        return py(*args)

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"math.{name} ({nargs} argument{'s' if nargs > 1 else ''}); a math-dialect op inside kernels."
    f.__loom_math__ = name
    return f


_UNARY = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tanh", "sinh", "cosh",
    "sin", "cos", "tan", "atan", "asin", "acos", "erf", "floor", "ceil", "trunc", "fabs", "cbrt",
    "asinh", "acosh", "atanh", "isnan", "isinf", "isfinite",
]
_BINARY = ["pow", "atan2", "copysign", "fmod"]

for _n in _UNARY:
    globals()[_n] = _make(_n, 1)
for _n in _BINARY:
    globals()[_n] = _make(_n, 2)
fma = _make("fma", 3)
abs = globals()["fabs"]  # noqa: A001 - loom.math.abs is fabs on floats
pi = _m.pi
e = _m.e
inf = _m.inf

__all__ = [*_UNARY, *_BINARY, "fma", "abs", "pi", "e", "inf"]
