"""Double buffering (compile_driver(..., double_buffer=True)): same results as numpy and as the
blocking driver, same transactions, a lower total time on the timing model, and the runtime
pieces (alternating staging halves, deferred receives, in-flight semantics of the simulator)."""

from __future__ import annotations

import ctypes
import functools

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import conv_module, desc, matmul_arrays, matmul_module, matmul_reference
from tests.runtime.runtime_helpers import ERR_STAGING_OVERFLOW, ERR_STATE, ERR_UNKNOWN_OPCODE, V2, V3, last_error

from loom.driver.compile import compile_driver
from loom.runtime.timing import deterministic_host, timing_report
from loom.runtime import memref_descriptor

CASES = [("matmul_v1.json", "v1_4", "Ns", None), ("matmul_v2.json", "v2_8", "Ns", None),
         ("matmul_v2.json", "v2_8", "As", None), ("matmul_v2.json", "v2_4", "Bs", None),
         ("matmul_v3.json", "v3_16", "Ns", None), ("matmul_v3.json", "v3_8", "As", None),
         ("matmul_v3.json", "v3_4", "Cs", None), ("matmul_v4.json", "v4_16", "Cs", {"m": 48, "n": 16, "k": 32}),
         ("matmul_v4.json", "v4_16", "Bs", {"m": 32, "n": 32, "k": 16})]
SIZES = [(100, 70, 36), (32, 64, 48), (17, 5, 9)]


@functools.cache
def driver(path, acc, flow, tiles, double_buffer, inline_copies=True):
    return compile_driver(matmul_module(), desc(path), acc, flow, tile_sizes=dict(tiles) if tiles else None,
                          double_buffer=double_buffer, inline_copies=inline_copies)


def _key(tiles):
    return tuple(sorted(tiles.items())) if tiles else None


@pytest.mark.sanitize
@pytest.mark.parametrize("path,acc,flow,tiles", CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_double_buffered_matmul_equals_numpy(path, acc, flow, tiles):
    drv = driver(path, acc, flow, _key(tiles), True)
    plain = driver(path, acc, flow, _key(tiles), False)
    for M, N, K in SIZES:
        A, B, C = matmul_arrays(M, N, K, seed=M)
        expected = matmul_reference(A, B, C)
        C2 = C.copy()
        t = drv(A, B, C).transfers
        assert np.array_equal(C, expected.astype(np.int32)), (M, N, K)
        t2 = plain(A, B, C2).transfers
        assert t == t2  # same transactions and words per operand, only the timing differs


@pytest.mark.sanitize
def test_double_buffered_matmul_f32(tmp_path):
    from tests.accel_flow.accel_flow_helpers import f32_description
    from xdsl.dialects.builtin import f32
    path = f32_description(tmp_path, "matmul_v3.json")
    drv = compile_driver(matmul_module(elem=f32), path, "v3_8", "Ns", double_buffer=True)
    rng = np.random.default_rng(3)
    A, B, C = (rng.standard_normal(s).astype(np.float32) for s in ((30, 20), (20, 12), (30, 12)))
    expected = C.astype(np.float64) + A.astype(np.float64) @ B.astype(np.float64)
    drv(A, B, C)
    np.testing.assert_allclose(C, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.sanitize
@pytest.mark.parametrize("ic,oc,size,f,stride", [(3, 4, 11, 3, 2), (5, 3, 8, 1, 1), (4, 2, 9, 3, 1)])
def test_double_buffered_conv_equals_numpy(ic, oc, size, f, stride):
    rng = np.random.default_rng(ic)
    o = (size - f) // stride + 1
    I = rng.integers(-4, 4, size=(1, ic, size, size)).astype(np.int32)
    W = rng.integers(-4, 4, size=(oc, ic, f, f)).astype(np.int32)
    O = rng.integers(-4, 4, size=(1, oc, o, o)).astype(np.int32)
    expected = O.astype(np.int64).copy()
    for y in range(f):
        for x in range(f):
            win = I[0, :, y:y + stride * (o - 1) + 1:stride, x:x + stride * (o - 1) + 1:stride].astype(np.int64)
            expected[0] += np.tensordot(W[:, :, y, x].astype(np.int64), win, axes=([1], [0]))
    compile_driver(conv_module(stride), desc("conv2d.json"), double_buffer=True)(I, W, O)
    assert np.array_equal(O, expected.astype(np.int32))


def test_generated_code_overlaps():
    src = driver("matmul_v3.json", "v3_16", "Ns", None, True).c_source
    assert "loom_dma_set_double_buffering(" in src and "copy_from_outbuffer_deferred_acc_i32(" in src
    body = src[src.index("= loom_dma_set_double_buffering("):]  # the call, not the declaration
    # the send is started and the next staging begins without waiting for it
    start = body.index("dma_start_send(")
    assert body.index("dma_wait_send()") < start  # the wait (for the previous send) comes first
    blocking = driver("matmul_v3.json", "v3_16", "Ns", None, False).c_source
    assert "loom_dma_set_double_buffering" not in blocking and "deferred" not in blocking


@pytest.mark.parametrize("path,acc,flow", [("matmul_v3.json", "v3_16", "Ns"), ("matmul_v2.json", "v2_8", "As"),
                                           ("matmul_v3.json", "v3_8", "Cs"), ("matmul_v1.json", "v1_8", "Ns")])
@pytest.mark.parametrize("inline_copies", [False, True])
def test_double_buffering_lowers_total_time(lib, path, acc, flow, inline_copies):
    """Machine-independent: deterministic host costs (50 ns per call, 2 ns per word). With the runtime
    calls of every copy (inline_copies=False) or the driver's own copies (dma-inline-copies, charged
    where they are staged: while the previous send streams), a 10% gain."""
    totals = []
    for db in (False, True):
        drv = driver(path, acc, flow, None, db, inline_copies)
        A, B, C = matmul_arrays(96, 96, 96)
        expected = matmul_reference(A, B, C)
        with deterministic_host(lib, call_s=50e-9, word_s=2e-9):
            r = drv(A, B, C).timing
        assert np.array_equal(C, expected.astype(np.int32))
        assert r.total_s == pytest.approx(r.host_copy_s + r.host_other_s + r.wait_s, rel=1e-12)
        totals.append(r)
    plain, db = totals
    # the same work, done with overlap
    assert (db.dma_s, db.compute_s, db.transactions) == (plain.dma_s, plain.compute_s, plain.transactions)
    assert db.host_copy_s == pytest.approx(plain.host_copy_s, rel=1e-12)
    assert db.total_s < 0.9 * plain.total_s


# ------------------------------------------------------------------ runtime pieces
def _desc(a):
    d = memref_descriptor(a)
    return a.ndim, ctypes.byref(d), d


def test_simulator_delivers_a_send_when_it_completes(lib):
    """Staging words overwritten while a send is in flight are what the accelerator gets."""
    lib.loom_sim_use_model(V2, 4, 0)
    assert lib.dma_init(0, 0, 64, 0, 64) == 0
    lib.write_literal(7, 0)
    lib.dma_start_send(1, 0)
    lib.write_literal(8, 0)  # not allowed on hardware: the DMA may still be reading word 0
    assert lib.dma_wait_send() == ERR_UNKNOWN_OPCODE  # v2 has no opcode 8: the overwrite was sent
    assert "opcode 8" in last_error(lib)


def test_halves_alternate_and_are_checked(lib):
    lib.loom_sim_use_model(V3, 4, 0)
    assert lib.loom_dma_set_double_buffering(1) == ERR_STATE  # before dma_init
    assert "before dma_init" in last_error(lib)
    lib.loom_dma_clear_error()
    assert lib.dma_init(0, 0, 64, 0, 64) == 0
    assert lib.loom_dma_set_double_buffering(1) == 0
    buf = lib.dma_in_buffer()
    lib.write_literal(1, 0)   # sA into half 0
    tile = np.arange(16, dtype=np.int32).reshape(4, 4)
    rank, ptr, _keep = _desc(tile)
    assert lib.copy_to_inbuffer_i32(rank, ptr, 1) == 17
    lib.dma_start_send(17, 0)
    lib.write_literal(2, 0)   # sB goes to the other half while the first send is in flight
    assert (buf[0], buf[32]) == (1, 2)
    assert lib.write_literal(3, 32) == -1  # offsets are relative to a 32-word half
    assert lib.loom_dma_error_code() == ERR_STAGING_OVERFLOW
    assert "input (half) staging buffer of 32 words" in last_error(lib)


def _stage_inline(lib, buf, at: int, report: bool) -> None:
    """What a driver staging by itself does: sA (opcode 1 and a 4x4 tile) written into the buffer at
    ``at``, then (``report``) the words reported where they were copied."""
    for i, word in enumerate([1] + list(range(16))):
        buf[at + i] = word
    if report:
        lib.loom_timing_driver_copied(0, 17)


@pytest.mark.sanitize
@pytest.mark.parametrize("report", [True, False])
def test_driver_staging_is_charged_where_it_happens(lib, report):
    """Deterministic host (no call cost, 1 ns a word; 100 MHz, 32-bit stream, 10-cycle latency): the
    second tile is staged while the first send streams. Reported by the driver, its 17 words overlap
    that send; not reported, they are charged at the next send, after its wait (serialised)."""
    from loom.accel.timing import TimingConfig
    from loom.runtime.timing import configure_timing
    word, cycle = 1e-9, 10e-9
    configure_timing(lib, TimingConfig(clock_hz=100e6, ops_per_cycle=8, stream_width_bits=32, dma_latency_cycles=10))
    lib.loom_sim_use_model(V3, 4, 0)
    with deterministic_host(lib, call_s=0.0, word_s=word):
        assert lib.dma_init(0, 0, 64, 0, 64) == 0 and lib.loom_dma_set_double_buffering(1) == 0
        buf = lib.dma_in_buffer()
        _stage_inline(lib, buf, 0, report)
        lib.dma_start_send(17, 0)
        _stage_inline(lib, buf, 32, report)  # the other half, while the first send is in flight
        assert lib.dma_wait_send() == 0
        lib.dma_start_send(17, 0)
        assert lib.dma_wait_send() == 0 and lib.dma_free() == 0
    r = timing_report(lib)
    send = (10 + 17) * cycle  # latency + 17 words at one word a cycle; sA does not compute
    assert r.host_copy_s == pytest.approx(34 * word, abs=1e-15)
    assert r.total_s == pytest.approx((17 if report else 34) * word + 2 * send, abs=1e-15)


@pytest.mark.sanitize
def test_driver_copies_are_not_charged_by_the_measured_host(lib):
    """Measured mode: the clock sees the driver's copies (host time "other"); the report is no copy,
    even with a word cost configured (it is the deterministic mode's)."""
    from loom.runtime.timing import set_host_model
    lib.loom_timing_driver_copied(0, 17)  # no run on the timeline: nothing
    set_host_model(lib, deterministic=False, word_s=1e-3)
    lib.loom_sim_use_model(V3, 4, 0)
    assert lib.dma_init(0, 0, 64, 0, 64) == 0
    _stage_inline(lib, lib.dma_in_buffer(), 0, True)
    lib.dma_start_send(17, 0)
    assert lib.dma_wait_send() == 0 and lib.dma_free() == 0
    assert timing_report(lib).host_copy_s == 0


def test_deferred_receives_run_at_the_drain_and_before_a_send_of_the_same_memref(lib):
    lib.loom_sim_use_model(V3, 4, 0)
    assert lib.dma_init(0, 0, 256, 0, 256) == 0
    rng = np.random.default_rng(1)
    A, B = (rng.integers(-9, 9, (4, 4)).astype(np.int32) for _ in range(2))
    C = np.ones((4, 4), np.int32)
    off = lib.write_literal(15, 0)
    for m in (A, B):
        rank, ptr, _keep = _desc(m)
        off = lib.copy_to_inbuffer_i32(rank, ptr, off)
    lib.dma_start_send(off, 0)
    lib.dma_start_recv(16, 0)
    lib.dma_wait_recv()
    rank, ptr, keep = _desc(C)
    assert lib.copy_from_outbuffer_deferred_acc_i32(rank, ptr, 0, -1, -1, -1, -1) == 16
    del keep  # the descriptor was copied: the deferred copy must not need it
    assert np.array_equal(C, np.ones((4, 4)))  # not copied yet
    staged = np.zeros((4, 4), np.int32)
    rank, ptr, _keep = _desc(C)
    lib.copy_to_inbuffer_padded_i32(rank, ptr, 0, -1, -1, -1, -1)  # a send of C drains first
    assert np.array_equal(C, 1 + A @ B)
    staged.flat[:] = np.ctypeslib.as_array(lib.dma_in_buffer(), (16,)).view(np.int32)
    assert np.array_equal(staged, C)
    assert lib.loom_dma_drain_recvs() == 0 and np.array_equal(C, 1 + A @ B)  # ran once only
    assert lib.dma_free() == 0
    assert lib.loom_dma_error_code() == 0


def test_dma_free_drains_pending_copies(lib):
    lib.loom_sim_use_model(V2, 4, 0)
    assert lib.dma_init(0, 0, 256, 0, 256) == 0
    A, B = np.eye(4, dtype=np.int32), np.full((4, 4), 3, np.int32)
    off = lib.write_literal(7, 0)
    for m in (A, B):
        rank, ptr, _keep = _desc(m)
        off = lib.copy_to_inbuffer_i32(rank, ptr, off)
    lib.dma_start_send(off, 0)
    lib.dma_start_recv(16, 0)
    C = np.zeros((4, 4), np.int32)
    rank, ptr, _keep = _desc(C)
    lib.copy_from_outbuffer_deferred_i32(rank, ptr, 0, -1, -1, -1, -1)
    assert lib.dma_free() == 0
    assert np.array_equal(C, B)
    r = timing_report(lib)
    assert (r.sends, r.recvs) == (1, 1)
