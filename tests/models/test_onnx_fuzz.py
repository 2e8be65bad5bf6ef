"""Fuzzing the ONNX boundary (seeded, bounded): random window attributes against onnx.reference, and
byte-mutated model files, which must import or be refused with a LoomError, never crash."""

from __future__ import annotations

import numpy as np
import pytest

from loom.errors import LoomError
from loom.models.onnx_conformance import relative_error as conformance_error
from tests.models.helpers import one_node_model

onnx = pytest.importorskip("onnx")

from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.models.onnx_conformance import backend_cases  # noqa: E402
from loom.models.onnx_import import import_onnx  # noqa: E402


def _random_window_node(rng: np.random.Generator, k: int):
    op = ["Conv", "MaxPool", "AveragePool"][k % 3]
    kh, kw = (int(v) for v in rng.integers(1, 5, 2))
    attrs = {"strides": [int(v) for v in rng.integers(1, 4, 2)],
             "pads": [int(v) for v in rng.integers(0, 3, 4)]}
    if op != "AveragePool":
        attrs["dilations"] = [int(v) for v in rng.integers(1, 3, 2)]
    if op == "Conv":
        attrs["group"] = int(rng.choice([1, 2, 3]))
        inits = {"w": rng.standard_normal((6, 6 // attrs["group"] if rng.random() < 0.9 else 5, kh, kw))
                 .astype(np.float32)}
    else:
        attrs["kernel_shape"] = [kh, kw]
        attrs["ceil_mode"] = int(rng.integers(0, 2))
        if op == "AveragePool":
            attrs["count_include_pad"] = int(rng.integers(0, 2))
        inits = {}
    return op, attrs, inits


def test_random_window_attributes_match_the_reference_or_are_refused():
    rng = np.random.default_rng(2024)
    accepted, refused = [], 0
    for k in range(24):
        op, attrs, inits = _random_window_node(rng, k)
        model = one_node_model(op, {"x": ([1, 6, 7, 6], np.float32)}, ["y"], attrs, inits)
        try:
            import_onnx(model)
        except LoomError as error:
            assert f"({op})" in str(error), str(error)
            refused += 1
            continue
        accepted.append(model)
    assert accepted and refused  # the generator reaches both sides
    # every accepted case as one model: one compile
    parts = []
    for k, m in enumerate(accepted):
        node = m.graph.node[0]
        node.input[:] = ["x"] + [f"c{k}_{n}" for n in node.input[1:]]
        node.output[:] = [f"c{k}_y"]
        for t in m.graph.initializer:
            t.name = f"c{k}_{t.name}"
        parts.append(m)
    x_info = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 6, 7, 6])
    graph = helper.make_graph([p.graph.node[0] for p in parts], "fuzz", [x_info],
                              [helper.make_tensor_value_info(f"c{k}_y", onnx.TensorProto.FLOAT, None)
                               for k in range(len(parts))], [t for p in parts for t in p.graph.initializer])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, 6, 7, 6)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    got = loom.models.compile(model)(x)
    got = got if isinstance(got, tuple) else (got,)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        # (NaN-aware: an average over a window of padding only is 0 / 0 in both, since asymmetric pads are taken)
        assert conformance_error(g, np.asarray(w)) <= 1e-5, (k, helper.printable_node(parts[k].graph.node[0]))


MUTANTS = 400


def test_mutated_model_files_import_or_are_refused(tmp_path):
    rng = np.random.default_rng(11)
    sources = [c / "model.onnx" for c in backend_cases() if c.name in
               ("test_Conv2d_depthwise_padded", "test_operator_addmm", "test_BatchNorm2d_eval", "test_Embedding")]
    outcomes = {"imported": 0, "refused": 0}
    for k in range(MUTANTS):
        data = bytearray(sources[k % len(sources)].read_bytes())
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        path = tmp_path / f"mutant_{k}.onnx"
        path.write_bytes(bytes(data))
        try:
            import_onnx(path)
            outcomes["imported"] += 1
        except LoomError:
            outcomes["refused"] += 1
    assert sum(outcomes.values()) == MUTANTS and outcomes["refused"] > 0
