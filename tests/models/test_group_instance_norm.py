"""GroupNorm, InstanceNorm (torch.export writes it as batch norm with batch statistics over a (1, N*C, ...)
view, with the affine parameters repeated N times) and ONNX InstanceNormalization were refused at import;
each is now a layer norm of the (N, groups, rest) view with a per-channel scale and shift."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import loom.models  # noqa: E402


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.group = nn.GroupNorm(2, 6)
        self.instance = nn.InstanceNorm2d(6, affine=True)
        self.plain = nn.InstanceNorm1d(6)
        for p in (*self.group.parameters(), *self.instance.parameters()):
            nn.init.normal_(p)

    def forward(self, x):
        return self.group(x), self.instance(x * 3), self.plain(x.flatten(2)), x.repeat(1, 2, 1, 3)


def test_group_and_instance_norm_and_repeat_match_torch():
    torch.manual_seed(0)
    model, x = Norms().eval(), torch.randn(2, 6, 4, 5) + 2
    got = loom.models.compile(model, (x,))(x.numpy())
    with torch.no_grad():
        want = model(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-5)


def test_batch_statistics_over_several_samples_are_refused():
    class Training(nn.Module):
        def forward(self, x):
            return F.batch_norm(x, None, None, training=True)

    with pytest.raises(LoomError, match="batch statistics over 2 samples is not supported"):
        loom.models.import_model(Training(), (torch.randn(2, 3, 4),))


def test_onnx_instance_normalization_equals_the_reference():
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), k) for k in ("s", "b")]
    node = helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)
    graph = helper.make_graph([node], "n", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(loom.models.compile(model)(x), want, rtol=1e-5, atol=1e-5)
