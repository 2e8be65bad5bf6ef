"""A researcher's own pipelines on the CPU path, bit-exact against real Halide (``user_pipelines.py``): a bilateral
grid's data-dependent histogram, Tuple-valued Funcs, RDom.where, inline reductions, rfactor, fuse, every TailStrategy,
the four boundary conditions, scalar Params, float math, wrapping and saturating casts, sliding windows with
parallel and vectorize, several update RDoms and a scan, Laplacian pyramids, a conv + ReLU + max-pool layer, histogram
equalisation, a Bayer demosaic, a depthwise-separable layer, an f32 unsharp mask, a constant-Buffer LUT with lerp,
absd and mux, an in_() copy with an unrolled RDom and folded storage, a Param in RDom.where with argmin, and a small
camera pipe (Params, a colour matrix, a pow LUT, parallel tiles vectorized).

Each runs at one size of ``SIZES`` (smallest, odd and one-pixel-wide ones among them, taken in turn); with
``LOOM_FUZZ_SCALE`` > 1 at every size (all agreed when this was written, 1x1 to 65x31). Then hostile inputs and
schedules: each is refused with a LoomError naming what was wrong, where Halide refuses it too.
"""

import os
import re

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
import loom.jit  # noqa: F401  (Func.realize)
from loom.errors import LoomError
from tests.pipelines_cpu.user_pipelines import PIPELINES, image, rdom, realize_with, ty, vars_

SIZES = [(1, 1), (7, 5), (2, 3), (33, 17), (9, 1), (1, 7), (65, 31)]
ALL_SIZES = int(os.environ.get("LOOM_FUZZ_SCALE", "1")) > 1
CASES = [(name, size) for i, name in enumerate(PIPELINES) if name != "float_approx"
         for size in (SIZES if ALL_SIZES else [SIZES[i % len(SIZES)]])]


def _as_list(v):
    return v if isinstance(v, list) else [v]


@pytest.mark.parametrize("name, size", CASES, ids=[f"{n}-{w}x{h}" for n, (w, h) in CASES])
def test_a_users_pipeline_is_bit_exact_against_halide(name, size):
    want, got = (_as_list(realize_with(m, name, *size)) for m in (hl, lp))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_float_math_halide_approximates_is_close():
    """exp, log, pow: Halide's own polynomial approximations, loom's libm (within 1 ulp of the correctly rounded
    value where Halide's log was 254 ulp off near log(x) = 0, pow 20: docs/pipelines.md); atan2 agrees."""
    want, got = (realize_with(m, "float_approx", 13, 6) for m in (hl, lp))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


# ---- hostile inputs --------------------------------------------------------------------------------------------
def _simple(m, read=lambda inp, x, y: inp[x, y], kind="u8"):
    x, y = vars_(m, "x y")
    inp = m.ImageParam(ty(m, kind), 2, "inp")
    out = m.Func("out")
    out[x, y] = read(inp, x, y)
    return out, inp


def _refused(build, size, array, loom_message, halide_refuses=True):
    """``build(m) -> (out, inp)``: loom raises ``loom_message``; Halide raises too unless told otherwise."""
    if halide_refuses:
        with pytest.raises(Exception):  # noqa: B017 (Halide's bindings raise RuntimeError or HalideError)
            out, inp = build(hl)
            inp.set(hl.Buffer(array))
            out.realize(list(size))
    with pytest.raises(LoomError, match=loom_message):
        out, inp = build(lp)
        out.realize(list(size), {"inp": array})


A = image((5, 6), "u8", 0)

HOSTILE = {
    "an input too small": (lambda m: _simple(m, lambda i, x, y: i[x + 1, y]), (6, 5), A,
                           r"ImageParam 'inp': the pipeline reads dimension 0 over \[1, 6\] but the input has "
                           r"extent 6 \(needs at least 7"),
    "a wrong dtype": (_simple, (6, 5), A.astype(np.float32),
                      r"ImageParam 'inp': expected u8 array of shape \(5, 6\), got float32"),
    "a wrong rank": (_simple, (6, 5), A[0], r"ImageParam 'inp': expected a 2-d array, got shape \(6,\)"),
    "a negative size": (_simple, (-2, 5), A, r"Func 'out': size \(-2, 5\): the extent of dimension 0 is negative"),
    "too few sizes": (_simple, (6,), A, r"Func 'out': size \(6,\) has 1 dimensions but the Func has 2"),
    "a u8 index into a small input": (lambda m: _simple(m, lambda i, x, y: i[m.i32(i[x, y]), 0]), (6, 5), A,
                                      r"ImageParam 'inp': the pipeline reads dimension 0 over \[0, 255\]"),
    "an unbounded data-dependent index": (
        lambda m: _simple(m, lambda i, x, y: i[i[x, y], y], "i32"), (6, 5), image((5, 6), "i32", 0, 0, 5),
        r"ImageParam 'inp': the pipeline reads dimension 0 over \[-2147483648, 2147483647\]"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_input_is_refused_naming_what_was_expected(case):
    build, size, array, message = HOSTILE[case]
    _refused(build, size, array, message)


def _scheduled(kind):
    def build(m):
        x, y, xo, xi, yo, z = vars_(m, "x y xo xi yo z")
        inp = m.ImageParam(ty(m, "u8"), 2, "inp")
        f, g, out = m.Func("f"), m.Func("g"), m.Func("out")
        f[x, y] = inp[x, y] + 1
        g[x, y] = f[x, y] * 2
        out[x, y] = g[x, y] + f[x, y]
        if kind == "compute_at an unknown loop":
            f.compute_at(out, z)
        elif kind == "split by 0":
            out.split(x, xo, xi, 0)
        elif kind == "reorder repeating a loop":
            out.reorder(x, x)
        elif kind == "store inside compute":
            out.split(x, xo, xi, 2)
            f.compute_at(out, xo).store_at(out, xi)
        elif kind == "a consumer computed outside the producer's level":
            g.compute_at(out, x)
            f.compute_at(g, x)
        elif kind == "compute_at a Func that does not read it":
            f.compute_root()
            g.compute_at(f, x)
        elif kind == "store_root and compute inside a parallel loop":
            out.split(y, yo, z, 2).parallel(yo)
            f.store_root().compute_at(out, yo)
        return out, inp
    return build


SCHEDULES = {
    "compute_at an unknown loop": r"Func 'f': compute_at\(out, z\): 'z' is not a loop of consumer 'out'",
    "split by 0": r"Func 'out': split: factor must be a positive int, got 0",
    "reorder repeating a loop": r"Func 'out': reorder: variables repeated",
    "store inside compute": r"Func 'f': store_at\(out, xi\) is inside compute_at\(out, xo\)",
    "a consumer computed outside the producer's level": r"Func 'f': 'f' is read where it is not computed",
    "compute_at a Func that does not read it": r"Func 'g': compute_at\(f, x\): 'f' does not consume 'g'",
    "store_root and compute inside a parallel loop": r"Func 'f': 'f' is stored outside the parallel/vectorized loop "
                                                     r"over out.yo but computed within it",
}


@pytest.mark.parametrize("kind", list(SCHEDULES))
def test_a_schedule_halide_refuses_is_refused_by_name(kind):
    _refused(_scheduled(kind), (6, 5), A, SCHEDULES[kind])


def test_update_schedules_halide_refuses_are_refused_by_name():
    def histogram(m, schedule):
        inp = m.ImageParam(ty(m, "u8"), 2, "inp")
        x, xo, xi = vars_(m, "x xo xi")
        h = m.Func("h")
        h[x] = m.u32(0)
        r = rdom(m, (0, 6), (0, 5))
        h[m.i32(inp[r.x, r.y])] += m.u32(1)
        h[x] += m.u32(x)
        schedule(m, h, r, x, xo, xi)
        return h, inp

    cases = [(lambda m, h, r, x, xo, xi: h.update(0).parallel(r.y), r"Func 'h': parallel\(.*y\): marking the RVar "
              r"'.*y' parallel may race"),
             (lambda m, h, r, x, xo, xi: h.update(1).split(x, xo, xi, 4, m.TailStrategy.ShiftInwards),
              r"Func 'h.update\(1\)': split: ShiftInwards is not a legal tail strategy for 'x' of an update"),
             (lambda m, h, r, x, xo, xi: h.update(1).vectorize(x, 4, m.TailStrategy.ShiftInwards),
              r"Func 'h.update\(1\)': vectorize: ShiftInwards is not a legal tail strategy")]
    for schedule, message in cases:
        _refused(lambda m: histogram(m, schedule), (256,), A, message)


def test_refusals_where_halide_runs_name_the_limit():
    """Where Halide runs and loom refuses, the error says what loom needs (docs/pipelines.md, Not supported)."""
    def offset_by(m):
        x, y = vars_(m, "x y")
        inp = m.ImageParam(ty(m, "u8"), 2, "inp")
        p = m.Param(ty(m, "i32"), "p")
        out = m.Func("out")
        out[x, y] = inp[x + p, y]
        return out, inp, p

    out, inp, p = offset_by(hl)
    inp.set(hl.Buffer(A))
    p.set(1)
    want = np.asarray(out.realize([4, 5]))
    out, inp, p = offset_by(lp)
    with pytest.raises(LoomError, match=r"indexed by Param\(s\) p, which have no range: give each one"):
        out.realize([4, 5], {"inp": A, "p": 1})
    p.set_range(0, 2)
    np.testing.assert_array_equal(np.asarray(out.realize([4, 5], {"inp": A, "p": 1})), want)
    with pytest.raises(LoomError, match=r"RDom bounds must be constant ints with extent > 0, got \(0, 0\)"):
        lp.RDom([(0, 0)])
    x, u = lp.Var("x"), lp.Var("u")
    f = lp.Func("fsum")
    f[x] = lp.f32(0)
    r = lp.RDom([(0, 4), (0, 3)])
    f[x] += lp.f32(r.x * r.y + x)
    with pytest.raises(LoomError, match=r"rfactor: reassociating a f32 sum changes its rounding"):
        f.update(0).rfactor(r.y, u)


def test_a_func_computed_at_its_own_loop_is_refused_by_name():
    out, _ = _simple(lp)
    x = lp.Var("x")
    with pytest.raises(LoomError, match=r"Func 'out'.*compute_at: 'out' is this Func: a Func cannot be computed or "
                                        r"stored at a loop of its own"):
        out.compute_at(out, x)
        out.realize([6, 5], {"inp": A})


def test_the_pipelines_say_what_they_cover():
    """The module's list holds at least 15 distinct pipelines and every TailStrategy and boundary condition."""
    bases = {re.sub(r"_(root|tiles|exact|approx)$", "", n) for n in PIPELINES if not n.startswith(("split_",
                                                                                                   "boundary_"))}
    assert len(bases) >= 15
    assert sum(n.startswith("split_") for n in PIPELINES) == 6
    assert sum(n.startswith("boundary_") for n in PIPELINES) == 4
