"""Fuzz channel blocks (an input memory writing n channels a cycle, ``unroll(c, n)``) through channel-tiled
convolution layers nobody shipped: random kernel (1-3), stride (1-2), input / output channels, channel tile,
input channels a cycle, input pixels a step and tile. Either loom refuses the layer with a LoomError naming the
Func or the build parameter and the construct, or it builds and the value simulation from its ubuf IR (every delay
line and wire of the memory map replayed through its taps) over 2 x 2 tiles equals numpy's convolution, the input
memory writes its blocks as drawn, and every capacity is tight (one less evicts a value).

Bounded for CI by a fixed seed (hypothesis derandomized); ``LOOM_FUZZ_SCALE=N`` runs N times as many examples."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.errors import LoomError
from loom.streaming import build_design, simulate
from loom.streaming.simulate_mapped import simulate_mapped

from tests.fuzz.accel_mutator import FUZZ_SCALE
from tests.streaming.streaming_apps import example, references

RUNS = collections.Counter()


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def layer(draw):
    k, stride = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    ci = draw(st.sampled_from([1, 2, 4, 6, 8]))
    ci_tile = draw(st.sampled_from(_divisors(ci)))
    blocks = draw(st.sampled_from([None] + [d for d in _divisors(ci) if d >= ci_tile]))
    rate = draw(st.sampled_from([None, 1, 2, 3]))
    tile = (draw(st.integers(1, 6)), draw(st.integers(1, 5)))
    return dict(k=k, stride=stride, ci=ci, co=draw(st.integers(1, 3)), ci_tile=ci_tile, input_channels=blocks,
                input_rate=rate, tile=tile)


def check(p: dict, seed: int = 0):
    mod = example("dnn_conv")
    params = {n: p[n] for n in ("k", "stride", "ci", "co", "ci_tile")}
    try:
        out, _ = mod.build("accel", tile=p["tile"], input_channels=p["input_channels"], input_rate=p["input_rate"],
                           **params)
        d = build_design(out, mod.output_shape(p["tile"], p["co"]))
    except LoomError as e:
        assert e.where and (e.where.startswith("Func '") or e.where.startswith("dnn_conv.build")), str(e)
        RUNS["refused"] += 1
        return
    RUNS["built"] += 1
    floors = d.stages["hw_input"].schedule.floors
    blocked = [(k, m) for k, m, _ in floors if k == 2]
    block = p["input_channels"] or mod.input_channel_block(p["k"], p["ci"], p["ci_tile"], p["input_rate"] or 1)
    if block < p["ci"] and blocked:
        RUNS["built with channel blocks"] += 1
        assert blocked == [(2, block)], (p, floors)
    size = (2 * p["tile"][0], 2 * p["tile"][1])
    ins = mod.make_inputs(size, np.random.default_rng(seed), k=p["k"], stride=p["stride"], ci=p["ci"])
    want = references.dnn_conv(ins["input"], *size, mod.weights(p["k"], p["ci"], p["co"]), stride=p["stride"])
    shape = mod.output_shape(size, p["co"])
    np.testing.assert_array_equal(simulate_mapped(out, ins, shape), want)
    tile_ins = mod.make_inputs(p["tile"], np.random.default_rng(seed), k=p["k"], stride=p["stride"], ci=p["ci"])
    tile_shape = mod.output_shape(p["tile"], p["co"])
    for buf, cap in d.capacities.items():
        if cap:
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(out, tile_ins, tile_shape, design=d, capacities={buf: cap - 1})


@settings(max_examples=24 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(p=layer())
def fuzz(p):
    check(p)


def test_random_channel_tiled_layers_build_exactly_or_are_refused_by_name():
    RUNS.clear()
    fuzz()
    for what in ("built", "built with channel blocks"):
        assert RUNS[what] > 0, (what, dict(RUNS))
