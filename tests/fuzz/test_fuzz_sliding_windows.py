"""Fuzz the CPU path's sliding windows and storage folding: a producer stored at the root or per tile of rows and
computed per row, read at random row and column offsets (so windows of 1 to 7 rows, folded to a power of two),
images and tiles of random sizes, the producer with an update or not. A fold too small, or a window that does
not slide right, gives wrong values here and an error in the sanitizer session. Values against the reference
evaluator."""

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
    offsets = draw(st.lists(st.tuples(st.integers(-2, 2), st.integers(-3, 3)), min_size=1, max_size=4))
    size = (draw(st.integers(1, 13)), draw(st.integers(1, 20)))
    store = draw(st.sampled_from(["root", "tile"]))
    rows = draw(st.integers(1, 7))
    with_update = draw(st.booleans())
    return offsets, size, store, rows, with_update


@pytest.mark.sanitize
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_sliding_and_folded_windows_match_the_evaluator(case):
    offsets, (w, h), store, rows, with_update = case
    x, y, yo, yi = (pl.Var(n) for n in ("x", "y", "yo", "yi"))
    inp = pl.ImageParam(pl.Int32, 2, "inp")
    cl = pl.BoundaryConditions.repeat_edge(inp)
    f, out = pl.Func("f"), pl.Func("out")
    f[x, y] = cl[x, y] * 3 + cl[x + 1, y - 1]
    if with_update:
        f[x, y] = f[x, y] * 2 + x
    value = None
    for k, (dx, dy) in enumerate(offsets):
        term = f[x + dx, y + dy] * (k + 1)
        value = term if value is None else value + term
    out[x, y] = value
    if store == "root":
        f.store_root().compute_at(out, y)
    else:
        out.split(y, yo, yi, rows)
        f.store_at(out, yo).compute_at(out, yi)
    a = np.random.default_rng(w * 37 + h).integers(-1000, 1000, (h, w)).astype(np.int32)
    np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (w, h)), evaluate(out, {"inp": a}, (w, h)),
                                  err_msg=str(case))
