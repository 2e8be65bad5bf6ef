"""What ``loom model run``, ``loom build`` of a model and ``loom.models.compile`` share: the seeded
inputs and the per-kind lowering choice (one definition each, in loom.models)."""

from __future__ import annotations

import numpy as np
import pytest

from loom.models.seeded import INTEGER_HIGH, seeded_inputs


def test_seeded_inputs_ranges_and_reproducibility():
    specs = [((3, 4), np.float32), ((5,), np.int64)]
    a, ids = seeded_inputs(specs, np.random.default_rng(3))
    assert a.dtype == np.float32 and a.shape == (3, 4) and a.min() >= -1 and a.max() < 1
    assert ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < INTEGER_HIGH
    again = seeded_inputs(specs, np.random.default_rng(3))
    assert np.array_equal(a, again[0]) and np.array_equal(ids, again[1])
    small = seeded_inputs([((200,), np.int64)], np.random.default_rng(0), high=3)[0]
    assert set(small.tolist()) == {0, 1, 2}


def test_cli_and_build_draw_the_same_inputs(tmp_path):
    """``loom model run --seed S`` and ``loom build --seed S`` of one .onnx file run on equal arrays."""
    pytest.importorskip("onnx")
    from types import SimpleNamespace

    from loom.build.model_unit import _import
    from loom.cli.model_commands import _inputs
    from loom.models.onnx_import import import_onnx
    from tests.build.test_build_model import small_cnn

    path = small_cnn(tmp_path / "cnn.onnx")
    options = SimpleNamespace(input_shapes=(), seed=5)
    _, built, _ = _import(path, options, np.random.default_rng(5))
    args = SimpleNamespace(input_shape=[], input_dtype=[], high=INTEGER_HIGH)
    ran = _inputs(args, np.random.default_rng(5), import_onnx(path))
    assert len(built) == len(ran) == 1 and np.array_equal(built[0], ran[0])


def test_lower_by_kind_groups_micro_kernels_native_and_the_rest_plain():
    pytest.importorskip("onnx")
    from tests.models.helpers import one_node_model

    from loom.models.compiler import lower_by_kind
    from loom.models.lower import build_module
    from loom.models.onnx_import import import_onnx

    w = np.ones((8, 8), np.float32)
    graph = import_onnx(one_node_model("MatMul", {"x": ([8, 8], np.float32)}, ["y"], initializers={"w": w}))
    relu = import_onnx(one_node_model("Relu", {"x": ([8, 8], np.float32)}, ["y"]))
    module, names = build_module([*graph.layers, *relu.layers])
    kinds = {names[k]: layer.kind for k, layer in enumerate([*graph.layers, *relu.layers]) if k in names}
    groups = lower_by_kind(module, kinds)
    by_native = {g.native: g for g in groups}
    assert set(by_native) == {True, None}
    assert {kinds[n] for n in by_native[True].names} == {"matmul"}
    assert {kinds[n] for n in by_native[None].names} == {"unary"}
    assert "omp" in str(by_native[True].module) or "parallel" in str(by_native[True].module)
    assert "parallel" not in str(by_native[None].module)
    everything_plain = lower_by_kind(module, dict.fromkeys(kinds, "unary"))
    assert [(g.native, g.names) for g in everything_plain] == [(None, set(kinds))]
