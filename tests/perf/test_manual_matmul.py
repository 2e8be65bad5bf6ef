"""The hand-written Ns MatMul drivers equal numpy exactly (int32 wrap-around)
for every accelerator version and size, including non-divisible problems, and
move exactly the words and transactions the Ns flow needs."""

from __future__ import annotations

import math

from tests.perf.manual_drivers import manual
import numpy as np
import pytest

from loom.errors import LoomError
from loom.runtime.host import trace_counters

pytestmark = pytest.mark.sanitize

SIZES = [(64, 64, 64), (100, 70, 36), (5, 3, 7)]


def random_i32(rng, shape):
    return rng.integers(-(2**31), 2**31, size=shape, dtype=np.int64).astype(np.int32)


def wrap_matmul_acc(a, b, c):
    """c + a @ b with int32 wrap-around, computed independently in uint64."""
    u = lambda x: x.astype(np.int64).astype(np.uint64)
    return (u(c) + u(a) @ u(b)).astype(np.uint32).view(np.int32)


def problem(M, N, K, seed):
    rng = np.random.default_rng(seed)
    return random_i32(rng, (M, K)), random_i32(rng, (K, N)), random_i32(rng, (M, N))


@pytest.mark.parametrize("M,N,K", SIZES)
@pytest.mark.parametrize("tile", [4, 8, 16])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_v123_equal_numpy(drivers, version, tile, M, N, K):
    A, B, C = problem(M, N, K, seed=version * 100 + tile + M)
    expected = wrap_matmul_acc(A, B, C)
    manual.matmul_ns(version, A, B, C, tile, lib=drivers)
    np.testing.assert_array_equal(C, expected)


@pytest.mark.parametrize("M,N,K", SIZES)
@pytest.mark.parametrize("tile", [16, 32, 64])
def test_v4_equal_numpy(drivers, tile, M, N, K):
    A, B, C = problem(M, N, K, seed=tile + M)
    expected = wrap_matmul_acc(A, B, C)
    manual.matmul_ns(4, A, B, C, tile, lib=drivers)
    np.testing.assert_array_equal(C, expected)


@pytest.mark.parametrize("version,tile", [(1, 4), (2, 8), (3, 16), (4, 32)])
def test_f32_small_integers_exact(drivers, version, tile):
    rng = np.random.default_rng(version)
    A = rng.integers(-8, 9, (37, 29)).astype(np.float32)
    B = rng.integers(-8, 9, (29, 41)).astype(np.float32)
    C = rng.integers(-8, 9, (37, 41)).astype(np.float32)
    expected = C.astype(np.float64) + A.astype(np.float64) @ B.astype(np.float64)
    manual.matmul_ns(version, A, B, C, tile, lib=drivers)
    np.testing.assert_array_equal(C, expected.astype(np.float32))


@pytest.mark.parametrize("version", [1, 2, 3])
def test_ns_transfers_one_send_and_recv_per_tile(drivers, version):
    M, N, K, T = 100, 70, 36, 8
    A, B, C = problem(M, N, K, seed=7)
    manual.matmul_ns(version, A, B, C, T, lib=drivers)
    tiles = math.ceil(M / T) * math.ceil(N / T) * math.ceil(K / T)
    header = 0 if version == 1 else 1
    assert trace_counters(drivers)["sends"] == tiles
    assert trace_counters(drivers)["recvs"] == tiles
    assert trace_counters(drivers)["words_sent"] == tiles * (header + 2 * T * T)
    assert trace_counters(drivers)["words_received"] == tiles * T * T


def test_v4_edge_tiles_shrink_to_multiples_of_16(drivers):
    M, N, K, T = 100, 70, 36, 32
    A, B, C = problem(M, N, K, seed=8)
    manual.matmul_ns(4, A, B, C, T, lib=drivers)
    edges = lambda n: [min(T, n - i) + (-min(T, n - i)) % 16 for i in range(0, n, T)]
    sent = sum(2 + m * k + k * n for m in edges(M) for n in edges(N) for k in edges(K))
    received = sum(m * n for m in edges(M) for n in edges(N) for _ in edges(K))
    counters = trace_counters(drivers)
    assert counters["words_sent"] == sent
    assert counters["words_received"] == received
    assert counters["sends"] == len(edges(M)) * len(edges(N)) * len(edges(K))


@pytest.mark.parametrize("version,tile", [(3, 5), (1, 32), (4, 8), (4, 80)])
def test_bad_tile_is_loom_error(drivers, version, tile):
    A, B, C = problem(8, 8, 8, seed=1)
    with pytest.raises(LoomError) as err:
        manual.matmul_ns(version, A, B, C, tile, lib=drivers)
    assert "error code" in str(err.value) or "size" in str(err.value)


def test_bad_operands_are_loom_errors(drivers):
    A, B, C = problem(8, 6, 4, seed=2)
    with pytest.raises(LoomError, match="shapes"):
        manual.matmul_ns(3, A, A, C, 8, lib=drivers)
    with pytest.raises(LoomError, match="int32 or all float32"):
        manual.matmul_ns(3, A.astype(np.float32), B, C, 8, lib=drivers)
    with pytest.raises(LoomError, match="C-contiguous"):
        manual.matmul_ns(3, np.asfortranarray(A), B, C, 8, lib=drivers)
    with pytest.raises(LoomError, match="version"):
        manual.matmul_ns(5, A, B, C, 8, lib=drivers)
