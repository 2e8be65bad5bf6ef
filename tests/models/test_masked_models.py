"""A small model mixing the ops a sequence model uses on padded batches: a bool padding mask input, ELU,
softplus, 1-d nearest upsampling, masked_fill with ~mask, a mask counted for a masked mean, a mask output.
Through torch.export and through torch.onnx.export, each checked against its own reference."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn, F = torch.nn, torch.nn.functional

import loom.models  # noqa: E402


class MaskedAudio(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.bn = nn.Conv1d(4, 8, 5, padding=2), nn.BatchNorm1d(8)
        self.c2, self.head = nn.Conv1d(8, 8, 3, padding=1), nn.Linear(16, 3)

    def forward(self, x, mask):  # x (N, C, L), mask (N, L): True at valid steps
        h = F.elu(self.bn(self.c1(x)))
        u = F.interpolate(F.softplus(self.c2(F.max_pool1d(h, 2))), scale_factor=2, mode="nearest")
        y = torch.cat([h, u], 1).masked_fill(~mask[:, None, :], 0.0)
        pooled = y.sum(-1) / mask.sum(-1, keepdim=True)
        return self.head(pooled), mask & (x[:, 0] > 0)


def _inputs():
    torch.manual_seed(2)
    x, mask = torch.randn(2, 4, 16), torch.ones(2, 16, dtype=torch.bool)
    mask[1, 11:] = False
    return x, mask


def _check(got, want):
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    assert got[1].dtype == np.bool_
    np.testing.assert_array_equal(got[1], want[1])


def test_masked_model_equals_torch():
    model, (x, mask) = MaskedAudio().eval(), _inputs()
    got = loom.models.compile(model, (x, mask))(x.numpy(), mask.numpy())
    with torch.no_grad():
        _check(got, [t.numpy() for t in model(x, mask)])


def test_masked_model_exported_to_onnx_equals_the_reference():
    pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    model, (x, mask) = MaskedAudio().eval(), _inputs()
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x, mask), buffer, dynamo=False, opset_version=17)
    import onnx

    proto = onnx.load_from_string(buffer.getvalue())
    reference = ReferenceEvaluator(proto)
    want = reference.run(None, dict(zip(reference.input_names, (x.numpy(), mask.numpy()))))
    _check(loom.models.compile(proto)(x.numpy(), mask.numpy()), want)
