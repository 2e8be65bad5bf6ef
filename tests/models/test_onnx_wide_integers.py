"""ONNX models with uint16, uint32 or uint64 inputs and outputs were refused ("input 'x' has dtype uint16"), and int32 /
int64 ones lacked Neg, Abs (and int64 Relu, Pad). uint16 computes in int32 and uint32 in int64 (every value, so
comparisons, divisions and conversions to float are right), each node's result wrapped back, as onnx's reference
computes them with numpy; an ArgMax of them gives int64 positions. uint64 computes in int64 (the same bits), which
the wrapping nodes (Add, Sub, Mul, Sum, Neg, ReduceSum, CumSum, Equal, Where, Pad) compute alike; comparisons and
Max / Min take the bits less 2^63 (ordered as the uint64 values), Div / Mod divide unsigned; any other node taking
uint64 is refused naming it. Checked bit for bit against onnx's reference, with values at the top of each range."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(3)


def _model(nodes, dtype, outputs, initializers=()):
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(k, t, [3, 4]) for k in ("a", "b")],
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
                              list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _operands(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(max(info.min, -1000), 1000, (3, 4)).astype(dtype)
    b = RNG.integers(1, 1000, (3, 4)).astype(dtype)
    a[0, :2] = info.max, info.max - 5  # wraps in Add / Mul, compares above every other value
    b[1, :2] = info.max // 2 + 3, info.min
    return a, b


def _check(model, a, b):
    with np.errstate(divide="ignore"):  # (a zero divisor: 0 in the reference, and in loom)
        want = ReferenceEvaluator(model).run(None, {"a": a, "b": b})
    got = loom.models.compile(model)(a, b)
    got = list(got) if isinstance(got, tuple) else [got]
    for name, g, w in zip([o.name for o in model.graph.output], got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w, err_msg=name)


NODES = [helper.make_node("Add", ["a", "b"], ["add"]), helper.make_node("Sub", ["a", "b"], ["sub"]),
         helper.make_node("Mul", ["a", "b"], ["mul"]), helper.make_node("Max", ["a", "b"], ["max"]),
         helper.make_node("Min", ["a", "b"], ["min"]), helper.make_node("Greater", ["a", "b"], ["gt"]),
         helper.make_node("Where", ["gt", "a", "b"], ["where"]), helper.make_node("Div", ["a", "b"], ["div"]),
         helper.make_node("Cast", ["a"], ["float"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["a"], ["int64"], to=TensorProto.INT64),
         helper.make_node("ReduceSum", ["a"], ["sum"], keepdims=0),
         helper.make_node("ReduceMax", ["a"], ["rmax"], keepdims=0),
         helper.make_node("ArgMax", ["a"], ["argmax"], axis=1), helper.make_node("Neg", ["a"], ["neg"]),
         helper.make_node("Abs", ["a"], ["abs"]), helper.make_node("Relu", ["a"], ["relu"]),
         helper.make_node("Pad", ["a", "pads"], ["pad"]), helper.make_node("Concat", ["a", "b"], ["cat"], axis=0),
         helper.make_node("Transpose", ["add"], ["t"]), helper.make_node("CumSum", ["a", "axis"], ["cumsum"])]
CONSTANTS = [numpy_helper.from_array(np.array([0, 1, 0, 2], np.int64), "pads"),
             numpy_helper.from_array(np.array(1, np.int64), "axis")]


def _renamed(node, suffix: str, keep=("pads", "axis")):
    """``node`` reading and writing names with ``suffix`` (constants shared)."""
    rename = (lambda name: name if name in keep else name + suffix)
    return helper.make_node(node.op_type, [rename(i) for i in node.input], [rename(o) for o in node.output],
                            **{a.name: helper.get_attribute_value(a) for a in node.attribute})


def test_wide_and_unsigned_integer_models_equal_the_reference():
    nodes, inputs, feeds = [], [], {}
    for dtype in (np.uint16, np.uint32, np.int32, np.int64):
        suffix = f"_{np.dtype(dtype).name}"
        nodes += [_renamed(n, suffix) for n in NODES
                  if not (np.dtype(dtype).kind == "u" and n.op_type in ("Neg", "Abs", "Relu"))]
        t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        inputs += [helper.make_tensor_value_info(k + suffix, t, [3, 4]) for k in ("a", "b")]
        feeds["a" + suffix], feeds["b" + suffix] = _operands(dtype)
    outputs = [o for n in nodes for o in n.output]
    graph = helper.make_graph(nodes, "m", inputs, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                                                   for o in outputs], CONSTANTS)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with np.errstate(divide="ignore"):  # (a zero divisor: 0 in the reference, and in loom)
        want = ReferenceEvaluator(model).run(None, feeds)
    got = loom.models.compile(model)(*feeds.values())
    for name, g, w in zip(outputs, got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w, err_msg=name)


def test_uint64_computes_the_wrapping_and_ordered_nodes_and_refuses_the_others_naming_them():
    """Wrapping nodes compute on the int64 bits; comparisons and Max / Min on the bits less 2^63 (ordered as the uint64
    values); Div / Mod as unsigned divisions; values from 2^63 on (int64's negative numbers) check all three."""
    kept = [n for n in NODES if n.op_type in ("Add", "Sub", "Mul", "Pad", "Concat", "Transpose", "CumSum",
                                              "ReduceSum", "Cast", "Greater", "Where", "Max", "Min", "Div")]
    kept += [helper.make_node("Equal", ["a", "b"], ["eq"]), helper.make_node("Where", ["eq", "a", "b"], ["w"]),
             helper.make_node("LessOrEqual", ["a", "b"], ["le"]), helper.make_node("Mod", ["a", "b"], ["mod"])]
    a, b = _operands(np.uint64)
    a[2, :2], b[2, :3] = (2**63, 2**63 + 7), (2**63 + 1, 2**63 + 7, 2**64 - 1)  # int64's negative numbers
    b[0, 3] = 0  # a zero divisor gives 0, as the reference
    _check(_model(kept, np.uint64, [n.output[0] for n in kept], CONSTANTS), a, b)
    for op in ("ReduceMax", "ArgMax", "Relu"):
        node = next(n for n in NODES if n.op_type == op)
        node = helper.make_node(op, list(node.input), list(node.output), name="n1", **{
            a.name: helper.get_attribute_value(a) for a in node.attribute})
        model = _model([helper.make_node("Add", ["a", "b"], ["s"]), node], np.uint64, list(node.output))
        with pytest.raises(LoomError, match=rf"node 1 'n1' \({op}\).*uint64 input 0 is computed in int64"):
            loom.models.compile(model)
