"""Quantized ONNX models a researcher writes with onnx.helper, each compared with onnx's reference evaluator: an
int8 QDQ MLP (per-channel int8 weights dequantized, activations quantized to uint8 between layers), the
dynamically quantized form onnxruntime's quantize_dynamic writes (DynamicQuantizeLinear -> MatMulInteger -> Cast ->
Mul), and a QOperator CNN (QLinearConv -> QLinearMatMul with int32 bias). Every node was refused before
(QuantizeLinear and the others were not imported). Integer outputs must be equal; float ones within 1e-5."""

from __future__ import annotations

import re

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(7)


def _model(nodes, inputs, outputs, inits, opset=21):
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, *inputs):
    want = ReferenceEvaluator(model).run(None, {i.name: v for i, v in zip(model.graph.input, inputs)})
    got = loom.models.compile(model)(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert w.size < 4 or len(np.unique(w)) > 3  # (not a saturated or constant output)
        if w.dtype.kind in "iu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6 * float(np.abs(w).max()))


def _int8_weight(rows, cols):
    """A float weight quantized per output column (symmetric int8), as quantization tools store it."""
    w = RNG.standard_normal((rows, cols)).astype(np.float32)
    scale = (np.abs(w).max(axis=0) / 127).astype(np.float32)
    return np.clip(np.rint(w / scale), -127, 127).astype(np.int8), scale


def test_qdq_mlp_with_per_channel_int8_weights_equals_the_reference():
    w1, s1 = _int8_weight(16, 32)
    w2, s2 = _int8_weight(32, 10)
    inits = {"w1": w1, "s1": s1, "w2": w2, "s2": s2, "b1": RNG.standard_normal(32).astype(np.float32),
             "a_scale": np.float32(0.05), "a_zero": np.uint8(128), "h_scale": np.float32(0.04),
             "h_zero": np.uint8(0), "zero8": np.zeros(32, np.int8), "zero8b": np.zeros(10, np.int8)}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "a_scale", "a_zero"], ["xq"], name="quant_in"),
        helper.make_node("DequantizeLinear", ["xq", "a_scale", "a_zero"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w1", "s1", "zero8"], ["w1d"], axis=1),
        helper.make_node("MatMul", ["xd", "w1d"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Relu", ["hb"], ["hr"]),
        helper.make_node("QuantizeLinear", ["hr", "h_scale", "h_zero"], ["hq"]),
        helper.make_node("DequantizeLinear", ["hq", "h_scale", "h_zero"], ["hd"]),
        helper.make_node("DequantizeLinear", ["w2", "s2", "zero8b"], ["w2d"], axis=1),
        helper.make_node("MatMul", ["hd", "w2d"], ["y"]),
    ]
    model = _model(nodes, [("x", TensorProto.FLOAT, [4, 16])], [("y", TensorProto.FLOAT), ("hq", TensorProto.UINT8)],
                   inits)
    _check(model, RNG.standard_normal((4, 16)).astype(np.float32) * 3)


def test_dynamically_quantized_linear_layer_equals_the_reference():
    w, _ = _int8_weight(24, 12)
    w_u8 = (w.astype(np.int16) + 128).astype(np.uint8)  # quantize_dynamic's default: uint8 weights, zero point 128
    inits = {"w": w_u8, "w_zero": np.uint8(128), "w_scale": np.float32(0.02), "bias": np.linspace(-1, 1, 12,
                                                                                                   dtype=np.float32)}
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "x_scale", "x_zero"]),
        helper.make_node("MatMulInteger", ["xq", "w", "x_zero", "w_zero"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x_scale", "w_scale"], ["scale"]),
        helper.make_node("Mul", ["accf", "scale"], ["y0"]),
        helper.make_node("Add", ["y0", "bias"], ["y"]),
    ]
    model = _model(nodes, [("x", TensorProto.FLOAT, [3, 5, 24])],
                   [("y", TensorProto.FLOAT), ("acc", TensorProto.INT32), ("x_zero", TensorProto.UINT8)], inits)
    _check(model, RNG.standard_normal((3, 5, 24)).astype(np.float32))


def test_qoperator_cnn_equals_the_reference():
    wc = RNG.integers(-100, 100, (6, 3, 3, 3), dtype=np.int8)
    wf = RNG.integers(-100, 100, (6 * 3 * 3, 5), dtype=np.int8)
    inits = {"x_scale": np.float32(0.1), "x_zero": np.uint8(120), "wc": wc,
             "wc_scale": np.linspace(0.001, 0.004, 6, dtype=np.float32), "wc_zero": np.zeros(6, np.int8),
             "c_scale": np.float32(0.05), "c_zero": np.uint8(10), "bc": RNG.integers(-500, 500, 6, dtype=np.int32),
             "wf": wf, "wf_scale": np.float32(0.003), "wf_zero": np.int8(0), "y_scale": np.float32(0.2),
             "y_zero": np.uint8(100), "shape": np.array([2, -1], np.int64)}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "x_scale", "x_zero", "wc", "wc_scale", "wc_zero", "c_scale", "c_zero",
                                         "bc"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shape"], ["flat"]),
        helper.make_node("QLinearMatMul", ["flat", "c_scale", "c_zero", "wf", "wf_scale", "wf_zero", "y_scale",
                                           "y_zero"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["y"]),
    ]
    model = _model(nodes, [("x", TensorProto.FLOAT, [2, 3, 12, 12])], [("y", TensorProto.FLOAT),
                                                                        ("yq", TensorProto.UINT8)], inits)
    _check(model, RNG.standard_normal((2, 3, 12, 12)).astype(np.float32) * 4)


@pytest.mark.parametrize("scale, message", [
    (np.ones(5, np.float32), "one per index of axis 1 (4)"),
    (np.ones((2, 2), np.float32), "has shape [2, 2]"),
])
def test_a_scale_that_does_not_fit_the_axis_is_refused_naming_the_node(scale, message):
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q_in", axis=1)]
    model = _model(nodes, [("x", TensorProto.FLOAT, [3, 4])], [("y", TensorProto.UINT8)], {"s": scale})
    with pytest.raises(LoomError, match=r"node 0 'q_in' \(QuantizeLinear\).*" + re.escape(message)):
        loom.models.compile(model)
