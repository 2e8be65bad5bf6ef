"""Floats converted to integers (ONNX Cast, torch's .long() / .int(): bucketing, quantisation, index arithmetic),
sin / cos (sinusoidal position and timestep embeddings), IsNaN / IsInf were refused. A float to int32 / int64
truncates; NaN and values out of range, undefined in C, give MIN (x86's answer, which numpy and PyTorch give here);
8 / 16-bit integers go through int32 and wrap, as numpy does. Checked against onnx's reference and torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402

VALUES = [300.7, -1e10, float("nan"), 1e10, -2.5, 2.9, 2**31, -2**31, 2**63, -129.5, float("inf"), 0.0]


def test_onnx_float_to_integer_casts_and_tests_equal_the_reference():
    targets = [TensorProto.INT32, TensorProto.INT64, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16,
               TensorProto.UINT16]
    nodes = [helper.make_node("Cast", ["x"], [f"c{k}"], to=t) for k, t in enumerate(targets)]
    nodes += [helper.make_node("Cast", ["h"], ["h32"], to=TensorProto.INT32),
              helper.make_node("IsNaN", ["x"], ["nan"]), helper.make_node("IsInf", ["x"], ["inf"]),
              helper.make_node("IsInf", ["x"], ["neg_inf"], detect_positive=0),
              helper.make_node("Sin", ["x"], ["sin"]), helper.make_node("Cos", ["x"], ["cos"])]
    outputs = [o for n in nodes for o in n.output]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(VALUES)]),
                                           helper.make_tensor_value_info("h", TensorProto.FLOAT16, [4])],
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.array(VALUES, np.float32)
    x[-1] = -float("inf")
    h = np.array([70000, -3.7, 65504, np.nan], np.float16)
    with np.errstate(invalid="ignore"):
        want = ReferenceEvaluator(model).run(None, {"x": x, "h": h})
    got = loom.models.compile(model)(x, h)
    for name, g, w in zip(outputs, got, want):
        assert g.dtype == w.dtype, name
        if name in ("sin", "cos"):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)


def test_torch_sinusoidal_embedding_equals_torch():
    torch = pytest.importorskip("torch")

    class Timesteps(torch.nn.Module):
        def forward(self, t):
            freqs = torch.exp(-math.log(10000) * torch.arange(8, dtype=torch.float32) / 8)
            args = t[:, None].float() * freqs[None]
            return torch.cat([torch.sin(args), torch.cos(args)], -1), torch.isnan(args).any()

    t = torch.tensor([0, 5, 100, 999])
    got = loom.models.compile(Timesteps(), (t,))(t.numpy())
    for g, w in zip(got, Timesteps()(t)):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-6, atol=1e-6)
