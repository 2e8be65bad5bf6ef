"""Transposed convolutions (nn.ConvTranspose1d / 2d through torch.export, ONNX ConvTranspose) were refused, so a
U-Net's decoder could not be imported. A transposed convolution is built as the convolution it equals (zeros between
the input's elements, padding k - 1 - p, the weight's taps reversed and channel axes swapped per group). Checked
against torch (every case, groups included) and onnx's reference evaluator (ungrouped: its grouped ConvTranspose is
wrong or fails for some shapes, e.g. groups=2 with 3 output channels per group cannot reshape its weight)."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
import onnx.utils  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

CASES = [  # (1-d, in, out, kernel, stride, padding, output_padding, dilation, groups)
    (False, 4, 6, 3, 2, 1, 1, 1, 1), (False, 4, 6, 2, 2, 0, 0, 1, 2), (True, 3, 2, 3, 1, 0, 0, 2, 1),
    (True, 4, 4, 4, 3, 2, 2, 1, 4), (False, 2, 3, (3, 2), (2, 1), (2, 0), (1, 0), (1, 2), 1),
    (False, 2, 3, 3, 1, 2, 0, 1, 1)]


def _onnx(module, xs):
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, xs, f, dynamo=False, opset_version=17)
    return onnx.load_from_string(f.getvalue())


class Transposed(torch.nn.Module):
    """One transposed convolution per case, each on its own input."""
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            (torch.nn.ConvTranspose1d if one_d else torch.nn.ConvTranspose2d)(
                cin, cout, k, stride, padding, extra, groups, dilation=dilation)
            for one_d, cin, cout, k, stride, padding, extra, dilation, groups in CASES)

    def forward(self, *xs):
        return tuple(layer(x) for layer, x in zip(self.layers, xs))


def test_conv_transposes_equal_torch_and_the_reference():
    torch.manual_seed(1)
    module = Transposed().eval()
    xs = tuple(torch.randn(2, cin, 5) if one_d else torch.randn(2, cin, 5, 6) for one_d, cin, *_ in CASES)
    with torch.no_grad():
        want = [w.numpy() for w in module(*xs)]
    model = _onnx(module, xs)
    assert sum(n.op_type == "ConvTranspose" for n in model.graph.node) == len(CASES)
    ungrouped = [k for k, case in enumerate(CASES) if case[-1] == 1]  # (the reference fails on grouped ones)
    names = [model.graph.input[k].name for k in ungrouped], [model.graph.output[k].name for k in ungrouped]
    part = onnx.utils.Extractor(model).extract_model(*names)
    reference = ReferenceEvaluator(part).run(None, {i.name: xs[k].numpy() for i, k in zip(part.graph.input,
                                                                                          ungrouped)})
    for got in (loom.models.compile(module, xs)(*(x.numpy() for x in xs)), loom.models.compile(model)(
            *(x.numpy() for x in xs))):
        for case, g, w in zip(CASES, got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=str(case))
        for k, r in zip(ungrouped, reference):
            np.testing.assert_allclose(got[k], r, rtol=1e-5, atol=1e-5, err_msg=str(CASES[k]))


class UNetBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc, self.mid = torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.Conv2d(8, 16, 3, padding=1)
        self.up, self.dec = torch.nn.ConvTranspose2d(16, 8, 2, stride=2), torch.nn.Conv2d(16, 4, 3, padding=1)

    def forward(self, x):
        e = torch.relu(self.enc(x))
        m = torch.relu(self.mid(torch.nn.functional.max_pool2d(e, 2)))
        return self.dec(torch.cat([self.up(m), e], 1))


def test_a_unet_block_equals_torch_both_ways():
    torch.manual_seed(2)
    module, x = UNetBlock().eval(), torch.randn(1, 4, 8, 8)
    with torch.no_grad():
        want = module(x).numpy()
    for source in (module, _onnx(module, (x,))):
        np.testing.assert_allclose(loom.models.compile(source, (x.numpy(),) if source is not module else (x,))(
            x.numpy()), want, rtol=1e-4, atol=1e-5)


def test_onnx_output_shape_and_same_padding_equal_the_reference():
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(0).standard_normal((1, 2, 3, 3)).astype(np.float32)
    for attrs in ({"strides": [3, 2], "output_shape": [10, 8]}, {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
                  {"auto_pad": "SAME_LOWER", "strides": [2, 2]}):
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", **attrs)
        graph = helper.make_graph([node], "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 3])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  [numpy_helper.from_array(w, "w")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        np.testing.assert_allclose(loom.models.compile(model)(x), want, rtol=1e-6, err_msg=str(attrs))
    for attrs, message in (({"auto_pad": "VALID_ISH"}, "auto_pad='VALID_ISH' is not supported"),
                           ({"strides": [2, 2], "output_shape": [6, 5]}, r"output_shape \[6, 5\] is smaller")):
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", **attrs)
        graph = helper.make_graph([node], "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 3])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  [numpy_helper.from_array(w, "w")])
        with pytest.raises(LoomError, match=rf"'up' \(ConvTranspose\).*{message}"):
            loom.models.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
