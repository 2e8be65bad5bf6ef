"""Compiled pipelines that differ only in a static shape their C never uses keep their own argument checks."""

import numpy as np

import loom.frontends.pipeline as lp
from loom.jit.pipeline import run_cpu


def test_an_input_row_count_no_index_uses_is_checked_per_program():
    """out reads the first 3 rows of inputs of 3, 5 and 4 rows: the C text is the same (the row count is in no
    index), but each program checks its own shape; the second took the first's check and refused its input."""
    x, y = lp.Var("x"), lp.Var("y")
    inp = lp.ImageParam(lp.Int32, 2, "inp")
    out = lp.Func("out")
    out[x, y] = inp[x, y] * 2
    for rows in (3, 5, 4):
        a = np.arange(rows * 6, dtype=np.int32).reshape(rows, 6)
        np.testing.assert_array_equal(run_cpu(out, {"inp": a}, (6, 3)), a[:3] * 2)
