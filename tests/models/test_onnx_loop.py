"""ONNX Loop was refused as an unsupported op. It is unrolled when its trip count is known at import: a condition
known only when the model runs keeps each loop-carried value from the iteration the condition turns false on, scan
outputs are stacked on a new first axis. A loop without a known trip count, or with scan outputs and a run-time
condition (a run-time length), is refused naming the node. Checked against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

F, V = TensorProto.FLOAT, helper.make_tensor_value_info
X = np.arange(6, dtype=np.float32).reshape(2, 3) / 10


def _body(scan: bool):
    """acc = acc / 2 + x * i; keep going while sum(acc) < limit; scan: acc's first row."""
    n = helper.make_node
    nodes = [n("Cast", ["i"], ["fi"], to=F), n("Mul", ["x", "fi"], ["xi"]), n("Mul", ["acc", "half"], ["ah"]),
             n("Add", ["ah", "xi"], ["acc_out"]), n("ReduceSum", ["acc_out"], ["s"], keepdims=0),
             n("Less", ["s", "limit"], ["c_out"] if not scan else ["unused"]),
             n("Gather", ["acc_out", "zero"], ["row"], axis=0)]
    if scan:
        nodes.append(n("Identity", ["c"], ["c_out"]))
    outputs = [V("c_out", TensorProto.BOOL, []), V("acc_out", F, [2, 3])] + ([V("row", F, [3])] if scan else [])
    return helper.make_graph(nodes, "body", [V("i", TensorProto.INT64, []), V("c", TensorProto.BOOL, []),
                                             V("acc", F, [2, 3])], outputs,
                             [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
                              numpy_helper.from_array(np.array(0, np.int64), "zero")])


def _model(scan: bool, trip="M", cond="go"):
    outputs = ["acc"] + (["rows"] if scan else [])
    node = helper.make_node("Loop", [trip, cond, "acc0"], outputs, name="loop", body=_body(scan))
    graph = helper.make_graph([node], "m", [V("x", F, [2, 3]), V("acc0", F, [2, 3]), V("limit", F, [])],
                              [V(o, F, None) for o in outputs],
                              [numpy_helper.from_array(np.array(5, np.int64), "M"),
                               numpy_helper.from_array(np.array(True), "go")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _equal_reference(compiled, model, limit):
    feeds = {"x": X, "acc0": np.ones((2, 3), np.float32), "limit": np.array(limit, np.float32)}
    got = compiled(*feeds.values())
    for g, w in zip(got if isinstance(got, tuple) else [got], ReferenceEvaluator(model).run(None, feeds)):
        assert g.dtype == w.dtype and np.array_equal(g, w), (g, w)


def test_a_loop_with_a_run_time_condition_stops_where_the_reference_does():
    model = _model(scan=False)
    compiled = loom.models.compile(model)
    for limit in (3.0, 5.0, 100.0, -1.0):  # stops after iteration 2, 3, runs all 5, stops after the first
        _equal_reference(compiled, model, limit)


def test_a_counted_loop_stacks_its_scan_outputs():
    model = _model(scan=True)
    _equal_reference(loom.models.compile(model), model, 0.0)  # (the condition stays true: the limit is not read)


def test_loops_of_run_time_length_are_refused_naming_the_node():
    with pytest.raises(LoomError, match=r"'loop' \(Loop\).*needs a trip count M known at import"):
        loom.models.compile(_model(scan=False, trip=""))
    body = _body(scan=True)
    body.node[5].output[0] = "c_out"  # the condition depends on the values
    del body.node[-1]
    model = _model(scan=True)
    model.graph.node[0].attribute[0].g.CopyFrom(body)
    with pytest.raises(LoomError, match=r"node 0 'loop' \(Loop\): Loop: scan outputs with a condition known only "
                                        r"when the model runs"):  # (the Loop's place, not its body's last node)
        loom.models.compile(model)


def test_a_condition_input_of_a_loop_with_scan_outputs_takes_the_examples_value():
    model = _model(scan=True, cond="keep")
    model.graph.input.append(V("keep", TensorProto.BOOL, []))
    feeds = {"x": X, "acc0": np.ones((2, 3), np.float32), "limit": np.array(0.0, np.float32), "keep": np.array(True)}
    compiled = loom.models.compile(model, list(feeds.values()))
    for g, w in zip(compiled(*feeds.values()), ReferenceEvaluator(model).run(None, feeds)):
        assert g.dtype == w.dtype and np.array_equal(g, w), (g, w)
    with pytest.raises(LoomError, match=r"input 3 \(keep\): the model was compiled for this input's example value "
                                        r"True"):
        compiled(*list(feeds.values())[:3], np.array(False))
