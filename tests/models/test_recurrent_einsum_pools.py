"""torch.onnx's nn.LSTM / nn.GRU (ONNX LSTM and GRU ops), ONNX Einsum (torch.onnx writes torch.einsum as it is) and
adaptive pooling to sizes that do not divide the input (F.adaptive_avg_pool2d / adaptive_max_pool2d / 1d) were
refused. LSTM / GRU are unrolled over the static sequence (one matrix product projects every step's input), Einsum is
transposes, sums and batched matrix products, and adaptive pools are separable taps over PyTorch's windows. Checked
against torch and onnx's reference evaluator."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402


def _onnx(module, *args):
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, f, dynamo=False, opset_version=17)
    return onnx.load_from_string(f.getvalue())


class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(5, 6, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = torch.nn.GRU(12, 4)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        z, g = self.gru(y)
        return z, h, c, g


def test_onnx_lstm_and_gru_equal_torch_and_the_reference():
    torch.manual_seed(3)
    module, x = Recurrent().eval(), torch.randn(2, 4, 5)
    model = _onnx(module, x)
    assert [n.op_type for n in model.graph.node if n.op_type in ("LSTM", "GRU")] == ["LSTM", "LSTM", "GRU"]
    got = loom.models.compile(model)(x.numpy())
    with torch.no_grad():
        want = module(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
    # torch writes linear_before_reset=1; the other GRU form against the reference
    gru = next(n for n in model.graph.node if n.op_type == "GRU")
    next(a for a in gru.attribute if a.name == "linear_before_reset").i = 0
    feeds = {model.graph.input[0].name: x.numpy()}
    for g, w in zip(loom.models.compile(model)(x.numpy()), ReferenceEvaluator(model).run(None, feeds)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    gru.attribute.append(helper.make_attribute("clip", 1.0))
    gru.name = "gru"
    with pytest.raises(LoomError, match=r"'gru' \(GRU\).*the clip attribute is not supported"):
        loom.models.compile(model)


class Einsums(torch.nn.Module):
    def forward(self, q, k):
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(-1)
        return torch.einsum("bhqk,bhkd->bqhd", scores, k), torch.einsum("bhqd->bd", q)


class AdaptivePools(torch.nn.Module):  # (torch.onnx cannot export sizes that do not divide the input)
    def forward(self, x):
        f = torch.nn.functional
        return f.adaptive_avg_pool2d(x, (3, 4)), f.adaptive_max_pool2d(x, (4, 3)), f.adaptive_avg_pool1d(x[0], 4)


def test_einsum_equals_torch_both_ways_and_adaptive_pools_equal_torch():
    torch.manual_seed(4)
    q, k, x = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 6, 4), torch.randn(1, 3, 7, 9)
    with torch.no_grad():
        want = Einsums()(q, k)
    model = _onnx(Einsums(), q, k)
    assert "Einsum" in [n.op_type for n in model.graph.node]
    for got in (loom.models.compile(Einsums(), (q, k))(q.numpy(), k.numpy()),
                loom.models.compile(model)(q.numpy(), k.numpy())):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
    for g, w in zip(loom.models.compile(AdaptivePools(), (x,))(x.numpy()), AdaptivePools()(x)):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
