"""compute_at(f, r) at a loop of f's update definition on the streaming accelerator: refused by name (the CPU
path runs it, bit-exact vs Halide: tests/pipelines_cpu/test_halide_compute_at_update.py)."""

import pytest

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline import MemoryType
from loom.streaming import build_design

C = 8


def test_the_streaming_path_refuses_it_by_name():
    """The accelerator's scheduler iterates a reduction innermost per output point: a memory refilled per
    iteration of a reduction loop has no streaming schedule (the CPU path above runs it)."""
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
