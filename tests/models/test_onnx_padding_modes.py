"""Padding that repeats the input (ONNX Pad reflect / edge / wrap, torch's reflection and replication pads) and
auto_pad SAME_UPPER / SAME_LOWER (TF-converted convolutions and pools) were refused, and pools took neither
asymmetric pads nor pads over half the kernel. Reflect / edge / wrap padding is a gather of numpy's pad positions per
axis (torch's decomposition folds to the same: abs / neg of constants now fold), SAME pads are computed at import, and
a max pool (or an average counting the pads) pads first; an average of the real elements only divides by the average
of padded ones. Checked against onnx's reference and torch."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(4)


def _model(node, shape, initializers=()):
    graph = helper.make_graph([node], "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check(model, x):
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = loom.models.compile(model)(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_pad_modes_equal_the_reference():
    pads = numpy_helper.from_array(np.array([0, 2, 1, 1, 1, 3], np.int64), "p")
    nodes = [helper.make_node("Pad", ["x", "p"], [mode], mode=mode) for mode in ("reflect", "edge", "wrap")]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info(n.output[0], TensorProto.FLOAT, None) for n in nodes],
                              [pads])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    for g, w in zip(loom.models.compile(model)(x), ReferenceEvaluator(model).run(None, {"x": x})):
        np.testing.assert_array_equal(g, w)


def test_same_padding_and_wide_pads_of_convolutions_and_pools_equal_the_reference():
    w = numpy_helper.from_array(RNG.standard_normal((3, 2, 3, 3)).astype(np.float32), "w")
    x = RNG.standard_normal((1, 2, 7, 6)).astype(np.float32)
    for auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        _check(_model(helper.make_node("Conv", ["x", "w"], ["y"], auto_pad=auto_pad, strides=[2, 2]), x.shape, [w]),
               x)
        for op in ("MaxPool", "AveragePool"):
            model = _model(helper.make_node(op, ["x"], ["y"], auto_pad=auto_pad, kernel_shape=[3, 2],
                                            strides=[2, 2]), x.shape)
            if (op, auto_pad) != ("MaxPool", "SAME_LOWER"):
                _check(model, x)
                continue
            # the reference's MaxPool gives SAME_LOWER 3 rows, not the specification's ceil(7 / 2) (its AveragePool
            # gives 4): the 2 rows of padding split 1 / 1, columns unpadded
            padded = np.pad(x, [(0, 0), (0, 0), (1, 1), (0, 0)], constant_values=-np.inf)
            windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 2), axis=(2, 3))[:, :, ::2, ::2]
            np.testing.assert_array_equal(loom.models.compile(model)(x), windows.max(axis=(4, 5)))
    for op, attrs in (("MaxPool", {}), ("AveragePool", {"count_include_pad": 1}), ("AveragePool", {})):
        _check(_model(helper.make_node(op, ["x"], ["y"], kernel_shape=[3, 3], pads=[2, 2, 2, 2], **attrs), x.shape),
               x)


def test_asymmetric_pool_pads_equal_torch_and_ceil_mode_ones_are_refused():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((1, 2, 5, 6)).astype(np.float32)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[0, 1, 1, 0])
    padded = torch.nn.functional.pad(torch.from_numpy(x), (1, 0, 0, 1), value=float("-inf"))  # (W, H): before, after
    want = torch.nn.functional.max_pool2d(padded, 3, 1).numpy()
    np.testing.assert_array_equal(loom.models.compile(_model(node, x.shape))(x), want)
    node = helper.make_node("AveragePool", ["x"], ["y"], name="avg", kernel_shape=[3, 3], pads=[0, 1, 1, 0],
                            ceil_mode=1, strides=[2, 2])
    with pytest.raises(LoomError, match=r"'avg' \(AveragePool\).*asymmetric pads \[0, 1, 1, 0\] with ceil_mode"):
        loom.models.compile(_model(node, x.shape))


def test_torch_reflection_and_replication_pads_equal_torch():
    torch = pytest.importorskip("torch")

    class Pads(torch.nn.Module):
        def forward(self, x):
            f = torch.nn.functional
            return f.pad(x, (1, 2, 2, 1), mode="reflect") + f.pad(x, (1, 2, 2, 1), mode="replicate")

    x = torch.randn(1, 2, 5, 6)
    np.testing.assert_array_equal(loom.models.compile(Pads(), (x,))(x.numpy()), Pads()(x).numpy())


def test_integer_max_pools_equal_the_reference():
    """(Refused: pools took floats only.) Max pooling of uint8 / int8 / int16 / int32 images runs in float64, exact."""
    nodes, inputs, feeds = [], [], {}
    for dtype in (np.uint8, np.int8, np.int16, np.int32):
        name = np.dtype(dtype).name
        nodes.append(helper.make_node("MaxPool", [name], [f"y_{name}"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                      strides=[2, 2]))
        inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                                    [1, 2, 5, 6]))
        info = np.iinfo(dtype)
        feeds[name] = RNG.integers(info.min, info.max, (1, 2, 5, 6), endpoint=True).astype(dtype)
    graph = helper.make_graph(nodes, "m", inputs, [helper.make_tensor_value_info(n.output[0], TensorProto.UNDEFINED,
                                                                                 None) for n in nodes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    for g, w in zip(loom.models.compile(model)(*feeds.values()), ReferenceEvaluator(model).run(None, feeds)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
