"""ONNX ops that were refused as unsupported, each in a small model checked against onnx's reference evaluator:
the trigonometric / hyperbolic functions (Tan ... Atanh), ThresholdedRelu, Swish, Hardmax, RMSNormalization,
MeanVarianceNormalization, GroupNormalization (per channel, and opset 18's per group), LpPool and EyeLike; and the
same functions through torch (torch.tan ... torch.atanh) against torch."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 4, 5, 6)).astype(np.float32)
UNIT = np.clip(X, -0.95, 0.95) * 0.9  # asin, acos, atanh take (-1, 1)


def _model(op, x, attrs=None, inits=None, opset=23):
    inits = inits or {}
    node = helper.make_node(op, ["x", *inits], ["y"], name=op.lower(), **(attrs or {}))
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


CASES = {
    **{op: (op, UNIT, {}, {}) for op in ("Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Atanh")},
    "Acosh": ("Acosh", 1.0 + np.abs(X), {}, {}),
    "ThresholdedRelu": ("ThresholdedRelu", X, {"alpha": 0.3}, {}),
    "Swish": ("Swish", X, {"alpha": 1.5}, {}),
    "Hardmax": ("Hardmax", X, {"axis": 2}, {}),
    "RMSNormalization": ("RMSNormalization", X, {"axis": 2, "epsilon": 1e-3}, {"scale": RNG.standard_normal((5, 6))
                                                                             .astype(np.float32)}),
    "MeanVarianceNormalization": ("MeanVarianceNormalization", X, {"axes": [0, 2, 3]}, {}),
    "GroupNormalization": ("GroupNormalization", X, {"num_groups": 2}, {"s": np.linspace(0.5, 2, 4, dtype=np.float32),
                                                                        "b": np.arange(4, dtype=np.float32)}),
    "GroupNormalization_opset18": ("GroupNormalization", X, {"num_groups": 2}, {
        "s": np.array([0.5, 2.0], np.float32), "b": np.array([1.0, -1.0], np.float32)}, 18),
    "LpPool": ("LpPool", X, {"kernel_shape": [3, 2], "pads": [1, 0, 0, 1], "strides": [2, 1], "p": 3}, {}),
    "EyeLike": ("EyeLike", X[0, 0], {"k": 1}, {}),
}


@pytest.mark.parametrize("case", CASES)
def test_op_equals_the_reference(case):
    op, x, attrs, inits, *opset = CASES[case]
    model = _model(op, x, attrs, inits, *opset)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = loom.models.compile(model)(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6 * float(np.abs(want).max()))


def test_hardmax_before_opset_13_is_over_the_flattened_trailing_axes():
    """The specification's 2-d coercion (onnx's reference evaluator computes opset 13's form for every opset)."""
    rows = X.reshape(2 * 4, -1)  # axis 2: (N * C, H * W)
    want = (np.arange(rows.shape[1]) == rows.argmax(1)[:, None]).astype(np.float32).reshape(X.shape)
    np.testing.assert_array_equal(loom.models.compile(_model("Hardmax", X, {"axis": 2}, opset=11))(X), want)


def test_torch_trigonometric_functions_equal_torch():
    torch = pytest.importorskip("torch")

    class Trig(torch.nn.Module):
        def forward(self, x):
            return (torch.tan(x) + torch.asin(x) + torch.acos(x) + torch.atan(x) + torch.sinh(x) + torch.cosh(x)
                    + torch.asinh(x) + torch.atanh(x) + torch.acosh(2.0 + x))

    x = torch.from_numpy(UNIT[0])
    want = Trig()(x).numpy()
    got = loom.models.compile(Trig(), (x,))(UNIT[0])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


@pytest.mark.parametrize("mode", ["constant", "reflect"])
def test_pad_of_the_axes_input_only_equals_the_reference(mode):
    """Pad's axes input (opset 18; refused before): pads for those axes only."""
    inits = {"pads": np.array([1, 2, 0, 1], np.int64), "value": np.array(-1.5, np.float32),
             "axes": np.array([-1, 1], np.int64)}
    model = _model("Pad", X, {"mode": mode}, inits, opset=18)
    want = ReferenceEvaluator(model).run(None, {"x": X})[0]
    np.testing.assert_array_equal(loom.models.compile(model)(X), want)


@pytest.mark.parametrize("op, dtype, attrs", [
    ("BitShift", np.uint8, {"direction": "LEFT"}), ("BitShift", np.uint64, {"direction": "RIGHT"}),
    ("BitShift", np.int32, {"direction": "RIGHT"}), ("BitwiseAnd", np.int16, {}), ("BitwiseXor", np.uint64, {}),
])
def test_integer_bit_operations_are_numpys(op, dtype, attrs):
    """BitShift and Bitwise* (refused before); shifts by the width or more give numpy's 0 (or -1), not C's UB."""
    info = np.iinfo(dtype)
    x = RNG.integers(max(info.min, -2**40), min(info.max, 2**40), 12, dtype=np.int64).astype(dtype)
    x[:2] = [info.max, info.min]
    y = np.array([0, 1, 3, 7, 8, 15, 16, 31, 32, 33, 63, 2] * 1, dtype) if op == "BitShift" else x[::-1].copy()
    node = helper.make_node(op, ["x", "y"], ["z"], **attrs)
    kind = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph([node], "b", [helper.make_tensor_value_info(k, kind, [12]) for k in "xy"],
                              [helper.make_tensor_value_info("z", kind, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    want = {"BitShift": np.left_shift if attrs.get("direction") == "LEFT" else np.right_shift,
            "BitwiseAnd": np.bitwise_and, "BitwiseXor": np.bitwise_xor}[op](x, y)
    np.testing.assert_array_equal(loom.models.compile(model)(x, y), want)


def test_torch_bit_operations_of_integers_equal_torch():
    torch = pytest.importorskip("torch")

    class Bits(torch.nn.Module):
        def forward(self, x, y):
            return (x & y) | (~x ^ 3), x << 2, y >> x.clamp(0, 40)

    x, y = torch.tensor([-7, 0, 5, 123456, -1, 33], dtype=torch.int32), torch.tensor([3, 9, -4, 77, 2, 1 << 30],
                                                                                     dtype=torch.int32)
    for g, w in zip(loom.models.compile(Bits(), (x, y))(x.numpy(), y.numpy()), Bits()(x, y), strict=True):
        np.testing.assert_array_equal(g, w.numpy())
