"""ONNX's plain RNN op (torch.onnx writes nn.RNN as one, with activations ["Relu"] for nonlinearity='relu'): refused
as an unsupported op before; unrolled like LSTM / GRU. Compared with torch; an activation loom does not build is
refused naming the node."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402


@pytest.mark.parametrize("nonlinearity, bidirectional", [("tanh", False), ("relu", True)])
def test_torch_rnn_through_onnx_equals_torch(nonlinearity, bidirectional):
    torch.manual_seed(0)
    module = torch.nn.RNN(5, 6, num_layers=2, nonlinearity=nonlinearity, batch_first=True,
                          bidirectional=bidirectional).eval()
    x, h0 = torch.randn(3, 4, 5), torch.randn(4 if bidirectional else 2, 3, 6)
    with torch.no_grad():
        want = [t.numpy() for t in module(x, h0)]
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x, h0), f, dynamo=False, opset_version=17)
    model = onnx.load_from_string(f.getvalue())
    assert "RNN" in {node.op_type for node in model.graph.node}
    got = loom.models.compile(model)(x.numpy(), h0.numpy())
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * float(np.abs(w).max()))


def test_an_rnn_activation_loom_does_not_build_is_refused_naming_the_node():
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(np.ones((1, 4, 3), np.float32), "W"),
             numpy_helper.from_array(np.ones((1, 4, 4), np.float32), "R")]
    node = helper.make_node("RNN", ["x", "W", "R"], ["y"], name="cell", hidden_size=4, activations=["Softsign"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    with pytest.raises(LoomError, match=r"node 0 'cell' \(RNN\).*activation 'Softsign' is not supported"):
        loom.models.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
