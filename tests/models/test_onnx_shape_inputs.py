"""A shape, a Range's bounds or a fill's shape given as a model input (a Reshape whose shape is a graph input) was
refused. With example inputs loom compiles for the example's value of such an input and refuses another value when
the model runs, naming the input; without them the refusal names the input and says to give one. Checked against
onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402


def _model():
    n = helper.make_node
    nodes = [n("Reshape", ["x", "shape"], ["r"], name="reshape"), n("Relu", ["r"], ["y"]),
             n("Range", ["zero", "count", "one"], ["steps"]), n("Cast", ["steps"], ["f"], to=TensorProto.FLOAT),
             n("Add", ["y", "f"], ["z"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
              helper.make_tensor_value_info("count", TensorProto.INT64, [])]
    inits = [helper.make_tensor("zero", TensorProto.INT64, [], [0]), helper.make_tensor("one", TensorProto.INT64, [],
                                                                                        [1])]
    graph = helper.make_graph(nodes, "m", inputs, [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_shape_inputs_take_the_examples_value_and_other_values_are_refused():
    model = _model()
    x, shape, count = np.arange(-2, 4, dtype=np.float32).reshape(2, 3), np.array([3, -1]), np.array(2)
    with pytest.raises(LoomError, match=r"'reshape' \(Reshape\).*it is the model input 'shape'.*give example inputs "
                                        r"holding its value"):
        loom.models.compile(model)
    compiled = loom.models.compile(model, [x, shape, count])
    want = ReferenceEvaluator(model).run(None, {"x": x, "shape": shape, "count": count})[0]
    np.testing.assert_array_equal(compiled(x, shape, count), want)
    np.testing.assert_array_equal(compiled(x * 2, shape, count), np.maximum(x * 2, 0).reshape(3, 2) + [0, 1])
    with pytest.raises(LoomError, match=r"input 1 \(shape\).*compiled for this input's example value \[3, -1\].*"
                                        r"got \[2, 3\]"):
        compiled(x, np.array([2, 3]), count)
