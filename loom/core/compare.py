"""Comparing computed arrays with a reference: bit-exact equality, and the relative error that checks and CLIs
report."""

from __future__ import annotations

import math

import numpy as np


def relative_difference(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want| over the finite values; infinite when a NaN or an infinity of one is not
    the same in the other (NaN - NaN and inf - inf are NaN, which max() and > would silently pass)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    nan, infinite = np.isnan(want), np.isinf(want)
    finite = ~nan & ~infinite
    if (got.shape != want.shape or not np.array_equal(np.isnan(got), nan)
            or not np.array_equal(got[infinite], want[infinite]) or not np.isfinite(got[finite]).all()):
        return math.inf
    if not finite.any():
        return 0.0
    scale = float(np.max(np.abs(want[finite]))) or 1.0
    return float(np.max(np.abs(got[finite] - want[finite]))) / scale


def bits_differ(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Where two arrays of one shape differ bit for bit (-0.0 is not +0.0), a NaN equal to any NaN: its payload
    depends on which operand a CPU or an RTL unit propagates. ``!=`` would count every NaN as a difference."""
    got, want = np.asarray(got), np.asarray(want)
    differ = got != want
    if got.dtype.kind == "f" and want.dtype == got.dtype:
        unsigned = f"u{got.dtype.itemsize}"
        both_nan = np.isnan(got) & np.isnan(want)
        differ = (got.view(unsigned) != want.view(unsigned)) & ~both_nan
    return differ
