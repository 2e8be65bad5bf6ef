"""A parallel loop inside other loops opens an OpenMP region each time they enter it: an rfactor intermediate's
``update(0).parallel(u)`` of 8 rows of 8 taps inside its per-pixel loops opened one per pixel (2.4 s against
Halide's 87 ms). Such a loop, whose nest is too small to pay for a region, runs serially; a nested parallel loop
with enough work inside, and one at the top of the nest, keep their threads. Values against Halide's."""

import numpy as np
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.backends.c import emit_c
from loom.jit.pipeline import compile_cpu

W, H = 24, 10


def _box_sums(m, inp, taps):
    """Each pixel the sum of a taps x taps box, its rows factored out and summed in parallel."""
    x, y, u = m.Var("x"), m.Var("y"), m.Var("u")
    cl = m.BoundaryConditions.repeat_edge(inp)
    r = m.RDom([(0, taps), (0, taps)]) if m is hl else lp.RDom(0, taps, 0, taps)
    out = m.Func("out")
    out[x, y] = m.i32(0)
    out[x, y] += m.i32(cl[x + r.x, y + r.y])
    intm = out.update(0).rfactor([(r.y, u)]) if m is hl else out.update(0).rfactor(r.y, u)
    intm.update(0).parallel(u)
    return out


def _halide(a, taps):
    hin = hl.ImageParam(hl.UInt(8), 2, "inp")
    b = hl.Buffer(a)
    hin.set(b)
    return np.asarray(_box_sums(hl, hin, taps).realize([W, H]))


def test_a_tiny_parallel_loop_inside_per_pixel_loops_runs_serially():
    a = np.random.default_rng(4).integers(0, 256, (H, W)).astype(np.uint8)
    program = compile_cpu(_box_sums(lp, lp.ImageParam(lp.UInt8, 2, "inp"), 8), {"inp": a.shape}, (W, H))
    assert "#pragma omp parallel" not in emit_c(program.lowered)
    np.testing.assert_array_equal(program({"inp": a}), _halide(a, 8))


def test_a_nested_parallel_loop_with_enough_work_keeps_its_threads():
    a = np.random.default_rng(5).integers(0, 256, (H, W)).astype(np.uint8)
    # 100 rows of 100 taps a pixel: 10,000 iterations each time the region opens
    program = compile_cpu(_box_sums(lp, lp.ImageParam(lp.UInt8, 2, "inp"), 100), {"inp": a.shape}, (W, H))
    assert emit_c(program.lowered).count("#pragma omp parallel for") == 1
    np.testing.assert_array_equal(program({"inp": a}), _halide(a, 100))


def test_a_small_parallel_loop_at_the_top_keeps_its_threads():
    x, y = lp.Var("x"), lp.Var("y")
    f = lp.Func("f")
    f[x, y] = x + y * 3
    f.parallel(y)
    program = compile_cpu(f, {}, (4, 4))
    assert emit_c(program.lowered).count("#pragma omp parallel for") == 1
    np.testing.assert_array_equal(program({}), np.add.outer(np.arange(4) * 3, np.arange(4)).astype(np.int32))
