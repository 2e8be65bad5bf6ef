"""The physical limit (loom.driver.bounds) by hand, and no run on the timeline beating it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import desc, matmul_module

from loom.accel.description import load_description
from loom.accel.timing import TimingConfig, timing_config
from loom.driver.bounds import physical_bound, transfer_seconds
from loom.driver.compile import compile_driver
from loom.errors import LoomError


def _acc(file, name):
    return load_description(desc(file)).accelerator(name)


def test_compute_bound_is_macs_at_peak():
    acc = _acc("matmul_v4.json", "v4_16")
    b = physical_bound(acc, {"m": 512, "n": 512, "k": 512})
    assert b.compute_s == pytest.approx(512 ** 3 / 112 / 200e6, rel=1e-12)
    # 4096-word buffers hold at most 64x64 blocks: whichever operand stays, the other two
    # cross 512/64 = 8 times each (2 * 8 * 512^2 words), spread at best over both channels
    assert b.transfer_s >= 8 * 512 ** 2 / 200e6
    assert b.bound_s == max(b.compute_s, b.transfer_s)
    assert b.serial_bound_s == b.compute_s + b.transfer_s
    assert "m=64" in b.transfer_schedule and "ms" in str(b)


def test_transfer_seconds_by_hand():
    cfg = TimingConfig(clock_hz=100e6, stream_width_bits=64, dma_latency_cycles=10)
    # send: 3 x 10 + 1000 / 2 = 530 cycles; recv: 2 x 10 + 200 / 2 = 120 cycles
    assert transfer_seconds(3, 2, 1000, 200, cfg) == pytest.approx(530 / 100e6)
    assert transfer_seconds(3, 2, 1000, 200, replace(cfg, recv_overlaps_send=False)) == pytest.approx(650 / 100e6)


def test_more_set_up_cost_raises_the_transfer_bound():
    acc = _acc("matmul_v3.json", "v3_8")
    cfg = timing_config(acc)
    problem = {"m": 64, "n": 64, "k": 64}
    low, high = (physical_bound(acc, problem, replace(cfg, dma_latency_cycles=c)) for c in (0, 400))
    assert high.transfer_s > low.transfer_s and high.compute_s == low.compute_s


@pytest.mark.parametrize("flow", ["Ns", "As", "Cs"])
def test_no_run_on_the_timeline_beats_the_serial_bound(flow):
    """The timeline (timing.c) against the analytic bound: every generated driver is slower."""
    acc = _acc("matmul_v3.json", "v3_8")
    drv = compile_driver(matmul_module(shape=(32, 48, 40)), desc("matmul_v3.json"), "v3_8", flow)
    rng = np.random.default_rng(0)
    A, B = rng.integers(-9, 9, (32, 40)).astype(np.int32), rng.integers(-9, 9, (40, 48)).astype(np.int32)
    C = np.zeros((32, 48), np.int32)
    total = drv(A, B, C).timing.total_s
    assert np.array_equal(C, A @ B)
    b = physical_bound(acc, {"m": 32, "n": 48, "k": 40})
    assert total >= b.serial_bound_s > b.bound_s
    assert b.ratio(total) >= 1


def test_missing_dims_are_named():
    with pytest.raises(LoomError, match="dims k"):
        physical_bound(_acc("matmul_v4.json", "v4_16"), {"m": 32, "n": 32})


@pytest.mark.parametrize("flow,tiles", [("As", {"m": 64, "n": 64, "k": 64}), ("Cs", {"m": 64, "n": 32, "k": 64})])
def test_double_buffered_inputs_beat_the_serial_bound_but_never_the_bound(flow, tiles):
    """With two input buffers (v4_16_pingpong) a double-buffered driver overlaps sends with compute:
    faster than any driver on one buffer can be, never faster than perfect overlap."""
    problem = {"m": 128, "n": 192, "k": 256}
    rng = np.random.default_rng(3)
    A, B = rng.integers(-9, 9, (128, 256)).astype(np.int32), rng.integers(-9, 9, (256, 192)).astype(np.int32)
    totals = {}
    for name in ("v4_16", "v4_16_pingpong"):
        drv = compile_driver(matmul_module(shape=(128, 192, 256)), desc("matmul_v4.json"), name, flow,
                             tile_sizes=tiles, double_buffer=True)
        C = np.zeros((128, 192), np.int32)
        totals[name] = drv(A, B, C).timing
        assert np.array_equal(C, A @ B)
    one = physical_bound(_acc("matmul_v4.json", "v4_16"), problem)
    two = physical_bound(_acc("matmul_v4.json", "v4_16_pingpong"), problem)
    assert (one.bound_s, one.serial_bound_s) == (two.bound_s, two.serial_bound_s)
    assert one.model_bound_s == one.serial_bound_s and two.model_bound_s == two.bound_s
    assert totals["v4_16"].total_s >= one.serial_bound_s
    assert two.bound_s <= totals["v4_16_pingpong"].total_s < totals["v4_16"].total_s
    assert totals["v4_16_pingpong"].send_stall_s < totals["v4_16"].send_stall_s
    if flow == "As":  # the schedule of the transfer minimum: below what one buffer allows at all
        assert totals["v4_16_pingpong"].total_s < one.serial_bound_s
