"""Outputs of a compiled model belong to the caller: one that is a constant of the model is a copy."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

import loom.models  # noqa: E402


def test_writing_to_an_output_that_is_a_constant_leaves_the_model_unchanged():
    """A model returning a weight as it is: the caller's array was the model's own constant, so
    writing to it changed every later result."""
    add, f32 = helper.make_node("Add", ["x", "w"], ["y"]), onnx.TensorProto.FLOAT
    graph = helper.make_graph([add, helper.make_node("Identity", ["w"], ["w_out"])], "weights",
                              [helper.make_tensor_value_info("x", f32, [2, 3])],
                              [helper.make_tensor_value_info(n, f32, None) for n in ("w_out", "y")],
                              [numpy_helper.from_array(np.ones(3, np.float32), "w")])
    compiled = loom.models.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x = np.zeros((2, 3), np.float32)
    weights, _ = compiled(x)
    weights += 100
    weights, y = compiled(x)
    np.testing.assert_array_equal(weights, np.ones(3, np.float32))
    np.testing.assert_array_equal(y, np.ones((2, 3), np.float32))
