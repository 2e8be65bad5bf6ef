"""Integer division and remainder: ONNX Div of integers (truncated towards zero) and Mod (fmod=0: the divisor's sign,
fmod=1: the dividend's), torch's //, %, torch.div(rounding_mode='trunc' / 'floor'), torch.fmod / torch.remainder.
They were refused ("int32 tensors take add, sub, mul, max, min") and a Div of int64 constants (shape arithmetic) was
folded with floor division. Checked bit for bit against onnx's reference evaluator and torch, with negative operands,
MIN / -1 (wraps to MIN, as numpy and torch) and zero divisors: ONNX's reference gives 0 (numpy's), so loom does;
torch raises ZeroDivisionError, so a torch model's integer division by zero is an error naming the op (at import for a
constant divisor, when the model runs otherwise)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(5)


def _division_model(dtype, opset: int = 17):
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [helper.make_node("Div", ["a", "b"], ["q"], name="div"),
             helper.make_node("Mod", ["a", "b"], ["m"], name="mod", fmod=0),
             helper.make_node("Mod", ["a", "b"], ["f"], name="fmod", fmod=1)]
    if np.dtype(dtype).kind == "f":
        nodes.pop(1)  # (Mod fmod=0 is defined for integers only)
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("a", t, [4, 6]),
                                           helper.make_tensor_value_info("b", t, [6])],
                              [helper.make_tensor_value_info(n.output[0], t, None) for n in nodes])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.float32])
def test_onnx_div_and_mod_equal_the_reference(dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is None:
        a = (RNG.standard_normal((4, 6)) * 10).astype(dtype)
        b = np.array([3, -3, 0.5, -1, 7, -2.5], dtype)
    else:
        a = RNG.integers(max(info.min, -100), min(info.max, 100), (4, 6), endpoint=True).astype(dtype)
        a[0, :4], a[1, :4] = info.min, info.max
        b = np.array([3, 0, 7, 1, 2, 5] if info.min == 0 else [3, -3, 0, -1, 7, -2], dtype)  # 0 and -1 divisors
    model = _division_model(dtype)
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, {"a": a, "b": b})
    got = loom.models.compile(model)(a, b)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    if info is not None and info.min < 0:
        assert got[0][0, 3] == info.min  # MIN / -1 wraps to MIN
        assert got[0][0, 2] == 0 and got[-1][0, 2] == 0  # a zero divisor gives 0, as the reference


def test_onnx_uint64_division_is_refused_naming_the_node():
    with pytest.raises(LoomError, match=r"node 0 'div' \(Div\).*uint64 input 0 is computed in int64"):
        loom.models.compile(_division_model(np.uint64))


def test_onnx_integer_div_of_constants_truncates():
    """Shape arithmetic: (-7) / 2 is -3 in ONNX (truncated), not floor division's -4."""
    from onnx import numpy_helper

    nodes = [helper.make_node("Div", ["n", "two"], ["q"]), helper.make_node("Add", ["x", "q"], ["y"])]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", onnx.TensorProto.INT64, [3])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.INT64, None)],
                              [numpy_helper.from_array(np.array([-7, 7, -8], np.int64), "n"),
                               numpy_helper.from_array(np.array(2, np.int64), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.zeros(3, np.int64)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(loom.models.compile(model)(x), want)
    np.testing.assert_array_equal(want, [-3, 3, -4])


torch = pytest.importorskip("torch")


class Divisions(torch.nn.Module):
    def forward(self, a, b):
        return (a // b, a % b, torch.div(a, b, rounding_mode="trunc"), torch.div(a, b, rounding_mode="floor"),
                torch.fmod(a, b), torch.remainder(a, 3), a // 4, torch.fmod(a, -3), a // -3, a % -4)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32])
def test_torch_divisions_equal_torch(dtype):
    a = torch.arange(-12, 12).reshape(4, 6).to(dtype)
    b = torch.tensor([3, -3, 2, -2, 5, -1]).to(dtype)
    if dtype.is_floating_point:  # (floats: numpy's floor division and remainder, inf / NaN by 0)
        a, b = a * 1.37, b * 0.7
        b[0] = 0.0
    got = loom.models.compile(Divisions(), (a, b))(a.numpy(), b.numpy())
    with torch.no_grad():
        want = Divisions()(a, b)
    for g, w in zip(got, want):
        assert g.dtype == w.numpy().dtype
        np.testing.assert_array_equal(g, w.numpy())


def test_torch_integer_division_by_zero_is_an_error_as_in_torch():
    a = torch.arange(6, dtype=torch.int32)
    compiled = loom.models.compile(Divisions(), (a, torch.ones(6, dtype=torch.int32)))
    b = torch.tensor([1, 2, 0, 1, 1, 1], dtype=torch.int32)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        Divisions()(a, b)
    with pytest.raises(LoomError, match=r"div\.Tensor_mode.*floordiv: integer division by zero .* at \(2,\)"):
        compiled(a.numpy(), b.numpy())

    class ByZero(torch.nn.Module):
        def forward(self, x):
            return x % 0

    with pytest.raises(LoomError, match=r"remainder\.Scalar.*integer division by zero"):
        loom.models.compile(ByZero(), (a,))
