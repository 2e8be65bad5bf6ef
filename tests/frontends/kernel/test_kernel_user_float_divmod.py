"""Float ``//`` and ``%`` are numpy's (and Python's) to the bit, signed zeros, infinities and NaN included. They
were ``floor(a / b)`` and ``a - floor(a / b) * b``: ``1.0 // 0.1`` gave 10.0 (Python: 9.0), ``1.0 % 0.1`` gave 0.0,
``1e17 % 3.0`` gave 0.0 (Python: 1.0), ``5.0 % inf`` gave NaN (Python: 5.0)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.frontends.kernel.kernel_user_kernels as U
from loom.oracle import mlir
from tests.fuzz.accel_mutator import FUZZ_SCALE

KERNELS = {np.float64: U.float_divmod64, np.float32: U.float_divmod32}
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 3.0, 0.7, 1e17, -1e-20, 1e300, 5e-324, np.inf, -np.inf, np.nan]


def _numpy(a, b):
    with np.errstate(all="ignore"):
        return np.floor_divide(a, b), np.remainder(a, b)


def _same_bits(got, want, what):
    np.testing.assert_array_equal(got, want, err_msg=what)  # NaN == NaN here
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=what + " (sign of zero)")


def _run(dtype, a, b):
    q, r = np.zeros_like(a), np.zeros_like(a)
    KERNELS[dtype](a, b, q, r)
    return q, r


@pytest.mark.sanitize
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_values_match_numpy(dtype):
    with np.errstate(all="ignore"):
        pairs = np.array([(x, y) for x in SPECIAL for y in SPECIAL], dtype=dtype)
    a, b = pairs[:, 0].copy(), pairs[:, 1].copy()
    q, r = _run(dtype, a, b)
    wq, wr = _numpy(a, b)
    _same_bits(q, wq, "//")
    _same_bits(r, wr, "%")


def test_python_examples():
    a = np.array([1.0, 1e17, 5.0, -7.5, 7.5])
    b = np.array([0.1, 3.0, np.inf, 2.0, -2.0])
    q, r = _run(np.float64, a, b)
    assert list(q) == [x // y for x, y in zip(a.tolist(), b.tolist())]
    assert list(r) == [x % y for x, y in zip(a.tolist(), b.tolist())]


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    a = np.array([1.0, 1e17, -0.7, 7.0, -1e-20, 0.0])
    b = np.array([0.1, 3.0, 0.1, -np.inf, 1.0, -2.0])
    ran = mlir.run(U.float_divmod64.module, "float_divmod64", [a, b, np.zeros_like(a), np.zeros_like(a)])
    wq, wr = _numpy(a, b)
    _same_bits(ran.memrefs[2], wq, "// on mlir-runner")
    _same_bits(ran.memrefs[3], wr, "% on mlir-runner")


@settings(max_examples=40 * FUZZ_SCALE, derandomize=True, deadline=None, database=None)
@given(st.lists(st.tuples(st.floats(width=32), st.floats(width=32)), min_size=1, max_size=16),
       st.sampled_from([np.float64, np.float32]))
def test_fuzz_matches_numpy(pairs, dtype):
    a = np.array([p[0] for p in pairs], dtype)
    b = np.array([p[1] for p in pairs], dtype)
    q, r = _run(dtype, a, b)
    wq, wr = _numpy(a, b)
    _same_bits(q, wq, f"// {a} {b}")
    _same_bits(r, wr, f"% {a} {b}")


def test_the_printed_ir_parses_back_in_loom_s_context():
    """arith.remf is not one of xDSL's arith ops: loom's context registers it, so the kernel's printed IR (a stage
    file, ``loom kernel --ir``) reads back."""
    from xdsl.parser import Parser

    from loom.dialects import context

    text = U.float_divmod64.ir()
    assert "arith.remf" in text
    assert "arith.remf" in str(Parser(context(), text).parse_module())
