"""Fuzz reads through a multiplexer (``loom.streaming.muxed_reads``): random pipelines nobody shipped reading an
input's channels (computed in space) at an index that is not affine but bounded: a clamp of an affine form, a
Euclidean ``% k``, a mask ``& m``, a channel picked by another input's value, or a concatenation of two inputs by
the output's channel, at a random horizontal offset and output channel count. Either loom refuses the read with a
LoomError naming the Func, or it builds and the value simulation from its ubuf IR, through the memory map, over
2 x 2 tiles equals the reference evaluator, and every capacity is tight (one less evicts a value).

Bounded for CI by a fixed seed (hypothesis derandomized); ``LOOM_FUZZ_SCALE=N`` runs N times as many examples."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, IterLevel, UInt8, Var, clamp, select, u16, u8
from loom.frontends.pipeline.evaluate import evaluate
from loom.streaming import build_design, simulate
from loom.streaming.simulate_mapped import simulate_mapped

from tests.fuzz.accel_mutator import FUZZ_SCALE

RUNS = collections.Counter()
x, y, c = Var("x"), Var("y"), Var("c")


@st.composite
def pipeline(draw):
    return dict(kind=draw(st.sampled_from(["clamp", "mod", "mask", "data", "concat"])),
                channels=draw(st.integers(1, 6)), second=draw(st.integers(1, 4)), out_channels=draw(st.integers(1, 4)),
                base=draw(st.sampled_from(["c", "x", "y", "x + c", "x + y"])), shift=draw(st.integers(-3, 3)),
                modulus=draw(st.integers(1, 20)), dx=draw(st.integers(0, 2)),
                tile=(draw(st.integers(2, 6)), draw(st.integers(1, 4))))


def _index(p):
    base = {"c": c, "x": x, "y": y, "x + c": x + c, "x + y": x + y}[p["base"]] + p["shift"]
    top = p["channels"] - 1
    if p["kind"] == "clamp":
        return clamp(base, 0, top)
    if p["kind"] == "mod":
        return base % p["modulus"]
    return base & p["modulus"]  # mask: its values 0 .. modulus when base >= 0, else any i32


def build(p):
    """(output, inputs over its 2 x 2 tiles)."""
    inp = ImageParam(UInt8, 3, "a")
    hw, out = Func("hw_a"), Func("out")
    hw[x, y, c] = u16(inp[x, y, c])
    streams, rng = [hw], np.random.default_rng(p["channels"] * 7 + p["second"])
    w, h = 2 * p["tile"][0], 2 * p["tile"][1]
    ins = {}
    if p["kind"] == "concat":
        b_in = ImageParam(UInt8, 3, "b")
        hb = Func("hw_b")
        hb[x, y, c] = u16(b_in[x, y, c]) + 1
        streams.append(hb)
        na = p["channels"]
        value = select(c < na, hw[x + p["dx"], y, clamp(c, 0, na - 1)],
                       hb[x + p["dx"], y, clamp(c - na, 0, p["second"] - 1)])
        ins["b"] = rng.integers(0, 256, (p["second"], h, w + 2), dtype=np.uint8)
        channels_out = na + p["second"]
    elif p["kind"] == "data":
        s_in = ImageParam(UInt8, 2, "s")
        sel = Func("hw_s")
        sel[x, y] = s_in[x, y]
        streams.append(sel)
        value = hw[x + p["dx"], y, clamp(u16(sel[x, y]) % p["modulus"], 0, p["channels"] - 1)]
        ins["s"] = rng.integers(0, 256, (h, w), dtype=np.uint8)
        channels_out = p["out_channels"]
    else:
        value = hw[x + p["dx"], y, _index(p)]
        channels_out = p["out_channels"]
    out[x, y, c] = u8((value + hw[x, y, 0]) >> 1)
    out.iteration_order([IterLevel("CGRA", [(x, p["tile"][0]), (y, p["tile"][1])]),
                         IterLevel("host")]).accelerate("CGRA")
    level = out.get_looplevel("CGRA", x)
    for f in streams:
        f.compute_at(level).unroll(c) if f.dims[2:] else f.compute_at(level)
    out.unroll(c)
    # the input holds every channel any index may take (what the reference evaluator reads), up to 24
    ins["a"] = rng.integers(0, 256, (24, h, w + 2), dtype=np.uint8)
    return out, ins, (w, h, channels_out)


def check(p: dict):
    out, ins, size = build(p)
    tile = (*p["tile"], size[2])
    try:
        d = build_design(out, tile)
    except LoomError as e:
        assert e.where == "Func 'out'" and "multiplexer" in str(e), str(e)
        RUNS["refused"] += 1
        return
    RUNS["built"] += 1
    RUNS["muxed"] += len(d.acc.stages["out"].reads) > 2
    want = evaluate(build(p)[0], ins, size)
    np.testing.assert_array_equal(simulate_mapped(out, ins, size, design=d), want)
    for buf, cap in d.capacities.items():
        if cap:
            with pytest.raises(LoomError, match="read after eviction"):
                simulate(out, ins, tile, design=d, capacities={buf: cap - 1})


@settings(max_examples=30 * FUZZ_SCALE, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(p=pipeline())
def fuzz(p):
    check(p)


def test_fuzz_muxed_reads():
    RUNS.clear()
    fuzz()
    assert RUNS["built"] >= 10 and RUNS["muxed"] >= 5 and RUNS["refused"] >= 1, dict(RUNS)
