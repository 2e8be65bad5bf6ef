"""Integer division and remainder: ONNX Div of integers (truncated towards zero) and Mod (fmod=0: the divisor's sign,
fmod=1: the dividend's), torch's //, %, torch.div(rounding_mode='trunc' / 'floor'), torch.fmod / torch.remainder.
They were refused ("int32 tensors take add, sub, mul, max, min") and a Div of int64 constants (shape arithmetic) was
folded with floor division. Checked bit for bit against onnx's reference evaluator and torch, with negative operands,
MIN / -1 (wraps to MIN, as numpy and torch), uint64 beyond int64 (an unsigned division) and zero divisors: ONNX's
reference gives 0 (numpy's), so loom does; torch raises ZeroDivisionError, so a torch model's integer division by
zero is an error naming the op (at import for a constant divisor, when the model runs otherwise)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(5)


DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.float32]


def _division_model(dtypes, opset: int = 17):
    """Div, Mod fmod=0 (integers only) and Mod fmod=1 of inputs a_k, b_k of each dtype k, in one model."""
    nodes, inputs, outputs = [], [], []
    for k, dtype in enumerate(dtypes):
        t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        ops = [("Div", {}, "div"), ("Mod", {"fmod": 0}, "mod"), ("Mod", {"fmod": 1}, "fmod")]
        if np.dtype(dtype).kind == "f":
            ops.pop(1)  # (Mod fmod=0 is defined for integers only)
        nodes += [helper.make_node(op, [f"a{k}", f"b{k}"], [f"{name}{k}"], name=f"{name}{k}", **attrs)
                  for op, attrs, name in ops]
        inputs += [helper.make_tensor_value_info(f"a{k}", t, [4, 6]), helper.make_tensor_value_info(f"b{k}", t, [6])]
        outputs += [helper.make_tensor_value_info(f"{name}{k}", t, None) for _, _, name in ops]
    graph = helper.make_graph(nodes, "m", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _operands(dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is None:
        return (RNG.standard_normal((4, 6)) * 10).astype(dtype), np.array([3, -3, 0.5, -1, 7, -2.5], dtype)
    a = RNG.integers(max(info.min, -100), min(info.max, 100), (4, 6), endpoint=True).astype(dtype)
    a[0, :4], a[1, :4] = info.min, info.max
    return a, np.array([3, 0, 7, 1, 2, 5] if info.min == 0 else [3, -3, 0, -1, 7, -2], dtype)  # 0 and -1 divisors


def test_onnx_div_and_mod_equal_the_reference():
    model = _division_model(DTYPES)
    feeds = {}
    for k, dtype in enumerate(DTYPES):
        feeds[f"a{k}"], feeds[f"b{k}"] = _operands(dtype)
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, feeds)
    got = loom.models.compile(model)(*feeds.values())
    names = [o.name for o in model.graph.output]
    for name, g, w in zip(names, got, want):
        assert g.dtype == w.dtype, name
        np.testing.assert_array_equal(g, w, err_msg=name)
    by_name = dict(zip(names, got))
    for k, dtype in enumerate(DTYPES):
        info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
        if info is not None and info.min < 0:
            assert by_name[f"div{k}"][0, 3] == info.min  # MIN / -1 wraps to MIN
            assert by_name[f"div{k}"][0, 2] == 0 and by_name[f"fmod{k}"][0, 2] == 0  # a zero divisor gives 0


def test_onnx_uint64_division_is_unsigned():
    """(It was refused.) uint64 computes in int64 of the same bits; its division is C's unsigned one."""
    model = _division_model([np.uint64])
    a = np.array([[2**64 - 1, 2**63 + 5, 7, 0, 2**63, 12]] * 4, np.uint64)
    b = np.array([3, 2**63 + 1, 0, 5, 2**64 - 1, 2**63], np.uint64)
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, {"a0": a, "b0": b})
    for g, w in zip(loom.models.compile(model)(a, b), want):
        assert g.dtype == w.dtype == np.uint64
        np.testing.assert_array_equal(g, w)


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


class EveryDtype(torch.nn.Module):
    def forward(self, *pairs):
        return tuple(out for a, b in zip(pairs[::2], pairs[1::2]) for out in Divisions()(a, b))


def test_torch_divisions_equal_torch():
    pairs = []
    for dtype in (torch.int32, torch.int64, torch.float32):
        a = torch.arange(-12, 12).reshape(4, 6).to(dtype)
        b = torch.tensor([3, -3, 2, -2, 5, -1]).to(dtype)
        if dtype.is_floating_point:  # (floats: numpy's floor division and remainder, inf / NaN by 0)
            a, b = a * 1.37, b * 0.7
            b[0] = 0.0
        pairs += [a, b]
    got = loom.models.compile(EveryDtype(), tuple(pairs))(*(t.numpy() for t in pairs))
    with torch.no_grad():
        want = EveryDtype()(*pairs)
    assert len(got) == len(want) == 30
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
