"""Helpers called from kernels are inlined: plain module functions and nested defs (both were refused:
"calling unsupported Python function", "nested function ... cannot be called directly"). Values against numpy;
errors inside a helper name the helper's line and the call site."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_user_helpers as H
import tests.frontends.kernel.kernel_user_kernels as U
from loom.errors import LoomError
from loom.oracle import mlir
from tests.frontends.kernel.kernel_frontend_helpers import line_of, ops_named, upstream_verify

SRC, HSRC = U.__file__, H.__file__


def _reference(x, i):
    s = np.where(x < 0, -1.0, 1.0).astype(np.float32)
    y = np.clip(x * x, 0.5, 2.0) + 1.0 + (np.abs(x) + 10.0)
    return s, y.astype(np.float32), i * 3 + i


def _args():
    x = np.array([-2.0, -0.5, 0.0, 0.3, 0.9, 1.7], np.float32)
    return x, np.zeros_like(x), np.zeros_like(x), np.arange(-3, 3, dtype=np.int32)


@pytest.mark.sanitize
def test_helpers_compute_what_python_does():
    x, y, s, i = _args()
    want_s, want_y, want_i = _reference(x, i)
    U.uses_helpers(x, y, s, i)
    np.testing.assert_array_equal(s, want_s)
    np.testing.assert_allclose(y, want_y, rtol=1e-6)
    np.testing.assert_array_equal(i, want_i)
    assert not ops_named(U.uses_helpers.module, "func.call")  # inlined, not called


@pytest.mark.mlir
def test_upstream_mlir_agrees():
    upstream_verify(U.uses_helpers.module)
    x, y, s, i = _args()
    want_s, want_y, want_i = _reference(x, i)
    ran = mlir.run(U.uses_helpers.module, "uses_helpers", [x, y, s, i])
    np.testing.assert_allclose(ran.memrefs[1], want_y, rtol=1e-6)
    np.testing.assert_array_equal(ran.memrefs[2], want_s)
    np.testing.assert_array_equal(ran.memrefs[3], want_i)


def test_helper_stores_into_a_memref_argument():
    y = np.zeros(7, np.float32)
    U.helper_stores(y)
    np.testing.assert_array_equal(y, [0, 0, 2, 2, 4, 4, 0])


def test_helper_inside_a_loop_with_a_carried_value():
    x = np.linspace(-1, 2, 9)
    assert U.carried_through_helper(x) == pytest.approx(float((x * x).sum()))


def test_error_inside_a_helper_names_its_line_and_the_call():
    with pytest.raises(LoomError) as info:
        U.calls_bad_helper.module
    e = info.value
    assert e.filename == HSRC and e.line == line_of(HSRC, "# U:helperbad")
    assert "unknown name 'undefined_in_helper'" in e.message
    assert f"in helper 'cube_bad' called at {SRC}:{line_of(SRC, '# U:callbad')}" in e.message


def test_recursive_helper_is_refused():
    with pytest.raises(LoomError) as info:
        U.calls_recursive_helper.module
    assert "recursive helper calls" in info.value.message and "forever -> forever" in info.value.message
    assert info.value.line == line_of(HSRC, "# U:helperrec")


def test_library_functions_are_not_inlined():
    with pytest.raises(LoomError) as info:
        U.calls_numpy.module
    assert info.value.line == line_of(SRC, "# U:npclip")
    assert "unsupported Python function 'np.clip'" in info.value.message


def test_helper_arity_is_checked():
    with pytest.raises(LoomError) as info:
        U.helper_wrong_arity.module
    assert info.value.line == line_of(SRC, "# U:arity")
    assert "helper 'sq' takes 1 argument(s), got 2" in info.value.message
