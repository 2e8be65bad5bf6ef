"""compute_at(f, r) at a loop of f's update definition on the streaming accelerator: at the stage's reduction
loop iterated in time outside its pixels it builds (a memory refilled per iteration, the tile's partial sums
kept); elsewhere refused by name (the CPU path runs it, bit-exact vs Halide:
tests/pipelines_cpu/test_halide_compute_at_update.py)."""

import pytest

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline import MemoryType
from loom.streaming import build_design

C = 8


def channel_sum(rzo_in_space=False):
    """out(x, y) = the sum over C channels of copy(c, x, y), 4 x 4 tiles, the channel loop split rzo / rzi (rzi
    unrolled; rzo in time, or in space too) and copy computed at rzo."""
    x, y, c, xo, yo, xi, yi = (lp.Var(n) for n in "x y c xo yo xi yi".split())
    inp = lp.ImageParam(lp.Int16, 3, "inp")
    copy, out = lp.Func("copy"), lp.Func("out")
    copy[c, x, y] = inp[c, x, y]
    r = lp.RDom(0, C, name="r")
    out[x, y] = lp.i16(0)
    out[x, y] += copy[r.x, x, y]
    out.compute_root().tile(x, y, xo, yo, xi, yi, 4, 4).hw_accelerate(xi, xo)
    upd = out.update().split(r.x, "rzo", "rzi", 4).unroll("rzi")
    if rzo_in_space:
        upd.unroll("rzo")
    upd.reorder("rzi", x, y, "rzo")
    copy.compute_at(out, "rzo")
    return out


def test_a_memory_refilled_per_iteration_of_an_outer_reduction_loop_is_bit_exact_against_numpy():
    """copy computed at out's channel loop rzo, outside x, y: out sweeps its 4 x 4 tile once per rzo (2
    iterations, its partial sums of the whole tile kept between them: an accumulator of 16), copy is a memory
    filled per invocation; values simulated from the ubuf IR equal numpy's channel sum in wrapping i16."""
    import numpy as np

    from loom.streaming import simulate

    out = channel_sum()
    d = build_design(out, (4, 4))
    plan = d.stages["out"]
    assert plan.node.reduction_outer and plan.red_time == (16,) and d.accumulators["out_acc"].capacity == 16
    a = np.random.default_rng(1).integers(-2 ** 15, 2 ** 15, (8, 8, C)).astype(np.int16)
    np.testing.assert_array_equal(simulate(out, {"inp": a}, (8, 8), design=d),
                                  a.astype(np.int64).sum(axis=2).astype(np.int16))


def test_a_loop_of_an_update_that_is_not_its_reduction_in_time_is_refused_by_name():
    """compute_at a reduction loop iterated in space (unrolled): no loop to refill the memory at."""
    out = channel_sum(rzo_in_space=True)
    with pytest.raises(LoomError, match=r"Func 'copy'.*compute_at\(out, rzo\): 'rzo' is a loop of update 0 of "
                       r"'out', outside its pure loops x, y; the streaming scheduler computes a memory once per "
                       r"iteration of a reduction loop only at a reduction loop iterated in time outside all "
                       r"of the stage's pure loops"):
        build_design(out, (4, 4))


def test_a_fabric_tile_at_an_update_loop_of_the_glb_level_is_refused_by_name():
    """Thesis Code 3.6's two levels: the fabric's stages computed at a loop of the GLB Func's update."""
    x, y, xo, yo, xi, yi = (lp.Var(n) for n in "x y xo yo xi yi".split())
    inp = lp.ImageParam(lp.UInt16, 2, "inp")
    p, g = lp.Func("p"), lp.Func("g")
    p[x, y] = inp[x, y] + 1
    r = lp.RDom(0, 4, name="r")
    g[x, y] = lp.u16(0)
    g[x, y] += p[x, y] * lp.u16(r.x)
    top = g.in_()
    top.compute_root().tile(x, y, xo, yo, xi, yi, 8, 8).hw_accelerate(xi, xo)
    g.compute_at(top, xo).store_in(MemoryType.GLB)
    g.update().split(r.x, "ro", "ri", 2)
    p.compute_at(g, "ro")
    with pytest.raises(LoomError, match=r"Func 'g'.*the fabric's stages are computed at 'ro', a loop of an update of "
                       r"'g', not of its pure definition"):
        build_design(top, (8, 8))
