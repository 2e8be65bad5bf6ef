"""The system timing model (loom/runtime/timing.c, loom.accel.timing) against hand computation.

Host time is deterministic here (a fixed cost per runtime call and per word copied), so
every figure is an exact sum of cycles and costs worked out by hand in the test."""

from __future__ import annotations

import ctypes
import json
import os
from math import ceil

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import desc, matmul_arrays, matmul_module, matmul_reference
from tests.runtime.runtime_helpers import V3, ERR_ARGUMENT, last_error

from loom.accel.description import load_description, parse_description
from loom.driver.compile import compile_driver
from loom.accel.timing import TimingConfig, timing_config
from loom.runtime.timing import configure_timing, deterministic_host, timing_report
from loom.errors import LoomError
from loom.runtime import memref_descriptor

NS = 1e-9
CALL, WORD = 100 * NS, 1 * NS  # deterministic host costs used below


def _desc(array):
    d = memref_descriptor(array)
    return array.ndim, ctypes.byref(d), d


def test_tiny_run_equals_hand_computation(lib):
    """One v3 (size 4) instruction, blocking, at 100 MHz, 8 ops/cycle, 32-bit stream, 10-cycle latency."""
    configure_timing(lib, TimingConfig(clock_hz=100e6, ops_per_cycle=8, stream_width_bits=32, dma_latency_cycles=10))
    rng = np.random.default_rng(0)
    A, B = (rng.integers(-50, 50, (4, 4)).astype(np.int32) for _ in range(2))
    C = np.zeros((4, 4), np.int32)
    lib.loom_sim_use_model(V3, 4, 0)
    with deterministic_host(lib, call_s=CALL, word_s=WORD):
        assert lib.dma_init(0, 0, 1024, 0, 1024) == 0
        off = lib.write_literal(15, 0)
        for m in (A, B):
            rank, ptr, _keep = _desc(m)
            off = lib.copy_to_inbuffer_i32(rank, ptr, off)
        assert off == 33
        lib.dma_start_send(33, 0)
        lib.dma_wait_send()
        lib.dma_start_recv(16, 0)
        lib.dma_wait_recv()
        rank, ptr, _keep = _desc(C)
        lib.copy_from_outbuffer_acc_i32(rank, ptr, 0)
        assert lib.dma_free() == 0
    assert np.array_equal(C, A @ B)
    r = timing_report(lib)
    cyc = 10 * NS
    # host: 3 staging calls (1 + 16 + 16 words), then start_send
    t = 3 * CALL + 33 * WORD + CALL
    send_end = t + (10 + 33) * cyc           # latency + 33 words, 1 word/cycle
    accel_free = send_end + ceil(64 / 8) * cyc  # 4x4x4 MACs at 8 per cycle
    t += CALL                                # wait_send
    wait = send_end - t
    t = send_end + CALL                      # start_recv: output is ready (accel_free < t)
    assert accel_free < t
    recv_end = t + (10 + 16) * cyc
    t += CALL                                # wait_recv
    wait += recv_end - t
    t = recv_end + CALL + 16 * WORD + CALL   # copy out (16 words), dma_free
    assert r.total_s == pytest.approx(t, abs=1e-15)
    assert r.wait_s == pytest.approx(wait, abs=1e-15)
    assert r.host_copy_s == pytest.approx(49 * WORD, abs=1e-15)
    assert r.host_other_s == pytest.approx(9 * CALL, abs=1e-15)
    assert r.dma_s == pytest.approx((43 + 26) * cyc, abs=1e-15)
    assert r.compute_s == pytest.approx(8 * cyc, abs=1e-15)
    assert (r.transactions, r.sends, r.recvs, r.bytes_sent, r.bytes_received, r.macs) == (2, 1, 1, 132, 64, 64)
    text = str(r)
    assert "host copies" in text and "waiting" in text and "2 (1 sends, 1 receives)" in text


def _run(drv, M, N, K):
    A, B, C = matmul_arrays(M, N, K)
    expected = matmul_reference(A, B, C)
    stats = drv(A, B, C)
    assert np.array_equal(C, expected.astype(np.int32))
    return stats


@pytest.fixture(scope="module")
def v3_ns():
    return compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_16", "Ns")


def _with_config(lib, drv, monkeypatch, **overrides):
    """Run drv with a timing configuration other than the description's."""
    import loom.driver.compile as driver_mod
    cfg = TimingConfig(**{**TimingConfig().__dict__, **overrides})
    monkeypatch.setattr(driver_mod, "timing_config", lambda acc: cfg)
    with deterministic_host(lib, call_s=CALL, word_s=WORD):
        return _run(drv, 64, 48, 32).timing


def test_compute_time_scales_with_throughput(lib, v3_ns, monkeypatch):
    # 64x48x32 on 16x16x16 tiles: 4*3*2 = 24 computes of 4096 MACs each
    for ops in (16, 32, 112):
        r = _with_config(lib, v3_ns, monkeypatch, ops_per_cycle=ops)
        assert r.macs == 24 * 4096
        assert r.compute_s == pytest.approx(24 * ceil(4096 / ops) / 200e6, rel=1e-12)


def test_dma_time_follows_width_and_latency(lib, v3_ns, monkeypatch):
    for width, latency in [(32, 0), (32, 100), (64, 7), (128, 50)]:
        lib.loom_dma_set_tracing(1)
        lib.loom_trace_reset()
        r = _with_config(lib, v3_ns, monkeypatch, stream_width_bits=width, dma_latency_cycles=latency)
        from loom.runtime import trace_records
        records = trace_records(lib)  # independent list of every transaction (tracing backend)
        lib.loom_dma_set_tracing(0)
        per_beat = width // 32
        cycles = sum(latency + ceil(n / per_beat) for _, n, _ in records)
        assert r.transactions == len(records) == 48
        assert r.dma_s == pytest.approx(cycles / 200e6, rel=1e-12)


@pytest.mark.parametrize("path,acc", [("matmul_v3.json", "v3_16"), ("matmul_v1.json", "v1_8"),
                                      ("matmul_v2.json", "v2_4")])
def test_blocking_driver_total_is_the_sum_of_its_parts(lib, path, acc):
    """Ns flows: every send is waited for and followed by a blocking receive, so nothing overlaps
    the copies. (The cost of the wait / start calls themselves does overlap the transfer in
    flight, as a polling host would: so calls are free here and only copies cost host time.)"""
    drv = compile_driver(matmul_module(), desc(path), acc, "Ns")
    with deterministic_host(lib, call_s=0.0, word_s=WORD):
        r = _run(drv, 40, 24, 20).timing
    assert r.host_other_s == 0 and r.host_copy_s > 0
    assert r.total_s == pytest.approx(r.host_copy_s + r.dma_s + r.compute_s, rel=1e-12)
    assert r.wait_s == pytest.approx(r.dma_s + r.compute_s, rel=1e-12)


def test_measured_host_time_is_on_the_timeline(lib, v3_ns):
    r = _run(v3_ns, 96, 96, 96).timing
    # full tiles are copied by the driver's own code (dma-inline-copies): host time between runtime
    # calls, as a hand-written driver's copies are
    assert r.host_copy_s + r.host_other_s > 0 and r.host_copy_s >= 0
    assert r.total_s == pytest.approx(r.host_copy_s + r.host_other_s + r.wait_s, rel=1e-9)
    # the DMA work is fixed by the configuration whatever the host did
    records = 6 * 6 * 6 * 2
    assert r.transactions == records
    assert r.dma_s == pytest.approx((6 * 6 * 6) * ((100 + 513) + (100 + 256)) / 200e6, rel=1e-12)


def test_manual_drivers_get_the_same_report(lib):
    from tests.perf.manual_drivers import manual
    mlib = manual.load_drivers()
    configure_timing(mlib, TimingConfig(ops_per_cycle=60))
    A, B, C = matmul_arrays(32, 24, 16)
    expected = matmul_reference(A, B, C)
    with deterministic_host(mlib, call_s=0.0, word_s=WORD):  # host time: copies only
        manual.matmul_ns(2, A, B, C, 8, lib=mlib)
    assert np.array_equal(C, expected.astype(np.int32))
    r = timing_report(mlib)
    tiles = 4 * 3 * 2
    assert (r.sends, r.recvs) == (tiles, tiles)
    assert r.bytes_sent == tiles * 4 * (1 + 64 + 64) and r.bytes_received == tiles * 4 * 64
    assert r.compute_s == pytest.approx(tiles * ceil(512 / 60) / 200e6, rel=1e-12)
    # the manual driver packs and unpacks the staging buffers itself: every word sent or received
    # costs a word, as a runtime copy's would
    assert r.host_copy_s == pytest.approx(tiles * (1 + 64 + 64 + 64) * WORD, rel=1e-12)
    # blocking, so the accelerator's work is all waited for
    assert r.total_s == pytest.approx(r.wait_s + r.host_copy_s, rel=1e-12)
    assert r.total_s == pytest.approx(r.dma_s + r.compute_s + r.host_copy_s, rel=1e-12)


# ------------------------------------------------------------------ configuration
def _system(timing):
    with open(desc("matmul_v3.json")) as f:
        data = json.load(f)
    data["accelerators"] = data["accelerators"][:1]
    if timing is not None:
        data["accelerators"][0]["timing"] = timing
    return parse_description(data, filename="t.json", base_dir=os.path.dirname(desc("matmul_v3.json")))


def test_defaults_follow_the_paper():
    system = load_description(desc("matmul_v3.json"))
    by_name = {a.name: timing_config(a).ops_per_cycle for a in system.accelerators}
    assert by_name == {"v3_4": 10, "v3_8": 60, "v3_16": 112}
    cfg = timing_config(system.accelerators[0])
    assert (cfg.clock_hz, cfg.stream_width_bits, cfg.dma_latency_cycles) == (200e6, 32, 100)


def test_timing_object_overrides_defaults():
    acc = _system({"clock_mhz": 100, "ops_per_cycle": 7.5, "stream_width_bits": 64,
                   "dma_latency_cycles": 0}).accelerators[0]
    assert timing_config(acc) == TimingConfig(100e6, 7.5, 64, 0)


@pytest.mark.parametrize("timing,where,fragment", [
    ({"clock": 1}, "accelerators[0].timing.clock", "unknown key 'clock'"),
    ({"stream_width_bits": 48}, "accelerators[0].timing.stream_width_bits", "multiple of 32"),
    ({"ops_per_cycle": 0}, "accelerators[0].timing.ops_per_cycle", "> 0"),
    ({"dma_latency_cycles": -1}, "accelerators[0].timing.dma_latency_cycles", ">= 0"),
    ({"clock_mhz": "fast"}, "accelerators[0].timing.clock_mhz", "clock frequency"),
    ([], "accelerators[0].timing", "JSON object"),
])
def test_bad_timing_objects_are_located(timing, where, fragment):
    with pytest.raises(LoomError) as e:
        _system(timing)
    assert where in str(e.value) and fragment in str(e.value) and "t.json" in str(e.value)


def test_bad_runtime_configuration_is_a_loom_error(lib):
    with pytest.raises(LoomError, match="multiple of 32"):
        configure_timing(lib, TimingConfig(stream_width_bits=40))
    assert lib.loom_timing_configure(0.0, 1.0, 32, 0) == ERR_ARGUMENT
    assert "clock" in last_error(lib)


def test_timing_can_be_switched_off(lib, monkeypatch):
    """LOOM_TIMING=off (read at dma_init): no timeline, an all-zero report; results unchanged."""
    from loom.runtime import timing_report as runtime_timing_report
    drv = compile_driver(matmul_module(), desc("matmul_v2.json"), "v2_8", "Ns")
    monkeypatch.setenv("LOOM_TIMING", "off")
    r = _run(drv, 24, 16, 8).timing
    assert (r.total_s, r.transactions, r.dma_s) == (0.0, 0, 0.0)
    monkeypatch.delenv("LOOM_TIMING")
    r = _run(drv, 24, 16, 8).timing
    assert r.transactions == 2 * 3 * 2 * 1 and r.total_s > 0
    assert runtime_timing_report(lib) == r  # the same report through loom.runtime
