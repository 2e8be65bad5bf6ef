"""The tracing backend: per-transaction records and counters, readable from
Python, for the simulator and for the AXI backend on the fake device."""

import numpy as np
import pytest
from tests.runtime.runtime_helpers import AXI, I32, V3, Driver, random_i32, wrap_matmul

from loom.runtime import trace_counters, trace_records

pytestmark = pytest.mark.sanitize


def cs_flow(lib, a, b, S=4):
    M, K = a.shape
    N = b.shape[1]
    c = np.zeros((M, N), dtype=np.int32)
    d = Driver(lib)
    for m in range(0, M, S):
        for n in range(0, N, S):
            for k in range(0, K, S):
                d.put_literal(7)
                d.put(a[m : m + S, k : k + S])
                d.put(b[k : k + S, n : n + S])
                d.flush()
            d.send_literal(8)
            d.recv(c[m : m + S, n : n + S])
    d.check()
    return c


@pytest.mark.parametrize("backend", ["sim", "fake_axi"])
def test_trace_of_the_cs_flow(lib, backend):
    if backend == "fake_axi":
        lib.loom_dma_use_backend(AXI)
        lib.loom_dma_use_axi_platform(lib.loom_fake_axi_platform())
    lib.loom_sim_use_model(V3, 4, I32)
    lib.loom_dma_set_tracing(1)
    assert lib.dma_init(0x40400000, 0x16000000, 1024, 0x16400000, 1024) == 0
    rng = np.random.default_rng(4)
    a, b = random_i32(rng, (8, 8)), random_i32(rng, (8, 8))
    c = cs_flow(lib, a, b)
    np.testing.assert_array_equal(c, wrap_matmul(a, b))
    # by hand: 2x2 output tiles, each 2 k-steps of (7, A, B) = 33 words, then (8) = 1 word
    t = trace_counters(lib)
    assert (t["sends"], t["words_sent"], t["bytes_sent"]) == (12, 4 * (2 * 33 + 1), 4 * 4 * (2 * 33 + 1))
    assert (t["recvs"], t["words_received"], t["bytes_received"]) == (4, 64, 256)
    recs = trace_records(lib)
    per_tile = [("send", 33, 7), ("send", 33, 7), ("send", 1, 8)]
    expected = []
    for m in range(2):
        for n in range(2):
            expected += per_tile + [("recv", 16, int(c[4 * m, 4 * n]) & 0xFFFFFFFF)]
    assert recs == expected


def test_operand_bytes_and_reset(lib):
    lib.loom_sim_use_model(V3, 4, I32)
    lib.dma_init(0, 0, 0, 0, 0)
    lib.loom_dma_set_tracing(1)  # wrapping after init works too
    lib.loom_trace_set_operand_bytes(1)
    d = Driver(lib)
    d.send_literal(1)
    d.send(np.ones((4, 4), dtype=np.int32))
    t = trace_counters(lib)
    assert (t["sends"], t["words_sent"], t["bytes_sent"]) == (2, 17, 17)
    lib.loom_trace_set_operand_bytes(4)
    lib.loom_trace_reset()
    assert trace_counters(lib)["sends"] == 0 and trace_records(lib) == []
    lib.loom_dma_set_tracing(0)
    d.send_literal(1)
    d.send(np.ones((4, 4), dtype=np.int32))
    assert trace_counters(lib)["sends"] == 0  # unwrapped: nothing recorded
    d.check()


def test_record_index_out_of_range(lib):
    assert lib.loom_trace_record(0, None, None, None) == -1
    assert lib.loom_trace_record(-1, None, None, None) == -1
