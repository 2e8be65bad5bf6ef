"""Bool tensors: model inputs of dtype bool, logical ops (torch logical_not/and/or/xor, ~m, m & n, m | n, m ^ n;
ONNX Not/And/Or/Xor), comparisons as tensors (outputs, casts to numbers). Each was refused at import (loom had
no bool tensors); values are checked against torch and onnx's reference evaluator, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError

torch = pytest.importorskip("torch")
nn = torch.nn

import loom.models  # noqa: E402


class Masks(nn.Module):
    def forward(self, x, m, n):
        pos = x > 0
        return (~m, m & n, m | n, m ^ n, torch.logical_not(pos), torch.logical_and(pos, m),
                torch.logical_or(x < -1, n), torch.logical_xor(m, pos), x.masked_fill(~m & pos, -1.0),
                torch.where(m | (x > 1), x, 0.0), pos, (m ^ n).float())


@pytest.mark.sanitize  # i1 buffers and broadcast copies in the generated C
def test_bool_inputs_and_logical_ops_equal_torch():
    torch.manual_seed(3)
    x = torch.randn(2, 3, 4)
    m, n = torch.rand(2, 3, 4) > 0.5, torch.rand(3, 1) > 0.5  # broadcast (2, 3, 4) with (3, 1)
    compiled = loom.models.compile(Masks(), (x, m, n))
    assert [t.dtype for t in compiled.input_specs] == [np.float32, np.bool_, np.bool_]
    got = compiled(x.numpy(), m.numpy(), n.numpy())
    want = Masks()(x, m, n)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


def test_a_bool_input_takes_only_bool_arrays():
    class Select(nn.Module):
        def forward(self, x, m):
            return torch.where(m, x, -x)

    x, m = torch.randn(4), torch.tensor([True, False, True, True])
    compiled = loom.models.compile(Select(), (x, m))
    np.testing.assert_array_equal(compiled(x.numpy(), m.numpy()), torch.where(m, x, -x).numpy())
    with pytest.raises(LoomError, match=r"input 1 \(m\).*expected dtype bool, got int64"):
        compiled(x.numpy(), m.numpy().astype(np.int64))


def test_a_bitwise_op_of_a_mask_and_integers_is_refused_naming_the_op():
    """(Bit operations of integers alike are computed: test_onnx_new_ops.py.)"""
    class Bits(nn.Module):
        def forward(self, m, j):
            return m & j

    with pytest.raises(LoomError, match=r"bitwise_and: j has dtype int64; loom takes bitwise ops of bool masks and "
                                        r"of integers alike"):
        loom.models.import_model(Bits(), (torch.arange(4) > 1, torch.arange(4)))


# ---------------------------------------------------------------- ONNX


def _onnx_model(nodes, inputs, outputs):
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    def info(name, dtype, shape):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)

    graph = helper.make_graph(nodes, "masks", [info(k, *v) for k, v in inputs.items()],
                              [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_bool_inputs_and_logical_ops_equal_the_reference():
    pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    nodes = [helper.make_node("Not", ["m"], ["not_m"]),
             helper.make_node("And", ["m", "n"], ["and"]),
             helper.make_node("Or", ["m", "n"], ["or"]),
             helper.make_node("Xor", ["m", "n"], ["xor"]),
             helper.make_node("Greater", ["x", "y"], ["gt"]),
             helper.make_node("And", ["gt", "not_m"], ["gt_and"]),
             helper.make_node("Equal", ["gt", "n"], ["same"]),
             helper.make_node("Where", ["xor", "x", "y"], ["picked"]),
             helper.make_node("Cast", ["or"], ["or_f"], to=1),
             helper.make_node("Cast", ["x"], ["nonzero"], to=9)]
    outputs = ["not_m", "and", "or", "xor", "gt", "gt_and", "same", "picked", "or_f", "nonzero"]
    model = _onnx_model(nodes, {"x": (np.float32, [2, 3]), "y": (np.float32, [3]), "m": (np.bool_, [2, 3]),
                                "n": (np.bool_, [3])}, outputs)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    x[0, 1] = 0.0
    feeds = {"x": x, "y": rng.standard_normal(3).astype(np.float32), "m": rng.random((2, 3)) > 0.5,
             "n": np.array([True, False, True])}
    want = ReferenceEvaluator(model).run(None, feeds)
    got = loom.models.compile(model)(*feeds.values())
    for name, g, w in zip(outputs, got, want, strict=True):
        assert g.dtype == w.dtype, name
        np.testing.assert_array_equal(g, w, err_msg=name)


def test_mask_reductions_equal_torch():
    """any / all of masks and counting them (sum in int64) were refused; MultiheadAttention with a
    key_padding_mask uses any (rows with every key masked), and now runs."""
    class Reduce(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x, m):
            attended = self.mha(x, x, x, key_padding_mask=m, need_weights=False)[0]
            return attended, m.sum(-1), m.any(-1), m.all(0), (x > 0).sum((1, 2)), torch.any(x > 2.0)

    torch.manual_seed(4)
    x, m = torch.randn(3, 5, 8), torch.rand(3, 5) > 0.6
    m[1] = torch.tensor([True, True, True, True, False])  # (all masked: eager torch gives NaN, its export 0)
    model = Reduce().eval()
    got = loom.models.compile(model, (x, m))(x.numpy(), m.numpy())
    with torch.no_grad():
        want = model(x, m)
    np.testing.assert_allclose(got[0], want[0].numpy(), rtol=1e-5, atol=1e-6)
    for g, w in zip(got[1:], want[1:], strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


def test_onnx_reduce_max_and_min_of_bools_equal_the_reference():
    pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    nodes = [helper.make_node("ReduceMax", ["m"], ["any"], axes=[1], keepdims=0),
             helper.make_node("ReduceMin", ["m"], ["all"], axes=[0], keepdims=1)]
    model = _onnx_model(nodes, {"m": (np.bool_, [3, 4])}, ["any", "all"])
    m = np.array([[True, False, False, False], [False] * 4, [True] * 4])
    want = ReferenceEvaluator(model).run(None, {"m": m})
    for g, w in zip(loom.models.compile(model)(m), want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_nan_and_infinity_tests_and_filled_masks_equal_torch():
    """isnan / isinf / isfinite were unsupported ops; torch.full with a bool or int fill value was a float32
    constant (PyTorch's is bool / int64), refused as a dtype mismatch."""
    class Guards(nn.Module):
        def forward(self, x):
            return (torch.where(torch.isnan(x), torch.zeros_like(x), x), torch.isinf(x), torch.isfinite(x),
                    torch.full((4,), True) & (x[0] > 0), torch.full((4,), 7) + 1)

    x = torch.tensor([[float("nan"), float("inf"), -float("inf"), 1.5], [0.0, -2.0, 3e38, float("nan")]])
    got = loom.models.compile(Guards(), (x,))(x.numpy())
    for g, w in zip(got, Guards()(x), strict=True):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())
