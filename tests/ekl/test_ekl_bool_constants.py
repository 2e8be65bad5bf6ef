"""A constant array of bool literals (`const T = [true, false]`) is a bool array, so it can be a condition,
as a scalar `const T = true` and a typed let `let t : bool[2] = [true, false]` already were. It was typed as
plain numbers and refused as `a condition must be a bool, got number`."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.errors import LoomError

MASK = [True, False, False, True, True]


@pytest.mark.parametrize("read", ["T[i]", "t[i]"])
def test_a_bool_constant_array_selects_like_numpy_where(read):
    src = f"""
const T = [{', '.join('true' if m else 'false' for m in MASK)}];
kernel k(X : f64[5], Y : out& f64[5]) {{
    let t = T;
    out Y[i] = {read} ? X[i] * 2.0 : -X[i];
}}"""
    kernel = loom.ekl.load(src).k
    x = np.random.default_rng(0).standard_normal(5)
    y = np.zeros(5)
    kernel(x, y)
    want = np.where(MASK, x * 2, -x)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(kernel.reference(x, np.zeros(5))["Y"], want)


def test_a_bool_constant_array_is_not_a_number():
    src = """
const T = [true, false];
kernel k(X : f64[2], Y : out& f64[2]) { out Y[i] = T[i] * X[i]; }"""
    with pytest.raises(LoomError, match="i1"):
        loom.ekl.load(src)


def test_mixed_bool_and_number_items_stay_numbers():
    src = """
const T = [1.5, 2];
kernel k(X : f64[2], Y : out& f64[2]) { out Y[i] = T[i] * X[i]; }"""
    y = np.zeros(2)
    loom.ekl.load(src).k(np.array([2.0, 3.0]), y)
    np.testing.assert_array_equal(y, [3.0, 6.0])
