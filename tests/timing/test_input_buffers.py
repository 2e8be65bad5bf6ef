"""The accelerator's input buffers (``timing.input_buffers``): with one bank a send waits until the
accelerator is idle; with two, the next tile streams in while the current one computes.

Host time is deterministic (a fixed cost per runtime call and per word), so each figure is an exact
sum worked out by hand below."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from tests.runtime.runtime_helpers import V3, ERR_ARGUMENT, last_error
from tests.timing.test_timing_model import CALL, WORD, _desc, _system

from loom.accel.timing import MAX_INPUT_BUFFERS, TimingConfig, timing_config
from loom.errors import LoomError
from loom.runtime.timing import configure_timing, deterministic_host, timing_report

NS = 1e-9
CYC = 10 * NS  # 100 MHz
# 0.25 MACs/cycle: a 4x4x4 tile (64 MACs) computes for 256 cycles, longer than staging the next one
BASE = TimingConfig(clock_hz=100e6, ops_per_cycle=0.25, stream_width_bits=32, dma_latency_cycles=10)
STAGE = 3 * CALL + 33 * WORD  # write_literal + two 16-word copies
SEND = (10 + 33) * CYC
COMPUTE = 256 * CYC


def _three_computes(lib, config):
    """Three blocking v3 instructions ``sAB + compute`` (opcode 7: C accumulates inside), then ``send C``."""
    configure_timing(lib, config)
    rng = np.random.default_rng(2)
    tiles = [tuple(rng.integers(-50, 50, (4, 4)).astype(np.int32) for _ in range(2)) for _ in range(3)]
    C = np.zeros((4, 4), np.int32)
    lib.loom_sim_use_model(V3, 4, 0)
    with deterministic_host(lib, call_s=CALL, word_s=WORD):
        assert lib.dma_init(0, 0, 1024, 0, 1024) == 0
        for A, B in tiles:
            off = lib.write_literal(7, 0)
            for m in (A, B):
                rank, ptr, _keep = _desc(m)
                off = lib.copy_to_inbuffer_i32(rank, ptr, off)
            lib.dma_start_send(off, 0)
            lib.dma_wait_send()
        after_sends = timing_report(lib).total_s  # the run so far: the host waited for the third send
        lib.write_literal(8, 0)
        lib.dma_start_send(1, 0)
        lib.dma_wait_send()
        lib.dma_start_recv(16, 0)
        lib.dma_wait_recv()
        rank, ptr, _keep = _desc(C)
        lib.copy_from_outbuffer_acc_i32(rank, ptr, 0)
        assert lib.dma_free() == 0
    assert np.array_equal(C, sum(A @ B for A, B in tiles))
    return after_sends, timing_report(lib, config)


def _by_hand(banks: int) -> tuple[float, float, float]:
    """(host time after the third send, the run's total, the sends' stall), event by event: a send
    starts at max(issue, MM2S free, a free input bank = the end of the ``banks``-th most recent compute)."""
    t, send_free, compute_end, stall = 0.0, 0.0, [], 0.0

    def bank() -> float:
        return compute_end[-banks] if len(compute_end) >= banks else 0.0

    for _ in range(3):
        t += STAGE + CALL                       # stage, start_send
        start = max(t, send_free, bank())
        stall += start - max(t, send_free)
        send_free = start + SEND
        t = max(t + CALL, send_free)            # wait_send
        compute_end.append(max(send_free, compute_end[-1] if compute_end else 0.0) + COMPUTE)
    after_sends = t
    t += CALL + 1 * WORD + CALL                 # write_literal(8), start_send: 1 word
    start = max(t, send_free, bank())
    stall += start - max(t, send_free)
    send_free = start + (10 + 1) * CYC
    t = max(t + CALL, send_free)
    t += CALL                                   # start_recv: once the accelerator is idle
    recv_end = max(t, compute_end[-1]) + (10 + 16) * CYC
    t = max(t + CALL, recv_end)                 # wait_recv
    t += CALL + 16 * WORD                       # copy out
    return after_sends, t + CALL, stall         # dma_free


@pytest.mark.parametrize("banks", [1, 2, 8])
def test_simulated_time_follows_the_input_buffers(lib, banks):
    after_sends, r = _three_computes(lib, replace(BASE, input_buffers=banks))
    want_after, want_total, want_stall = _by_hand(banks)
    assert after_sends == pytest.approx(want_after, abs=1e-15)
    assert r.total_s == pytest.approx(want_total, abs=1e-15)
    assert r.send_stall_s == pytest.approx(want_stall, abs=1e-15)
    assert (want_stall > 0) == (banks < 8)  # one bank: every send after the first; two: the third
    assert r.send_dma_s + r.recv_dma_s == pytest.approx(r.dma_s, abs=1e-15)
    assert r.recv_dma_s == pytest.approx((10 + 16) * CYC, abs=1e-15)
    assert r.setup_s == pytest.approx(5 * 10 * CYC, abs=1e-15)  # 4 sends + 1 receive
    assert r.compute_s == pytest.approx(3 * COMPUTE, abs=1e-15)


def test_two_banks_stream_the_next_tile_while_one_computes(lib):
    _, one = _three_computes(lib, BASE)
    _, two = _three_computes(lib, replace(BASE, input_buffers=2))
    # one bank: every send after the first waits for the compute before it; two: the computes run
    # back to back (compute-bound), the total is the first send plus three computes and the output
    first_send_end = STAGE + CALL + SEND
    assert two.total_s < one.total_s - 2 * SEND
    assert _by_hand(2)[1] - (first_send_end + 3 * COMPUTE) < 10 * CALL
    assert (two.dma_s, two.compute_s, two.host_copy_s, two.host_other_s) == \
        (one.dma_s, one.compute_s, one.host_copy_s, one.host_other_s)


def test_third_send_waits_for_the_bank_of_the_first_compute(lib):
    """Two banks: the third send may not start before the first compute ends (both banks are busy)."""
    after2, _, _ = _by_hand(2)
    after8, _, _ = _by_hand(8)
    first_compute_end = STAGE + CALL + SEND + COMPUTE
    assert after2 == pytest.approx(first_compute_end + SEND)  # the case exercises the bank wait
    assert after8 < after2


def test_input_buffers_from_the_description_and_its_default():
    acc = _system({"input_buffers": 2}).accelerators[0]
    cfg = timing_config(acc)
    assert cfg.input_buffers == 2
    assert dict((n, s) for n, _, s in cfg.constants())["input_buffers"].startswith("description")
    default = timing_config(_system(None).accelerators[0])
    assert default.input_buffers == 1 and "input_buffers=1 [default]" in default.describe()


@pytest.mark.parametrize("value,fragment", [(0, ">= 1"), (9, "<= 8"), (1.5, "number of input buffers"),
                                            ("two", "number of input buffers")])
def test_bad_input_buffers_are_located(value, fragment):
    with pytest.raises(LoomError) as e:
        _system({"input_buffers": value})
    assert "accelerators[0].timing.input_buffers" in str(e.value) and fragment in str(e.value)


def test_runtime_rejects_bad_bank_counts(lib):
    with pytest.raises(LoomError, match="input buffers"):
        configure_timing(lib, replace(BASE, input_buffers=0))
    assert lib.loom_timing_set_input_buffers(MAX_INPUT_BUFFERS + 1) == ERR_ARGUMENT
    assert "expected 1 to" in last_error(lib)


def test_python_limit_matches_the_runtime_header():
    header = (Path(__file__).resolve().parents[2] / "loom" / "runtime" / "dma_runtime.h").read_text()
    assert int(re.search(r"#define LOOM_MAX_INPUT_BUFFERS (\d+)", header).group(1)) == MAX_INPUT_BUFFERS
    schema = json.loads((Path(__file__).resolve().parents[2] / "loom" / "accel" / "schema.json").read_text())
    assert schema["$defs"]["timing"]["properties"]["input_buffers"]["maximum"] == MAX_INPUT_BUFFERS
