"""``parallel`` with a task size, and the storage races Halide refuses around parallel and vectorized loops."""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu

A = np.arange(20, dtype=np.uint8).reshape(4, 5)


def _stencil(m, store, compute, loop):
    """p read by g at two rows; g's y split by 2; p stored at ``store``, computed at ``compute``; ``loop`` parallel
    ("x!": x vectorized whole)."""
    inp = m.ImageParam(lp.UInt8 if m is lp else hl.UInt(8), 2, "inp")
    x, y, yo, yi = m.Var("x"), m.Var("y"), m.Var("yo"), m.Var("yi")
    p = m.Func("p")
    p[x, y] = inp[x, y] + 1
    g = m.Func("g")
    g[x, y] = p[x, y] + p[x, y + 1]
    g.split(y, yo, yi, 2)
    level = {"yo": yo, "yi": yi, "x": x}
    if store == "root":
        p.store_root()
    else:
        p.store_at(g, level[store])
    p.compute_at(g, level[compute])
    if loop == "x!":
        g.vectorize(x)
    else:
        g.parallel(level[loop])
    return inp, g


@pytest.mark.parametrize("store, compute, loop", [("root", "yi", "yi"), ("root", "yi", "yo"), ("yo", "x", "yi"),
                                                  ("yi", "x", "x!")])
def test_storage_outside_a_parallel_loop_computed_inside_is_refused_like_halide(store, compute, loop):
    hinp, hg = _stencil(hl, store, compute, loop)
    hinp.set(hl.Buffer(A))
    with pytest.raises(hl.HalideError, match="is stored outside the parallel/vectorized/gpu_block loop"):
        hg.realize([5, 3])
    _, g = _stencil(lp, store, compute, loop)
    with pytest.raises(LoomError, match=r"'p' is stored outside the parallel/vectorized loop over g\.(yi|yo|x) but "
                                        "computed within it"):
        run_cpu(g, {"inp": A}, (5, 3))


@pytest.mark.parametrize("store, compute, loop", [("yo", "yi", "yo"), ("root", "yo", "yi")])
def test_storage_at_or_inside_the_parallel_loop_matches_halide(store, compute, loop):
    hinp, hg = _stencil(hl, store, compute, loop)
    hinp.set(hl.Buffer(A))
    _, g = _stencil(lp, store, compute, loop)
    np.testing.assert_array_equal(run_cpu(g, {"inp": A}, (5, 3)), np.asarray(hg.realize([5, 3])))


def test_parallel_with_a_task_size_matches_halide():
    """Halide's parallel(y, 2): y split by 2, its outer loop parallel (it was a TypeError)."""
    x, y = lp.Var("x"), lp.Var("y")
    f = lp.Func("f")
    f[x, y] = x + y * 10
    f.parallel(y, 2, lp.TailStrategy.GuardWithIf)
    hx, hy = hl.Var("x"), hl.Var("y")
    hf = hl.Func("f")
    hf[hx, hy] = hx + hy * 10
    hf.parallel(hy, 2, hl.TailStrategy.GuardWithIf)
    np.testing.assert_array_equal(run_cpu(f, {}, (3, 5)), np.asarray(hf.realize([3, 5])))
