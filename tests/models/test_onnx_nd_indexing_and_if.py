"""ONNX GatherND, ScatterND (reductions none / add / mul / max), OneHot and If were refused as unsupported ops.
GatherND / ScatterND wrap negative index components and refuse one out of its axis's range when the model runs,
naming the node (a combined row number could otherwise land inside the data); OneHot gives off values for indices
outside [-depth, depth) as the specification says. If inlines the branch a constant condition picks, and with a
run-time condition computes both branches and selects. Checked against onnx's reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

F, I = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(5)


def _model(nodes, inputs, outputs, inits=(), opset=18):
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(*v) for v in inputs],
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
                              [numpy_helper.from_array(v, k) for k, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _equal_reference(model, feeds):
    compiled = loom.models.compile(model)
    want = ReferenceEvaluator(model).run(None, feeds)
    got = compiled(*feeds.values())
    for g, w in zip(got if isinstance(got, (list, tuple)) else [got], want):
        assert g.dtype == w.dtype and np.array_equal(g, w), (g, w)
    return compiled


@pytest.fixture(scope="module")
def nd_model():
    n = helper.make_node
    nodes = [n("GatherND", ["d", "i"], ["g0"], name="gather_nd"),
             n("GatherND", ["d", "b"], ["g1"], batch_dims=1),
             n("ScatterND", ["d", "i", "u"], ["s_none"], name="scatter_nd"),
             n("ScatterND", ["d", "j", "u"], ["s_add"], reduction="add"),
             n("ScatterND", ["d", "j", "u"], ["s_mul"], reduction="mul"),
             n("ScatterND", ["d", "j", "u"], ["s_max"], reduction="max"),
             n("OneHot", ["h", "depth", "onoff"], ["o0"], axis=0),
             n("OneHot", ["h", "depth", "onoff"], ["o1"])]
    inputs = [("d", F, [3, 4, 5]), ("i", I, [3, 2]), ("b", I, [3, 2, 1]), ("j", I, [3, 2]), ("u", F, [3, 5]),
              ("h", I, [2, 3])]
    inits = [("depth", np.array(4, np.int64)), ("onoff", np.array([-2.0, 3.0], np.float32))]
    return _model(nodes, inputs, [o for node in nodes for o in node.output], inits)


def _feeds(i):
    return {"d": RNG.standard_normal((3, 4, 5)).astype(np.float32), "i": np.array(i, np.int64),
            "b": np.array([[[1], [3]], [[0], [-1]], [[2], [-4]]], np.int64),
            "j": np.array([[0, 1], [0, 1], [-3, -3]], np.int64),  # (0, 1) twice: reductions combine
            "u": RNG.standard_normal((3, 5)).astype(np.float32),
            "h": np.array([[0, 1, -1], [5, -5, 3]], np.int64)}  # 5 and -5: outside [-4, 4), all off


def test_gather_nd_scatter_nd_and_one_hot_equal_the_reference(nd_model):
    compiled = _equal_reference(nd_model, _feeds([[0, 1], [-1, 3], [2, -4]]))
    _equal_reference(nd_model, _feeds([[2, 0], [1, -1], [0, 0]]))
    with pytest.raises(LoomError, match=r"gather_nd.*GatherND.*index 4 is out of range for an axis of 4"):
        compiled(*_feeds([[0, 4], [0, 0], [1, 1]]).values())  # row 0 * 4 + 4 = 4 would be in the data
    with pytest.raises(LoomError, match=r"GatherND.*index -4 is out of range for an axis of 3"):
        compiled(*_feeds([[-4, 0], [0, 0], [1, 1]]).values())


def test_constant_gather_nd_folds_and_bad_index_shapes_are_refused():
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    model = _model([helper.make_node("GatherND", ["c", "k"], ["t"]), helper.make_node("Add", ["x", "t"], ["y"])],
                   [("x", F, [2, 4])], ["y"], [("c", data), ("k", np.array([[1, -1], [0, 0]], np.int64))])
    _equal_reference(model, {"x": np.ones((2, 4), np.float32)})
    bad = _model([helper.make_node("GatherND", ["x", "k"], ["y"], name="deep")], [("x", F, [2, 4])], ["y"],
                 [("k", np.zeros((1, 3), np.int64))])
    with pytest.raises(LoomError, match=r"'deep' \(GatherND\).*must end with a dimension k of 1..2"):
        loom.models.compile(bad)
    upd = _model([helper.make_node("ScatterND", ["x", "k", "u"], ["y"])], [("x", F, [2, 4]), ("u", F, [3])], ["y"],
                 [("k", np.zeros((1, 1), np.int64))])
    with pytest.raises(LoomError, match=r"ScatterND.*updates \[3\] must have the shape \[1, 4\]"):
        loom.models.compile(upd)


def _branches():
    then = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", F, [2, 3])],
                             [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    other = helper.make_graph([helper.make_node("Relu", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", F, [2, 3])])
    return then, other


def test_if_with_a_run_time_or_a_constant_condition_equals_the_reference():
    then, other = _branches()
    n = helper.make_node
    model = _model([n("ReduceSum", ["x"], ["s"], keepdims=0), n("Greater", ["s", "zero"], ["c"]),
                    n("If", ["c"], ["y"], then_branch=then, else_branch=other),
                    # a condition from the shape: known at import, only its branch is built
                    n("Shape", ["x"], ["shape"]), n("ReduceSum", ["shape"], ["dims"], keepdims=0),
                    n("Greater", ["dims", "four"], ["k"]), n("If", ["k"], ["z"], then_branch=other, else_branch=then)],
                   [("x", F, [2, 3])], ["y", "z"],
                   [("zero", np.array(0.0, np.float32)), ("four", np.array(4, np.int64))])
    x = np.array([[1, -2, 3], [-4, 5, 6]], np.float32)
    compiled = _equal_reference(model, {"x": x})
    _equal_reference(model, {"x": -x})
    built = [layer.where.split("> ")[0] for layer in compiled.graph.layers if "node 6" in layer.where]
    assert built and set(built) == {"<onnx model>: node 6 '' (If) then_branch "}  # the else branch is not built


def test_if_refuses_branches_of_different_shapes_and_unsupported_ops_inside_naming_the_node():
    then, _ = _branches()
    short = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["r"], keepdims=0)], "short", [],
                              [helper.make_tensor_value_info("r", F, [])])
    model = _model([helper.make_node("If", ["c"], ["y"], name="choose", then_branch=then, else_branch=short)],
                   [("c", TensorProto.BOOL, [1]), ("x", F, [2, 3])], ["y"])
    with pytest.raises(LoomError, match=r"'choose' \(If\).*output 0 is float32\[2, 3\] in then_branch but "
                                        r"float32\[\] in else_branch"):
        loom.models.compile(model)
    inner = helper.make_graph([helper.make_node("NonZero", ["x"], ["nz"], name="nz")], "inner", [],
                              [helper.make_tensor_value_info("nz", I, None)])
    model = _model([helper.make_node("If", ["c"], ["y"], name="choose", then_branch=inner, else_branch=then)],
                   [("c", TensorProto.BOOL, [1]), ("x", F, [2, 3])], ["y"])
    with pytest.raises(LoomError, match=r"node 0 'choose' \(If\) then_branch > node 0 'nz' \(NonZero\): "
                                        r"unsupported ONNX op NonZero"):
        loom.models.compile(model)


def test_only_the_branch_taken_runs_so_its_positions_alone_are_checked():
    """(both branches ran: a Gather whose indices are only valid where its branch is taken was refused)"""
    pick = helper.make_graph([helper.make_node("Gather", ["x", "i"], ["g"], axis=1)], "pick", [],
                             [helper.make_tensor_value_info("g", F, [2, 2])])
    first = helper.make_graph([helper.make_node("Slice", ["x", "zero", "two", "one"], ["s"])], "first", [],
                              [helper.make_tensor_value_info("s", F, [2, 2])])
    model = _model([helper.make_node("If", ["ok"], ["y"], name="choose", then_branch=pick, else_branch=first)],
                   [("ok", TensorProto.BOOL, []), ("x", F, [2, 3]), ("i", I, [2])], ["y"],
                   [("zero", np.array([0], np.int64)), ("two", np.array([2], np.int64)),
                    ("one", np.array([1], np.int64))])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    compiled = _equal_reference(model, {"ok": np.array(False), "x": x, "i": np.array([7, 9])})  # (not read)
    _equal_reference(model, {"ok": np.array(True), "x": x, "i": np.array([2, -3])})
    with pytest.raises(LoomError, match=r"'choose' \(If\) then_branch > node 0 '' \(Gather\).*index 7 is out of range"):
        compiled(np.array(True), x, np.array([7, 0]))
