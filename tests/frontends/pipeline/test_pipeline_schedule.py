"""Schedules: recorded loop structure, value-preserving, illegal ones rejected with Func + primitive named."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, MemoryType, RDom, UInt8, Var, evaluate, u16

x, y = Var("x"), Var("y")
xo, yo, xi, yi = Var("xo"), Var("yo"), Var("xi"), Var("yi")


def two_stage():
    inp = ImageParam(UInt8, 2, "input")
    blur = Func("blur")
    blur[x, y] = u16(inp[x, y]) + u16(inp[x + 1, y])
    out = Func("out")
    out[x, y] = blur[x, y] + blur[x, y + 1]
    return inp, blur, out


def test_loop_structure_is_recorded():
    _, blur, out = two_stage()
    out.tile(x, y, xo, yo, xi, yi, 8, 4)
    assert out.pure.schedule.loops == ["xi", "yi", "xo", "yo"]
    out.reorder(yi, xi)
    assert out.pure.schedule.loops == ["yi", "xi", "xo", "yo"]
    out.unroll(xi, 2)
    assert out.pure.schedule.loops == ["yi", "xi_u", "xi", "xo", "yo"]
    blur.compute_at(out, xo).store_in(MemoryType.MemoryTile)
    assert blur.schedule.compute_level == (out, "xo") and blur.schedule.memory_type == "MemoryTile"


def test_schedules_do_not_change_values():
    img = np.random.default_rng(0).integers(0, 256, (20, 20), dtype=np.uint8)
    _, _, plain = two_stage()
    want = evaluate(plain, {"input": img}, (16, 16))
    _, blur, out = two_stage()
    out.tile(x, y, xo, yo, xi, yi, 8, 8).vectorize(xi)
    blur.compute_at(out, xo).store_at(out, yo)
    np.testing.assert_array_equal(evaluate(out, {"input": img}, (16, 16)), want)
    a = (img[:17, :16].astype(np.uint16) + img[:17, 1:17])
    np.testing.assert_array_equal(want, a[:16] + a[1:17])


@pytest.mark.parametrize("primitive, call", [
    ("split", lambda f: f.split(Var("q"), xo, xi, 4)),
    ("reorder", lambda f: f.reorder(x, Var("q"))),
    ("unroll", lambda f: f.unroll("q")),
    ("tile", lambda f: f.tile(x, Var("q"), xo, yo, xi, yi, 2, 2)),
    ("hw_accelerate", lambda f: f.hw_accelerate(Var("q"), y)),
    ("bound", lambda f: f.bound(Var("q"), 0, 4)),
])
def test_unknown_variable(primitive, call):
    _, _, out = two_stage()
    with pytest.raises(LoomError) as e:
        call(out)
    msg = str(e.value)
    assert "Func 'out'" in msg and "'q'" in msg and primitive.split("_")[0] in msg
    assert e.value.where == "Func 'out'"


def test_compute_at_outside_the_consumer_nest():
    inp, blur, out = two_stage()
    other = Func("other")
    other[x, y] = u16(inp[x, y])
    top = Func("top")
    top[x, y] = out[x, y] + other[x, y]
    blur.compute_at(other, x)  # other is in the pipeline but does not read blur
    with pytest.raises(LoomError, match="Func 'blur': compute_at\\(other, x\\).*does not consume 'blur'"):
        evaluate(top, {"input": np.zeros((4, 4), np.uint8)}, (2, 2))
    stray = Func("stray")
    stray[x, y] = inp[x, y]
    blur.compute_at(stray, x)
    with pytest.raises(LoomError, match="Func 'blur': compute_at\\(stray, x\\).*not part of the pipeline of 'out'; "
                       "realise or build a Func that consumes 'stray'"):
        evaluate(out, {"input": np.zeros((4, 4), np.uint8)}, (2, 2))


def test_realising_the_fabric_level_of_a_memory_hierarchy_names_its_host_level():
    """iteration_order with a GLB level makes out.in_() (GLB) and out.in_().in_() (host); building or realising
    `out` itself leaves the copies its stages are computed at out of the pipeline: the message names the Func to
    realise instead of only saying so."""
    from loom.frontends.pipeline import IterLevel

    inp, blur, out = two_stage()
    out.iteration_order([IterLevel("CGRA", [(x, 4), (y, 2)]), IterLevel("GLB", [(x, 2), (y, 1)]),
                         IterLevel("host")]).accelerate("GLB")
    blur.compute_at(out.get_looplevel("CGRA", x))
    with pytest.raises(LoomError, match=r"not part of the pipeline of 'out'; 'out' is the fabric level of its "
                                        r"iteration_order: realise or build its outermost level, "
                                        r"out.get_memory_level\('host'\)"):
        evaluate(out, {"input": np.zeros((4, 4), np.uint8)}, (2, 2))
    host = out.get_memory_level("host")
    img = np.arange(100, dtype=np.uint8).reshape(10, 10)
    np.testing.assert_array_equal(evaluate(host, {"input": img}, (8, 4)), evaluate(two_stage()[2], {"input": img},
                                                                                  (8, 4)))


def test_compute_at_unknown_loop_of_consumer():
    _, blur, out = two_stage()
    blur.compute_at(out, xo)  # out was never tiled: no loop xo
    with pytest.raises(LoomError, match="Func 'blur': compute_at\\(out, xo\\).*not a loop of consumer 'out'"):
        evaluate(out, {"input": np.zeros((4, 4), np.uint8)}, (2, 2))


def test_store_at_inside_compute_at():
    _, blur, out = two_stage()
    out.tile(x, y, xo, yo, xi, yi, 2, 2)
    blur.compute_at(out, xo).store_at(out, xi)
    with pytest.raises(LoomError, match="Func 'blur': store_at\\(out, xi\\) is inside compute_at\\(out, xo\\)"):
        evaluate(out, {"input": np.zeros((8, 8), np.uint8)}, (4, 4))


def test_store_at_without_compute_at_and_inside_root():
    _, blur, out = two_stage()
    blur.store_at(out, x)
    with pytest.raises(LoomError, match="blur.*store_at without compute_at"):
        evaluate(out, {"input": np.zeros((4, 4), np.uint8)}, (2, 2))
    _, blur, out = two_stage()
    blur.compute_root().store_at(out, x)
    with pytest.raises(LoomError, match="blur.*inside its compute level"):
        evaluate(out, {"input": np.zeros((4, 4), np.uint8)}, (2, 2))


def test_bad_arguments():
    _, blur, out = two_stage()
    with pytest.raises(LoomError, match="out.*split.*positive"):
        out.split(x, xo, xi, 0)
    with pytest.raises(LoomError, match="out.*store_in.*unknown memory type"):
        out.store_in("DRAM")
    with pytest.raises(LoomError, match="out.*hw_accelerate.*must be a loop inside"):
        out.hw_accelerate(y, x)
    with pytest.raises(LoomError, match="out.*has no update definition"):
        out.update(0)
    r = RDom(0, 3)
    acc = Func("acc")
    acc[x] = 0
    acc[x] = acc[x] + r.x
    with pytest.raises(LoomError, match="acc.update\\(0\\).*compute_at.*applies to a Func"):
        acc.update(0).compute_at(out, x)


def test_in_copy_stage_redirects_consumers():
    img = np.random.default_rng(5).integers(0, 256, (9, 9), dtype=np.uint8)
    _, blur, out = two_stage()
    copy = blur.in_()
    assert copy is blur.in_() and copy.name == "blur_in"
    copy.compute_root()
    from loom.frontends.pipeline import FuncGraph
    pipe = FuncGraph(out)
    assert pipe.producers[id(out)] == [copy] and pipe.producers[id(copy)] == [blur]
    _, _, plain = two_stage()
    np.testing.assert_array_equal(evaluate(out, {"input": img}, (8, 8)), evaluate(plain, {"input": img}, (8, 8)))


def test_schedule_errors_point_at_the_user_line():
    import inspect
    _, blur, out = two_stage()
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(LoomError) as e:
        out.split(Var("nope"), xo, xi, 2)
    assert e.value.filename == __file__ and e.value.line == line
    out.tile(x, y, xo, yo, xi, yi, 2, 2)
    blur.compute_at(out, xo); line = inspect.currentframe().f_lineno  # noqa: E702
    blur.store_at(out, xi)
    with pytest.raises(LoomError) as e:
        evaluate(out, {"input": np.zeros((8, 8), np.uint8)}, (4, 4))
    assert e.value.filename == __file__ and e.value.line == line + 1 and e.value.construct == "store_at"


def test_definition_errors_point_at_the_user_line():
    import inspect
    inp = ImageParam(UInt8, 2, "input")
    f = Func("mixed")
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(LoomError) as e:
        f[x, y] = inp[x, y] + 300  # 300 does not fit u8
    assert e.value.filename == __file__ and e.value.line == line
