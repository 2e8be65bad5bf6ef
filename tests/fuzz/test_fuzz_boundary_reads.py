"""Fuzz the CPU path's clamp-free code for boundary conditions (loop partitioning of the innermost loop, clamp-free
copies of interior tiles): random stencil offsets (a sum of taps, or an RDom update over their bounding box) through repeat_edge / constant_exterior, random image sizes down
to one pixel, the producer at root or per tile, tile sizes that do or do not divide. An unclamped read at an edge
would give a wrong value here and an error in the sanitizer session. Values against the reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.frontends import pipeline as pl
from loom.frontends.pipeline import evaluate
from loom.jit import run_cpu


@st.composite
def cases(draw):
    offsets = draw(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=1, max_size=4))
    kind = draw(st.sampled_from(["repeat_edge", "constant_exterior"]))
    size = (draw(st.integers(1, 40)), draw(st.integers(1, 9)))  # rows of 16 or more are partitioned
    where = draw(st.sampled_from(["root", "tile", "inline"]))
    tile = (draw(st.integers(1, 8)), draw(st.integers(1, 5)))
    as_update = draw(st.booleans())  # the stencil as an RDom update over a box of taps (both tap loops open)
    return offsets, kind, size, where, tile, as_update


@pytest.mark.sanitize
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_boundary_reads_match_the_evaluator(case):
    offsets, kind, (w, h), where, tile, as_update = case
    x, y, xo, yo, xi, yi = (pl.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    inp = pl.ImageParam(pl.Int32, 2, "inp")
    cl = (pl.BoundaryConditions.repeat_edge(inp) if kind == "repeat_edge"
          else pl.BoundaryConditions.constant_exterior(inp, -7))
    f, out = pl.Func("f"), pl.Func("out")
    value = None
    for k, (dx, dy) in enumerate(offsets):
        term = cl[x + dx, y + dy] * (k + 1)
        value = term if value is None else value + term
    if as_update:  # the taps' bounding box, each tap weighted by its position
        (x0, y0), (x1, y1) = [tuple(fn(o[i] for o in offsets) for i in (0, 1)) for fn in (min, max)]
        r = pl.RDom(x0, x1 - x0 + 1, y0, y1 - y0 + 1, name="r")
        f[x, y] = pl.i32(0)
        f[x, y] += cl[x + r.x, y + r.y] * (r.x + 2 * r.y + 9)
    else:
        f[x, y] = value
    out[x, y] = f[x, y] + f[x + 1, y] - f[x, y - 1]
    if where == "root":
        f.compute_root()
    elif where == "tile":
        out.tile(x, y, xo, yo, xi, yi, *tile)
        f.compute_at(out, xo)
    a = np.random.default_rng(w * 31 + h).integers(-1000, 1000, (h, w)).astype(np.int32)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (w, h)), evaluate(out, {"inp": a}, (w, h)),
                                  err_msg=str(case))
