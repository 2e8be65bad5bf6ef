"""bfloat16 and float8 (e4m3fn, e5m2, e4m3fnuz, e5m2fnuz) ONNX inputs, outputs and initializers were refused. They are held as their
bits and compute in float32, converted by integer operations in the C: Cast to and from them equals ml_dtypes (the
reference's formats) bit for bit on random bit patterns and the edge values (NaN, inf, subnormals, ties, overflow;
saturate=1 / 0 for float8), element-wise nodes equal onnx's reference bit for bit, and a node the reference computes
in several rounded numpy steps (a sum, softmax) equals the float32 result rounded once. Formats loom has no
conversion for (float8_e8m0fnu, int4...) are refused naming the input and its dtype."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ml_dtypes = pytest.importorskip("ml_dtypes")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

FORMATS = [(TensorProto.BFLOAT16, ml_dtypes.bfloat16), (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
           (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2), (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
           (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz)]
RNG = np.random.default_rng(3)


def _model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(*v) for v in inputs],
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
                              [numpy_helper.from_array(v, k) for k, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = np.flatnonzero(np.ascontiguousarray(got).view(np.uint8) != np.ascontiguousarray(want).view(np.uint8))
    assert bad.size == 0, (want.reshape(-1)[bad[:5]], got.reshape(-1)[bad[:5]])


def _edge_values():
    special = [0.0, np.inf, np.nan, 448, 449, 464, 465, 480, 57344, 61440, 65536, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11,
               2.0 ** -16, 2.0 ** -17, 1e-40, 3.3895313892515355e+38, 3.39e38, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8]
    scaled = RNG.standard_normal(2000) * 10.0 ** RNG.integers(-45, 39, 2000)
    values = np.concatenate([special, scaled]).astype(np.float32)
    return np.concatenate([values, -values, np.frombuffer(RNG.bytes(4 * 8000), np.float32)])  # (NaN payloads too)


@pytest.mark.parametrize("to, dtype", FORMATS)
def test_casts_to_and_from_the_formats_equal_ml_dtypes_bit_for_bit(to, dtype):
    x = _edge_values()
    nodes = [helper.make_node("Cast", ["x"], ["exact"], to=to), helper.make_node("Cast", ["exact"], ["back"], to=1)]
    outputs = ["exact", "back"]
    if to != TensorProto.BFLOAT16:  # float8: ONNX saturates past the largest finite value unless saturate=0
        nodes += [helper.make_node("Cast", ["x"], ["wrapped"], to=to, saturate=0)]
        outputs += ["wrapped"]
    model = _model(nodes, [("x", TensorProto.FLOAT, [x.size])], outputs)
    got = loom.models.compile(model)(x)
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, {"x": x})
        _same_bits(got[0], np.clip(x, -ml_dtypes.finfo(dtype).max, ml_dtypes.finfo(dtype).max).astype(dtype)
                   if to != TensorProto.BFLOAT16 else x.astype(dtype))  # ml_dtypes, independently of onnx
    for g, w in zip(got, want):
        _same_bits(g, w)


@pytest.mark.parametrize("to, dtype", FORMATS)
def test_nodes_of_the_formats_compute_in_float32_and_round_once(to, dtype):
    a, b = ((RNG.standard_normal((4, 8)) * s).astype(dtype) for s in (3, 1))
    w = (RNG.standard_normal((8, 3)) * 0.5).astype(dtype)
    n = helper.make_node
    nodes = [n("Add", ["a", "b"], ["add"]), n("Div", ["a", "b"], ["div"]), n("Max", ["a", "b"], ["max"]),
             n("Exp", ["a"], ["exp"]), n("Transpose", ["a"], ["t"]), n("MatMul", ["a", "w"], ["mm"]),
             n("ReduceSum", ["a"], ["sum"], keepdims=0), n("Softmax", ["a"], ["soft"])]
    model = _model(nodes, [("a", to, [4, 8]), ("b", to, [4, 8])], [node.output[0] for node in nodes], [("w", w)])
    got = dict(zip([node.output[0] for node in nodes], loom.models.compile(model)(a, b)))
    with np.errstate(all="ignore"):
        want = dict(zip(got, ReferenceEvaluator(model).run(None, {"a": a, "b": b})))
    for name in ("add", "div", "max", "exp", "t", "mm"):  # one numpy step in the reference: the same rounding
        _same_bits(got[name], want[name])
    a32 = a.astype(np.float32)
    _same_bits(got["sum"], np.asarray(a32.sum(), np.float32).astype(dtype))
    e = np.exp(a32 - a32.max(axis=-1, keepdims=True))
    soft = (e / e.sum(axis=-1, keepdims=True)).astype(dtype)  # (libm's exp against numpy's: one ulp of the format)
    assert np.abs(got["soft"].astype(np.float32) - soft.astype(np.float32)).max() <= 2.0 ** -7


def test_formats_without_a_conversion_are_refused_naming_the_tensor():
    model = _model([helper.make_node("Relu", ["a"], ["y"])], [("a", TensorProto.FLOAT8E8M0, [4])], ["y"])
    with pytest.raises(LoomError, match=r"input 'a'.*has dtype float8_e8m0fnu; loom models take .*bfloat16"):
        loom.models.compile(model)
    w = np.ones(3, ml_dtypes.int4)
    model = _model([helper.make_node("Add", ["a", "w"], ["y"])], [("a", TensorProto.FLOAT, [3])], ["y"], [("w", w)])
    with pytest.raises(LoomError, match=r"constant 'w' has dtype int4"):
        loom.models.compile(model)


def test_a_bfloat16_torch_model_is_refused_naming_the_parameter():
    """(a bfloat16 weight gave a TypeError from torch's .numpy())"""
    torch = pytest.importorskip("torch")
    linear = torch.nn.Linear(5, 3).to(torch.bfloat16)
    with pytest.raises(LoomError, match=r"parameter 'weight': dtype torch.bfloat16 is not supported in torch models.*"
                                        r"\.float\(\)"):
        loom.models.compile(linear, (torch.ones(4, 5, dtype=torch.bfloat16),))
