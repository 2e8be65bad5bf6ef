"""torch.sign / ONNX Sign, torch.flip and clamp with tensor bounds were refused as unsupported ops; each is now built
from loom's layers (two selects; a take of reversed positions per axis; max then min with the bounds broadcast)
and checked against torch's output and onnx's reference, NaN and -0 included."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import loom.models  # noqa: E402

from tests.models.helpers import one_node_model  # noqa: E402


class SignFlipClamp(torch.nn.Module):
    def forward(self, x, lo, hi):
        return torch.flip(torch.clamp(x, lo, hi), [1, -1]) + torch.sign(x) * 2


def _edges():
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
    x[0, 0, 0], x[0, 0, 1], x[1, 2, 3], x[1, 0, 0] = float("nan"), -0.0, 0.0, float("-inf")
    return x


def test_sign_flip_and_tensor_clamp_equal_torch():
    x, lo, hi = _edges(), torch.full((3, 4), -0.5), torch.full((2, 1, 4), 0.7)
    model = SignFlipClamp()
    got = loom.models.compile(model, (x, lo, hi))(x.numpy(), lo.numpy(), hi.numpy())
    want = model(x, lo, hi).numpy()
    np.testing.assert_array_equal(got, want)  # NaN where torch's is, equal elsewhere (no rounding involved)
    assert np.isnan(want).any() and not np.array_equal(want, np.flip(want, 1))


def test_sign_of_integers_equals_torch():
    class IntSign(torch.nn.Module):
        def forward(self, i):
            return torch.sign(i) * 3 + torch.flip(i, [0])

    i = torch.tensor([[-5, 0, 7], [3, -1, 0]], dtype=torch.int64)
    got = loom.models.compile(IntSign(), (i,))(i.numpy())
    np.testing.assert_array_equal(got, IntSign()(i).numpy())


def test_onnx_sign_equals_the_reference():
    pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    x = np.array([[np.nan, -0.0, 0.0, -3.5], [2.0, -np.inf, np.inf, 1e-30]], np.float32)
    model = one_node_model("Sign", {"x": ([2, 4], np.float32)}, ["y"], {})
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = loom.models.compile(model)(x)
    np.testing.assert_array_equal(got, want)  # a NaN stays NaN in ONNX's Sign (torch.sign gives 0)
    assert np.isnan(got[0, 0])
