"""Declarative scheduling (thesis §3.6): the declarative schedules of gaussian, harris and the conv layer
build the same designs as the same schedules written in the original primitives (unified buffers, port
domains, access maps, cycle schedules, capacities, memory mapping, simulated output), and that output is
the numpy reference's. Loop structures of ``iteration_order`` are checked against the loop nests one
writes with ``split``/``reorder``; bad uses are one-line LoomErrors naming the Func and the primitive."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends import pipeline as pl
from loom.frontends.pipeline import IterLevel, LoopLevel, evaluate
from loom.streaming import build_design, map_memories, simulate

from tests.frontends.pipeline.pipeline_apps import example, references

CASES = [  # app, schedule arguments, design size (one tile), simulated size (several tiles)
    ("gaussian", dict(tile=(62, 62), rate=1), (62, 62), (124, 62)),
    ("gaussian", dict(tile=(16, 8), rate=2), (16, 8), (32, 16)),
    ("harris", dict(tile=(58, 58), rate=1), (58, 58), (58, 58)),
    ("harris", dict(tile=(20, 10), rate=2), (20, 10), (40, 20)),
    ("conv_layer", dict(tile=(16, 16), ci_unroll=None), (16, 16, 4), (32, 16, 4)),
    ("conv_layer", dict(tile=(12, 7), ci_unroll=1), (12, 7, 4), (12, 14, 4)),
]


def both_designs(name, args, size):
    mod = example(name)
    decl, imp = mod.algorithm(), mod.algorithm()
    mod.accel_schedule(decl, **args)
    mod.imperative_schedule(imp, **args)
    return mod, decl, imp, build_design(decl["output"], size), build_design(imp["output"], size)


def reference(name, mod, img, size):
    w, h = size[:2]
    if name == "conv_layer":
        return references.conv_layer(img, w, h, mod.weights())
    return getattr(references, name)(img, w, h)


@pytest.mark.parametrize("name,args,size,sim_size", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_declarative_and_imperative_schedules_build_the_same_design(name, args, size, sim_size):
    mod, decl, imp, dd, di = both_designs(name, args, size)
    assert dd.table() == di.table()  # every buffer's ports: domains, access maps, cycle schedules, capacities
    assert dd.offsets == di.offsets and dd.capacities == di.capacities and dd.latency == di.latency
    assert {n: (p.schedule.strides, p.extents) for n, p in dd.stages.items()} == \
        {n: (p.schedule.strides, p.extents) for n, p in di.stages.items()}
    assert {n: b.capacity for n, b in dd.accumulators.items()} == {n: b.capacity for n, b in di.accumulators.items()}
    assert map_memories(dd).table() == map_memories(di).table()
    img = np.random.default_rng(3).integers(0, 256, mod.input_shape(sim_size[:2]), dtype=np.uint8)
    out_d = simulate(decl["output"], {"input": img}, sim_size)
    out_i = simulate(imp["output"], {"input": img}, sim_size)
    np.testing.assert_array_equal(out_d, out_i)
    np.testing.assert_array_equal(out_d, reference(name, mod, img, sim_size))


def test_declarative_gaussian_has_the_hand_derived_design():
    """62x62 tile from a 64-wide input at 1 pixel/cycle: a 3x3 window holds 2 rows + 2 pixels, the first
    output leaves after them (130 cycles) and the last at 130 + 64 * 61 + 61 (so latency 4096)."""
    out, _ = example("gaussian").build("accel", tile=(62, 62))
    d = build_design(out, (62, 62))
    assert d.capacities["hw_input"] == 2 * 64 + 2
    assert d.offsets["output"] == 130 and d.latency == 130 + 64 * 61 + 61 + 1


def _blur():
    x, y = pl.Var("x"), pl.Var("y")
    inp = pl.ImageParam(pl.UInt8, 2, "input")
    hw = pl.Func("hw_input")
    hw[x, y] = pl.u16(inp[x, y])
    out = pl.Func("output")
    out[x, y] = pl.u8((hw[x, y] + hw[x + 1, y] + hw[x, y + 1]) / 3)
    return x, y, hw, out


def test_iteration_order_is_split_and_reorder_level_by_level():
    """Levels that name no memory split one Func; a GLB level makes copies (test_streaming_output_levels)."""
    x, y, _, out = _blur()
    levels = [IterLevel("CGRA", [(x, 8), (y, 4)]), IterLevel("mid", [(y, 2), (x, 3)]), IterLevel("host")]
    out.iteration_order(levels)
    x2, y2, _, by_hand = _blur()
    by_hand.split(x2, "x_above_CGRA", "x_CGRA", 8).split("x_above_CGRA", "x_host", "x_mid", 3)
    by_hand.split(y2, "y_above_CGRA", "y_CGRA", 4).split("y_above_CGRA", "y_host", "y_mid", 2)
    by_hand.reorder("x_CGRA", "y_CGRA", "y_mid", "x_mid", "x_host", "y_host")
    assert out.pure.schedule.loops == by_hand.pure.schedule.loops == \
        ["x_CGRA", "y_CGRA", "y_mid", "x_mid", "x_host", "y_host"]
    assert [(s.old, s.outer, s.inner, s.factor) for s in out.pure.schedule.splits] == \
        [(s.old, s.outer, s.inner, s.factor) for s in by_hand.pure.schedule.splits]
    assert out.get_looplevel("CGRA", x) == LoopLevel(out, "x_mid")
    assert out.get_looplevel("mid", y) == LoopLevel(out, "y_host")
    assert out.get_looplevel("host", x).is_root


def test_a_three_level_order_computes_the_same_values_on_the_cpu():
    import loom.jit  # noqa: F401  (registers the CPU path)
    from loom.jit import run_cpu

    x, y, hw, out = _blur()
    out.iteration_order([IterLevel("L1", [(x, 5), (y, 3)]), IterLevel("L2", [(x, 2)]), IterLevel("L3")])
    out.create_memories([hw], out.get_looplevel("L1", x))
    assert hw.schedule.compute_level == (out, "x_L2")
    img = np.random.default_rng(0).integers(0, 256, (14, 23), dtype=np.uint8)
    want = ((img[:13, :22].astype(np.uint16) + img[:13, 1:23] + img[1:14, :22]) // 3).astype(np.uint8)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, (22, 13)), want)
    np.testing.assert_array_equal(evaluate(out, {"input": img}, (22, 13)), want)


def test_output_rate_unrolls_every_stage_and_reduction():
    mod = example("harris")
    a = mod.algorithm()
    mod.accel_schedule(a, tile=(20, 10), rate=2)
    for n in ("hw_input", "grad_x", "grad_y", "lgxx", "lgyy", "lgxy", "cim"):
        assert a[n].pure.schedule.unrolled == {"x_u": 2}, n
    for n in ("grad_x_unclamp", "grad_y_unclamp", "lgxx", "lgyy", "lgxy"):
        assert set(a[n].updates[0].schedule.unrolled) == {"r.x", "r.y"} or \
            set(a[n].updates[0].schedule.unrolled) == {"box.x", "box.y"}, n
    assert a["output"].schedule.hw_accelerate == ("x_CGRA", "x_host")


@pytest.mark.parametrize("call,message", [
    (lambda x, y, hw, out: IterLevel("CGRA", [(x, 0)]), "IterLevel: level 'CGRA': size of 'x' must be a positive int"),
    (lambda x, y, hw, out: IterLevel("a b"), "IterLevel: level name must be an identifier"),
    (lambda x, y, hw, out: out.iteration_order([IterLevel("CGRA", [(pl.Var("z"), 4)]), IterLevel("host")]),
     "iteration_order: level 'CGRA' names 'z', which is not a dimension of output"),
    (lambda x, y, hw, out: out.iteration_order([IterLevel("CGRA", [(x, None)]), IterLevel("host")]),
     "iteration_order: level 'CGRA' gives 'x' no size; only the outermost level may omit sizes"),
    (lambda x, y, hw, out: out.iteration_order([IterLevel("A", [(x, 4)]), IterLevel("A")]),
     "iteration_order: level names repeat"),
    (lambda x, y, hw, out: out.iteration_order([IterLevel("CGRA"), IterLevel("host")]),
     "iteration_order: level 'CGRA' lists no loops; only the outermost level may omit them"),
    (lambda x, y, hw, out: out.iteration_order([IterLevel("CGRA", [(y, 4), (x, 6)]), IterLevel("host")])
     .accelerate("CGRA"), "accelerate: level 'CGRA' lists y, x, but the accelerator computes output in its "
     "dimensions' order (x, y, innermost first)"),
    (lambda x, y, hw, out: out.iteration_order([IterLevel("CGRA", [(x, 4)]), IterLevel("host")])
     .get_looplevel("GLB", x), "get_looplevel: unknown level 'GLB' (levels, innermost first: CGRA, host)"),
    (lambda x, y, hw, out: out.iteration_order([IterLevel("CGRA", [(x, 4)])]).accelerate("CGRA"),
     "accelerate: level 'CGRA' is the outermost"),
    (lambda x, y, hw, out: out.iteration_order([IterLevel("CGRA", [(x, 4)]), IterLevel("host")])
     .accelerate("CGRA").output_rate(2), "output_rate: call output_rate before accelerate"),
    (lambda x, y, hw, out: out.output_rate(0), "output_rate: rate must be a positive int"),
    (lambda x, y, hw, out: out.create_memories([hw]), "create_memories: give a LoopLevel, or call accelerate first"),
])
def test_declarative_errors_name_the_primitive(call, message):
    with pytest.raises(LoomError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        call(*_blur())
    assert "\n" not in str(e.value).strip()


def test_declarative_input_hierarchy_equals_in_copies():
    """Thesis Code 3.8's stream_to_accelerator(levels, looplevels): hw_input computed on the host, its copy
    buffered on the accelerator; the same design as writing the ``in_()`` copy by hand."""
    mod = example("gaussian")
    decl, imp = mod.algorithm(), mod.algorithm()
    x, y, out = decl["x"], decl["y"], decl["output"]
    out.output_rate(1).iteration_order([IterLevel("CGRA", [(x, 20), (y, 10)]), IterLevel("host")]).accelerate("CGRA")
    decl["hw_input"].stream_to_accelerator(["CGRA", "host"], [out.get_looplevel("CGRA", x), LoopLevel.root()])
    copy = decl["hw_input"].get_memory_level("CGRA")
    assert copy.wrapped is decl["hw_input"] and decl["hw_input"].get_memory_level("host") is decl["hw_input"]
    assert copy.schedule.compute_level == (out, "x_host") and decl["hw_input"].schedule.accelerator_input

    xo, yo, xi, yi = (pl.Var(n) for n in ("xo", "yo", "xi", "yi"))
    o = imp["output"]
    o.tile(imp["x"], imp["y"], xo, yo, xi, yi, 20, 10).hw_accelerate(xi, xo)
    imp["hw_input"].in_().compute_at(o, xo)
    imp["hw_input"].compute_root().accelerator_input()
    imp["blur_unnormalized"].update().unroll(imp["win"].x).unroll(imp["win"].y)

    dd, di = build_design(out, (20, 10)), build_design(o, (20, 10))
    assert dd.table() == di.table() and dd.capacities["hw_input_in"] == 2 * 22 + 2
    img = np.random.default_rng(6).integers(0, 256, (22, 42), dtype=np.uint8)
    np.testing.assert_array_equal(simulate(out, {"input": img}, (40, 20)), references.gaussian(img, 40, 20))
    with pytest.raises(LoomError, match="get_memory_level: no memory level 'GLB' \\(levels: CGRA, host\\)"):
        decl["hw_input"].get_memory_level("GLB")
