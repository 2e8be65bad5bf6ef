"""``parallel``: the loop runs on OpenMP threads (an ``scf.parallel``), bit-exact against real Halide with the same
schedule; the RVar loops Halide refuses to parallelise (a histogram, a scan) loom refuses too.

Layout: numpy (H, W) is Halide/loom (x = W, y = H).
"""

import numpy as np
import pytest
from tests.pipelines_cpu.halide_oracle import hl

import loom.frontends.pipeline as lp
from loom.errors import LoomError
from loom.jit.pipeline import run_cpu
from tests.pipelines_cpu.test_cpu_parallel import SCHEDULES, H, W, _rvar_update, blur, image


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_parallel_schedules_match_halide(name):
    a = image()
    inp = hl.ImageParam(hl.UInt(16), 2, "inp")
    inp.set(hl.Buffer(a))
    want = np.asarray(blur(hl, inp, SCHEDULES[name]).realize([W - 2, H - 2]))
    got = run_cpu(blur(lp, lp.ImageParam(lp.UInt16, 2, "inp"), SCHEDULES[name]), {"inp": a}, (W - 2, H - 2))
    np.testing.assert_array_equal(got, want)


def _histogram(m):
    inp = m.ImageParam(m.UInt(8) if m is hl else lp.UInt8, 1, "inp")
    x = m.Var("x")
    r = hl.RDom([(0, 16)], "r") if m is hl else lp.RDom(0, 16, name="r")
    h = m.Func("h")
    h[x] = m.i32(0) if m is lp else hl.i32(0)
    h[m.i32(inp[r.x]) if m is lp else hl.i32(inp[r.x])] += 1
    h.update().parallel(r.x)
    return h


def _scan(m):
    x = m.Var("x")
    r = hl.RDom([(1, 15)], "r") if m is hl else lp.RDom(1, 15, name="r")
    s = m.Func("s")
    s[x] = x
    s[r.x] = s[r.x - 1] + s[r.x]
    s.update().parallel(r.x)
    return s


@pytest.mark.parametrize("build", [_histogram, _scan], ids=["histogram", "scan"])
def test_a_racing_parallel_rvar_is_refused_as_halide_refuses_it(build):
    with pytest.raises(Exception, match="race condition"):
        build(hl).realize([16])
    with pytest.raises(LoomError, match=r"parallel\(r.x\).*may race") as info:
        run_cpu(build(lp), {"inp": np.zeros(16, np.uint8)} if build is _histogram else {}, (16,))
    assert "test_halide_parallel.py" in str(info.value)


def test_an_rvar_writing_its_own_point_matches_halide():
    a = image()[0, :16]
    inp = hl.ImageParam(hl.UInt(16), 1, "inp")
    inp.set(hl.Buffer(a))
    want = np.asarray(_rvar_update(hl, inp).realize([16]))
    np.testing.assert_array_equal(run_cpu(_rvar_update(lp, lp.ImageParam(lp.UInt16, 1, "inp")), {"inp": a}, (16,)),
                                  want)


def test_a_producer_stored_outside_a_parallel_loop_is_refused_by_halide_too():
    def schedule(m, out, bx, x, y):
        out.parallel(y)
        bx.store_root().compute_at(out, y)

    inp = hl.ImageParam(hl.UInt(16), 2, "inp")
    inp.set(hl.Buffer(image()))
    with pytest.raises(Exception, match="stored outside the parallel"):
        blur(hl, inp, schedule).realize([W - 2, H - 2])
    with pytest.raises(LoomError, match=r"stored outside the parallel/vectorized loop over out\.y"):
        run_cpu(blur(lp, lp.ImageParam(lp.UInt16, 2, "inp"), schedule), {"inp": image()}, (W - 2, H - 2))
