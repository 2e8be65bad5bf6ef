"""Gathers and scatters with positions known only when the model runs (torch.gather, scatter / scatter_add /
scatter_reduce, index_select and x[idx] of a computed idx; ONNX Gather of run-time indices on any axis,
GatherElements, ScatterElements / Scatter) and top-k (torch.topk, ONNX TopK) were refused. They are loop layers; the
runtime checks the positions before the C runs (negative ones count from the end where ONNX and torch's indexing
allow them) and refuses one out of range naming the node. TopK gives equal values in position order (ONNX's rule) and
NaN larger than every number (torch's). Checked against onnx's reference evaluator and torch."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(9)


def _onnx_model():
    n = helper.make_node
    nodes = [n("GatherElements", ["x", "rows"], ["ge"], name="ge", axis=1),
             n("Gather", ["x", "cols"], ["g"], name="g", axis=1),
             n("ScatterElements", ["x", "rows", "u"], ["sa"], axis=1, reduction="add"),
             n("ScatterElements", ["x", "rows", "u"], ["sn"], axis=0),
             n("TopK", ["t", "k"], ["tv", "ti"], axis=1), n("TopK", ["t", "k"], ["bv", "bi"], axis=1, largest=0)]
    f, i = TensorProto.FLOAT, TensorProto.INT64
    inputs = [("x", f, [3, 5]), ("rows", i, [3, 5]), ("cols", i, [2, 3]), ("u", f, [3, 5]), ("t", f, [3, 7])]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(*v) for v in inputs],
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                               for node in nodes for o in node.output],
                              [numpy_helper.from_array(np.array([4], np.int64), "k")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_onnx_gathers_scatters_and_topk_equal_the_reference():
    model = _onnx_model()
    feeds = {"x": RNG.standard_normal((3, 5)).astype(np.float32),
             "rows": np.array([[0, -1, 2, 2, 1], [2, 2, -3, 0, 1], [1, 2, 2, 0, -2]], np.int64),
             "cols": np.array([[0, 4, -1], [2, 2, 1]], np.int64), "u": RNG.standard_normal((3, 5)).astype(np.float32),
             "t": np.array([[1, 3, 3, 2, 3, 0, 5], [2, 2, 2, 2, 2, 2, 2], [-1, 4, -7, 0.5, 9, 4, -1]], np.float32)}
    want = ReferenceEvaluator(model).run(None, feeds)
    compiled = loom.models.compile(model)
    got = compiled(*feeds.values())
    for name, g, w in zip([o.name for o in model.graph.output], got, want):
        assert g.dtype == w.dtype, name
        np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=name)  # ties: positions in order, as the reference
    feeds["cols"] = np.array([[0, 5, 1], [2, 2, 1]], np.int64)
    with pytest.raises(LoomError, match=r"node 1 'g' \(Gather\).*index 5 is out of range for an axis of 5 "
                                        r"\(indices lie in \[-5, 5\)\)"):
        compiled(*feeds.values())


torch = pytest.importorskip("torch")


class Indexing(torch.nn.Module):
    def forward(self, x, idx, pick):
        g = torch.gather(x, 1, idx)
        scattered = torch.zeros_like(x).scatter_add(1, idx, g) + x.scatter(1, idx, 2.5)
        top, where = torch.topk(x, 3, dim=1)
        low, _ = torch.topk(x, 2, dim=0, largest=False)
        return g, scattered, top, where, low, torch.index_select(x, 1, pick), x[:, pick - 6]


def test_torch_gather_scatter_index_and_topk_equal_torch():
    x = torch.randn(4, 6)
    x[1, 2] = float("nan")  # larger than every number in topk: first of the largest, last of the smallest
    idx, pick = torch.tensor([[0, 5, 5], [1, 1, 2], [3, 0, 4], [2, 2, 2]]), torch.tensor([4, 0, 3])
    compiled = loom.models.compile(Indexing(), (x, idx, pick))
    got = compiled(x.numpy(), idx.numpy(), pick.numpy())
    with torch.no_grad():
        want = Indexing()(x, idx, pick)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w.numpy())
    with pytest.raises(LoomError, match=r"gather\.default.*index -5 is out of range for an axis of 6 "
                                        r"\(indices lie in \[0, 6\)\)"):
        compiled(x.numpy(), -idx.numpy(), pick.numpy())  # torch.gather takes no negative positions
