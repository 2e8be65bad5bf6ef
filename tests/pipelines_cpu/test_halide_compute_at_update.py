"""compute_at(f, r) at a loop of f's update definition (an RVar or a split of one): the producer is computed once
per iteration of that loop, inside the update's loop nest (Halide's semantics), bit-exact against real Halide;
and what loom refuses, by name.

Layout: numpy (H, W, C) is Halide/loom (c = C, x = W, y = H).
"""

import re

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline.cpu_lower import lower_pipeline
from loom.jit.pipeline import run_cpu

C, W, H = 8, 12, 6
OUT = (W - 2, H)


def _input(seed=0):
    return np.random.default_rng(seed).integers(-2 ** 15, 2 ** 15, (H, W, C)).astype(np.int16)


def _pipeline(m, schedule, a=None):
    """out(x, y) = sum over channel r.x and tap r.y of copy(r.x, x + r.y, y) * (r.y + 1) in ``m`` (loom's
    frontend or Halide), ``schedule(m, out, copy, x, y, r)`` applied."""
    x, y, c = m.Var("x"), m.Var("y"), m.Var("c")
    inp = m.ImageParam(lp.Int16 if m is lp else hl.Int(16), 3, "inp")
    copy, out = m.Func("copy"), m.Func("out")
    copy[c, x, y] = inp[c, x, y]
    r = lp.RDom(0, C, 0, 3, name="r") if m is lp else hl.RDom([(0, C), (0, 3)], "r")
    out[x, y] = m.i16(0)
    out[x, y] += copy[r.x, x + r.y, y] * m.i16(r.y + 1)
    schedule(m, out, copy, x, y, r)
    if a is not None:
        inp.set(hl.Buffer(a))
    return out


def _channel_tiles(split, level="rzo", store=None, taps_outside=False):
    """The channel loop split by ``split``, rzo outermost (every channel tile sweeps the whole image:
    output-stationary), the copy computed at ``level`` of the update (stored at ``store``)."""
    def schedule(m, out, copy, x, y, r):
        rv = m.RVar if m is hl else m.Var
        rzo, rzi = rv("rzo"), rv("rzi")
        u = out.update().split(r.x, rzo, rzi, split)
        u.reorder(rzi, x, y, r.y, rzo) if taps_outside else u.reorder(rzi, r.y, x, y, rzo)
        loops = {"rzo": rzo, "r.y": r.y}
        if store is not None:
            copy.store_at(out, loops.get(store, store))
        copy.compute_at(out, loops.get(level, level))
    return schedule


def _x_tiles(m, out, copy, x, y, r):
    """A split of a pure Var that only the update has: the copy computed per 5-column tile of the update."""
    xo, xi = m.Var("xo"), m.Var("xi")
    out.update().split(x, xo, xi, 5).reorder(r.x, r.y, xi, y, xo)
    copy.compute_at(out, xo)


SCHEDULES = {
    "channel tiles of 4": _channel_tiles(4), "of 2": _channel_tiles(2), "of 8": _channel_tiles(8),
    "at an unsplit RVar": _channel_tiles(4, "r.y", taps_outside=True),
    "stored at rzo, computed at r.y": _channel_tiles(4, "r.y", store="rzo", taps_outside=True),
    "a pure Var split only in the update": _x_tiles,
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_compute_at_an_update_loop_matches_halide(name):
    a = _input(1)
    want = np.asarray(_pipeline(hl, SCHEDULES[name], a).realize(list(OUT)))
    assert len(np.unique(want)) > 10
    got = run_cpu(_pipeline(lp, SCHEDULES[name]), {"inp": a}, OUT)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(lp.evaluate(_pipeline(lp, SCHEDULES[name]), {"inp": a}, OUT), want)


@pytest.mark.parametrize("name, shape", [
    ("channel tiles of 4", (H, W, 4)),  # one channel tile, the whole image (the sweep of x, y and the taps)
    ("of 2", (H, W, 2)),
    ("at an unsplit RVar", (H, W - 2, 4)),  # one tap: the columns x + r.y for one r.y
    ("stored at rzo, computed at r.y", (H, W, 4)),  # every tap's columns of one channel tile
    ("a pure Var split only in the update", (H, 7, C)),  # 5 columns + 2 of halo, every channel
])
def test_the_copy_holds_one_iteration_of_the_update_loop(name, shape):
    """The copy's buffer covers what one iteration of the loop reads, not the whole reduction's C channels."""
    t = str(lower_pipeline(_pipeline(lp, SCHEDULES[name]), {"inp": (H, W, C)}, OUT))
    assert re.findall(r"memref\.alloca\(\) : memref<([0-9x]+)xi16>", t) == ["x".join(map(str, shape))]


def test_a_level_read_by_another_definition_is_refused_by_name():
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.Int16, 2, "inp")
    copy, out = lp.Func("copy"), lp.Func("out")
    copy[x, y] = inp[x, y]
    r = lp.RDom(0, 4, name="r")
    out[x, y] = copy[x, y]  # the pure definition reads the copy too
    out[x, y] += copy[x + r.x, y]
    out.update().split(r.x, "ro", "ri", 2).reorder("ri", x, y, "ro")
    copy.compute_at(out, "ro")
    with pytest.raises(LoomError, match=r"Func 'copy'.*compute_at\(out, ro\): 'ro' is a loop of update 0 of 'out', "
                       r"but the pure definition of 'out' reads 'copy' too"):
        run_cpu(out, {"inp": np.zeros((4, 12), np.int16)}, (8, 4))


def test_a_loop_of_no_definition_lists_every_definitions_loops():
    out = _pipeline(lp, _channel_tiles(4, "nope"))
    with pytest.raises(LoomError, match=r"Func 'copy'.*compute_at\(out, nope\): 'nope' is not a loop of consumer "
                       r"'out' \(loops, innermost first: the pure definition: x, y; update 0: rzi, r.y, x, y, rzo\)"):
        run_cpu(out, {"inp": _input()}, OUT)


def test_storage_at_a_loop_of_another_definition_is_refused():
    # the pure definition's y: its nest does not enclose the update's
    out = _pipeline(lp, _channel_tiles(4, store="y"))
    with pytest.raises(LoomError, match=r"Func 'copy'.*store_at\(out, y\) is a loop of the pure definition of 'out' "
                       r"and compute_at\(out, rzo\) one of update 0: neither loop nest encloses the other"):
        run_cpu(out, {"inp": _input()}, OUT)


def test_a_guarded_reduction_tile_around_the_copy_matches_halide():
    """8 channels split by 3: the last tile's copy would read channels 8 and 9. Halide clamps the region to the
    guard; loom's copy keeps its static 3 channels, its base clamped into the channels the pipeline reads (it was
    refused). Against Halide."""
    a = _input(2)
    want = np.asarray(_pipeline(hl, _channel_tiles(3), a).realize(list(OUT)))
    np.testing.assert_array_equal(run_cpu(_pipeline(lp, _channel_tiles(3)), {"inp": a}, OUT), want)
    t = str(lower_pipeline(_pipeline(lp, _channel_tiles(3)), {"inp": (H, W, C)}, OUT))
    assert re.findall(r"memref\.alloca\(\) : memref<([0-9x]+)xi16>", t) == [f"{H}x{W}x3"]


def _read_by_update_at_pure_split(m, at):
    x, y, xo, xi = m.Var("x"), m.Var("y"), m.Var("xo"), m.Var("xi")
    inp = m.ImageParam(lp.UInt8 if m is lp else hl.UInt(8), 2, "inp")
    p = m.Func("p")
    p[x, y] = inp[x, y] + 1
    g = m.Func("g")
    g[x, y] = m.u8(x)
    g[x, y] = g[x, y] + p[x + 1, y]
    g.split(x, xo, xi, 2)
    p.compute_at(g, {"xo": xo, "y": y}[at])
    return inp, g


def test_compute_at_a_pure_only_loop_read_by_an_update_is_refused_like_halide():
    """xo is a split of g's pure definition only; g's update reads p, outside every xo loop: Halide refuses the
    location, loom computed p before the update instead. At y, a loop both definitions have, both accept."""
    a = np.arange(12, dtype=np.uint8).reshape(2, 6)
    hinp, hg = _read_by_update_at_pure_split(hl, "xo")
    hinp.set(hl.Buffer(a))
    with pytest.raises(hl.HalideError, match="p.* is computed at the following invalid location"):
        hg.realize([5, 2])
    _, g = _read_by_update_at_pure_split(lp, "xo")
    with pytest.raises(LoomError, match=r"compute_at\(g, xo\): 'xo' is a loop of the pure definition of 'g' only, "
                                        r"but update 0 of 'g' reads 'p'"):
        run_cpu(g, {"inp": a}, (5, 2))
    hinp, hg = _read_by_update_at_pure_split(hl, "y")
    hinp.set(hl.Buffer(a))
    _, g = _read_by_update_at_pure_split(lp, "y")
    np.testing.assert_array_equal(run_cpu(g, {"inp": a}, (5, 2)), np.asarray(hg.realize([5, 2])))
