"""ONNX one-node models through loom's importer, IR and C backend, against onnx.reference."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError
from tests.models.helpers import one_node_model, relative_error

onnx = pytest.importorskip("onnx")

from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402

RNG = np.random.default_rng(7)


def _f(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


X4 = {"x": ([2, 3, 9, 8], np.float32)}
CASES = [
    ("Conv", X4, {"pads": [1, 2, 1, 2], "strides": [2, 1], "dilations": [1, 2]}, {"w": _f(4, 3, 3, 3), "b": _f(4)}),
    ("Conv", X4, {"pads": [0, 1, 2, 0]}, {"w": _f(5, 3, 2, 2)}),  # asymmetric pads
    ("Conv", {"x": ([1, 4, 7, 7], np.float32)}, {"group": 2, "pads": [1, 1, 1, 1]}, {"w": _f(6, 2, 3, 3), "b": _f(6)}),
    ("Conv", {"x": ([2, 3, 11], np.float32)}, {"pads": [2, 2], "strides": [2]}, {"w": _f(4, 3, 5)}),  # 1-d
    ("MaxPool", X4, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}, {}),
    ("MaxPool", X4, {"kernel_shape": [2, 3], "dilations": [2, 1]}, {}),
    ("AveragePool", X4, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, {}),
    ("AveragePool", X4, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1}, {}),
    ("AveragePool", X4, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, {}),
    ("GlobalAveragePool", X4, {}, {}),
    ("Gemm", {"a": ([5, 4], np.float32)}, {"transB": 1, "alpha": 0.5, "beta": 2.0}, {"b": _f(3, 4), "c": _f(3)}),
    ("MatMul", {"a": ([2, 3, 5, 4], np.float32), "b": ([3, 4, 6], np.float32)}, {}, {}),
    ("MatMul", {"a": ([4], np.float32)}, {}, {"b": _f(2, 4, 3)}),
    ("Softmax", {"x": ([3, 4, 5], np.float32)}, {"axis": 1}, {}),
    ("LogSoftmax", {"x": ([3, 4, 5], np.float32)}, {"axis": -1}, {}),
    ("LayerNormalization", {"x": ([2, 5, 6], np.float32)}, {"axis": -1, "epsilon": 1e-5}, {"s": _f(6), "b": _f(6)}),
    ("ReduceMean", {"x": ([3, 4, 5], np.float32)}, {"axes": [0, 2], "keepdims": 0}, {}),
    ("ReduceMax", {"x": ([3, 4, 5], np.float32)}, {"axes": [1], "keepdims": 1}, {}),
    ("Transpose", {"x": ([2, 3, 4], np.float32)}, {"perm": [2, 0, 1]}, {}),
    ("Concat", {"x": ([2, 3], np.float32), "y": ([2, 5], np.float32)}, {"axis": 1}, {}),
    ("Pad", {"x": ([2, 3], np.float32)}, {}, {"pads": np.array([0, 1, 2, 0], np.int64),
                                                "v": np.array(1.5, np.float32)}),
    ("Gather", {"ids": ([2, 5], np.int64)}, {"axis": 0}, {}),
    ("Slice", {"x": ([6, 8], np.float32)}, {}, {"starts": np.array([1, -6], np.int64),
                                                "ends": np.array([5, 100], np.int64),
                                                "axes": np.array([0, 1], np.int64),
                                                "steps": np.array([2, 3], np.int64)}),
    ("Expand", {"x": ([3, 1], np.float32)}, {}, {"shape": np.array([2, 1, 4], np.int64)}),
    ("Add", {"x": ([2, 3, 4], np.float32), "y": ([3, 1], np.float32)}, {}, {}),
    ("Div", {"x": ([2, 3], np.float32)}, {}, {"y": np.array([2.0, -4.0, 8.0], np.float32)}),
    ("Erf", {"x": ([3, 4], np.float32)}, {}, {}),
    ("Sigmoid", {"x": ([3, 4], np.float32)}, {}, {}),
    ("Tanh", {"x": ([3, 4], np.float32)}, {}, {}),
    ("LeakyRelu", {"x": ([3, 4], np.float32)}, {"alpha": 0.2}, {}),
    ("Clip", {"x": ([3, 4], np.float32)}, {}, {"lo": np.array(-0.5, np.float32), "hi": np.array(0.5, np.float32)}),
    ("HardSwish", {"x": ([3, 4, 5], np.float32)}, {}, {}),
    ("HardSigmoid", {"x": ([3, 4], np.float32)}, {"alpha": 0.3, "beta": 0.4}, {}),
    ("LeakyRelu", {"x": ([2, 3, 4], np.float32)}, {}, {}),  # the default alpha, 0.01
]


def _case_model(k: int, op, inputs, attrs, inits):
    """Case k as one node whose names carry the prefix ``c{k}_`` (so all cases fit in one model)."""
    if op == "Gather":  # the table (a constant) is the data input, the ids the model's input
        inits, inputs = {"table": _f(10, 4)}, {"ids": inputs["ids"]}
        model = one_node_model(op, inputs, ["y"], attrs, inits)
        model.graph.node[0].input[:] = ["table", "ids"]
    else:
        model = one_node_model(op, inputs, ["y"], attrs, inits)
    for v in [*model.graph.input, *model.graph.output, *model.graph.initializer]:
        v.name = f"c{k}_{v.name}"
    node = model.graph.node[0]
    node.input[:] = [f"c{k}_{n}" for n in node.input]
    node.output[:] = [f"c{k}_{n}" for n in node.output]
    return model


# cases whose C indexes with offsets, windows or gathered rows: also run under ASan/UBSan
MEMORY_SENSITIVE = {0, 1, 2, 3, 4, 8, 19, 20, 21, 22}


def _cases_model(indices):
    """The cases ``indices`` as nodes of one model: one compile, one reference run."""
    from onnx import helper

    parts = [_case_model(k, *CASES[k]) for k in indices]
    graph = helper.make_graph([p.graph.node[0] for p in parts], "cases",
                              [i for p in parts for i in p.graph.input], [o for p in parts for o in p.graph.output],
                              [t for p in parts for t in p.graph.initializer])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _feeds(model):
    from onnx import helper

    feeds = {}
    for i in model.graph.input:
        t = i.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        feeds[i.name] = RNG.integers(0, 10, shape).astype(dtype) if np.dtype(dtype).kind == "i" else \
            RNG.standard_normal(shape).astype(dtype)
    return feeds


def _check_cases(indices):
    model = _cases_model(indices)
    feeds = _feeds(model)
    want = ReferenceEvaluator(model).run(None, feeds)
    got = loom.models.compile(model)(*feeds.values())
    assert len(got) == len(want) == len(indices)
    errors = {f"{k} {CASES[k][0]}": relative_error(g, np.asarray(w)) for k, g, w in zip(indices, got, want)}
    assert max(errors.values()) <= 1e-5, errors


def test_ops_match_onnx_reference():
    _check_cases([k for k in range(len(CASES)) if k not in MEMORY_SENSITIVE])


@pytest.mark.sanitize
def test_memory_sensitive_ops_match_onnx_reference():
    _check_cases(sorted(MEMORY_SENSITIVE))


def test_unsupported_op_is_refused_with_its_name_and_node():
    model = one_node_model("Det", {"x": ([2, 3], np.float32)}, ["y"])
    model.graph.node[0].name = "the_det"
    with pytest.raises(LoomError, match=r"node 0 'the_det' \(Det\): unsupported ONNX op Det"):
        loom.models.compile(model)


def test_unsupported_form_is_refused_at_import():
    model = one_node_model("Pad", {"x": ([2, 3], np.float32)}, ["y"], {"mode": "mirror"},
                           {"pads": np.array([0, 1, 0, 1], np.int64)})
    with pytest.raises(LoomError, match=r"\(Pad\).*mode='mirror' is not supported \(supported: constant, reflect"):
        loom.models.compile(model)


def test_dynamic_input_needs_examples_and_then_compiles():
    model = one_node_model("Relu", {"x": (["n", 3], np.float32)}, ["y"])
    with pytest.raises(LoomError, match="dynamic dims"):
        loom.models.compile(model)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_array_equal(loom.models.compile(model, [x])(x), np.maximum(x, 0))


def test_compiled_model_checks_its_arguments():
    model = loom.models.compile(one_node_model("Relu", {"x": ([2, 3], np.float32)}, ["y"]))
    with pytest.raises(LoomError, match="expected dtype float32, got float64"):
        model(np.zeros((2, 3)))
    with pytest.raises(LoomError, match=r"expected shape \(2, 3\), got \(3, 2\)"):
        model(np.zeros((3, 2), np.float32))
    with pytest.raises(LoomError, match="takes 1 input"):
        model()
    with pytest.raises(LoomError, match="expected a numpy array"):
        model([[1.0, 2.0, 3.0]] * 2)


def test_embedding_ids_out_of_range_are_refused_before_c_runs():
    model = one_node_model("Gather", {}, ["y"], {"axis": 0}, {"table": _f(10, 4)})
    model.graph.node[0].input[:] = ["table", "ids"]
    model.graph.input.extend([onnx.helper.make_tensor_value_info("ids", onnx.TensorProto.INT64, [3])])
    compiled = loom.models.compile(model)
    ids = np.array([0, 9, 3], np.int64)
    np.testing.assert_array_equal(compiled(ids), ReferenceEvaluator(model).run(None, {"ids": ids})[0])
    for bad in (10, -1):
        with pytest.raises(LoomError, match=f"index {bad} is out of range for a table of 10 rows"):
            compiled(np.array([0, bad, 1], np.int64))


def test_unreadable_file_is_a_located_error(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x07garbage that is not protobuf \xff\xff")
    with pytest.raises(LoomError, match="broken.onnx"):
        loom.models.compile(path)
