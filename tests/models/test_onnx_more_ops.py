"""ONNX ops a researcher's exported models use that were refused as unsupported: Celu, Mish, Shrink, Trilu (a causal
mask), DepthToSpace / SpaceToDepth (pixel shuffle), Tile, CastLike, Size, Range (of constants), ReduceL1 / L2 /
SumSquare / LogSum / LogSumExp / Prod (F.normalize exports ReduceL2), and LayerNormalization's Mean / InvStdDev
outputs. All are built from existing layers (or folded for constants); checked against onnx's reference evaluator in
one model."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402


def _const(name, value, dtype=np.int64):
    return numpy_helper.from_array(np.array(value, dtype), name)


def test_more_ops_equal_the_reference():
    n = helper.make_node
    nodes = [n("Celu", ["x"], ["celu"], alpha=0.7), n("Mish", ["x"], ["mish"]),
             n("Shrink", ["x"], ["shrink"], lambd=0.4, bias=0.1), n("Trilu", ["x", "k"], ["triu"]),
             n("Trilu", ["x"], ["tril"], upper=0), n("DepthToSpace", ["x"], ["d2s"], blocksize=2),
             n("DepthToSpace", ["x"], ["d2s_crd"], blocksize=2, mode="CRD"),
             n("SpaceToDepth", ["x"], ["s2d"], blocksize=2), n("Tile", ["x", "reps"], ["tile"]),
             n("Size", ["x"], ["size"]), n("CastLike", ["size", "x"], ["size_f"]),
             n("Mul", ["x", "size_f"], ["scaled"]), n("Range", ["zero", "five", "one"], ["range"]),
             n("CastLike", ["range", "x"], ["range_f"]), n("Add", ["x", "range_f"], ["shifted"]),
             n("ReduceL1", ["x", "axes"], ["l1"]), n("ReduceL2", ["x", "axes"], ["l2"], keepdims=0),
             n("ReduceSumSquare", ["x", "axes"], ["sumsq"]), n("Abs", ["x"], ["ax"]),
             n("ReduceLogSum", ["ax", "axes"], ["logsum"]), n("ReduceLogSumExp", ["big", "axes"], ["lse"], keepdims=0),
             n("LayerNormalization", ["x", "g"], ["ln", "ln_mean", "ln_inv_std"], axis=-2),
             n("ReduceProd", ["x", "axes"], ["prod"])]
    inits = [_const("k", 1), _const("reps", [1, 2, 1, 3]), _const("zero", 0), _const("five", 6), _const("one", 1),
             _const("axes", [1, 3]), _const("g", np.linspace(0.5, 2, 24).reshape(4, 6), np.float32)]
    outputs = [o for node in nodes for o in node.output]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 4, 6]),
                                           helper.make_tensor_value_info("big", TensorProto.FLOAT, [2, 4, 4, 6])],
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 4, 6)).astype(np.float32)
    big = (rng.standard_normal((2, 4, 4, 6)) * 60).astype(np.float32)  # exp overflows float32 unshifted
    want = ReferenceEvaluator(model).run(None, {"x": x, "big": big})
    got = loom.models.compile(model)(x, big)
    for name, g, w in zip(outputs, got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, name
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, err_msg=name)


def test_range_of_run_time_values_is_refused_naming_the_node():
    node = helper.make_node("Range", ["a", "b", "c"], ["y"], name="r")
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info(k, TensorProto.INT64, []) for k in "abc"],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    with pytest.raises(LoomError, match=r"node 0 'r' \(Range\).*the start \(input 0\) must be known at import.*"
                                        r"the model input 'a'.*give example inputs holding its value"):
        loom.models.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
