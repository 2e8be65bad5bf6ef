"""``vectorize(x, n[, tail])`` is Halide's ``split(x, x, xv, n, tail).vectorize(xv)``: the loop nest (the outer
loop keeps x's name, the inner one has n iterations and is marked vectorized) and the values, for widths that
are and are not multiples of n, against real Halide."""

import re

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl
from xdsl.dialects import scf

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.frontends.pipeline.cpu_lower import lower_pipeline
from loom.jit.pipeline import run_cpu
from loom.passes.scf_vector_hint import SIMD_ATTR

A = np.random.default_rng(0).integers(-100, 100, (6, 30)).astype(np.int32)


def _pipeline(m, tail="Auto", update_tail="Auto", producer_at_x=False):
    """g = f(x) + f(x + 2) + x, then g += 3 g; both definitions vectorized by 4; f inline or per vector of g."""
    x, y = m.Var("x"), m.Var("y")
    inp = m.ImageParam(lp.Int32 if m is lp else hl.Int(32), 2, "inp")
    f, g = m.Func("f"), m.Func("g")
    f[x, y] = inp[x, y] * 2 + inp[x + 1, y]
    g[x, y] = f[x, y] + f[x + 2, y] + x
    g[x, y] += g[x, y] * 3
    g.vectorize(x, 4, getattr(m.TailStrategy, tail))
    g.update(0).vectorize(x, 4, getattr(m.TailStrategy, update_tail))
    if producer_at_x:  # x names the outer loop of the split, as in Halide
        f.compute_at(g, x).vectorize(x, 2)
    return inp, g


def _halide(a, size, **kw):
    inp, g = _pipeline(hl, **kw)
    inp.set(hl.Buffer(a))
    return np.asarray(g.realize(list(size)))


def _loops(module) -> list[tuple[int, int | None]]:
    """(trip count, simd width hint) of each scf.for with constant bounds, outermost first."""
    out = []
    for op in module.walk():
        if isinstance(op, scf.ForOp):
            lb, ub = (v.owner.value.value.data for v in (op.lb, op.ub))
            hint = op.attributes.get(SIMD_ATTR)
            out.append((ub - lb, None if hint is None else hint.value.data))
    return out


@pytest.mark.parametrize("width", [16, 10])
def test_vectorize_splits_the_loop_as_halide_does(width, tmp_path):
    """Halide's lowered loops: g.s0.x.x and g.s1.x.x (the outer loops of the splits) around 4-lane vectors;
    loom's the same nest: y, x (ceil(W / 4) iterations), x_v (4, marked with simd width 4), for the pure
    definition and the update."""
    inp, g = _pipeline(hl)
    g.compile_to_lowered_stmt(str(tmp_path / "g.stmt"), [inp], hl.StmtOutputFormat.Text)
    stmt = (tmp_path / "g.stmt").read_text()
    for stage in (0, 1):  # Halide names a Func g$n once g is taken in the process
        assert re.search(rf"for \(g(\$\d+)?\.s{stage}\.x\.x, ", stmt), stmt
    assert re.search(r"ramp\([^()]*, 1, 4\)", stmt)
    _, g = _pipeline(lp)
    loops = _loops(lower_pipeline(g, {"inp": A.shape}, (width, 4)))
    assert loops == [(4, None), (-(-width // 4), None), (4, 4)] * 2
    np.testing.assert_array_equal(run_cpu(g, {"inp": A}, (width, 4)), _halide(A, (width, 4)))


TAILS = [(t, u) for t in ("Auto", "ShiftInwards", "GuardWithIf", "RoundUp") for u in ("Auto", "GuardWithIf", "RoundUp")]


@pytest.mark.parametrize("tail, update_tail", TAILS)
@pytest.mark.parametrize("width", [16, 10])
def test_vectorize_tails_match_halide(tail, update_tail, width):
    """Every tail strategy Halide takes on an output's pure definition and update, widths 16 (a multiple of 4)
    and 10 (ShiftInwards recomputes x = 6, 7; GuardWithIf skips 10, 11; RoundUp computes them)."""
    _, g = _pipeline(lp, tail, update_tail)
    np.testing.assert_array_equal(run_cpu(g, {"inp": A}, (width, 4)),
                                  _halide(A, (width, 4), tail=tail, update_tail=update_tail))


@pytest.mark.parametrize("tail", ["Auto", "GuardWithIf"])
@pytest.mark.parametrize("width", [16, 10])
def test_a_producer_at_the_outer_loop_of_a_vectorized_split(width, tail):
    """f.compute_at(g, x) after g.vectorize(x, 4): f is computed per vector, over 4 + 2 columns (a buffer of
    1 x 6, not a row), itself vectorized by 2; with GuardWithIf the last vector's window (past width 10) is
    clamped into f's region. Against Halide."""
    _, g = _pipeline(lp, tail=tail, producer_at_x=True)
    text = str(lower_pipeline(g, {"inp": A.shape}, (width, 4)))
    assert re.findall(r"memref\.alloca?\(\) : memref<([0-9x]+)xi32>", text) == ["1x6"]
    np.testing.assert_array_equal(run_cpu(g, {"inp": A}, (width, 4)),
                                  _halide(A, (width, 4), tail=tail, producer_at_x=True))


def test_vectorize_names_its_inner_loop_and_refuses_a_bad_factor():
    x, y = lp.Var("x"), lp.Var("y")
    f = lp.Func("f")
    f[x, y] = x + y
    f.vectorize(x, 4).vectorize(x, 2)  # the outer loop split again, as Halide allows
    assert f.pure.schedule.loops == ["x_v", "x_v1", "x", "y"]
    with pytest.raises(LoomError, match=r"vectorize: factor must be a positive int, got 0"):
        f.vectorize(y, 0)


def test_a_producer_stored_outside_the_vectorized_lanes_is_refused_like_halide():
    """f stored per row but computed per lane of g's vectorized loop: a race Halide refuses (here written as its
    split(x, x, xv, 4).vectorize(xv)); loom refuses vectorize(x, 4)'s x_v the same way."""
    x, y, xv = hl.Var("x"), hl.Var("y"), hl.Var("xv")
    inp = hl.ImageParam(hl.Int(32), 2, "inp")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = inp[x, y] * 2
    g[x, y] = f[x, y] + f[x + 1, y]
    g.split(x, x, xv, 4).vectorize(xv)
    f.compute_at(g, xv).store_at(g, y)
    inp.set(hl.Buffer(A))
    with pytest.raises(hl.HalideError, match="stored outside the parallel/vectorized/gpu_block loop"):
        g.realize([8, 4])

    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.Int32, 2, "inp")
    f, g = lp.Func("f"), lp.Func("g")
    f[x, y] = inp[x, y] * 2
    g[x, y] = f[x, y] + f[x + 1, y]
    g.vectorize(x, 4)
    f.compute_at(g, lp.Var("x_v")).store_at(g, y)
    with pytest.raises(LoomError, match=r"'f' is stored outside the parallel/vectorized loop over g\.x_v"):
        run_cpu(g, {"inp": A}, (8, 4))


def test_vectorizing_a_fused_loop_by_a_factor_is_refused_by_name():
    """loom cannot split a fused loop (Halide can): vectorize(xy, 8) says so, naming vectorize (whole: accepted)."""
    x, y, xy = lp.Var("x"), lp.Var("y"), lp.Var("xy")
    f = lp.Func("f")
    f[x, y] = x + y
    f.fuse(x, y, xy)
    with pytest.raises(LoomError, match=r"vectorize: 'xy' is a fused loop, which loom cannot split by 8"):
        f.vectorize(xy, 8)
    f.vectorize(xy)
    np.testing.assert_array_equal(run_cpu(f, {}, (5, 3)), np.add.outer(np.arange(3), np.arange(5)))
