"""A reduction over a zero extent (`?` given 0) is the op's identity in the compiled kernel (its accumulator
starts there) and now in the numpy reference too: `kernel.reference` and `loom ekl run --size 0` raised
numpy's ValueError ("zero-size array to reduction operation maximum which has no identity") for min / max."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.cli import main

IDENTITY = {("+", "f64"): 0.0, ("*", "f64"): 1.0, ("min", "f64"): np.inf, ("max", "f64"): -np.inf,
            ("+", "index"): 0, ("*", "index"): 1, ("min", "index"): 2**63 - 1, ("max", "index"): -(2**63)}
NUMPY = {"+": np.sum, "*": np.prod, "min": np.min, "max": np.max}


@pytest.mark.parametrize("op,dtype", sorted(IDENTITY))
@pytest.mark.parametrize("rows", [0, 3])
def test_reductions_over_a_dynamic_extent_agree_with_numpy(op, dtype, rows):
    src = f"kernel r(a : {dtype}[?, 4], y : out& {dtype}[4]) {{ out y[j] = <{op} i< a[i, j]; }}"
    kernel = loom.ekl.load(src).kernel()
    np_type = np.float64 if dtype == "f64" else np.int64
    a = (np.random.default_rng(1).random((rows, 4)) * 10 - 5).astype(np_type)
    want = np.full(4, IDENTITY[op, dtype], np_type) if rows == 0 else NUMPY[op](a, axis=0)
    y = np.full(4, 7, np_type)
    kernel(a, y)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(kernel.reference(a, np.zeros(4, np_type))["y"], want)


def test_ekl_run_with_size_zero(tmp_path, capsys):
    f = tmp_path / "colmax.ekl"
    f.write_text("kernel colmax(a : f64[?, ?], y : out& f64[?]) { out y[j] = <max i< a[i, j]; }")
    assert main(["ekl", "run", str(f), "--size", "0"]) == 0
    assert "ok" in capsys.readouterr().out


def test_explore_emulates_empty_reductions_and_empty_results():
    """The bf16 / fixed rows of `explore` (numpy emulation) refused an empty reduction, and a reduction with no
    result rows crashed in a reshape; the identity in the format is what the compiled kernels start from."""
    from loom.frontends.ekl.emulate import evaluate_in, parse_format

    k = loom.ekl.load("kernel r(A : f64[?, ?], m : out& f64[?], s : out& f64[?]) "
                      "{ out m[i] = <max j< A[i, j]; out s[i] = <+ j< A[i, j]; }").kernel()
    for rows, cols in ((3, 0), (0, 4)):
        arrays = {"A": np.ones((rows, cols)), "m": np.zeros(rows), "s": np.zeros(rows)}
        bf16 = evaluate_in(k.lowered_form, arrays, parse_format("bf16"))
        assert bf16["m"].tolist() == [-np.inf] * rows and bf16["s"].tolist() == [0.0] * rows
        fixed = evaluate_in(k.lowered_form, arrays, parse_format("fixed8.4"))
        assert fixed["m"].tolist() == [-8.0] * rows  # -inf saturates to the format's lowest, -2^(8-4-1)
