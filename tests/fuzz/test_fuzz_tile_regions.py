"""Fuzz the CPU path's per-tile regions: a producer computed at a consumer's tile loop, read through random index
forms (translations, scales, floor divisions, remainders, shifts, min/max, select, narrowing casts), random tile sizes and
output sizes, and an input exactly as long as the pipeline's bounds say the reads need (a region running past it reads outside the
array: wrong values here, an error in the sanitizer session). Values against a Python reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.frontends import pipeline as pl
from loom.frontends.pipeline.bounds import interval
from loom.jit import run_cpu


# (loom index from x, the same on Python ints), each with x >= 0 giving an index >= 0
FORMS = {
    "shift": lambda c, d: (lambda x: x + c, lambda x: x + c),
    "scale": lambda c, d: (lambda x: d * x + c, lambda x: d * x + c),
    "divide": lambda c, d: (lambda x: (x + c) / d, lambda x: (x + c) // d),
    "divide_back": lambda c, d: (lambda x: ((x + c) / d) * d + 1, lambda x: (x + c) // d * d + 1),
    "remainder": lambda c, d: (lambda x: x + x % d, lambda x: x + x % d),
    "shift_right": lambda c, d: (lambda x: (x >> 1) + c, lambda x: (x >> 1) + c),
    "min": lambda c, d: (lambda x: pl.min(x + c, 3 * d), lambda x: min(x + c, 3 * d)),
    "max": lambda c, d: (lambda x: pl.max(x - c, 0), lambda x: max(x - c, 0)),
    "select": lambda c, d: (lambda x: pl.select(x % 2 == 0, x + c, x), lambda x: x + c if x % 2 == 0 else x),
    "two_divisions": lambda c, d: (lambda x: x / d + x / 2, lambda x: x // d + x // 2),
    "narrowing_cast": lambda c, d: (lambda x: pl.u8(x + 100 * c), lambda x: (x + 100 * c) % 256),
}


@st.composite
def cases(draw):
    reads = draw(st.lists(st.tuples(st.sampled_from(sorted(FORMS)), st.integers(0, 3), st.integers(2, 4)),
                          min_size=1, max_size=2))
    return reads, draw(st.integers(1, 9)), draw(st.integers(1, 40)), draw(st.booleans()), \
        draw(st.sampled_from(["ShiftInwards", "GuardWithIf"]))


@pytest.mark.sanitize
@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_per_tile_regions_hold_every_read(case):
    reads, tile, size, stored_outside, tail = case  # tail: of both splits (GuardWithIf: tiles cut short)
    forms = [FORMS[name](c, d) for name, c, d in reads]
    x, xo, xi, to, ti = (pl.Var(n) for n in ("x", "xo", "xi", "to", "ti"))
    inp = pl.ImageParam(pl.Int32, 1, "inp")
    f, g, h = pl.Func("f"), pl.Func("g"), pl.Func("h")
    f[x] = inp[x] * 3 + x
    value = None
    for loom_index, _ in forms:
        value = f[loom_index(x)] if value is None else value + f[loom_index(x)]
    g[x] = value
    h[x] = g[x]
    h.split(x, to, ti, 2 * tile, getattr(pl.TailStrategy, tail))
    g.compute_at(h, to).split(x, xo, xi, tile, getattr(pl.TailStrategy, tail))
    if stored_outside:  # f's buffer per pair of g's tiles, computed per tile
        f.store_at(h, to).compute_at(g, xo)
    else:
        f.compute_at(g, xo)
    xs = range(size)
    # as long as the pipeline's bounds say the reads need (intervals: x + x % 2 over [0, 2] may read 3)
    length = max(interval(loom_index(x), {"x": (0, size - 1)})[1] for loom_index, _ in forms) + 1
    a = np.random.default_rng(size).integers(-1000, 1000, length).astype(np.int32)
    want = np.array([sum(int(a[py(v)]) * 3 + py(v) for _, py in forms) for v in xs], dtype=np.int64)
    np.testing.assert_array_equal(run_cpu(h, {"inp": a}, (size,)), want.astype(np.int32), err_msg=str(case))
