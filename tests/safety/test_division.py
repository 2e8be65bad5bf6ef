"""Defect 3: integer division by zero never kills the interpreter, on any route; MIN / -1 wraps as in numpy.

Division checks are always on: a module with a run-time integer divisor is compiled with the
guarded entry (``loom.backends.c.checks``) and a zero divisor raises a LoomError at the op."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from xdsl.parser import Parser

from loom import I32, I64, MemRef, kernel
from loom.backends.c import compile_module, emit_c
from loom.dialects import context
from loom.errors import LoomError
from loom.frontends import pipeline as pl
from loom.frontends.pipeline import evaluate
from loom.jit import run_cpu


@kernel
def floordiv(A: MemRef[(8,), I32], B: MemRef[(8,), I32], Q: MemRef[(8,), I32], R: MemRef[(8,), I32]):
    for i in range(8):
        Q[i] = A[i] // B[i]
        R[i] = A[i] % B[i]


@kernel
def scalar_div(A: MemRef[(1,), I64], d: I64):
    A[0] = A[0] // d


LINE_OF_DIV = floordiv.py_function.__code__.co_firstlineno + 3


@pytest.mark.sanitize
def test_kernel_division_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.integers(-100, 100, 8).astype(np.int32)
    b = rng.integers(1, 9, 8).astype(np.int32) * rng.choice([-1, 1], 8).astype(np.int32)
    q, r = np.zeros(8, np.int32), np.zeros(8, np.int32)
    floordiv(a, b, q, r)
    np.testing.assert_array_equal(q, np.floor_divide(a, b))
    np.testing.assert_array_equal(r, np.remainder(a, b))


@pytest.mark.sanitize
def test_kernel_division_by_zero_is_a_located_error():
    a, b = np.arange(8, dtype=np.int32), np.ones(8, np.int32)
    b[5] = 0
    q, r = np.zeros(8, np.int32), np.zeros(8, np.int32)
    with pytest.raises(LoomError, match="integer division by zero") as err:
        floordiv(a, b, q, r)
    assert err.value.filename == __file__ and err.value.line == LINE_OF_DIV
    np.testing.assert_array_equal(q[:5], a[:5])  # the elements before the zero were computed


@pytest.mark.sanitize
def test_min_over_minus_one_wraps_as_numpy():
    a = np.array([np.iinfo(np.int64).min], np.int64)
    with np.errstate(over="ignore"):
        want = a // np.int64(-1)
    scalar_div(a, -1)
    assert a[0] == want[0] == np.iinfo(np.int64).min
    with pytest.raises(LoomError, match="division by zero"):
        scalar_div(np.array([3], np.int64), 0)
    a = np.array([-7], np.int64)
    scalar_div(a, 2)
    assert a[0] == -4  # floor division, as numpy


DIVISIONS_MLIR = """
func.func @{op}(%a: {t}, %b: {t}) -> {t} {{
  %q = arith.{op} %a, %b : {t}
  func.return %q : {t}
}}
"""
OPS = ["divsi", "remsi", "divui", "remui", "floordivsi", "ceildivsi", "ceildivui"]


def compiled(op, t="i32", checked=None):
    module = Parser(context(), DIVISIONS_MLIR.format(op=op, t=t)).parse_module()
    return compile_module(module, checked=checked).function(op)


@pytest.mark.sanitize
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("t", ["i8", "i32", "i64", "index"])
def test_compile_module_route_refuses_zero_divisor(op, t):
    fn = compiled(op, t)
    with pytest.raises(LoomError, match="integer division by zero"):
        fn(7, 0)
    assert int(fn(7, 2)) == {"divsi": 3, "remsi": 1, "divui": 3, "remui": 1, "floordivsi": 3, "ceildivsi": 4,
                             "ceildivui": 4}[op]


@pytest.mark.sanitize
@pytest.mark.parametrize("op", ["divsi", "remsi", "floordivsi", "ceildivsi"])
@pytest.mark.parametrize("t", ["i8", "i32", "i64", "index"])
def test_signed_min_by_minus_one_wraps(op, t):
    """numpy's answer (MIN / -1 is MIN, MIN % -1 is 0), computed without C's undefined MIN / -1 (UBSan)."""
    dtype = {"i8": np.int8, "i32": np.int32, "i64": np.int64, "index": np.int64}[t]
    low = np.iinfo(dtype).min
    for a in (low, low + 1, -5, 5):
        with np.errstate(over="ignore"):
            want = 0 if op == "remsi" else dtype(a) * dtype(-1)  # floor, ceil and truncation agree: exact quotients
            assert compiled(op, t)(int(a), -1) == dtype(want)


def test_constant_divisors_need_no_guard():
    text = "func.func @f(%a: i32) -> i32 {\n %c = arith.constant 3 : i32\n %q = arith.divsi %a, %c : i32\n" \
           " func.return %q : i32\n}\n"
    source = emit_c(Parser(context(), text).parse_module())
    assert "setjmp" not in source and "loomh_status" not in source
    assert "setjmp" in emit_c(Parser(context(), DIVISIONS_MLIR.format(op="divsi", t="i32")).parse_module())


@pytest.mark.sanitize
def test_pipeline_c_path_divides_by_zero_as_the_language_defines():
    x = pl.Var("x")
    a, b = pl.ImageParam(pl.Int32, 1, "a"), pl.ImageParam(pl.Int32, 1, "b")
    out = pl.Func("out")
    out[x] = a[x] / b[x] + a[x] % b[x]
    inputs = {"a": np.arange(-8, 8, dtype=np.int32), "b": np.array([0, 1, -1, 2, 0, 3] * 2 + [0, 5, 0, 7],
                                                                        np.int32)}
    got = run_cpu(out, inputs, (16,))
    np.testing.assert_array_equal(got, evaluate(out, inputs, (16,)))


def test_interpreter_survives_in_a_fresh_process(tmp_path):
    """SIGFPE would end the process with -8; it must print the LoomError and exit normally."""
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        from loom import kernel, MemRef, I32
        from loom.errors import LoomError

        @kernel
        def div(A: MemRef[(4,), I32], d: I32):
            A[0] = A[0] // d

        try:
            div(np.ones(4, np.int32), 0)
        except LoomError as e:
            print("refused:", e)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "k.py:8" in out.stdout
