"""Resize whose scales or sizes exporters compute from shapes (Shape -> Gather -> Cast -> Mul -> Floor -> Cast ->
Unsqueeze -> Concat, torch.onnx's recompute_scale_factor and dynamic axes): folded at import when the input shapes
are static. Floor (and Ceil, Round) were unsupported ops, so torch.onnx's F.interpolate(scale_factor=1.5,
recompute_scale_factor=True) was refused at every opset. Sizes that depend on the input's values are refused naming
the Resize node and the node computing them. Checked against onnx's reference evaluator and torch."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(8)


def _const(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, dtype)))


def _sizes_from_shape(scale: float, rounding: str):
    """sizes = concat(shape[:2], rounding(float(shape[2:]) * scale)) as tf2onnx / torch.onnx write it."""
    return [helper.make_node("Shape", ["x"], ["shape"]), _const("lead", [0, 1]), _const("tail", [2, 3]),
            helper.make_node("Gather", ["shape", "lead"], ["nc"]),
            helper.make_node("Gather", ["shape", "tail"], ["hw"]),
            helper.make_node("Cast", ["hw"], ["hwf"], to=TensorProto.FLOAT), _const("scale", scale, np.float32),
            helper.make_node("Mul", ["hwf", "scale"], ["scaled"]), helper.make_node(rounding, ["scaled"], ["rounded"]),
            helper.make_node("Cast", ["rounded"], ["hw2"], to=TensorProto.INT64),
            helper.make_node("Concat", ["nc", "hw2"], ["sizes"], axis=0)]


def _model(nodes, inputs, opset=17):
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(k, t, s) for k, (t, s) in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_sizes_computed_from_the_shape_are_folded():
    nodes, outputs = [], []
    for rounding, mode in (("Floor", "nearest"), ("Ceil", "linear"), ("Round", "cubic")):
        part = _sizes_from_shape(1.5, rounding) + [
            helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="up", mode=mode)]
        nodes += [helper.make_node(n.op_type, list(n.input), [f"{o}_{rounding}" for o in n.output], **{
            a.name: helper.get_attribute_value(a) for a in n.attribute}) for n in part]
        for n in nodes[-len(part):]:  # (inputs renamed alike, x kept)
            n.input[:] = [i if i in ("x", "") else f"{i}_{rounding}" for i in n.input]
        outputs.append(f"y_{rounding}")
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 7])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = RNG.standard_normal((1, 2, 5, 7)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    got = loom.models.compile(model)(x)
    for g, w, size in zip(got, want, [(7, 10), (8, 11), (8, 10)]):  # floor / ceil / round of 5 and 7 by 1.5
        assert g.shape == w.shape == (1, 2, *size)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_scales_divided_from_a_second_inputs_shape_are_folded():
    """scales = float(shape(y)) / float(shape(x)): F.interpolate(x, size=y.shape[-2:]) in some exporters."""
    nodes = [helper.make_node("Shape", ["x"], ["sx"]), helper.make_node("Shape", ["skip"], ["sy"]),
             helper.make_node("Cast", ["sx"], ["fx"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["sy"], ["fy"], to=TensorProto.FLOAT),
             helper.make_node("Div", ["fy", "fx"], ["scales"]),
             helper.make_node("Resize", ["x", "", "scales"], ["up"], mode="linear"),
             helper.make_node("Add", ["up", "skip"], ["y"])]
    model = _model(nodes, {"x": (TensorProto.FLOAT, [1, 3, 4, 5]), "skip": (TensorProto.FLOAT, [1, 3, 8, 10])})
    x = RNG.standard_normal((1, 3, 4, 5)).astype(np.float32)
    skip = RNG.standard_normal((1, 3, 8, 10)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x, "skip": skip})[0]
    np.testing.assert_allclose(loom.models.compile(model)(x, skip), want, rtol=1e-5, atol=1e-5)


def test_sizes_from_the_input_values_are_refused_naming_both_nodes():
    nodes = [helper.make_node("ReduceMax", ["n"], ["m"], name="largest", keepdims=1),
             helper.make_node("Concat", ["m", "m", "m", "m"], ["sizes"], name="cat", axis=0),
             helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="up")]
    model = _model(nodes, {"x": (TensorProto.FLOAT, [1, 1, 2, 2]), "n": (TensorProto.INT64, [3])})
    with pytest.raises(LoomError, match=r"node 2 'up' \(Resize\).*sizes \(input 3\) must be known at import.*"
                                        r"computed at run time by node 1 'cat' \(Concat\)"):
        loom.models.compile(model)


def test_floor_ceil_round_of_tensors_equal_the_reference():
    nodes = [helper.make_node(op, ["x"], [op.lower()]) for op in ("Floor", "Ceil", "Round")]
    nodes += [helper.make_node("Sum", ["floor", "ceil", "round"], ["y"])]
    model = _model(nodes, {"x": (TensorProto.FLOAT, [4, 6])})
    x = np.concatenate([np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], np.float32)[None],
                        (RNG.standard_normal((3, 6)) * 5).astype(np.float32)])
    np.testing.assert_array_equal(loom.models.compile(model)(x), ReferenceEvaluator(model).run(None, {"x": x})[0])


torch = pytest.importorskip("torch")


class Upscale(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.interpolate(x, scale_factor=1.5, mode="nearest", recompute_scale_factor=True)


@pytest.mark.parametrize("opset, dynamic", [(11, False), (17, True)])
def test_torch_onnx_recompute_scale_factor_equals_torch(opset, dynamic):
    x = torch.randn(1, 2, 6, 5)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Upscale(), (x,), f, dynamo=False, opset_version=opset, input_names=["x"],
                          dynamic_axes={"x": {2: "h", 3: "w"}} if dynamic else None)
    model = onnx.load_from_string(f.getvalue())
    assert "Floor" in [n.op_type for n in model.graph.node]
    got = loom.models.compile(model, (x.numpy(),))(x.numpy())
    np.testing.assert_array_equal(got, Upscale()(x).numpy())


def test_torch_floor_ceil_round_trunc_of_tensors_equal_torch():
    class Rounding(torch.nn.Module):
        def forward(self, x):
            return torch.floor(x) + torch.ceil(x) * 2 + torch.round(x) * 4 + torch.trunc(x) * 8

    x = torch.tensor([[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.7]])
    got = loom.models.compile(Rounding(), (x,))(x.numpy())
    np.testing.assert_array_equal(got, Rounding()(x).numpy())
