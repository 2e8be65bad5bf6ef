"""ONNX graphs as torch.onnx.export (the TorchScript exporter) writes them for user models: shape
arithmetic on constants is folded whatever its form, and a refused op says what loom imports."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402
from tests.models.helpers import one_node_model  # noqa: E402


def _padded_by_reversed_pads():
    """F.pad(x, (1, 2, 0, 1), value=0.5) as torch.onnx.export writes it: torch's pads (last axis first)
    reversed into ONNX's order by a Slice with step -1 over constants, then Pad."""
    f32, i64 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64
    consts = {"torch_pads": np.array([[1, 2], [0, 1], [0, 0], [0, 0]], np.int64),  # (before, after), last axis first
              "starts": np.array([-1], np.int64), "ends": np.array([-(2 ** 63)], np.int64),
              "axes": np.array([0], np.int64), "steps": np.array([-1], np.int64),
              "flat": np.array([-1], np.int64), "value": np.array(0.5, np.float32)}
    nodes = [helper.make_node("Slice", ["torch_pads", "starts", "ends", "axes", "steps"], ["reversed"]),
             helper.make_node("Transpose", ["reversed"], ["by_side"], perm=[1, 0]),
             helper.make_node("Reshape", ["by_side", "flat"], ["pads"]),
             helper.make_node("Pad", ["x", "pads", "value"], ["y"], mode="constant")]
    graph = helper.make_graph(nodes, "pad", [helper.make_tensor_value_info("x", f32, [1, 2, 3, 4])],
                              [helper.make_tensor_value_info("y", f32, None)],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_negative_step_slice_of_constants_is_folded():
    model = _padded_by_reversed_pads()
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    got = loom.models.compile(model)(x)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert got.shape == want.shape == (1, 2, 4, 7)
    np.testing.assert_array_equal(got, want)


def test_negative_step_slice_of_a_computed_tensor_is_refused():
    model = one_node_model("Slice", {"x": ([4, 3], np.float32)}, ["y"],
                           initializers={"starts": np.array([-1], np.int64), "ends": np.array([-5], np.int64),
                                         "axes": np.array([0], np.int64), "steps": np.array([-1], np.int64)})
    with pytest.raises(LoomError, match=r"\(Slice\): Slice: step -1 is not supported"):
        loom.models.compile(model)


def test_unsupported_op_names_its_node_once_and_lists_what_loom_imports(tmp_path):
    model = one_node_model("Det", {"x": ([2, 3], np.float32)}, ["y"])
    model.graph.node[0].name = "pick"
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    with pytest.raises(LoomError) as info:
        loom.models.compile(str(path))
    message = str(info.value)
    assert message.startswith(f"{path} node 0 'pick' (Det): unsupported ONNX op Det (loom imports: ")
    assert message.count(str(path)) == 1
    assert "Conv, " in message and "Softmax, " in message


@pytest.mark.parametrize("opset, attrs, initializers, outputs", [
    (17, {"axis": 1}, {"split": np.array([2, 5], np.int64)}, 2),    # sizes as an input
    (11, {"axis": -1, "split": [4, 1, 2]}, {}, 3),                  # sizes as an attribute
    (17, {"axis": 0}, {}, 2),                                       # equal parts
    (18, {"axis": 1, "num_outputs": 3}, {}, 3),                     # 3, 3, 1
])
def test_split_matches_onnx_reference(opset, attrs, initializers, outputs):
    """torch.onnx.export writes unbind / split (q, k, v = qkv) as Split; it was refused."""
    names = [f"y{k}" for k in range(outputs)]
    model = one_node_model("Split", {"x": ([4, 7], np.float32)}, names, attrs, initializers, opset=opset)
    x = np.random.default_rng(1).standard_normal((4, 7)).astype(np.float32)
    got = loom.models.compile(model)(x)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    assert len(got) == len(want) == outputs
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_split_sizes_that_do_not_cover_the_axis_are_refused():
    model = one_node_model("Split", {"x": ([4, 7], np.float32)}, ["a", "b"], {"axis": 1},
                           {"split": np.array([2, 4], np.int64)})
    with pytest.raises(LoomError, match=r"\(Split\): Split: split sizes \[2, 4\] must not be negative and must add up "
                                        r"to 7"):
        loom.models.compile(model)


@pytest.mark.parametrize("axis, positions", [(0, 2), (1, -1), (1, [0, 1, 2, 4, 3]), (2, [2, 2])])
def test_gather_of_constant_positions_matches_onnx_reference(axis, positions):
    """x[2], x[:, -1], x[:, [0, 1, 2, 4, 3]]: torch.onnx.export writes indexing of a computed tensor as a
    Gather with constant positions, which was refused unless the data was an embedding table."""
    model = one_node_model("Gather", {"x": ([4, 5, 3], np.float32)}, ["y"], {"axis": axis},
                           {"positions": np.array(positions, np.int64)})
    x = np.random.default_rng(2).standard_normal((4, 5, 3)).astype(np.float32)
    got = loom.models.compile(model)(x)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_gather_positions_out_of_range_are_refused():
    model = one_node_model("Gather", {"x": ([4, 5], np.float32)}, ["y"], {"axis": 1},
                           {"positions": np.array([1, 5], np.int64)})
    with pytest.raises(LoomError, match=r"Gather: positions \[1, 5\] are out of range for axis 1 of size 5"):
        loom.models.compile(model)


def _expand_by_masked_shape():
    """nn.MultiheadAttention's key_padding_mask as torch.onnx.export writes it: an axis modulo the rank (Mod),
    then the expand shape chosen by Equal / Where of constants (-1 means keep). Each was refused or left a
    Where layer where Expand needs a constant shape."""
    const = lambda name, value: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(  # noqa: E731
        np.array(value, np.int64)))
    nodes = [const("axis", -1), const("rank", 3), helper.make_node("Mod", ["axis", "rank"], ["last"]),
             const("dims", [1]), helper.make_node("ConstantOfShape", ["dims"], ["one"],
                                                  value=numpy_helper.from_array(np.array([1], np.int64))),
             const("target", [2, -1, 4]), const("minus", [-1]),
             helper.make_node("Equal", ["target", "minus"], ["keep"]),
             helper.make_node("Add", ["last", "one"], ["three"]),
             helper.make_node("Where", ["keep", "three", "target"], ["shape"]),
             helper.make_node("Expand", ["x", "shape"], ["y"]),
             helper.make_node("Mul", ["y", "y"], ["z"])]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 1])],
                              [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_mod_equal_and_where_of_constants_fold_into_a_shape():
    model = _expand_by_masked_shape()
    x = np.array([[1.5], [-2.0], [0.25]], np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    compiled = loom.models.compile(model)
    np.testing.assert_array_equal(compiled(x), want)
    assert [layer.kind for layer in compiled.graph.layers] == ["expand", "binary"]  # no where, no comparison


def test_mod_of_a_computed_tensor_equals_the_reference():
    """(It was refused: only Mod of constants was supported.)"""
    model = one_node_model("Mod", {"x": ([3], np.int64)}, ["y"], {}, {"d": np.array([2, -3, 4], np.int64)})
    x = np.array([7, 7, -7], np.int64)
    np.testing.assert_array_equal(loom.models.compile(model)(x), ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_arithmetic_on_a_dim_taken_from_a_shape_is_folded():
    """Gather of one dim of Shape then Add: numpy gave a scalar, not an array, and the Add failed as a
    "malformed node" (AttributeError); it folds into the Reshape's shape."""
    const = lambda name, value: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(  # noqa: E731
        np.array(value, np.int64)))
    nodes = [helper.make_node("Shape", ["x"], ["s"]), const("i", 1), helper.make_node("Gather", ["s", "i"], ["d"]),
             const("zero", 0), helper.make_node("Add", ["d", "zero"], ["d2"]), const("ax", [0]),
             helper.make_node("Unsqueeze", ["d2", "ax"], ["u"]), const("rest", [-1]),
             helper.make_node("Concat", ["u", "rest"], ["shape"], axis=0), helper.make_node("Reshape", ["x", "shape"], ["y"]),
             helper.make_node("Relu", ["y"], ["z"])]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(loom.models.compile(model)(x), ReferenceEvaluator(model).run(None, {"x": x})[0])
