"""The Conv2D accelerator driven with the paper's output-stationary host
protocol (Fig. 15b) on small layers; results must equal numpy exactly."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from tests.runtime.runtime_helpers import CONV, F32, I32, Driver, last_error, random_i32

pytestmark = pytest.mark.sanitize


def conv_reference(inp, weights, stride):
    """NCHW / FCHW convolution, int32 wrap-around via uint64 arithmetic."""
    f = weights.shape[2]
    windows = sliding_window_view(inp[0], (f, f), axis=(1, 2))[:, ::stride, ::stride]
    if inp.dtype == np.float32:
        return np.einsum("chwij,ocij->ohw", windows.astype(np.float64), weights.astype(np.float64))[None].astype(np.float32)
    out = np.einsum("chwij,ocij->ohw", windows.astype(np.int64).astype(np.uint64),
                    weights.astype(np.int64).astype(np.uint64))
    return out.astype(np.uint32).view(np.int32)[None]


def run_conv(lib, inp, weights, stride, dtype=I32):
    _, iC, H, W = inp.shape
    oC, _, f, _ = weights.shape
    oH, oW = (H - f) // stride + 1, (W - f) // stride + 1
    out = np.zeros((1, oC, oH, oW), dtype=inp.dtype)
    assert lib.loom_sim_use_model(CONV, 0, dtype) == 0
    assert lib.dma_init(0, 66, 65280, 65346, 65280) == 0  # the call of Fig. 15b
    d = Driver(lib, dtype)
    d.send_literal(32)
    d.send_literal(f)   # send_dim(1, 3): filter size
    d.send_literal(16)
    d.send_literal(iC)  # send_dim(0, 1): input channels
    for oc in range(oC):
        d.put_literal(1)
        d.put(weights[oc : oc + 1])  # rank-4 subview [1, iC, f, f]
        d.flush()
        for oh in range(oH):
            for ow in range(oW):
                y, x = oh * stride, ow * stride
                d.put_literal(70)
                d.put(inp[:, :, y : y + f, x : x + f])  # strided rank-4 window
                d.flush()
        d.send_literal(8)
        d.recv(out[:, oc : oc + 1], accumulate=True)
    d.check()
    assert lib.dma_free() == 0, last_error(lib)
    return out


@pytest.mark.parametrize("iC,H,oC,f,stride", [(3, 7, 4, 3, 1), (5, 9, 3, 3, 2), (8, 6, 2, 1, 1), (2, 8, 2, 5, 1)])
def test_conv_layer_int32(lib, iC, H, oC, f, stride):
    rng = np.random.default_rng(iC * H + f)
    inp = random_i32(rng, (1, iC, H, H))
    weights = random_i32(rng, (oC, iC, f, f))
    np.testing.assert_array_equal(run_conv(lib, inp, weights, stride), conv_reference(inp, weights, stride))


def test_conv_layer_float32(lib):
    rng = np.random.default_rng(1)
    inp = rng.integers(-4, 5, size=(1, 4, 6, 6)).astype(np.float32)
    weights = rng.integers(-4, 5, size=(3, 4, 3, 3)).astype(np.float32)
    np.testing.assert_array_equal(run_conv(lib, inp, weights, 1, F32), conv_reference(inp, weights, 1))


def test_conv_combined_parameter_opcode(lib):
    """Opcode 48 sets iC and fHW in one instruction: iC word first, then fHW."""
    rng = np.random.default_rng(2)
    inp, weights = random_i32(rng, (1, 2, 4, 4)), random_i32(rng, (1, 2, 2, 2))
    lib.loom_sim_use_model(CONV, 0, I32)
    lib.dma_init(0, 0, 0, 0, 0)
    d = Driver(lib)
    for word in (48, 2, 2, 1):
        d.put_literal(word)
    d.put(weights[0])
    d.flush()
    for oh in range(3):
        for ow in range(3):
            d.put_literal(70)
            d.put(inp[0, :, oh : oh + 2, ow : ow + 2])
    d.put_literal(8)
    d.flush()  # the whole plane batched into one transaction
    out = np.zeros((3, 3), dtype=np.int32)
    d.recv(out)
    d.check()
    np.testing.assert_array_equal(out, conv_reference(inp, weights, 1)[0, 0])
