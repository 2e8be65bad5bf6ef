"""A compiled model called with its inputs by name (``model(x=..., bias=...)``), as a researcher calls a torch
module's forward: a TypeError before. Names that are not the model's, given twice or missing are LoomErrors naming
them, before any C runs."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402


@pytest.fixture(scope="module")
def model():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Sub", ["y", "bias"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                                           helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 4]),
                                           helper.make_tensor_value_info("bias", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    return loom.models.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_inputs_by_name_in_any_order_and_after_positional_ones(model):
    rng = np.random.default_rng(0)
    x, w, bias = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3), (3, 4), (4,)))
    want = x @ w - bias
    np.testing.assert_allclose(model(bias=bias, w=w, x=x), want, rtol=1e-6)
    np.testing.assert_allclose(model(x, bias=bias, w=w), want, rtol=1e-6)


@pytest.mark.parametrize("args, named, message", [
    (1, {"weights": 0, "bias": 0}, "no input named 'weights'"),
    (2, {"w": 0, "bias": 0}, r"input 1 \(w\) is given both by position and by name"),
    (1, {"bias": 0}, "input\\(s\\) w not given"),
])
def test_wrong_names_are_refused_naming_them(model, args, named, message):
    arrays = [np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32)][:args]
    with pytest.raises(LoomError, match=message):
        model(*arrays, **{k: np.zeros(4, np.float32) for k in named})


def test_an_input_by_name_is_checked_as_a_positional_one(model):
    with pytest.raises(LoomError, match=r"input 2 \(bias\): expected dtype float32, got float64"):
        model(np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32), bias=np.zeros(4))
