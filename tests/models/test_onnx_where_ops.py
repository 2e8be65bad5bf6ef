"""ONNX Greater/Less/GreaterOrEqual/LessOrEqual/Equal feeding Where, and Pow: compared with onnx's
reference evaluator. The comparisons were refused at import; loom computes one inside the Where that
selects with it (or the Cast of it), and builds a bool tensor for any other use."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402

RNG = np.random.default_rng(11)
COMPARISONS = ["Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal"]


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
                              [numpy_helper.from_array(v, k) for k, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check(model, *feeds):
    want = ReferenceEvaluator(model).run(None, {i.name: f for i, f in zip(model.graph.input, feeds)})
    got = loom.models.compile(model)(*feeds)
    got = got if isinstance(got, (list, tuple)) else [got]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_each_comparison_selects_as_the_reference():
    nodes, outputs = [], []
    for k, op in enumerate(COMPARISONS):
        nodes += [helper.make_node(op, ["x", "y"], [f"c{k}"]), helper.make_node("Where", [f"c{k}", "x", "y"], [f"o{k}"])]
        outputs.append(f"o{k}")
    x, y = RNG.standard_normal((2, 3, 4)).astype(np.float32), RNG.standard_normal((3, 1)).astype(np.float32)
    x[0, :, 0] = y[:, 0]  # equal elements
    _check(_model(nodes, [("x", [2, 3, 4]), ("y", [3, 1])], outputs), x, y)


def test_where_with_a_scalar_threshold_and_a_constant_condition():
    mask = np.array([True, False, True, False])
    nodes = [helper.make_node("Greater", ["x", "zero"], ["pos"]),
             helper.make_node("Mul", ["x", "slope"], ["scaled"]),
             helper.make_node("Where", ["pos", "x", "scaled"], ["leaky"]),
             helper.make_node("Where", ["mask", "x", "slope"], ["masked"])]
    inits = [("zero", np.array(0.0, np.float32)), ("slope", np.array(0.1, np.float32)), ("mask", mask)]
    _check(_model(nodes, [("x", [3, 4])], ["leaky", "masked"], inits), RNG.standard_normal((3, 4)).astype(np.float32))


def test_pow_with_a_constant_exponent_matches_the_reference():
    nodes = [helper.make_node("Pow", ["x", "two"], ["sq"]), helper.make_node("Pow", ["two", "x"], ["exp2"])]
    model = _model(nodes, [("x", [3, 5])], ["sq", "exp2"], [("two", np.array(2.0, np.float32))])
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    for g, w in zip(loom.models.compile(model)(x), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_comparison_cast_to_numbers_equals_the_reference():
    """Cast of a comparison was refused (no bool tensors); it is a where selecting 1 or 0."""
    nodes = [helper.make_node("Less", ["x", "y"], ["c"], name="the_less"), helper.make_node("Cast", ["c"], ["f"], to=1),
             helper.make_node("Mul", ["f", "x"], ["out"])]
    x, y = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((2, 3)).astype(np.float32)
    _check(_model(nodes, [("x", [2, 3]), ("y", [2, 3])], ["f", "out"]), x, y)


def test_arithmetic_on_a_comparison_is_refused_naming_the_node():
    nodes = [helper.make_node("Less", ["x", "x"], ["c"], name="the_less"), helper.make_node("Add", ["c", "x"], ["f"])]
    with pytest.raises(LoomError, match=r"\(Add\): add: lt has dtype bool; this op computes in float32"):
        loom.models.compile(_model(nodes, [("x", [2, 2])], ["f"]))
