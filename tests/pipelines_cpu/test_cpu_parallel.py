"""``parallel`` on the CPU path: the loop becomes an ``scf.parallel`` (``#pragma omp parallel for`` in the C), each
iteration with its own buffers for the Funcs computed inside it; a loop whose iterations would share a Func's
storage (stored outside, computed inside) stays serial. Values against numpy (run under ASan/UBSan too); the same
schedules against Halide in test_halide_parallel.py.

Layout: numpy (H, W) is Halide/loom (x = W, y = H).
"""

import numpy as np
import pytest
from xdsl.dialects import memref, scf

import loom.frontends.pipeline as lp
from loom.backends.c import emit_c
from loom.errors import LoomError
from loom.frontends.pipeline.cpu_lower import lower_pipeline
from loom.jit.pipeline import compile_cpu, run_cpu

W, H = 262, 134  # 128 x 64 tiles of bx (u16, 66 rows with the halo) take 16,896 B: heap storage


def image(seed=0):
    return np.random.default_rng(seed).integers(0, 2000, (H, W)).astype(np.uint16)


def blur(m, inp, schedule):
    """A separable 3 x 3 box sum plus its centre pixel (an update), ``schedule(m, out, bx, x, y)`` applied
    (``m``: loom's frontend or Halide)."""
    x, y = m.Var("x"), m.Var("y")
    bx, out = m.Func("bx"), m.Func("out")
    bx[x, y] = inp[x, y] + inp[x + 1, y] + inp[x + 2, y]
    out[x, y] = bx[x, y] + bx[x, y + 1] + bx[x, y + 2]
    out[x, y] = out[x, y] + inp[x + 1, y + 1]  # the centre counted twice
    schedule(m, out, bx, x, y)
    return out


def _tiles(size, level="xo"):
    def schedule(m, out, bx, x, y):
        xo, yo, xi, yi = m.Var("xo"), m.Var("yo"), m.Var("xi"), m.Var("yi")
        out.tile(x, y, xo, yo, xi, yi, *size).parallel(yo)
        bx.compute_at(out, {"xo": xo, "yo": yo}[level])
    return schedule


def _rows(m, out, bx, x, y):
    out.parallel(y)
    bx.compute_at(out, y)


def _update_rows(m, out, bx, x, y):
    bx.compute_root().parallel(y)
    out.parallel(y)
    out.update().parallel(y)


def _fused(m, out, bx, x, y):
    xy = m.Var("xy")
    bx.compute_root()
    out.fuse(x, y, xy).parallel(xy)


SCHEDULES = {
    "tiles, producer per tile (stack)": _tiles((16, 8)),
    "tiles, producer per tile (heap)": _tiles((128, 64)),
    "tiles, producer per row of tiles": _tiles((32, 16), "yo"),
    "rows, producer per row": _rows,
    "root producer, parallel update": _update_rows,
    "fused loop": _fused,
}


def numpy_blur(a):
    a = a.astype(np.uint16)
    bx = a[:, :-2] + a[:, 1:-1] + a[:, 2:]
    return (bx[:-2] + bx[1:-1] + bx[2:] + a[1:-1, 1:-1]).astype(np.uint16)


def _loom(name):
    return blur(lp, lp.ImageParam(lp.UInt16, 2, "inp"), SCHEDULES[name])


@pytest.mark.sanitize
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_parallel_schedules_give_numpys_values(name):
    a = image()
    np.testing.assert_array_equal(run_cpu(_loom(name), {"inp": a}, (W - 2, H - 2)), numpy_blur(a))


def _parallel_loops(name):
    module = lower_pipeline(_loom(name), {"inp": (H, W)}, (W - 2, H - 2))
    return module, [op for op in module.walk() if isinstance(op, scf.ParallelOp)]


@pytest.mark.parametrize("name, allocation", [("tiles, producer per tile (stack)", memref.AllocaOp),
                                              ("tiles, producer per tile (heap)", memref.AllocOp),
                                              ("rows, producer per row", memref.AllocaOp)])
def test_a_producer_computed_inside_has_storage_per_iteration(name, allocation):
    _module, loops = _parallel_loops(name)
    assert len(loops) == 1
    inside = [op for op in loops[0].walk() if isinstance(op, (memref.AllocaOp, memref.AllocOp))]
    assert [type(op) for op in inside] == [allocation]  # bx's buffer, one per iteration (per thread)
    if allocation is memref.AllocOp:  # freed by the iteration that allocated it
        assert any(isinstance(op, memref.DeallocOp) for op in loops[0].walk())


def test_each_parallel_loop_is_an_openmp_loop():
    _module, loops = _parallel_loops("root producer, parallel update")
    assert len(loops) == 3  # bx's rows, out's rows, the update's rows
    program = compile_cpu(_loom("root producer, parallel update"), {"inp": (H, W)}, (W - 2, H - 2))
    assert emit_c(program.lowered).count("#pragma omp parallel for") == 3


@pytest.mark.parametrize("store", ["root", "yo"])
def test_a_producer_stored_outside_a_parallel_loop_it_is_computed_in_is_refused(store):
    """bx stored outside the parallel loop and computed inside it: the iterations would share its storage, a race
    (Halide refuses it: "stored outside the parallel loop ... but computed within it")."""
    yo, yi = lp.Var("yo"), lp.Var("yi")

    def schedule(m, out, bx, x, y):
        out.split(y, yo, yi, 8).parallel(yi)
        (bx.store_root() if store == "root" else bx.store_at(out, yo)).compute_at(out, yi)

    with pytest.raises(LoomError, match=r"'bx' is stored outside the parallel/vectorized loop over out\.yi"):
        run_cpu(blur(lp, lp.ImageParam(lp.UInt16, 2, "inp"), schedule), {"inp": image()}, (W - 2, H - 2))


def test_a_producer_stored_outside_a_parallel_loop_and_computed_deeper_is_refused():
    """bx is computed inside mid's loops, mid per row of the parallel loop, bx stored at the root: the rows would
    share bx's storage (Halide refuses this race as well)."""
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.UInt16, 2, "inp")
    bx, mid, out = lp.Func("bx"), lp.Func("mid"), lp.Func("out")
    bx[x, y] = inp[x, y] + inp[x + 1, y]
    mid[x, y] = bx[x, y] + bx[x, y + 1]
    out[x, y] = mid[x, y] * 2
    out.parallel(y)
    mid.compute_at(out, y)
    bx.store_root().compute_at(mid, y)
    with pytest.raises(LoomError, match=r"'bx' is stored outside the parallel/vectorized loop over out\.y but "
                                        r"computed within it \(inside a Func computed there\)"):
        run_cpu(out, {"inp": image()}, (W - 2, H - 2))


def _rvar_update(m, inp):
    x = m.Var("x")
    r = lp.RDom(0, 16, name="r") if m is lp else m.RDom([(0, 16)], "r")
    f = m.Func("f")
    f[x] = m.u16(x) if m is lp else m.cast(m.UInt(16), x)
    f[r.x] = f[r.x] * m.u16(3) + inp[r.x] if m is lp else f[r.x] * m.cast(m.UInt(16), 3) + inp[r.x]
    f.update().parallel(r.x)
    return f


@pytest.mark.sanitize
def test_an_rvar_writing_its_own_point_runs_in_parallel():
    """f[r] = f[r] * 3 + in[r]: two iterations never touch one point (Halide parallelises it too)."""
    a = image()[0, :16]
    f = _rvar_update(lp, lp.ImageParam(lp.UInt16, 1, "inp"))
    got = run_cpu(f, {"inp": a}, (16,))
    np.testing.assert_array_equal(got, (np.arange(16) * 3 + a).astype(np.uint16))
    assert any(isinstance(op, scf.ParallelOp) for op in lower_pipeline(f, {"inp": (16,)}, (16,)).walk())


@pytest.mark.parametrize("update, why", [
    ("h[lp.i32(inp[r.x]) % 8] += 1", "histogram: two iterations may write one bin"),
    ("h[r.x] = h[lp.max(r.x - 1, 0)] + 1", "scan: an iteration reads what another writes"),
    ("h[r.x / 2] += 1", "two iterations write each point"),
    ("h[r.x + r.y] += 1", "r.x + r.y: another r.y writes the same point"),
])
def test_a_racing_parallel_rvar_is_refused_at_the_call(update, why):
    inp = lp.ImageParam(lp.UInt8, 1, "inp")
    x = lp.Var("x")
    r = lp.RDom(0, 8, 0, 2, name="r")
    h = lp.Func("h")
    h[x] = lp.i32(0)
    exec(update, {"lp": lp, "h": h, "inp": inp, "r": r})
    h.update().parallel(r.x)
    line = next(i for i, text in enumerate(open(__file__), 1) if text.strip() == "h.update().parallel(r.x)")
    with pytest.raises(LoomError, match=r"parallel\(r.x\): marking the RVar 'r.x' parallel may race") as info:
        run_cpu(h, {"inp": np.zeros(8, np.uint8)}, (16,))
    assert f"test_cpu_parallel.py:{line}" in str(info.value), why
