"""Fuzz the streaming RTL with the multi-rate fuzz's random pipelines (``test_streaming_fuzz_rates``): stencils,
maxima, sums of shifts over taps read plain, strided or divided, pixels and rows a step, and stencil chains sharing
one kernel by pixel, line or block interleaving. Each drawn pipeline that builds is co-simulated on its Verilated
RTL (``simulate_rtl``) over 2 x 2 tiles and must equal the numpy evaluation written from the description, with RTL
cycles equal to the design's latency; a pipeline with no RTL form must be refused by name. One Verilator build per
built draw: CI takes the first two built draws of each generator, ``LOOM_FUZZ_SCALE=N`` N times as many."""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import HealthCheck, given, settings

from loom.errors import LoomError
from loom.streaming import build_design
from tests.fuzz.accel_mutator import FUZZ_SCALE
from tests.rtl.rtl_helpers import require_verilator
from tests.streaming.test_streaming_fuzz_rates import extents, loom_pipeline, np_pipeline, pipeline, stencil_chain

BUILT_PER_RUN = 2 * FUZZ_SCALE
RUNS = collections.Counter()


def check_rtl(p, kind: str):
    if RUNS[kind] >= BUILT_PER_RUN:
        return
    try:
        out = loom_pipeline(p)
        d = build_design(out, p.tile)
    except LoomError:
        return  # the scheduler's refusals are the multi-rate fuzz's to check
    from loom.jit.streaming_rtl import RtlReport, simulate_rtl
    RUNS[kind] += 1
    size = (2 * p.tile[0], 2 * p.tile[1])
    w, h = extents(p, size)[0]
    img = np.random.default_rng(RUNS[kind]).integers(0, 1 << (16 if p.in_u16 else 8), (h, w))
    img = img.astype(np.uint16 if p.in_u16 else np.uint8)
    report = RtlReport()
    try:
        got = simulate_rtl(out, {"input": img}, size, design=d, report=report)
    except LoomError as e:
        assert e.where, str(e)  # no RTL form: refused naming where
        RUNS[kind + " refused"] += 1
        return
    np.testing.assert_array_equal(got, np_pipeline(p, img, size), err_msg=repr(p))
    assert report.rtl_cycles == report.design_cycles, repr(p)  # each tile's design (a phase may have its own)


@settings(max_examples=64 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(p=pipeline())
def fuzz_multirate(p):
    check_rtl(p, "multirate")


@settings(max_examples=16 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(p=stencil_chain())
def fuzz_shared(p):
    check_rtl(p, "shared")


def test_random_multirate_and_shared_pipelines_on_the_rtl_equal_numpy():
    require_verilator()
    RUNS.clear()
    fuzz_multirate()
    fuzz_shared()
    assert RUNS["multirate"] >= 1 and RUNS["shared"] >= 1, dict(RUNS)
