"""Acceptance: the Conv2D accelerator (output stationary) on the 11 distinct conv layer shapes of
ResNet18 (batch 1, 224x224 input, padding applied beforehand), against a numpy reference, with the
transfer counts of the host protocol derived by hand."""

import functools

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import conv_module, desc

from loom.driver.compile import compile_driver

# (in channels, out channels, input size before padding, filter, stride, padding)
RESNET18 = [
    (3, 64, 224, 7, 2, 3),     # conv1
    (64, 64, 56, 3, 1, 1),     # layer1
    (64, 128, 56, 3, 2, 1),    # layer2.0.conv1
    (64, 128, 56, 1, 2, 0),    # layer2.0.downsample
    (128, 128, 28, 3, 1, 1),   # layer2 conv2 / layer2.1
    (128, 256, 28, 3, 2, 1),   # layer3.0.conv1
    (128, 256, 28, 1, 2, 0),   # layer3.0.downsample
    (256, 256, 14, 3, 1, 1),   # layer3
    (256, 512, 14, 3, 2, 1),   # layer4.0.conv1
    (256, 512, 14, 1, 2, 0),   # layer4.0.downsample
    (512, 512, 7, 3, 1, 1),    # layer4
]


@functools.cache
def driver(stride):
    return compile_driver(conv_module(stride), desc("conv2d.json"), "conv_os", "Os")


def reference(I, W, O, stride):
    """O + conv2d(I, W) by explicit shifted-window sums in float64 (exact for small integers)."""
    f, c, r, _ = W.shape
    oh, ow = O.shape[2:]
    out = O[0].astype(np.float64)
    Wf = W.astype(np.float64)
    for y in range(r):
        for x in range(r):
            window = I[0, :, y:y + stride * (oh - 1) + 1:stride, x:x + stride * (ow - 1) + 1:stride]
            out += np.tensordot(Wf[:, :, y, x], window.astype(np.float64), axes=([1], [0]))
    return out[None]


def layer_arrays(ic, oc, size, f, stride, pad, seed=0):
    rng = np.random.default_rng(seed)
    H = size + 2 * pad
    o = (H - f) // stride + 1
    I = rng.integers(-4, 4, size=(1, ic, H, H)).astype(np.int32)
    W = rng.integers(-4, 4, size=(oc, ic, f, f)).astype(np.int32)
    O = rng.integers(-4, 4, size=(1, oc, o, o)).astype(np.int32)
    return I, W, O, o


@pytest.mark.parametrize("layer", RESNET18, ids=lambda l: "ic%d_oc%d_%d_f%d_s%d" % l[:5])
def test_resnet18_layer(layer):
    ic, oc, size, f, stride, pad = layer
    I, W, O, o = layer_arrays(*layer)
    expected = reference(I, W, O, stride)
    t = driver(stride)(I, W, O).transfers
    assert np.array_equal(O, expected.astype(np.int32))
    # host protocol: (32, fHW) and (16, iC) once; per output channel 1 + filter slice, one
    # 70 + window per output pixel, then 8; one receive of the o x o plane per output channel
    assert t.sends == 2 + oc * (1 + o * o + 1) and t.recvs == oc
    assert t.operand_words_sent == {"I": oc * o * o * ic * f * f, "W": oc * ic * f * f}
    assert t.operand_words_received == {"O": oc * o * o}
    assert t.words_sent == 4 + oc * (1 + ic * f * f + o * o * (1 + ic * f * f) + 1)


@pytest.mark.sanitize
@pytest.mark.parametrize("layer", [(3, 8, 20, 7, 2, 3), (8, 4, 9, 3, 1, 1), (6, 5, 10, 1, 2, 0)])
def test_small_conv_layers(layer):
    """A small subset for the ASan/UBSan session (also runs in the normal one)."""
    I, W, O, o = layer_arrays(*layer, seed=5)
    expected = reference(I, W, O, layer[4])
    compile_driver(conv_module(layer[4]), desc("conv2d.json"))(I, W, O)
    assert np.array_equal(O, expected.astype(np.int32))
