"""Fuzz the pipeline language: random Func definitions and schedules (wrong types, bad vars,
reduction domains outside the input, unknown primitives, bad arguments to split/tile/unroll),
then evaluate and compile; the only allowed outcomes are success or a LoomError."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.errors import LoomError
from loom.frontends import pipeline as pl
from loom.frontends.pipeline import evaluate
from loom.jit import run_cpu

DEFS = [
    "f[x, y] = u16(inp[x, y])", "f[x, y] = inp[x, y] + 1", "f[x, y] = inp[x + r.x, y + r.y]",
    "f[x, y] = u16(0)", "f[x, y] += u16(inp[x + r.x, y])", "f[x] = inp[x, 0]", "f[x, y, z] = inp[x, y]",
    "f[x, y] = f[x, y]", "f[x, y] = g[x, y] * 2", "f[x, y] = inp[x, y] / 0", "f[x, y] = inp[x, y] % 0",
    "f[x, y] = 1.5", "f[x, y] = 'a'", "f[x, y] = None", "f[x, x] = inp[x, x]", "f[x, 1] = inp[x, 0]",
    "f[x, y] = pl.select(inp[x, y] > 3, inp[x, y], 0)", "f[x, y] = pl.clamp(inp[x, y], 2, 1)",
    "f[x, y] = inp[x, y] << 9", "f[x, y] = inp[x, y] >> -1", "f[x, y] = pl.f32(inp[x, y]) / 3",
    "f[x, y] = inp[x]", "f[x, y] = inp[x, y, 0]", "f[x, y] = inp[q, y]", "f[x, y] = inp[r.x, y] + inp[x, y]",
    "f[r.x, y] = inp[x, y]", "g[x, y] = f[x, y] + 1", "g[x, y] = f[x + 1, y - 1]", "f[x, y] += 1",
    "f[x, y] = inp[x, y] * 1000000", "f[x, y] = pl.cast(pl.Float32, inp[x, y])", "f[x, y] = x + y",
    "f[x, y] = pl.u8(x * y)", "f[x, y] = inp[x * 2, y]", "f[x, y] = inp[-1, y]",
    # Halide features: inline reductions, where, math, mirrors, Params (exact functions only: evaluate == C)
    "f[x, y] = pl.sum(u16(inp[x + r.x, y]))", "f[x] = pl.argmax(inp[r.x, x])[0]", "f[x] = pl.argmin(inp[r.x, x])[1]",
    "f[x, y] = pl.maximum(inp[x, y + r.x])", "f[x] = pl.sum(x)", "f[x, y] = pl.sum(inp[x, y] + r.x, name=3)",
    "f[x, y] = pl.sqrt(inp[x, y])", "f[x, y] = pl.floor(pl.f32(inp[x, y]) / 3.0)", "f[x, y] = pl.round(u16(x))",
    "f[x, y] = pl.sqrt(pl.bf16(inp[x, y]))", "f[x, y] = pl.pow(inp[x, y])",
    "f[x, y] = pl.mirror_image(inp)[x - 3, y + 25]", "f[x, y] = pl.mirror_interior(inp)[x * 2, -y]",
    "f[x, y] = pl.BoundaryConditions.mirror_image(g)[x, y]",
    "r.where(r.x < r.y)", "r.where(1)", "r.where(r.x < q)", "r.where(inp[r.x, 0] > 100)",
    "f[x, y] = inp[x, y] + pl.Param(pl.UInt8, 'p', value=3)", "f[x, y] = inp[x + pl.Param(pl.Int32, 's', value=1), y]",
    "f[x, y] = inp[x + pl.Param(pl.Int32, 's', value=1, min=0, max=2), y]", "f[x, y] = pl.Param(pl.UInt8, 'p', value=300)",
    "f[x, y] = inp[x, y] + pl.Param(pl.UInt8, 'p')",
]
RDOMS = ["r = pl.RDom(0, 3, 0, 3)", "r = pl.RDom(0, 3)", "r = pl.RDom(0, -1, 0, 2)", "r = pl.RDom(0, 3, 0)",
         "r = pl.RDom([(0, 2), (0, 2)])", "r = pl.RDom(0, 100, 0, 100)", "r = pl.RDom('a', 2)", "r = pl.RDom()"]
SCHEDULES = [
    "f.split(x, xo, xi, 4)", "f.split(x, xo, xi, 0)", "f.split(x, xo, xi, -2)", "f.split(q, xo, xi, 4)",
    "f.split(x, xo, xo, 4)", "f.split(x, xo, xi, 2.5)", "f.tile(x, y, xo, yo, xi, yi, 4, 4)",
    "f.tile(x, y, xo, yo, xi, yi, 0, 4)", "f.tile(x, x, xo, yo, xi, yi, 4, 4)", "f.unroll(x)", "f.unroll(x, 0)",
    "f.unroll(x, -3)", "f.unroll(q, 2)", "f.vectorize(x, 4)", "f.parallel(y)", "f.parallel(q)",
    "f.reorder(y, x)", "f.reorder(x, x)", "f.reorder(q)", "f.bound(x, 0, 8)", "f.bound(x, 0, -1)",
    "f.compute_root()", "f.compute_inline()", "f.compute_at(g, x)", "f.compute_at(g, q)", "f.compute_at(f, x)",
    "f.store_at(g, y)", "f.store_root()", "f.store_in('nope')", "f.hw_accelerate(xi, xo)",
    "g.compute_at(f, x)", "f.update(0).unroll(r.x)", "f.update(3)", "f.frobnicate(x)", "f.split(x, xo, xi, 'a')",
    "f.fuse(x, y, xo)", "f.fuse(y, x, xo)", "f.fuse(x, q, xo)", "f.update(0).fuse(r.x, r.y, q)",
    "f.update(0).rfactor(r.y, q)", "f.update(0).rfactor(r.x, x)", "f.update(0).rfactor([(r.x, q)]).compute_root()",
    "f.update(0).rfactor(q, r.x)",
]


@st.composite
def program(draw):
    lines = ["x, y, z, q = pl.Var('x'), pl.Var('y'), pl.Var('z'), pl.Var('q')",
             "xo, xi, yo, yi = pl.Var('xo'), pl.Var('xi'), pl.Var('yo'), pl.Var('yi')",
             "inp = pl.ImageParam(pl.UInt8, 2, 'inp')", "f, g = pl.Func('f'), pl.Func('g')",
             draw(st.sampled_from(RDOMS))]
    lines += draw(st.lists(st.sampled_from(DEFS), min_size=1, max_size=4))
    lines += draw(st.lists(st.sampled_from(SCHEDULES), max_size=3))
    return lines, draw(st.sampled_from(["f", "g"])), draw(st.sampled_from([(8, 8), (4, 6), (0, 4)]))


def run_program(lines, out_name, size) -> None:
    namespace = {"pl": pl, **{n: getattr(pl, n) for n in ("u8", "u16", "f32")}}
    try:
        for line in lines:
            exec(line, namespace)
        out = namespace[out_name]
        inputs = {"inp": np.arange(20 * 20, dtype=np.uint8).reshape(20, 20)}
        want = evaluate(out, inputs, size)
        got = run_cpu(out, inputs, size)
        np.testing.assert_array_equal(got, want)
    except LoomError:
        pass


@settings(max_examples=80, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=program())
def test_pipeline_language_only_raises_loom_errors(case):
    run_program(*case)


def test_the_classes_the_fuzzer_found_are_located_loom_errors():
    import pytest

    cases = [lambda: pl.RDom(0, 3, 0), lambda: pl.RDom(), lambda: pl.RDom([(0, 2), 5]), lambda: pl.RDom(0, 2).y,
             lambda: pl.Func("f").frobnicate]
    for bad in cases:
        with pytest.raises(LoomError) as err:
            bad()
        assert err.value.filename == __file__ and err.value.line is not None
    assert not hasattr(pl.Func("f"), "frobnicate")  # still an AttributeError for hasattr
