"""The relative errors of the ONNX conformance runner and of ``loom run``'s kernel check fail when NaNs or
infinities do not match: a NaN error passed every ``error > tolerance`` test, so a kernel writing NaN
counted as equal."""

from __future__ import annotations

import math

import numpy as np

from loom.examples.checks import _max_rel_error
from loom.models.onnx_conformance import relative_error

WANT = np.array([1.0, -2.0, 3.0], np.float32)


def test_conformance_error_fails_a_nan_on_either_side():
    got = WANT.copy()
    got[1] = np.nan
    assert relative_error(got, WANT) == math.inf
    assert relative_error(WANT, got) == math.inf
    assert relative_error(got, got.copy()) == 0.0  # NaN where the reference has NaN is equal
    assert relative_error(np.array([np.inf]), np.array([-np.inf])) == math.inf
    assert relative_error(WANT + 1e-6, WANT) < 1e-6


def test_kernel_check_error_fails_a_nan_on_either_side():
    got = WANT.copy()
    got[0] = np.nan
    assert _max_rel_error(got, WANT) == math.inf
    assert _max_rel_error(WANT, got) == math.inf
    assert _max_rel_error(got, got.copy()) == 0.0
    assert _max_rel_error(np.array([np.inf, 1.0]), np.array([np.inf, 1.0])) == 0.0
    assert _max_rel_error(np.array([0.5]), np.array([0.25])) == 0.25  # |want| < 1: absolute, as before
