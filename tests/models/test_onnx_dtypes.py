"""ONNX models with float16, float64, int8, uint8 or int16 inputs and outputs were refused. float64 now computes in
double throughout; float16 and the narrow integers compute in float32 / int32 and each node's result is rounded
(float16, to nearest even) or wrapped back, as onnx's reference computes them with numpy. Checked against
onnx's reference: bit-exact for element-wise nodes and integer wrap-around; float16 composite nodes (softmax, layer
norm, matmul) round once, so they are within 1e-3 (relative to the output's magnitude) of the reference, which rounds
after each of its numpy steps."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(11)


def _model(nodes, inputs: dict, outputs: list, dtype, initializers=()):
    """``inputs``: name -> shape, all of ``dtype``; ``outputs``: names (of ``dtype``) or (name, onnx type)."""
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    outs = [helper.make_tensor_value_info(*(o if isinstance(o, tuple) else (o, t)), None) for o in outputs]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(k, t, v) for k, v in inputs.items()], outs,
                              list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run_both(model, **feeds):
    want = ReferenceEvaluator(model).run(None, feeds)
    got = loom.models.compile(model)(*feeds.values())
    got = list(got) if isinstance(got, tuple) else [got]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    return got, want


ELEMENTWISE = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Mul", ["s", "a"], ["m"]),
               helper.make_node("Div", ["m", "b"], ["d"]), helper.make_node("Exp", ["a"], ["e"]),
               helper.make_node("Sqrt", ["e"], ["q"]), helper.make_node("Sub", ["q", "d"], ["y"]),
               helper.make_node("Relu", ["y"], ["r"]), helper.make_node("Max", ["r", "b"], ["z"])]


def test_float16_element_wise_nodes_equal_the_reference_bit_for_bit():
    model = _model(ELEMENTWISE, {"a": [6, 7], "b": [6, 7]}, ["y", "z"], np.float16)
    a, b = (RNG.standard_normal((2, 6, 7)) * 4).astype(np.float16)
    got, want = _run_both(model, a=a, b=b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # one float32 op rounded to float16 per node, as numpy's half loops
    # computed in float32 and never rounded in between, (a + b) * a / b would differ somewhere
    wide = (a.astype(np.float32) + b) * a / b
    assert not np.array_equal(wide.astype(np.float16), (((a + b) * a) / b))


def test_float16_composite_nodes_round_once():
    """Softmax, layer norm and matmul compute in float32 and round their result once: within half a float16 ulp
    of the exact (float64) value, where onnx's reference, rounding after each numpy step, is up to ~5 ulps off;
    the two then differ by at most 1e-3 of the output's magnitude (the documented tolerance)."""
    nodes = [helper.make_node("Softmax", ["a"], ["p"], axis=-1), helper.make_node("MatMul", ["a", "b"], ["mm"]),
             helper.make_node("LayerNormalization", ["a", "g", "h"], ["ln"], axis=-1, epsilon=1e-3)]
    g, h = np.linspace(0.5, 2, 8).astype(np.float16), np.full(8, 0.25, np.float16)
    inits = [onnx.numpy_helper.from_array(g, "g"), onnx.numpy_helper.from_array(h, "h")]
    model = _model(nodes, {"a": [8, 8], "b": [8, 8]}, ["p", "mm", "ln"], np.float16, inits)
    a, b = (RNG.standard_normal((2, 8, 8)) * 2).astype(np.float16)
    got, want = _run_both(model, a=a, b=b)
    x, y = a.astype(np.float64), b.astype(np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    exact = [e / e.sum(-1, keepdims=True), x @ y, (x - mean) / np.sqrt(var + 1e-3) * g + h]
    for ours, reference, value in zip(got, want, exact):
        ulp = np.spacing(np.abs(value).astype(np.float16)).astype(np.float64)
        assert np.all(np.abs(ours - value) <= 0.5 * ulp * (1 + 1e-3))
        assert np.abs(ours.astype(np.float64) - reference).max() <= 1e-3 * np.abs(reference).max()
    assert not np.array_equal(got[0], want[0])  # the reference's own roundings do show


def test_float64_computes_in_double():
    nodes = [helper.make_node("Add", ["a", "tiny"], ["s"]), helper.make_node("Sub", ["s", "a"], ["y"]),
             helper.make_node("Softmax", ["a"], ["p"]), helper.make_node("MatMul", ["a", "b"], ["mm"]),
             helper.make_node("ReduceSum", ["a"], ["rs"], keepdims=1), helper.make_node("Tanh", ["b"], ["t"])]
    inits = [onnx.numpy_helper.from_array(np.array(1e-12), "tiny")]
    model = _model(nodes, {"a": [5, 5], "b": [5, 5]}, ["y", "p", "mm", "rs", "t"], np.float64, inits)
    a, b = RNG.standard_normal((2, 5, 5))
    got, want = _run_both(model, a=a, b=b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-300)
    assert np.all(np.abs(got[0] - 1e-12) < 1e-15)  # (a + 1e-12) - a: 0 or ~1e-7 in float32


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
def test_narrow_integers_wrap_as_the_reference(dtype):
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Mul", ["s", "a"], ["m"]),
             helper.make_node("Max", ["m", "b"], ["y"]), helper.make_node("Relu", ["y"], ["r"]),
             helper.make_node("Greater", ["a", "b"], ["gt"]),
             helper.make_node("Cast", ["m"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Transpose", ["a"], ["t"]), helper.make_node("Concat", ["a", "m"], ["c"], axis=0)]
    outputs = ["y", "r", ("gt", TensorProto.BOOL), ("f", TensorProto.FLOAT), "t", "c"]
    model = _model(nodes, {"a": [4, 6], "b": [4, 6]}, outputs, dtype)
    info = np.iinfo(dtype)
    a, b = RNG.integers(info.min, info.max, (2, 4, 6), endpoint=True).astype(dtype)
    got, want = _run_both(model, a=a, b=b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    wide = (a.astype(np.int64) + b) * a
    assert np.any((wide < info.min) | (wide > info.max))  # the inputs do overflow: the wrap is exercised


def test_unsupported_dtypes_are_refused_naming_them():
    model = _model([helper.make_node("Add", ["a", "b"], ["y"])], {"a": [2], "b": [2]}, ["y"], np.complex64)
    with pytest.raises(LoomError, match="input 'a' has dtype complex64"):
        loom.models.compile(model)
    model = _model([helper.make_node("Softmax", ["a"], ["y"])], {"a": [2]}, ["y"], np.int8)
    with pytest.raises(LoomError, match=r"\(Softmax\).*int8 inputs compute in int32"):
        loom.models.compile(model)


def test_resize_norm_and_argmax_take_the_new_dtypes():
    """The ops added with these dtypes build their weights in the input's dtype (float64 resizing and norms in
    double; float16 through float32, rounded once per node). (Cubic resizing is left out of the float64 check:
    onnx's reference computes its coefficients with cubic_coeff_a as a numpy float32, so in float32.)"""
    nodes = [helper.make_node("Resize", ["a", "", "s"], ["r"], mode="linear"),
             helper.make_node("LpNormalization", ["a"], ["n"], axis=1, p=2),
             helper.make_node("ArgMax", ["a"], ["i"], axis=1, keepdims=0)]
    for dtype in (np.float64, np.float16):
        inits = [onnx.numpy_helper.from_array(np.array([1, 1, 1.5, 0.5], np.float32), "s")]
        model = _model(nodes, {"a": [1, 2, 4, 6]}, ["r", "n", ("i", TensorProto.INT64)], dtype, inits)
        a = RNG.standard_normal((1, 2, 4, 6)).astype(dtype)
        got, want = _run_both(model, a=a)
        tolerance = 1e-14 if dtype == np.float64 else 1e-3
        for g, w in zip(got[:2], want[:2]):
            assert np.abs(g.astype(np.float64) - w).max() <= tolerance * np.abs(w).max()
        np.testing.assert_array_equal(got[2], want[2])


def test_checked_runs_allow_float16_outputs_their_rounding(tmp_path, capsys):
    """`loom build` / `loom model run --check` compare float16 outputs within 1e-3 (float32 ones within 1e-4)."""
    from loom.build.folder import UnitRecord
    from loom.build.model_unit import _check
    from loom.cli import main

    want = np.full((2, 3), 0.5, np.float16)
    _check(UnitRecord("m", "model"), "m", [want + np.float16(2.5e-4)], "onnx.reference", [want])
    with pytest.raises(LoomError, match="tolerance 0.0001"):
        _check(UnitRecord("m", "model"), "m", [want.astype(np.float32) + 2.5e-4], "onnx.reference",
               [want.astype(np.float32)])
    nodes = [helper.make_node("Softmax", ["a"], ["p"]), helper.make_node("Mul", ["p", "a"], ["y"])]
    onnx.save(_model(nodes, {"a": [4, 16]}, ["y"], np.float16), str(tmp_path / "half.onnx"))
    assert main(["model", "run", str(tmp_path / "half.onnx"), "--check"]) == 0
    assert "tolerance 0.001" in capsys.readouterr().out
