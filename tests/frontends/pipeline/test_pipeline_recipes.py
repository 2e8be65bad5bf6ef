"""Schedule recipes: ``stream_through_accelerator`` writes the same schedule as the hand-written
primitives (the unified buffers, offsets and capacities of the design agree), ``compute_in_tiles``
tiles and places stages, and bad uses are LoomErrors naming the Func and the recipe."""

import re

import pytest

from loom.errors import LoomError
from loom.frontends import pipeline as pl
from loom.frontends.pipeline import compute_in_tiles, schedule_app, stream_through_accelerator
from loom.streaming import build_design


def blur_pipeline(channels=False):
    x, y, c = pl.Var("x"), pl.Var("y"), pl.Var("c")
    inp = pl.ImageParam(pl.UInt8, 3 if channels else 2, "input")
    hw = pl.Func("hw_input")
    if channels:
        hw[x, y, c] = pl.u16(inp[x, y, c])
    else:
        hw[x, y] = pl.u16(inp[x, y])
    r = pl.RDom(0, 3, 0, 3, name="r")
    acc = pl.Func("acc")
    acc[x, y] = pl.u16(0)
    src = hw[x + r.x, y + r.y, 0] if channels else hw[x + r.x, y + r.y]
    acc[x, y] += src
    out = pl.Func("output")
    if channels:
        out[x, y, c] = pl.u8(acc[x, y] / 9 + hw[x + 1, y + 1, c] * 0)
    else:
        out[x, y] = pl.u8(acc[x, y] / 9)
    return dict(x=x, y=y, c=c, hw_input=hw, acc=acc, output=out, r=r)


def by_hand(a, tile, rate=1):
    xo, yo, xi, yi = pl.Var("xo"), pl.Var("yo"), pl.Var("xi"), pl.Var("yi")
    out = a["output"]
    out.tile(a["x"], a["y"], xo, yo, xi, yi, *tile).hw_accelerate(xi, xo)
    a["hw_input"].compute_at(out, xo)
    a["acc"].compute_at(out, xo)
    a["acc"].update().unroll(a["r"].x).unroll(a["r"].y)
    if rate > 1:
        out.unroll(xi, rate)
        a["hw_input"].unroll(a["x"], rate)
        a["acc"].unroll(a["x"], rate)


@pytest.mark.parametrize("rate", [1, 2])
def test_accelerator_recipe_equals_the_hand_written_schedule(rate):
    tile = (20, 12)
    a, b = blur_pipeline(), blur_pipeline()
    by_hand(a, tile, rate)
    loops = stream_through_accelerator(b["output"], tile, buffered=[b["hw_input"], b["acc"]], reductions=[b["acc"]],
                                       rate=rate)
    assert [v.name for v in loops] == ["xo", "yo", "xi", "yi"]
    da, db = build_design(a["output"], tile), build_design(b["output"], tile)
    assert da.offsets == db.offsets and da.capacities == db.capacities and da.latency == db.latency
    assert da.table() == db.table()
    for name in ("hw_input", "acc", "output"):
        fa, fb = a[name], b[name]
        assert fa.pure.schedule.loops == fb.pure.schedule.loops
        assert fa.pure.schedule.unrolled == fb.pure.schedule.unrolled
    assert b["acc"].updates[0].schedule.unrolled == a["acc"].updates[0].schedule.unrolled
    assert len(b["acc"].updates[0].schedule.unrolled) == 2  # both RVars of the 3x3 window


def test_accelerator_recipe_computes_channels_in_space():
    a = blur_pipeline(channels=True)
    stream_through_accelerator(a["output"], (8, 8), buffered=[a["hw_input"], a["acc"]], reductions=[a["acc"]])
    assert "c" in a["output"].pure.schedule.unrolled and "c" in a["hw_input"].pure.schedule.unrolled
    assert a["output"].schedule.hw_accelerate == ("xi", "xo")
    design = build_design(a["output"], (8, 8, 3))
    row = 8 + 2  # hw_input rows carry the 3x3 halo; the window's last tap is 2 rows + 2 pixels later
    assert design.offsets["acc"] == design.offsets["output"] == 2 * row + 2


def test_cpu_recipe_tiles_and_places_stages():
    a = blur_pipeline()
    loops = compute_in_tiles(a["output"], (16, 8), [a["hw_input"]])
    assert a["output"].pure.schedule.loops == ["xi", "yi", "xo", "yo"]
    assert a["hw_input"].schedule.compute_level == (a["output"], loops.xo.name)


@pytest.mark.parametrize("call,message", [
    (lambda a: stream_through_accelerator(a["output"], (8, 8), rate=0), "rate must be >= 1 pixel per cycle, got 0"),
    (lambda a: schedule_app(a, "gpu", None, None), "unknown schedule 'gpu': expected accel, cpu or none"),
    (lambda a: compute_in_tiles(_one_d(), (8, 8)), "the compute_in_tiles recipe tiles x and y, but 'line' has 1"),
    # once was "tile: unknown variable 'x'" from inside the second call
    (lambda a: [stream_through_accelerator(a["output"], t, buffered=[a["hw_input"]]) for t in ((8, 8), (4, 8))],
     "'output' is already scheduled for the accelerator (hw_accelerate(xi, xo)); the stream_through_accelerator "
     "recipe tiles the Func's own x and y, so call one recipe once per Func"),
    (lambda a: [compute_in_tiles(a["output"], t) for t in ((8, 8), (4, 8))],
     "'output' is already split or tiled (loops, innermost first: xi, yi, xo, yo); the compute_in_tiles recipe"),
])
def test_recipe_errors(call, message):
    with pytest.raises(LoomError, match=re.escape(message)) as e:
        call(blur_pipeline())
    assert "Func '" in str(e.value)


def _one_d():
    x = pl.Var("x")
    f = pl.Func("line")
    f[x] = pl.u8(x)
    return f
