"""The timing model's system constants: receive/send overlap and host slowdown, from the
description's ``timing`` block or the documented defaults, and reports that name them.

Host time is deterministic (a fixed cost per runtime call and per word), so figures are exact."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from tests.runtime.runtime_helpers import V3, ERR_ARGUMENT, last_error
from tests.timing.test_timing_model import CALL, WORD, _desc, _system

from loom.accel.timing import TIMING_KEYS, TimingConfig, timing_config
from loom.errors import LoomError
from loom.runtime.timing import configure_timing, deterministic_host, timing_report

NS = 1e-9
BASE = TimingConfig(clock_hz=100e6, ops_per_cycle=8, stream_width_bits=32, dma_latency_cycles=100)
CYC = 10 * NS


def _stage(lib, A, B):
    off = lib.write_literal(15, 0)
    for m in (A, B):
        rank, ptr, _keep = _desc(m)
        off = lib.copy_to_inbuffer_i32(rank, ptr, off)
    return off


def _two_instructions(lib, config):
    """Send, wait, start a receive, stage and send the next instruction while it streams."""
    configure_timing(lib, config)
    rng = np.random.default_rng(1)
    A, B = (rng.integers(-50, 50, (4, 4)).astype(np.int32) for _ in range(2))
    C = np.zeros((4, 4), np.int32)
    lib.loom_sim_use_model(V3, 4, 0)
    with deterministic_host(lib, call_s=CALL, word_s=WORD):
        assert lib.dma_init(0, 0, 1024, 0, 1024) == 0
        assert _stage(lib, A, B) == 33
        lib.dma_start_send(33, 0)
        lib.dma_wait_send()
        lib.dma_start_recv(16, 0)
        _stage(lib, A, B)
        lib.dma_start_send(33, 0)
        lib.dma_wait_send()
        lib.dma_wait_recv()
        rank, ptr, _keep = _desc(C)
        lib.copy_from_outbuffer_acc_i32(rank, ptr, 0)
        lib.dma_start_recv(16, 0)
        lib.dma_wait_recv()
        assert lib.dma_free() == 0
    assert np.array_equal(C, A @ B)
    return timing_report(lib, config)


def _expected_send2_start(overlap: bool) -> tuple[float, float]:
    """(issue time of the second send, its start) worked out by hand."""
    t = 3 * CALL + 33 * WORD + CALL
    s1 = t + (100 + 33) * CYC
    accel = s1 + 8 * CYC
    t = s1 + CALL                        # wait_send: the send is still streaming
    t += CALL                            # start_recv
    r1 = max(t, accel) + (100 + 16) * CYC
    t += 3 * CALL + 33 * WORD + CALL     # stage + start_send
    return t, (t if overlap else max(t, r1))


def test_receive_overlap_switch_delays_the_next_send_by_hand(lib):
    on = _two_instructions(lib, BASE)
    off = _two_instructions(lib, replace(BASE, recv_overlaps_send=False))
    issue, start_on = _expected_send2_start(True)
    _, start_off = _expected_send2_start(False)
    assert start_off > start_on == issue  # the case exercises the switch
    # everything after the second send shifts by its delay; DMA and compute busy times do not change
    assert off.total_s - on.total_s == pytest.approx(start_off - start_on, abs=1e-15)
    assert (off.dma_s, off.compute_s, off.host_copy_s, off.host_other_s) == \
        (on.dma_s, on.compute_s, on.host_copy_s, on.host_other_s)


def test_host_slowdown_scales_host_time_only(lib):
    one = _two_instructions(lib, BASE)
    ten = _two_instructions(lib, replace(BASE, host_slowdown=10))
    assert ten.host_copy_s == pytest.approx(10 * one.host_copy_s, abs=1e-15)
    assert ten.host_other_s == pytest.approx(10 * one.host_other_s, abs=1e-15)
    # two staged instructions, two received tiles (the last one counts as unpacked by the driver:
    # the deterministic mode charges every received word once, runtime copy or not)
    assert ten.host_copy_s == pytest.approx(10 * (2 * 33 + 2 * 16) * WORD, abs=1e-15)
    assert (ten.dma_s, ten.compute_s) == (one.dma_s, one.compute_s)
    assert ten.total_s > one.total_s


def test_report_names_every_constant_and_its_source(lib):
    r = _two_instructions(lib, replace(BASE, host_slowdown=10))
    for key in TIMING_KEYS:
        assert key in r.constants and key in str(r)
    assert "host_slowdown=10" in str(r) and "modelled" in str(r)


def test_defaults_and_description_values_are_told_apart():
    acc = _system({"recv_overlaps_send": False, "host_slowdown": 10}).accelerators[0]
    cfg = timing_config(acc)
    assert (cfg.recv_overlaps_send, cfg.host_slowdown) == (False, 10)
    src = {name: source for name, _, source in cfg.constants()}
    assert src["host_slowdown"].startswith("description accelerators[0].timing")
    assert src["dma_latency_cycles"] == src["clock_mhz"] == "default"
    default = timing_config(_system(None).accelerators[0])
    assert (default.recv_overlaps_send, default.host_slowdown) == (True, 1.0)
    assert "recv_overlaps_send=true [default]" in default.describe()


@pytest.mark.parametrize("timing,where,fragment", [
    ({"recv_overlaps_send": 1}, "accelerators[0].timing.recv_overlaps_send", "true or false"),
    ({"host_slowdown": 0}, "accelerators[0].timing.host_slowdown", "> 0"),
    ({"host_slowdown": "arm"}, "accelerators[0].timing.host_slowdown", "slowdown"),
    ({"clock_mhz": float("nan")}, "accelerators[0].timing.clock_mhz", "finite"),
    ({"host_slowdown": float("inf")}, "accelerators[0].timing.host_slowdown", "finite"),
])
def test_bad_system_constants_are_located(timing, where, fragment):
    with pytest.raises(LoomError) as e:
        _system(timing)
    assert where in str(e.value) and fragment in str(e.value) and "t.json" in str(e.value)


def test_bad_runtime_system_constants_are_loom_errors(lib):
    with pytest.raises(LoomError, match="host scale"):
        configure_timing(lib, replace(BASE, host_slowdown=-1.0))
    assert lib.loom_timing_configure_system(2, 1.0) == ERR_ARGUMENT
    assert "overlap" in last_error(lib)


from hypothesis import given, settings, strategies as st  # noqa: E402

JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 6, 10 ** 6),
                        st.sampled_from([float("nan"), float("inf"), -0.0, 0.5, 64, 96]),
                        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
                        st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from([*TIMING_KEYS, "bogus"]), JSON_VALUES, max_size=4))
def test_fuzzed_timing_blocks_parse_or_are_located(timing):
    """Any timing object: a complete configuration, or a LoomError naming the key's JSON path."""
    try:
        acc = _system(timing).accelerators[0]
    except LoomError as e:
        assert "accelerators[0].timing" in str(e) and "t.json" in str(e)
        return
    cfg = timing_config(acc)
    assert cfg.clock_hz > 0 and cfg.ops_per_cycle > 0 and cfg.host_slowdown > 0
    assert cfg.stream_width_bits % 32 == 0 and cfg.dma_latency_cycles >= 0
    assert isinstance(cfg.recv_overlaps_send, bool)
