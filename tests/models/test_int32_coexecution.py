"""int32 models co-executed with the shipped i32 accelerators (conv2d.json, matmul_v4.json) equal the
CPU-only run exactly, and both equal an independent reference (numpy in int64, PyTorch, onnx.reference)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import loom
from loom.errors import LoomError
from loom.models.compiler import compile_graph
from loom.models.graph import GraphBuilder
from loom.models.report import layer_report

ACCELERATORS = Path(loom.__file__).parent / "examples" / "accelerators"
I32_ACCELERATORS = [str(ACCELERATORS / "conv2d.json"), str(ACCELERATORS / "matmul_v4.json")]


def _conv_reference(x, w, bias, stride, pad):
    """NCHW x FCHW in int64 over sliding windows."""
    x = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(x, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    out = np.einsum("nchwij,fcij->nfhw", windows, w.astype(np.int64))
    return out if bias is None else out + bias.astype(np.int64)[None, :, None, None]


def _int_cnn(rng):
    """conv 3x3 padded + bias, relu, conv 3x3 stride 2, flatten, linear + bias, relu: quantised-style
    integer arithmetic (values stay far from int32 overflow, so the int64 reference is exact)."""
    weights = {"w1": rng.integers(-8, 8, (8, 3, 3, 3)), "b1": rng.integers(-50, 50, (8,)),
               "w2": rng.integers(-8, 8, (8, 8, 3, 3)), "w3": rng.integers(-8, 8, (72, 16)),
               "b3": rng.integers(-50, 50, (16,))}
    weights = {k: v.astype(np.int32) for k, v in weights.items()}
    b = GraphBuilder("int_cnn")
    c = {k: b.constant(k, v) for k, v in weights.items()}
    x = b.input("x", (1, 3, 8, 8), np.int32)
    y = b.unary("relu", b.conv2d(x, c["w1"], c["b1"], padding=(1, 1)))
    y = b.view(b.conv2d(y, c["w2"], None, stride=(2, 2)), (1, -1))
    y = b.unary("relu", b.matmul(y, c["w3"], c["b3"]))
    return b.finish([y]), weights


@pytest.mark.sanitize
def test_int_cnn_on_the_conv_and_matmul_accelerators_equals_the_cpu_exactly():
    rng = np.random.default_rng(0)
    graph, w = _int_cnn(rng)
    x = rng.integers(-10, 10, (1, 3, 8, 8)).astype(np.int32)
    y = np.maximum(_conv_reference(x, w["w1"], w["b1"], 1, 1), 0)
    y = _conv_reference(y, w["w2"], None, 2, 0).reshape(1, -1)
    want = np.maximum(y @ w["w3"].astype(np.int64) + w["b3"], 0)
    assert np.abs(want).max() < 2 ** 31  # the reference is exact in int32 too
    cpu = compile_graph(graph)(x)
    assert cpu.dtype == np.int32 and np.array_equal(cpu, want)
    offloaded = compile_graph(graph, accelerators=I32_ACCELERATORS, offload="always")
    got = offloaded(x, profile=True)
    assert got.dtype == np.int32 and np.array_equal(got, cpu)
    devices = [(r.kind, r.device) for r in layer_report(offloaded.last_profile) if r.device != "view"]
    assert devices == [("conv2d", "conv_os"), ("unary:relu", "cpu"), ("conv2d", "conv_os"), ("matmul", "v4_16"),
                       ("unary:relu", "cpu")]


def test_torch_int32_mlp_through_torch_export():
    torch = pytest.importorskip("torch")
    import loom.models

    class IntMlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            self.register_buffer("w1", torch.randint(-8, 8, (24, 32), generator=g, dtype=torch.int32))
            self.register_buffer("b1", torch.randint(-50, 50, (32,), generator=g, dtype=torch.int32))
            self.register_buffer("w2", torch.randint(-8, 8, (32, 16), generator=g, dtype=torch.int32))

        def forward(self, x):
            return torch.relu(x @ self.w1 + self.b1) @ self.w2

    model = IntMlp()
    x = torch.randint(-10, 10, (4, 24), dtype=torch.int32, generator=torch.Generator().manual_seed(1))
    cpu = loom.models.compile(model, (x,))
    offloaded = loom.models.compile(model, (x,), accelerators=[str(ACCELERATORS / "matmul_v4.json")],
                                    offload="always")
    want = model(x).numpy()
    assert np.array_equal(cpu(x.numpy()), want)
    assert np.array_equal(offloaded(x.numpy()), want)
    assert len(offloaded.runners) == 2  # both products on v4


def test_onnx_int32_matmul_add_relu(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    import loom.models

    rng = np.random.default_rng(1)
    w, bias = rng.integers(-8, 8, (24, 16)).astype(np.int32), rng.integers(-50, 50, (16,)).astype(np.int32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Add", ["y", "b"], ["z"]),
             helper.make_node("Relu", ["z"], ["out"])]
    graph = helper.make_graph(nodes, "int_mlp", [helper.make_tensor_value_info("x", TensorProto.INT32, [4, 24])],
                              [helper.make_tensor_value_info("out", TensorProto.INT32, [4, 16])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "int_mlp.onnx"
    onnx.save(model, str(path))
    x = rng.integers(-10, 10, (4, 24)).astype(np.int32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert np.array_equal(loom.models.compile(str(path), (x,))(x), want)
    offloaded = loom.models.compile(str(path), (x,), accelerators=[str(ACCELERATORS / "matmul_v4.json")],
                                    offload="always")
    assert np.array_equal(offloaded(x), want) and list(offloaded.runners) == [0]


@pytest.mark.parametrize("build, message", [
    (lambda b, x, f: b.binary("div", x, x), "int32 tensors take add, sub, mul, max, min"),
    (lambda b, x, f: b.binary("mul", x, 0.5), "integer scalars only"),
    (lambda b, x, f: b.unary("gelu", x), "int32 tensors take relu, neg, abs, bitnot only"),
    (lambda b, x, f: b.matmul(x, f), "this op computes in float32, float64 or int32, all operands alike"),
    (lambda b, x, f: b.softmax(x, -1), "this op computes in float32"),
])
def test_int32_ops_outside_the_integer_set_are_refused_at_import(build, message):
    b = GraphBuilder("m.py")
    b.at("m.py:3")
    x = b.input("x", (4, 4), np.int32)
    f = b.input("f", (4, 4), np.float32)
    with pytest.raises(LoomError, match=message) as error:
        build(b, x, f)
    assert "m.py:3" in str(error.value)
