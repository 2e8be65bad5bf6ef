"""Seeded fuzz of the kernel language's arithmetic against Python on numpy scalars: random well-typed expressions
over I8/I16/I32/I64/U8/U32/F32/F64 (wrapping + - * and unary -, & | ^ ~, shifts, Python's // and %, casts between
every pair, abs/min/max, comparisons, conditional expressions) stored into one output array per type. Each kernel
runs compiled and as its own Python (``__wrapped__``, numpy scalars: the same wraparound), on random inputs with
the edges of each type (MIN, MAX, 0, -1, -0.0); the outputs must be equal bit for bit. Float min/max are the
kernel language's (IEEE 754-2019 minimum/maximum: -0.0 < +0.0, NaN propagates), so the Python run gets those.
Divisors are kept positive (MIN // -1 wraps as numpy's does, see ``test_kernel_nelli``), float expressions finite
and casts of floats to integers within range (C leaves the others undefined). ``LOOM_FUZZ_SCALE=N``: N times more."""

import builtins
import importlib.util
import itertools
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.accel_mutator import FUZZ_SCALE

TYPES = {"I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64, "U8": np.uint8, "U32": np.uint32,
         "F32": np.float32, "F64": np.float64}
INTS = [t for t in TYPES if t[0] in "IU"]
FLOATS = ["F32", "F64"]
LENGTH = 12
_COUNTER = itertools.count()


def _leaf(draw, t: str, literal: bool) -> str:
    if literal and draw(st.integers(0, 3)) == 0:
        return f"{draw(st.integers(0, 100))}.5" if t in FLOATS else str(draw(st.integers(0, 100)))
    return f"x{t}[i]"


@st.composite
def expr(draw, t: str, depth: int, literal: bool = False) -> str:
    """An expression of kernel type ``t`` reading an array (``literal``: or a literal). Floats stay within
    +-1e6 (inputs are within +-10). Literals only on the right: two literals fold with Python's unbounded ints."""
    if depth == 0:
        return _leaf(draw, t, literal)
    a = draw(expr(t, depth - 1))
    b = draw(expr(t, depth - 1, literal=True))
    if t in FLOATS:
        kind = draw(st.sampled_from(["+", "-", "*", "/", "abs", "minmax", "neg", "cast", "if", "floordiv"]))
        if kind in ("+", "-"):
            return f"({a} {kind} {b})"
        if kind == "*":  # bounded: a product of two clamped values
            return f"(min(max({a}, -100.0), 100.0) * min(max({b}, -100.0), 100.0))"
        if kind == "/":
            return f"({a} / (abs({b}) + 1.0))"
        if kind == "floordiv":
            return f"({a} // (abs({b}) + 0.25) + {a} % (abs({b}) + 0.25))"
        if kind == "abs":
            return f"abs({a})"
        if kind == "neg":
            return f"(-{a})"
        if kind == "minmax":
            return f"{draw(st.sampled_from(['min', 'max']))}({a}, {b})"
        if kind == "cast":
            src = draw(st.sampled_from(list(TYPES)))
            return f"{t}({draw(expr(src, depth - 1))})"
        return f"({a} if {draw(cond(depth - 1))} else {b})"
    kind = draw(st.sampled_from(["+", "-", "*", "&", "|", "^", "~", "neg", "<<", ">>", "//", "%", "abs", "minmax",
                                 "cast", "if"]))
    if kind in ("+", "-", "*", "&", "|", "^"):
        return f"({a} {kind} {b})"
    if kind == "~":
        return f"(~{a})"
    if kind == "neg":
        return f"(-{a})"
    if kind in ("<<", ">>"):
        return f"({a} {kind} ({b} & 7))"
    if kind in ("//", "%"):
        return f"({a} {kind} (({b} & 15) + 1))"
    if kind == "abs":
        return f"abs({a})"
    if kind == "minmax":
        return f"{draw(st.sampled_from(['min', 'max']))}({a}, {b})"
    if kind == "cast":
        src = draw(st.sampled_from(list(TYPES)))
        inner = draw(expr(src, depth - 1))
        if src in FLOATS:  # float -> int: truncation of a value every integer type holds
            inner = f"min(max({inner}, -100.0), 100.0)" if t[0] == "I" else f"min(max({inner}, 0.0), 200.0)"
        return f"{t}({inner})"
    return f"({a} if {draw(cond(depth - 1))} else {b})"


@st.composite
def cond(draw, depth: int) -> str:
    t = draw(st.sampled_from(list(TYPES)))
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
    return f"{draw(expr(t, depth))} {op} {draw(expr(t, depth))}"


@st.composite
def kernel_source(draw) -> str:
    params = ", ".join(f"x{t}: MemRef[(N,), {t}]" for t in TYPES)
    outs = ", ".join(f"y{t}: MemRef[(N,), {t}]" for t in TYPES)
    body = [f"        y{t}[i] = {draw(expr(t, draw(st.integers(1, 3))))}" for t in TYPES]
    return ("import loom\nfrom loom.frontends.kernel import *\nN = Dim('N')\n\n\n@loom.kernel\n"
            f"def k({params}, {outs}):\n    for i in range(xI8.shape[0]):\n" + "\n".join(body) + "\n")


def _inputs(rng) -> list[np.ndarray]:
    arrays = []
    for dtype in TYPES.values():
        if np.dtype(dtype).kind == "f":
            edges = [0.0, -0.0, 1.0, -1.0, 9.75, -9.75]
            a = rng.uniform(-10, 10, LENGTH).astype(dtype)
        else:
            info = np.iinfo(dtype)
            edges = [info.min, info.max, 0, 1, info.max // 2 + 1] + ([-1] if info.min < 0 else [])
            a = rng.integers(info.min, info.max, LENGTH, dtype=dtype, endpoint=True)
        a[: len(edges)] = np.array(edges).astype(dtype)
        arrays.append(a)
    return arrays


def _ieee(which: str):
    """min/max as the kernel language defines them on floats (Python's builtins on ints)."""
    def pick(*args):
        acc = args[0]
        for b in args[1:]:
            if not isinstance(acc, (float, np.floating)):
                acc = getattr(builtins, which)(acc, b)
                continue
            t = type(acc) if isinstance(acc, np.floating) else type(b)
            x, y = t(acc), t(b)
            if np.isnan(x) or np.isnan(y):
                acc = t(np.nan)
            elif x == y:  # equal: the zero with the wanted sign
                acc = x if np.signbit(x) == (which == "min") else y
            else:
                acc = getattr(builtins, which)(x, y)
        return acc
    return pick


def _reference(k):
    fn = k.__wrapped__
    return types.FunctionType(fn.__code__, {**fn.__globals__, "min": _ieee("min"), "max": _ieee("max")})


def _load(source: str, tmp_path):
    path = tmp_path / f"arith_fuzz_{next(_COUNTER)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k


@pytest.mark.sanitize
@settings(max_examples=5 * FUZZ_SCALE, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(source=kernel_source(), seed=st.integers(0, 2**16))
def test_random_arithmetic_matches_python_on_numpy(source, seed, tmp_path):
    k = _load(source, tmp_path)
    xs = _inputs(np.random.default_rng(seed))
    got = [np.zeros(LENGTH, d) for d in TYPES.values()]
    want = [np.zeros(LENGTH, d) for d in TYPES.values()]
    k(*[x.copy() for x in xs], *got)
    with np.errstate(all="ignore"):  # numpy warns where it wraps; the kernel wraps the same
        _reference(k)(*[x.copy() for x in xs], *want)
    for name, g, w in zip(TYPES, got, want):
        assert g.tobytes() == w.tobytes(), (name, source, g, w)
