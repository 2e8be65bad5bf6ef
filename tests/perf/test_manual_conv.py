"""The hand-written output-stationary Conv2D driver equals numpy exactly on
small layers (stride 1 and 2, fHW 1 and 3, batch > 1) and follows the
accelerator protocol with one transaction per instruction."""

from __future__ import annotations

from tests.perf.manual_drivers import manual
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from loom.errors import LoomError
from loom.runtime.host import trace_counters

pytestmark = pytest.mark.sanitize

LAYERS = [  # batch, iC, H, W, oC, fHW, stride
    (1, 3, 7, 7, 4, 3, 1),
    (2, 5, 9, 8, 3, 3, 2),
    (1, 8, 6, 6, 2, 1, 1),
    (2, 4, 7, 9, 3, 1, 2),
]


def conv_reference(inp, weights, out, stride):
    """out + conv(inp, weights), NCHW/FCHW; int32 wrap-around via uint64."""
    f = weights.shape[2]
    windows = sliding_window_view(inp, (f, f), axis=(2, 3))[:, :, ::stride, ::stride]
    if inp.dtype == np.float32:
        prod = np.einsum("nchwij,ocij->nohw", windows.astype(np.float64), weights.astype(np.float64))
        return (out.astype(np.float64) + prod).astype(np.float32)
    u = lambda x: x.astype(np.int64).astype(np.uint64)
    prod = np.einsum("nchwij,ocij->nohw", u(windows), u(weights))
    return (u(out) + prod).astype(np.uint32).view(np.int32)


def out_shape(batch, oC, H, W, f, s):
    return batch, oC, (H - f) // s + 1, (W - f) // s + 1


@pytest.mark.parametrize("batch,iC,H,W,oC,f,s", LAYERS)
def test_conv_int32_equals_numpy(drivers, batch, iC, H, W, oC, f, s):
    rng = np.random.default_rng(iC * H + f * 10 + s)
    big = lambda shape: rng.integers(-(2**31), 2**31, shape, dtype=np.int64).astype(np.int32)
    inp, weights = big((batch, iC, H, W)), big((oC, iC, f, f))
    out = big(out_shape(batch, oC, H, W, f, s))
    expected = conv_reference(inp, weights, out, s)
    manual.conv_os(inp, weights, out, s, lib=drivers)
    np.testing.assert_array_equal(out, expected)


def test_conv_float32_small_integers_exact(drivers):
    rng = np.random.default_rng(3)
    small = lambda shape: rng.integers(-8, 9, shape).astype(np.float32)
    inp, weights = small((1, 6, 8, 8)), small((3, 6, 3, 3))
    out = small(out_shape(1, 3, 8, 8, 3, 2))
    expected = conv_reference(inp, weights, out, 2)
    manual.conv_os(inp, weights, out, 2, lib=drivers)
    np.testing.assert_array_equal(out, expected)


def test_conv_protocol_transactions(drivers):
    batch, iC, H, W, oC, f, s = 2, 3, 7, 8, 4, 3, 2
    rng = np.random.default_rng(4)
    inp = rng.integers(-5, 5, (batch, iC, H, W)).astype(np.int32)
    weights = rng.integers(-5, 5, (oC, iC, f, f)).astype(np.int32)
    _, _, oH, oW = shape = out_shape(batch, oC, H, W, f, s)
    manual.conv_os(inp, weights, np.zeros(shape, np.int32), s, lib=drivers)
    planes = batch * oC
    slice_words = iC * f * f
    counters = trace_counters(drivers)
    # [32, f], [16, iC]; per plane [1 + filter], per pixel [70 + window], [8]
    assert counters["sends"] == 2 + planes * (1 + oH * oW + 1)
    assert counters["words_sent"] == 4 + planes * ((1 + slice_words) * (1 + oH * oW) + 1)
    assert counters["recvs"] == planes
    assert counters["words_received"] == planes * oH * oW


def test_conv_bad_inputs_are_loom_errors(drivers):
    inp = np.zeros((1, 3, 4, 4), np.int32)
    with pytest.raises(LoomError, match="square filters"):
        manual.conv_os(inp, np.zeros((2, 3, 5, 5), np.int32), np.zeros((1, 2, 1, 1), np.int32), 1, lib=drivers)
    with pytest.raises(LoomError, match="output shape"):
        manual.conv_os(inp, np.zeros((2, 3, 3, 3), np.int32), np.zeros((1, 2, 3, 3), np.int32), 1, lib=drivers)
    # iC * fHW * fHW beyond the accelerator's 16384-word filter buffer
    wide = np.zeros((1, 2000, 3, 3), np.int32)
    with pytest.raises(LoomError, match="error code 9"):
        manual.conv_os(wide, np.zeros((1, 2000, 3, 3), np.int32), np.zeros((1, 1, 1, 1), np.int32), 1, lib=drivers)
