"""--flow auto's joint search: tiles beyond powers of two, double buffering as a search dimension."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import desc, matmul_module

from loom.accel.description import load_description
from loom.driver import autotune as at
from loom.driver.compile import compile_driver
from loom.errors import LoomError
from loom.runtime.build import load_library
from loom.runtime.timing import deterministic_host

V4 = desc("matmul_v4.json")
CALL_S, WORD_S = 100e-9, 2e-9


def _acc():
    return load_description(V4).accelerator("v4_16")


def test_tile_choices_include_balanced_splits():
    acc = _acc()
    values = at.tile_choices(acc, "m", 312)
    # 312 in 2 / 3 / 4 tiles, rounded up to multiples of 16; plus powers of two and the padded extent
    assert {160, 112, 80, 320, 16, 32, 64, 128, 256} <= set(values)
    assert all(v % 16 == 0 and 16 <= v <= 320 for v in values)
    assert at.tile_choices(acc, "k", 2000)[-1] == 1008  # the description's max caps every value


def test_double_buffering_doubles_the_space_and_is_named():
    acc = _acc()
    problem = {"m": 32, "n": 48, "k": 64}
    plain, joint = at.candidates(acc, problem), at.candidates(acc, problem, (False, True))
    assert len(joint) == 2 * len(plain) and sum(c.double_buffer for c in joint) == len(plain)
    assert str(next(c for c in joint if c.double_buffer)).endswith("+db")


def test_double_buffered_estimate_hides_host_time():
    acc = _acc()
    problem = {"m": 64, "n": 64, "k": 64}
    tiles = (("m", 32), ("n", 32), ("k", 32))
    params = replace(at.accelerator_params(acc), host_s_per_word=2e-8)  # a slow host: staging dominates
    blocking = at.estimate(acc, at.Candidate("Cs", tiles), problem, params)
    overlapped = at.estimate(acc, at.Candidate("Cs", tiles, True), problem, params)
    assert overlapped.total_s < blocking.total_s
    assert overlapped.total_s >= max(overlapped.host_s, overlapped.compute_s)


def test_joint_choice_within_2_percent_of_exhaustive():
    """Deterministic host: the hybrid's pick against every candidate of the joint space, run."""
    M, N, K = 16, 16, 48
    acc = _acc()
    problem = {"m": M, "n": N, "k": K}
    kernel = matmul_module(shape=(M, N, K))
    rng = np.random.default_rng(0)
    arrays = [rng.integers(-4, 4, s).astype(np.int32) for s in ((M, K), (K, N), (M, N))]
    params = replace(at.accelerator_params(acc), host_s_per_word=WORD_S, host_s_per_call=4 * CALL_S)
    with deterministic_host(load_library(), call_s=CALL_S, word_s=WORD_S):
        choice, _ = at.choose_hybrid(kernel, V4, acc, problem, arrays, params, repeats=1, double_buffer=(False, True))
        trials = at.exhaustive(kernel, V4, acc, arrays, problem, repeats=1, double_buffer=(False, True))
    assert any(t.candidate.double_buffer for t in trials) and any(not t.candidate.double_buffer for t in trials)
    mine = next(t for t in trials if t.candidate == choice.candidate)
    assert mine.seconds <= 1.02 * trials[0].seconds, (choice.candidate, trials[0].candidate)


def test_compile_driver_double_buffer_auto_is_exact():
    M, N, K = 48, 32, 40
    drv = compile_driver(matmul_module(shape=(M, N, K)), V4, "v4_16", "auto", double_buffer="auto")
    rng = np.random.default_rng(2)
    A, B = rng.integers(-5, 5, (M, K)).astype(np.int32), rng.integers(-5, 5, (K, N)).astype(np.int32)
    C = np.zeros((M, N), np.int32)
    drv(A, B, C)
    np.testing.assert_array_equal(C, A @ B)


@pytest.mark.parametrize("flow,value,fragment", [("Cs", "auto", "flow='auto'"), ("auto", "yes", "True, False or 'auto'")])
def test_bad_double_buffer_values_are_loom_errors(flow, value, fragment):
    with pytest.raises(LoomError, match=fragment):
        compile_driver(matmul_module(shape=(32, 32, 32)), V4, "v4_16", flow, double_buffer=value)


def test_input_buffers_reach_the_cost_model_and_track_the_timeline():
    """v4_16_pingpong (timing.input_buffers 2): the model overlaps sends with compute, as the timeline
    does; the estimate stays within 15% of the run (pipeline fill and drain are
    approximate on this small problem) and below the one-buffer accelerator's."""
    M, N, K = 128, 128, 256
    problem = {"m": M, "n": N, "k": K}
    one, two = (load_description(V4).accelerator(n) for n in ("v4_16", "v4_16_pingpong"))
    assert (at.accelerator_params(one).input_buffers, at.accelerator_params(two).input_buffers) == (1, 2)
    kernel = matmul_module(shape=(M, N, K))
    rng = np.random.default_rng(4)
    arrays = [rng.integers(-4, 4, s).astype(np.int32) for s in ((M, K), (K, N), (M, N))]
    tiles = (("m", 64), ("n", 64), ("k", 64))
    for cand in (at.Candidate("As", tiles, True), at.Candidate("Cs", tiles, False), at.Candidate("Cs", tiles, True)):
        with deterministic_host(load_library(), call_s=CALL_S, word_s=WORD_S):
            runs = {acc.name: at.run_candidate(kernel, V4, acc, cand, arrays).seconds for acc in (one, two)}
        params = {acc.name: replace(at.accelerator_params(acc), host_s_per_word=WORD_S, host_s_per_call=CALL_S)
                  for acc in (one, two)}
        model = {acc.name: at.estimate(acc, cand, problem, params[acc.name]).total_s for acc in (one, two)}
        assert runs["v4_16_pingpong"] < runs["v4_16"], cand
        assert model["v4_16_pingpong"] < model["v4_16"], cand
        assert model["v4_16_pingpong"] == pytest.approx(runs["v4_16_pingpong"], rel=0.15), cand


def test_calibration_keeps_each_descriptions_timing_constants():
    """Two descriptions of one accelerator name with other constants: each calibration keeps its own
    clock and throughput (only the host costs are measured)."""
    acc = load_description(V4).accelerator("v4_16")
    base = at.accelerator_params(acc)
    slow = replace(base, clock_hz=base.clock_hz / 4, ops_per_cycle=base.ops_per_cycle / 2)
    first = at.calibrate(acc, V4, base)
    second = at.calibrate(acc, V4, slow)
    assert (first.clock_hz, first.ops_per_cycle) == (base.clock_hz, base.ops_per_cycle)
    assert (second.clock_hz, second.ops_per_cycle) == (slow.clock_hz, slow.ops_per_cycle)
