"""ONNX nodes whose operands are tensors computed when the model runs, and Dropout's forms, against numpy: Clip
bounds and BatchNormalization statistics from model inputs (refused before: "must be known at import"), Pow of
mixed dtypes (refused: operands must be alike; numpy computes them in float64), Dropout's mask (refused: not
computed) and Dropout in training mode (silently computed as the identity before: now refused)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

from .helpers import one_node_model  # noqa: E402

RNG = np.random.default_rng(3)
F = np.float32


def test_clip_bounds_from_model_inputs():
    model = one_node_model("Clip", {"x": ([3, 4], F), "lo": ([], F), "hi": ([], F)}, ["y"])
    x, lo, hi = RNG.standard_normal((3, 4)).astype(F), np.array(-0.5, F), np.array(0.25, F)
    np.testing.assert_array_equal(loom.models.compile(model)(x, lo, hi), np.clip(x, lo, hi))


def test_batch_norm_with_statistics_from_model_inputs():
    stats = {k: ([3], F) for k in ("scale", "bias", "mean", "var")}
    model = one_node_model("BatchNormalization", {"x": ([2, 3, 4], F), **stats}, ["y"], {"epsilon": 1e-3})
    x = RNG.standard_normal((2, 3, 4)).astype(F)
    scale, bias, mean = (RNG.standard_normal(3).astype(F) for _ in range(3))
    var = RNG.uniform(0.5, 2, 3).astype(F)
    c = (slice(None), None)
    want = (x - mean[c]) / np.sqrt(var[c] + F(1e-3)) * scale[c] + bias[c]
    np.testing.assert_allclose(loom.models.compile(model)(x, scale, bias, mean, var), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("base, exponent", [(F, np.int64), (np.int32, F), (np.int64, np.int64)])
def test_pow_of_mixed_dtypes_is_numpys(base, exponent):
    model = one_node_model("Pow", {"x": ([5], base), "y": ([5], exponent)}, ["z"])
    x, y = np.array([1, 2, 3, 4, 5], base), np.array([3, 0, 2, 1, 2], exponent)
    got = loom.models.compile(model)(x, y)
    want = np.power(x, y).astype(base)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_dropout_in_inference_gives_the_input_and_an_all_true_mask():
    model = one_node_model("Dropout", {"x": ([2, 5], F)}, ["y", "mask"], opset=13)
    x = RNG.standard_normal((2, 5)).astype(F)
    y, mask = loom.models.compile(model)(x)
    np.testing.assert_array_equal(y, x)
    assert mask.dtype == np.bool_ and mask.all() and mask.shape == x.shape


def test_dropout_in_training_mode_is_refused_naming_the_node():
    model = one_node_model("Dropout", {"x": ([2, 5], F)}, ["y"], initializers={"ratio": np.array(0.3, F),
                                                                              "training": np.array(True)}, opset=13)
    with pytest.raises(LoomError, match=r"node 0 .*\(Dropout\).*training_mode=true drops elements at random"):
        loom.models.compile(model)
