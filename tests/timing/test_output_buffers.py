"""The accelerator's result banks (``timing.output_buffers``) and late receives (a double-buffered
driver starts receive i after send i + 1, so a send, a compute and a receive are in flight at once).

Host time is deterministic (a fixed cost per runtime call and per word), so each figure is an exact
sum worked out by hand below."""

from __future__ import annotations

import ctypes
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import desc, matmul_module
from tests.runtime.runtime_helpers import AXI, ERR_ARGUMENT, V3, last_error
from tests.timing.test_timing_model import CALL, WORD, _desc, _system

from loom.accel.description import load_description
from loom.accel.timing import MAX_OUTPUT_BUFFERS, TimingConfig, timing_config
from loom.driver.bounds import physical_bound
from loom.driver.compile import compile_driver
from loom.errors import LoomError
from loom.runtime import memref_descriptor
from loom.runtime.build import load_library
from loom.runtime.timing import configure_timing, deterministic_host, timing_report

NS = 1e-9
CYC = 10 * NS  # 100 MHz
# 0.25 MACs/cycle: a 4x4x4 tile (64 MACs) computes for 256 cycles, longer than any transfer here
BASE = TimingConfig(clock_hz=100e6, ops_per_cycle=0.25, stream_width_bits=32, dma_latency_cycles=10,
                    input_buffers=2)
STAGE = 3 * CALL + 33 * WORD  # write_literal + two 16-word copies
SEND, RECV, COMPUTE = (10 + 33) * CYC, (10 + 16) * CYC, 256 * CYC


def _two_results(lib, config):
    """Two v3 instructions ``sAB + compute + send C`` (opcode 15); the second is sent before the
    first result is received (the accelerator holds its output; the second send waits behind it)."""
    configure_timing(lib, config)
    rng = np.random.default_rng(4)
    tiles = [tuple(rng.integers(-50, 50, (4, 4)).astype(np.int32) for _ in range(2)) for _ in range(2)]
    outs = [np.zeros((4, 4), np.int32) for _ in range(2)]
    lib.loom_sim_use_model(V3, 4, 0)
    with deterministic_host(lib, call_s=CALL, word_s=WORD):
        assert lib.dma_init(0, 0, 1024, 0, 1024) == 0
        for k, (A, B) in enumerate(tiles):
            off = lib.write_literal(15, 0)
            for m in (A, B):
                rank, ptr, _keep = _desc(m)
                off = lib.copy_to_inbuffer_i32(rank, ptr, off)
            assert lib.dma_start_send(off, 0) == 0
            if k == 0:
                lib.dma_wait_send()
        for C in outs:
            assert lib.dma_start_recv(16, 0) == 0, last_error(lib)
            lib.dma_wait_recv()
            rank, ptr, _keep = _desc(C)
            lib.copy_from_outbuffer_acc_i32(rank, ptr, 0)
        assert lib.dma_free() == 0, last_error(lib)
    for C, (A, B) in zip(outs, tiles):
        assert np.array_equal(C, A @ B)
    return timing_report(lib, config)


def _by_hand(banks: int) -> tuple[float, float]:
    """(total, compute stall): the second compute starts once its send has arrived, the first compute
    has ended and, with one result bank, the first result has been received."""
    t = STAGE + CALL                              # stage, start_send 1
    send1_end = t + SEND
    t = max(t + CALL, send1_end)                  # wait_send: compute 1 starts at once
    compute1_end = send1_end + COMPUTE
    t += STAGE + CALL                             # stage, start_send 2 (a free input bank)
    send2_end = t + SEND
    t += CALL                                     # start_recv 1: output pending, send 2 stays back
    recv1_end = max(t, compute1_end) + RECV
    t = max(t + CALL, recv1_end) + CALL + 16 * WORD  # wait_recv, copy out
    t += CALL                                     # start_recv 2: send 2 reaches the accelerator
    ready = max(send2_end, compute1_end)
    start = max(ready, recv1_end) if banks == 1 else ready
    recv2_end = max(t, recv1_end, start + COMPUTE) + RECV
    t = max(t + CALL, recv2_end) + CALL + 16 * WORD
    return t + CALL, start - ready                # dma_free


@pytest.mark.parametrize("banks", [1, 2])
def test_second_result_computes_once_a_bank_is_free(lib, banks):
    r = _two_results(lib, replace(BASE, output_buffers=banks))
    total, stall = _by_hand(banks)
    assert r.total_s == pytest.approx(total, abs=1e-15)
    assert r.compute_stall_s == pytest.approx(stall, abs=1e-15)
    assert (stall == pytest.approx(RECV)) if banks == 1 else stall == 0  # one bank: the first drains first
    assert r.compute_s == pytest.approx(2 * COMPUTE, abs=1e-15)


def _late_receives(lib, tiles, out_words: int, fake_axi: bool = False):
    """A double-buffered driver as convert-accel-to-runtime emits it: every receive is late (started
    after the next send), its copy deferred."""
    if fake_axi:
        lib.loom_dma_use_backend(AXI)
        lib.loom_dma_use_axi_platform(lib.loom_fake_axi_platform())
        lib.loom_fake_axi_reset()
    outs = [np.full((4, 4), 7, np.int32) for _ in tiles]
    keep = []
    lib.loom_sim_use_model(V3, 4, 0)
    base = (0x40400000, 0x16000000, 1024, 0x16400000, out_words) if fake_axi else (0, 0, 1024, 0, out_words)
    assert lib.dma_init(*base) == 0, last_error(lib)
    assert lib.loom_dma_set_double_buffering(1) == 0
    for (A, B), C in zip(tiles, outs):
        off = lib.write_literal(15, 0)
        for m in (A, B):
            rank, ptr, k = _desc(m)
            keep.append(k)
            off = lib.copy_to_inbuffer_i32(rank, ptr, off)
        lib.dma_wait_send()
        assert lib.dma_start_send(off, 0) == 0, last_error(lib)
        assert lib.loom_dma_start_recv_late(16, 0) == 0, last_error(lib)
        rank, ptr, k = _desc(C)
        keep.append(k)
        assert lib.copy_from_outbuffer_deferred_acc_i32(rank, ptr, 0, -1, -1, -1, -1) >= 0, last_error(lib)
    lib.dma_wait_send()
    lib.dma_wait_recv()
    assert lib.loom_dma_drain_recvs() == 0, last_error(lib)
    assert lib.dma_free() == 0, last_error(lib)
    return outs


@pytest.mark.parametrize("out_words,fake_axi", [(1024, False), (16, False), (1024, True)])
def test_late_receives_give_every_result_to_its_tile(lib, out_words, fake_axi):
    """Alternating output halves (1024 words) or one area the next receive overwrites (16 words: each
    result is unpacked first); on the fake AXI device the next send waits behind pending output."""
    rng = np.random.default_rng(5)
    tiles = [tuple(rng.integers(-50, 50, (4, 4)).astype(np.int32) for _ in range(2)) for _ in range(5)]
    outs = _late_receives(lib, tiles, out_words, fake_axi)
    for C, (A, B) in zip(outs, tiles):
        assert np.array_equal(C, 7 + A @ B)


def test_late_receive_range_is_checked_at_the_request(lib):
    lib.loom_sim_use_model(V3, 4, 0)
    assert lib.dma_init(0, 0, 1024, 0, 64) == 0
    assert lib.loom_dma_start_recv_late(65, 0) != 0
    assert "loom_dma_start_recv_late" in last_error(lib) and "output staging buffer of 64 words" in last_error(lib)


def _request_slot(lib) -> np.ndarray:
    """The runtime's late-receive request slot (dma_runtime.h: LOOM_RECV_REQUEST_*) as int32 words."""
    view = memref_descriptor(np.zeros(1, np.int32))
    lib.loom_dma_recv_request_view_i32(ctypes.byref(view))
    return np.ctypeslib.as_array(ctypes.cast(view.aligned, ctypes.POINTER(ctypes.c_int32)), (view.sizes[0],))


QUEUED, LENGTH, OFFSET, COPIES, ROOM = range(5)


def _requested_receives(lib, tiles, via: str):
    """A double-buffered driver that adds each result itself from the half it landed in, once the
    receive after it started; its late receives are requested by the call or written into the slot
    (``via``). Returns (results, timing report)."""
    slot, out = _request_slot(lib), None
    results, bases = [], []
    lib.loom_sim_use_model(V3, 4, 0)
    with deterministic_host(lib, call_s=CALL, word_s=WORD):
        assert lib.dma_init(0, 0, 1024, 0, 1024) == 0 and lib.loom_dma_set_double_buffering(1) == 0
        out = np.ctypeslib.as_array(ctypes.cast(lib.dma_out_buffer(), ctypes.POINTER(ctypes.c_int32)), (1024,))
        for A, B in tiles:
            off = lib.write_literal(15, 0)
            for m in (A, B):
                rank, ptr, _keep = _desc(m)
                off = lib.copy_to_inbuffer_i32(rank, ptr, off)
            lib.dma_wait_send()
            assert lib.dma_start_send(off, 0) == 0, last_error(lib)
            if bases:  # the send started the receive requested before it: the one before that landed
                if len(bases) > 1:
                    results.append(out[bases[-2]:bases[-2] + 16].reshape(4, 4).copy())
                bases[-1] = lib.loom_dma_out_recv_base()
            if via == "call":
                assert lib.loom_dma_start_recv_late(16, 0) == 0, last_error(lib)
            else:
                assert slot[QUEUED] == 0 and 16 <= slot[ROOM]
                slot[LENGTH], slot[OFFSET], slot[COPIES], slot[QUEUED] = 16, 0, 0, 1
            bases.append(-1)
        lib.dma_wait_send()
        assert lib.loom_dma_start_queued_recv() == 0 and slot[QUEUED] == 0
        results.append(out[bases[-2]:bases[-2] + 16].reshape(4, 4).copy())
        assert lib.dma_wait_recv() == 0
        results.append(out[lib.loom_dma_out_recv_base():][:16].reshape(4, 4).copy())
        assert lib.dma_free() == 0, last_error(lib)
    return results, timing_report(lib, BASE)


def test_a_request_written_into_the_slot_is_a_late_receive_without_the_call(lib):
    rng = np.random.default_rng(8)
    tiles = [tuple(rng.integers(-50, 50, (4, 4)).astype(np.int32) for _ in range(2)) for _ in range(4)]
    configure_timing(lib, BASE)
    by_call, call = _requested_receives(lib, tiles, "call")
    by_slot, slot = _requested_receives(lib, tiles, "slot")
    for C1, C2, (A, B) in zip(by_call, by_slot, tiles):
        assert np.array_equal(C1, A @ B) and np.array_equal(C2, A @ B)
    assert (slot.recvs, slot.bytes_received) == (call.recvs, call.bytes_received) == (4, 4 * 64)
    # the same timeline less one runtime call per request
    assert call.host_other_s - slot.host_other_s == pytest.approx(4 * CALL, abs=1e-15)
    assert slot.total_s <= call.total_s


def test_the_slot_has_no_room_without_a_backend_or_while_an_error_is_pending(lib):
    slot = _request_slot(lib)
    lib.loom_sim_use_model(V3, 4, 0)
    assert lib.dma_init(0, 0, 1024, 0, 64) == 0 and slot[ROOM] == 64 and slot[QUEUED] == 0
    assert lib.dma_start_send(2000, 0) != 0  # outside the input staging: an error is pending
    assert slot[ROOM] == 0  # so a driver requesting takes the call, which reports it
    assert lib.loom_dma_start_recv_late(16, 0) != 0 and "dma_start_send" in last_error(lib)
    lib.loom_dma_clear_error()
    assert slot[ROOM] == 64
    lib.dma_free()
    assert slot[ROOM] == 0


@pytest.mark.parametrize("flow", ["Ns", "As", "Bs", "Cs"])
def test_generated_double_buffered_drivers_match_numpy_with_result_banks(flow):
    """Every flow, edge tiles included, on v4_16_pingpong (two input and two result banks)."""
    M, N, K = 80, 48, 112
    drv = compile_driver(matmul_module(shape=(M, N, K)), desc("matmul_v4.json"), "v4_16_pingpong", flow,
                         tile_sizes={"m": 32, "n": 32, "k": 48}, double_buffer=True)
    rng = np.random.default_rng(6)
    A, B = rng.integers(-9, 9, (M, K)).astype(np.int32), rng.integers(-9, 9, (K, N)).astype(np.int32)
    C = rng.integers(-9, 9, (M, N)).astype(np.int32)
    want = C + A @ B
    drv(A, B, C)
    assert np.array_equal(C, want)


def test_result_banks_let_receives_overlap_computes():
    """As, double-buffered: with one result bank every receive sits between two computes; with two
    the run is faster, and never below the physical limit.

    Host time is the deterministic model (100 ns a call, 1 ns a word): measured, it was ~90 us a run
    here but ~1 ms +-20% under ASan/UBSan (LOOM_SANITIZE=1), which swamped the 120 us the second bank
    saves (seen: 1 bank 1210 us, 2 banks 1434 us). Modelled, both builds give the same figures."""
    problem = {"m": 128, "n": 192, "k": 256}
    rng = np.random.default_rng(3)
    A, B = rng.integers(-9, 9, (128, 256)).astype(np.int32), rng.integers(-9, 9, (256, 192)).astype(np.int32)
    drv = compile_driver(matmul_module(shape=(128, 192, 256)), desc("matmul_v4.json"), "v4_16_pingpong", "As",
                         tile_sizes={"m": 64, "n": 64, "k": 64}, double_buffer=True)
    acc = load_description(desc("matmul_v4.json")).accelerator("v4_16_pingpong")
    cfg = timing_config(acc)
    totals = {}
    for banks in (1, 2):
        C = np.zeros((128, 192), np.int32)
        drv.timing = replace(cfg, output_buffers=banks)
        with deterministic_host(load_library(), call_s=100 * NS, word_s=1 * NS):
            totals[banks] = drv(A, B, C).timing
        assert np.array_equal(C, A @ B)
    one, two = totals[1], totals[2]
    # the same work and host time: the difference is the banks' alone
    assert (one.dma_s, one.compute_s, one.transactions) == (two.dma_s, two.compute_s, two.transactions)
    assert one.host_copy_s + one.host_other_s == pytest.approx(two.host_copy_s + two.host_other_s, rel=1e-12)
    b = physical_bound(acc, problem)
    assert b.bound_s <= two.total_s < one.total_s
    assert one.compute_stall_s > 0 and two.compute_stall_s == 0


def test_model_bound_follows_the_buffers():
    """The paper's v4-16 (one of each) cannot come within 1.15x of perfect overlap on 512^3:
    compute + transfer = 5.99 + 11.82 ms; one result bank alone: compute + receives."""
    acc = load_description(desc("matmul_v4.json")).accelerator("v4_16")
    problem = {"m": 512, "n": 512, "k": 512}
    cfg = timing_config(acc)
    bounds = {(i, o): physical_bound(acc, problem, replace(cfg, input_buffers=i, output_buffers=o))
              for i in (1, 2) for o in (1, 2)}
    one = bounds[1, 1]
    assert one.model_bound_s == pytest.approx(one.serial_bound_s)
    assert one.model_bound_s / one.bound_s > 1.15
    assert bounds[2, 2].model_bound_s == bounds[2, 2].bound_s
    assert one.bound_s < bounds[2, 1].model_bound_s < one.model_bound_s
    assert one.bound_s < bounds[1, 2].model_bound_s <= one.model_bound_s
    pingpong = load_description(desc("matmul_v4.json")).accelerator("v4_16_pingpong")
    assert physical_bound(pingpong, problem).model_bound_s == one.bound_s


def test_output_buffers_from_the_description_and_its_default():
    acc = _system({"output_buffers": 2}).accelerators[0]
    cfg = timing_config(acc)
    assert cfg.output_buffers == 2
    assert dict((n, s) for n, _, s in cfg.constants())["output_buffers"].startswith("description")
    default = timing_config(_system(None).accelerators[0])
    assert default.output_buffers == 1 and "output_buffers=1 [default]" in default.describe()


@pytest.mark.parametrize("value,fragment", [(0, ">= 1"), (9, "<= 8"), (1.5, "number of output buffers"),
                                            ("two", "number of output buffers")])
def test_bad_output_buffers_are_located(value, fragment):
    with pytest.raises(LoomError) as e:
        _system({"output_buffers": value})
    assert "accelerators[0].timing.output_buffers" in str(e.value) and fragment in str(e.value)


def test_runtime_rejects_bad_result_bank_counts(lib):
    with pytest.raises(LoomError, match="output buffers"):
        configure_timing(lib, replace(BASE, output_buffers=0))
    assert lib.loom_timing_set_output_buffers(MAX_OUTPUT_BUFFERS + 1) == ERR_ARGUMENT
    assert "expected 1 to" in last_error(lib)


def test_python_limit_matches_the_runtime_header_and_schema():
    root = Path(__file__).resolve().parents[2]
    header = (root / "loom" / "runtime" / "dma_runtime.h").read_text()
    assert int(re.search(r"#define LOOM_MAX_OUTPUT_BUFFERS (\d+)", header).group(1)) == MAX_OUTPUT_BUFFERS
    schema = json.loads((root / "loom" / "accel" / "schema.json").read_text())
    assert schema["$defs"]["timing"]["properties"]["output_buffers"]["maximum"] == MAX_OUTPUT_BUFFERS


def test_the_timeline_trace_lists_every_event_in_host_order(lib, monkeypatch, capfd):
    """LOOM_TIMING_TRACE=1: one stderr line per timeline event (how two drivers' timelines are compared)."""
    rng = np.random.default_rng(9)
    tiles = [tuple(rng.integers(-50, 50, (4, 4)).astype(np.int32) for _ in range(2)) for _ in range(3)]
    configure_timing(lib, BASE)
    capfd.readouterr()
    monkeypatch.setenv("LOOM_TIMING_TRACE", "1")
    _, report = _requested_receives(lib, tiles, "slot")
    lines = [line.split() for line in capfd.readouterr().err.splitlines() if line.startswith("timing ")]
    events = [w[1] for w in lines]
    assert events.count("send") == events.count("recv") == events.count("compute") == 3
    hosts = [int(w[4]) for w in lines]
    assert hosts == sorted(hosts) and events[-1] == "end" and hosts[-1] == round(report.total_s * 1e12)
    monkeypatch.delenv("LOOM_TIMING_TRACE")
    _requested_receives(lib, tiles, "slot")
    assert "timing " not in capfd.readouterr().err
