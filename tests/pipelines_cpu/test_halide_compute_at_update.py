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


def _loom(split, level, taps_outside=False):
    """out(x, y) = sum over channel r.x and tap r.y of copy(r.x, x + r.y, y), the channel loop split by ``split``
    (rzo outermost: every channel tile sweeps the whole image, output-stationary), the input's copy computed at
    ``level`` of the update."""
    x, y, c = lp.Var("x"), lp.Var("y"), lp.Var("c")
    inp = lp.ImageParam(lp.Int16, 3, "inp")
    copy, out = lp.Func("copy"), lp.Func("out")
    copy[c, x, y] = inp[c, x, y]
    r = lp.RDom(0, C, 0, 3, name="r")
    out[x, y] = lp.i16(0)
    out[x, y] += copy[r.x, x + r.y, y] * lp.i16(r.y + 1)
    rzo, rzi = lp.Var("rzo"), lp.Var("rzi")
    u = out.update().split(r.x, rzo, rzi, split)
    u.reorder(rzi, x, y, r.y, rzo) if taps_outside else u.reorder(rzi, r.y, x, y, rzo)
    copy.compute_at(out, level)
    return out


def _halide(split, level, a, taps_outside=False):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    inp = hl.ImageParam(hl.Int(16), 3, "inp")
    copy, out = hl.Func("copy"), hl.Func("out")
    copy[c, x, y] = inp[c, x, y]
    r = hl.RDom([(0, C), (0, 3)], "r")
    out[x, y] = hl.i16(0)
    out[x, y] += copy[r.x, x + r.y, y] * hl.i16(r.y + 1)
    rzo, rzi = hl.RVar("rzo"), hl.RVar("rzi")
    u = out.update().split(r.x, rzo, rzi, split)
    u.reorder(rzi, x, y, r.y, rzo) if taps_outside else u.reorder(rzi, r.y, x, y, rzo)
    copy.compute_at(out, {"rzo": rzo, "r.y": r.y, "y": y}[level])
    inp.set(hl.Buffer(a))
    return np.asarray(out.realize(list(OUT)))


@pytest.mark.parametrize("split, level, taps_outside", [
    (4, "rzo", False), (2, "rzo", False), (8, "rzo", False),  # one channel tile per iteration of the GLB loop
    (4, "r.y", True),  # at an unsplit RVar inside the split one: one tap's rows of one channel tile
])
def test_compute_at_an_update_loop_matches_halide(split, level, taps_outside):
    a = _input(1)
    want = _halide(split, level, a, taps_outside)
    assert len(np.unique(want)) > 10
    got = run_cpu(_loom(split, level, taps_outside), {"inp": a}, OUT)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(lp.evaluate(_loom(split, level, taps_outside), {"inp": a}, OUT), want)


@pytest.mark.parametrize("split, level, taps_outside, shape", [
    (4, "rzo", False, (H, W, 4)),  # one channel tile, the whole image (the sweep of x, y and the taps)
    (2, "rzo", False, (H, W, 2)),
    (4, "r.y", True, (H, W - 2, 4)),  # one tap: the columns x + r.y for one r.y
])
def test_the_copy_holds_one_iteration_of_the_update_loop(split, level, taps_outside, shape):
    """The copy's buffer covers what one iteration of the loop reads, not the whole reduction's C channels."""
    t = str(lower_pipeline(_loom(split, level, taps_outside), {"inp": (H, W, C)}, OUT))
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
    out = _loom(4, "nope")
    with pytest.raises(LoomError, match=r"Func 'copy'.*compute_at\(out, nope\): 'nope' is not a loop of consumer "
                       r"'out' \(loops, innermost first: the pure definition: x, y; update 0: rzi, r.y, x, y, rzo\)"):
        run_cpu(out, {"inp": _input()}, OUT)


def test_storage_at_a_loop_of_another_definition_is_refused():
    out = _loom(4, "rzo")
    copy = next(f for f in lp.FuncGraph(out).funcs if f.name == "copy")
    copy.store_at(out, "y")  # the pure definition's y: its nest does not enclose the update's
    with pytest.raises(LoomError, match=r"Func 'copy'.*store_at\(out, y\) is a loop of the pure definition of 'out' "
                       r"and compute_at\(out, rzo\) one of update 0: neither loop nest encloses the other"):
        run_cpu(out, {"inp": _input()}, OUT)


def test_a_guarded_reduction_tile_around_the_copy_is_refused_with_what_to_do():
    """8 channels split by 3: the last tile's copy would read channels 8 and 9 (Halide clamps the region to
    the guard; loom's regions have static sizes). An update takes neither ShiftInwards nor RoundUp there."""
    with pytest.raises(LoomError, match=r"copy is computed at loop 'rzo', inside a GuardWithIf split that does not "
                       r"divide its extent; an update's loops take no ShiftInwards and its reduction loops no "
                       r"RoundUp: split by a factor that divides the extent"):
        run_cpu(_loom(3, "rzo"), {"inp": _input()}, OUT)


def test_the_streaming_path_refuses_it_by_name():
    """The accelerator's scheduler iterates a reduction innermost per output point: a memory refilled per
    iteration of a reduction loop has no streaming schedule (the CPU path above runs it)."""
    from loom.streaming import build_design

    x, y, c, xo, yo, xi, yi = (lp.Var(n) for n in "x y c xo yo xi yi".split())
    inp = lp.ImageParam(lp.Int16, 3, "inp")
    copy, out = lp.Func("copy"), lp.Func("out")
    copy[c, x, y] = inp[c, x, y]
    r = lp.RDom(0, C, name="r")
    out[x, y] = lp.i16(0)
    out[x, y] += copy[r.x, x, y]
    out.compute_root().tile(x, y, xo, yo, xi, yi, 4, 4).hw_accelerate(xi, xo)
    out.update().split(r.x, "rzo", "rzi", 4).unroll("rzi").reorder("rzi", x, y, "rzo")
    copy.compute_at(out, "rzo")
    with pytest.raises(LoomError, match=r"Func 'copy'.*compute_at\(out, rzo\): 'rzo' is a loop of update 0 of "
                       r"'out', outside its pure loops x, y; the streaming scheduler iterates a stage's reduction "
                       r"in time innermost"):
        build_design(out, (4, 4))
