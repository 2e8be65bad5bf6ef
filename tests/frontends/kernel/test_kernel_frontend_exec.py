"""Kernel semantics: run through Kernel.__call__ (lower_to_c + C backend) and compare with numpy / Python."""

import math

import numpy as np
import pytest

import tests.frontends.kernel.kernel_frontend_samples as S
from tests.frontends.kernel.kernel_frontend_helpers import backend_available
from loom.errors import LoomError

needs_backend = pytest.mark.skipif(not backend_available(), reason="C backend / recipes not available yet")
rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@needs_backend
def test_matmul_matches_numpy():
    A, B = f32(5, 3), f32(3, 4)
    C = f32(5, 4)
    expect = C + A @ B
    S.matmul(A, B, C)
    np.testing.assert_allclose(C, expect, rtol=1e-5, atol=1e-5)


@needs_backend
def test_affine_matmul_matches_numpy():
    A, B = f32(4, 8), f32(8, 3)
    C = np.zeros((4, 3), np.float32)
    S.matmul_affine(A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


@needs_backend
def test_triangle_affine_zeroes_upper_triangle():
    A = rng.standard_normal((5, 5))
    expect = np.tril(A)
    S.triangle_affine(A)
    np.testing.assert_array_equal(A, expect)


@needs_backend
def test_conv2d_nchw_matches_numpy():
    I, W = f32(1, 2, 6, 7), f32(3, 2, 3, 3)
    O = np.zeros((1, 3, 4, 5), np.float32)
    S.conv2d_nchw(I, W, O)
    expect = np.zeros_like(O)
    for f in range(3):
        for y in range(4):
            for x in range(5):
                expect[0, f, y, x] = np.sum(I[0, :, y:y + 3, x:x + 3] * W[f])
    np.testing.assert_allclose(O, expect, rtol=1e-4, atol=1e-4)


@needs_backend
def test_stencil_with_borders():
    A = f32(6, 5)
    B = np.zeros_like(A)
    S.stencil(A, B)
    expect = A.copy()
    expect[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    np.testing.assert_allclose(B, expect, rtol=1e-6, atol=1e-6)


@needs_backend
def test_softmax_rows():
    X = f32(3, 7)
    Y = np.zeros_like(X)
    S.softmax(X, Y)
    e = np.exp(X - X.max(axis=1, keepdims=True))
    np.testing.assert_allclose(Y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@needs_backend
def test_prefix_sum():
    A = rng.integers(-50, 50, 11).astype(np.int32)
    B = np.zeros_like(A)
    S.prefix_sum(A, B)
    np.testing.assert_array_equal(B, np.cumsum(A))


@needs_backend
def test_if_values_from_both_arms():
    assert S.both_arms(np.float32(2.5), np.float32(-1.0)) == pytest.approx(3.5)
    assert S.both_arms(np.float32(-4.0), np.float32(1.0)) == pytest.approx(5.0)
    assert [S.clamp_elif(v) for v in (-2.0, 0.25, 7.0)] == [0.0, 0.25, 1.0]


@needs_backend
def test_kernel_calling_kernels():
    A = f32(6)
    B = np.zeros_like(A)
    S.double_call(A, B)
    np.testing.assert_allclose(B, 2 * (2 * A + 1) + 1, rtol=1e-6)


@needs_backend
def test_parallel_loop():
    A = rng.standard_normal((3, 4))
    B = np.zeros_like(A)
    S.par_scale(A, B)
    i, j = np.indices(A.shape)
    np.testing.assert_allclose(B, A * 2 + i - j)


@needs_backend
def test_while_loop():
    def steps(n):
        k = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            k += 1
        return k

    for n in (1, 6, 27):
        assert S.collatz(np.int32(n)) == steps(n)


@needs_backend
def test_scalar_params_and_tuple_results():
    s, k = S.poly(0.5, 6)
    assert s == pytest.approx(sum(0.5**i for i in range(6)))
    assert k == 15


@needs_backend
@pytest.mark.parametrize("a,b", [(-7, 2), (7, -2), (-7, -2), (9, 4)])
def test_python_integer_semantics(a, b):
    q, r, x, d = S.int_ops(np.int32(a), np.int32(b))
    assert (q, r) == (a // b, a % b)
    assert x == ((a << 2) ^ b)
    assert d == pytest.approx(a / b)


@needs_backend
def test_short_circuit_and_selects():
    A = np.array([1.0, -2.0, 3.0, 4.0], np.float32)
    for x, i in [(1.5, 0), (-2.0, 1), (0.5, 3), (-0.5, 2)]:
        a = abs(x)
        b = A[i] if i < 4 else 0.0
        ok = i > 0 and A[i - 1] > 0.0
        expect = a + b + float(ok) + abs(x) + math.sqrt(abs(x)) + x * x
        assert S.selects(np.float32(x), A, i) == pytest.approx(expect, rel=1e-5)


@needs_backend
def test_subviews_and_local_buffers():
    A = f32(8, 8)
    B = np.zeros(8, np.float32)
    expect = A.copy()
    expect[0, 2] = 100.0
    expect[4, 2] = 100.0
    expect[3, 2] = -1.0
    S.tiles(A, B)
    np.testing.assert_array_equal(A, expect)
    assert B[0] == pytest.approx(expect[7, 0] + expect[7, 3])


@needs_backend
def test_math_functions():
    x = 0.7
    expect = (math.exp(x) + math.log(x + 2) + math.tanh(x) + math.sin(x) * math.cos(x) + math.floor(x)
              + math.ceil(x) + x**2 + math.exp(x))
    assert S.math_mix(np.float32(x)) == pytest.approx(expect, rel=1e-5)


# ---------------------------------------------------------------- call-time argument checks (no backend needed)


def test_call_checks_dtype():
    with pytest.raises(LoomError, match="'A' expects dtype float32, got float64"):
        S.matmul(np.zeros((2, 2)), np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32))


def test_call_checks_rank_and_static_dims():
    with pytest.raises(LoomError, match="'A' expects rank 2"):
        S.matmul_affine(np.zeros(4, np.float32), np.zeros((8, 3), np.float32), np.zeros((4, 3), np.float32))
    with pytest.raises(LoomError, match="'B' dim 1 must be 3, got 5"):
        S.matmul_affine(np.zeros((4, 8), np.float32), np.zeros((8, 5), np.float32), np.zeros((4, 3), np.float32))


def test_call_checks_equal_symbolic_dims():
    with pytest.raises(LoomError, match="'B' dim 0 \\(K\\) is 4 but 'A' dim 1 \\(K\\) is 3"):
        S.matmul(np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32), np.zeros((2, 2), np.float32))


def test_call_checks_arity_scalars_and_layout():
    with pytest.raises(LoomError, match="takes 2 argument"):
        S.both_arms(1.0)
    with pytest.raises(LoomError, match="'n' expects an integer"):
        S.poly(1.0, 2.5)
    # strided views run on copies (test_kernel_user_views); C-contiguity is still required of compile()'s function
    with pytest.raises(LoomError, match="C-contiguous"):
        S.prefix_sum.compile()(np.zeros(8, np.int32)[::2], np.zeros(4, np.int32))
