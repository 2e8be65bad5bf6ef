"""3-d convolution and pooling (video / volumetric models): refused before (only 1-d and 2-d), now 2-d layers over
depth slices (loom.models.volumetric). A torch model with Conv3d (padding, stride, dilation, groups), BatchNorm3d,
max_pool3d and avg_pool3d (ceil_mode, count_include_pad either way) and ConvTranspose3d (a 3-d U-Net's decoder:
stride, output_padding, groups) against torch; ONNX pooling with asymmetric
pads against onnx's reference; a rank-6 input is refused naming the node."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

nn, F = torch.nn, torch.nn.functional


class VideoNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.bn = nn.Conv3d(3, 8, 3, padding=1), nn.BatchNorm3d(8)
        self.c2 = nn.Conv3d(8, 8, (3, 1, 1), stride=(2, 1, 1), groups=4, dilation=(2, 1, 1), padding=(2, 0, 0))
        self.fc = nn.Linear(8, 4)
        self.up = nn.ConvTranspose3d(8, 4, 3, stride=(2, 2, 1), padding=1, output_padding=(1, 0, 0), groups=2)

    def forward(self, x):
        x = torch.relu(self.bn(self.c1(x)))
        y = self.c2(F.max_pool3d(x, 2, stride=2, ceil_mode=True))
        return (self.fc(y.mean((2, 3, 4))), F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                         count_include_pad=False),
                F.avg_pool3d(x, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)), self.up(x))


def test_video_model_equals_torch():
    torch.manual_seed(0)
    module, x = VideoNet().eval(), torch.randn(2, 3, 5, 7, 7)
    module.bn.running_var.uniform_(0.5, 2.0)
    with torch.no_grad():
        want = [w.numpy() for w in module(x)]
    got = loom.models.compile(module, (x,))(x.numpy())
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        assert float(np.abs(g - w).max()) <= 1e-5 * float(np.abs(w).max())


@pytest.mark.parametrize("op, attrs", [
    ("MaxPool", {"pads": [1, 0, 2, 0, 1, 1], "strides": [2, 2, 1], "dilations": [1, 2, 1]}),
    ("AveragePool", {"pads": [0, 1, 1, 1, 0, 2], "strides": [2, 2, 2], "ceil_mode": 1, "count_include_pad": 1}),
])
def test_onnx_3d_pooling_with_asymmetric_pads_equals_the_reference(op, attrs):
    node = helper.make_node(op, ["x"], ["y"], kernel_shape=[3, 2, 3], **attrs)
    graph = helper.make_graph([node], "p", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 5, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    x = np.random.default_rng(1).standard_normal((1, 2, 6, 5, 7)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = loom.models.compile(model)(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_rank_6_convolution_is_refused_naming_the_node():
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv4d")
    graph = helper.make_graph([node], "c", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 3, 3, 3]),
                                            helper.make_tensor_value_info("w", TensorProto.FLOAT, [1, 1, 2, 2, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(LoomError, match=r"node 0 'conv4d' \(Conv\).*1-d, 2-d and 3-d convolutions.*rank 6"):
        loom.models.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
