"""The paper's MatMul flows (Table of opcode maps) driven through the runtime
on the simulated accelerators; results must equal numpy exactly."""

import numpy as np
import pytest
from tests.runtime.runtime_helpers import F32, I32, V1, V2, V3, V4, Driver, last_error, random_i32, wrap_matmul

pytestmark = pytest.mark.sanitize


def tiles(total, step):
    return range(0, total, step)


def run_flow(lib, version, size, flow, a, b, dtype=I32, batch=True):
    """Drive one flow; ``batch`` packs an opcode and its operands into one
    transaction, else every op is its own transaction (public-code style)."""
    M, K = a.shape
    N = b.shape[1]
    c = np.zeros((M, N), dtype=a.dtype)
    assert lib.loom_sim_use_model(version, size, dtype) == 0
    assert lib.dma_init(0, 0, 65536, 0, 65536) == 0
    d = Driver(lib, dtype)
    S = size

    def send(*items):
        for item in items:
            if isinstance(item, int):
                d.put_literal(item)
            else:
                d.put(item)
            if not batch:
                d.flush()
        d.flush()

    A = lambda m, k: a[m : m + S, k : k + S]
    B = lambda k, n: b[k : k + S, n : n + S]
    C = lambda m, n: c[m : m + S, n : n + S]
    if flow == "Ns":  # (m, n, k): (s r)
        lit = {1: (), 2: (7,), 3: (15,)}[version]
        for m in tiles(M, S):
            for n in tiles(N, S):
                for k in tiles(K, S):
                    send(*lit, A(m, k), B(k, n))
                    d.recv(C(m, n), accumulate=True)
    elif flow == "As":  # (m, k, n): (sA (sB-compute r))
        for m in tiles(M, S):
            for k in tiles(K, S):
                send(1, A(m, k))
                for n in tiles(N, S):
                    send(6 if version == 2 else 14, B(k, n))
                    d.recv(C(m, n), accumulate=True)
    elif flow == "Bs":  # (n, k, m): (sB (sA-compute r))
        for n in tiles(N, S):
            for k in tiles(K, S):
                send(2, B(k, n))
                for m in tiles(M, S):
                    send(5 if version == 2 else 13, A(m, k))
                    d.recv(C(m, n), accumulate=True)
    elif flow == "Cs":  # (m, n, k): ((s) r), partial sums stay in the accelerator
        for m in tiles(M, S):
            for n in tiles(N, S):
                for k in tiles(K, S):
                    send(7, A(m, k), B(k, n))
                send(8)
                d.recv(C(m, n))
    d.check()
    assert lib.dma_free() == 0, last_error(lib)
    return c


CASES = [
    (V1, 4, "Ns"), (V1, 8, "Ns"), (V1, 16, "Ns"),
    (V2, 4, "Ns"), (V2, 8, "As"), (V2, 16, "Bs"),
    (V3, 4, "Ns"), (V3, 8, "As"), (V3, 8, "Bs"), (V3, 16, "Cs"), (V3, 4, "Cs"),
]


@pytest.mark.parametrize("version,size,flow", CASES)
def test_int32_flow_matches_numpy(lib, version, size, flow):
    rng = np.random.default_rng(version * 100 + size)
    M, N, K = 3 * size, 2 * size, 4 * size
    a, b = random_i32(rng, (M, K)), random_i32(rng, (K, N))
    c = run_flow(lib, version, size, flow, a, b)
    np.testing.assert_array_equal(c, wrap_matmul(a, b))


@pytest.mark.parametrize("flow", ["Ns", "Cs"])
def test_one_transaction_per_op_matches_batched(lib, flow):
    rng = np.random.default_rng(5)
    a, b = random_i32(rng, (16, 24)), random_i32(rng, (24, 8))
    c = run_flow(lib, V3, 8, flow, a, b, batch=False)
    np.testing.assert_array_equal(c, wrap_matmul(a, b))


@pytest.mark.parametrize("version,flow", [(V1, "Ns"), (V2, "As"), (V3, "Cs")])
def test_float32_flow(lib, version, flow):
    rng = np.random.default_rng(11)
    # small integers: every partial sum is exact in float32, so equality is exact
    a = rng.integers(-8, 8, size=(16, 32)).astype(np.float32)
    b = rng.integers(-8, 8, size=(32, 24)).astype(np.float32)
    c = run_flow(lib, version, 8, flow, a, b, dtype=F32)
    np.testing.assert_array_equal(c, a @ b)


def v4_ext(m, n, k):
    return m | (n << 10) | (k << 20)


def test_v4_extension_word_of_the_paper():
    assert v4_ext(32, 32, 32) == 33587232


@pytest.mark.parametrize("tm,tn,tk", [(32, 48, 16), (16, 64, 32), (64, 16, 48)])
def test_v4_non_square_tiles_output_stationary(lib, tm, tn, tk):
    rng = np.random.default_rng(tm + tn + tk)
    M, N, K = 2 * tm, 2 * tn, 3 * tk
    a, b = random_i32(rng, (M, K)), random_i32(rng, (K, N))
    c = np.zeros((M, N), dtype=np.int32)
    assert lib.loom_sim_use_model(V4, 0, I32) == 0
    assert lib.dma_init(0, 0, 0, 0, 0) == 0
    d = Driver(lib)
    ext = v4_ext(tm, tn, tk)
    for m in range(0, M, tm):
        for n in range(0, N, tn):
            for k in range(0, K, tk):
                d.put_literal(7)
                d.put_literal(ext)
                d.put(a[m : m + tm, k : k + tk])
                d.put(b[k : k + tk, n : n + tn])
                d.flush()
            d.send_literal(8)
            d.send_literal(ext)  # the extension word may come in its own transaction
            d.recv(c[m : m + tm, n : n + tn])
    d.check()
    assert lib.dma_free() == 0
    np.testing.assert_array_equal(c, wrap_matmul(a, b))


def test_v4_ns_with_cpu_accumulation(lib):
    rng = np.random.default_rng(3)
    tm, tn, tk = 16, 32, 64
    a, b = random_i32(rng, (32, 128)), random_i32(rng, (128, 64))
    c = np.zeros((32, 64), dtype=np.int32)
    lib.loom_sim_use_model(V4, 16, I32)
    lib.dma_init(0, 0, 0, 0, 0)
    d = Driver(lib)
    for m in range(0, 32, tm):
        for n in range(0, 64, tn):
            for k in range(0, 128, tk):
                d.put_literal(15)
                d.put_literal(v4_ext(tm, tn, tk))
                d.put(a[m : m + tm, k : k + tk])
                d.put(b[k : k + tk, n : n + tn])
                d.flush()
                d.recv(c[m : m + tm, n : n + tn], accumulate=True)
    d.check()
    np.testing.assert_array_equal(c, wrap_matmul(a, b))
