"""torch.cumsum and ONNX CumSum (position ids from masks, running totals) were refused at import; now a
running sum in loops along the axis, float32 summed in float64 as PyTorch's CPU kernel does: equal to torch."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError

torch = pytest.importorskip("torch")
nn = torch.nn

import loom.models  # noqa: E402


class Sums(nn.Module):
    def forward(self, x, ids):
        return torch.cumsum(x, 1), x.cumsum(-1), torch.cumsum(x, 0), ids.cumsum(1) - 1


@pytest.mark.sanitize  # loops and indexed loads / broadcast copies in the generated C
def test_cumsum_matches_torch_along_each_axis():
    torch.manual_seed(0)
    x, ids = torch.randn(3, 4, 700), torch.randint(0, 3, (2, 7))
    got = loom.models.compile(Sums(), (x, ids))(x.numpy(), ids.numpy())
    want = Sums()(x, ids)
    for g, w in zip(got[:3], want[:3], strict=True):
        np.testing.assert_array_equal(g, w.numpy())
    assert got[3].dtype == np.int64
    np.testing.assert_array_equal(got[3], want[3].numpy())


def test_int32_cumsum_wraps_as_torch():
    """cumsum in int32 was refused; it sums in int64 and keeps the low 32 bits, as int32 arithmetic wraps."""
    class IntSum(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0, dtype=torch.int32), torch.cumsum(x, 0), torch.cumsum(x > 0, 1)

    x = torch.tensor([[2**31 - 5, 7], [10, -3], [-(2**31), 2**30]], dtype=torch.int32)
    got = loom.models.compile(IntSum(), (x,))(x.numpy())
    for g, w in zip(got, IntSum()(x), strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


def _cumsum_model(dtype=None, axis=-1, **attrs):
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node("CumSum", ["x", "axis"], ["y"], name="sums", **attrs)
    graph = helper.make_graph([node], "c", [helper.make_tensor_value_info("x", dtype or TensorProto.FLOAT, [3, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array(axis, np.int64), "axis")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


@pytest.mark.parametrize("attrs", [{}, {"reverse": 1, "exclusive": 1}])
def test_onnx_cumsum_equals_the_reference(attrs):
    """(reverse and exclusive were refused.) Reverse sums are a flip before and after, exclusive ones the input moved
    one along the axis behind a zero."""
    from onnx.reference import ReferenceEvaluator

    model = _cumsum_model(**attrs)
    x = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_allclose(loom.models.compile(model)(x), ReferenceEvaluator(model).run(None, {"x": x})[0],
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(LoomError, match=r"'sums' \(CumSum\).*needs a constant one-element axis"):
        loom.models.compile(_cumsum_model(axis=[0, 1]))


def test_onnx_int32_cumsum_wraps_as_the_reference():
    from onnx import TensorProto
    from onnx.reference import ReferenceEvaluator

    model = _cumsum_model(TensorProto.INT32)
    x = np.random.default_rng(3).integers(-(2**31), 2**31, (3, 6)).astype(np.int32)
    got, want = loom.models.compile(model)(x), ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_cumprod_equals_torch():
    """(torch.cumprod was an unsupported op.) A running product, float32 in float64 as cumsum; integers in int64."""
    class Products(nn.Module):
        def forward(self, x, i):
            return torch.cumprod(x, 1), torch.cumprod(i, 0)

    x, i = torch.rand(3, 6) + 0.5, torch.randint(-3, 4, (4, 2))
    got = loom.models.compile(Products(), (x, i))(x.numpy(), i.numpy())
    for g, w in zip(got, Products()(x, i), strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())
