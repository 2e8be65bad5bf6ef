"""PyTorch quantization in an exported model: the fake quantization of quantization-aware training
(torch.fake_quantize_per_{tensor,channel}_affine) and the quantize / dequantize ops PT2E quantization leaves in the
graph (quantized_decomposed.*, per tensor and per channel, float32 and float64 scales). Each was refused as an
unsupported op. The quantized (and fake-quantized) tensors must equal torch's exactly; float results after a
layer within 1e-5."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch.ao.quantization.fx._decomposed")  # registers torch.ops.quantized_decomposed

import loom.models  # noqa: E402

qd = torch.ops.quantized_decomposed


class QuantAwareNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.fc = torch.nn.Conv2d(3, 4, 3), torch.nn.Linear(16, 5)
        self.register_buffer("conv_scales", torch.rand(4) * 0.02 + 0.001)
        self.register_buffer("fc_scales", torch.rand(5) * 0.02 + 0.001)
        self.register_buffer("fc_zeros", torch.tensor([0, 1, -2, 3, 0], dtype=torch.int32))

    def forward(self, img):
        x = torch.fake_quantize_per_tensor_affine(img, 0.1, 7, 0, 255)
        zeros = torch.zeros(4, dtype=torch.int32)
        w = torch.fake_quantize_per_channel_affine(self.conv.weight, self.conv_scales, zeros, 0, -127, 127)
        y = torch.nn.functional.conv2d(x, w, self.conv.bias).amax((2, 3))
        wf = torch.fake_quantize_per_channel_affine(self.fc.weight, self.fc_scales, self.fc_zeros, 0, -127, 127)
        return torch.nn.functional.linear(y.repeat(1, 4), wf, self.fc.bias), x, wf


class DecomposedQuantNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)
        self.register_buffer("scales", torch.rand(4) * 0.02 + 0.001)
        self.register_buffer("scales64", (torch.rand(4) * 0.02 + 0.001).double())
        self.register_buffer("zeros", torch.tensor([0, 2, -1, 0]))

    def forward(self, x):
        q = qd.quantize_per_tensor(x, 0.05, 3, -128, 127, torch.int8)
        xd = qd.dequantize_per_tensor(q, 0.05, 3, -128, 127, torch.int8)
        wq = qd.quantize_per_channel(self.fc.weight, self.scales, self.zeros, 0, -127, 127, torch.int8)
        w = qd.dequantize_per_channel(wq, self.scales, self.zeros, 0, -127, 127, torch.int8)
        wq64 = qd.quantize_per_channel(self.fc.weight, self.scales64, self.zeros, 0, -127, 127, torch.int8)
        w64 = qd.dequantize_per_channel(wq64, self.scales64, self.zeros, 0, -127, 127, torch.int8)
        return torch.nn.functional.linear(xd, w, self.fc.bias), q, wq64, w64


@pytest.mark.parametrize("make, inputs", [
    (QuantAwareNet, lambda: (torch.rand(2, 3, 6, 6) * 30,)),
    # (values on rounding ties, x * (1 / scale) = k + 0.5, and beyond the int8 range)
    (DecomposedQuantNet, lambda: (torch.cat([torch.randn(3, 8) * 3, (torch.arange(8.0) - 3.5)[None] * 0.05,
                                             torch.full((1, 8), 20.0)]),)),
])
def test_quantized_model_equals_torch(make, inputs):
    torch.manual_seed(0)
    module, args = make().eval(), inputs()
    with torch.no_grad():
        want = [w.numpy() for w in module(*args)]
    got = loom.models.compile(module, args)(*(a.numpy() for a in args))
    first, *exact = zip(got, want, strict=True)
    np.testing.assert_allclose(first[0], first[1], rtol=1e-5, atol=1e-5 * float(np.abs(first[1]).max()))
    for g, w in exact:
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
