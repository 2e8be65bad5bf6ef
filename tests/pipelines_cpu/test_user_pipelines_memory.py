"""The user pipelines (``user_pipelines.py``), the per-tile windows of random indices and RoundUp windows stored at
the root, run through the CPU path under ASan/UBSan against loom's numpy reference (the Halide comparisons skip in
the sanitizer session: Halide's exceptions do not pass a preloaded ASan). Only in that session (``LOOM_SANITIZE``):
elsewhere the Halide tests cover the values."""

import os
import random

import numpy as np
import pytest

import loom.frontends.pipeline as lp
from loom.jit.pipeline import run_cpu
from tests.pipelines_cpu.user_pipelines import PIPELINES, random_index

pytestmark = [pytest.mark.sanitize,
              pytest.mark.skipif(not os.environ.get("LOOM_SANITIZE"), reason="the sanitizer session's check")]


@pytest.mark.parametrize("name", list(PIPELINES))
def test_a_user_pipeline_is_memory_safe(name):
    out, inputs, params, size = PIPELINES[name](lp, 7, 5)
    given = {k: a for k, (_, a) in inputs.items()} | {k: v for k, (_, v) in params.items()}
    for element in out.components or [out]:
        got, want = run_cpu(element, given, size), lp.evaluate(element, given, size)
        if name == "float_approx":
            np.testing.assert_allclose(got, want, rtol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(8))
def test_random_per_tile_windows_are_memory_safe(seed):
    r = random.Random(seed)
    index = "; ".join(random_index(r) for _ in range(r.choice([1, 1, 2])))
    tile, tail, w = r.randint(3, 9), r.choice(["ShiftInwards", "GuardWithIf"]), r.randint(10, 40)
    x, xo, xi = lp.Var("x"), lp.Var("xo"), lp.Var("xi")
    f, g = lp.Func("f"), lp.Func("g")
    f[x] = x * 3
    g[x] = sum(f[eval(i, {"x": x, "m": lp})] for i in index.split(";")) - x
    g.split(x, xo, xi, tile, getattr(lp.TailStrategy, tail))
    f.compute_at(g, xo)
    np.testing.assert_array_equal(run_cpu(g, {}, (w,)), lp.evaluate(g, {}, (w,)))


@pytest.mark.parametrize("w, factor", [(24, 5), (7, 3), (1, 4)])
def test_round_up_stored_at_the_root_is_memory_safe(w, factor):
    x, y, px, pi = (lp.Var(n) for n in ("x", "y", "px", "pi"))
    inp = lp.ImageParam(lp.UInt16, 2, "inp")
    cl = lp.BoundaryConditions.repeat_edge(inp)
    u, out = lp.Func("u"), lp.Func("out")
    u[x, y] = lp.u32(cl[x, y]) * 3 + lp.u32(cl[x + 1, y])
    out[x, y] = u[x, y] + u[x, y + 1]
    u.store_root().compute_at(out, y).split(x, px, pi, factor, lp.TailStrategy.RoundUp)
    a = np.random.default_rng(5).integers(0, 65536, (6, w), dtype=np.uint16)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (w, 6)), lp.evaluate(out, {"inp": a}, (w, 6)))


@pytest.mark.parametrize("seed", [117, 150, 173, 194, 109])
def test_random_schedules_are_memory_safe(seed):
    """Draws of ``schedule_fuzz.py`` that read past a producer's storage (UBSan) before the RoundUp fixes."""
    from tests.pipelines_cpu.schedule_fuzz import draw

    _, out, a, size, _ = draw(lp, seed)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, size), lp.evaluate(out, {"inp": a}, size))
